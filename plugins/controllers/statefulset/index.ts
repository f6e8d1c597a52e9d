// The statefulset controller: pods named <set>-<ordinal> with stable hostnames, made in order
// (OrderedReady: ordinal N+1 only once N is Running and Ready; Parallel: all at once), removed
// highest ordinal first, a PersistentVolumeClaim per volumeClaimTemplate and ordinal, one
// ControllerRevision per template (controller-revision-hash), RollingUpdate from the highest
// ordinal down to the partition, OnDelete, and the reference's status counts and revisions.
import { CONTRACT_VERSION, type KObject, type PluginHost, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../lib/json.js';
import { canonical, claim, controllerOf, controllerQueue, controllerRef, isConflict, isNotFound, isPodAvailable, isPodReady, podFromTemplate, revisionData, selectorOf, writeStatus } from '../../lib/workload.js';

const REVISION_LABEL = 'controller-revision-hash';

const ordinalOf = (setName: string, pod: KObject): number | undefined => {
  const m = new RegExp(`^${setName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-(\\d+)$`).exec(pod.metadata?.name ?? '');
  return m ? Number(m[1]) : undefined;
};
const phase = (p: KObject) => (p.status as J | undefined)?.phase as string | undefined;
const runningAndReady = (p: KObject) => phase(p) === 'Running' && isPodReady(p);

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'statefulset',
  create(_options, host: PluginHost) {
    const kd = host.brand.keyDomain;
    const POD_NAME = `statefulset.${kd}/pod-name`;
    const POD_INDEX = `apps.${kd}/pod-index`;
    let setType: TypeDef, podType: TypeDef, revType: TypeDef, pvcType: TypeDef | undefined;
    const unwatch: (() => void)[] = [];

    /** The ControllerRevision of the set's current template, created when missing; returns its name. */
    async function updateRevision(set: KObject, spec: J, revisions: KObject[]): Promise<string> {
      const { data, hash } = revisionData(spec.template ?? {});
      const collisions = (set.status as J | undefined)?.collisionCount as number | undefined;
      const same = revisions.find((r) => canonical(r.data) === canonical(data));
      if (same) return same.metadata!.name!;
      const name = `${set.metadata!.name}-${hash(collisions)}`;
      const revision = Math.max(0, ...revisions.map((r) => Number(r.revision) || 0)) + 1;
      const labels = { ...(spec.template?.metadata?.labels ?? {}), [REVISION_LABEL]: hash(collisions) };
      try {
        await host.objects.create(revType, { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name, namespace: set.metadata!.namespace, labels, annotations: { ...(set.metadata?.annotations ?? {}) }, ownerReferences: [controllerRef(set)] }, data, revision });
      } catch (e) {
        if (!isConflict(e)) throw e;
      }
      return name;
    }

    /** A PersistentVolumeClaim per claim template for this ordinal, made when missing. */
    async function claims(set: KObject, spec: J, podName: string): Promise<void> {
      if (!pvcType) return;
      for (const tpl of list(spec.volumeClaimTemplates)) {
        const name = `${tpl.metadata?.name}-${podName}`;
        if (await host.objects.get(pvcType, set.metadata!.namespace!, name)) continue;
        const labels = { ...(tpl.metadata?.labels ?? {}), ...(spec.selector?.matchLabels ?? {}) };
        try {
          await host.objects.create(pvcType, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { ...(tpl.metadata ?? {}), name, namespace: set.metadata!.namespace, labels }, spec: tpl.spec ?? {} });
        } catch (e) { if (!isConflict(e)) throw e; }
      }
    }

    function newPod(set: KObject, spec: J, ordinal: number, revisionName: string): KObject {
      const name = `${set.metadata!.name}-${ordinal}`;
      const template: J = JSON.parse(JSON.stringify(spec.template ?? {}));
      template.spec ??= {};
      template.spec.hostname = name;
      if (spec.serviceName) template.spec.subdomain = spec.serviceName;
      // each claim template becomes the pod's volume of that name
      const volumes = list(template.spec.volumes).filter((v) => !list(spec.volumeClaimTemplates).some((c) => c.metadata?.name === v.name));
      for (const c of list(spec.volumeClaimTemplates)) volumes.push({ name: c.metadata?.name, persistentVolumeClaim: { claimName: `${c.metadata?.name}-${name}` } });
      if (volumes.length) template.spec.volumes = volumes;
      return podFromTemplate(set, template, { name, labels: { [POD_NAME]: name, [POD_INDEX]: String(ordinal), [REVISION_LABEL]: revisionName } });
    }

    async function sync(key: string) {
      const [ns, name] = key.split('/');
      const set = await host.objects.get(setType, ns, name);
      if (!set) return;
      const spec: J = isObj(set.spec) ? set.spec : {};
      const replicas = Number(spec.replicas ?? 1);
      const matches = selectorOf(spec.selector);
      const all = await host.objects.list(podType, ns);
      // members only: pods named <set>-<ordinal> (the reference's isMemberOf)
      const pods = (await claim(host, podType, set, all.filter((p) => ordinalOf(name, p) !== undefined), matches)).filter((p) => ordinalOf(name, p) !== undefined);
      const revisions = (await host.objects.list(revType, ns)).filter((r) => controllerOf(r)?.uid === set.metadata!.uid);
      const old: J = isObj(set.status) ? set.status : {};
      const updateRev = await updateRevision(set, spec, revisions);
      const currentRev: string = old.currentRevision && revisions.some((r) => r.metadata!.name === old.currentRevision) ? old.currentRevision : updateRev;

      const byOrdinal = new Map<number, KObject>();
      const extra: KObject[] = [];
      for (const p of pods) {
        const o = ordinalOf(name, p);
        if (o !== undefined && o < replicas) byOrdinal.set(o, p);
        else extra.push(p);
      }
      const parallel = spec.podManagementPolicy === 'Parallel';
      const minReady = Number(spec.minReadySeconds) || 0;
      let again: number | undefined;
      const wait = (ms: number) => { again = Math.min(again ?? ms, ms); };
      if (!set.metadata?.deletionTimestamp) await reconcile();

      async function reconcile(): Promise<void> {
        // 1. make the missing and replace the failed, lowest ordinal first
        for (let o = 0; o < replicas; o++) {
          const p = byOrdinal.get(o);
          if (p && phase(p) === 'Failed' && !p.metadata?.deletionTimestamp) {
            await del(p);
            if (!parallel) return;
            continue;
          }
          if (!p) {
            const rev = currentRev !== updateRev && o < Number(spec.updateStrategy?.rollingUpdate?.partition ?? 0) ? currentRev : updateRev;
            await claims(set!, spec, `${name}-${o}`);
            // a pod below the partition is made from the current revision's template, not the set's new one
            const stored = rev === updateRev ? undefined : revisions.find((r) => r.metadata!.name === rev);
            const template = (stored?.data as J | undefined)?.spec?.template;
            const revSpec = isObj(template) ? { ...spec, template: Object.fromEntries(Object.entries(template).filter(([k]) => k !== '$patch')) } : spec;
            try { await host.objects.create(podType, newPod(set!, revSpec, o, rev)); } catch (e) { if (!isConflict(e)) throw e; }
            if (!parallel) return;
            continue;
          }
          // OrderedReady: nothing past a pod that is not yet Running, Ready and available
          if (!parallel && (p.metadata?.deletionTimestamp || !runningAndReady(p) || !isPodAvailable(p, minReady, Date.now(), wait))) return;
        }
        // 2. remove the surplus, highest ordinal first (one at a time unless Parallel)
        const surplus = extra.filter((p) => !p.metadata?.deletionTimestamp).sort((a, b) => (ordinalOf(name, b) ?? 0) - (ordinalOf(name, a) ?? 0));
        if (surplus.length) {
          if (!parallel && ([...byOrdinal.values()].some((p) => !runningAndReady(p)) || extra.some((p) => p.metadata?.deletionTimestamp))) return;
          for (const p of parallel ? surplus : surplus.slice(0, 1)) await del(p);
          return;
        }
        // 3. RollingUpdate: the highest ordinal not at the update revision goes, down to the partition
        if ((spec.updateStrategy?.type ?? 'RollingUpdate') !== 'RollingUpdate') return;
        const partition = Number(spec.updateStrategy?.rollingUpdate?.partition ?? 0);
        for (let o = replicas - 1; o >= partition; o--) {
          const p = byOrdinal.get(o)!;
          if (p.metadata?.deletionTimestamp) return;
          if (p.metadata?.labels?.[REVISION_LABEL] !== updateRev) { await del(p); return; }
          if (!runningAndReady(p)) return;
        }
      }

      // status, from the pods as read (the watch events of this pass's writes bring the next)
      const live = pods;
      const status: J = { observedGeneration: set.metadata?.generation ?? 1, replicas: live.filter((p) => phase(p)).length };
      const ready = live.filter(runningAndReady).length;
      const current = live.filter((p) => !p.metadata?.deletionTimestamp && p.metadata?.labels?.[REVISION_LABEL] === currentRev).length;
      const updated = live.filter((p) => !p.metadata?.deletionTimestamp && p.metadata?.labels?.[REVISION_LABEL] === updateRev).length;
      if (ready) status.readyReplicas = ready;
      let currentRevision = currentRev;
      let currentReplicas = current;
      // a finished rolling update makes the update revision the current one
      if ((spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' && updated === status.replicas && ready === status.replicas) { currentRevision = updateRev; currentReplicas = updated; }
      if (currentReplicas) status.currentReplicas = currentReplicas;
      if (updated) status.updatedReplicas = updated;
      status.currentRevision = currentRevision;
      status.updateRevision = updateRev;
      status.collisionCount = old.collisionCount ?? 0;
      if (old.conditions) status.conditions = old.conditions;
      status.availableReplicas = live.filter((p) => runningAndReady(p) && isPodAvailable(p, minReady, Date.now(), wait)).length;
      await writeStatus(host, setType, set, status);
      // old revisions beyond revisionHistoryLimit that no pod uses go
      const limit = Number(spec.revisionHistoryLimit ?? 10);
      const inUse = new Set([currentRevision, updateRev, ...live.map((p) => p.metadata?.labels?.[REVISION_LABEL])]);
      const spare = revisions.filter((r) => !inUse.has(r.metadata!.name)).sort((a, b) => Number(a.revision) - Number(b.revision));
      for (const r of spare.slice(0, Math.max(0, spare.length - limit))) await host.objects.delete(revType, ns, r.metadata!.name!).catch((e) => { if (!isNotFound(e)) throw e; });
      if (again !== undefined) queue.add(key, again + 50);
    }

    async function del(p: KObject): Promise<void> {
      await host.objects.delete(podType, p.metadata!.namespace!, p.metadata!.name!, { preconditions: { uid: p.metadata!.uid! } }).catch((e) => { if (!isNotFound(e) && !isConflict(e)) throw e; });
    }

    const queue = controllerQueue(host, 'statefulset', sync);

    async function podChanged(p: KObject) {
      const ns = p.metadata!.namespace!;
      const ref = controllerOf(p);
      if (ref) { if (ref.kind === 'StatefulSet') queue.add(`${ns}/${ref.name}`); return; }
      for (const s of await host.objects.list(setType, ns)) if (selectorOf((s.spec as J | undefined)?.selector)(p.metadata?.labels ?? {})) queue.add(`${ns}/${s.metadata!.name}`);
    }

    const warn = (e: unknown) => host.log.warn('statefulset controller', { error: String(e) });
    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      async start() {
        const t = [host.type('apps', 'statefulsets'), host.type('', 'pods'), host.type('apps', 'controllerrevisions')];
        if (!t[0] || !t[1] || !t[2]) return;
        [setType, podType, revType] = t as TypeDef[];
        pvcType = host.type('', 'persistentvolumeclaims');
        unwatch.push(host.objects.watch(setType, (ev, o) => { if (ev !== 'DELETED') queue.add(`${o.metadata!.namespace}/${o.metadata!.name}`); }));
        unwatch.push(host.objects.watch(podType, (_ev, o) => { podChanged(o).catch(warn); }));
        for (const s of await host.objects.list(setType)) queue.add(`${s.metadata!.namespace}/${s.metadata!.name}`, 0);
      },
      async stop() {
        for (const u of unwatch) u();
        await queue.stop();
      },
    };
  },
};
export default plugin;
