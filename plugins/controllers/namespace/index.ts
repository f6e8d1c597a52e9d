// The namespace controller: the system namespaces exist from the first start; when a namespace is
// being deleted, delete every namespaced object in it, then remove the namespace finalizer so the
// namespace itself goes.
import { CONTRACT_VERSION, type KObject, type PluginModule } from '../../../kernel/contracts/index.js';

/** How long to wait before re-checking a namespace whose contents are still going away. */
const RETRY_MS = 200;
/**
 * How long a namespace marked for deletion waits before its contents are deleted: the reference's
 * namespace controller waits 5 s after each event, and clients rely on it (`kubectl delete -f` of a
 * bundle that holds its own Namespace deletes the Namespace, then each object in it).
 */
const GRACE_MS = 5000;

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'namespace',
  create(_options, host) {
    const nsType = host.type('', 'namespaces');
    const queue = new Set<string>();
    const timers = new Set<NodeJS.Timeout>();
    let running = false;
    let stopped = false;
    let unwatch = () => {};

    const enqueue = (name: string, delay = 0) => {
      const t = setTimeout(() => { timers.delete(t); queue.add(name); void work(); }, delay);
      timers.add(t);
    };

    async function sync(name: string): Promise<boolean> {
      const ns = await host.objects.get(nsType!, '', name);
      if (!ns?.metadata?.deletionTimestamp) return true;
      let remaining = 0;
      for (const t of host.allTypes()) {
        if (!t.namespaced) continue;
        for (const o of await host.objects.list(t, name)) {
          remaining++;
          // Background, as the reference's namespace deleter: not a type's default (v1 ReplicationControllers and Jobs orphan)
          if (!o.metadata?.deletionTimestamp) await host.objects.delete(t, name, o.metadata!.name!, { propagationPolicy: 'Background' });
        }
      }
      if (remaining > 0) return false;
      const spec = (ns.spec ?? {}) as { finalizers?: string[] };
      const fin = spec.finalizers ?? [];
      if (!fin.includes(host.brand.namespaceFinalizer)) return true;
      const next: KObject = { ...ns, spec: { ...spec, finalizers: fin.filter((f) => f !== host.brand.namespaceFinalizer) } };
      await host.objects.update(nsType!, next, 'finalize');
      return true;
    }

    async function work() {
      if (running || stopped) return;
      running = true;
      try {
        while (queue.size && !stopped) {
          const name = queue.values().next().value as string;
          queue.delete(name);
          let done = false;
          try { done = await sync(name); } catch (e) { host.log.warn('namespace controller', { namespace: name, error: String(e) }); }
          if (!done) enqueue(name, RETRY_MS);
        }
      } finally {
        running = false;
      }
    }

    return {
      postStartHooks: ['start-system-namespaces-controller'],
      async start() {
        if (!nsType) return;
        // The namespaces every cluster has exist from the first start (and come back at a start if gone), as the
        // reference's system-namespaces controller makes them; the node-lease one is not immortal.
        for (const name of ['default', host.brand.systemNamespace, host.brand.publicNamespace, host.brand.nodeLeaseNamespace]) {
          if (await host.objects.get(nsType, '', name)) continue;
          try {
            await host.objects.create(nsType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
          } catch (e) {
            if ((e as { code?: number }).code !== 409) throw e;
          }
        }
        unwatch = host.objects.watch(nsType, (type, obj) => {
          if (type !== 'DELETED' && obj.metadata?.deletionTimestamp) enqueue(obj.metadata.name!, GRACE_MS);
        });
        for (const ns of await host.objects.list(nsType)) if (ns.metadata?.deletionTimestamp) enqueue(ns.metadata.name!, GRACE_MS);
      },
      stop() {
        stopped = true;
        unwatch();
        for (const t of timers) clearTimeout(t);
      },
    };
  },
};
export default plugin;
