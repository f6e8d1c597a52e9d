// The built-in scheduler (off by default): binds each pending pod whose spec.schedulerName is this
// scheduler's (default `default-scheduler`) to a node through pods/binding, as the reference's
// kube-scheduler does, with its default filters (filters.ts), least-allocated scoring (score.ts),
// and its events and PodScheduled condition (report.ts). A pod that fits nowhere waits until a node
// or a bound pod changes (and at least its backoff: 1 s doubling to 10 s; every 5 minutes in any case).
// While another scheduler holds the `<kube>-scheduler` leader Lease in the system namespace and
// renews it, this one is stopped (externalLease: kernel/ops/step-aside.ts), and started afresh after.
import { CONTRACT_VERSION, type KObject, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../lib/json.js';
import { WorkQueue } from '../../lib/work-queue.js';
import { assume, isTerminal, misfit, nodeInfos, type Misfit, type NodeInfo } from './filters.js';
import { NodePicker } from './score.js';
import { EventRecorder, fitErrorMessage, markUnschedulable, NO_NODES } from './report.js';

const INITIAL_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 10_000;
/** Pods that fit nowhere are tried again this often even without a change (the reference's 5 minutes). */
const UNSCHEDULABLE_FLUSH_MS = 5 * 60_000;

interface Backoff { uid: string; attempts: number; retryAt: number; waiting: boolean }

const keyOf = (o: KObject) => `${o.metadata!.namespace}/${o.metadata!.name}`;
const spec = (o: KObject): J => (isObj(o.spec) ? o.spec : {});
const code = (e: unknown) => (e as { code?: number }).code;

/** What of a node can make a pod fit or not (not its heartbeats). */
function nodeFingerprint(n: KObject): string {
  const st: J = isObj(n.status) ? n.status : {};
  return JSON.stringify([n.metadata?.labels, spec(n).taints, spec(n).unschedulable, st.allocatable, list(st.conditions).find((c) => c.type === 'Ready')?.status]);
}

/** Options: `schedulerName` (default `default-scheduler`): the pods this scheduler takes, and its events' reporting controller. */
function schedulerName(options: Record<string, unknown>): string {
  for (const k of Object.keys(options)) if (k !== 'schedulerName') throw new Error(`scheduler: unknown option "${k}"`);
  const name = options.schedulerName ?? 'default-scheduler';
  if (typeof name !== 'string' || !name) throw new Error('scheduler: option "schedulerName" must be a non-empty string');
  return name;
}

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'scheduler',
  create(options, host) {
    const name = schedulerName(options);
    const taintKey = (t: string) => `node.${host.brand.keyDomain}/${t}`;
    let podType: TypeDef;
    let nodeType: TypeDef;
    let events: EventRecorder;
    const picker = new NodePicker();
    /** Pods to try on the next pass. */
    const active = new Set<string>();
    const backoff = new Map<string, Backoff>();
    /** Each pending pod's spec and labels as last seen: a change of these (not of its status) is worth another try. */
    const seen = new Map<string, string>();
    let stopped = false;
    let retryTimer: NodeJS.Timeout | undefined;
    let flushTimer: NodeJS.Timeout | undefined;
    const unwatch: (() => void)[] = [];

    const isPending = (p: KObject) => !spec(p).nodeName && (spec(p).schedulerName ?? 'default-scheduler') === name
      && !p.metadata?.deletionTimestamp && !isTerminal(p) && !list(spec(p).schedulingGates).length;

    const queue = new WorkQueue(() => pass(), (_k, e) => host.log.warn('scheduler pass failed', { error: String(e) }));
    const kick = (delay?: number) => queue.add('pass', delay);

    /** Try again at `at` (ms), keeping the earliest such time. */
    let retryAt = Infinity;
    function retryLater(at: number) {
      if (at >= retryAt) return;
      if (retryTimer) clearTimeout(retryTimer);
      retryAt = at;
      retryTimer = setTimeout(() => { retryAt = Infinity; retryTimer = undefined; kick(0); }, Math.max(0, at - Date.now()));
      retryTimer.unref();
    }

    /** Cluster changes so far, and as of the running pass's start: a pod that failed on an older view is not left waiting. */
    let changes = 0;
    let passSaw = 0;

    /** Something that may let waiting pods fit happened: they are tried again (after their backoff). */
    function clusterChanged() {
      changes++;
      for (const [key, b] of backoff) if (b.waiting) { b.waiting = false; active.add(key); }
      kick();
    }

    function onPod(type: 'ADDED' | 'MODIFIED' | 'DELETED', p: KObject) {
      const key = keyOf(p);
      if (type === 'DELETED' || !isPending(p)) {
        seen.delete(key);
        backoff.delete(key);
        active.delete(key);
        // A bound pod gone or finished frees its node's share.
        if (spec(p).nodeName && (type === 'DELETED' || isTerminal(p))) clusterChanged();
        return;
      }
      const shape = JSON.stringify([p.spec, p.metadata?.labels]);
      if (seen.get(key) === shape) return;
      seen.set(key, shape);
      active.add(key);
      kick();
    }

    const nodeShapes = new Map<string, string>();
    function onNode(type: 'ADDED' | 'MODIFIED' | 'DELETED', n: KObject) {
      if (type === 'DELETED') { nodeShapes.delete(n.metadata!.name!); return; }
      const shape = nodeFingerprint(n);
      if (nodeShapes.get(n.metadata!.name!) === shape) return;
      nodeShapes.set(n.metadata!.name!, shape);
      clusterChanged();
    }

    async function pass() {
      if (!active.size) return;
      passSaw = changes;
      const now = Date.now();
      const pods = await host.objects.list(podType);
      const ready: KObject[] = [];
      for (const p of pods) {
        const key = keyOf(p);
        if (!active.has(key) || !isPending(p)) continue;
        const b = backoff.get(key);
        if (b && b.uid !== p.metadata?.uid) backoff.delete(key);
        else if (b && b.retryAt > now) { retryLater(b.retryAt); continue; }
        ready.push(p);
      }
      if (!ready.length) return;
      // Higher priority first, then the older pod, as the reference's queue orders them.
      ready.sort((a, b) => (Number(spec(b).priority ?? 0) - Number(spec(a).priority ?? 0))
        || String(a.metadata?.creationTimestamp).localeCompare(String(b.metadata?.creationTimestamp)) || keyOf(a).localeCompare(keyOf(b)));
      const infos = nodeInfos(await host.objects.list(nodeType), pods);
      for (const pod of ready) {
        if (stopped) return; // stepping aside (or shutting down) in the middle of a pass
        active.delete(keyOf(pod));
        try {
          await scheduleOne(pod, infos);
        } catch (e) {
          host.log.warn('scheduler: scheduling a pod failed', { pod: keyOf(pod), error: String(e) });
          backOff(pod, false);
        }
      }
    }

    async function scheduleOne(pod: KObject, infos: NodeInfo[]) {
      const misfits: Misfit[] = [];
      const fitting: NodeInfo[] = [];
      for (const info of infos) {
        const m = misfit(pod, info, taintKey);
        if (m) misfits.push(m);
        else fitting.push(info);
      }
      if (!fitting.length) return failed(pod, infos.length ? fitErrorMessage(pod, infos.length, misfits) : NO_NODES);
      const chosen = picker.pick(pod, fitting);
      const m = pod.metadata!;
      const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: m.name, namespace: m.namespace, uid: m.uid }, target: { apiVersion: 'v1', kind: 'Node', name: chosen.name } };
      try {
        await host.objects.create(podType, binding, 'binding');
      } catch (e) {
        // Bound by someone else, deleting or gone: nothing left to do for it.
        if (code(e) === 409 || code(e) === 404) return;
        host.log.warn('scheduler: binding failed', { pod: keyOf(pod), node: chosen.name, error: String(e) });
        return backOff(pod, false);
      }
      assume(chosen, pod);
      backoff.delete(keyOf(pod));
      await events.record(pod, 'Normal', 'Scheduled', 'Binding', `Successfully assigned ${m.namespace}/${m.name} to ${chosen.name}`);
    }

    function backOff(pod: KObject, waiting: boolean) {
      const key = keyOf(pod);
      const prev = backoff.get(key);
      const attempts = (prev?.uid === pod.metadata?.uid ? prev!.attempts : 0) + 1;
      const at = Date.now() + Math.min(INITIAL_BACKOFF_MS * 2 ** (attempts - 1), MAX_BACKOFF_MS);
      backoff.set(key, { uid: pod.metadata!.uid!, attempts, retryAt: at, waiting });
      if (!waiting) { active.add(key); retryLater(at); }
    }

    async function failed(pod: KObject, message: string) {
      backOff(pod, changes === passSaw);
      await events.record(pod, 'Warning', 'FailedScheduling', 'Scheduling', message);
      try {
        await markUnschedulable(host, podType, pod, message);
      } catch (e) {
        // Changed meanwhile (its watch event brings it back) or gone.
        if (code(e) !== 409 && code(e) !== 404) throw e;
      }
    }

    return {
      // Another scheduler (the reference's kube-scheduler, leader-elected) does this work while it runs.
      externalLease: `${host.brand.name === 'kubernetes' ? 'kube' : host.brand.name}-scheduler`,
      async start() {
        const pods = host.type('', 'pods');
        const nodes = host.type('', 'nodes');
        if (!pods || !nodes) return;
        [podType, nodeType] = [pods, nodes];
        events = new EventRecorder(host, host.type(`events.${host.brand.domain}`, 'events'), name);
        unwatch.push(host.objects.watch(nodes, onNode));
        unwatch.push(host.objects.watch(pods, onPod));
        for (const n of await host.objects.list(nodes)) nodeShapes.set(n.metadata!.name!, nodeFingerprint(n));
        for (const p of await host.objects.list(pods)) onPod('ADDED', p);
        flushTimer = setInterval(clusterChanged, UNSCHEDULABLE_FLUSH_MS);
        flushTimer.unref();
        kick(0);
      },
      async stop() {
        stopped = true;
        for (const u of unwatch) u();
        if (retryTimer) clearTimeout(retryTimer);
        if (flushTimer) clearInterval(flushTimer);
        await queue.stop();
      },
    };
  },
};
export default plugin;
