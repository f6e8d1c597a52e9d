// The deployment controller (with the replicaset controller) over real HTTPS: the ReplicaSet per
// template with its hash label and revision annotations, a rolling update that keeps within
// maxSurge and maxUnavailable while the test marks pods ready as a kubelet would, Recreate,
// the Available and Progressing conditions, revisionHistoryLimit, pausing, and `kubectl rollout status`.
import t from 'tap';
import { kubectl, noKubectl } from '../lib/kubectl.js';
import { eventually, until } from '../lib/poll.js';
import { createOk, getOk, podsWith, podTemplate, setPodPhase, waitFor, withWorkloadControllers } from '../lib/workloads.js';
import type { TestServer } from '../lib/server.js';

const DEPLOY = '/apis/apps/v1/namespaces/default/deployments';
const RS = '/apis/apps/v1/namespaces/default/replicasets';
const merge = { 'content-type': 'application/merge-patch+json' };
const REVISION = 'deployment.kubernetes.io/revision';

const deployment = (name: string, replicas: number, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: podTemplate({ app: name }), ...extra },
});

const isReady = (p: any) => p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');

/** The deployment's ReplicaSets, oldest revision first. */
async function replicaSets(s: TestServer, app: string): Promise<any[]> {
  const r = await getOk(s, `${RS}?labelSelector=app%3D${app}`);
  return r.items.sort((a: any, b: any) => Number(a.metadata.annotations?.[REVISION]) - Number(b.metadata.annotations?.[REVISION]));
}

/** Plays the kubelet for every pending pod of the app: each becomes Running and Ready. */
async function readyAll(s: TestServer, app: string): Promise<number> {
  const pending = (await podsWith(s, { app })).filter((p) => !isReady(p));
  for (const p of pending) await setPodPhase(s, p, 'Running');
  return pending.length;
}

const cond = (d: any, type: string) => d.status?.conditions?.find((c: any) => c.type === type);

t.test('deployment controller', async (t) => {
  const s = await withWorkloadControllers(t, ['replicaset', 'deployment'], { brand: 'kubernetes' });
  const patch = (name: string, body: unknown) => s.request('PATCH', `${DEPLOY}/${name}`, { body, headers: merge });

  await t.test('a new deployment gets a ReplicaSet per template and becomes available', async (t) => {
    const d = await createOk(s, DEPLOY, deployment('web', 3));
    const [rs] = await until(() => replicaSets(s, 'web'), (l) => l.length === 1);
    const hash = rs.metadata.labels['pod-template-hash'];
    t.match(hash, /^[bcdfghjklmnpqrstvwxz2456789]+$/, 'hash in the reference alphabet');
    t.equal(rs.metadata.name, `web-${hash}`);
    t.same(rs.spec.selector.matchLabels, { app: 'web', 'pod-template-hash': hash });
    t.equal(rs.spec.template.metadata.labels['pod-template-hash'], hash);
    t.same(rs.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: d.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    t.equal(rs.metadata.annotations[REVISION], '1');
    t.equal(rs.metadata.annotations['deployment.kubernetes.io/desired-replicas'], '3');
    t.equal(rs.metadata.annotations['deployment.kubernetes.io/max-replicas'], '4', '3 + 25% surge rounded up');
    t.equal(rs.spec.replicas, 3);

    t.ok(await eventually(async () => (await podsWith(s, { app: 'web' })).length === 3), 'three pods');
    const before = await waitFor(s, `${DEPLOY}/web`, (o) => o.status?.replicas === 3 && o.status?.observedGeneration === 1);
    t.equal(before.status.unavailableReplicas, 3);
    t.equal(cond(before, 'Available')?.status, 'False', 'nothing available yet (maxUnavailable rounds down to 0)');
    t.equal(cond(before, 'Available')?.reason, 'MinimumReplicasUnavailable');

    await readyAll(s, 'web');
    const after = await waitFor(s, `${DEPLOY}/web`, (o) => o.status?.availableReplicas === 3 && cond(o, 'Progressing')?.reason === 'NewReplicaSetAvailable');
    t.match(after.status, { replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3, observedGeneration: 1 });
    t.notOk(after.status.unavailableReplicas);
    t.match(cond(after, 'Available'), { status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' });
    t.match(cond(after, 'Progressing'), { status: 'True', reason: 'NewReplicaSetAvailable', message: `ReplicaSet "web-${hash}" has successfully progressed.` });
    t.equal(after.metadata.annotations[REVISION], '1', 'the deployment carries its revision');
  });

  await t.test('kubectl rollout status succeeds once the pods are ready', { skip: noKubectl }, async (t) => {
    const r = await kubectl(s, ['rollout', 'status', 'deployment/web', '--timeout=60s']);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /successfully rolled out/);
  });

  await t.test('kubectl create deployment, then rollout status once a kubelet reports the pods ready', { skip: noKubectl }, async (t) => {
    const c = await kubectl(s, ['create', 'deployment', 'kc', '--image=nginx', '--replicas=5']);
    t.equal(c.code, 0, c.stderr);
    const waiting = kubectl(s, ['rollout', 'status', 'deployment/kc', '--timeout=120s']);
    await until(async () => { await readyAll(s, 'kc'); return getOk(s, `${DEPLOY}/kc`); }, (o) => o.status?.availableReplicas === 5);
    const r = await waiting;
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /deployment "kc" successfully rolled out/);
  });

  await t.test('a rolling update keeps within maxSurge and maxUnavailable', async (t) => {
    // 4 replicas, surge 1, unavailable 1: never more than 5 pods wanted, never fewer than 3 available
    t.equal((await patch('web', { spec: { replicas: 4, strategy: { rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } } } })).status, 200);
    await until(async () => { await readyAll(s, 'web'); return getOk(s, `${DEPLOY}/web`); }, (o) => o.status?.availableReplicas === 4 && o.status?.observedGeneration === 2);
    t.equal((await patch('web', { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } })).status, 200);
    let worstSurge = 0;
    let worstAvailable = Infinity;
    const done = await until(async () => {
      const sets = await replicaSets(s, 'web');
      worstSurge = Math.max(worstSurge, sets.reduce((n, rs) => n + rs.spec.replicas, 0));
      const pods = await podsWith(s, { app: 'web' });
      worstAvailable = Math.min(worstAvailable, pods.filter(isReady).length);
      await readyAll(s, 'web');
      return sets;
    }, (sets) => sets.length === 2 && sets[0].spec.replicas === 0 && sets[1].spec.replicas === 4 && sets[1].status?.availableReplicas === 4);
    t.equal(done.length, 2, 'old and new ReplicaSets');
    t.equal(done[1].metadata.annotations[REVISION], '2', 'the new one is revision 2');
    t.not(done[1].metadata.labels['pod-template-hash'], done[0].metadata.labels['pod-template-hash']);
    t.equal(done[0].spec.replicas, 0, 'the old one scaled to zero');
    t.ok(worstSurge <= 5, `at most replicas + maxSurge pods wanted (saw ${worstSurge})`);
    t.ok(worstAvailable >= 3, `at least replicas - maxUnavailable ready (saw ${worstAvailable})`);
    const d = await waitFor(s, `${DEPLOY}/web`, (o) => o.status?.updatedReplicas === 4 && o.status?.replicas === 4 && cond(o, 'Progressing')?.reason === 'NewReplicaSetAvailable');
    t.equal(d.metadata.annotations[REVISION], '2');
    t.ok((await podsWith(s, { app: 'web' })).every((p) => p.spec.containers[0].image === 'nginx:2'), 'every pod runs the new template');
  });

  await t.test('Recreate removes the old pods before any new one, and revisionHistoryLimit removes the old ReplicaSet', async (t) => {
    await createOk(s, DEPLOY, deployment('rec', 2, { strategy: { type: 'Recreate' }, revisionHistoryLimit: 0 }));
    await until(async () => { await readyAll(s, 'rec'); return getOk(s, `${DEPLOY}/rec`); }, (o) => o.status?.availableReplicas === 2);
    const [first] = await replicaSets(s, 'rec');
    t.equal((await patch('rec', { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } })).status, 200);
    let overlap = false;
    await until(async () => {
      const pods = await podsWith(s, { app: 'rec' });
      const hashes = new Set(pods.map((p) => p.metadata.labels['pod-template-hash']));
      if (hashes.size > 1) overlap = true;
      await readyAll(s, 'rec');
      return getOk(s, `${DEPLOY}/rec`);
    }, (o) => o.status?.observedGeneration === 2 && o.status?.availableReplicas === 2 && o.status?.updatedReplicas === 2 && o.status?.replicas === 2);
    t.notOk(overlap, 'never old and new pods at once');
    t.ok(await eventually(async () => (await s.get(`${RS}/${first.metadata.name}`)).status === 404), 'the old ReplicaSet is deleted (revisionHistoryLimit 0)');
    t.equal((await replicaSets(s, 'rec')).length, 1);
  });

  await t.test('a paused deployment scales but does not roll out', async (t) => {
    t.equal((await patch('rec', { spec: { paused: true } })).status, 200);
    const paused = await waitFor(s, `${DEPLOY}/rec`, (o) => cond(o, 'Progressing')?.reason === 'DeploymentPaused');
    t.match(cond(paused, 'Progressing'), { status: 'Unknown', message: 'Deployment is paused' });
    t.equal((await patch('rec', { spec: { replicas: 3, template: { spec: { containers: [{ name: 'c', image: 'nginx:3' }] } } } })).status, 200);
    const sets = await until(() => replicaSets(s, 'rec'), (l) => l[0]?.spec.replicas === 3);
    t.equal(sets.length, 1, 'no new ReplicaSet while paused');
    t.equal(sets[0].spec.replicas, 3, 'the current one scaled');
    t.equal((await patch('rec', { spec: { paused: false } })).status, 200);
    const resumed = await until(() => replicaSets(s, 'rec'), (l) => l.length === 2 || l.some((rs) => rs.spec.template.spec.containers[0].image === 'nginx:3'));
    t.ok(resumed.some((rs) => rs.spec.template.spec.containers[0].image === 'nginx:3'), 'resuming rolls out the new template');
  });

  await t.test('scaling in the middle of a stalled rollout shares the change in proportion (upstream\'s 10 → 30 case)', async (t) => {
    const strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 3, maxUnavailable: 2 } };
    await createOk(s, DEPLOY, deployment('prop', 10, { strategy }));
    await until(async () => { await readyAll(s, 'prop'); return getOk(s, `${DEPLOY}/prop`); }, (d) => d.status?.availableReplicas === 10);
    // a new template whose pods never become ready: the rollout stalls at 8 old and 5 new
    t.equal((await patch('prop', { spec: { template: { spec: { containers: [{ name: 'c', image: 'webserver:404' }] } } } })).status, 200);
    const stalled = await until(() => replicaSets(s, 'prop'), (l) => l.length === 2 && l[0].spec.replicas === 8 && l[1].spec.replicas === 5);
    t.same(stalled.map((rs) => rs.spec.replicas), [8, 5], 'old 8, new 5 (10 + 3 surge, 2 unavailable)');
    t.equal((await patch('prop', { spec: { replicas: 30 } })).status, 200);
    const scaled = await until(() => replicaSets(s, 'prop'), (l) => l.reduce((n, rs) => n + rs.spec.replicas, 0) === 33);
    t.same(scaled.map((rs) => rs.spec.replicas), [20, 13], 'the reference\'s split: 8·33/13 ≈ 20 and 5·33/13 ≈ 13');
  });

  await t.test('deleting the deployment collects its ReplicaSets and pods', async (t) => {
    t.equal((await s.request('DELETE', `${DEPLOY}/web`)).status, 200);
    t.ok(await eventually(async () => (await replicaSets(s, 'web')).length === 0 && (await podsWith(s, { app: 'web' })).length === 0));
  });
});
