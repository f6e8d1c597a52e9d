// The cronjob controller over real HTTPS with `* * * * *` schedules, across two scheduled minutes:
// the first Job of each CronJob (name, owner, annotations, labels; status.active and
// lastScheduleTime), a Job marked Complete leaving active and setting lastSuccessfulTime, suspend,
// Forbid keeping the running Job (and starting the skipped minute once it fails), Replace swapping
// it, and a failed Job past failedJobsHistoryLimit deleted. The test plays the job's finish through jobs/status.
import t from 'tap';
import { until } from '../lib/poll.js';
import { createOk, getOk, podTemplate, waitFor, withWorkloadControllers } from '../lib/workloads.js';
import type { TestServer } from '../lib/server.js';

const CRONJOBS = '/apis/batch/v1/namespaces/default/cronjobs';
const JOBS = '/apis/batch/v1/namespaces/default/jobs';
const SCHEDULED = 'batch.kubernetes.io/cronjob-scheduled-timestamp';
/** Longer than a scheduled minute, on a busy machine. */
const MINUTE_WAIT = 75_000;

const cronJob = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name },
  spec: {
    schedule: '* * * * *', ...spec,
    jobTemplate: { metadata: { labels: { cron: name }, annotations: { note: 'from the template' } }, spec: { template: podTemplate({ cron: name }, 'busybox', { restartPolicy: 'Never' }) } },
  },
});

/** The Jobs a CronJob controls, not being deleted, oldest name first. */
async function jobsOf(s: TestServer, cj: any): Promise<any[]> {
  const r = await getOk(s, JOBS);
  return r.items.filter((j: any) => !j.metadata.deletionTimestamp && j.metadata.ownerReferences?.some((o: any) => o.uid === cj.metadata.uid)).sort((a: any, b: any) => a.metadata.name.localeCompare(b.metadata.name));
}
/** The reasons and messages of the core/v1 Events about a CronJob, once `want` are all there (or the wait ends). */
async function eventsOf(s: TestServer, name: string, want: string[]): Promise<string[]> {
  const read = async () => (await getOk(s, '/api/v1/namespaces/default/events')).items
    .filter((e: any) => e.involvedObject?.kind === 'CronJob' && e.involvedObject.name === name && e.source?.component === 'cronjob-controller')
    .map((e: any) => `${e.reason}: ${e.message}`);
  return until(read, (got) => want.every((w) => got.includes(w)));
}
const waitJobs = (s: TestServer, cj: any, ok: (js: any[]) => boolean) => until(() => jobsOf(s, cj), ok, MINUTE_WAIT, 250);

/** Plays the job controller's end: the Job finished as Complete or Failed, through jobs/status. */
async function finishJob(s: TestServer, name: string, type: 'Complete' | 'Failed'): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  for (;;) {
    const cur = await getOk(s, `${JOBS}/${name}`);
    const condition = { type, status: 'True', lastProbeTime: now, lastTransitionTime: now, reason: type === 'Failed' ? 'BackoffLimitExceeded' : '', message: '' };
    const status = { ...cur.status, startTime: cur.status?.startTime ?? now, conditions: [...(cur.status?.conditions ?? []), condition], active: 0 };
    if (type === 'Complete') Object.assign(status, { completionTime: now, succeeded: 1 });
    else status.failed = 1;
    const r = await s.request('PUT', `${JOBS}/${name}/status`, { body: { ...cur, status } });
    if (r.status === 200) return;
    if (r.status !== 409) throw new Error(`job status: ${r.status} ${r.text}`);
  }
}

t.test('cronjob controller', async (t) => {
  const s = await withWorkloadControllers(t, ['job', 'cronjob'], { brand: 'kubernetes' });
  const every = await createOk(s, CRONJOBS, cronJob('every'));
  const forbid = await createOk(s, CRONJOBS, cronJob('forbid', { concurrencyPolicy: 'Forbid', failedJobsHistoryLimit: 0 }));
  const replace = await createOk(s, CRONJOBS, cronJob('replace', { concurrencyPolicy: 'Replace' }));
  t.equal(every.spec.successfulJobsHistoryLimit, 3, 'defaults: three successful Jobs kept');

  // the first scheduled minute
  const [first] = await waitJobs(s, every, (js) => js.length === 1);
  t.ok(first, 'a Job at the first scheduled minute');
  const scheduledAt = Date.parse(first.metadata.annotations[SCHEDULED]);
  t.match(first.metadata.annotations[SCHEDULED], /^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/, 'the scheduled time, RFC 3339 in UTC');
  t.equal(first.metadata.name, `every-${scheduledAt / 60_000}`, 'named by the scheduled minute since the epoch');
  t.same(first.metadata.ownerReferences, [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'every', uid: every.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  t.equal(first.metadata.labels.cron, 'every', "the template's labels");
  t.equal(first.metadata.annotations.note, 'from the template', "the template's annotations");
  t.equal(first.spec.template.spec.containers[0].image, 'busybox', "the template's spec");

  let cj = await waitFor(s, `${CRONJOBS}/every`, (o) => o.status?.active?.length === 1);
  t.match(cj.status.active[0], { kind: 'Job', apiVersion: 'batch/v1', namespace: 'default', name: first.metadata.name, uid: first.metadata.uid });
  t.equal(Date.parse(cj.status.lastScheduleTime), scheduledAt, 'lastScheduleTime is the scheduled time');
  t.notOk(cj.status.lastSuccessfulTime);

  await finishJob(s, first.metadata.name, 'Complete');
  cj = await waitFor(s, `${CRONJOBS}/every`, (o) => !o.status?.active?.length && !!o.status?.lastSuccessfulTime);
  t.notOk(cj.status.active, 'a complete Job leaves active');
  t.ok(cj.status.lastSuccessfulTime, 'lastSuccessfulTime set');
  const evs = [`SuccessfulCreate: Created job ${first.metadata.name}`, `SawCompletedJob: Saw completed job: ${first.metadata.name}, status: Complete`];
  t.same((await eventsOf(s, 'every', evs)).filter((e) => evs.includes(e)).sort(), evs.sort(), 'events: the Job created, then seen complete');
  const patched = await s.request('PATCH', `${CRONJOBS}/every`, { body: { spec: { suspend: true } }, headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal(patched.status, 200, 'suspended');

  const [f1] = await waitJobs(s, forbid, (js) => js.length === 1);
  const [r1] = await waitJobs(s, replace, (js) => js.length === 1);
  t.ok(f1 && r1, 'Forbid and Replace CronJobs have their first Job');

  // the second scheduled minute: Replace swaps its running Job for a new one
  const rs = await waitJobs(s, replace, (js) => js.length === 1 && js[0].metadata.name !== r1.metadata.name);
  t.equal(rs.length, 1, 'Replace: one Job');
  t.not(rs[0].metadata.name, r1.metadata.name, 'Replace: a new Job in place of the running one');
  const rcj = await waitFor(s, `${CRONJOBS}/replace`, (o) => o.status?.active?.[0]?.name === rs[0].metadata.name);
  t.equal(rcj.status.active.length, 1, 'Replace: only the new Job active');
  const del = `SuccessfulDelete: Deleted job ${r1.metadata.name}`;
  t.ok((await eventsOf(s, 'replace', [del])).includes(del), 'events: the replaced Job deleted');
  // every CronJob's timer fired at that minute: let the controller's queue reach the other two
  const settled = await until(() => getOk(s, `${CRONJOBS}/forbid`), () => false, 3_000, 500);
  t.same((await jobsOf(s, forbid)).map((j) => j.metadata.name), [f1.metadata.name], 'Forbid: no new Job while one runs');
  t.same(settled.status.active.map((r: any) => r.name), [f1.metadata.name]);
  const skip = 'JobAlreadyActive: Not starting job because prior execution is running and concurrency policy is Forbid';
  t.ok((await eventsOf(s, 'forbid', [skip])).includes(skip), 'events: Forbid skipped a minute');
  t.same((await jobsOf(s, every)).map((j) => j.metadata.name), [first.metadata.name], 'suspended: no new Job');

  // a failed Job leaves active, and with failedJobsHistoryLimit 0 it is deleted
  await finishJob(s, f1.metadata.name, 'Failed');
  // the minute Forbid skipped is still unmet: its Job starts as soon as the running one is done
  const fcj = await waitFor(s, `${CRONJOBS}/forbid`, (o) => o.status?.active?.length === 1 && o.status.active[0].name !== f1.metadata.name);
  t.notOk(fcj.status.lastSuccessfulTime, 'a failed Job sets no lastSuccessfulTime');
  const fs = await until(() => jobsOf(s, forbid), (js) => js.length === 1 && js[0].metadata.name !== f1.metadata.name);
  t.same(fs.map((j) => j.metadata.name), [fcj.status.active[0].name], 'the failed Job past the history limit is deleted; the skipped minute starts');
  t.ok(Date.parse(fcj.status.lastScheduleTime) > Date.parse(f1.metadata.annotations[SCHEDULED]), 'lastScheduleTime moves to the skipped minute');
});
