// Helpers of the store damage tests: a populated, stopped server; damage; refusal; repair and its checks.
import { closeSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { startServer, type TestServer } from './server.js';
import { run } from './datadir.js';

export const CM = '/api/v1/namespaces/default/configmaps';

/** The newest LevelDB write-ahead log of a data dir's store. */
export function newestLog(dataDir: string): string {
  const dir = path.join(dataDir, 'store');
  const logs = readdirSync(dir).filter((n) => /^\d+\.log$/.test(n)).sort();
  return path.join(dir, logs[logs.length - 1]);
}

export function overwrite(file: string, at: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  try { writeSync(fd, bytes, 0, bytes.length, at); } finally { closeSync(fd); }
}

/** A pseudo-random but fixed pattern: damage must not happen to look like valid data. */
export const garbage = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 151 + 89) & 0xff));


/** A server with n configmaps written, stopped cleanly; returns what was acknowledged. */
export async function populate(t: Test, n: number) {
  const s = await startServer({ keepDataDir: true });
  t.teardown(() => rmSync(s.dataDir, { recursive: true, force: true }));
  const acked = new Map<string, any>();
  for (let i = 0; i < n; i++) {
    const r = await s.request('POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { i: String(i), pad: 'x'.repeat(200) } } });
    if (r.status !== 201) throw new Error(`create cm-${i}: ${r.status} ${r.text}`);
    acked.set(`cm-${i}`, r.json);
  }
  const maxRv = Math.max(...[...acked.values()].map((o) => Number(o.metadata.resourceVersion)));
  await s.stop();
  return { s, acked, maxRv };
}

/** Start must fail with a clear message naming the file and the repair command. */
export function expectRefused(t: Test, dataDir: string, file: RegExp) {
  const r = run(['--data-dir', dataDir, '--secure-port', '0']);
  t.not(r.status, 0, 'the server refuses to start');
  t.match(r.stderr, /the store is damaged/, 'says the store is damaged');
  t.match(r.stderr, file, 'names the damaged file');
  t.match(r.stderr, new RegExp(`cluster-apiserver repair --data-dir ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`), 'gives the repair command');
}

/** Repair, restart, and check every kept object is the acknowledged one and revisions go on above all issued. */
export async function repairAndCheck(t: Test, s: TestServer, acked: Map<string, any>, maxRv: number, mustKeep: (name: string) => boolean,
  opts: { mayRevert?: (name: string) => boolean; output?: (stdout: string) => void } = {}) {
  const rep = run(['repair', '--data-dir', s.dataDir]);
  opts.output?.(rep.stdout);
  t.equal(rep.status, 0, `repair succeeds: ${rep.stderr}`);
  t.match(rep.stdout, /kept \d+ object/, 'repair reports what it kept');
  const s2 = await startServer({ dataDir: s.dataDir, keepDataDir: true });
  t.teardown(() => s2.stop());
  const list = await s2.get(CM);
  t.equal(list.status, 200);
  const byName = new Map<string, any>(list.json.items.map((o: any) => [o.metadata.name, o]));
  // mayRevert: an object whose last acknowledged write was lost may come back as an older version.
  const wrong = [...byName.entries()].filter(([n, o]) => acked.has(n) && JSON.stringify(o) !== JSON.stringify(acked.get(n)) &&
    !(opts.mayRevert?.(n) && Number(o.metadata.resourceVersion) < Number(acked.get(n).metadata.resourceVersion))).map(([n]) => n);
  t.same(wrong, [], 'every kept object is exactly as acknowledged');
  const lost = [...acked.keys()].filter((n) => mustKeep(n) && !byName.has(n));
  t.same(lost, [], 'every object outside the damaged part is kept');
  t.ok(Number(list.json.metadata.resourceVersion) >= maxRv, 'the list revision is at or above every revision issued before');

  const n = await s2.request('POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-repair' } } });
  t.equal(n.status, 201);
  t.ok(Number(n.json.metadata.resourceVersion) > maxRv, `a new write gets a revision above every one issued before (${n.json.metadata.resourceVersion} > ${maxRv})`);

  // A watch resumed from a revision issued before the repair cannot be served gap-free: 410.
  const events: any[] = [];
  const w = s2.stream(`${CM}?watch=1&resourceVersion=${maxRv - 5}`, (e) => events.push(e));
  const code = await Promise.race([w.done, new Promise((r) => setTimeout(r, 3000))]);
  w.close();
  t.equal(code, 200);
  t.equal(events[0]?.type, 'ERROR', 'the resumed watch gets an ERROR event');
  t.equal(events[0]?.object?.code, 410, '410: the client relists');
  t.equal(events.length, 1, 'and nothing that could hide a missing event');
}

