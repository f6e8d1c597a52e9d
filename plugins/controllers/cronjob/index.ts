// The cronjob controller (the reference's CronJob controller v2): at each time of spec.schedule it
// creates a Job from spec.jobTemplate named <cronjob>-<scheduled minute since the epoch>, honouring
// startingDeadlineSeconds, suspend and concurrencyPolicy (Allow, Forbid, Replace); it keeps
// status.active, lastScheduleTime and lastSuccessfulTime, and deletes the oldest finished Jobs past
// the history limits. One timer per CronJob wakes it at its next time; there is no polling loop.
// Times are in spec.timeZone, else UTC (the reference uses the controller manager's local zone).
// Events as the reference writes them, through the core/v1 recorder (plugins/lib/core-events.ts).
import { CONTRACT_VERSION, type KObject, type PluginHost, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../lib/json.js';
import { controllerOf, controllerQueue, controllerRef, isNamespaceTerminating, isNotFound, nowTime, writeStatus } from '../../lib/workload.js';
import { recordEvent } from '../../lib/core-events.js';
import { formatInZone, parseSchedule, type Schedule } from './schedule.js';

/** How late after its time a CronJob is looked at, so the time has surely passed (the reference's nextScheduleDelta). */
const SLACK_MS = 100;
/** The longest a timer waits before it is set again (setTimeout takes at most 2^31-1 ms). */
const MAX_TIMER_MS = 24 * 3600_000;
/** More missed times than this is "too many" for the reference (it warns, and starts the latest one). */
const TOO_MANY_MISSED = 100;

const finishedAs = (job: KObject) => list((job.status as J | undefined)?.conditions).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')?.type as 'Complete' | 'Failed' | undefined;
const ms = (t: unknown) => (typeof t === 'string' ? Date.parse(t) : NaN);

/** The latest schedule time in [known, now], looking back from now over a doubling window (a long gap is not walked time by time). */
function latestUpTo(sched: Schedule, known: number, now: number): number {
  for (let w = 60_000; ; w *= 2) {
    const from = Math.max(known, now - w);
    let recent = from === known ? known : undefined;
    for (let t = sched.next(from); t !== undefined && t <= now; t = sched.next(t)) recent = t;
    if (recent !== undefined) return recent;
  }
}

/** The latest schedule time not after `now` since the last one (or the creation), and what the next wake-up bases on. */
export function mostRecentTime(cj: KObject, now: number, sched: Schedule, withDeadline: boolean): { earliest: number; recent?: number; missed: number } {
  const status: J = isObj(cj.status) ? cj.status : {};
  const spec: J = isObj(cj.spec) ? cj.spec : {};
  let earliest = ms(status.lastScheduleTime);
  if (Number.isNaN(earliest)) earliest = ms(cj.metadata?.creationTimestamp) || now;
  if (withDeadline && typeof spec.startingDeadlineSeconds === 'number') earliest = Math.max(earliest, now - spec.startingDeadlineSeconds * 1000);
  let recent: number | undefined;
  let missed = 0;
  for (let t = sched.next(earliest); t !== undefined && t <= now; t = sched.next(t)) {
    recent = t;
    // past "too many" the count no longer matters, only the latest time does
    if (++missed > TOO_MANY_MISSED) {
      recent = latestUpTo(sched, t, now);
      break;
    }
  }
  return { earliest, recent, missed };
}

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'cronjob',
  create(_options, host: PluginHost) {
    const SCHEDULED_AT = `batch.${host.brand.keyDomain}/cronjob-scheduled-timestamp`;
    let cjType: TypeDef, jobType: TypeDef;
    const unwatch: (() => void)[] = [];
    const timers = new Map<string, NodeJS.Timeout>();

    /** Wakes the CronJob's sync at `at` (ms), replacing its previous timer; long waits go a day at a time. */
    function wakeAt(key: string, at: number | undefined): void {
      clearTimeout(timers.get(key));
      timers.delete(key);
      if (at === undefined) return;
      const wait = Math.max(0, at - Date.now());
      const timer = setTimeout(() => {
        timers.delete(key);
        if (wait > MAX_TIMER_MS) wakeAt(key, at);
        else queue.add(key, 0);
      }, Math.min(wait, MAX_TIMER_MS));
      timer.unref();
      timers.set(key, timer);
    }

    /** When the CronJob should next be looked at: its next time after the latest one due (the reference's nextScheduleTimeDuration). */
    function nextWake(cj: KObject, sched: Schedule, now: number): number | undefined {
      const { earliest, recent, missed } = mostRecentTime(cj, now, sched, false);
      const base = recent ?? (missed === 0 ? earliest : now);
      const next = sched.next(base);
      return next === undefined ? undefined : next + SLACK_MS;
    }

    const event = (cj: KObject, type: 'Normal' | 'Warning', reason: string, message: string) => recordEvent(host, 'cronjob-controller', cj, type, reason, message);

    const jobRef = (j: KObject): J => ({ kind: 'Job', namespace: j.metadata!.namespace, name: j.metadata!.name, uid: j.metadata!.uid, apiVersion: j.apiVersion ?? 'batch/v1', resourceVersion: j.metadata!.resourceVersion });

    async function deleteJob(cj: KObject, j: { namespace?: string; name?: string }): Promise<void> {
      try {
        await host.objects.delete(jobType, j.namespace!, j.name!, { propagationPolicy: 'Background' });
      } catch (e) {
        if (isNotFound(e)) return;
        await event(cj, 'Warning', 'FailedDelete', `Deleted job: ${String((e as Error).message ?? e)}`);
        throw e;
      }
      await event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${j.name}`);
    }

    /** The Job for one scheduled time: the template's labels, annotations and spec, the scheduled-timestamp annotation, owned by the CronJob. */
    function jobFor(cj: KObject, spec: J, at: number, tz: string | undefined): KObject {
      const tmpl: J = isObj(spec.jobTemplate) ? spec.jobTemplate : {};
      const md: J = isObj(tmpl.metadata) ? tmpl.metadata : {};
      return {
        apiVersion: 'batch/v1', kind: 'Job',
        metadata: {
          name: `${cj.metadata!.name}-${Math.floor(at / 60_000)}`, namespace: cj.metadata!.namespace,
          labels: { ...(md.labels ?? {}) }, annotations: { ...(md.annotations ?? {}), [SCHEDULED_AT]: formatInZone(at, tz) },
          ownerReferences: [controllerRef(cj)],
        },
        spec: JSON.parse(JSON.stringify(tmpl.spec ?? {})),
      };
    }

    /** Brings status.active up to date with the owned Jobs: finished ones leave it (a Complete one sets lastSuccessfulTime), vanished ones too. */
    async function reconcileActive(cj: KObject, status: J, jobs: KObject[]): Promise<void> {
      const active = list(status.active);
      for (const j of jobs) {
        const done = finishedAs(j);
        if (!done || !active.some((r) => r.uid === j.metadata!.uid)) continue;
        status.active = list(status.active).filter((r) => r.uid !== j.metadata!.uid);
        await event(cj, 'Normal', 'SawCompletedJob', `Saw completed job: ${j.metadata!.name}, status: ${done}`);
        const completed = ms((j.status as J | undefined)?.completionTime);
        if (done === 'Complete' && !Number.isNaN(completed) && !(ms(status.lastSuccessfulTime) >= completed)) status.lastSuccessfulTime = (j.status as J).completionTime;
      }
      for (const r of list(status.active)) if (!jobs.some((j) => j.metadata!.uid === r.uid)) await event(cj, 'Normal', 'MissingJob', `Active job went missing: ${r.name}`);
      status.active = list(status.active).filter((r) => jobs.some((j) => j.metadata!.uid === r.uid));
    }

    /** Deletes the oldest finished Jobs beyond the history limits (oldest start first, unstarted last). */
    async function cleanup(cj: KObject, spec: J, status: J, jobs: KObject[]): Promise<void> {
      const start = (j: KObject) => ms((j.status as J | undefined)?.startTime);
      const order = (a: KObject, b: KObject) => {
        const [x, y] = [start(a), start(b)];
        if (Number.isNaN(x) !== Number.isNaN(y)) return Number.isNaN(x) ? 1 : -1;
        return (x === y || Number.isNaN(x) ? 0 : x - y) || a.metadata!.name!.localeCompare(b.metadata!.name!);
      };
      for (const [kind, limit] of [['Complete', spec.successfulJobsHistoryLimit], ['Failed', spec.failedJobsHistoryLimit]] as const) {
        if (typeof limit !== 'number') continue;
        const done = jobs.filter((j) => finishedAs(j) === kind).sort(order);
        for (const j of done.slice(0, Math.max(0, done.length - limit))) {
          await deleteJob(cj, j.metadata!);
          status.active = list(status.active).filter((r) => r.uid !== j.metadata!.uid);
        }
      }
    }

    async function sync(key: string): Promise<void> {
      const [ns, name] = key.split('/');
      const cj = await host.objects.get(cjType, ns, name);
      if (!cj) return wakeAt(key, undefined);
      const spec: J = isObj(cj.spec) ? cj.spec : {};
      const status: J = JSON.parse(JSON.stringify(cj.status ?? {}));
      const jobs = (await host.objects.list(jobType, ns)).filter((j) => controllerOf(j)?.uid === cj.metadata!.uid);
      await reconcileActive(cj, status, jobs);
      const wake = await schedule(cj, spec, status);
      await cleanup(cj, spec, status, jobs);
      if (!list(status.active).length) delete status.active;
      await writeStatus(host, cjType, cj, status);
      wakeAt(key, wake);
    }

    /** Starts the Job due now, if any; returns when to look again. */
    async function schedule(cj: KObject, spec: J, status: J): Promise<number | undefined> {
      if (cj.metadata?.deletionTimestamp) return undefined;
      let sched: Schedule;
      try {
        sched = parseSchedule(String(spec.schedule ?? ''), typeof spec.timeZone === 'string' ? spec.timeZone : undefined);
      } catch (e) {
        // nothing to wait for but a change of the CronJob
        const why = (e as Error).message;
        if (why.startsWith('provided bad location')) await event(cj, 'Warning', 'UnknownTimeZone', `invalid timeZone: ${JSON.stringify(spec.timeZone)}: ${why}`);
        else await event(cj, 'Warning', 'UnparseableSchedule', `unparseable schedule: ${JSON.stringify(spec.schedule)} : ${why}`);
        return undefined;
      }
      if (spec.suspend === true) return undefined;
      const now = Date.now();
      const current = { ...cj, status };
      const next = () => nextWake(current, sched, Date.now());
      const { recent, missed } = mostRecentTime(current, now, sched, true);
      if (recent === undefined) return next();
      if (missed > TOO_MANY_MISSED) await event(cj, 'Warning', 'TooManyMissedTimes', 'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew');
      const tz = typeof spec.timeZone === 'string' ? spec.timeZone : undefined;
      const job = jobFor(cj, spec, recent, tz);
      const active = list(status.active);
      // this time was handled already (the Job is active, or recorded as the last one)
      if (active.some((r) => r.name === job.metadata!.name) || ms(status.lastScheduleTime) === recent) return next();
      if (spec.concurrencyPolicy === 'Forbid' && active.length) {
        await event(cj, 'Normal', 'JobAlreadyActive', 'Not starting job because prior execution is running and concurrency policy is Forbid');
        return next();
      }
      if (spec.concurrencyPolicy === 'Replace') {
        for (const r of active) await deleteJob(cj, r);
        status.active = [];
      }
      let made: KObject;
      try {
        made = await host.objects.create(jobType, job);
        await event(cj, 'Normal', 'SuccessfulCreate', `Created job ${made.metadata!.name}`);
      } catch (e) {
        if (isNamespaceTerminating(e)) return undefined;
        if ((e as { code?: number }).code !== 409) {
          await event(cj, 'Warning', 'FailedCreate', `Error creating job: ${String((e as Error).message ?? e)}`);
          throw e;
        }
        // ours already (made before a status write that did not happen): record it, as if just made
        const existing = await host.objects.get(jobType, cj.metadata!.namespace!, job.metadata!.name!);
        if (!existing || controllerOf(existing)?.uid !== cj.metadata!.uid) throw e;
        made = existing;
      }
      if (!finishedAs(made) && !list(status.active).some((r) => r.uid === made.metadata!.uid)) status.active = [...list(status.active), jobRef(made)];
      status.lastScheduleTime = nowTime(recent);
      return next();
    }

    const queue = controllerQueue(host, 'cronjob', sync);
    const keyOf = (o: KObject) => `${o.metadata!.namespace}/${o.metadata!.name}`;

    /** A Job's change concerns the CronJob controlling it. */
    function jobChanged(j: KObject): void {
      const ref = controllerOf(j);
      if (ref?.kind === 'CronJob' && ref.apiVersion.startsWith('batch/')) queue.add(`${j.metadata!.namespace}/${ref.name}`);
    }

    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      async start() {
        const ct = host.type('batch', 'cronjobs');
        const jt = host.type('batch', 'jobs');
        if (!ct || !jt) return;
        [cjType, jobType] = [ct, jt];
        unwatch.push(host.objects.watch(cjType, (ev, o) => {
          if (ev === 'DELETED') wakeAt(keyOf(o), undefined);
          else queue.add(keyOf(o));
        }));
        unwatch.push(host.objects.watch(jobType, (_ev, o) => jobChanged(o)));
        for (const c of await host.objects.list(cjType)) queue.add(keyOf(c), 0);
      },
      async stop() {
        for (const u of unwatch) u();
        for (const t of timers.values()) clearTimeout(t);
        timers.clear();
        await queue.stop();
        // a sync that was running may have set a timer meanwhile
        for (const t of timers.values()) clearTimeout(t);
        timers.clear();
      },
    };
  },
};
export default plugin;
