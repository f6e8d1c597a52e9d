// The statefulset controller over real HTTPS, the test playing the kubelet: ordered creation
// (ordinal N+1 only after N is Running and Ready), stable names, hostnames and claims, the
// revision label, status counts and revisions, scale-down from the highest ordinal, a rolling update.
import t from 'tap';
import { eventually, until } from '../lib/poll.js';
import { sleep, type TestServer } from '../lib/server.js';
import { createOk, getOk, podTemplate, setPodPhase, waitFor, withWorkloadControllers } from '../lib/workloads.js';

const STS = '/apis/apps/v1/namespaces/default/statefulsets';
const PODS = '/api/v1/namespaces/default/pods';
const merge = { 'content-type': 'application/merge-patch+json' };

/** The set's pods by name, not being deleted. */
async function pods(s: TestServer, app: string): Promise<Map<string, any>> {
  const r = await getOk(s, `${PODS}?labelSelector=app%3D${app}`);
  return new Map(r.items.filter((p: any) => !p.metadata.deletionTimestamp).map((p: any) => [p.metadata.name, p]));
}
const isReady = (p: any) => p?.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');

t.test('statefulset controller', async (t) => {
  const s = await withWorkloadControllers(t, ['statefulset'], { brand: 'kubernetes' });

  await t.test('pods are made in order, each after the previous is ready', async (t) => {
    const set = await createOk(s, STS, {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' },
      spec: {
        replicas: 3, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: podTemplate({ app: 'db' }),
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      },
    });
    const first = await until(() => pods(s, 'db'), (m) => m.size > 0);
    const p0 = first.get('db-0');
    t.ok(p0, 'db-0 first');
    t.same(p0.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: set.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    t.equal(p0.metadata.labels['statefulset.kubernetes.io/pod-name'], 'db-0');
    t.equal(p0.metadata.labels['apps.kubernetes.io/pod-index'], '0');
    t.match(p0.metadata.labels['controller-revision-hash'], /^db-[bcdfghjklmnpqrstvwxz2456789]+$/);
    t.equal(p0.spec.hostname, 'db-0');
    t.equal(p0.spec.subdomain, 'db');
    t.same(p0.spec.volumes.find((v: any) => v.name === 'data'), { name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } });
    t.equal((await s.get('/api/v1/namespaces/default/persistentvolumeclaims/data-db-0')).status, 200, 'claim made for the ordinal');
    const rev = await getOk(s, `/apis/apps/v1/namespaces/default/controllerrevisions/${p0.metadata.labels['controller-revision-hash']}`);
    t.equal(rev.revision, 1, 'the ControllerRevision of the template');

    await waitFor(s, `${STS}/db`, (o) => o.status?.replicas === 1);
    await sleep(300);
    t.notOk((await pods(s, 'db')).has('db-1'), 'db-1 waits while db-0 is not ready');
    for (const [i, next] of [[0, 'db-1'], [1, 'db-2']] as const) {
      const m = await pods(s, 'db');
      await setPodPhase(s, m.get(`db-${i}`), 'Running');
      const after = await until(() => pods(s, 'db'), (x) => x.has(next));
      t.ok(after.has(next), `${next} follows once db-${i} is ready`);
      t.ok([...after.keys()].every((n) => n <= next), 'nothing beyond it');
    }
    await setPodPhase(s, (await pods(s, 'db')).get('db-2'), 'Running');
    const st = await waitFor(s, `${STS}/db`, (o) => o.status?.readyReplicas === 3);
    t.match(st.status, { replicas: 3, readyReplicas: 3, currentReplicas: 3, updatedReplicas: 3, availableReplicas: 3, observedGeneration: 1, collisionCount: 0 });
    t.equal(st.status.currentRevision, p0.metadata.labels['controller-revision-hash']);
    t.equal(st.status.updateRevision, st.status.currentRevision);
  });

  await t.test('a rolling update replaces pods from the highest ordinal down', async (t) => {
    const before = await getOk(s, `${STS}/db`);
    t.equal((await s.request('PATCH', `${STS}/db`, { body: { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } }, headers: merge })).status, 200);
    const mid = await waitFor(s, `${STS}/db`, (o) => o.status?.updateRevision && o.status.updateRevision !== before.status.updateRevision);
    t.equal(mid.status.currentRevision, before.status.currentRevision, 'current revision kept during the update');
    const order: string[] = [];
    const done = await until(async () => {
      const m = await pods(s, 'db');
      for (const [n, p] of m) {
        if (p.metadata.labels['controller-revision-hash'] === mid.status.updateRevision && !order.includes(n)) order.push(n);
        if (!isReady(p)) await setPodPhase(s, p, 'Running');
      }
      return getOk(s, `${STS}/db`);
    }, (o) => o.status?.currentRevision === mid.status.updateRevision && o.status?.readyReplicas === 3);
    t.same(order, ['db-2', 'db-1', 'db-0'], 'highest ordinal first');
    t.equal(done.status.updatedReplicas, 3);
  });

  await t.test('with a partition, a pod below it deleted comes back from the current revision\'s template', async (t) => {
    const before = await getOk(s, `${STS}/db`);
    const image = (o: any) => o.spec.containers[0].image;
    const patch = { spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } }, template: { spec: { containers: [{ name: 'c', image: 'nginx:3' }] } } } };
    t.equal((await s.request('PATCH', `${STS}/db`, { body: patch, headers: merge })).status, 200);
    const mid = await until(async () => {
      for (const p of (await pods(s, 'db')).values()) if (!isReady(p)) await setPodPhase(s, p, 'Running');
      return getOk(s, `${STS}/db`);
    }, (o) => o.status?.updatedReplicas === 1 && o.status?.readyReplicas === 3);
    t.not(mid.status.updateRevision, before.status.updateRevision);
    const old = (await pods(s, 'db')).get('db-0');
    t.equal(image(old), 'nginx:2', 'below the partition: the old image');
    t.equal((await s.request('DELETE', `${PODS}/db-0?gracePeriodSeconds=0`)).status, 200);
    const back = await until(async () => (await pods(s, 'db')).get('db-0'), (p) => p && p.metadata.uid !== old.metadata.uid);
    t.equal(image(back), 'nginx:2', 'made again from the current revision');
    t.equal(back.metadata.labels['controller-revision-hash'], mid.status.currentRevision);
    t.equal(image((await pods(s, 'db')).get('db-2')), 'nginx:3', 'at and above the partition: the new image');
    // the partition lifted: the rest follow
    t.equal((await s.request('PATCH', `${STS}/db`, { body: { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } }, headers: merge })).status, 200);
    await until(async () => {
      for (const p of (await pods(s, 'db')).values()) if (!isReady(p)) await setPodPhase(s, p, 'Running');
      return getOk(s, `${STS}/db`);
    }, (o) => o.status?.updatedReplicas === 3 && o.status?.readyReplicas === 3 && o.status?.currentRevision === o.status?.updateRevision);
    t.same([...(await pods(s, 'db')).values()].map(image), ['nginx:3', 'nginx:3', 'nginx:3']);
  });

  await t.test('scaling down removes the highest ordinals', async (t) => {
    t.equal((await s.request('PATCH', `${STS}/db`, { body: { spec: { replicas: 1 } }, headers: merge })).status, 200);
    const m = await until(() => pods(s, 'db'), (x) => x.size === 1);
    t.same([...m.keys()], ['db-0']);
    await waitFor(s, `${STS}/db`, (o) => o.status?.replicas === 1);
  });

  await t.test('deleting the set collects its pods', async (t) => {
    t.equal((await s.request('DELETE', `${STS}/db`)).status, 200);
    t.ok(await eventually(async () => (await pods(s, 'db')).size === 0));
  });
});
