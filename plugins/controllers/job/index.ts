// The job controller: runs pods per parallelism and completions (NonIndexed, and Indexed with the
// completion index in an annotation, a label, the hostname and JOB_COMPLETION_INDEX), counts them
// through the reference's job-tracking pod finalizer (a finished pod is first recorded in
// status.uncountedTerminatedPods, then its finalizer is removed, then it moves into succeeded or
// failed, so a restart between the steps neither loses nor double-counts it), and finishes the Job
// as Complete, or Failed past backoffLimit or activeDeadlineSeconds.
import { CONTRACT_VERSION, type KObject, type PluginHost, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../lib/json.js';
import { slowStart } from '../replicaset/index.js';
import { byLeastValuable, claim, controllerOf, controllerQueue, isConflict, isNotFound, isPodActive, isPodReady, nowTime, podFromTemplate, selectorOf, writeStatus } from '../../lib/workload.js';

/** "1,3-5" for [1, 3, 4, 5]: the reference's completedIndexes format. */
export function formatIndexes(ix: Iterable<number>): string {
  const s = [...new Set(ix)].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < s.length;) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j] + 1) j++;
    out.push(j === i ? String(s[i]) : `${s[i]}-${s[j]}`);
    i = j + 1;
  }
  return out.join(',');
}

export function parseIndexes(v: unknown): number[] {
  if (typeof v !== 'string' || !v) return [];
  return v.split(',').flatMap((part) => {
    const [a, b] = part.split('-').map(Number);
    if (!Number.isInteger(a)) return [];
    return Array.from({ length: (Number.isInteger(b) ? b : a) - a + 1 }, (_, k) => a + k);
  });
}

const finishedCondition = (job: KObject) => list((job.status as J | undefined)?.conditions).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
const phase = (p: KObject) => (p.status as J | undefined)?.phase as string | undefined;

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'job',
  create(_options, host: PluginHost) {
    const kd = host.brand.keyDomain;
    const FINALIZER = `batch.${kd}/job-tracking`;
    const INDEX = `batch.${kd}/job-completion-index`;
    let jobType: TypeDef, podType: TypeDef;
    const unwatch: (() => void)[] = [];

    const hasFinalizer = (p: KObject) => (p.metadata?.finalizers ?? []).includes(FINALIZER);
    const indexOf = (p: KObject) => {
      const v = p.metadata?.annotations?.[INDEX];
      return typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;
    };
    /** Failed, or deleted before it succeeded: counts against backoffLimit. */
    const isFailed = (p: KObject) => phase(p) === 'Failed' || (!!p.metadata?.deletionTimestamp && phase(p) !== 'Succeeded');

    async function removeFinalizer(p: KObject): Promise<void> {
      for (let cur: KObject | undefined = p, tries = 0; cur && hasFinalizer(cur); tries++) {
        try {
          await host.objects.update(podType, { ...cur, metadata: { ...cur.metadata!, finalizers: (cur.metadata!.finalizers ?? []).filter((f) => f !== FINALIZER) } });
          return;
        } catch (e) {
          if (isNotFound(e)) return;
          if (!isConflict(e) || tries >= 8) throw e;
          // the cached copy may trail a write in flight (a deletion): read again after a pause
          await new Promise((r) => setTimeout(r, 10 << tries));
          cur = await host.objects.get(podType, p.metadata!.namespace!, p.metadata!.name!);
        }
      }
    }

    /** A pod for the Job, with its index when the Job is Indexed. */
    function newPod(job: KObject, index?: number): KObject {
      const template: J = JSON.parse(JSON.stringify((job.spec as J).template ?? {}));
      if (index === undefined) return podFromTemplate(job, template, { finalizers: [FINALIZER] });
      const i = String(index);
      template.spec ??= {};
      template.spec.hostname ||= `${job.metadata!.name}-${i}`;
      const env = { name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { fieldPath: `metadata.labels['${INDEX}']` } } };
      for (const c of [...list(template.spec.initContainers), ...list(template.spec.containers)]) {
        if (!list(c.env).some((e) => e.name === env.name)) c.env = [...list(c.env), env];
      }
      return podFromTemplate(job, template, { generateName: `${job.metadata!.name}-${i}-`, annotations: { [INDEX]: i }, labels: { [INDEX]: i }, finalizers: [FINALIZER] });
    }

    async function sync(key: string) {
      const [ns, name] = key.split('/');
      const job = await host.objects.get(jobType, ns, name);
      if (!job) return;
      const spec: J = isObj(job.spec) ? job.spec : {};
      const indexed = spec.completionMode === 'Indexed';
      const all = await host.objects.list(podType, ns);
      const pods = await claim(host, podType, job, all.filter((p) => isPodActive(p) || controllerOf(p)?.uid === job.metadata!.uid), selectorOf(spec.selector));
      const status: J = JSON.parse(JSON.stringify(job.status ?? {}));
      const uncounted = { succeeded: new Set<string>(status.uncountedTerminatedPods?.succeeded ?? []), failed: new Set<string>(status.uncountedTerminatedPods?.failed ?? []) };

      // 1. finished pods still holding the finalizer are recorded before the finalizer goes
      let recorded = false;
      for (const p of pods) {
        if (!hasFinalizer(p)) continue;
        const uid = p.metadata!.uid!;
        if (uncounted.succeeded.has(uid) || uncounted.failed.has(uid)) continue;
        if (phase(p) === 'Succeeded') uncounted.succeeded.add(uid);
        else if (isFailed(p)) uncounted.failed.add(uid);
        else continue;
        recorded = true;
      }
      let current = job;
      if (recorded) {
        status.uncountedTerminatedPods = { ...(uncounted.succeeded.size ? { succeeded: [...uncounted.succeeded] } : {}), ...(uncounted.failed.size ? { failed: [...uncounted.failed] } : {}) };
        const w = await writeStatus(host, jobType, job, status);
        // the Job is gone: nothing left to count, its pods are let go
        if (!w) return releasePods(job);
        current = w;
      }
      // 2. then their finalizers are removed
      for (const p of pods) if (hasFinalizer(p) && (uncounted.succeeded.has(p.metadata!.uid!) || uncounted.failed.has(p.metadata!.uid!))) await removeFinalizer(p);
      // 3. and they move into the counts
      status.succeeded = Number(status.succeeded ?? 0) + uncounted.succeeded.size;
      status.failed = Number(status.failed ?? 0) + uncounted.failed.size;
      status.uncountedTerminatedPods = {};
      if (indexed) {
        const done = new Set(parseIndexes(status.completedIndexes));
        for (const p of pods) if (phase(p) === 'Succeeded' && indexOf(p) !== undefined && indexOf(p)! < Number(spec.completions)) done.add(indexOf(p)!);
        status.completedIndexes = formatIndexes(done);
        status.succeeded = done.size;
        if (!status.completedIndexes) delete status.completedIndexes;
      }

      let active = pods.filter(isPodActive);
      let requeue: number | undefined;
      if (!finishedCondition(current)) {
        const suspended = spec.suspend === true;
        if (!status.startTime && !suspended) status.startTime = nowTime();
        const backoffLimit = Number(spec.backoffLimit ?? 6);
        const deadline = spec.activeDeadlineSeconds;
        const leftMs = typeof deadline === 'number' && status.startTime ? Date.parse(status.startTime) + deadline * 1000 - Date.now() : undefined;
        let failure: [string, string] | undefined;
        if (status.failed > backoffLimit) failure = ['BackoffLimitExceeded', 'Job has reached the specified backoff limit'];
        else if (leftMs !== undefined && leftMs <= 0 && !suspended) failure = ['DeadlineExceeded', 'Job was active longer than specified deadline'];
        else if (leftMs !== undefined && !suspended) requeue = leftMs + 50;

        if (failure || suspended) {
          await deletePods(active);
          active = [];
          if (failure) finish(status, 'Failed', ...failure);
        } else if (!job.metadata?.deletionTimestamp) {
          active = await manage(job, spec, status, active, indexed);
          const completions = spec.completions;
          const complete = completions === undefined || completions === null ? status.succeeded > 0 && active.length === 0 : status.succeeded >= completions && active.length === 0;
          if (complete) finish(status, 'Complete', '', '');
        }
      }
      status.active = active.length;
      status.ready = active.filter(isPodReady).length;
      for (const f of ['active', 'succeeded', 'failed']) if (!status[f]) delete status[f];
      await writeStatus(host, jobType, current, status);
      if (requeue !== undefined) queue.add(key, requeue);
    }

    /** Removes the finalizer from every pod of a Job that is gone. */
    async function releasePods(job: KObject): Promise<void> {
      for (const p of await host.objects.list(podType, job.metadata!.namespace!)) if (controllerOf(p)?.uid === job.metadata!.uid && hasFinalizer(p)) await removeFinalizer(p);
    }

    function finish(status: J, type: 'Complete' | 'Failed', reason: string, message: string): void {
      const t = nowTime();
      status.conditions = [...list(status.conditions), { type, status: 'True', lastProbeTime: t, lastTransitionTime: t, reason, message }];
      if (type === 'Complete') status.completionTime = t;
    }

    async function deletePods(pods: KObject[]): Promise<void> {
      await Promise.all(pods.map((p) => host.objects.delete(podType, p.metadata!.namespace!, p.metadata!.name!, { preconditions: { uid: p.metadata!.uid! } }).catch((e) => { if (!isNotFound(e) && !isConflict(e)) throw e; })));
    }

    /** Creates or deletes pods toward the active count the Job wants; returns the active pods left. */
    async function manage(job: KObject, spec: J, status: J, active: KObject[], indexed: boolean): Promise<KObject[]> {
      const parallelism = Number(spec.parallelism ?? 1);
      const completions = spec.completions;
      let want: number;
      if (completions === undefined || completions === null) want = status.succeeded > 0 ? Math.min(active.length, parallelism) : parallelism;
      else want = Math.max(0, Math.min(parallelism, completions - status.succeeded));
      if (active.length > want) {
        const doomed = [...active].sort(byLeastValuable).slice(0, active.length - want);
        await deletePods(doomed);
        return active.filter((p) => !doomed.includes(p));
      }
      if (active.length < want) {
        let make: () => KObject;
        if (indexed) {
          const taken = new Set([...parseIndexes(status.completedIndexes), ...active.map(indexOf)]);
          const free = Array.from({ length: Number(completions) }, (_, i) => i).filter((i) => !taken.has(i)).slice(0, want - active.length);
          make = () => newPod(job, free.shift());
          want = active.length + free.length;
        } else make = () => newPod(job);
        await slowStart(want - active.length, () => host.objects.create(podType, make()));
      }
      return active;
    }

    const queue = controllerQueue(host, 'job', sync);

    /** A pod's change concerns its Job; a pod whose Job is gone or who lost its Job loses the finalizer, so it can go too. */
    async function podChanged(p: KObject) {
      const ref = controllerOf(p);
      if (ref?.kind !== 'Job' || !ref.apiVersion.startsWith('batch/')) {
        // an orphan (its Job deleted with orphan propagation, the batch/v1 default) is no longer tracked
        if (!ref && hasFinalizer(p)) await removeFinalizer(p);
        if (!ref && isPodActive(p)) for (const j of await host.objects.list(jobType, p.metadata!.namespace!)) if (selectorOf((j.spec as J | undefined)?.selector)(p.metadata?.labels ?? {})) queue.add(`${p.metadata!.namespace}/${j.metadata!.name}`);
        return;
      }
      const job = await host.objects.get(jobType, p.metadata!.namespace!, ref.name);
      if (job && job.metadata!.uid === ref.uid) queue.add(`${p.metadata!.namespace}/${ref.name}`);
      else if (hasFinalizer(p)) await removeFinalizer(p);
    }

    const warn = (e: unknown) => host.log.warn('job controller', { error: String(e) });
    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      async start() {
        const jt = host.type('batch', 'jobs');
        const pt = host.type('', 'pods');
        if (!jt || !pt) return;
        [jobType, podType] = [jt, pt];
        unwatch.push(host.objects.watch(jobType, (ev, o) => {
          if (ev !== 'DELETED') queue.add(`${o.metadata!.namespace}/${o.metadata!.name}`);
          else releasePods(o).catch(warn);
        }));
        unwatch.push(host.objects.watch(podType, (_ev, o) => { podChanged(o).catch(warn); }));
        for (const j of await host.objects.list(jobType)) queue.add(`${j.metadata!.namespace}/${j.metadata!.name}`, 0);
        // pods left holding the finalizer by a Job deleted while this controller was not running
        for (const p of await host.objects.list(podType)) if (hasFinalizer(p) && p.metadata?.deletionTimestamp) podChanged(p).catch(warn);
      },
      async stop() {
        for (const u of unwatch) u();
        await queue.stop();
      },
    };
  },
};
export default plugin;
