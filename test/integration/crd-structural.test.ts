// Structural-schema rules that real operators' definitions rely on, each with a minimal definition:
// the int-or-string form controller-gen emits, `metadata` inside a pod template, and RE2 patterns
// (both when the definition is validated and when an instance's value is matched).
import t, { type Test } from 'tap';
import { withServer, type TestServer } from '../lib/server.js';
import { establish } from '../lib/crd.js';

const CRDS = '/apis/apiextensions.cluster.io/v1/customresourcedefinitions';

let n = 0;
/** A one-version definition of kind Thing<n> whose spec has the given properties. */
function crd(spec: Record<string, unknown>, root: Record<string, unknown> = {}) {
  const i = n++;
  return {
    apiVersion: 'apiextensions.cluster.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `things${i}.example.com` },
    spec: { group: 'example.com', scope: 'Namespaced', names: { plural: `things${i}`, singular: `thing${i}`, kind: `Thing${i}` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: spec } }, ...root } } }] },
  };
}

const causesOf = (r: { json: any }) => (r.json?.details?.causes ?? []).map((c: any) => `${c.field}: ${c.message}`) as string[];
// One version, or several sharing one schema: the reference reports under its top-level spec.validation.
const at = 'spec.validation.openAPIV3Schema';

async function refused(t: Test, s: TestServer, def: any, expected: string[]) {
  const r = await s.request('POST', CRDS, { body: def });
  t.equal(r.status, 422, r.text);
  t.same(causesOf(r), expected);
}

async function instance(s: TestServer, def: any, spec: unknown) {
  const { plural, kind } = def.spec.names;
  return s.request('POST', `/apis/example.com/v1/namespaces/default/${plural}`, { body: { apiVersion: 'example.com/v1', kind, metadata: { name: `x${n++}` }, spec } });
}

t.test('structural schemas of real-world definitions', async (t) => {
  const s = await withServer(t);

  await t.test('int-or-string: the anyOf [integer, string] form is structural', async (t) => {
    const quantity = { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }], pattern: '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$' };
    const port = { 'x-kubernetes-int-or-string': true, allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, { maxLength: 15 }] };
    const def = crd({ memory: quantity, port, limits: { type: 'object', additionalProperties: quantity } });
    await establish(s, def);
    t.equal((await instance(s, def, { memory: '512Mi', port: 8080, limits: { cpu: 2, memory: '1Gi' } })).status, 201);
    t.equal((await instance(s, def, { port: 'http' })).status, 201);
    const bad = await instance(s, def, { memory: 'lots' });
    t.equal(bad.status, 422, bad.text);
    t.match(causesOf(bad)[0], /^spec\.memory: Invalid value: "lots": spec\.memory in body should match '/);
    // Outside the exact pair (a third branch, or a description in a branch) the types stay forbidden.
    await refused(t, s, crd({ q: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string', description: 'x' }] } }), [
      `${at}.properties[spec].properties[q].anyOf[0].type: Forbidden: must be empty to be structural`,
      `${at}.properties[spec].properties[q].anyOf[1].description: Forbidden: must be empty to be structural`,
      `${at}.properties[spec].properties[q].anyOf[1].type: Forbidden: must be empty to be structural`,
    ]);
  });

  await t.test('metadata: allowed in nested objects, forbidden in value rules, narrowed at the root', async (t) => {
    const template = { type: 'object', properties: {
      metadata: { type: 'object', properties: { labels: { type: 'object', additionalProperties: { type: 'string' } }, annotations: { type: 'object', additionalProperties: { type: 'string' } } } },
      spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    } };
    const def = crd({ template }, { properties: { metadata: { type: 'object' }, spec: { type: 'object', properties: { template } } } });
    await establish(s, def);
    const r = await instance(s, def, { template: { metadata: { labels: { app: 'web' } }, spec: { containers: [] } } });
    t.equal(r.status, 201, r.text);
    t.same(r.json.spec.template.metadata, { labels: { app: 'web' } });

    await refused(t, s, crd({ a: { type: 'object', properties: { metadata: { type: 'object' } }, anyOf: [{ properties: { metadata: { required: ['name'] } } }] } }), [
      `${at}.properties[spec].properties[a].anyOf[0].properties[metadata]: Forbidden: must not be specified in a nested context`,
    ]);
    await refused(t, s, crd({}, { properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } }), [
      `${at}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
    ]);
    // name and generateName may be narrowed.
    await establish(s, crd({}, { properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 20 } } } } }));
  });

  await t.test('additionalProperties: any at the root, false or a schema beside properties', async (t) => {
    await refused(t, s, crd({}, { additionalProperties: false }), [
      `${at}.additionalProperties: Forbidden: must not be used at the root`,
      `${at}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
    ]);
    await refused(t, s, crd({ a: { type: 'object', additionalProperties: false, properties: { x: { type: 'string' } } } }), [
      `${at}.properties[spec].properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
    ]);
    // true beside properties, and false alone, are allowed.
    await establish(s, crd({ a: { type: 'object', additionalProperties: true, properties: { x: { type: 'string' } } }, b: { type: 'object', additionalProperties: false } }));
  });

  await t.test('error paths: a schema all versions share is reported once under spec.validation', async (t) => {
    const bad = { p: { type: 'object', additionalProperties: false, properties: { x: { type: 'string' } } } };
    const two = (a: unknown, b: unknown) => {
      const def = crd({});
      const [v1] = def.spec.versions as any[];
      v1.schema.openAPIV3Schema.properties.spec.properties = a;
      def.spec.versions = [v1, { ...structuredClone(v1), name: 'v2', storage: false }] as any;
      (def.spec.versions[1] as any).schema.openAPIV3Schema.properties.spec.properties = b;
      return def;
    };
    const msg = 'properties[spec].properties[p].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive';
    await refused(t, s, two(bad, bad), [`spec.validation.openAPIV3Schema.${msg}`]);
    await refused(t, s, two(bad, { ...bad, q: { type: 'string' } }), [`spec.versions[0].schema.openAPIV3Schema.${msg}`, `spec.versions[1].schema.openAPIV3Schema.${msg}`]);
  });

  await t.test('printer columns: a backslash escapes a dot in a field name (annotation keys)', async (t) => {
    const def = crd({});
    (def.spec.versions[0] as any).additionalPrinterColumns = [{ name: 'Class', type: 'string', jsonPath: '.metadata.annotations.eventing\\.example\\.com/class' }];
    await establish(s, def);
    const { plural, kind } = def.spec.names;
    const base = `/apis/example.com/v1/namespaces/default/${plural}`;
    t.equal((await s.request('POST', base, { body: { apiVersion: 'example.com/v1', kind, metadata: { name: 'c1', annotations: { 'eventing.example.com/class': 'mt' } } } })).status, 201);
    const table = await s.get(base, { accept: 'application/json;as=Table;v=v1;g=meta.cluster.io' });
    t.equal(table.status, 200, table.text);
    t.same(table.json.rows.map((r: any) => r.cells), [['c1', 'mt']]);
  });

  await t.test('patterns are RE2: (?i) works, what Go refuses is refused', async (t) => {
    const def = crd({ region: { type: 'string', pattern: '(?i)^(eu|us)-[a-z]+$' }, word: { type: 'string', pattern: '\\pL+' } });
    await establish(s, def);
    t.equal((await instance(s, def, { region: 'EU-west', word: 'héllo' })).status, 201);
    const bad = await instance(s, def, { region: 'ap-south' });
    t.equal(bad.status, 422, bad.text);
    t.same(causesOf(bad), ["spec.region: Invalid value: \"ap-south\": spec.region in body should match '(?i)^(eu|us)-[a-z]+$'"]);

    const invalid = (pattern: string, why: string) => `${at}.properties[spec].properties[p].pattern: Invalid value: ${JSON.stringify(pattern)}: must be a valid regular expression, but isn't: error parsing regexp: ${why}`;
    await refused(t, s, crd({ p: { type: 'string', pattern: '^(?=a)b' } }), [invalid('^(?=a)b', 'invalid or unsupported Perl syntax: `(?=`')]);
    await refused(t, s, crd({ p: { type: 'string', pattern: '(a)\\1' } }), [invalid('(a)\\1', 'invalid escape sequence: `\\1`')]);
    await refused(t, s, crd({ p: { type: 'string', pattern: '(?<n>a)' } }), [invalid('(?<n>a)', 'invalid or unsupported Perl syntax: `(?<`')]);
    await refused(t, s, crd({ p: { type: 'string', pattern: 'a{1001}' } }), [invalid('a{1001}', 'invalid repeat count: `{1001}`')]);
    // Inside a value rule too.
    const r = await s.request('POST', CRDS, { body: crd({ p: { type: 'string', anyOf: [{ pattern: 'a++' }] } }) });
    t.equal(r.status, 422);
    t.same(causesOf(r), [`${at}.properties[spec].properties[p].anyOf[0].pattern: Invalid value: "a++": must be a valid regular expression, but isn't: error parsing regexp: invalid nested repetition operator: \`++\``]);
  });
});
