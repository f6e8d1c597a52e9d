// The data directory: private files, one server at a time, one brand; and one server per port.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { mainJs, startServer, withServer } from '../lib/server.js';

const run = (args: string[]) => spawnSync(process.execPath, [mainJs, ...args], { encoding: 'utf8', timeout: 30_000 });

function tmpDir(t: { teardown(fn: () => unknown): void }, mode = 0o700): string {
  const parent = mkdtempSync(path.join(os.tmpdir(), 'capi-dd-'));
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  const dir = path.join(parent, 'data');
  mkdirSync(dir);
  chmodSync(dir, mode);
  return dir;
}

/** Every entry under dir with its permission bits. */
function modes(dir: string): { p: string; mode: number; isDir: boolean }[] {
  const out: { p: string; mode: number; isDir: boolean }[] = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = statSync(p);
    out.push({ p, mode: st.mode & 0o777, isDir: st.isDirectory() });
    if (st.isDirectory()) out.push(...modes(p));
  }
  return out;
}

t.test('every file of the data directory is 0600 and every directory 0700, LevelDB files included', async (t) => {
  const parent = mkdtempSync(path.join(os.tmpdir(), 'capi-dd-'));
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  const dataDir = path.join(parent, 'new');
  const s = await withServer(t, { dataDir, keepDataDir: true });
  // writes make LevelDB create files while serving, after start-up
  for (let i = 0; i < 20; i++) await s.request('POST', '/api/v1/namespaces/default/secrets', { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `s${i}` }, stringData: { k: 'v' } } });
  const open = (e: { mode: number; isDir: boolean }) => e.mode !== (e.isDir ? 0o700 : 0o600);
  t.same(modes(dataDir).filter(open).map((e) => `${e.p} ${e.mode.toString(8)}`), [], 'after the first start nothing is open to group or others');
  await s.restart(); // a restart turns the log into a table file and writes a new manifest
  t.equal(statSync(dataDir).mode & 0o777, 0o700, 'the data directory is created 0700');
  const all = modes(dataDir);
  t.ok(all.some((e) => e.p.endsWith('.ldb')) && all.some((e) => /MANIFEST/.test(e.p)), 'LevelDB files are among them');
  t.same(all.filter(open).map((e) => `${e.p} ${e.mode.toString(8)}`), [], 'nothing is open to group or others');
});

t.test('a data directory open to others is refused unless --insecure-data-dir-permissions', async (t) => {
  const dir = tmpDir(t, 0o755);
  const r = run(['--data-dir', dir, '--secure-port', '0']);
  t.not(r.status, 0, 'refused');
  t.match(r.stderr, new RegExp(`data directory ${dir} is open to other users \\(mode 0755\\)`), 'names the directory and its mode');
  t.match(r.stderr, /chmod 700/, 'says how to fix it');
  t.match(r.stderr, /--insecure-data-dir-permissions/, 'names the flag');
  const s = await startServer({ dataDir: dir, keepDataDir: true, args: ['--insecure-data-dir-permissions'] });
  t.teardown(() => s.stop());
  t.equal((await s.get('/readyz')).status, 200, 'the flag lets it serve');
});

t.test('a second server on the same data directory is refused, naming the process that holds it', async (t) => {
  const s = await startServer({ keepDataDir: true });
  t.teardown(() => rmSync(s.dataDir, { recursive: true, force: true }));
  const r = run(['--data-dir', s.dataDir, '--secure-port', '0']);
  t.not(r.status, 0, 'refused');
  t.match(r.stderr, new RegExp(`data directory .* is in use by process ${s.proc.pid}\\b`), 'names the pid');
  t.equal((await s.get('/readyz')).status, 200, 'the first server is unaffected');
  // after a SIGKILL the lock is stale and a new server takes over
  await s.stop('SIGKILL');
  const s2 = await startServer({ dataDir: s.dataDir, keepDataDir: true });
  t.teardown(() => s2.stop());
  t.equal((await s2.get('/readyz')).status, 200, 'a stale lock (dead process) is taken over');
});

t.test('a port in use fails start-up with an error naming the port', async (t) => {
  const s = await withServer(t);
  const other = tmpDir(t);
  const r = run(['--data-dir', other, '--secure-port', String(s.port)]);
  t.not(r.status, 0, 'the second server does not start');
  t.match(r.stderr, new RegExp(`port ${s.port} is already in use`), 'names the port');
  // uWebSockets.js serving the port itself (no client certificates) must not share it through SO_REUSEPORT
  const u = await withServer(t, { args: ['--secure-port-client-certs=false'] });
  for (const args of [['--secure-port-client-certs=false'], []]) {
    const r2 = run(['--data-dir', tmpDir(t), '--secure-port', String(u.port), ...args]);
    t.not(r2.status, 0, `a second server on a uWS-served port does not start (${args.join(' ') || 'node:tls front'})`);
    t.match(r2.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${u.port}: port ${u.port} is already in use`), 'names the port');
  }
  t.equal((await u.get('/readyz')).status, 200, 'the first server keeps serving');
});

t.test('a data directory created with one brand refuses the other', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  await s.stop();
  const r = run(['--data-dir', s.dataDir, '--secure-port', '0', '--brand', 'cluster']);
  t.not(r.status, 0, 'refused');
  t.match(r.stderr, /was created with --brand kubernetes; it cannot be served with --brand cluster/);
});
