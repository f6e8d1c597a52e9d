import t from 'tap';
import type { Schema } from '../../kernel/contracts/index.js';
import { PatchError, REJECTED_MESSAGE } from '../../workers/merge/json-patch.js';
import { strategicMergePatch } from '../../workers/merge/strategic.js';
import { runMergeTask } from '../../workers/merge/index.js';

const defs: Record<string, Schema> = {
  Container: {
    type: 'object',
    fields: {
      name: { type: 'string' },
      image: { type: 'string' },
      args: { type: 'array', items: { type: 'string' } },
      env: { type: 'array', items: { type: 'object', fields: { name: { type: 'string' }, value: { type: 'string' } } }, patchStrategy: 'merge', patchMergeKey: 'name' },
    },
  },
};
const schema: Schema = {
  type: 'object',
  fields: {
    metadata: {
      type: 'object',
      fields: {
        labels: { type: 'object', additional: { type: 'string' } },
        finalizers: { type: 'array', items: { type: 'string' }, patchStrategy: 'merge' },
      },
    },
    spec: {
      type: 'object',
      fields: {
        containers: { type: 'array', items: { type: 'ref', ref: 'Container' }, patchStrategy: 'merge', patchMergeKey: 'name' },
        tolerations: { type: 'array', items: { type: 'object', fields: { key: { type: 'string' } } } },
        volumes: { type: 'array', items: { type: 'any' }, patchStrategy: 'merge,retainKeys', patchMergeKey: 'name' },
        strategy: { type: 'object', fields: { type: { type: 'string' }, rollingUpdate: { type: 'any' } }, patchStrategy: 'retainKeys' },
        nodeSelector: { type: 'object', additional: { type: 'string' }, patchStrategy: 'replace' },
        matrix: { type: 'array', items: { type: 'any' }, patchStrategy: 'merge' },
      },
    },
  },
};

const live = () => ({
  metadata: { labels: { app: 'web', tier: 'fe' }, finalizers: ['a', 'b'] },
  spec: {
    containers: [
      { name: 'web', image: 'nginx:1', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] },
      { name: 'sidecar', image: 'envoy:1' },
    ],
    tolerations: [{ key: 'x' }, { key: 'y' }],
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } },
    nodeSelector: { zone: 'a', disk: 'ssd' },
  },
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const smp = (patch: unknown, doc: unknown = live()): any => strategicMergePatch(doc, patch, schema, defs);
function failure(patch: unknown, doc: unknown = live()) {
  try {
    smp(patch, doc);
  } catch (e) {
    if (e instanceof PatchError) return { code: e.code, message: e.message };
    throw e;
  }
  return undefined;
}

t.test('maps merge key by key; null deletes a key', async (t) => {
  const out = smp({ metadata: { labels: { tier: null, env: 'prod' } } });
  t.same(out.metadata.labels, { app: 'web', env: 'prod' });
  t.same(smp({ metadata: { labels: null } }).metadata, { finalizers: ['a', 'b'] });
  t.same(smp({ spec: { absent: null } }).spec, live().spec, 'null for a missing key is ignored');
  t.same(smp({ spec: { fresh: { a: 1, b: null } } }).spec.fresh, { a: 1 }, 'nulls in new values are dropped');
});

t.test('merge lists merge by patchMergeKey; new items come first, server-only items keep their place', async (t) => {
  const out = smp({ spec: { containers: [{ name: 'web', image: 'nginx:2' }, { name: 'new', image: 'busybox' }] } });
  t.same(out.spec.containers, [
    { name: 'web', image: 'nginx:2', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] },
    { name: 'new', image: 'busybox' },
    { name: 'sidecar', image: 'envoy:1' },
  ]);
  const added = smp({ spec: { containers: [{ name: 'new', image: 'busybox' }] } });
  t.same(added.spec.containers.map((c: { name: string }) => c.name), ['new', 'web', 'sidecar'], 'as the reference orders an added item');
  const nested = smp({ spec: { containers: [{ name: 'web', env: [{ name: 'B', value: '3' }, { name: 'C', value: '4' }] }] } });
  t.same(nested.spec.containers[0].env, [{ name: 'A', value: '1' }, { name: 'B', value: '3' }, { name: 'C', value: '4' }]);
});

t.test('primitive merge lists merge as sets', async (t) => {
  t.same(smp({ metadata: { finalizers: ['b', 'c'] } }).metadata.finalizers, ['a', 'b', 'c']);
  t.same(smp({ metadata: { finalizers: ['c'] } }).metadata.finalizers, ['c', 'a', 'b']);
  t.same(smp({ metadata: { finalizers: ['a', 'a'] } }).metadata.finalizers, ['a', 'b'], 'duplicates collapse');
});

t.test('lists without merge strategy are replaced', async (t) => {
  t.same(smp({ spec: { tolerations: [{ key: 'z' }] } }).spec.tolerations, [{ key: 'z' }]);
  t.same(smp({ spec: { containers: [{ name: 'web', args: ['-x'] }] } }).spec.containers[0].args, ['-x']);
});

t.test('$patch: replace and delete on maps; merge is the default', async (t) => {
  t.same(smp({ metadata: { labels: { $patch: 'replace', only: 'this' } } }).metadata.labels, { only: 'this' });
  t.same(smp({ metadata: { labels: { $patch: 'delete' } } }).metadata.labels, {});
  t.same(smp({ metadata: { labels: { $patch: 'merge', x: 'y' } } }).metadata.labels, { app: 'web', tier: 'fe', x: 'y' });
  t.same(smp({ $patch: 'replace', kind: 'X' }), { kind: 'X' }, 'at the top level too');
  t.same(failure({ metadata: { labels: { $patch: 'frob' } } }), { code: 400, message: 'unknown patch type: frob in map: map[$patch:frob]' });
});

t.test('$patch: delete and replace as list elements', async (t) => {
  t.same(smp({ spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } }).spec.containers.map((c: { name: string }) => c.name), ['web']);
  const replaced = smp({ spec: { containers: [{ $patch: 'replace' }, { name: 'only', image: 'x' }] } });
  t.same(replaced.spec.containers, [{ name: 'only', image: 'x' }]);
  t.same(failure({ spec: { containers: [{ $patch: 'delete' }] } }), { code: 400, message: 'map: map[$patch:delete] does not contain declared merge key: name' });
});

t.test('$retainKeys clears unlisted keys; patch keys must be listed', async (t) => {
  const out = smp({ spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } });
  t.same(out.spec.strategy, { type: 'Recreate' });
  t.same(failure({ spec: { strategy: { $retainKeys: ['type'], rollingUpdate: {} } } }), { code: 422, message: "patch content doesn't match retainKeys list" });
  t.same(failure({ spec: { strategy: { $retainKeys: 'type' } } }), { code: 400, message: 'invalid patch format of retainKeys' });
  const vol = smp({ spec: { volumes: [{ name: 'v', $retainKeys: ['name', 'emptyDir'], emptyDir: {} }] } }, {
    spec: { volumes: [{ name: 'v', hostPath: { path: '/x' } }] },
  });
  t.same(vol.spec.volumes, [{ name: 'v', emptyDir: {} }], 'inside merge,retainKeys list items');
});

t.test('$deleteFromPrimitiveList removes values', async (t) => {
  t.same(smp({ metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }).metadata.finalizers, ['b']);
  t.same(smp({ metadata: { '$deleteFromPrimitiveList/finalizers': ['a'], finalizers: ['c'] } }).metadata.finalizers, ['c', 'b']);
  t.same(smp({ metadata: { '$deleteFromPrimitiveList/absent': ['a'] } }).metadata, live().metadata, 'no list: nothing to do');
});

t.test('$setElementOrder orders merged lists', async (t) => {
  const out = smp({ spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'web' }], containers: [{ name: 'web', image: 'nginx:3' }] } });
  t.same(out.spec.containers.map((c: { name: string; image: string }) => `${c.name}=${c.image}`), ['sidecar=envoy:1', 'web=nginx:3']);
  t.notOk('$setElementOrder/containers' in out.spec, 'the directive is not stored');
  const prim = smp({ metadata: { '$setElementOrder/finalizers': ['c', 'b', 'a'], finalizers: ['c'] } });
  t.same(prim.metadata.finalizers, ['c', 'b', 'a']);
  const f = failure({ spec: { '$setElementOrder/containers': [{ name: 'web' }], containers: [{ name: 'other' }] } });
  t.equal(f?.code, 400);
  t.match(f?.message, /^The order in patch list:\n/);
  t.same(failure({ spec: { '$setElementOrder/containers': 'x' } }), { code: 400, message: 'invalid patch format of setElementOrder list' });
});

t.test('patchStrategy replace on a map replaces it', async (t) => {
  t.same(smp({ spec: { nodeSelector: { zone: 'b' } } }).spec.nodeSelector, { zone: 'b' });
});

t.test('errors', async (t) => {
  t.same(failure({ spec: { containers: [{ image: 'x' }] } }), { code: 400, message: 'map: map[image:x] does not contain declared merge key: name' });
  const lol = failure({ spec: { matrix: [[1], [2]] } }, { spec: { matrix: [[0]] } });
  t.same(lol, { code: 422, message: 'lists of lists are not supported' });
  t.same(failure(['x']), { code: 400, message: 'json: cannot unmarshal array into Go value of type map[string]interface {}' });
  t.same(failure({ metadata: { finalizers: ['a', { x: 1 }] } })?.code, 400);
  try {
    smp({ spec: { matrix: [[1]] } }, { spec: { matrix: [[0]] } });
  } catch (e) {
    t.equal((e as PatchError).statusMessage, REJECTED_MESSAGE);
  }
});

t.test('the input is not changed; unstructured documents merge like merge patch with directives', async (t) => {
  const doc = live();
  smp({ spec: { containers: [{ name: 'web', image: 'x' }] }, metadata: { labels: { app: null } } }, doc);
  t.same(doc, live());
  t.same(strategicMergePatch({ a: { b: [1, 2] }, c: 1 }, { a: { b: [3] }, c: null }), { a: { b: [3] } });
  t.same(runMergeTask({ op: 'strategic', doc: { a: 1 }, patch: { b: { $patch: 'delete' } } }), { ok: true, value: { a: 1, b: {} } });
  // A list the live object lacks is taken from the patch as it is, minus directives and nulls.
  const added = smp({ spec: { containers: [{ image: 'no-name', x: null }, { name: 'gone', $patch: 'delete' }] } }, { spec: {} });
  t.same(added.spec.containers, [{ image: 'no-name' }]);
});
