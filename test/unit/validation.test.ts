import t from 'tap';
import type { FieldCause, ObjectMeta } from '../../kernel/contracts/index.js';
import {
  isDNS1123Subdomain, isDNS1123Label, isDNS1035Label, isPathSegmentName, isQualifiedName, isValidLabelValue,
  validateObjectMeta, validateObjectMetaUpdate, validateQualifiedName, validateLabelValue, validateLabelSelector,
  validateNameByRule, goQuote, fieldError, type ObjectMetaOptions,
} from '../../kernel/api/validation.js';

const SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const QNAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MSG = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const ns: ObjectMetaOptions = { namespaced: true, nameRule: 'subdomain', isCreate: true };
const cluster: ObjectMetaOptions = { namespaced: false, nameRule: 'subdomain', isCreate: true };
const inv = (field: string, value: string, detail: string): FieldCause => ({ reason: 'FieldValueInvalid', field, message: `Invalid value: "${value}": ${detail}` });

t.test('DNS-1123 subdomain', async (t) => {
  for (const good of ['a', 'abc', 'a-b.c-d', '0.1', 'example.com', 'a'.repeat(253), `${'a'.repeat(63)}.${'b'.repeat(63)}`]) t.same(isDNS1123Subdomain(good), [], good);
  for (const bad of ['', 'Foo', 'foo_', '-a', 'a-', '.a', 'a..b', 'a.-b', 'a b', 'ä']) t.same(isDNS1123Subdomain(bad), [SUBDOMAIN_MSG], bad);
  t.same(isDNS1123Subdomain('a'.repeat(254)), ['must be no more than 253 characters']);
  t.same(isDNS1123Subdomain('A'.repeat(254)), ['must be no more than 253 characters', SUBDOMAIN_MSG]);
});

t.test('DNS-1123 label', async (t) => {
  for (const good of ['a', '0', 'a-0', '123-abc', 'a'.repeat(63)]) t.same(isDNS1123Label(good), [], good);
  for (const bad of ['', 'A', 'a_b', '-a', 'a-']) t.same(isDNS1123Label(bad), [LABEL_MSG], bad);
  t.same(isDNS1123Label('a.b'), ['must not contain dots']);
  t.same(isDNS1123Label('a'.repeat(64)), ['must be no more than 63 characters']);
});

t.test('DNS-1035 label', async (t) => {
  for (const good of ['a', 'abc-123', 'a'.repeat(63)]) t.same(isDNS1035Label(good), [], good);
  for (const bad of ['', '1a', 'a.b', 'a-', 'A']) t.same(isDNS1035Label(bad), [DNS1035_MSG], bad);
  t.same(isDNS1035Label('a'.repeat(64)), ['must be no more than 63 characters']);
});

t.test('path segment names', async (t) => {
  for (const good of ['Anything:Goes_Here', 'system:admin', '...', 'a.b']) t.same(isPathSegmentName(good), [], good);
  t.same(isPathSegmentName('.'), ["may not be '.'"]);
  t.same(isPathSegmentName('..'), ["may not be '..'"]);
  t.same(isPathSegmentName('a/b%c'), ["may not contain '/'", "may not contain '%'"]);
  t.same(validateNameByRule('path-segment', '.', true), [], 'a prefix may be "."');
  t.same(validateNameByRule('path-segment', 'a/', true), ["may not contain '/'"]);
});

t.test('qualified names and label values at their limits', async (t) => {
  const p253 = `${'a'.repeat(61)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}`;
  t.equal(p253.length, 253);
  for (const good of ['a', 'A', 'a.b_c-D', 'x'.repeat(63), `example.com/${'x'.repeat(63)}`, `${p253}/n`]) t.same(isQualifiedName(good), [], good);
  t.same(isQualifiedName('x'.repeat(64)), ['name part must be no more than 63 characters']);
  t.same(isQualifiedName(`a${p253}/n`), ['prefix part must be no more than 253 characters']);
  t.same(isQualifiedName(''), ['name part must be non-empty', `name part ${QNAME_MSG}`]);
  t.same(isQualifiedName('/a'), ['prefix part must be non-empty']);
  t.same(isQualifiedName('a/'), ['name part must be non-empty', `name part ${QNAME_MSG}`]);
  t.same(isQualifiedName('_a'), [`name part ${QNAME_MSG}`]);
  t.same(isQualifiedName('Example.com/a'), [`prefix part ${SUBDOMAIN_MSG}`]);
  t.same(isQualifiedName('a/b/c'), [`a qualified name ${QNAME_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`]);

  for (const good of ['', 'a', 'A-b_c.d', 'v'.repeat(63)]) t.same(isValidLabelValue(good), [], good);
  t.same(isValidLabelValue('v'.repeat(64)), ['must be no more than 63 characters']);
  for (const bad of ['-a', 'a-', 'a b', 'a/b']) t.same(isValidLabelValue(bad), [VALUE_MSG], bad);
  t.same(validateQualifiedName('_', 'metadata.labels'), [inv('metadata.labels', '_', `name part ${QNAME_MSG}`)]);
  t.same(validateLabelValue('-', 'spec.x'), [inv('spec.x', '-', VALUE_MSG)]);
});

t.test('object meta: names per rule', async (t) => {
  t.same(validateObjectMeta({ name: 'ok.name', namespace: 'default' }, ns), []);
  t.same(validateObjectMeta({ name: 'Foo_', namespace: 'default' }, ns), [inv('metadata.name', 'Foo_', SUBDOMAIN_MSG)]);
  t.same(validateObjectMeta({ name: 'a.b', namespace: 'd' }, { ...ns, nameRule: 'label' }), [inv('metadata.name', 'a.b', 'must not contain dots')]);
  t.same(validateObjectMeta({ name: '1abc' }, { ...cluster, nameRule: 'label1035' }), [inv('metadata.name', '1abc', DNS1035_MSG)]);
  t.same(validateObjectMeta({ name: 'abc' }, { ...cluster, nameRule: 'label1035' }), []);
  t.same(validateObjectMeta({ name: 'system:Admin' }, { ...cluster, nameRule: 'path-segment' }), []);
  t.same(validateObjectMeta({ name: 'a/b' }, { ...cluster, nameRule: 'path-segment' }), [inv('metadata.name', 'a/b', "may not contain '/'")]);
  t.same(validateObjectMeta({ name: 'x'.repeat(254) }, cluster), [inv('metadata.name', 'x'.repeat(254), 'must be no more than 253 characters')]);
  t.same(validateObjectMeta({ name: 'x'.repeat(64) }, { ...cluster, nameRule: 'label' }), [inv('metadata.name', 'x'.repeat(64), 'must be no more than 63 characters')]);
});

t.test('object meta: name and generateName', async (t) => {
  const required = { reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' };
  t.same(validateObjectMeta({}, cluster), [required]);
  t.same(validateObjectMeta({ generateName: 'web-' }, cluster), [], 'generateName stands in for name on create');
  t.same(validateObjectMeta({ generateName: 'web-' }, { ...cluster, isCreate: false }), [required], 'not on update');
  t.same(validateObjectMeta({ generateName: 'Web-' }, cluster), [inv('metadata.generateName', 'Web-', SUBDOMAIN_MSG)]);
  t.same(validateObjectMeta({ generateName: '-' }, cluster), [inv('metadata.generateName', '-', SUBDOMAIN_MSG)]);
  t.same(validateObjectMeta({ generateName: 'web.' }, cluster), [inv('metadata.generateName', 'web.', SUBDOMAIN_MSG)]);
  t.same(validateObjectMeta({ generateName: 'Web-', name: 'web-x' }, { ...cluster, isCreate: false }), [], 'generateName is only checked on create');
  t.same(validateObjectMeta({ generateName: 'a/', }, { ...cluster, nameRule: 'path-segment' }), [inv('metadata.generateName', 'a/', "may not contain '/'")]);
  t.same(validateObjectMeta({ name: 7 as unknown as string }, cluster), [
    { reason: 'FieldValueInvalid', field: 'metadata.name', message: 'Invalid value: 7: must be a string' }, required,
  ]);
});

t.test('object meta: namespace required or forbidden', async (t) => {
  t.same(validateObjectMeta({ name: 'a' }, ns), [{ reason: 'FieldValueRequired', field: 'metadata.namespace', message: 'Required value' }]);
  t.same(validateObjectMeta({ name: 'a', namespace: 'x' }, cluster), [{ reason: 'FieldValueForbidden', field: 'metadata.namespace', message: 'Forbidden: not allowed on this type' }]);
  t.same(validateObjectMeta({ name: 'a', namespace: 'a.b' }, ns), [inv('metadata.namespace', 'a.b', 'must not contain dots')]);
  t.same(validateObjectMeta({ name: 'a', namespace: 'Ns' }, ns), [inv('metadata.namespace', 'Ns', LABEL_MSG)]);
  t.same(validateObjectMeta({ name: 'a', namespace: 'n'.repeat(64) }, ns), [inv('metadata.namespace', 'n'.repeat(64), 'must be no more than 63 characters')]);
});

t.test('object meta: labels', async (t) => {
  const meta = (labels: Record<string, string>): ObjectMeta => ({ name: 'a', labels });
  t.same(validateObjectMeta(meta({ 'example.com/app': 'web', a: '', ['k'.repeat(63)]: 'v'.repeat(63) }), cluster), []);
  t.same(validateObjectMeta(meta({ ['k'.repeat(64)]: 'v' }), cluster), [inv('metadata.labels', 'k'.repeat(64), 'name part must be no more than 63 characters')]);
  t.same(validateObjectMeta(meta({ k: 'v'.repeat(64) }), cluster), [inv('metadata.labels', 'v'.repeat(64), 'must be no more than 63 characters')]);
  t.same(validateObjectMeta(meta({ 'Bad.com/k': 'v_' }), cluster), [
    inv('metadata.labels', 'Bad.com/k', `prefix part ${SUBDOMAIN_MSG}`),
    inv('metadata.labels', 'v_', VALUE_MSG),
  ]);
  t.same(validateObjectMeta({ name: 'a', labels: { k: 1 as unknown as string } }, cluster), [
    { reason: 'FieldValueInvalid', field: 'metadata.labels', message: 'Invalid value: 1: must be a string' },
  ]);
});

t.test('object meta: annotations', async (t) => {
  const tooLong = { reason: 'FieldValueTooLong', field: 'metadata.annotations', message: 'Too long: must have at most 262144 bytes' };
  // Keys are checked case-insensitively, values are free-form.
  t.same(validateObjectMeta({ name: 'a', annotations: { 'Example.COM/Key': 'any value: at all!' } }, cluster), []);
  t.same(validateObjectMeta({ name: 'a', annotations: { 'a b': '' } }, cluster), [inv('metadata.annotations', 'a b', `name part ${QNAME_MSG}`)]);
  const fits = { k: 'v'.repeat(262144 - 1) };
  t.same(validateObjectMeta({ name: 'a', annotations: fits }, cluster), [], 'exactly 256 KiB of keys and values is fine');
  t.same(validateObjectMeta({ name: 'a', annotations: { k: 'v'.repeat(262144) } }, cluster), [tooLong]);
  t.same(validateObjectMeta({ name: 'a', annotations: { a: 'v'.repeat(131072), b: 'v'.repeat(131071) } }, cluster), [tooLong], 'sizes add up');
  t.same(validateObjectMeta({ name: 'a', annotations: { k: 'é'.repeat(131072) } }, cluster), [tooLong], 'counted in bytes');
});

t.test('object meta: finalizers, ownerReferences, generation', async (t) => {
  t.same(validateObjectMeta({ name: 'a', finalizers: ['example.com/f', 'kubernetes', 'kubernetes'] }, cluster), [], 'syntax only, duplicates allowed');
  t.same(validateObjectMeta({ name: 'a', finalizers: ['bad finalizer'] }, cluster), [inv('metadata.finalizers', 'bad finalizer', `name part ${QNAME_MSG}`)]);
  t.same(validateObjectMeta({ name: 'a', finalizers: ['orphan', 'foregroundDeletion'] }, cluster), [{
    reason: 'FieldValueInvalid', field: 'metadata.finalizers',
    message: 'Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set',
  }]);
  const ref = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1', controller: true };
  t.same(validateObjectMeta({ name: 'a', ownerReferences: [ref] }, cluster), []);
  t.same(validateObjectMeta({ name: 'a', ownerReferences: [{}] }, cluster), [
    inv('metadata.ownerReferences.apiVersion', '', 'version must not be empty'),
    inv('metadata.ownerReferences.kind', '', 'kind must not be empty'),
    inv('metadata.ownerReferences.name', '', 'name must not be empty'),
    inv('metadata.ownerReferences.uid', '', 'uid must not be empty'),
  ]);
  t.same(validateObjectMeta({ name: 'a', ownerReferences: [{ ...ref, apiVersion: 'apps/' }] }, cluster), [inv('metadata.ownerReferences.apiVersion', 'apps/', 'version must not be empty')]);
  const two = validateObjectMeta({ name: 'a', ownerReferences: [ref, { ...ref, name: 'rs2' }] }, cluster);
  t.equal(two.length, 1);
  t.match(two[0].message, /Only one reference can have Controller set to true\. Found "true" in references for ReplicaSet\/rs and ReplicaSet\/rs2$/);
  t.match(validateObjectMeta({ name: 'a', ownerReferences: [{ ...ref, apiVersion: 'v1', kind: 'Event' }] }, cluster)[0].message, /\/v1, Kind=Event is disallowed from being an owner$/);
  t.same(validateObjectMeta({ name: 'a', generation: -1 }, cluster), [{ reason: 'FieldValueInvalid', field: 'metadata.generation', message: 'Invalid value: -1: must be greater than or equal to 0' }]);
});

t.test('object meta: embedded path', async (t) => {
  t.same(validateObjectMeta({ labels: { k: '-' } }, { ...ns, isCreate: false, path: 'spec.template.metadata' }).map((c) => c.field),
    ['spec.template.metadata.name', 'spec.template.metadata.namespace', 'spec.template.metadata.labels']);
});

t.test('object meta update: immutable fields', async (t) => {
  const old: ObjectMeta = { name: 'a', namespace: 'ns', uid: 'u1', creationTimestamp: '2024-01-01T00:00:00Z', resourceVersion: '5' };
  t.same(validateObjectMetaUpdate({ ...old, labels: { x: 'y' } }, old), []);
  t.same(validateObjectMetaUpdate({ name: 'a', namespace: 'ns' }, old), [], 'omitted uid and creationTimestamp keep the stored ones');
  t.same(validateObjectMetaUpdate({ ...old, name: 'b' }, old), [inv('metadata.name', 'b', 'field is immutable')]);
  t.same(validateObjectMetaUpdate({ ...old, namespace: 'other' }, old), [inv('metadata.namespace', 'other', 'field is immutable')]);
  t.same(validateObjectMetaUpdate({ ...old, uid: 'u2' }, old), [inv('metadata.uid', 'u2', 'field is immutable')]);
  t.same(validateObjectMetaUpdate({ ...old, creationTimestamp: '2025-01-01T00:00:00Z' }, old), [inv('metadata.creationTimestamp', '2025-01-01T00:00:00Z', 'field is immutable')]);
});

t.test('object meta update: deletion', async (t) => {
  const deleting: ObjectMeta = { name: 'a', uid: 'u', deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: ['a.io/x', 'a.io/y'] };
  t.same(validateObjectMetaUpdate({ ...deleting, finalizers: ['a.io/y'] }, deleting), [], 'finalizers may be removed');
  t.same(validateObjectMetaUpdate({ ...deleting, deletionTimestamp: undefined }, deleting), [
    { reason: 'FieldValueInvalid', field: 'metadata.deletionTimestamp', message: 'Invalid value: null: field is immutable' },
  ]);
  t.same(validateObjectMetaUpdate({ ...deleting, deletionTimestamp: '2025-01-01T00:00:00Z' }, deleting), [inv('metadata.deletionTimestamp', '2025-01-01T00:00:00Z', 'field is immutable')]);
  t.same(validateObjectMetaUpdate({ ...deleting, finalizers: ['a.io/x', 'a.io/z', 'a.io/b'] }, deleting), [{
    reason: 'FieldValueForbidden', field: 'metadata.finalizers',
    message: 'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"a.io/b", "a.io/z"}',
  }]);
  t.same(validateObjectMetaUpdate({ name: 'a', finalizers: ['new.io/f'] }, { name: 'a' }), [], 'adding finalizers is fine before deletion');
});

t.test('structured label selector fields', async (t) => {
  t.same(validateLabelSelector({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'a', operator: 'In', values: ['x'] }] }, 'spec.selector'), []);
  t.same(validateLabelSelector({ matchExpressions: [
    { key: 'a', operator: 'In' },
    { key: 'b', operator: 'Exists', values: ['x'] },
    { key: 'c_', operator: 'Foo', values: ['-'] },
  ] }, 'spec.selector'), [
    { reason: 'FieldValueRequired', field: 'spec.selector.matchExpressions[0].values', message: "Required value: must be specified when `operator` is 'In' or 'NotIn'" },
    { reason: 'FieldValueForbidden', field: 'spec.selector.matchExpressions[1].values', message: "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'" },
    inv('spec.selector.matchExpressions[2].operator', 'Foo', 'not a valid selector operator'),
    inv('spec.selector.matchExpressions[2].key', 'c_', `name part ${QNAME_MSG}`),
    inv('spec.selector.matchExpressions[2].values[0]', '-', VALUE_MSG),
  ]);
});

t.test('message helpers', async (t) => {
  t.equal(goQuote('a"b\\c\n\x01'), '"a\\"b\\\\c\\n\\x01"');
  t.same(fieldError.notSupported('spec.x', 'c', ['a', 'b']), { reason: 'FieldValueNotSupported', field: 'spec.x', message: 'Unsupported value: "c": supported values: "a", "b"' });
  t.same(fieldError.duplicate('spec.x', 'c'), { reason: 'FieldValueDuplicate', field: 'spec.x', message: 'Duplicate value: "c"' });
  t.same(fieldError.required('spec.x'), { reason: 'FieldValueRequired', field: 'spec.x', message: 'Required value' });
});
