// selectableFields (the 1.30+ CustomResourceDefinition field): a version's listed paths are field
// selectors of its custom resources in list and watch; the definition's rules in the reference's words.
import t from 'tap';
import { withServer } from '../lib/server.js';
import { establish, eventually } from '../lib/crd.js';

const CRDS = '/apis/apiextensions.cluster.io/v1/customresourcedefinitions';
const SHIRTS = '/apis/example.com/v1/namespaces/default/shirts';

function shirtCRD(selectable: unknown[] | undefined) {
  const v: any = { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: {
    spec: { type: 'object', properties: { color: { type: 'string', enum: ['red', 'blue', 'green'] }, size: { type: 'integer' }, folded: { type: 'boolean' }, tags: { type: 'array', items: { type: 'string' } }, dims: { type: 'object', properties: { w: { type: 'integer' } } }, any: { 'x-kubernetes-int-or-string': true } } },
  } } } };
  if (selectable) v.selectableFields = selectable;
  return { apiVersion: 'apiextensions.cluster.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'shirts.example.com' },
    spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'shirts', singular: 'shirt', kind: 'Shirt' }, versions: [v] } };
}

t.test('selectableFields', async (t) => {
  const s = await withServer(t);
  const bad = await s.request('POST', CRDS, { body: shirtCRD([{ jsonPath: '.spec.color' }, { jsonPath: '.spec.color' }, { jsonPath: '.spec.tags' }, { jsonPath: '.spec.nope' }, { jsonPath: 'spec.size' }, { jsonPath: '' }, { jsonPath: '.spec.dims' }, { jsonPath: '.spec.any' }]) });
  t.equal(bad.status, 422);
  const causes = bad.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
  const at = 'spec.versions[0].selectableFields';
  t.same(causes, [
    `${at}[1].jsonPath: Duplicate value: ".spec.color"`,
    `${at}[2].jsonPath: Invalid value: ".spec.tags": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.`,
    `${at}[3].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field`,
    `${at}[4].jsonPath: Invalid value: "spec.size": is an invalid path: must be a simple json path starting with .`,
    `${at}[5].jsonPath: Required value`,
    `${at}[6].jsonPath: Invalid value: ".spec.dims": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.`,
    `${at}[7].jsonPath: Invalid value: ".spec.any": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.`,
  ], causes.join('\n'));
  const nine = Array.from({ length: 9 }, (_, i) => ({ jsonPath: `.spec.f${i}` }));
  const tooMany: any = shirtCRD(nine);
  for (let i = 0; i < 9; i++) tooMany.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties[`f${i}`] = { type: 'string' };
  const tm = await s.request('POST', CRDS, { body: tooMany });
  t.equal(tm.status, 422);
  t.same(tm.json.details.causes.map((c: any) => `${c.field}: ${c.message}`), [`${at}: Too many: 9: must have at most 8 items`]);

  // served without selectable fields first: objects exist before the fields become selectable
  await establish(s, shirtCRD(undefined));
  const mk = (name: string, spec: unknown) => s.request('POST', SHIRTS, { body: { apiVersion: 'example.com/v1', kind: 'Shirt', metadata: { name }, spec } });
  // concurrent creates
  const made = await Promise.all([mk('a', { color: 'red', size: 1, folded: true }), mk('b', { color: 'blue', size: 2 }), mk('c', { color: 'red', size: 2, folded: false }), mk('d', {})]);
  t.ok(made.every((r) => r.status === 201));
  const noField = await s.get(`${SHIRTS}?fieldSelector=spec.color%3Dred`);
  t.equal(noField.status, 400, 'not selectable before the definition says so');
  t.equal(noField.json.message, 'field label not supported: spec.color');

  const crd = (await s.get(`${CRDS}/shirts.example.com`)).json;
  crd.spec.versions[0].selectableFields = [{ jsonPath: '.spec.color' }, { jsonPath: '.spec.size' }, { jsonPath: '.spec.folded' }];
  t.equal((await s.request('PUT', `${CRDS}/shirts.example.com`, { body: crd })).status, 200);
  const names = async (sel: string) => ((await s.get(`${SHIRTS}?fieldSelector=${encodeURIComponent(sel)}`)).json.items ?? []).map((i: any) => i.metadata.name);
  t.ok(await eventually(async () => (await s.get(`${SHIRTS}?fieldSelector=spec.color%3Dred`)).status === 200, 60_000), 'selectable once served again');
  t.same(await names('spec.color=red'), ['a', 'c'], 'objects stored before the change select by their values');
  t.same(await names('spec.size=2'), ['b', 'c'], 'integers as decimal text');
  t.same(await names('spec.folded=true'), ['a']);
  t.same(await names('spec.folded!=true'), ['b', 'c', 'd']);
  t.same(await names('spec.color='), ['d'], 'an absent field is the empty string');
  t.same(await names('spec.color=red,spec.size=2'), ['c']);
  t.same(await names('metadata.name=b'), ['b']);
  t.equal((await s.get(`${SHIRTS}?fieldSelector=spec.tags%3Dx`)).status, 400);

  // watch with a selectable field: objects entering and leaving the selection
  const events: any[] = [];
  const from = (await s.get(SHIRTS)).json.metadata.resourceVersion;
  const w = s.stream(`${SHIRTS}?watch=1&resourceVersion=${from}&fieldSelector=spec.color%3Dgreen`, (e) => events.push(e));
  t.equal((await s.request('PATCH', `${SHIRTS}/b`, { body: { spec: { color: 'green' } }, headers: { 'content-type': 'application/merge-patch+json' } })).status, 200);
  t.equal((await s.request('PATCH', `${SHIRTS}/b`, { body: { spec: { color: 'red' } }, headers: { 'content-type': 'application/merge-patch+json' } })).status, 200);
  t.ok(await eventually(async () => events.length >= 2, 60_000), 'two events');
  t.same(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'b'], ['DELETED', 'b']], 'entering and leaving the selection');
  w.close();
  t.same(await names('spec.color=red'), ['a', 'b', 'c'], 'writes keep the field values current');
});

t.test('selectableFields added after a restart: objects read at start-up select by their values', async (t) => {
  const s = await withServer(t);
  await establish(s, shirtCRD(undefined));
  for (const [name, color] of [['a', 'red'], ['b', 'blue']]) {
    t.equal((await s.request('POST', SHIRTS, { body: { apiVersion: 'example.com/v1', kind: 'Shirt', metadata: { name }, spec: { color } } })).status, 201);
  }
  // objects read at start-up are parsed only when first asked: their field values come later
  await s.restart();
  t.ok(await eventually(async () => (await s.get(SHIRTS)).status === 200, 60_000), 'served again after the restart');
  const crd = (await s.get(`${CRDS}/shirts.example.com`)).json;
  crd.spec.versions[0].selectableFields = [{ jsonPath: '.spec.color' }];
  t.equal((await s.request('PUT', `${CRDS}/shirts.example.com`, { body: crd })).status, 200);
  t.ok(await eventually(async () => (await s.get(`${SHIRTS}?fieldSelector=spec.color%3Dred`)).status === 200, 60_000), 'selectable once served again');
  t.same((await s.get(`${SHIRTS}?fieldSelector=spec.color%3Dred`)).json.items.map((i: any) => i.metadata.name), ['a']);
  t.same((await s.get(`${SHIRTS}?fieldSelector=spec.color%3Dblue`)).json.items.map((i: any) => i.metadata.name), ['b']);
});
