// A custom resource's OpenAPI definitions as the reference publishes them: the schema as written
// (patterns, bounds, formats kept; no list type added), type meta and metadata with their
// descriptions, int-or-string unfolded in v3; v2 without defaults and junctors, as its conversion.
import t from 'tap';
import { withServer } from '../lib/server.js';
import { establish } from '../lib/crd.js';

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'foos.example.com' },
  spec: {
    group: 'example.com', scope: 'Namespaced', names: { plural: 'foos', singular: 'foo', kind: 'Foo' },
    versions: [{
      name: 'v1', served: true, storage: true,
      schema: { openAPIV3Schema: {
        type: 'object', description: 'A foo.',
        properties: { spec: { type: 'object', required: ['name'], properties: {
          name: { type: 'string', pattern: '^[a-z]+$', maxLength: 10 },
          tags: { type: 'array', items: { type: 'string' } },
          size: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
          free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          count: { type: 'integer', minimum: 1, default: 3 },
        } } },
      } },
    }],
  },
};
const META = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

t.test('custom resource definitions in /openapi/v2 and /openapi/v3 as the reference publishes them', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  await establish(s, CRD);
  const v2 = (await s.get('/openapi/v2')).json.definitions;
  const foo = v2['com.example.v1.Foo'];
  t.equal(foo.description, 'A foo.');
  t.same(foo.properties.metadata, { description: META, $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' });
  t.match(foo.properties.apiVersion.description, /^APIVersion defines the versioned schema/);
  const spec = foo.properties.spec.properties;
  t.same(spec.name, { type: 'string', pattern: '^[a-z]+$', maxLength: 10 }, 'pattern and bounds kept');
  t.same(spec.tags, { type: 'array', items: { type: 'string' } }, 'no list type added');
  t.same(spec.size, { 'x-kubernetes-int-or-string': true }, 'v2: no anyOf');
  t.same(spec.free, { 'x-kubernetes-preserve-unknown-fields': true }, 'v2: an unknown-preserving object has no type');
  t.same(spec.count, { type: 'integer', minimum: 1 }, 'v2: no default');
  t.equal(v2['com.example.v1.FooList'].description, 'FooList is a list of Foo');
  const paths = (await s.get('/openapi/v3')).json.paths;
  const v3 = (await s.get(paths['apis/example.com/v1'].serverRelativeURL)).json.components.schemas;
  const spec3 = v3['com.example.v1.Foo'].properties.spec.properties;
  t.same(spec3.size, { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] });
  t.same(spec3.count, { type: 'integer', minimum: 1, default: 3 });
  t.same(v3['com.example.v1.Foo'].properties.metadata, { description: META, allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }] });
  t.same(v3['com.example.v1.Foo']['x-kubernetes-group-version-kind'], [{ group: 'example.com', kind: 'Foo', version: 'v1' }]);

  // an update of the definition is published; a deletion removes it
  const crd = (await s.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/foos.example.com')).json;
  crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.extra = { type: 'boolean', description: 'added' };
  t.equal((await s.request('PUT', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/foos.example.com', { body: crd })).status, 200);
  const updated = async () => (await s.get('/openapi/v2')).json.definitions['com.example.v1.Foo']?.properties?.spec?.properties?.extra;
  for (let i = 0; i < 100 && !(await updated()); i++) await new Promise((r) => setTimeout(r, 100));
  t.same(await updated(), { type: 'boolean', description: 'added' }, 'updated');
  t.equal((await s.request('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/foos.example.com')).status, 200);
  const gone = async () => !(await s.get('/openapi/v2')).json.definitions['com.example.v1.Foo'];
  for (let i = 0; i < 100 && !(await gone()); i++) await new Promise((r) => setTimeout(r, 100));
  t.ok(await gone(), 'removed with the definition');
});

t.test('a new definition changes its own v3 document only; DeleteOptions lists the built-in group-versions', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const before = (await s.get('/openapi/v3')).json.paths;
  await establish(s, CRD);
  const after = (await s.get('/openapi/v3')).json.paths;
  t.ok(after['apis/example.com/v1'], 'the new group-version is listed');
  const changed = Object.keys(before).filter((gv) => before[gv].serverRelativeURL !== after[gv]?.serverRelativeURL);
  t.same(changed, [], 'every other document keeps its hash');
  // As the reference (whose list comes from its built-in scheme): custom resources' group-versions
  // are not in DeleteOptions' group-version-kinds, in their own document or any other.
  for (const gv of ['api/v1', 'apis/example.com/v1']) {
    const schemas = (await s.get(after[gv].serverRelativeURL)).json.components.schemas;
    const listed = schemas['io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions']['x-kubernetes-group-version-kind'].map((g: any) => `${g.group}/${g.version}`);
    t.ok(listed.includes('apps/v1') && listed.includes('/v1'), `${gv}: built-in group-versions listed`);
    t.notOk(listed.includes('example.com/v1'), `${gv}: the custom group-version is not`);
  }
});
