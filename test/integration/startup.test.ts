// Start-up through the real command: flags, config files and their errors, --runtime-config, restarts.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { mainJs, withServer } from '../lib/server.js';
import { eventually } from '../lib/poll.js';

const run = (args: string[]) => spawnSync(process.execPath, [mainJs, ...args], { encoding: 'utf8', timeout: 20_000 });

t.test('bad flags and bad config files fail start-up with a message naming the problem', async (t) => {
  const dir = t.testdir({});
  chmodSync(dir, 0o700); // a data directory must be private to the server's user
  const unknown = run(['--data-dir', dir, '--no-such-flag=1']);
  t.not(unknown.status, 0);
  t.match(unknown.stderr, /unknown flag: --no-such-flag/);

  const file = path.join(dir, 'bad.yaml');
  writeFileSync(file, 'storag:\n  plugin: embedded\n');
  const bad = run(['--data-dir', dir, '--config', file]);
  t.not(bad.status, 0);
  t.match(bad.stderr, /bad\.yaml/, 'names the file');
  t.match(bad.stderr, /storag/, 'names the key');

  const missing = path.join(dir, 'plugin.yaml');
  writeFileSync(missing, 'admission:\n  - plugin: no-such-admission-plugin\n');
  const m = run(['--data-dir', dir, '--config', missing, '--secure-port', '0']);
  t.not(m.status, 0);
  t.match(m.stderr, /plugin "no-such-admission-plugin" \(admission\)/, 'names the plugin and its kind');

  const gate = run(['--data-dir', dir, '--feature-gates', 'NoSuchGate=true', '--secure-port', '0']);
  t.not(gate.status, 0);
  t.match(gate.stderr, /unrecognized feature gate: NoSuchGate/);
});

t.test('--runtime-config turns a group version off', async (t) => {
  const s = await withServer(t, { args: ['--runtime-config', 'batch/v1=false'] });
  t.equal((await s.get('/apis/batch/v1')).status, 404);
  t.equal((await s.get('/apis/batch/v1/namespaces/default/jobs')).status, 404);
  const groups = (await s.get('/apis')).json.groups.map((g: any) => g.name);
  t.notOk(groups.includes('batch'), 'batch is not discovered');
  t.ok(groups.includes('apps'), 'other groups are');
});

t.test('a restart keeps objects and continues revisions upward', async (t) => {
  const s = await withServer(t);
  const c = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept' }, data: { a: 'b' } } });
  t.equal(c.status, 201);
  await s.restart();
  const g = await s.get('/api/v1/namespaces/default/configmaps/kept');
  t.equal(g.status, 200);
  t.same(g.json, c.json, 'byte-for-byte the same object');
  const n = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' } } });
  t.ok(Number(n.json.metadata.resourceVersion) > Number(c.json.metadata.resourceVersion), 'revisions go on upward');
});

t.test('after a restart, objects read from the store answer selectors, uid preconditions and owner checks', async (t) => {
  // Objects loaded at start-up are parsed only when first asked (kernel/store/cache.ts storedEntry):
  // every fact a read or a write needs must still come out right.
  const s = await withServer(t);
  const ns = (n: string) => `/api/v1/namespaces/default/${n}`;
  const mk = (name: string, labels: Record<string, string>, extra: object = {}) =>
    s.request('POST', ns('configmaps'), { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels, ...extra } } });
  const owner = await mk('owner', { role: 'owner' });
  t.equal(owner.status, 201);
  t.equal((await mk('a', { tier: 'x' })).status, 201);
  t.equal((await mk('b', { tier: 'y' })).status, 201);
  const dep = await mk('dep', {}, { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.json.metadata.uid }] });
  t.equal(dep.status, 201);
  await s.restart();

  const byLabel = await s.get(`${ns('configmaps')}?labelSelector=tier%3Dx`);
  t.same(byLabel.json.items.map((o: any) => o.metadata.name), ['a'], 'label selector');
  const byField = await s.get(`${ns('configmaps')}?fieldSelector=metadata.name%3Db`);
  t.same(byField.json.items.map((o: any) => o.metadata.name), ['b'], 'field selector');
  const notX = await s.get(`${ns('configmaps')}?labelSelector=tier%21%3Dx`);
  t.notOk(notX.json.items.some((o: any) => o.metadata.name === 'a'), 'inequality selector');

  const wrongUid = await s.request('DELETE', ns('configmaps/b'), { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-the-uid' } } });
  t.equal(wrongUid.status, 409, 'a uid precondition is checked against the loaded object');

  // The owner was loaded without being parsed; deleting it must still collect its dependent.
  t.equal((await s.request('DELETE', ns('configmaps/owner'))).status, 200);
  const gone = await eventually(async () => (await s.get(ns('configmaps/dep'))).status === 404, 60_000);
  t.ok(gone, 'the garbage collector deletes the dependent of a deleted owner after the restart');
});
