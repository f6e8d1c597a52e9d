// The storage-protection controller: the other half of StorageObjectInUseProtection. A claim being
// deleted loses its pvc-protection finalizer once no pod uses it; a volume being deleted loses
// pv-protection once no claim is bound to it. Then the registry removes them.
import { CONTRACT_VERSION, type KObject, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';

/** How long to wait before looking again at an object that is still in use. */
const RETRY_MS = 1000;

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'storage-protection',
  create(_options, host) {
    const pvcs = host.type('', 'persistentvolumeclaims');
    const pvs = host.type('', 'persistentvolumes');
    const pods = host.type('', 'pods');
    const pvcFinalizer = `${host.brand.keyDomain}/pvc-protection`;
    const pvFinalizer = `${host.brand.keyDomain}/pv-protection`;
    const timers = new Set<NodeJS.Timeout>();
    const unwatch: (() => void)[] = [];
    let stopped = false;

    const claimInUse = async (ns: string, name: string) =>
      (await host.objects.list(pods!, ns)).some((p) => {
        const phase = (p.status as { phase?: string } | undefined)?.phase;
        if (phase === 'Succeeded' || phase === 'Failed') return false;
        const vols = ((p.spec as { volumes?: { persistentVolumeClaim?: { claimName?: string } }[] } | undefined)?.volumes) ?? [];
        return vols.some((v) => v.persistentVolumeClaim?.claimName === name);
      });
    const volumeInUse = async (pv: KObject) => {
      const ref = (pv.spec as { claimRef?: { namespace?: string; name?: string } } | undefined)?.claimRef;
      return !!ref?.name && !!(await host.objects.get(pvcs!, ref.namespace ?? '', ref.name));
    };

    async function sync(type: TypeDef, finalizer: string, ns: string, name: string, inUse: (o: KObject) => Promise<boolean>) {
      if (stopped) return;
      const o = await host.objects.get(type, ns, name);
      if (!o?.metadata?.deletionTimestamp || !o.metadata.finalizers?.includes(finalizer)) return;
      if (await inUse(o)) {
        const t = setTimeout(() => { timers.delete(t); void sync(type, finalizer, ns, name, inUse).catch(() => {}); }, RETRY_MS);
        timers.add(t);
        return;
      }
      await host.objects.update(type, { ...o, metadata: { ...o.metadata, finalizers: o.metadata.finalizers.filter((f) => f !== finalizer) } });
    }

    const watch = (type: TypeDef | undefined, finalizer: string, inUse: (o: KObject) => Promise<boolean>) => {
      if (!type) return;
      const kick = (o: KObject) => void sync(type, finalizer, o.metadata?.namespace ?? '', o.metadata!.name!, inUse).catch((e) => host.log.warn('storage-protection', { name: o.metadata?.name, error: String(e) }));
      unwatch.push(host.objects.watch(type, (ev, o) => { if (ev !== 'DELETED' && o.metadata?.deletionTimestamp) kick(o); }));
      void host.objects.list(type).then((all) => all.filter((o) => o.metadata?.deletionTimestamp).forEach(kick));
    };

    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      start() {
        if (!pods) return;
        watch(pvcs, pvcFinalizer, (o) => claimInUse(o.metadata?.namespace ?? '', o.metadata!.name!));
        watch(pvs, pvFinalizer, volumeInUse);
      },
      stop() {
        stopped = true;
        for (const u of unwatch) u();
        for (const t of timers) clearTimeout(t);
      },
    };
  },
};
export default plugin;
