// NamespaceLifecycle: no new objects in a namespace that does not exist or is terminating, and the
// three system namespaces cannot be deleted.
import { CONTRACT_VERSION, type AdmissionAttributes, type KObject, type PluginModule } from '../../../kernel/contracts/index.js';

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'NamespaceLifecycle',
  create(_options, host) {
    const immortal = new Set(['default', host.brand.systemNamespace, host.brand.publicNamespace]);
    const isNamespaces = (a: AdmissionAttributes) => a.resource.group === '' && a.resource.resource === 'namespaces';
    const terminating = (ns: KObject) => !!ns.metadata?.deletionTimestamp || (ns.status as { phase?: string } | undefined)?.phase === 'Terminating';
    // Each namespace's state (terminating or not), kept from the server's own notifications of
    // namespace changes: reading and parsing the namespace on every create cost about 1.5 % of the
    // server's main thread in the create benchmark. The notifications come as the object cache
    // applies a change, so this map agrees with a read of the cache at any moment; it is filled by
    // a synchronous scan in the same turn as the subscription, so no change falls in between.
    let states: Map<string, boolean> | undefined;
    let unwatch: (() => void) | undefined;
    const nsStates = (): Map<string, boolean> | undefined => {
      if (states) return states;
      const nsType = host.type('', 'namespaces');
      if (!nsType || !host.objects.scan) return undefined;
      const m = new Map<string, boolean>();
      host.objects.scan(nsType, (o) => { m.set(o.name, terminating(o.object())); });
      unwatch = host.objects.watch(nsType, (ev, o) => {
        const name = o.metadata?.name;
        if (typeof name !== 'string') return;
        if (ev === 'DELETED') m.delete(name);
        else m.set(name, terminating(o));
      });
      return (states = m);
    };
    return {
      handles: (op, a) => (op === 'DELETE' && isNamespaces(a)) || (op === 'CREATE' && a.type.namespaced && !!a.namespace),
      async validate(a) {
        if (a.operation === 'DELETE') {
          if (immortal.has(a.name)) throw host.errors.admissionForbidden(a, 'this namespace may not be deleted');
          return;
        }
        const known = nsStates();
        let ending: boolean | undefined;
        if (known) ending = known.get(a.namespace);
        else {
          const nsType = host.type('', 'namespaces');
          if (!nsType) return;
          const ns = await host.objects.get(nsType, '', a.namespace);
          ending = ns ? terminating(ns) : undefined;
        }
        if (ending === undefined) throw host.errors.notFound('', 'namespaces', a.namespace);
        if (ending) {
          const e = host.errors.status(403, 'Forbidden', `${a.resource.resource} "${a.name}" is forbidden: unable to create new content in namespace ${a.namespace} because it is being terminated`);
          e.details = { name: a.name, kind: a.resource.resource, group: a.resource.group || undefined, causes: [{ reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' }] };
          throw e;
        }
      },
      async close() { unwatch?.(); },
    };
  },
};
export default plugin;
