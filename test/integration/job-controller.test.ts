// The job controller over real HTTPS, the test playing the kubelet: pods per parallelism and
// completions with the job-tracking finalizer (removed once counted), ready/active/succeeded/failed
// counts, Complete, Failed past backoffLimit and activeDeadlineSeconds, Indexed jobs, and the pods
// of a deleted Job going despite the finalizer.
import t from 'tap';
import { eventually } from '../lib/poll.js';
import { createOk, getOk, podTemplate, setPodPhase, waitFor, withWorkloadControllers } from '../lib/workloads.js';
import type { TestServer } from '../lib/server.js';

const JOBS = '/apis/batch/v1/namespaces/default/jobs';
const PODS = '/api/v1/namespaces/default/pods';
const FINALIZER = 'batch.kubernetes.io/job-tracking';
const INDEX = 'batch.kubernetes.io/job-completion-index';

const job = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'batch/v1', kind: 'Job', metadata: { name },
  spec: { template: podTemplate({ app: name }, 'busybox', { restartPolicy: 'Never' }), ...spec },
});

/** The Job's pods that are not finished (or all of them), by the job-name label the API server adds. */
async function jobPods(s: TestServer, name: string, unfinished = true): Promise<any[]> {
  const r = await getOk(s, `${PODS}?labelSelector=${encodeURIComponent(`batch.kubernetes.io/job-name=${name}`)}`);
  return r.items.filter((p: any) => !unfinished || (!p.metadata.deletionTimestamp && !['Succeeded', 'Failed'].includes(p.status?.phase)));
}
const waitJobPods = async (s: TestServer, name: string, n: number) => {
  let got: any[] = [];
  await eventually(async () => (got = await jobPods(s, name)).length === n);
  return got;
};
const cond = (j: any, type: string) => j.status?.conditions?.find((c: any) => c.type === type);

t.test('job controller', async (t) => {
  const s = await withWorkloadControllers(t, ['job'], { brand: 'kubernetes' });

  await t.test('runs pods in parallel and completes when they succeed', async (t) => {
    const j = await createOk(s, JOBS, job('par', { completions: 2, parallelism: 2 }));
    const pods = await waitJobPods(s, 'par', 2);
    for (const p of pods) {
      t.match(p.metadata.name, /^par-[a-z0-9]{5}$/);
      t.same(p.metadata.ownerReferences, [{ apiVersion: 'batch/v1', kind: 'Job', name: 'par', uid: j.metadata.uid, controller: true, blockOwnerDeletion: true }]);
      t.ok(p.metadata.finalizers.includes(FINALIZER), 'the job-tracking finalizer');
      t.equal(p.metadata.labels['batch.kubernetes.io/controller-uid'], j.metadata.uid);
    }
    const started = await waitFor(s, `${JOBS}/par`, (o) => o.status?.active === 2);
    t.ok(started.status.startTime, 'startTime set');
    t.equal(started.status.ready, 0);
    await setPodPhase(s, pods[0], 'Running');
    await waitFor(s, `${JOBS}/par`, (o) => o.status?.ready === 1);
    await setPodPhase(s, pods[0], 'Succeeded');
    const half = await waitFor(s, `${JOBS}/par`, (o) => o.status?.succeeded === 1);
    t.equal(half.status.active, 1);
    t.notOk(cond(half, 'Complete'), 'not complete with one of two done');
    await setPodPhase(s, pods[1], 'Succeeded');
    const done = await waitFor(s, `${JOBS}/par`, (o) => cond(o, 'Complete')?.status === 'True');
    t.equal(done.status.succeeded, 2);
    t.notOk(done.status.active);
    t.ok(done.status.completionTime, 'completionTime set');
    t.same(done.status.uncountedTerminatedPods, {});
    t.ok(await eventually(async () => (await jobPods(s, 'par', false)).every((p) => !(p.metadata.finalizers ?? []).includes(FINALIZER))), 'finalizers removed once counted');
    t.equal((await jobPods(s, 'par', false)).length, 2, 'no more pods made');
  });

  await t.test('completions run one after another with parallelism 1', async (t) => {
    await createOk(s, JOBS, job('seq', { completions: 3, parallelism: 1 }));
    for (let i = 1; i <= 3; i++) {
      const [p] = await waitJobPods(s, 'seq', 1);
      t.ok(p, `pod ${i}`);
      await setPodPhase(s, p, 'Succeeded');
      await waitFor(s, `${JOBS}/seq`, (o) => o.status?.succeeded === i);
    }
    const done = await waitFor(s, `${JOBS}/seq`, (o) => cond(o, 'Complete'));
    t.equal(done.status.succeeded, 3);
    t.equal((await jobPods(s, 'seq', false)).length, 3, 'three pods in all');
  });

  await t.test('fails past backoffLimit', async (t) => {
    await createOk(s, JOBS, job('flaky', { backoffLimit: 1 }));
    for (let i = 1; i <= 2; i++) {
      const [p] = await waitJobPods(s, 'flaky', 1);
      await setPodPhase(s, p, 'Failed');
      await waitFor(s, `${JOBS}/flaky`, (o) => o.status?.failed === i);
    }
    const failed = await waitFor(s, `${JOBS}/flaky`, (o) => cond(o, 'Failed'));
    t.match(cond(failed, 'Failed'), { status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' });
    t.equal(failed.status.failed, 2);
    t.notOk(cond(failed, 'Complete'));
    t.equal((await jobPods(s, 'flaky')).length, 0, 'no new pod after the failure');
  });

  await t.test('fails past activeDeadlineSeconds and removes its running pods', async (t) => {
    await createOk(s, JOBS, job('slow', { activeDeadlineSeconds: 1, parallelism: 2, completions: 4 }));
    const pods = await waitJobPods(s, 'slow', 2);
    await setPodPhase(s, pods[0], 'Running');
    const failed = await waitFor(s, `${JOBS}/slow`, (o) => cond(o, 'Failed'));
    t.match(cond(failed, 'Failed'), { reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' });
    t.ok(await eventually(async () => (await jobPods(s, 'slow', false)).length === 0), 'the active pods are deleted (finalizers removed)');
  });

  await t.test('Indexed jobs give each pod its completion index', async (t) => {
    await createOk(s, JOBS, job('idx', { completionMode: 'Indexed', completions: 3, parallelism: 3 }));
    const pods = await waitJobPods(s, 'idx', 3);
    const byIndex = new Map(pods.map((p) => [p.metadata.annotations[INDEX], p]));
    t.same([...byIndex.keys()].sort(), ['0', '1', '2']);
    for (const [i, p] of byIndex) {
      t.equal(p.metadata.labels[INDEX], i, 'index label');
      t.match(p.metadata.name, new RegExp(`^idx-${i}-[a-z0-9]{5}$`));
      t.equal(p.spec.hostname, `idx-${i}`);
      t.ok(p.spec.containers[0].env.some((e: any) => e.name === 'JOB_COMPLETION_INDEX'));
    }
    await setPodPhase(s, byIndex.get('1'), 'Succeeded');
    await waitFor(s, `${JOBS}/idx`, (o) => o.status?.completedIndexes === '1');
    await setPodPhase(s, byIndex.get('0'), 'Failed');
    const redo = await eventually(async () => (await jobPods(s, 'idx')).some((p) => p.metadata.annotations[INDEX] === '0'));
    t.ok(redo, 'a failed index gets a new pod');
    for (const p of await jobPods(s, 'idx')) await setPodPhase(s, p, 'Succeeded');
    const done = await waitFor(s, `${JOBS}/idx`, (o) => cond(o, 'Complete'));
    t.equal(done.status.completedIndexes, '0-2');
    t.equal(done.status.succeeded, 3);
    t.equal(done.status.failed, 1);
  });

  await t.test('a deleted Job takes its pods along, finalizers and all', async (t) => {
    await createOk(s, JOBS, job('gone', { parallelism: 2, completions: 2 }));
    await waitJobPods(s, 'gone', 2);
    t.equal((await s.request('DELETE', `${JOBS}/gone`, { body: { propagationPolicy: 'Background' } })).status, 200);
    t.ok(await eventually(async () => (await jobPods(s, 'gone', false)).length === 0), 'pods collected');

    // the batch/v1 default orphans the pods: they stay, no longer held by the finalizer
    await createOk(s, JOBS, job('left', { parallelism: 1 }));
    await waitJobPods(s, 'left', 1);
    t.equal((await s.request('DELETE', `${JOBS}/left`)).status, 200);
    t.ok(await eventually(async () => (await jobPods(s, 'left', false)).every((p) => !p.metadata.ownerReferences && !(p.metadata.finalizers ?? []).includes(FINALIZER))), 'orphaned pods lose the finalizer');
  });
});
