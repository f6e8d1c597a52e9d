// The data directory: private files and one brand. One server per directory and per port: exclusive.test.ts.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startServer, withServer } from '../lib/server.js';
import { run, tmpDir } from '../lib/datadir.js';

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

t.test('a data directory created with one brand refuses the other', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  await s.stop();
  const r = run(['--data-dir', s.dataDir, '--secure-port', '0', '--brand', 'cluster']);
  t.not(r.status, 0, 'refused');
  t.match(r.stderr, /was created with --brand kubernetes; it cannot be served with --brand cluster/);
});

t.test('a data directory whose store was opened refuses to start without it, unless --storage-start-empty', async (t) => {
  const s = await withServer(t);
  await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept' } } });
  await s.stop();
  const store = path.join(s.dataDir, 'store');
  for (const [what, lose] of [['missing', () => rmSync(store, { recursive: true })], ['empty', () => mkdirSync(store)]] as const) {
    lose();
    const r = run(['--data-dir', s.dataDir, '--secure-port', '0']);
    t.not(r.status, 0, `the store ${what}: refused`);
    t.match(r.stderr, new RegExp(`the store ${store} is missing or empty, but this data directory held one`), 'says which store and why');
    t.match(r.stderr, /--storage-start-empty/, 'names the flag');
    t.same(readdirSync(s.dataDir).includes('store') ? readdirSync(store).filter((n) => !/^(LOCK|LOG(\.old)?)$/.test(n)) : [], [], 'and creates no store');
  }
  const again = await startServer({ dataDir: s.dataDir, keepDataDir: true, args: ['--storage-start-empty'] });
  t.teardown(() => again.stop());
  t.equal((await again.get('/api/v1/namespaces/default/configmaps/kept')).status, 404, 'the flag starts an empty store');
});
