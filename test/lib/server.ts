// Test harness: starts the real server binary on a temporary data dir and port, and talks to it over HTTPS.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { defaultConfig } from '../../kernel/ops/config.js';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const mainJs = path.join(repoRoot, 'dist/kernel/main.js');

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

export interface TestServer {
  port: number;
  /** Port of the node:tls listener, when started with --mtls-port. */
  mtlsPort: number;
  dataDir: string;
  token: string;
  ca: Buffer;
  proc: ChildProcess;
  logs: string[];
  url: string;
  request(method: string, p: string, opts?: { body?: unknown; headers?: Record<string, string>; token?: string | null; raw?: string | Buffer }): Promise<Reply>;
  get(p: string, headers?: Record<string, string>): Promise<Reply>;
  stream(p: string, onLine: (line: any) => void, headers?: Record<string, string>): { close(): void; done: Promise<number> };
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  restart(): Promise<void>;
}

export interface StartOptions {
  brand?: 'cluster' | 'kubernetes';
  args?: string[];
  /** Default controllers to leave out (e.g. root-ca-publisher, for tests that count every ConfigMap). */
  withoutControllers?: string[];
  dataDir?: string;
  keepDataDir?: boolean;
  /** Extra environment variables for the server process (e.g. CAPI_BOOKMARK_INTERVAL_MS). */
  env?: Record<string, string>;
  /** The Node.js binary to run the server on (default: this one); see nodeUnderTest. */
  node?: string;
  /** The server's open-file limit (`ulimit -n` before it starts). */
  openFiles?: number;
}

/**
 * A second Node.js to run servers on, from CAPI_TEST_NODE (e.g. Node 22, where uWebSockets.js has
 * no binary and node:https serves the port), or undefined: tests of that transport are skipped.
 */
export const nodeUnderTest = process.env.CAPI_TEST_NODE || undefined;

function waitForServing(proc: ChildProcess, logs: string[], mtls: { port: number }): Promise<number> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        logs.push(line);
        // the serving line, as JSON (--logging-format=json) or as text (the default)
        let o: { msg?: string; address?: string; mtls?: string } | undefined;
        try { o = JSON.parse(line); } catch { /* text */ }
        if (!o && line.includes('] "serving" ')) o = { msg: 'serving', address: /address="([^"]+)"/.exec(line)?.[1], mtls: /mtls="([^"]+)"/.exec(line)?.[1] };
        if (o?.msg === 'serving' && o.address) {
          if (o.mtls) mtls.port = Number(/:(\d+)$/.exec(o.mtls)![1]);
          resolve(Number(/:(\d+)$/.exec(o.address)![1]));
        }
      }
    };
    proc.stderr!.on('data', onData);
    proc.stdout!.on('data', (d: Buffer) => logs.push(d.toString()));
    proc.once('exit', (code) => reject(new Error(`server exited with ${code} before serving:\n${logs.join('\n')}${buf}`)));
  });
}

export async function startServer(opts: StartOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'capi-'));
  const args = [mainJs, '--data-dir', dataDir, '--secure-port', '0', '--brand', opts.brand ?? 'cluster', ...(opts.args ?? [])];
  if (opts.withoutControllers?.length) {
    // a config file with the default controller list less the named ones
    const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-cfg-'));
    const file = path.join(dir, 'config.json');
    const controllers = defaultConfig().controllers.filter((c) => !opts.withoutControllers!.includes(c.plugin));
    writeFileSync(file, JSON.stringify({ controllers }));
    args.push('--config', file);
  }
  const agent = new https.Agent({ keepAlive: true, maxSockets: 64 });
  const s: TestServer = {
    port: 0, mtlsPort: 0, dataDir, token: '', ca: Buffer.alloc(0), proc: undefined as never, logs: [], url: '',
    async request(method, p, o = {}) {
      const headers: Record<string, string> = { accept: 'application/json', ...(o.headers ?? {}) };
      const tok = o.token === undefined ? s.token : o.token;
      if (tok) headers.authorization = `Bearer ${tok}`;
      let payload: string | Buffer | undefined = o.raw;
      if (o.body !== undefined) {
        payload = JSON.stringify(o.body);
        headers['content-type'] ??= 'application/json';
      }
      if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
      const send = (retry: boolean): Promise<Reply> => new Promise((resolve, reject) => {
        const req = https.request({ host: '127.0.0.1', port: s.port, method, path: p, headers, ca: s.ca, agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: any;
            try { json = JSON.parse(text); } catch { json = undefined; }
            resolve({ status: res.statusCode!, headers: res.headers, text, json });
          });
        });
        // A kept-alive connection the server closed while idle fails as the request goes out on it
        // (Node's documented case: reusedSocket and ECONNRESET); the request never arrived, so send it again.
        req.on('error', (e: NodeJS.ErrnoException) => (retry && req.reusedSocket && e.code === 'ECONNRESET' ? send(false).then(resolve, reject) : reject(e)));
        if (payload !== undefined) req.write(payload);
        req.end();
      });
      return send(true);
    },
    get: (p, headers) => s.request('GET', p, { headers }),
    stream(p, onLine, headers = {}) {
      let req: ReturnType<typeof https.request>;
      const done = new Promise<number>((resolve, reject) => {
        req = https.request({ host: '127.0.0.1', port: s.port, method: 'GET', path: p, headers: { authorization: `Bearer ${s.token}`, accept: 'application/json', ...headers }, ca: s.ca }, (res) => {
          let buf = '';
          res.on('data', (c: Buffer) => {
            buf += c.toString('utf8');
            let i;
            while ((i = buf.indexOf('\n')) >= 0) {
              const line = buf.slice(0, i);
              buf = buf.slice(i + 1);
              if (line.trim()) onLine(JSON.parse(line));
            }
          });
          res.on('end', () => resolve(res.statusCode!));
          res.on('error', () => resolve(res.statusCode!));
          res.on('close', () => resolve(res.statusCode!));
        });
        req.on('error', (e) => (String(e).includes('socket hang up') || String(e).includes('aborted') ? resolve(0) : reject(e)));
        req.end();
      });
      return { close: () => req.destroy(), done };
    },
    async stop(signal = 'SIGTERM') {
      agent.destroy();
      if (s.proc.exitCode !== null || s.proc.signalCode !== null) return s.proc.exitCode; // already gone (a SIGKILL has no exit code)
      const exited = new Promise<number | null>((r) => s.proc.once('exit', (code) => r(code)));
      s.proc.kill(signal);
      return exited;
    },
    async restart() {
      await s.stop('SIGTERM');
      await launch();
    },
  };
  const launch = async () => {
    const node = opts.node ?? process.execPath;
    // the shell sets the limit and becomes the server (exec): its pid is the server's
    const cmd: [string, string[]] = opts.openFiles ? ['/bin/sh', ['-c', `ulimit -n ${opts.openFiles} && exec "$0" "$@"`, node, ...args]] : [node, args];
    s.proc = spawn(...cmd, { stdio: ['ignore', 'pipe', 'pipe'], ...(opts.env ? { env: { ...process.env, ...opts.env } } : {}) });
    const mtls = { port: 0 };
    s.port = await waitForServing(s.proc, s.logs, mtls);
    s.mtlsPort = mtls.port;
    s.url = `https://127.0.0.1:${s.port}`;
    s.token = readFileSync(path.join(dataDir, 'pki/tokens.csv'), 'utf8').split('\n').find((l) => l && !l.startsWith('#'))!.split(',')[0];
    s.ca = readFileSync(path.join(dataDir, 'pki/ca.crt'));
  };
  await launch();
  return s as TestServer;
}

/** Start a server for a tap test and stop it (and remove its data dir) when the test ends. */
export async function withServer(t: { teardown(fn: () => unknown): void }, opts: StartOptions = {}): Promise<TestServer> {
  const s = await startServer(opts);
  t.teardown(async () => {
    await s.stop();
    if (!opts.keepDataDir) rmSync(s.dataDir, { recursive: true, force: true });
  });
  return s;
}

export const brands = ['cluster', 'kubernetes'] as const;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
