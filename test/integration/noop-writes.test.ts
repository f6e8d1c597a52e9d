// A write that changes nothing stores nothing: no new resourceVersion, no watch event. Stock kubectl
// lays an object out in its own key order, and a create, an apply and an update each order the
// stored metadata differently; none of that is a change. Neither is a managedFields time alone.
import t from 'tap';
import { withServer } from '../lib/server.js';
import { kubectl, noKubectl } from '../lib/kubectl.js';
import { eventually } from '../lib/poll.js';

const NS = 'noop';
const configMap = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${NS}\ndata:\n  a: "1"\n`;

t.test('writes that change nothing neither write nor notify watchers', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', withoutControllers: ['root-ca-publisher'] });
  t.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status, 201);
  const events: { type: string; object: { metadata: { name: string; resourceVersion: string } } }[] = [];
  const w = s.stream(`/api/v1/namespaces/${NS}/configmaps?watch=1`, (e) => events.push(e));
  t.teardown(() => w.close());
  const run = async (args: string[], input?: string) => {
    const r = await kubectl(s, args, { input });
    t.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const get = async (name: string) => (await s.get(`/api/v1/namespaces/${NS}/configmaps/${name}`)).json;
  const unchanged = async (name: string, what: string, write: () => Promise<unknown>) => {
    const before = await get(name);
    await write();
    const after = await get(name);
    t.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, `${what}: the resourceVersion stays`);
    t.same(after, before, `${what}: the object, managedFields included, stays`);
  };

  // Created by server-side apply: the same apply again is a no-op from the first repeat on.
  await run(['apply', '--server-side', '-f', '-'], configMap('applied'));
  await unchanged('applied', 'a repeated apply', () => run(['apply', '--server-side', '-f', '-'], configMap('applied')));
  await unchanged('applied', 'another repeated apply', () => run(['apply', '--server-side', '-f', '-'], configMap('applied')));

  // Created by kubectl create: the first apply makes "kubectl" an owner (a managedFields change the
  // reference writes too, with no time since no value changed); the next changes nothing.
  await run(['create', '-f', '-'], configMap('created'));
  const created = await get('created');
  await run(['apply', '--server-side', '-f', '-'], configMap('created'));
  const owned = await get('created');
  t.not(owned.metadata.resourceVersion, created.metadata.resourceVersion, 'the first apply adds an owner');
  const entry = owned.metadata.managedFields.find((e: { manager: string }) => e.manager === 'kubectl');
  t.match(entry, { operation: 'Apply', fieldsV1: { 'f:data': { 'f:a': {} } } });
  t.equal(entry.time, undefined, 'an apply that changed no value records no time');
  await unchanged('created', 'the apply after that', () => run(['apply', '--server-side', '-f', '-'], configMap('created')));

  // Updates: the file as written, the object as read, and the object with a managedFields time moved.
  await unchanged('created', 'replace with the file', () => run(['replace', '-f', '-'], configMap('created')));
  await unchanged('created', 'replace with the object read', async () => run(['replace', '-f', '-'], await run(['get', 'configmap', '-n', NS, 'created', '-o', 'yaml'])));
  await unchanged('created', 'a PUT moving only a managedFields time', async () => {
    const o = await get('created');
    o.metadata.managedFields = o.metadata.managedFields.map((e: { time?: string }) => (e.time ? { ...e, time: '2001-01-01T00:00:00Z' } : e));
    t.equal((await s.request('PUT', `/api/v1/namespaces/${NS}/configmaps/created`, { body: o })).status, 200);
  });

  // A marker write: once its event arrives, every event before it has been delivered.
  await run(['create', 'configmap', '-n', NS, 'marker']);
  t.ok(await eventually(() => events.some((e) => e.object.metadata.name === 'marker')), 'the marker event arrives');
  t.same(events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED applied', 'ADDED created', 'MODIFIED created', 'ADDED marker'],
    'watchers saw the creates and the one apply that changed ownership, nothing else');
});
