import t from 'tap';
import { getBrand } from '../../kernel/contracts/brand.js';
import type { KObject, Schema, TypeDef } from '../../kernel/contracts/index.js';
import { checkFields, compileValidator, findDuplicateFields, strictDecodingMessage, strictErrors, unknownFields } from '../../kernel/api/fieldvalidation.js';
import { builtinTypes } from '../../plugins/types/builtin/index.js';

const kube = getBrand('kubernetes');
const types = builtinTypes(kube);
const type = (group: string, resource: string): TypeDef => types.find((x) => x.group === group && x.resource === resource)!;
const pods = type('', 'pods');
const deployments = type('apps', 'deployments');

// A small hand-written schema: a struct with a nested struct, a list of structs, a map of structs,
// a free-form field, and a preserve-unknown object.
const defs: Record<string, Schema> = {
  Item: { type: 'object', fields: { name: { type: 'string' }, size: { type: 'integer' } } },
};
const widget: Schema = {
  type: 'object',
  fields: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    spec: {
      type: 'object',
      fields: {
        inner: { type: 'object', fields: { a: { type: 'string' } } },
        items: { type: 'array', items: { type: 'ref', ref: 'Item' } },
        byName: { type: 'object', additional: { type: 'ref', ref: 'Item' } },
        labels: { type: 'object', additional: { type: 'string' } },
        raw: { type: 'any' },
        open: { type: 'object', fields: { known: { type: 'string' } }, preserveUnknown: true },
        blob: { type: 'object' },
        port: { type: 'int-or-string' },
      },
    },
  },
};

t.test('unknown fields: nested structs, lists, maps', async (t) => {
  const obj = {
    apiVersion: 'v1', kind: 'Widget', extra: 1,
    spec: {
      inner: { a: 'x', b: 'y' },
      items: [{ name: 'one' }, { name: 'two', colour: 'red' }],
      byName: { first: { name: 'f', bogus: true }, second: { size: 2 } },
      labels: { anything: 'goes' },
      raw: { whatever: { deep: [1, 2] } },
      open: { known: 'k', unknownButKept: 1 },
      blob: { any: 'key' },
      port: 'http',
      typo: 1,
    },
  };
  t.same(checkFields(obj, widget, defs).unknown, ['extra', 'spec.inner.b', 'spec.items[1].colour', 'spec.byName.first.bogus', 'spec.typo'], 'document order');
  t.same(checkFields({ spec: { items: 'not a list', inner: null } }, widget, defs).unknown, [], 'wrong types are left to the type check');
  t.same(checkFields({ spec: { items: [{ name: 'a', z: { b: 1 } }] } }, { type: 'ref', ref: 'Missing' }, defs).unknown, [], 'dangling ref reads as anything');
});

t.test('unknown fields of built-in types, metadata included', async (t) => {
  const pod = {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'p', labels: { a: 'b' }, annotations: { x: 'y' }, nmae: 'typo', managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': { 'f:x': {} } } }] },
    spec: {
      containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80, hostPortt: 1 }], resources: { limits: { cpu: '1' } } }],
      nodeSelector: { disk: 'ssd' },
      foo: 'bar',
    },
    status: {},
  };
  t.same(unknownFields(pods, pod), ['metadata.nmae', 'spec.containers[0].ports[0].hostPortt', 'spec.foo']);
  const dep = {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
    spec: { replicas: 1, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailabel: 1 } }, template: { spec: { containers: [{ name: 'c', imagee: 'x' }] } } },
  };
  t.same(unknownFields(deployments, dep), ['spec.strategy.rollingUpdate.maxUnavailabel', 'spec.template.spec.containers[0].imagee']);
  t.same(unknownFields({ ...pods, schema: undefined }, pod), [], 'unstructured types have no unknown fields');
  t.same(strictErrors(['spec.foo'], ['metadata.name']), ['unknown field "spec.foo"', 'duplicate field "metadata.name"']);
  t.equal(strictDecodingMessage('Pod', 'v1', strictErrors(['spec.foo', 'spec.bar'])),
    'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.foo", unknown field "spec.bar"');
});

t.test('duplicate fields', async (t) => {
  t.same(findDuplicateFields('{"metadata":{"name":"a","name":"b"}}'), ['metadata.name']);
  t.same(findDuplicateFields('{"kind":"Pod","kind":"Pod"}'), ['kind']);
  t.same(findDuplicateFields('{"spec":{"containers":[{"name":"a"},{"name":"b","image":"x","image":"y"}]}}'), ['spec.containers[1].image']);
  t.same(findDuplicateFields('{"metadata":{"labels":{"x":"1","x":"2"}}}'), ['metadata.labels.x'], 'map keys');
  t.same(findDuplicateFields('{"a":{"b":1},"c":{"b":1}}'), [], 'same key in sibling objects is fine');
  t.same(findDuplicateFields('{"na\\u006de":"a","name":"b"}'), ['name'], 'escaped keys compare decoded');
  t.same(findDuplicateFields('{"a":"x\\"y","a":"}"}'), ['a'], 'escapes and braces in strings');
  t.same(findDuplicateFields(' { "a" : [ 1 , { "b" : true , "b" : null } ] , "a" : [] } '), ['a[1].b', 'a'], 'whitespace, order of discovery');
  t.same(findDuplicateFields('{"a":1,"a":2,"a":3}'), ['a'], 'reported once');
  t.same(findDuplicateFields('{"a":{},"b":[],"a":[[],[{"c":1,"c":2}]]}'), ['a', 'a[1][0].c']);
  t.same(findDuplicateFields('{"a":1,"a":'), ['a'], 'malformed input stops quietly');
  t.same(findDuplicateFields('not json'), []);
  t.same(findDuplicateFields(''), []);
  const many = '{' + Array.from({ length: 300 }, (_, i) => `"k${i}":{"x":1,"x":2}`).join(',') + '}';
  t.equal(findDuplicateFields(many).length, 100, 'at most 100');
  const deep = '['.repeat(100_000) + ']'.repeat(100_000);
  t.same(findDuplicateFields(deep), [], 'deep nesting does not overflow the stack');
});

t.test('type check: wording, int-or-string, quantities, null', async (t) => {
  const v = compileValidator(deployments);
  t.equal(compileValidator(deployments), v, 'compiled once per type');
  const another = builtinTypes(kube).find((x) => x.group === 'apps' && x.resource === 'deployments')!;
  t.not(another, deployments);
  t.equal(compileValidator(another), v, 'and once per process: another server\'s TypeDef of the same built-in definition shares it');
  const otherDefs = { ...defs, Widget: widget };
  const w1 = compileValidator({ group: 'x', version: 'v1', kind: 'W', resource: 'ws', singular: 'w', namespaced: true, schema: { type: 'ref', ref: 'Widget' }, definitions: otherDefs });
  const w2 = compileValidator({ group: 'x', version: 'v1', kind: 'W', resource: 'ws', singular: 'w', namespaced: true, schema: { type: 'ref', ref: 'Widget' }, definitions: otherDefs });
  t.not(w1, w2, 'definitions that are not frozen (may change) are not shared by name');
  const base = (spec: Record<string, unknown>): KObject => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } }, ...spec },
  });
  t.same(v(base({ replicas: 3 })), []);
  t.same(v(base({ replicas: 'string' })), [{
    reason: 'FieldValueTypeInvalid', field: 'spec.replicas',
    message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
  }]);
  t.same(v(base({ replicas: 1.5 })).map((c) => c.message), ['Invalid value: "number": spec.replicas in body must be of type integer: "number"']);
  t.same(v(base({ replicas: null })), [], 'null is the zero value');
  t.same(v(base({ strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } } })), [], 'int-or-string takes both');
  t.same(v(base({ strategy: { rollingUpdate: { maxSurge: true } } })).map((c) => c.field), ['spec.strategy.rollingUpdate.maxSurge']);
  t.same(v(base({ selector: 'app=x' })).map((c) => c.message), ['Invalid value: "string": spec.selector in body must be of type object: "string"']);

  const pv = compileValidator(pods);
  const pod = (containers: unknown, more: Record<string, unknown> = {}): KObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers, ...more } });
  t.same(pv(pod([{ name: 'c', resources: { limits: { cpu: 0.5, memory: '1Gi' } } }])), [], 'quantities take numbers and strings');
  t.same(pv(pod({ name: 'c' })).map((c) => c.message), ['Invalid value: "object": spec.containers in body must be of type array: "object"']);
  t.same(pv(pod([{ name: 'c', ports: [{ containerPort: '80' }] }])).map((c) => c.field), ['spec.containers[0].ports[0].containerPort']);
  t.same(pv(pod([{ name: 5, tty: 'yes' }])).map((c) => c.field), ['spec.containers[0].name', 'spec.containers[0].tty']);
  t.same(pv({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { a: 1 } } } as unknown as KObject), [{
    reason: 'FieldValueTypeInvalid', field: 'metadata.labels.a', message: 'Invalid value: "integer": metadata.labels.a in body must be of type string: "integer"',
  }]);
  t.same(pv({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', creationTimestamp: 'yesterday' } }).map((c) => c.message),
    ['Invalid value: "yesterday": metadata.creationTimestamp in body must be of type date-time: "yesterday"']);
  t.same(pv({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', creationTimestamp: '2024-01-02T03:04:05Z' } }), []);
  t.same(pv({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', managedFields: [{ fieldsV1: { 'f:x': {} } }] } }), [], 'free-form objects');

  const sv = compileValidator(type('', 'secrets'));
  t.same(sv({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: 'aGVsbG8=' } }), []);
  t.same(sv({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: 'not base64!' } }).map((c) => c.field), ['data.k']);

  const open = compileValidator({ group: 'x', version: 'v1', kind: 'X', resource: 'xs', singular: 'x', namespaced: true });
  t.same(open({ anything: { goes: 1 } }), [], 'unstructured types pass');
  const custom = compileValidator({ group: 'x', version: 'v1', kind: 'W', resource: 'ws', singular: 'w', namespaced: true, schema: widget, definitions: defs });
  t.same(custom({ spec: { byName: { a: { size: 'big' } }, port: 8080 } }).map((c) => c.field), ['spec.byName.a.size']);
  t.same(custom({ spec: { items: [{ size: 1 }, { size: [] }] } }).map((c) => c.message), ['Invalid value: "array": spec.items[1].size in body must be of type integer: "array"']);
});
