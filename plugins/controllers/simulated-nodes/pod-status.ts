// What a node agent would write to the status of a pod it runs, as pure functions of the pod, the
// clock and the run settings: started (init containers completed in order, containers running),
// ready once each readiness probe's initial delay has passed, run-to-completion containers exiting
// after their run time, every container stopped when the pod is deleted. The conditions follow the
// reference's rules (pkg/kubelet/status/generate.go): Initialized, Ready, ContainersReady and
// PodScheduled after the conditions others own, as the node agent orders them.
import type { KObject } from '../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../lib/json.js';
import { qosClass } from '../../types/builtin/defaults.js';
import { hexId, stamp } from './nodes.js';

/** How the containers of one pod behave: from the options, overridden by the pod's annotations. */
export interface RunSettings { runSeconds: number; exitCode: number }

/** The annotations that override the run settings, under the brand's reserved-key domain. */
export const annotationKeys = (keyDomain: string) => ({ runSeconds: `${keyDomain}/sim-run-seconds`, exitCode: `${keyDomain}/sim-exit-code` });

export function runSettings(pod: KObject, defaults: RunSettings, keyDomain: string): RunSettings {
  const keys = annotationKeys(keyDomain);
  const a = pod.metadata?.annotations ?? {};
  const num = (v: string | undefined, d: number) => (v !== undefined && /^\d+$/.test(v.trim()) ? Number(v) : d);
  const said = commandSettings(pod);
  return { runSeconds: num(a[keys.runSeconds], said.runSeconds ?? defaults.runSeconds), exitCode: num(a[keys.exitCode], said.exitCode ?? defaults.exitCode) };
}

/**
 * What the containers' commands say, when they are the plain forms tests use: `sleep N` (or
 * `sleep infinity`) runs N seconds, `exit N` exits with N, directly or through `sh -c`. The pod
 * runs as long as its longest sleep and fails with the first non-zero exit. Anything else: nothing.
 */
export function commandSettings(pod: KObject): Partial<RunSettings> {
  const out: Partial<RunSettings> = {};
  for (const c of list(spec(pod).containers)) {
    const strings = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
    const argv = [...strings(c.command), ...strings(c.args)];
    const script = /^(\/bin\/)?(ba)?sh$/.test(argv[0] ?? '') && argv[1] === '-c' ? String(argv[2] ?? '').trim() : argv.join(' ');
    const sleep = /^sleep\s+(\d+|infinity)$/.exec(script);
    if (sleep) out.runSeconds = Math.max(out.runSeconds ?? 0, sleep[1] === 'infinity' ? Number.MAX_SAFE_INTEGER / 1000 : Number(sleep[1]));
    const exit = /^exit\s+(\d+)$/.exec(script);
    if (exit && (out.exitCode === undefined || out.exitCode === 0)) out.exitCode = Number(exit[1]);
  }
  return out;
}

const spec = (pod: KObject): J => (isObj(pod.spec) ? pod.spec : {});
const status = (pod: KObject): J => (isObj(pod.status) ? pod.status : {});
const ms = (t: unknown): number => (typeof t === 'string' ? Date.parse(t) : NaN);
const readinessDelay = (c: J): number => Number(c.readinessProbe?.initialDelaySeconds ?? 0) * 1000;
/** Pods that run to completion: their containers exit after the run time. */
const runsToCompletion = (pod: KObject) => spec(pod).restartPolicy === 'Never' || spec(pod).restartPolicy === 'OnFailure';
export const isTerminal = (pod: KObject) => status(pod).phase === 'Succeeded' || status(pod).phase === 'Failed';
/** Whether this node agent has started the pod (it sets startTime and the container statuses together). */
export const isStarted = (pod: KObject) => Boolean(status(pod).startTime) && list(status(pod).containerStatuses).length > 0;

function identity(pod: KObject, c: J): J & { containerID: string } {
  const image = String(c.image ?? '');
  return { name: c.name, image, imageID: `${image.split(/[:@]/)[0]}@sha256:${hexId(`image/${image}`)}`, containerID: `simulated://${hexId(`${pod.metadata?.uid}/${c.name}`)}` };
}

function terminated(exitCode: number, startedAt: string, finishedAt: string, containerID: string): J {
  return { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt, finishedAt, containerID } };
}

/** The status of a pod just started on a node: init containers done, containers running. */
export function startedStatus(pod: KObject, hostIP: string, podIP: string, now: number, hostIPs: boolean): J {
  const t = stamp(now);
  const init = list(spec(pod).initContainers).map((c) => {
    const id = identity(pod, c);
    return { ...id, ready: true, started: false, restartCount: 0, state: terminated(0, t, t, id.containerID) };
  });
  const containers = list(spec(pod).containers)
    .map((c): J => ({ ...identity(pod, c), ready: readinessDelay(c) === 0, started: true, restartCount: 0, state: { running: { startedAt: t } } }))
    .sort((a, b) => String(a.name).localeCompare(String(b.name)));
  const old = status(pod);
  const next: J = {
    ...old, phase: 'Running', hostIP, podIP, podIPs: [{ ip: podIP }], startTime: old.startTime ?? t, qosClass: old.qosClass ?? qosClass(spec(pod)),
    containerStatuses: containers,
  };
  if (hostIPs) next.hostIPs = [{ ip: hostIP }];
  if (init.length) next.initContainerStatuses = init;
  next.conditions = conditions(pod, next, now);
  return next;
}

/**
 * The next change due to a started pod at `now` (a readiness delay passed, a run time over), or
 * undefined; and when the next one after it is due (for a timer).
 */
export function progress(pod: KObject, run: RunSettings, now: number): { status?: J; wakeAt?: number } {
  const old = status(pod);
  const byName = new Map(list(spec(pod).containers).map((c) => [c.name, c]));
  let changed = false;
  let wakeAt: number | undefined;
  const due = (at: number) => {
    if (at <= now) return true;
    wakeAt = Math.min(wakeAt ?? Infinity, at);
    return false;
  };
  const containers = list(old.containerStatuses).map((cs) => {
    const c = byName.get(cs.name);
    const started = ms(cs.state?.running?.startedAt);
    if (!c || Number.isNaN(started)) return cs;
    if (runsToCompletion(pod) && due(started + run.runSeconds * 1000)) {
      changed = true;
      const state = terminated(run.exitCode, cs.state.running.startedAt, stamp(now), cs.containerID);
      // OnFailure restarts a container that failed, as the node agent does (the Job controller counts the restarts).
      if (run.exitCode !== 0 && spec(pod).restartPolicy === 'OnFailure') {
        // it exits again after the run time (at least a second on: a crash loop, not a busy one), ready again after its delay
        due(now + Math.max(1000, run.runSeconds * 1000));
        if (readinessDelay(c) > 0) due(now + readinessDelay(c));
        return { ...cs, ready: readinessDelay(c) === 0, restartCount: (cs.restartCount ?? 0) + 1, lastState: state, state: { running: { startedAt: stamp(now) } } };
      }
      return { ...cs, ready: false, started: false, state };
    }
    if (!cs.ready && due(started + readinessDelay(c))) {
      changed = true;
      return { ...cs, ready: true };
    }
    return cs;
  });
  if (!changed) {
    // A readiness gate's condition may have changed (someone else writes those): Ready follows it.
    const fresh = conditions(pod, old, now);
    const sig = (cs: J[]) => JSON.stringify(cs.map((c) => [c.type, c.status, c.reason, c.message]).sort());
    return sig(fresh) === sig(list(old.conditions)) ? { wakeAt } : { status: { ...old, conditions: fresh }, wakeAt };
  }
  const next: J = { ...old, containerStatuses: containers };
  if (containers.every((cs) => cs.state?.terminated)) next.phase = containers.every((cs) => cs.state.terminated.exitCode === 0) ? 'Succeeded' : 'Failed';
  next.conditions = conditions(pod, next, now);
  return { status: next, wakeAt: isTerminal({ status: next }) ? undefined : wakeAt };
}

/** Every container stopped (a graceful deletion's end): exit 0, the pod Succeeded unless one had failed. */
export function stoppedStatus(pod: KObject, now: number): J {
  const old = status(pod);
  const stop = (cs: J): J => (cs.state?.terminated ? cs : { ...cs, ready: false, started: false, state: terminated(0, cs.state?.running?.startedAt ?? stamp(now), stamp(now), cs.containerID) });
  const containers = list(old.containerStatuses).map(stop);
  const next: J = { ...old, containerStatuses: containers };
  next.phase = containers.every((cs) => cs.state.terminated.exitCode === 0) ? 'Succeeded' : 'Failed';
  next.conditions = conditions(pod, next, now);
  return next;
}

/** Initialized, Ready, ContainersReady as the reference generates them; other conditions (PodScheduled, readiness gates') kept. */
function conditions(pod: KObject, st: J, now: number): J[] {
  const phase = st.phase;
  const cs = list(st.containerStatuses);
  const unready = list(spec(pod).containers).map((c) => c.name).filter((n) => !cs.find((x) => x.name === n)?.ready);
  let containersReady: J;
  if (phase === 'Succeeded' || phase === 'Failed') containersReady = { status: 'False', reason: phase === 'Failed' ? 'PodFailed' : 'PodCompleted' };
  else if (unready.length) containersReady = { status: 'False', reason: 'ContainersNotReady', message: `containers with unready status: [${unready.join(' ')}]` };
  else containersReady = { status: 'True' };
  let ready = containersReady;
  const gates = list(spec(pod).readinessGates).map((g) => g.conditionType);
  const old = list(st.conditions);
  if (containersReady.status === 'True') {
    const unmet = gates.flatMap((g) => {
      const c = old.find((x) => x.type === g);
      if (!c) return [`corresponding condition of pod readiness gate "${g}" does not exist.`];
      return c.status === 'True' ? [] : [`the status of pod readiness gate "${g}" is not "True", but ${c.status}`];
    });
    if (unmet.length) ready = { status: 'False', reason: 'ReadinessGatesNotReady', message: unmet.join(', ') };
  }
  const initialized = phase === 'Succeeded' ? { status: 'True', reason: 'PodCompleted' } : { status: 'True' };
  // The node agent's own four, after the conditions others own, in the node agent's order.
  const made: Record<string, J> = { Initialized: initialized, Ready: ready, ContainersReady: containersReady, PodScheduled: { status: 'True' } };
  const t = stamp(now);
  const own = Object.entries(made).map(([type, c]) => {
    const prev = old.find((x) => x.type === type);
    return { type, ...c, lastProbeTime: null, lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : t };
  });
  return [...old.filter((c) => !made[c.type]), ...own];
}
