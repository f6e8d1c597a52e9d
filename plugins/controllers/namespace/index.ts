// The namespace controller: when a namespace is being deleted, delete every namespaced object in it,
// then remove the namespace finalizer so the namespace itself goes. (The system namespaces are the
// `system-namespaces` controller's.)
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
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      async start() {
        if (!nsType) return;
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
