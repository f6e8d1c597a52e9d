import t from 'tap';
import type { KObject, Schema } from '../../kernel/contracts/index.js';
import {
  apply, conflictError, conflictMessage, conflictStatus, managerFromUserAgent, updateManagedFields,
  type ApplyInput, type ApplyResult, type Conflict, type ManagedFieldsEntry,
} from '../../workers/merge/index.js';
import { fromFieldsV1, paths, pathToString } from '../../workers/merge/fieldset.js';
import { runMergeTask } from '../../workers/merge/index.js';

// A Deployment-like schema: containers a list-map keyed by name, ports keyed by containerPort +
// protocol, labels a granular map, finalizers a set, args an atomic list, selector an atomic struct.
const defs: Record<string, Schema> = {
  ObjectMeta: {
    type: 'object',
    fields: {
      name: { type: 'string' },
      namespace: { type: 'string' },
      uid: { type: 'string' },
      resourceVersion: { type: 'string' },
      creationTimestamp: { type: 'string' },
      labels: { type: 'object', additional: { type: 'string' } },
      annotations: { type: 'object', additional: { type: 'string' } },
      finalizers: { type: 'array', items: { type: 'string' }, listType: 'set' },
      managedFields: { type: 'array', items: { type: 'any' } },
    },
  },
  Container: {
    type: 'object',
    fields: {
      name: { type: 'string' },
      image: { type: 'string' },
      args: { type: 'array', items: { type: 'string' }, listType: 'atomic' },
      ports: { type: 'array', items: { type: 'ref', ref: 'ContainerPort' }, listType: 'map', mapKeys: ['containerPort', 'protocol'] },
    },
  },
  ContainerPort: { type: 'object', fields: { containerPort: { type: 'integer' }, protocol: { type: 'string' }, name: { type: 'string' } } },
  LabelSelector: { type: 'object', fields: { matchLabels: { type: 'object', additional: { type: 'string' } } }, mapType: 'atomic' },
};
const schema: Schema = {
  type: 'object',
  fields: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'ref', ref: 'ObjectMeta' },
    spec: {
      type: 'object',
      fields: {
        replicas: { type: 'integer' },
        paused: { type: 'boolean' },
        selector: { type: 'ref', ref: 'LabelSelector' },
        containers: { type: 'array', items: { type: 'ref', ref: 'Container' }, patchStrategy: 'merge', patchMergeKey: 'name' },
      },
    },
    status: { type: 'object', fields: { replicas: { type: 'integer' } } },
  },
};

const T = (n: number) => `2024-05-01T10:00:${String(n).padStart(2, '0')}Z`;
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

interface Cfg { replicas?: number | null; labels?: Record<string, string>; containers?: unknown[]; finalizers?: string[]; selector?: Record<string, string> }
/** An applied configuration; `replicas: null` leaves replicas out. */
function cfg(o: Cfg = {}): KObject {
  const spec: Record<string, unknown> = {};
  if (o.replicas !== null) spec.replicas = o.replicas ?? 3;
  spec.selector = { matchLabels: o.selector ?? { app: 'web' } };
  spec.containers = o.containers ?? [{ name: 'web', image: 'nginx:1' }];
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', labels: o.labels ?? { app: 'web' }, ...(o.finalizers ? { finalizers: o.finalizers } : {}) },
    spec,
  };
}
/** Just the identity: what a manager applies when it wants to own nothing. */
const identity = (): KObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' } });

function run(live: KObject | undefined, applied: KObject, manager: string, time: string, extra: Partial<ApplyInput> = {}): ApplyResult {
  return apply({ live, applied, manager, time, schema, definitions: defs, apiVersion: 'apps/v1', kind: 'Deployment', ...extra });
}
function ok(r: ApplyResult): KObject {
  if (!('object' in r)) throw new Error(`apply failed: ${JSON.stringify(r)}`);
  return r.object;
}
function conflicts(r: ApplyResult): Conflict[] {
  if (!('conflicts' in r)) throw new Error(`expected conflicts: ${JSON.stringify(r)}`);
  return r.conflicts;
}
/** The server's part of a create: identity fields the client never owns. */
function stored(obj: KObject): KObject {
  return { ...obj, metadata: { ...obj.metadata, uid: 'u-1', resourceVersion: '1', creationTimestamp: T(0) } };
}
function update(old: KObject | undefined, next: KObject, manager: string, time: string, extra: Record<string, unknown> = {}): KObject {
  const mf = updateManagedFields({ old, next, manager, time, schema, definitions: defs, apiVersion: 'apps/v1', ...extra });
  const meta: Record<string, unknown> = { ...next.metadata };
  if (mf.length) meta.managedFields = mf;
  else delete meta.managedFields;
  return { ...next, metadata: meta };
}
const entries = (obj: KObject) => (obj.metadata?.managedFields ?? []) as ManagedFieldsEntry[];
const entry = (obj: KObject, manager: string) => entries(obj).find((e) => e.manager === manager);
/** The member paths a manager owns, in the reference's format. */
const owned = (obj: KObject, manager: string) => {
  const e = entry(obj, manager);
  return e ? paths(fromFieldsV1(e.fieldsV1)).map(pathToString) : [];
};
const managers = (obj: KObject) => entries(obj).map((e) => `${e.manager}/${e.operation}`);
const clone = <V>(v: V): V => JSON.parse(JSON.stringify(v));

t.test('rule 1: apply creates a missing object; its fields are owned by the applier', async (t) => {
  const applied = cfg({ containers: [{ name: 'web', image: 'nginx:1', ports: [{ containerPort: 80 }] }] });
  const r = run(undefined, applied, 'kubectl', '2024-05-01T10:00:00.987Z');
  const obj = ok(r);
  const { managedFields, ...meta } = obj.metadata!;
  t.same({ ...obj, metadata: meta }, applied, 'the object is the applied configuration');
  t.same(managedFields, [{
    manager: 'kubectl',
    operation: 'Apply',
    apiVersion: 'apps/v1',
    time: '2024-05-01T10:00:00Z',
    fieldsType: 'FieldsV1',
    fieldsV1: {
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': {
        'f:containers': {
          'k:{"name":"web"}': {
            '.': {}, 'f:image': {}, 'f:name': {},
            'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
          },
        },
        'f:replicas': {},
        'f:selector': {},
      },
    },
  }]);
  t.same((r as { managedFields: unknown }).managedFields, managedFields);
  // Applying the same configuration again changes nothing, not even the entry's time.
  const again = ok(run(stored(obj), applied, 'kubectl', T(30)));
  t.same(again, stored(obj));
});

t.test('rule 2: a write that changes a field moves its ownership to the writer', async (t) => {
  const live = stored(ok(run(undefined, cfg(), 'kubectl', T(1))));
  const next = clone(live);
  (next.spec as { replicas: number }).replicas = 5;
  const after = update(live, next, 'hpa', T(2));
  t.notOk(owned(after, 'kubectl').includes('.spec.replicas'), 'the applier lost the field');
  t.same(owned(after, 'hpa'), ['.spec.replicas']);
  t.same(managers(after), ['kubectl/Apply', 'hpa/Update']);
  // A create is a write too: the creator owns everything it set.
  const created = update(undefined, stored(cfg({ labels: { app: 'web', tier: 'fe' } })), 'kubectl-create', T(3));
  t.same(entry(created, 'kubectl-create')!.fieldsV1, {
    'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:tier': {} } },
    'f:spec': { 'f:containers': { '.': {}, 'k:{"name":"web"}': { '.': {}, 'f:image': {}, 'f:name': {} } }, 'f:replicas': {}, 'f:selector': {} },
  }, 'a create owns what it set; added maps and lists are members themselves');
});

t.test('rule 3: appliers setting the same value share it; a later change by one conflicts with the other', async (t) => {
  const live = stored(ok(run(undefined, cfg({ replicas: 3 }), 'a', T(1))));
  const shared = ok(run(live, { ...identity(), spec: { replicas: 3 } }, 'b', T(2)));
  t.ok(owned(shared, 'a').includes('.spec.replicas'));
  t.same(owned(shared, 'b'), ['.spec.replicas']);
  const c = conflicts(run(shared, cfg({ replicas: 4 }), 'a', T(3)));
  t.same(c.map((x) => [x.manager, x.path]), [['b', '.spec.replicas']]);
  t.equal(conflictMessage(c), 'Apply failed with 1 conflict: conflict with "b": .spec.replicas', 'an applier is named without a version');
});

t.test('rule 4: apply against another manager\'s different value is a conflict; updates never conflict', async (t) => {
  const live = stored(ok(run(undefined, cfg(), 'kubectl', T(1))));
  const next = clone(live);
  (next.spec as { replicas: number }).replicas = 5;
  (next.metadata!.labels as Record<string, string>).app = 'api';
  const scaled = update(live, next, 'kubectl-client-side-apply', T(2));
  const c = conflicts(run(scaled, cfg(), 'kubectl', T(3)));
  t.same(conflictStatus(c), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Apply failed with 2 conflicts: conflicts with "kubectl-client-side-apply" using apps/v1:\n- .metadata.labels.app\n- .spec.replicas',
    reason: 'Conflict',
    details: {
      causes: [
        { reason: 'FieldManagerConflict', message: 'conflict with "kubectl-client-side-apply" using apps/v1', field: '.metadata.labels.app' },
        { reason: 'FieldManagerConflict', message: 'conflict with "kubectl-client-side-apply" using apps/v1', field: '.spec.replicas' },
      ],
    },
    code: 409,
  });
  t.equal(conflictMessage(c.slice(1)), 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas');
  const e = conflictError(c);
  t.equal(e.code, 409);
  t.equal(e.toStatus().reason, 'Conflict');
  // Conflicts with several managers are grouped by manager.
  const third = update(scaled, { ...clone(scaled), metadata: { ...clone(scaled).metadata, labels: { app: 'api', tier: 'x' } } }, 'ops', T(4));
  const c2 = conflicts(run(third, cfg({ labels: { app: 'web', tier: 'y' } }), 'kubectl', T(5)));
  t.equal(conflictMessage(c2), 'Apply failed with 3 conflicts: conflicts with "kubectl-client-side-apply" using apps/v1:\n- .metadata.labels.app\n- .spec.replicas\nconflicts with "ops" using apps/v1:\n- .metadata.labels.tier');
});

t.test('rule 5: force takes sole ownership; dropping the field or matching the value also resolve', async (t) => {
  const live = stored(ok(run(undefined, cfg({ replicas: 3 }), 'a', T(1))));
  // (a) force: the value changes and the field leaves the other entry.
  const forced = ok(run(live, { ...identity(), spec: { replicas: 7 } }, 'b', T(2), { force: true }));
  t.equal((forced.spec as { replicas: number }).replicas, 7);
  t.same(owned(forced, 'b'), ['.spec.replicas']);
  t.notOk(owned(forced, 'a').includes('.spec.replicas'));
  // (b) drop the field from the config: the value stays, the claim is gone.
  const dropped = ok(run(forced, cfg({ replicas: null }), 'a', T(3)));
  t.equal((dropped.spec as { replicas: number }).replicas, 7);
  t.notOk(owned(dropped, 'a').includes('.spec.replicas'));
  // (c) set the live value: ownership is shared.
  const matched = ok(run(forced, cfg({ replicas: 7 }), 'a', T(4)));
  t.ok(owned(matched, 'a').includes('.spec.replicas'));
  t.ok(owned(matched, 'b').includes('.spec.replicas'));
});

t.test('rule 6: fields an applier stops applying are removed unless someone else owns them', async (t) => {
  const first = cfg({ labels: { app: 'web', tier: 'fe', env: 'prod' }, containers: [{ name: 'web', image: 'nginx:1' }, { name: 'sidecar', image: 'envoy:1' }], finalizers: ['a/x', 'a/y'] });
  const live = stored(ok(run(undefined, first, 'a', T(1))));
  // Another writer takes `env` (by changing it) and adds a field to the sidecar.
  const next = clone(live);
  (next.metadata!.labels as Record<string, string>).env = 'staging';
  const edited = update(live, next, 'ops', T(2));
  const after = ok(run(edited, cfg({ labels: { app: 'web' }, containers: [{ name: 'web', image: 'nginx:1' }], finalizers: ['a/x'] }), 'a', T(3)));
  t.same(after.metadata!.labels, { app: 'web', env: 'staging' }, 'tier removed, env kept (owned by ops)');
  t.same((after.spec as { containers: unknown[] }).containers, [{ name: 'web', image: 'nginx:1' }], 'the list-map item nobody else owns is removed');
  t.same(after.metadata!.finalizers, ['a/x'], 'a set element is removed');
  t.same(owned(after, 'a'), ['.metadata.finalizers[="a/x"]', '.metadata.labels.app', '.spec.replicas', '.spec.selector', '.spec.containers[name="web"]', '.spec.containers[name="web"].image', '.spec.containers[name="web"].name']);
  // Fields nobody ever applied are left alone (server-set uid, resourceVersion).
  t.equal(after.metadata!.uid, 'u-1');
});

t.test('rule 7: an applied config carrying managedFields is refused; apply needs a manager', async (t) => {
  const withMF = cfg();
  withMF.metadata!.managedFields = [];
  t.same(run(undefined, withMF, 'a', T(1)), { error: { code: 400, reason: 'BadRequest', message: 'metadata.managedFields must be nil' } });
  t.same(run(undefined, cfg(), '', T(1)), {
    error: { code: 422, reason: 'Invalid', message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch' },
  });
  t.same(run(undefined, { ...cfg(), kind: 'StatefulSet' }, 'a', T(1)), { error: { code: 400, reason: 'BadRequest', message: 'invalid object type: apps/v1, Kind=StatefulSet' } });
  const dup = cfg({ containers: [{ name: 'x' }, { name: 'x' }] });
  const r = run(undefined, dup, 'a', T(1));
  t.same(r, { error: { code: 500, reason: '', message: 'failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.containers: duplicate entries for key [name="x"]' } });
});

t.test('rule 8: a controller forces without reading the object; fields it never applied survive its applies', async (t) => {
  const live = stored(ok(run(undefined, cfg({ replicas: 3 }), 'kubectl', T(1))));
  const next = clone(live);
  next.metadata!.annotations = { note: 'by hand' };
  const annotated = update(live, next, 'kubectl-annotate', T(2));
  const ctrl: KObject = { ...identity(), spec: { replicas: 9 } };
  const a1 = ok(run(annotated, ctrl, 'controller', T(3), { force: true }));
  t.equal((a1.spec as { replicas: number }).replicas, 9);
  t.notOk('resourceVersion' in ctrl.metadata!, 'no resourceVersion was needed');
  const a2 = ok(run(a1, { ...identity(), spec: { replicas: 9, paused: true } }, 'controller', T(4), { force: true }));
  t.same(a2.metadata!.annotations, { note: 'by hand' }, 'the annotation was never applied by the controller: it stays');
  t.same(a2.spec, { replicas: 9, selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'web', image: 'nginx:1' }], paused: true });
  t.same(owned(a2, 'controller'), ['.spec.paused', '.spec.replicas']);
});

t.test('rule 9: ownership handover through a temporary manager; a manager owning nothing is dropped', async (t) => {
  const live = stored(ok(run(undefined, cfg({ replicas: 3 }), 'main', T(1))));
  const shared = ok(run(live, { ...identity(), spec: { replicas: 3 } }, 'handover', T(2)));
  const released = ok(run(shared, cfg({ replicas: null }), 'main', T(3)));
  t.equal((released.spec as { replicas: number }).replicas, 3, 'the value stays: handover owns it');
  t.same(owned(released, 'handover'), ['.spec.replicas']);
  // The new owner (an autoscaler) updates it; the temporary manager then applies nothing.
  const next = clone(released);
  (next.spec as { replicas: number }).replicas = 4;
  const scaled = update(released, next, 'hpa', T(4));
  const done = ok(run(scaled, identity(), 'handover', T(5)));
  t.same(managers(done), ['main/Apply', 'hpa/Update'], 'the temporary manager is gone');
  t.equal((done.spec as { replicas: number }).replicas, 4);
});

t.test('rule 10: managedFields [{}] resets ownership; [] does not', async (t) => {
  const live = stored(ok(run(undefined, cfg(), 'kubectl', T(1))));
  const reset = clone(live);
  reset.metadata!.managedFields = [{}];
  t.same(updateManagedFields({ old: live, next: reset, manager: 'cleaner', time: T(2), apiVersion: 'apps/v1', schema, definitions: defs }), [], 'all entries stripped');
  const resetAndChange = clone(reset);
  (resetAndChange.spec as { replicas: number }).replicas = 8;
  const mf = updateManagedFields({ old: live, next: resetAndChange, manager: 'cleaner', time: T(2), apiVersion: 'apps/v1', schema, definitions: defs });
  t.same(mf.map((e) => [e.manager, e.operation, JSON.stringify(e.fieldsV1)]), [['cleaner', 'Update', '{"f:spec":{"f:replicas":{}}}']], 'reset first, then the writer owns what it changed');
  const empty = clone(live);
  empty.metadata!.managedFields = [];
  t.same(updateManagedFields({ old: live, next: empty, manager: 'x', time: T(2), apiVersion: 'apps/v1', schema, definitions: defs }), entries(live), '[] keeps the stored entries');
  // A client may rewrite managedFields directly with a non-apply write.
  const edited = clone(live);
  edited.metadata!.managedFields = [{ ...entries(live)[0], manager: 'renamed' }];
  t.same(updateManagedFields({ old: live, next: edited, manager: 'x', time: T(2), apiVersion: 'apps/v1', schema, definitions: defs }).map((e) => e.manager), ['renamed']);
});

t.test('rule 11: a list or map that became atomic is owned whole by whoever owned any part', async (t) => {
  const live = stored(cfg());
  // Ownership recorded while the selector was granular.
  live.metadata!.managedFields = [{
    manager: 'old', operation: 'Update', apiVersion: 'apps/v1', time: T(1), fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'f:selector': { 'f:matchLabels': { 'f:app': {} } } } },
  }];
  const c = conflicts(run(live, { ...identity(), spec: { selector: { matchLabels: { app: 'web', extra: 'x' } } } }, 'new', T(2)));
  t.same(c.map((x) => `${x.manager} ${x.path}`), ['old .spec.selector'], 'a change anywhere in it conflicts');
  const upd = update(live, { ...clone(live), metadata: { ...clone(live).metadata, labels: { app: 'web', x: 'y' } } }, 'other', T(3));
  t.same(owned(upd, 'old'), ['.spec.selector'], 'the old entry is rewritten to the whole struct');
  // The reverse (atomic ownership of what is now granular) derives nothing new: no conflict.
  const rev = stored(cfg());
  rev.metadata!.managedFields = [{ manager: 'old', operation: 'Update', apiVersion: 'apps/v1', time: T(1), fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': {} } } }];
  ok(run(rev, { ...identity(), metadata: { ...identity().metadata, labels: { added: 'x' } } }, 'new', T(2)));
});

t.test('rule 12: sub-resource writes keep the stored managedFields and record the sub-resource', async (t) => {
  const live = stored(ok(run(undefined, cfg(), 'kubectl', T(1))));
  const next = clone(live);
  next.status = { replicas: 3 };
  next.metadata!.managedFields = [{ manager: 'forged', operation: 'Update', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }];
  const mf = updateManagedFields({ old: live, next, manager: 'controller', time: T(2), apiVersion: 'apps/v1', schema, definitions: defs, subresource: 'status' });
  t.same(mf.map((e) => e.manager), ['kubectl', 'controller'], 'managedFields sent to a sub-resource are ignored');
  t.same(mf[1], { manager: 'controller', operation: 'Update', apiVersion: 'apps/v1', time: T(2), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:replicas': {} } }, subresource: 'status' });
  const withStatus = { ...next, metadata: { ...next.metadata, managedFields: mf } };
  const c = conflicts(run(withStatus, { ...identity(), status: { replicas: 1 } }, 'x', T(3)));
  t.equal(conflictMessage(c), 'Apply failed with 1 conflict: conflict with "controller" with subresource "status" using apps/v1: .status.replicas');
  // Fields reset by the endpoint (status on the main resource) are not owned by the writer.
  const r = ok(run(live, { ...identity(), status: { replicas: 2 } }, 'y', T(4), { resetFields: { 'f:status': {} } }));
  t.notOk(entry(r, 'y'));
});

t.test('rule 13: with the ServerSideApply feature off, apply is refused and nothing is tracked', async (t) => {
  const r = run(undefined, cfg(), 'a', T(1), { serverSideApply: false });
  t.equal('error' in r && r.error.code, 415);
  t.same(updateManagedFields({ next: cfg(), manager: 'x', time: T(1), apiVersion: 'apps/v1', schema, definitions: defs, serverSideApply: false }), []);
});

t.test('rule 14: moving from client-side apply with the default manager does not conflict on the annotation\'s fields', async (t) => {
  // An object made by client-side apply: the annotation holds the config, the client owns its fields.
  const csa = cfg({ replicas: 3 });
  const annotated = clone(csa);
  annotated.metadata!.annotations = { [LAST_APPLIED]: JSON.stringify(csa) + '\n' };
  let live = update(undefined, stored(annotated), 'kubectl-client-side-apply', T(1));
  const edit = clone(live);
  (edit.metadata!.labels as Record<string, string>).team = 'x';
  live = update(live, edit, 'kubectl-edit', T(2));
  const extra = { defaultManagerName: 'kubectl', lastAppliedAnnotation: LAST_APPLIED };

  // The same intent applied server-side, with replicas changed: allowed, ownership moves.
  const next = cfg({ replicas: 4 });
  const moved = ok(run(live, next, 'kubectl', T(3), extra));
  t.equal((moved.spec as { replicas: number }).replicas, 4);
  t.ok(owned(moved, 'kubectl').includes('.spec.replicas'));
  t.notOk(owned(moved, 'kubectl-client-side-apply').includes('.spec.replicas'));
  t.equal(moved.metadata!.annotations![LAST_APPLIED],
    '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"app":"web"},"name":"web","namespace":"default"},"spec":{"containers":[{"image":"nginx:1","name":"web"}],"replicas":4,"selector":{"matchLabels":{"app":"web"}}}}\n',
    'the annotation follows the server-side config (downgrade path)');

  // A field the annotation does not hold still conflicts.
  const c = conflicts(run(live, cfg({ replicas: 4, labels: { app: 'web', team: 'y' } }), 'kubectl', T(3), extra));
  t.same(c.map((x) => `${x.manager} ${x.path}`), ['kubectl-edit .metadata.labels.team']);
  // A non-default manager name opts out.
  const c2 = conflicts(run(live, next, 'my-tool', T(3), extra));
  t.same(c2.map((x) => `${x.manager} ${x.path}`), ['kubectl-client-side-apply .spec.replicas']);
  // The parsed annotation may also be passed in.
  ok(run(live, next, 'kubectl', T(3), { defaultManagerName: 'kubectl', lastApplied: csa }));
});

t.test('markers: atomic lists are replaced and owned whole', async (t) => {
  const live = stored(ok(run(undefined, cfg({ containers: [{ name: 'web', image: 'nginx:1', args: ['-a', '-b'] }] }), 'a', T(1))));
  const c = conflicts(run(live, { ...identity(), spec: { containers: [{ name: 'web', args: ['-c'] }] } }, 'b', T(2)));
  t.same(c.map((x) => x.path), ['.spec.containers[name="web"].args']);
  const forced = ok(run(live, { ...identity(), spec: { containers: [{ name: 'web', args: ['-c'] }] } }, 'b', T(2), { force: true }));
  t.same((forced.spec as { containers: { args: string[] }[] }).containers[0].args, ['-c']);
});

t.test('markers: sets and list-maps merge element by element, each element owned separately', async (t) => {
  const live = stored(ok(run(undefined, cfg({ finalizers: ['a/one'] }), 'a', T(1))));
  const both = ok(run(live, { ...identity(), metadata: { ...identity().metadata, finalizers: ['b/two'] }, spec: { containers: [{ name: 'log', image: 'fluent' }] } }, 'b', T(2)));
  t.same(both.metadata!.finalizers, ['a/one', 'b/two']);
  t.same((both.spec as { containers: { name: string }[] }).containers.map((c) => c.name), ['web', 'log']);
  t.same(owned(both, 'b'), ['.metadata.finalizers[="b/two"]', '.spec.containers[name="log"]', '.spec.containers[name="log"].image', '.spec.containers[name="log"].name']);
  const gone = ok(run(both, identity(), 'b', T(3)));
  t.same(gone.metadata!.finalizers, ['a/one']);
  t.same((gone.spec as { containers: { name: string }[] }).containers.map((c) => c.name), ['web']);
  t.same(managers(gone), ['a/Apply']);
});

t.test('markers: granular maps share keys; atomic structs are replaced whole', async (t) => {
  const live = stored(ok(run(undefined, cfg(), 'a', T(1))));
  const merged = ok(run(live, { ...identity(), metadata: { ...identity().metadata, labels: { team: 'x' } }, spec: { selector: { matchLabels: { app: 'web' } } } }, 'b', T(2)));
  t.same(merged.metadata!.labels, { app: 'web', team: 'x' });
  t.same(owned(merged, 'b'), ['.metadata.labels.team', '.spec.selector'], 'equal atomic value: shared');
  const sel = ok(run(merged, cfg({ selector: { tier: 'fe' } }), 'a', T(3), { force: true }));
  t.same((sel.spec as { selector: unknown }).selector, { matchLabels: { tier: 'fe' } }, 'the atomic struct is replaced, not merged');
  t.notOk(owned(sel, 'b').includes('.spec.selector'));
});

t.test('markers: unstructured objects merge maps key by key and replace lists', async (t) => {
  const base = { apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 't' } };
  const u = (live: KObject | undefined, applied: KObject, manager: string) =>
    apply({ live, applied, manager, time: T(1), apiVersion: 'example.com/v1' });
  const live = ok(u(undefined, { ...base, spec: { a: { x: 1 }, list: [1, 2] } }, 'a'));
  // Every key is a member (no declared fields); identity metadata is never owned.
  t.same(entry(live, 'a')!.fieldsV1, { 'f:spec': { '.': {}, 'f:a': { '.': {}, 'f:x': {} }, 'f:list': {} } });
  const merged = ok(u(live, { ...base, spec: { a: { y: 2 } } }, 'b')) as KObject & { spec: unknown };
  t.same(merged.spec, { a: { x: 1, y: 2 }, list: [1, 2] }, 'objects merge key by key');
  t.same(conflicts(u(merged, { ...base, spec: { list: [1, 2, 3] } }, 'b')).map((c) => c.path), ['.spec.list'], 'a list is one atomic field');
  const replaced = ok(apply({ live: merged, applied: { ...base, spec: { list: [3] } }, manager: 'a', time: T(2), apiVersion: 'example.com/v1' })) as KObject & { spec: unknown };
  t.same(replaced.spec, { a: { y: 2 }, list: [3] }, 'lists are replaced; a\'s dropped field a.x is pruned');
});

t.test('update entries: one per manager and apiVersion; sorted; capped into ancient-changes', async (t) => {
  let obj = update(undefined, stored(cfg()), 'creator', T(1));
  const bump = (o: KObject, manager: string, time: string, apiVersion = 'apps/v1', label = manager) => {
    const n = clone(o);
    (n.metadata!.labels as Record<string, string>)[label] = time;
    return update(o, n, manager, time, { apiVersion });
  };
  obj = bump(obj, 'b', T(2));
  obj = bump(obj, 'b', T(3), 'apps/v1', 'b2');
  t.same(managers(obj), ['creator/Update', 'b/Update'], 'one Update entry per manager and version');
  t.same(owned(obj, 'b'), ['.metadata.labels.b', '.metadata.labels.b2']);
  t.equal(entry(obj, 'b')!.time, T(3));
  obj = bump(obj, 'b', T(4), 'apps/v1beta2', 'b3');
  t.same(entries(obj).map((e) => `${e.manager}@${e.apiVersion}`), ['creator@apps/v1', 'b@apps/v1', 'b@apps/v1beta2']);
  const applied = ok(run(obj, { ...identity(), metadata: { ...identity().metadata, labels: { z: 'z' } } }, 'zz', T(5)));
  t.equal(entries(applied)[0].manager, 'zz', 'Apply entries sort before Update entries');
  // An update that changes nothing leaves the entries (and their times) alone.
  t.same(update(obj, clone(obj), 'noop', T(9)).metadata!.managedFields, obj.metadata!.managedFields);
  // More than ten Update entries: the oldest fold into ancient-changes.
  let many = update(undefined, stored(cfg()), 'm00', T(10));
  for (let i = 1; i <= 11; i++) many = bump(many, `m${String(i).padStart(2, '0')}`, T(10 + i));
  t.equal(entries(many).length, 10);
  const ancient = entry(many, 'ancient-changes')!;
  t.equal(ancient.time, T(12), 'the time of the newest entry folded in');
  t.ok(['.metadata.labels.m01', '.metadata.labels.m02'].every((p) => paths(fromFieldsV1(ancient.fieldsV1)).map(pathToString).includes(p)));
  t.same(entries(many).map((e) => e.manager), ['ancient-changes', 'm03', 'm04', 'm05', 'm06', 'm07', 'm08', 'm09', 'm10', 'm11']);
});

t.test('default manager names come from the User-Agent', async (t) => {
  t.equal(managerFromUserAgent('kubectl/v1.28.0 (linux/amd64) kubernetes/abc'), 'kubectl');
  t.equal(managerFromUserAgent('kube-controller-manager/v1.29.1 (linux/amd64) kubernetes/x/system:serviceaccount'), 'kube-controller-manager');
  t.equal(managerFromUserAgent('curl'), 'curl');
  t.equal(managerFromUserAgent('a\u0000b\tc/1'), 'abc', 'unprintable characters are dropped');
  t.equal(managerFromUserAgent('x'.repeat(200)).length, 128);
  t.equal(managerFromUserAgent('é'.repeat(100)).length, 64, 'truncated at 128 UTF-8 bytes');
});

t.test('runMergeTask runs apply and update-managed-fields with plain data', async (t) => {
  const r = runMergeTask({ op: 'apply', applied: cfg(), manager: 'a', time: T(1), apiVersion: 'apps/v1', schema, definitions: defs });
  t.ok(r.ok && 'apply' in r && 'object' in r.apply);
  t.same(structuredClone(r), r);
  const u = runMergeTask({ op: 'update-managed-fields', next: cfg(), manager: 'c', time: T(1), apiVersion: 'apps/v1', schema, definitions: defs });
  t.ok(u.ok && 'managedFields' in u && u.managedFields.length === 1);
});
