import t from 'tap';
import { jsonPatch, PatchError, REJECTED_MESSAGE, decodePointerToken, encodePointerToken } from '../../workers/merge/json-patch.js';
import { mergePatch } from '../../workers/merge/merge-patch.js';
import { runMergeTask } from '../../workers/merge/index.js';

const doc = () => ({
  metadata: { name: 'x', labels: { a: '1', 'app.io/name': 'web', 'c~d': 'y' } },
  spec: { list: ['a', 'b', 'c'], replicas: 1 },
});

/** The PatchError a patch fails with (code and message). */
function failure(patch: unknown, d: unknown = doc(), limits?: Parameters<typeof jsonPatch>[2]) {
  try {
    jsonPatch(d, patch, limits);
  } catch (e) {
    if (e instanceof PatchError) return { code: e.code, reason: e.reason, message: e.message, statusMessage: e.statusMessage };
    throw e;
  }
  return undefined;
}

t.test('add: object key, array index, append with -, negative index, missing value as null', async (t) => {
  const out = jsonPatch(doc(), [
    { op: 'add', path: '/metadata/labels/b', value: '2' },
    { op: 'add', path: '/spec/list/1', value: 'x' },
    { op: 'add', path: '/spec/list/-', value: 'end' },
    { op: 'add', path: '/spec/list/-2', value: 'beforeLast' }, // -1 would append
    { op: 'add', path: '/spec/paused' },
    { op: 'add', path: '/spec/replicas', value: 3 },
  ]) as ReturnType<typeof doc> & { spec: { paused: unknown } };
  t.same(out.metadata.labels, { a: '1', 'app.io/name': 'web', 'c~d': 'y', b: '2' });
  t.same(out.spec.list, ['a', 'x', 'b', 'c', 'beforeLast', 'end']);
  t.equal(out.spec.paused, null);
  t.equal(out.spec.replicas, 3, 'add on an existing key replaces it');
});

t.test('remove, replace, move, copy, test', async (t) => {
  const out = jsonPatch(doc(), [
    { op: 'test', path: '/metadata/labels/a', value: '1' },
    { op: 'remove', path: '/metadata/labels/a' },
    { op: 'replace', path: '/spec/replicas', value: 5 },
    { op: 'move', from: '/spec/list/0', path: '/spec/first' },
    { op: 'copy', from: '/metadata/name', path: '/spec/nameCopy' },
    { op: 'remove', path: '/spec/list/-1' },
    { op: 'test', path: '/spec/missing', value: null },
  ]);
  t.same(out, {
    metadata: { name: 'x', labels: { 'app.io/name': 'web', 'c~d': 'y' } },
    spec: { list: ['b'], replicas: 5, first: 'a', nameCopy: 'x' },
  });
});

t.test('JSON pointer escapes ~0 and ~1', async (t) => {
  t.equal(decodePointerToken('app.io~1name'), 'app.io/name');
  t.equal(decodePointerToken('c~0d'), 'c~d');
  t.equal(decodePointerToken('~01'), '~1', '~0 is decoded after ~1');
  t.equal(encodePointerToken('a/b~c'), 'a~1b~0c');
  const out = jsonPatch(doc(), [
    { op: 'replace', path: '/metadata/labels/app.io~1name', value: 'api' },
    { op: 'remove', path: '/metadata/labels/c~0d' },
  ]) as ReturnType<typeof doc>;
  t.same(out.metadata.labels, { a: '1', 'app.io/name': 'api' });
});

t.test('the input document is not changed', async (t) => {
  const d = doc();
  jsonPatch(d, [{ op: 'remove', path: '/metadata/labels/a' }, { op: 'add', path: '/spec/list/-', value: 'z' }]);
  t.same(d, doc());
});

t.test('a failed test is 422 with the reference wording', async (t) => {
  t.same(failure([{ op: 'test', path: '/metadata/labels/a', value: '2' }]), {
    code: 422, reason: 'Invalid', message: 'testing value /metadata/labels/a failed: test failed', statusMessage: REJECTED_MESSAGE,
  });
  t.equal(failure([{ op: 'test', path: '/spec/list', value: ['a', 'b'] }])?.message, 'testing value /spec/list failed: test failed');
  t.equal(failure([{ op: 'test', path: '/nope/x', value: 1 }])?.message, 'test operation does not apply: is missing path: /nope/x: missing value');
});

t.test('bad paths are 422 naming the path', async (t) => {
  t.same(failure([{ op: 'add', path: '/spec/foo/bar', value: 1 }]), {
    code: 422, reason: 'Invalid', message: 'add operation does not apply: doc is missing path: "/spec/foo/bar": missing value', statusMessage: REJECTED_MESSAGE,
  });
  t.equal(failure([{ op: 'remove', path: '/metadata/labels/zz' }])?.message, "error in remove for path: '/metadata/labels/zz': Unable to remove nonexistent key: zz: missing value");
  t.equal(failure([{ op: 'remove', path: '/spec/nothing/x' }])?.message, 'remove operation does not apply: doc is missing path: "/spec/nothing/x": missing value');
  t.equal(failure([{ op: 'replace', path: '/spec/absent', value: 1 }])?.message, 'replace operation does not apply: doc is missing key: /spec/absent: missing value');
  t.equal(failure([{ op: 'replace', path: '/x/y', value: 1 }])?.message, 'replace operation does not apply: doc is missing path: /x/y: missing value');
  t.equal(failure([{ op: 'add', path: '/spec/list/7', value: 1 }])?.message, "error in add for path: '/spec/list/7': Unable to access invalid index: 7: invalid index referenced");
  t.equal(failure([{ op: 'add', path: '/spec/list/x', value: 1 }])?.message, `error in add for path: '/spec/list/x': value was not a proper array index: 'x': strconv.Atoi: parsing "x": invalid syntax`);
  t.equal(failure([{ op: 'remove', path: '/spec/list/3' }])?.message, "error in remove for path: '/spec/list/3': Unable to access invalid index: 3: invalid index referenced");
  t.equal(failure([{ op: 'move', from: '/spec/none/a', path: '/spec/b' }])?.message, 'move operation does not apply: doc is missing from path: /spec/none/a: missing value');
  t.equal(failure([{ op: 'copy', from: '/spec/replicas', path: '/none/b' }])?.message, 'copy operation does not apply: doc is missing destination path: /none/b: missing value');
  t.equal(failure([{ op: 'add', path: '', value: {} }])?.code, 422, 'the whole document is not a target');
  t.equal(failure([{ op: 'add', value: 1 }])?.message, 'add operation failed to decode path: operation missing path field: missing value');
  t.equal(failure([{ op: 'frob', path: '/a' }])?.message, 'Unexpected kind: frob');
});

t.test('malformed patches are 400; more than 10000 operations is 413', async (t) => {
  t.same(failure({ op: 'add' }), { code: 400, reason: 'BadRequest', message: 'json: cannot unmarshal object into Go value of type jsonpatch.Patch', statusMessage: undefined });
  t.equal(failure(['x'])?.message, 'json: cannot unmarshal string into Go value of type jsonpatch.Operation');
  const many = Array.from({ length: 10001 }, () => ({ op: 'test', path: '/spec/replicas', value: 1 }));
  t.same(failure(many), {
    code: 413, reason: 'RequestEntityTooLarge', message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001', statusMessage: undefined,
  });
  t.same(jsonPatch(doc(), many.slice(0, 10000)), doc(), '10000 operations are allowed');
});

t.test('a copy bomb is capped', async (t) => {
  // Each copy doubles the document: 30 of them would need gigabytes.
  const patch = [{ op: 'add', path: '/a', value: ['xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'] }];
  for (let i = 0; i < 30; i++) patch.push({ op: 'copy', from: '/a', path: '/a/-' } as never);
  const f = failure(patch, {});
  t.equal(f?.code, 422);
  t.match(f?.message, /^Unable to complete the copy, the accumulated size increase of copy is \d+, exceeding the limit 3145728$/);
  t.equal(failure([{ op: 'copy', from: '/spec/list', path: '/spec/l2' }], doc(), { maxCopyBytes: 5 })?.message,
    'Unable to complete the copy, the accumulated size increase of copy is 13, exceeding the limit 5');
});

t.test('merge patch (RFC 7386): objects merge, null deletes, arrays replace', async (t) => {
  const out = mergePatch(doc(), {
    metadata: { labels: { a: null, b: '2' }, annotations: { x: 'y', gone: null } },
    spec: { list: ['z', null, { k: 1, n: null }], replicas: null },
  });
  t.same(out, {
    metadata: { name: 'x', labels: { 'app.io/name': 'web', 'c~d': 'y', b: '2' }, annotations: { x: 'y' } },
    spec: { list: ['z', null, { k: 1 }] },
  });
  t.same(mergePatch({ a: 1 }, [1, 2]), [1, 2], 'a non-object patch replaces the document');
  t.throws(() => mergePatch({ a: 1 }, null), { message: 'Invalid JSON Patch' });
  t.same(mergePatch('scalar', { a: { b: null, c: 1 } }), { a: { c: 1 } });
});

t.test('runMergeTask answers plain data', async (t) => {
  t.same(runMergeTask({ op: 'merge-patch', doc: { a: 1 }, patch: { b: 2 } }), { ok: true, value: { a: 1, b: 2 } });
  const r = runMergeTask({ op: 'json-patch', doc: { a: 1 }, patch: [{ op: 'test', path: '/a', value: 2 }] });
  t.same(r, { ok: false, error: { code: 422, reason: 'Invalid', message: 'testing value /a failed: test failed', statusMessage: REJECTED_MESSAGE } });
  t.same(JSON.parse(JSON.stringify(r)), r, 'JSON-cloneable');
  t.same(structuredClone(r), r, 'structured-cloneable');
  t.same(runMergeTask({ op: 'nope' } as never), { ok: false, error: { code: 500, reason: '', message: 'unknown merge task "nope"' } });
});
