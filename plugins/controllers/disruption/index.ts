// The disruption controller: keeps each PodDisruptionBudget's status (expectedPods, currentHealthy,
// desiredHealthy, disruptionsAllowed, observedGeneration, the DisruptionAllowed condition) current
// as pods and budgets change, so that pods/eviction decides on fresh numbers.
import { CONTRACT_VERSION, type KObject, type PluginHost, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../lib/json.js';
import { selectorMatches } from '../../lib/label-selector.js';
import { isPodReady } from '../../types/builtin/strategies/pods.js';
import { WorkQueue } from '../../lib/work-queue.js';

/** Evictions not confirmed by a pod deletion within this time stop counting (the reference's 2 minutes). */
const DISRUPTION_TIMEOUT_MS = 2 * 60_000;

const now = () => new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** An int-or-percent scaled against a total, rounding up as the reference does for budgets. */
export function scaled(v: unknown, total: number): number {
  if (typeof v === 'number') return v;
  const m = typeof v === 'string' ? /^(\d+)%$/.exec(v) : null;
  return m ? Math.ceil((Number(m[1]) * total) / 100) : Number(v) || 0;
}

/** The replicas a pod's controllers want: the scale of each distinct owning workload (a ReplicaSet's Deployment when it has one). */
async function expectedFromControllers(host: PluginHost, pods: KObject[], ns: string): Promise<number | undefined> {
  const kinds: Record<string, [string, string]> = { ReplicaSet: ['apps', 'replicasets'], Deployment: ['apps', 'deployments'], StatefulSet: ['apps', 'statefulsets'], ReplicationController: ['', 'replicationcontrollers'] };
  const seen = new Map<string, number>();
  const ownerOf = (o: KObject) => (o.metadata?.ownerReferences as J[] | undefined)?.find((r) => r.controller);
  for (const p of pods) {
    let ref = ownerOf(p);
    if (!ref || !kinds[ref.kind]) return undefined;
    let t = host.type(...kinds[ref.kind]);
    let obj = t ? await host.objects.get(t, ns, ref.name) : undefined;
    const up = obj && ref.kind === 'ReplicaSet' ? ownerOf(obj) : undefined;
    if (up?.kind === 'Deployment') {
      ref = up;
      t = host.type(...kinds.Deployment);
      obj = t ? await host.objects.get(t, ns, up.name) : undefined;
    }
    if (!obj) return undefined;
    seen.set(`${ref.kind}/${ref.name}`, Number((obj.spec as J | undefined)?.replicas ?? 1));
  }
  return [...seen.values()].reduce((a, b) => a + b, 0);
}

/** The status a budget should have, given the pods of its namespace. */
export async function computeStatus(host: PluginHost, pdb: KObject, pods: KObject[]): Promise<J> {
  const spec: J = isObj(pdb.spec) ? pdb.spec : {};
  const old: J = isObj(pdb.status) ? pdb.status : {};
  const sel = spec.selector;
  const selected = isObj(sel) && (Object.keys(sel.matchLabels ?? {}).length || list(sel.matchExpressions).length)
    ? pods.filter((p) => selectorMatches(sel, p.metadata?.labels ?? {}))
    : [];
  // Evictions in flight: pods the eviction endpoint let go that are not deleting yet, for a while.
  const disrupted: Record<string, string> = {};
  const t = Date.now();
  for (const [name, at] of Object.entries((old.disruptedPods ?? {}) as Record<string, string>)) {
    const p = selected.find((x) => x.metadata?.name === name);
    if (p && !p.metadata?.deletionTimestamp && t - Date.parse(at) < DISRUPTION_TIMEOUT_MS) disrupted[name] = at;
  }
  const currentHealthy = selected.filter((p) => !p.metadata?.deletionTimestamp && !disrupted[p.metadata!.name!] && isPodReady(p)).length;
  let expectedPods = selected.length;
  let desiredHealthy = 0;
  const ns = pdb.metadata!.namespace!;
  if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
    expectedPods = (await expectedFromControllers(host, selected, ns)) ?? selected.length;
    desiredHealthy = Math.max(0, expectedPods - scaled(spec.maxUnavailable, expectedPods));
  } else if (spec.minAvailable !== undefined && spec.minAvailable !== null) {
    if (typeof spec.minAvailable === 'string') expectedPods = (await expectedFromControllers(host, selected, ns)) ?? selected.length;
    desiredHealthy = scaled(spec.minAvailable, expectedPods);
  }
  const disruptionsAllowed = expectedPods > 0 ? Math.max(0, currentHealthy - desiredHealthy) : 0;
  const allowed = disruptionsAllowed > 0;
  const prev = list(old.conditions).find((c) => c.type === 'DisruptionAllowed');
  const condition = {
    type: 'DisruptionAllowed', status: allowed ? 'True' : 'False', reason: allowed ? 'SufficientPods' : 'InsufficientPods', message: '',
    observedGeneration: pdb.metadata?.generation ?? 1,
    lastTransitionTime: prev && prev.status === (allowed ? 'True' : 'False') ? prev.lastTransitionTime : now(),
  };
  const status: J = { observedGeneration: pdb.metadata?.generation ?? 1, disruptionsAllowed, currentHealthy, desiredHealthy, expectedPods, conditions: [condition] };
  if (Object.keys(disrupted).length) status.disruptedPods = disrupted;
  return status;
}

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'disruption',
  create(_options, host) {
    let pdbType: TypeDef | undefined;
    let podType: TypeDef | undefined;
    let resync: NodeJS.Timeout | undefined;
    const unwatch: (() => void)[] = [];

    async function syncNamespace(ns: string) {
      const pdbs = await host.objects.list(pdbType!, ns);
      if (!pdbs.length) return;
      const pods = await host.objects.list(podType!, ns);
      for (const pdb of pdbs) {
        const status = await computeStatus(host, pdb, pods);
        if (JSON.stringify(status) === JSON.stringify(pdb.status)) continue;
        try {
          await host.objects.update(pdbType!, { ...pdb, status }, 'status');
        } catch (e) {
          // A conflict (an eviction updated the budget meanwhile) is settled by the next pass.
          if ((e as { code?: number }).code === 409) queue.add(ns, 200);
          else if ((e as { code?: number }).code !== 404) throw e;
        }
      }
    }

    const queue = new WorkQueue(syncNamespace, (ns, e) => host.log.warn('disruption controller', { namespace: ns, error: String(e) }));
    const kick = (ns: string, delay?: number) => queue.add(ns, delay);

    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      async start() {
        pdbType = host.type('policy', 'poddisruptionbudgets');
        podType = host.type('', 'pods');
        if (!pdbType || !podType) return;
        unwatch.push(host.objects.watch(pdbType, (_t, o) => kick(o.metadata!.namespace!)));
        unwatch.push(host.objects.watch(podType, (_t, o) => kick(o.metadata!.namespace!)));
        for (const pdb of await host.objects.list(pdbType)) kick(pdb.metadata!.namespace!, 0);
        // Evictions that never turned into deletions time out: look again now and then.
        resync = setInterval(async () => { for (const pdb of await host.objects.list(pdbType!)) if ((pdb.status as J | undefined)?.disruptedPods) kick(pdb.metadata!.namespace!); }, 30_000);
        resync.unref();
      },
      async stop() {
        for (const u of unwatch) u();
        if (resync) clearInterval(resync);
        await queue.stop();
      },
    };
  },
};
export default plugin;
