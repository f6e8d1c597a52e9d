// Defaulting on read: a custom resource stored before its definition gained a `default` is shown
// with it by get, list and watch, without being written back (as the reference decodes stored
// custom resources); a write stores the default; restarts keep it.
import t from 'tap';
import { withServer } from '../lib/server.js';
import { establish, eventually } from '../lib/crd.js';

const CRDS = '/apis/apiextensions.cluster.io/v1/customresourcedefinitions';
const THINGS = '/apis/example.com/v1/namespaces/default/things';

function thingCRD(withDefault: boolean) {
  const spec: any = { type: 'object', properties: { size: { type: 'integer' }, color: { type: 'string' } } };
  if (withDefault) spec.properties.color.default = 'blue';
  return {
    apiVersion: 'apiextensions.cluster.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'things.example.com' },
    spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'things', singular: 'thing', kind: 'Thing' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }] },
  };
}

t.test('defaults applied on read', async (t) => {
  const s = await withServer(t, { keepDataDir: false });
  await establish(s, thingCRD(false));
  for (const n of ['a', 'b', 'c']) t.equal((await s.request('POST', THINGS, { body: { apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: n }, spec: { size: 1 } } })).status, 201);
  const before = (await s.get(`${THINGS}/a`)).json;
  t.equal(before.spec.color, undefined, 'no default yet');

  const crd = (await s.get(`${CRDS}/things.example.com`)).json;
  t.equal((await s.request('PUT', `${CRDS}/things.example.com`, { body: { ...crd, spec: thingCRD(true).spec } })).status, 200);
  t.ok(await eventually(async () => (await s.get(`${THINGS}/a`)).json.spec.color === 'blue', 60_000), 'get shows the new default');
  const a = (await s.get(`${THINGS}/a`)).json;
  t.equal(a.metadata.resourceVersion, before.metadata.resourceVersion, 'not written back');
  t.same((await s.get(THINGS)).json.items.map((i: any) => i.spec.color), ['blue', 'blue', 'blue'], 'list shows it');
  const events: any[] = [];
  const w = s.stream(`${THINGS}?watch=1&resourceVersion=0`, (e) => events.push(e));
  t.ok(await eventually(async () => events.length >= 3, 60_000), 'watch replays');
  t.same(events.slice(0, 3).map((e) => e.object.spec.color), ['blue', 'blue', 'blue'], 'watch shows it');

  // concurrent writes to objects that lack the default, while reads go on: every answer has it
  const writes = ['a', 'b', 'c'].flatMap((n) => [1, 2, 3].map((i) => s.request('PATCH', `${THINGS}/${n}`, { body: { spec: { size: 10 + i } }, headers: { 'content-type': 'application/merge-patch+json' } })));
  const reads = Array.from({ length: 10 }, () => s.get(THINGS));
  const done = await Promise.all([...writes, ...reads]);
  t.ok(done.slice(0, 9).every((r) => r.status === 200 && r.json.spec.color === 'blue'), 'patched objects carry the default');
  t.ok(done.slice(9).every((r) => r.json.items.every((i: any) => i.spec.color === 'blue')), 'every concurrent list shows the default');
  t.ok(await eventually(async () => events.filter((e) => e.type === 'MODIFIED').length >= 9, 60_000), 'watch events of the writes');
  t.ok(events.filter((e) => e.type === 'MODIFIED').every((e) => e.object.spec.color === 'blue'));
  w.close();

  // a fresh object written after the change is stored with it; after a restart reads still default
  t.equal((await s.request('POST', THINGS, { body: { apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 'd' }, spec: {} } })).json.spec.color, 'blue');
  await s.restart();
  t.ok(await eventually(async () => (await s.get(THINGS)).status === 200, 60_000));
  t.same((await s.get(THINGS)).json.items.map((i: any) => [i.metadata.name, i.spec.color]), [['a', 'blue'], ['b', 'blue'], ['c', 'blue'], ['d', 'blue']]);
  // an explicit value is not replaced
  t.equal((await s.request('PATCH', `${THINGS}/d`, { body: { spec: { color: 'red' } }, headers: { 'content-type': 'application/merge-patch+json' } })).json.spec.color, 'red');
  t.equal((await s.get(`${THINGS}/d`)).json.spec.color, 'red');
});
