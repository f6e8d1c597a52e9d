// The replicaset controller over real HTTPS: pods made from the template with controller
// references, scaling both ways (least valuable pods first), status following the readiness the
// test sets as a kubelet would, orphan adoption and release, minReadySeconds, ReplicationControllers,
// and the garbage collector removing the pods of a deleted ReplicaSet.
import t from 'tap';
import { eventually } from '../lib/poll.js';
import { createOk, getOk, podsWith, podTemplate, setPodPhase, waitFor, waitPods, withWorkloadControllers } from '../lib/workloads.js';

const RS = '/apis/apps/v1/namespaces/default/replicasets';
const RC = '/api/v1/namespaces/default/replicationcontrollers';
const PODS = '/api/v1/namespaces/default/pods';
const merge = { 'content-type': 'application/merge-patch+json' };

const rs = (name: string, replicas: number, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: podTemplate({ app: name, tier: 'web' }), ...extra },
});

t.test('replicaset controller', async (t) => {
  const s = await withWorkloadControllers(t, ['replicaset']);
  const scale = (name: string, replicas: number) => s.request('PATCH', `${RS}/${name}`, { body: { spec: { replicas } }, headers: merge });

  await t.test('creates owned pods from the template and counts them', async (t) => {
    const owner = await createOk(s, RS, rs('web', 3));
    const pods = await waitPods(s, { app: 'web' }, 3);
    for (const p of pods) {
      t.match(p.metadata.name, /^web-[a-z0-9]{5}$/, 'generated name');
      t.same(p.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true }]);
      t.same(p.metadata.labels, { app: 'web', tier: 'web' });
    }
    const st = await waitFor(s, `${RS}/web`, (o) => o.status?.replicas === 3);
    t.equal(st.status.fullyLabeledReplicas, 3);
    t.equal(st.status.observedGeneration, 1);
    t.notOk(st.status.readyReplicas, 'no pod is ready yet');

    await setPodPhase(s, pods[0], 'Running');
    await setPodPhase(s, pods[1], 'Running');
    const ready = await waitFor(s, `${RS}/web`, (o) => o.status?.readyReplicas === 2 && o.status?.availableReplicas === 2);
    t.equal(ready.status.readyReplicas, 2, 'ready pods counted');
    t.equal(ready.status.availableReplicas, 2, 'available without minReadySeconds');
  });

  await t.test('scales up, then down keeping the ready pods', async (t) => {
    t.equal((await scale('web', 5)).status, 200);
    await waitPods(s, { app: 'web' }, 5);
    const st = await waitFor(s, `${RS}/web`, (o) => o.status?.replicas === 5 && o.status?.observedGeneration === 2);
    t.equal(st.status.replicas, 5);
    const readyNames = (await podsWith(s, { app: 'web' })).filter((p) => p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True')).map((p) => p.metadata.name).sort();
    t.equal(readyNames.length, 2);
    t.equal((await scale('web', 2)).status, 200);
    const left = await waitPods(s, { app: 'web' }, 2);
    t.same(left.map((p) => p.metadata.name).sort(), readyNames, 'the pending, not-ready pods went first');
    await waitFor(s, `${RS}/web`, (o) => o.status?.replicas === 2 && o.status?.readyReplicas === 2);
  });

  await t.test('adopts a matching orphan and releases a pod it no longer selects', async (t) => {
    const orphan = await createOk(s, PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'stray', labels: { app: 'adopt' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    const owner = await createOk(s, RS, rs('adopt', 2));
    const pods = await waitPods(s, { app: 'adopt' }, 2);
    t.ok(pods.some((p) => p.metadata.name === 'stray'), 'the orphan counts as one of the replicas');
    const adopted = await waitFor(s, `${PODS}/stray`, (p) => p.metadata.ownerReferences?.length === 1);
    t.equal(adopted.metadata.ownerReferences[0].uid, owner.metadata.uid);
    t.equal(adopted.metadata.ownerReferences[0].controller, true);
    t.not(adopted.metadata.uid, undefined);
    t.equal(orphan.metadata.uid, adopted.metadata.uid, 'the same pod, not a new one');

    const r = await s.request('PATCH', `${PODS}/stray`, { body: { metadata: { labels: { app: 'elsewhere' } } }, headers: merge });
    t.equal(r.status, 200);
    t.ok(await eventually(async () => !(await getOk(s, `${PODS}/stray`)).metadata.ownerReferences), 'released: no owner reference left');
    const now = await waitPods(s, { app: 'adopt' }, 2);
    t.notOk(now.some((p) => p.metadata.name === 'stray'), 'a replacement was made');
  });

  await t.test('availableReplicas waits for minReadySeconds', async (t) => {
    await createOk(s, RS, rs('slow', 1, { minReadySeconds: 1 }));
    const [pod] = await waitPods(s, { app: 'slow' }, 1);
    await setPodPhase(s, pod, 'Running');
    const st = await waitFor(s, `${RS}/slow`, (o) => o.status?.availableReplicas === 1);
    t.equal(st.status.readyReplicas, 1);
    t.equal(st.status.availableReplicas, 1, 'available once ready for a second, with no other event to prompt it');
  });

  await t.test('ReplicationControllers are served by the same controller', async (t) => {
    const owner = await createOk(s, RC, { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'legacy' }, spec: { replicas: 2, selector: { app: 'legacy' }, template: podTemplate({ app: 'legacy' }) } });
    const pods = await waitPods(s, { app: 'legacy' }, 2);
    for (const p of pods) t.same(p.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'ReplicationController', name: 'legacy', uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    await setPodPhase(s, pods[0], 'Running');
    const st = await waitFor(s, `${RC}/legacy`, (o) => o.status?.readyReplicas === 1);
    t.equal(st.status.replicas, 2);
  });

  await t.test('a quota that refuses its pods surfaces ReplicaFailure, gone once it fits', async (t) => {
    const NS = '/api/v1/namespaces/quota-rc';
    t.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'quota-rc' } } })).status, 201);
    t.equal((await s.request('POST', `${NS}/resourcequotas`, { body: { metadata: { name: 'two-pods' }, spec: { hard: { pods: '2' } } } })).status, 201);
    await waitFor(s, `${NS}/resourcequotas/two-pods`, (q) => q.status?.hard?.pods === '2');
    const rc = { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'over' }, spec: { replicas: 3, selector: { app: 'over' }, template: podTemplate({ app: 'over' }) } };
    t.equal((await s.request('POST', `${NS}/replicationcontrollers`, { body: rc })).status, 201);
    const failing = await waitFor(s, `${NS}/replicationcontrollers/over`, (o) => (o.status?.conditions ?? []).some((c: any) => c.type === 'ReplicaFailure'));
    t.match(failing.status.conditions.find((c: any) => c.type === 'ReplicaFailure'), { status: 'True', reason: 'FailedCreate', message: /exceeded quota: two-pods/ });
    t.equal((await s.request('PATCH', `${NS}/replicationcontrollers/over`, { body: { spec: { replicas: 2 } }, headers: merge })).status, 200);
    const fits = await waitFor(s, `${NS}/replicationcontrollers/over`, (o) => !(o.status?.conditions ?? []).some((c: any) => c.type === 'ReplicaFailure') && o.status?.replicas === 2);
    t.equal(fits.status.replicas, 2, 'the condition goes once the replicas fit');
  });

  await t.test('deleting a ReplicaSet lets the garbage collector remove its pods', async (t) => {
    t.equal((await s.request('DELETE', `${RS}/web`)).status, 200);
    t.ok(await eventually(async () => (await podsWith(s, { app: 'web' })).length === 0), 'pods collected');
  });
});
