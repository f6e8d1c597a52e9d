import t from 'tap';
import type { Schema } from '../../kernel/contracts/index.js';
import {
  difference, ensureNamedFieldsAreMembers, fieldsOf, fromFieldsV1, has, intersection, isEmpty, leaves, newSet, paths,
  pathToString, reconcileWithSchema, recursiveDifference, setOf, size, toFieldsV1, union, keyPE, canonicalPE,
} from '../../workers/merge/fieldset.js';
import { listType } from '../../workers/merge/schema.js';

// A Deployment-like schema exercising every marker.
const defs: Record<string, Schema> = {
  Meta: {
    type: 'object',
    fields: {
      name: { type: 'string' },
      labels: { type: 'object', additional: { type: 'string' } },
      finalizers: { type: 'array', items: { type: 'string' }, patchStrategy: 'merge' },
    },
  },
  Container: {
    type: 'object',
    fields: {
      name: { type: 'string' },
      image: { type: 'string' },
      args: { type: 'array', items: { type: 'string' } },
      ports: { type: 'array', items: { type: 'ref', ref: 'Port' }, listType: 'map', mapKeys: ['containerPort', 'protocol'] },
    },
  },
  Port: { type: 'object', fields: { containerPort: { type: 'integer' }, protocol: { type: 'string' }, name: { type: 'string' } } },
};
const schema: Schema = {
  type: 'object',
  fields: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'ref', ref: 'Meta' },
    spec: {
      type: 'object',
      fields: {
        replicas: { type: 'integer' },
        selector: { type: 'object', fields: { matchLabels: { type: 'object', additional: { type: 'string' } } }, mapType: 'atomic' },
        tolerations: { type: 'array', items: { type: 'object', fields: { key: { type: 'string' } } } },
        containers: { type: 'array', items: { type: 'ref', ref: 'Container' }, patchStrategy: 'merge', patchMergeKey: 'name' },
        config: { type: 'object', fields: { a: { type: 'string' }, b: { type: 'string' } } },
        data: { type: 'object', additional: { type: 'string' } },
      },
    },
  },
};

const REFERENCE = '{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},"f:name":{}}}}}';

t.test('FieldsV1 decode/encode round-trips the reference format byte for byte', async (t) => {
  const set = fromFieldsV1(JSON.parse(REFERENCE));
  t.equal(JSON.stringify(toFieldsV1(set)), REFERENCE);
  t.ok(has(set, ['f:metadata', 'f:labels']), '"." makes labels a member');
  t.ok(has(set, ['f:metadata', 'f:labels', 'f:app']));
  t.notOk(has(set, ['f:metadata']), 'metadata is only a parent');
  t.ok(has(set, ['f:spec', 'f:containers', 'k:{"name":"nginx"}']));
  t.equal(size(set), 5);
});

t.test('FieldsV1 encoding sorts: "." first, fields, then keys, then values; key fields sorted', async (t) => {
  const set = fromFieldsV1({
    'v:"b"': {},
    'k:{"protocol":"TCP","containerPort":80}': { 'f:name': {}, '.': {} },
    'f:z': {},
    'v:"a"': {},
    'f:a': { 'f:y': {}, 'f:x': {} },
    'k:{"containerPort":8,"protocol":"TCP"}': {},
  });
  t.equal(
    JSON.stringify(toFieldsV1(set)),
    '{"f:a":{"f:x":{},"f:y":{}},"f:z":{},"k:{\\"containerPort\\":8,\\"protocol\\":\\"TCP\\"}":{},' +
      '"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:name":{}},"v:\\"a\\"":{},"v:\\"b\\"":{}}',
  );
  t.equal(canonicalPE('k:{ "b": 1, "a": "x" }'), 'k:{"a":"x","b":1}');
  t.equal(keyPE({ name: 'x', containerPort: 80 }, ['containerPort', 'protocol'], defs.Port, defs), 'k:{"containerPort":80,"protocol":"TCP"}', 'protocol defaults to TCP');
  t.throws(() => fromFieldsV1({ 'x:y': {} }), /unknown path element type/);
  t.throws(() => fromFieldsV1({ 'f:a': 1 }));
});

t.test('set operations', async (t) => {
  const a = setOf(['f:a'], ['f:b', 'f:c'], ['f:b', 'f:d'], ['f:e']);
  const b = setOf(['f:b', 'f:c'], ['f:e'], ['f:x']);
  t.same(paths(union(a, b)).map(pathToString), ['.a', '.e', '.x', '.b.c', '.b.d']);
  t.same(paths(difference(a, b)).map(pathToString), ['.a', '.b.d']);
  t.same(paths(intersection(a, b)).map(pathToString), ['.e', '.b.c']);
  t.ok(isEmpty(difference(a, a)));
  t.ok(isEmpty(newSet()));
  // Difference is exact; recursive difference also drops paths below a member.
  const parent = setOf(['f:b']);
  t.same(paths(difference(a, parent)).map(pathToString), ['.a', '.e', '.b.c', '.b.d']);
  t.same(paths(recursiveDifference(a, parent)).map(pathToString), ['.a', '.e']);
  // Leaves: members without children.
  const withParent = setOf(['f:b'], ['f:b', 'f:c'], ['f:a']);
  t.same(paths(leaves(withParent)).map(pathToString), ['.a', '.b.c']);
});

t.test('pathToString uses the reference conflict format', async (t) => {
  t.equal(pathToString(['f:spec', 'f:replicas']), '.spec.replicas');
  t.equal(pathToString(['f:spec', 'f:containers', 'k:{"name":"nginx"}', 'f:image']), '.spec.containers[name="nginx"].image');
  t.equal(pathToString(['f:metadata', 'f:labels', 'f:app']), '.metadata.labels.app');
  t.equal(pathToString(['f:ports', 'k:{"containerPort":80,"protocol":"TCP"}']), '.ports[containerPort=80,protocol="TCP"]');
  t.equal(pathToString(['f:metadata', 'f:finalizers', 'v:"a/b"']), '.metadata.finalizers[="a/b"]');
  t.equal(pathToString(['f:x', 'i:3']), '.x[3]');
});

t.test('fieldsOf follows the markers', async (t) => {
  const obj = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', labels: { app: 'web' }, finalizers: ['a', 'b'] },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      tolerations: [{ key: 'x' }],
      containers: [{ name: 'nginx', image: 'nginx', args: ['-v'], ports: [{ containerPort: 80, protocol: 'TCP' }] }],
      config: {},
      data: { k: 'v' },
    },
  };
  const got = JSON.stringify(toFieldsV1(fieldsOf(obj, schema, defs)));
  t.equal(got, JSON.stringify({
    'f:apiVersion': {},
    'f:kind': {},
    'f:metadata': {
      'f:finalizers': { 'v:"a"': {}, 'v:"b"': {} }, // set: one element per value
      'f:labels': { 'f:app': {} }, // declared field with content: not itself a member; map entries are
      'f:name': {},
    },
    'f:spec': {
      'f:config': {}, // an empty struct is a member
      'f:containers': {
        'k:{"name":"nginx"}': {
          '.': {},
          'f:args': {}, // atomic list: one leaf
          'f:image': {},
          'f:name': {},
          'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} } },
        },
      },
      'f:data': { 'f:k': {} },
      'f:replicas': {},
      'f:selector': {}, // atomic struct: one leaf
      'f:tolerations': {}, // no markers: atomic
    },
  }));
  // Nulls are members; an empty granular list sets nothing.
  const s2 = fieldsOf({ spec: { replicas: null, containers: [] } }, schema, defs);
  t.same(paths(s2).map(pathToString), ['.spec.replicas']);
});

t.test('fieldsOf without a schema: every key a field (a member), every list atomic', async (t) => {
  const s = fieldsOf({ spec: { a: { b: 1 }, list: [{ x: 1 }] } });
  t.equal(JSON.stringify(toFieldsV1(s)), '{"f:spec":{".":{},"f:a":{".":{},"f:b":{}},"f:list":{}}}');
});

t.test('fieldsOf reports invalid lists when asked', async (t) => {
  const errors: string[] = [];
  fieldsOf({ spec: { containers: [{ name: 'a' }, { name: 'a' }, { image: 'x' }] } }, schema, defs, errors);
  t.same(errors, [
    '.spec.containers: duplicate entries for key [name="a"]',
    '.spec.containers: element 2: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
  ]);
});

t.test('effective list type', async (t) => {
  t.same(listType({ type: 'array', items: { type: 'string' } }, undefined), { type: 'atomic' });
  t.same(listType({ type: 'array', items: { type: 'string' }, patchStrategy: 'merge' }, undefined), { type: 'set' });
  t.same(listType({ type: 'array', items: { type: 'any' }, patchStrategy: 'merge', patchMergeKey: 'name' }, undefined), { type: 'map', keys: ['name'] });
  t.same(listType({ type: 'array', items: { type: 'any' }, listType: 'atomic', patchStrategy: 'merge', patchMergeKey: 'name' }, undefined), { type: 'atomic' }, 'explicit listType wins');
  t.same(listType({ type: 'array', items: { type: 'any' }, listType: 'map', mapKeys: ['a', 'b'] }, undefined), { type: 'map', keys: ['a', 'b'] });
  t.same(listType(undefined, undefined), { type: 'atomic' });
});

t.test('ensureNamedFieldsAreMembers and reconcileWithSchema', async (t) => {
  const s = fromFieldsV1({ 'f:spec': { 'f:config': { 'f:a': {} }, 'f:data': { 'f:k': {} } } });
  const e = ensureNamedFieldsAreMembers(s, schema, defs);
  t.ok(has(e, ['f:spec']) && has(e, ['f:spec', 'f:config']) && has(e, ['f:spec', 'f:data']));
  t.notOk(has(e, ['f:spec', 'f:data', 'f:x']));
  // Granular ownership recorded under what is now an atomic struct collapses to the struct.
  const old = fromFieldsV1({ 'f:spec': { 'f:selector': { 'f:matchLabels': { 'f:app': {} } }, 'f:replicas': {} } });
  t.equal(JSON.stringify(toFieldsV1(reconcileWithSchema(old, schema, defs))), '{"f:spec":{"f:replicas":{},"f:selector":{}}}');
  const same = fromFieldsV1({ 'f:spec': { 'f:replicas': {} } });
  t.equal(reconcileWithSchema(same, schema, defs), same, 'unchanged sets are returned as they are');
});
