// /healthz, /livez, /readyz: named checks, `verbose`, `exclude`, and /livez/<name>, /readyz/<name>.
import type { KRequest, KResponse } from '../http/types.js';

export interface Check {
  name: string;
  /** Returns undefined when healthy, or the reason it is not. */
  run(): string | undefined;
  live: boolean;
  ready: boolean;
}

const TEXT = { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache, private' };

export class Health {
  private checks: Check[] = [];
  private startedAt = Date.now();
  constructor(private livezGraceSeconds: number) {}

  add(c: Check) { this.checks.push(c); }

  /** Answers a health path on the wire (a HEAD without the body) and returns true; false for any other path. */
  answer(req: KRequest, res: KResponse): boolean {
    const h = this.handle(req.path, req.query);
    if (!h) return false;
    res.send(h.code, h.headers, req.method === 'HEAD' ? '' : h.body);
    return true;
  }

  /** Answers a health path, or returns undefined when the path is not one. */
  handle(path: string, query: URLSearchParams): { code: number; headers: Record<string, string>; body: string } | undefined {
    const m = /^\/(healthz|livez|readyz)(?:\/(.+))?$/.exec(path.replace(/\/$/, ''));
    if (!m) return undefined;
    const endpoint = m[1];
    const only = m[2];
    const set = this.checks.filter((c) => (endpoint === 'livez' ? c.live : endpoint === 'readyz' ? c.ready : c.live || c.ready));
    // During --livez-grace-period, a failing liveness check is not yet a reason to restart.
    const inGrace = endpoint === 'livez' && (Date.now() - this.startedAt) / 1000 < this.livezGraceSeconds;
    if (only) {
      const c = set.find((x) => x.name === only);
      if (!c) return { code: 404, headers: TEXT, body: '404 page not found\n' };
      const why = c.run();
      return why && !inGrace ? { code: 500, headers: TEXT, body: `internal server error: ${why}\n` } : { code: 200, headers: TEXT, body: 'ok' };
    }
    const exclude = new Set(query.getAll('exclude').flatMap((s) => s.split(',')));
    const verbose = query.has('verbose') && query.get('verbose') !== 'false';
    const lines: string[] = [];
    let failed = false;
    for (const c of set) {
      if (exclude.has(c.name)) { lines.push(`[+]${c.name} excluded: ok`); continue; }
      const why = c.run();
      if (why && !inGrace) { failed = true; lines.push(`[-]${c.name} failed: reason withheld`); }
      else lines.push(`[+]${c.name} ok`);
    }
    for (const name of exclude) if (!set.some((c) => c.name === name)) lines.push(`warn: some health checks cannot be excluded: no matches for "${name}"`);
    if (failed) return { code: 500, headers: TEXT, body: lines.join('\n') + `\n${endpoint} check failed\n` };
    if (!verbose) return { code: 200, headers: TEXT, body: 'ok' };
    return { code: 200, headers: TEXT, body: lines.join('\n') + `\n${endpoint} check passed\n` };
  }
}

/** What the server's own checks look at. */
export interface ServerCheckSources {
  /** The storage backend's check (its name, and whether it is a liveness check too) and whether it is ready now. */
  storage: { name: string; live: boolean };
  storageReady(): boolean;
  cacheBehind(): boolean;
  /** Post-start hooks the plugins stand for ("rbac/bootstrap-roles"). */
  pluginHooks: Iterable<string>;
  /** Checks the plugins stand for under names of their own ("autoregister-completion"). */
  pluginChecks: Iterable<string>;
  /** Plugins by kind; those with a readiness of their own get a readiness check. */
  plugins: [string, readonly { name: string; plugin: { ready?(): boolean } }[]][];
  shuttingDown(): boolean;
}

/** The server's checks: ping, storage, the cache, post-start hooks, plugins' readiness, and shutdown. */
export function addServerChecks(health: Health, s: ServerCheckSources): void {
  health.add({ name: 'ping', live: true, ready: true, run: () => undefined });
  // The reference's `log` check fails when its logger stops flushing; ours writes to stderr.
  health.add({ name: 'log', live: true, ready: true, run: () => (process.stderr.destroyed ? 'log stream closed' : undefined) });
  const sh = s.storage;
  health.add({ name: sh.name, live: sh.live, ready: true, run: () => (s.storageReady() ? undefined : `${sh.name} not ready`) });
  health.add({ name: 'informer-sync', live: false, ready: true, run: () => (s.cacheBehind() ? 'cache behind storage' : undefined) });
  // The reference's post-start hooks by name, for the work this server did at start: the kernel's
  // own (admission chain, cache) and those its plugins stand for. All have run once it serves.
  const hooks = ['start-kube-apiserver-admission-initializer', 'generic-apiserver-start-informers', ...s.pluginHooks];
  for (const name of new Set(hooks)) health.add({ name: `poststarthook/${name}`, live: true, ready: true, run: () => undefined });
  for (const name of new Set(s.pluginChecks)) health.add({ name, live: true, ready: true, run: () => undefined });
  for (const [kind, list] of s.plugins) {
    for (const p of list) if (p.plugin.ready) health.add({ name: `plugin/${kind}/${p.name}`, live: false, ready: true, run: () => (p.plugin.ready!() ? undefined : 'not ready') });
  }
  health.add({ name: 'shutdown', live: false, ready: true, run: () => (s.shuttingDown() ? 'shutting down' : undefined) });
}
