// Custom resource definitions over real HTTPS: the definition's validation and status (names,
// conflicts, Established), custom resources served through the kernel's generic path (CRUD, paging,
// watch, patches, apply, dry run, selectors, finalizers, owner references), structural validation,
// defaulting and pruning, the status and scale sub-resources, printer columns, discovery and OpenAPI,
// deletion of a definition with its instances, and serving again after a restart.
import t from 'tap';
import { sleep, withServer, type TestServer } from '../lib/server.js';
import { establish, eventually, widgetCRD } from '../lib/crd.js';

const CRDS = '/apis/apiextensions.cluster.io/v1/customresourcedefinitions';
const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';

const widget = (name: string, spec: Record<string, unknown> = { size: 'small' }, metadata: Record<string, unknown> = {}) =>
  ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, ...metadata }, spec });

t.test('custom resource definitions', async (t) => {
  const s: TestServer = await withServer(t);

  await t.test('definition validation (v1 rules, reference wording)', async (t) => {
    const bad = widgetCRD();
    (bad.metadata as any).name = 'wrong.example.com';
    (bad.spec as any).scope = '';
    (bad.spec as any).versions = [{ name: 'v1', served: true, storage: false }, { name: 'V2', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { properties: {} } } } } }];
    const r = await s.request('POST', CRDS, { body: bad });
    t.equal(r.status, 422, r.text);
    const causes = r.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    t.ok(causes.includes('metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group'), causes.join('\n'));
    t.ok(causes.includes('spec.scope: Required value'));
    t.ok(causes.includes('spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required'), causes.join('\n'));
    t.ok(causes.some((c: string) => c.startsWith('spec.versions[1].name: Invalid value: "V2": a DNS-1035 label')));
    t.ok(causes.includes('spec.versions[1].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields'));
    t.ok(causes.some((c: string) => c.startsWith('spec.versions: Invalid value:') && c.endsWith('must have exactly one version marked as storage version')));
    t.match(r.json.message, /^CustomResourceDefinition.apiextensions.cluster.io "wrong.example.com" is invalid: /);

    const noDot = widgetCRD();
    (noDot.spec as any).group = 'example';
    noDot.metadata.name = 'widgets.example';
    const r2 = await s.request('POST', CRDS, { body: noDot });
    t.equal(r2.status, 422);
    t.match(r2.text, /spec.group: Invalid value: \\"example\\": should be a domain with at least one dot/);
  });

  const crd = await establish(s, widgetCRD());

  await t.test('status: accepted names, conditions, stored versions, cleanup finalizer', async (t) => {
    t.same(crd.status.acceptedNames, { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList', shortNames: ['wd'], categories: ['all'] });
    const names = crd.status.conditions.find((c: any) => c.type === 'NamesAccepted');
    t.match(names, { status: 'True', reason: 'NoConflicts', message: 'no conflicts found' });
    t.match(crd.status.conditions.find((c: any) => c.type === 'Established'), { status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' });
    t.same(crd.status.storedVersions, ['v1']);
    t.same(crd.metadata.finalizers, ['customresourcecleanup.apiextensions.cluster.io']);
    t.same(crd.spec.conversion, { strategy: 'None' });
  });

  await t.test('a conflicting definition stays not Established with the reference reason', async (t) => {
    const other = widgetCRD();
    other.metadata.name = 'gadgets.example.com';
    Object.assign((other.spec as any).names, { plural: 'gadgets', singular: 'gadget', kind: 'Widget', shortNames: ['wd'] });
    t.equal((await s.request('POST', CRDS, { body: other })).status, 201);
    let got: any;
    t.ok(await eventually(async () => {
      got = (await s.get(`${CRDS}/gadgets.example.com`)).json;
      return got.status?.conditions?.some((c: any) => c.type === 'NamesAccepted' && c.status === 'False');
    }), JSON.stringify(got?.status));
    const na = got.status.conditions.find((c: any) => c.type === 'NamesAccepted');
    // Kind and list kind both conflict; as in the reference, the last check's reason stands.
    t.equal(na.reason, 'ListKindConflict');
    t.equal(na.message, '"WidgetList" is already in use');
    t.match(got.status.conditions.find((c: any) => c.type === 'Established'), { status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' });
    t.equal((await s.get('/apis/example.com/v1/namespaces/default/gadgets')).status, 404, 'not served');
    t.equal((await s.request('DELETE', `${CRDS}/gadgets.example.com`)).status, 200);
    t.ok(await eventually(async () => (await s.get(`${CRDS}/gadgets.example.com`)).status === 404), 'a definition without instances goes at once');
  });

  await t.test('CRUD, defaulting, pruning, generation, resourceVersion rules', async (t) => {
    const r = await s.request('POST', WIDGETS, { body: widget('w1', { size: 'small', unknown: 1, free: { any: { thing: [1] } }, port: 'http', note: null }) });
    t.equal(r.status, 201, r.text);
    t.equal(r.json.spec.replicas, 1, 'default applied on create');
    t.notOk('unknown' in r.json.spec, 'unknown field pruned');
    t.same(r.json.spec.free, { any: { thing: [1] } }, 'preserve-unknown-fields keeps everything');
    t.equal(r.json.spec.note, null, 'nullable keeps null');
    t.equal(r.json.metadata.generation, 1);
    t.match(r.headers.warning, /unknown field \\"spec.unknown\\"/);
    const g = await s.get(`${WIDGETS}/w1`);
    t.equal(g.json.metadata.resourceVersion, r.json.metadata.resourceVersion);
    const u = await s.request('PUT', `${WIDGETS}/w1`, { body: { ...g.json, spec: { ...g.json.spec, size: 'large' } } });
    t.equal(u.status, 200, u.text);
    t.equal(u.json.metadata.generation, 2);
    const stale = await s.request('PUT', `${WIDGETS}/w1`, { body: g.json });
    t.equal(stale.status, 409);
    t.equal((await s.request('POST', WIDGETS, { body: widget('w1') })).status, 409);
    const strict = await s.request('POST', `${WIDGETS}?fieldValidation=Strict`, { body: widget('w-strict', { size: 'small', bogus: true }) });
    t.equal(strict.status, 400, 'strict decoding error');
    t.match(strict.text, /unknown field \\"spec.bogus\\"/);
    const dry = await s.request('POST', `${WIDGETS}?dryRun=All`, { body: widget('w-dry') });
    t.equal(dry.status, 201);
    t.equal((await s.get(`${WIDGETS}/w-dry`)).status, 404, 'dry run stores nothing');
    const kindMismatch = await s.request('POST', WIDGETS, { body: { ...widget('x'), kind: 'Gadget' } });
    t.equal(kindMismatch.status, 400);
  });

  await t.test('value validation with the reference messages and paths', async (t) => {
    const r = await s.request('POST', WIDGETS, { body: widget('bad', { size: 'medium', replicas: 20, color: 'Red', tags: ['a', 'b', 'c', 'd'], port: 1.5 }) });
    t.equal(r.status, 422, r.text);
    const causes = r.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    t.ok(causes.includes('spec.size: Unsupported value: "medium": supported values: "small", "large"'), causes.join('\n'));
    t.ok(causes.includes('spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10'));
    t.ok(causes.includes('spec.color: Invalid value: "Red": spec.color in body should match \'^[a-z]+$\''));
    t.ok(causes.includes('spec.tags: Too many: 4: must have at most 3 items'));
    t.ok(causes.some((c: string) => c.startsWith('spec.port: Invalid value: "number": spec.port in body must be of type integer,string')), causes.join('\n'));
    t.match(r.json.message, /^Widget.example.com "bad" is invalid: \[/);
    const missing = await s.request('POST', WIDGETS, { body: widget('bad2', {}) });
    t.equal(missing.status, 422);
    t.same(missing.json.details.causes, [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.size' }]);
  });

  await t.test('patches: merge and JSON; strategic merge is 415; apply with list-map markers', async (t) => {
    const mp = await s.request('PATCH', `${WIDGETS}/w1`, { raw: JSON.stringify({ spec: { color: 'blue' } }), headers: { 'content-type': 'application/merge-patch+json' } });
    t.equal(mp.status, 200, mp.text);
    t.equal(mp.json.spec.color, 'blue');
    const jp = await s.request('PATCH', `${WIDGETS}/w1`, { raw: JSON.stringify([{ op: 'replace', path: '/spec/replicas', value: 3 }]), headers: { 'content-type': 'application/json-patch+json' } });
    t.equal(jp.json.spec.replicas, 3);
    const sp = await s.request('PATCH', `${WIDGETS}/w1`, { raw: '{}', headers: { 'content-type': 'application/strategic-merge-patch+json' } });
    t.equal(sp.status, 415);
    t.equal(sp.json.message, 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
    const bad = await s.request('PATCH', `${WIDGETS}/w1`, { raw: JSON.stringify({ spec: { replicas: 99 } }), headers: { 'content-type': 'application/merge-patch+json' } });
    t.equal(bad.status, 422, 'patched object validated');

    const apply = (manager: string, body: unknown, force = false) => s.request('PATCH', `${WIDGETS}/w-apply?fieldManager=${manager}${force ? '&force=true' : ''}`, { raw: JSON.stringify(body), headers: { 'content-type': 'application/apply-patch+yaml' } });
    const a1 = await apply('one', widget('w-apply', { size: 'small', ports: [{ name: 'a', port: 1 }], tags: ['x'] }));
    t.equal(a1.status, 201, a1.text);
    const a2 = await apply('two', widget('w-apply', { size: 'small', ports: [{ name: 'b', port: 2 }] }));
    t.equal(a2.status, 200, a2.text);
    t.same(a2.json.spec.ports, [{ name: 'a', port: 1 }, { name: 'b', port: 2 }], 'list-type map merges by key across managers');
    const a3 = await apply('two', widget('w-apply', { size: 'small', tags: ['y'] }));
    t.equal(a3.status, 409, 'atomic list owned by another manager conflicts');
    const managers = a2.json.metadata.managedFields.map((m: any) => m.manager).sort();
    t.same(managers, ['one', 'two']);
    t.ok(JSON.stringify(a2.json.metadata.managedFields).includes('k:{\\"name\\":\\"b\\"}'), 'map keys in field sets');
  });

  await t.test('status and scale sub-resources', async (t) => {
    const cur = (await s.get(`${WIDGETS}/w1`)).json;
    const st = await s.request('PUT', `${WIDGETS}/w1/status`, { body: { ...cur, spec: { ...cur.spec, size: 'small' }, status: { replicas: 2, selector: 'app=w1', phase: 'Running' } } });
    t.equal(st.status, 200, st.text);
    t.equal(st.json.spec.size, cur.spec.size, 'status write leaves spec');
    t.equal(st.json.status.phase, 'Running');
    t.equal(st.json.metadata.generation, cur.metadata.generation, 'status write does not bump generation');
    const main = await s.request('PUT', `${WIDGETS}/w1`, { body: { ...st.json, status: { phase: 'Gone' } } });
    t.equal(main.json.status.phase, 'Running', 'main write leaves status');
    const sc = await s.get(`${WIDGETS}/w1/scale`);
    t.same(sc.json.spec, { replicas: 3 });
    t.same(sc.json.status, { replicas: 2, selector: 'app=w1' });
    t.equal(sc.json.apiVersion, 'autoscaling/v1');
    const up = await s.request('PATCH', `${WIDGETS}/w1/scale`, { raw: JSON.stringify({ spec: { replicas: 7 } }), headers: { 'content-type': 'application/merge-patch+json' } });
    t.equal(up.status, 200, up.text);
    t.equal((await s.get(`${WIDGETS}/w1`)).json.spec.replicas, 7);
  });

  await t.test('table with printer columns; discovery; OpenAPI', async (t) => {
    const tb = await s.get(WIDGETS, { accept: 'application/json;as=Table;v=v1;g=meta.cluster.io' });
    t.same(tb.json.columnDefinitions.map((c: any) => c.name), ['Name', 'Size', 'Replicas', 'Phase']);
    const row = tb.json.rows.find((r: any) => r.cells[0] === 'w1');
    t.same(row.cells, ['w1', 'large', 7, 'Running']);
    const d = await s.get('/apis/example.com/v1');
    t.same(d.json.resources.map((r: any) => r.name), ['widgets', 'widgets/status', 'widgets/scale']);
    t.same(d.json.resources[0].shortNames, ['wd']);
    t.same(d.json.resources[0].categories, ['all']);
    t.ok((await s.get('/apis')).json.groups.some((g: any) => g.name === 'example.com'));
    const v3 = await s.get('/openapi/v3/apis/example.com/v1');
    t.equal(v3.status, 200);
    const def = v3.json.components.schemas['com.example.v1.Widget'];
    t.ok(def?.properties?.spec?.properties?.size, 'schema published');
    t.ok((await s.get('/openapi/v2')).json.definitions['com.example.v1.Widget']);
  });

  await t.test('list paging, selectors, watch, deletecollection', async (t) => {
    for (let i = 0; i < 5; i++) await s.request('POST', WIDGETS, { body: widget(`page-${i}`, { size: 'small' }, { labels: { batch: 'p', i: String(i) } }) });
    const p1 = await s.get(`${WIDGETS}?labelSelector=batch%3Dp&limit=2`);
    t.equal(p1.json.items.length, 2);
    t.ok(p1.json.metadata.continue);
    const p2 = await s.get(`${WIDGETS}?labelSelector=batch%3Dp&limit=2&continue=${p1.json.metadata.continue}`);
    t.same(p2.json.items.map((i: any) => i.metadata.name), ['page-2', 'page-3']);
    const byName = await s.get(`${WIDGETS}?fieldSelector=metadata.name%3Dpage-4`);
    t.same(byName.json.items.map((i: any) => i.metadata.name), ['page-4']);
    t.equal((await s.get(`${WIDGETS}?fieldSelector=spec.size%3Dsmall`)).status, 400, 'unknown field selector');
    t.equal(p1.json.kind, 'WidgetList');
    const events: any[] = [];
    const w = s.stream(`${WIDGETS}?watch=1&labelSelector=batch%3Dp&resourceVersion=${p1.json.metadata.resourceVersion}`, (e) => events.push(e));
    const r = await s.request('DELETE', `${WIDGETS}?labelSelector=batch%3Dp`);
    t.equal(r.status, 200, r.text);
    t.equal(r.json.items.length, 5);
    t.ok(await eventually(async () => events.filter((e) => e.type === 'DELETED').length === 5), JSON.stringify(events.map((e) => e.type)));
    w.close();
  });

  await t.test('finalizers and owner references (garbage collection)', async (t) => {
    const owner = (await s.request('POST', WIDGETS, { body: widget('owner') })).json;
    const ref = { apiVersion: 'example.com/v1', kind: 'Widget', name: 'owner', uid: owner.metadata.uid };
    t.equal((await s.request('POST', WIDGETS, { body: widget('dep', { size: 'small' }, { ownerReferences: [ref] }) })).status, 201);
    t.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'cm-dep', ownerReferences: [ref] } } })).status, 201);
    t.equal((await s.request('POST', WIDGETS, { body: widget('fin', { size: 'small' }, { finalizers: ['example.com/hold'] }) })).status, 201);
    t.equal((await s.request('DELETE', `${WIDGETS}/fin`)).status, 200);
    const held = (await s.get(`${WIDGETS}/fin`)).json;
    t.ok(held.metadata.deletionTimestamp, 'finalizer holds the object');
    t.equal((await s.request('PATCH', `${WIDGETS}/fin`, { raw: JSON.stringify({ metadata: { finalizers: null } }), headers: { 'content-type': 'application/merge-patch+json' } })).status, 200);
    t.equal((await s.get(`${WIDGETS}/fin`)).status, 404);
    t.equal((await s.request('DELETE', `${WIDGETS}/owner`)).status, 200);
    t.ok(await eventually(async () => (await s.get(`${WIDGETS}/dep`)).status === 404), 'custom resource dependent collected');
    t.ok(await eventually(async () => (await s.get('/api/v1/namespaces/default/configmaps/cm-dep')).status === 404), 'built-in dependent of a custom resource collected');
  });

  await t.test('concurrent writers: same object and different objects', async (t) => {
    await s.request('POST', WIDGETS, { body: widget('hot', { size: 'small', replicas: 0 }) });
    const bumps = await Promise.all(Array.from({ length: 10 }, (_, i) =>
      s.request('PATCH', `${WIDGETS}/hot`, { raw: JSON.stringify([{ op: 'add', path: `/metadata/labels`, value: { [`k${i}`]: 'v' } }]), headers: { 'content-type': 'application/json-patch+json' } })));
    t.ok(bumps.every((b) => b.status === 200), bumps.map((b) => b.status).join());
    const puts = await Promise.all(Array.from({ length: 10 }, async (_, i) => {
      const cur = (await s.get(`${WIDGETS}/hot`)).json;
      return s.request('PUT', `${WIDGETS}/hot`, { body: { ...cur, spec: { ...cur.spec, replicas: i } } });
    }));
    t.ok(puts.every((p) => p.status === 200 || p.status === 409), 'optimistic concurrency: success or conflict');
    t.ok(puts.some((p) => p.status === 200));
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) => s.request('POST', WIDGETS, { body: widget(`many-${i}`) })));
    t.ok(many.every((m) => m.status === 201));
    t.equal((await s.get(`${WIDGETS}?labelSelector=`)).json.items.filter((i: any) => i.metadata.name.startsWith('many-')).length, 20);
  });

  await t.test('CEL validation rules', async (t) => {
    const ruled = widgetCRD();
    ruled.metadata.name = 'rules.example.com';
    Object.assign((ruled.spec as any).names, { plural: 'rules', singular: 'rule', kind: 'Rule', shortNames: [], categories: [] });
    const spec = (ruled.spec as any).versions[0].schema.openAPIV3Schema.properties.spec;
    spec.properties.min = { type: 'integer' };
    spec.properties.name = { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'name is immutable' }] };
    spec.properties.big = { type: 'array', maxItems: 1100, items: { type: 'integer' } };
    spec['x-kubernetes-validations'] = [
      { rule: '!has(self.min) || self.min <= self.replicas', message: 'min must not exceed replicas' },
      { rule: 'self.size != "large" || self.replicas > 1', messageExpression: '"a large widget needs more than " + (self.replicas == 1 ? "1" : "0") + " replica"' },
      { rule: '!has(self.color) || self.color != "red"', fieldPath: '.color', reason: 'FieldValueForbidden', message: 'no red widgets' },
      { rule: '!has(self.big) || self.big.all(x, self.big.all(y, x >= 0))' },
      { rule: '!has(self.tags) || self.tags.isSorted() && self.tags.indexOf("zz") == -1', message: 'tags must be sorted' },
    ];
    await establish(s, ruled);
    const RULES = '/apis/example.com/v1/namespaces/default/rules';
    const r = await s.request('POST', RULES, { body: { ...widget('r1', { size: 'large', replicas: 1, min: 2, color: 'red', name: 'a', tags: ['b', 'a'] }), kind: 'Rule' } });
    t.equal(r.status, 422, r.text);
    const causes = r.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    t.ok(causes.includes('spec: Invalid value: "object": min must not exceed replicas'), causes.join('\n'));
    t.ok(causes.includes('spec: Invalid value: "object": a large widget needs more than 1 replica'), 'messageExpression');
    t.ok(causes.includes('spec.color: Forbidden: no red widgets'), 'fieldPath and reason');
    // After the fieldPath rule failed, the reference reports the node's later causes at its path too.
    t.ok(causes.includes('spec.color: Invalid value: "object": tags must be sorted'), 'the Kubernetes list library');
    t.equal((await s.request('POST', RULES, { body: { ...widget('r1', { size: 'small', name: 'a' }), kind: 'Rule' } })).status, 201);
    const cur = (await s.get(`${RULES}/r1`)).json;
    const imm = await s.request('PUT', `${RULES}/r1`, { body: { ...cur, spec: { ...cur.spec, name: 'b' } } });
    t.equal(imm.status, 422, 'transition rule');
    t.match(imm.json.details.causes[0], { field: 'spec.name', message: 'Invalid value: "string": name is immutable' });
    const same = await s.request('PUT', `${RULES}/r1`, { body: { ...cur, spec: { ...cur.spec, replicas: 2 } } });
    t.equal(same.status, 200, 'unchanged value passes the transition rule');
    const big = await s.request('POST', RULES, { body: { ...widget('r-big', { size: 'small', big: Array.from({ length: 1100 }, (_, i) => i) }), kind: 'Rule' } });
    t.equal(big.status, 422, 'runtime cost limit');
    t.match(big.text, /call cost exceeds limit for rule: !has\(self.big\)/);

    const hostile = widgetCRD();
    hostile.metadata.name = 'hostiles.example.com';
    Object.assign((hostile.spec as any).names, { plural: 'hostiles', singular: 'hostile', kind: 'Hostile', shortNames: [], categories: [] });
    const hs = (hostile.spec as any).versions[0].schema.openAPIV3Schema.properties.spec;
    hs.properties.list = { type: 'array', items: { type: 'string' } };
    hs['x-kubernetes-validations'] = [{ rule: 'self.list.all(a, self.list.all(b, a.matches(b)))' }, { rule: 'self.size ==' }, { rule: 'self.nope == 1' }, { rule: 'self.list.all(x, x.size() < 10)' }];
    const h = await s.request('POST', CRDS, { body: hostile });
    t.equal(h.status, 422, h.text);
    const hc = h.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    t.ok(hc.includes('spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)'), hc.join('\n'));
    t.ok(hc.some((c: string) => c.startsWith('spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].rule: Invalid value:') && c.includes('compilation failed')));
    t.ok(hc.some((c: string) => c.startsWith('spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[2].rule: Invalid value:') && c.includes("undefined field 'nope'")), 'type check: undefined field');
    // One loop over an unbounded list is within the per-rule limit, but counts towards the schema's total (as in the reference).
    t.notOk(hc.some((c: string) => c.includes('x-kubernetes-validations[3].rule: Forbidden: estimated rule cost')), 'one loop over an unbounded list is within the cost limit');
    t.ok(hc.includes('spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[3].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'), 'and contributes to the total');
    t.equal((await s.request('DELETE', `${CRDS}/rules.example.com`)).status, 200);
    t.ok(await eventually(async () => (await s.get(`${CRDS}/rules.example.com`)).status === 404), 'rules definition and its instance gone');
  });

  await t.test('RBAC (with aggregated cluster roles) and deprecation warnings apply to custom resources', async (t) => {
    const alice = { 'impersonate-user': 'alice' };
    const denied = await s.get(WIDGETS, alice);
    t.equal(denied.status, 403);
    t.equal(denied.json.message, 'widgets.example.com is forbidden: User "alice" cannot list resource "widgets" in API group "example.com" in the namespace "default"');
    const rbac = '/apis/rbac.authorization.cluster.io/v1';
    t.equal((await s.request('POST', `${rbac}/clusterroles`, { body: {
      metadata: { name: 'widget-viewer', labels: { 'rbac.authorization.cluster.io/aggregate-to-view': 'true' } },
      rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] }],
    } })).status, 201);
    t.equal((await s.request('POST', '/apis/rbac.authorization.cluster.io/v1/namespaces/default/rolebindings', { body: {
      metadata: { name: 'alice-view' }, roleRef: { apiGroup: 'rbac.authorization.cluster.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.cluster.io' }],
    } })).status, 201);
    t.ok(await eventually(async () => (await s.get(WIDGETS, alice)).status === 200), 'the view role aggregated the custom resource rule');
    const create = await s.request('POST', WIDGETS, { body: widget('by-alice'), headers: alice });
    t.equal(create.status, 403, 'view does not create');

    const old = widgetCRD();
    old.metadata.name = 'olds.example.com';
    Object.assign((old.spec as any).names, { plural: 'olds', singular: 'old', kind: 'Old', shortNames: [], categories: [] });
    Object.assign((old.spec as any).versions[0], { deprecated: true, deprecationWarning: 'example.com/v1 Old is going away' });
    await establish(s, old);
    const l = await s.get('/apis/example.com/v1/namespaces/default/olds');
    t.equal(l.status, 200);
    t.equal(l.headers.warning, '299 - "example.com/v1 Old is going away"');
    t.equal((await s.request('DELETE', `${CRDS}/olds.example.com`)).status, 200);
    t.ok(await eventually(async () => (await s.get(`${CRDS}/olds.example.com`)).status === 404));
  });

  await t.test('served again after a restart', async (t) => {
    await s.restart();
    const g = await s.get(`${WIDGETS}/w1`);
    t.equal(g.status, 200, 'served after restart');
    t.equal(g.json.spec.replicas, 7);
    const rv = g.json.metadata.resourceVersion;
    t.equal((await s.request('POST', WIDGETS, { body: widget('after-restart') })).status, 201);
    const l = await s.get(`${WIDGETS}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    t.equal(l.status, 200, 'exact list');
    t.notOk(l.json.items.some((i: any) => i.metadata.name === 'after-restart'), 'exact read of an older revision after a restart');
  });

  await t.test('deleting the definition removes its instances, then stops serving', async (t) => {
    const events: any[] = [];
    const w = s.stream(`${WIDGETS}?watch=1`, (e) => events.push(e));
    await sleep(100);
    const d = await s.request('DELETE', `${CRDS}/widgets.example.com`);
    t.equal(d.status, 200, 'delete accepted');
    t.ok(await eventually(async () => (await s.get(`${CRDS}/widgets.example.com`)).status === 404), 'definition gone');
    t.equal((await s.get(WIDGETS)).status, 404, 'no longer served');
    t.ok(events.some((e) => e.type === 'DELETED' && e.object.metadata.name === 'w1'), 'instances deleted first');
    t.ok(!(await s.get('/apis')).json.groups.some((g: any) => g.name === 'example.com'), 'group gone from discovery');
    await w.done;
    // The same names can be defined again.
    await establish(s, widgetCRD());
    t.equal((await s.get(WIDGETS)).json.items.length, 0);
  });
});
