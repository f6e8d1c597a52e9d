// The daemonset controller: one pod per node the template may run on (nodeSelector, required node
// affinity, taints less the tolerations every daemon pod gets), each pinned to its node by a
// required node affinity on metadata.name for the scheduler to bind, as the reference does; pods on
// nodes that no longer qualify removed; RollingUpdate within maxUnavailable, OnDelete; the
// reference's status counts.
import { CONTRACT_VERSION, type KObject, type PluginHost, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../lib/json.js';
import { fitsNode, untoleratedTaints } from '../../lib/node-match.js';
import { canonical, claim, controllerOf, controllerQueue, controllerRef, isConflict, isNotFound, isPodActive, isPodAvailable, isPodReady, podFromTemplate, revisionData, scaledValue, selectorOf, writeStatus } from '../../lib/workload.js';

const REVISION_LABEL = 'controller-revision-hash';
const GENERATION_LABEL = 'pod-template-generation';

/** The pod spec with the tolerations the reference gives every daemon pod. */
export function withDaemonTolerations(spec: J, keyDomain: string): J {
  const k = (s: string) => `node.${keyDomain}/${s}`;
  const wanted: J[] = [
    { key: k('not-ready'), operator: 'Exists', effect: 'NoExecute' },
    { key: k('unreachable'), operator: 'Exists', effect: 'NoExecute' },
    { key: k('disk-pressure'), operator: 'Exists', effect: 'NoSchedule' },
    { key: k('memory-pressure'), operator: 'Exists', effect: 'NoSchedule' },
    { key: k('pid-pressure'), operator: 'Exists', effect: 'NoSchedule' },
    { key: k('unschedulable'), operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (spec.hostNetwork) wanted.push({ key: k('network-unavailable'), operator: 'Exists', effect: 'NoSchedule' });
  const tolerations = list(spec.tolerations);
  for (const w of wanted) if (!tolerations.some((t) => t.key === w.key && t.effect === w.effect)) tolerations.push(w);
  return { ...spec, tolerations };
}

/** The node a daemon pod is for: its nodeName, else the metadata.name its required affinity names. */
function targetNode(p: KObject): string | undefined {
  const spec: J = (p.spec as J) ?? {};
  if (spec.nodeName) return spec.nodeName;
  for (const term of list(spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms)) {
    for (const f of list(term.matchFields)) if (f.key === 'metadata.name' && f.operator === 'In' && Array.isArray(f.values) && f.values.length === 1) return f.values[0];
  }
  return undefined;
}

const created = (p: KObject) => Date.parse(p.metadata?.creationTimestamp ?? '') || 0;

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'daemonset',
  create(_options, host: PluginHost) {
    const kd = host.brand.keyDomain;
    let dsType: TypeDef, podType: TypeDef, nodeType: TypeDef, revType: TypeDef;
    const unwatch: (() => void)[] = [];

    /** Whether the node should run the daemon pod, and whether a pod already there may stay (tolerates the NoExecute taints). */
    function placement(podSpec: J, node: KObject): { run: boolean; stay: boolean } {
      if (podSpec.nodeName && podSpec.nodeName !== node.metadata!.name) return { run: false, stay: false };
      if (!fitsNode(podSpec, node)) return { run: false, stay: false };
      const tolerations = list(podSpec.tolerations);
      if (!untoleratedTaints(node, tolerations, ['NoSchedule', 'NoExecute']).length) return { run: true, stay: true };
      return { run: false, stay: !untoleratedTaints(node, tolerations, ['NoExecute']).length };
    }

    /** The ControllerRevision of the current template (created when missing); returns its hash. */
    async function currentHash(ds: KObject, template: J, ns: string): Promise<string> {
      const { data, hash } = revisionData(template);
      const revisions = (await host.objects.list(revType, ns)).filter((r) => controllerOf(r)?.uid === ds.metadata!.uid);
      const same = revisions.find((r) => canonical(r.data) === canonical(data));
      if (same) return same.metadata?.labels?.[REVISION_LABEL] ?? same.metadata!.name!.slice(ds.metadata!.name!.length + 1);
      const h = hash((ds.status as J | undefined)?.collisionCount);
      const revision = Math.max(0, ...revisions.map((r) => Number(r.revision) || 0)) + 1;
      try {
        await host.objects.create(revType, { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: `${ds.metadata!.name}-${h}`, namespace: ns, labels: { ...(template.metadata?.labels ?? {}), [REVISION_LABEL]: h }, ownerReferences: [controllerRef(ds)] }, data, revision });
      } catch (e) { if (!isConflict(e)) throw e; }
      return h;
    }

    function newPod(ds: KObject, template: J, node: string, hash: string): KObject {
      const spec: J = JSON.parse(JSON.stringify(template.spec ?? {}));
      const req = { key: 'metadata.name', operator: 'In', values: [node] };
      spec.affinity = { ...(spec.affinity ?? {}), nodeAffinity: { ...(spec.affinity?.nodeAffinity ?? {}), requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [req] }] } } };
      return podFromTemplate(ds, { ...template, spec }, { labels: { [REVISION_LABEL]: hash, [GENERATION_LABEL]: String(ds.metadata?.generation ?? 1) } });
    }

    const del = (p: KObject) => host.objects.delete(podType, p.metadata!.namespace!, p.metadata!.name!, { preconditions: { uid: p.metadata!.uid! } }).catch((e) => { if (!isNotFound(e) && !isConflict(e)) throw e; });

    async function sync(key: string) {
      const [ns, name] = key.split('/');
      const ds = await host.objects.get(dsType, ns, name);
      if (!ds) return;
      const spec: J = isObj(ds.spec) ? ds.spec : {};
      const template: J = { ...(spec.template ?? {}), spec: withDaemonTolerations(spec.template?.spec ?? {}, kd) };
      const nodes = await host.objects.list(nodeType);
      const all = await host.objects.list(podType, ns);
      const pods = await claim(host, podType, ds, all.filter((p) => isPodActive(p) || controllerOf(p)?.uid === ds.metadata!.uid), selectorOf(spec.selector));
      const hash = await currentHash(ds, spec.template ?? {}, ns);
      const byNode = new Map<string, KObject[]>();
      for (const p of pods) {
        const n = targetNode(p);
        if (n && !p.metadata?.deletionTimestamp) byNode.set(n, [...(byNode.get(n) ?? []), p]);
      }
      const minReady = Number(spec.minReadySeconds) || 0;
      let again: number | undefined;
      const wait = (ms: number) => { again = Math.min(again ?? ms, ms); };
      const available = (p: KObject | undefined) => !!p && isPodAvailable(p, minReady, Date.now(), wait);
      const updated = (p: KObject) => p.metadata?.labels?.[REVISION_LABEL] === hash;

      const s = { desired: 0, current: 0, misscheduled: 0, ready: 0, updated: 0, available: 0 };
      const oldPods: KObject[] = [];
      const deleting = !!ds.metadata?.deletionTimestamp;
      for (const node of nodes) {
        const here = (byNode.get(node.metadata!.name!) ?? []).sort((a, b) => created(a) - created(b));
        const { run, stay } = placement(template.spec, node);
        if (run) {
          s.desired++;
          const live = here.filter((p) => (p.status as J | undefined)?.phase !== 'Failed');
          // a failed daemon pod is replaced; duplicates beyond the oldest go
          if (!deleting) for (const p of [...here.filter((p) => !live.includes(p)), ...live.slice(1)]) await del(p);
          if (!live.length) {
            if (!deleting) await host.objects.create(podType, newPod(ds, template, node.metadata!.name!, hash));
            continue;
          }
          const p = live[0];
          s.current++;
          if (isPodReady(p)) s.ready++;
          if (available(p)) s.available++;
          if (updated(p)) s.updated++;
          else oldPods.push(p);
        } else if (here.length) {
          s.misscheduled++;
          if (!stay && !deleting) for (const p of here) await del(p);
        }
      }
      if (!deleting && (spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
        // old pods that are not available go at once; available ones while the unavailable stay within maxUnavailable
        const maxUnavailable = scaledValue(spec.updateStrategy?.rollingUpdate?.maxUnavailable ?? 1, s.desired, true);
        let unavailable = s.desired - s.available;
        for (const p of oldPods.filter((p) => !available(p))) await del(p);
        for (const p of oldPods.filter(available)) {
          if (unavailable >= maxUnavailable) break;
          await del(p);
          unavailable++;
        }
      }
      const status: J = {
        currentNumberScheduled: s.current, numberMisscheduled: s.misscheduled, desiredNumberScheduled: s.desired, numberReady: s.ready,
        observedGeneration: ds.metadata?.generation ?? 1,
      };
      if (s.updated) status.updatedNumberScheduled = s.updated;
      if (s.available) status.numberAvailable = s.available;
      if (s.desired - s.available) status.numberUnavailable = s.desired - s.available;
      const old: J = isObj(ds.status) ? ds.status : {};
      if (old.collisionCount !== undefined) status.collisionCount = old.collisionCount;
      if (old.conditions) status.conditions = old.conditions;
      await writeStatus(host, dsType, ds, status);
      if (again !== undefined) queue.add(key, again + 50);
    }

    const queue = controllerQueue(host, 'daemonset', sync);
    const all = async () => { for (const ds of await host.objects.list(dsType)) queue.add(`${ds.metadata!.namespace}/${ds.metadata!.name}`); };

    async function podChanged(p: KObject) {
      const ns = p.metadata!.namespace!;
      const ref = controllerOf(p);
      if (ref) { if (ref.kind === 'DaemonSet') queue.add(`${ns}/${ref.name}`); return; }
      if (!isPodActive(p)) return;
      for (const ds of await host.objects.list(dsType, ns)) if (selectorOf((ds.spec as J | undefined)?.selector)(p.metadata?.labels ?? {})) queue.add(`${ns}/${ds.metadata!.name}`);
    }

    const warn = (e: unknown) => host.log.warn('daemonset controller', { error: String(e) });
    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      async start() {
        const t = [host.type('apps', 'daemonsets'), host.type('', 'pods'), host.type('', 'nodes'), host.type('apps', 'controllerrevisions')];
        if (t.some((x) => !x)) return;
        [dsType, podType, nodeType, revType] = t as TypeDef[];
        unwatch.push(host.objects.watch(dsType, (ev, o) => { if (ev !== 'DELETED') queue.add(`${o.metadata!.namespace}/${o.metadata!.name}`); }));
        unwatch.push(host.objects.watch(podType, (_ev, o) => { podChanged(o).catch(warn); }));
        // a node that comes, goes or changes labels or taints concerns every daemon set
        // (heartbeats, which change only status, do not)
        const seen = new Map<string, string>();
        const placementOf = (n: KObject) => canonical([n.metadata?.labels ?? {}, (n.spec as J | undefined)?.taints ?? [], (n.spec as J | undefined)?.unschedulable ?? false]);
        unwatch.push(host.objects.watch(nodeType, (ev, n) => {
          const k = n.metadata!.name!;
          const now = ev === 'DELETED' ? undefined : placementOf(n);
          if (seen.get(k) === now) return;
          if (now === undefined) seen.delete(k);
          else seen.set(k, now);
          all().catch(warn);
        }));
        for (const n of await host.objects.list(nodeType)) seen.set(n.metadata!.name!, placementOf(n));
        await all();
      },
      async stop() {
        for (const u of unwatch) u();
        await queue.stop();
      },
    };
  },
};
export default plugin;
