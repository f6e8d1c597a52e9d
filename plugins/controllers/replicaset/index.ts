// The replica set controller, for apps/v1 ReplicaSets and core/v1 ReplicationControllers alike:
// keeps spec.replicas pods made from spec.template, adopts matching orphan pods and lets go of owned
// pods the selector no longer matches, and reports replicas, fullyLabeledReplicas, readyReplicas,
// availableReplicas (ready for minReadySeconds) and observedGeneration through the status subresource.
import { CONTRACT_VERSION, type KObject, type PluginHost, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../lib/json.js';
import { byLeastValuable, claim, controllerOf, controllerQueue, isNotFound, isPodActive, isPodAvailable, isPodReady, podFromTemplate, selectorOf, writeStatus } from '../../lib/workload.js';

/** The reference's burstReplicas: at most this many pods created or deleted in one pass. */
const BURST = 500;

interface Kind { kind: string; group: string; resource: string; plainSelector: boolean; type?: TypeDef }

/**
 * Creates `count` objects in doubling batches (1, 2, 4, …), the reference's slow start: a create
 * that keeps failing (quota, a terminating namespace) costs one request, not hundreds.
 */
export async function slowStart(count: number, make: () => Promise<unknown>): Promise<number> {
  let done = 0;
  for (let batch = 1; done < count; batch *= 2) {
    const n = Math.min(batch, count - done);
    const results = await Promise.allSettled(Array.from({ length: n }, make));
    done += results.filter((r) => r.status === 'fulfilled').length;
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
  return done;
}

/** The status a replica set's pods give it; `wait` learns when a ready pod becomes available. */
export function replicaStatus(owner: KObject, pods: KObject[], wait?: (ms: number) => void): J {
  const spec: J = isObj(owner.spec) ? owner.spec : {};
  const tplLabels = (spec.template?.metadata?.labels ?? {}) as Record<string, string>;
  const fully = pods.filter((p) => Object.entries(tplLabels).every(([k, v]) => p.metadata?.labels?.[k] === v)).length;
  const ready = pods.filter(isPodReady).length;
  const now = Date.now();
  const available = pods.filter((p) => isPodAvailable(p, Number(spec.minReadySeconds) || 0, now, wait)).length;
  const old: J = isObj(owner.status) ? owner.status : {};
  const status: J = { replicas: pods.length };
  if (fully) status.fullyLabeledReplicas = fully;
  if (ready) status.readyReplicas = ready;
  if (available) status.availableReplicas = available;
  status.observedGeneration = owner.metadata?.generation ?? 1;
  if (old.conditions) status.conditions = old.conditions;
  return status;
}

/**
 * The ReplicaFailure condition as the reference keeps it: set (once, with its time) when making or
 * removing pods failed (a quota refused them, say), gone once a pass succeeds.
 */
export function withFailure(status: J, failure: { reason: string; error: unknown } | undefined): J {
  const others = (list(status.conditions) as J[]).filter((c) => c.type !== 'ReplicaFailure');
  const had = (list(status.conditions) as J[]).find((c) => c.type === 'ReplicaFailure');
  const next = failure
    ? [...others, had ?? { type: 'ReplicaFailure', status: 'True', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), reason: failure.reason, message: (failure.error as Error)?.message ?? String(failure.error) }]
    : others;
  const out: J = { ...status };
  if (next.length) out.conditions = next;
  else delete out.conditions;
  return out;
}

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'replicaset',
  create(_options, host: PluginHost) {
    const kinds: Kind[] = [
      { kind: 'ReplicaSet', group: 'apps', resource: 'replicasets', plainSelector: false },
      { kind: 'ReplicationController', group: '', resource: 'replicationcontrollers', plainSelector: true },
    ];
    let podType: TypeDef | undefined;
    const unwatch: (() => void)[] = [];
    const key = (k: Kind, ns: string, name: string) => `${k.resource}|${ns}/${name}`;

    async function sync(k: string) {
      const [resource, rest] = k.split('|');
      const [ns, name] = rest.split('/');
      const kind = kinds.find((x) => x.resource === resource)!;
      const owner = await host.objects.get(kind.type!, ns, name);
      if (!owner) return;
      const spec: J = isObj(owner.spec) ? owner.spec : {};
      const matches = selectorOf(spec.selector, kind.plainSelector);
      const active = (await host.objects.list(podType!, ns)).filter(isPodActive);
      let pods = await claim(host, podType!, owner, active, matches);
      let failure: { reason: string; error: unknown } | undefined;
      if (!owner.metadata?.deletionTimestamp) {
        const want = Number(spec.replicas ?? 1);
        try { pods = await scale(owner, pods, want); } catch (e) { failure = { reason: want > pods.length ? 'FailedCreate' : 'FailedDelete', error: e }; }
      }
      let again: number | undefined;
      const status = withFailure(replicaStatus(owner, pods, (ms) => { again = Math.min(again ?? ms, ms); }), failure);
      await writeStatus(host, kind.type!, owner, status);
      // the queue retries with its backoff, as the reference's rate-limited requeue
      if (failure) throw failure.error;
      // a ready pod turns available once minReadySeconds pass: look again then
      if (again !== undefined) queue.add(k, again + 50);
    }

    /** Creates or deletes pods toward `want`; returns the pods that remain counted. */
    async function scale(owner: KObject, pods: KObject[], want: number): Promise<KObject[]> {
      const diff = want - pods.length;
      if (diff > 0) {
        const template: J = (owner.spec as J).template ?? {};
        await slowStart(Math.min(diff, BURST), () => host.objects.create(podType!, podFromTemplate(owner, template)));
        // the created pods are counted by the pass their watch events bring
        return pods;
      }
      if (diff < 0) {
        const doomed = [...pods].sort(byLeastValuable).slice(0, Math.min(-diff, BURST));
        await Promise.all(doomed.map(async (p) => {
          try { await host.objects.delete(podType!, p.metadata!.namespace!, p.metadata!.name!, { preconditions: { uid: p.metadata!.uid! } }); } catch (e) { if (!isNotFound(e) && (e as { code?: number }).code !== 409) throw e; }
        }));
        return pods.filter((p) => !doomed.includes(p));
      }
      return pods;
    }

    const queue = controllerQueue(host, 'replicaset', sync);

    /** A pod's change concerns its controller, or (an orphan) every controller in its namespace whose selector matches it. */
    async function podChanged(pod: KObject) {
      const ns = pod.metadata!.namespace!;
      const ref = controllerOf(pod);
      if (ref) {
        const k = kinds.find((x) => x.kind === ref.kind && (x.group ? ref.apiVersion.startsWith(`${x.group}/`) : ref.apiVersion === 'v1'));
        if (k) queue.add(key(k, ns, ref.name));
        return;
      }
      if (!isPodActive(pod)) return;
      for (const k of kinds) {
        if (!k.type) continue;
        for (const o of await host.objects.list(k.type, ns)) {
          if (selectorOf((o.spec as J | undefined)?.selector, k.plainSelector)(pod.metadata?.labels ?? {})) queue.add(key(k, ns, o.metadata!.name!));
        }
      }
    }

    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      async start() {
        podType = host.type('', 'pods');
        if (!podType) return;
        for (const k of kinds) {
          k.type = host.type(k.group, k.resource);
          if (!k.type) continue;
          unwatch.push(host.objects.watch(k.type, (t, o) => { if (t !== 'DELETED') queue.add(key(k, o.metadata!.namespace!, o.metadata!.name!)); }));
          for (const o of await host.objects.list(k.type)) queue.add(key(k, o.metadata!.namespace!, o.metadata!.name!), 0);
        }
        unwatch.push(host.objects.watch(podType, (_t, p) => { podChanged(p).catch((e) => host.log.warn('replicaset controller', { error: String(e) })); }));
      },
      async stop() {
        for (const u of unwatch) u();
        await queue.stop();
      },
    };
  },
};
export default plugin;
