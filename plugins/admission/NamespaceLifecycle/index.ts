// NamespaceLifecycle: no new objects in a namespace that does not exist or is terminating, and the
// three system namespaces cannot be deleted.
import { CONTRACT_VERSION, type AdmissionAttributes, type PluginModule } from '../../../kernel/contracts/index.js';

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'NamespaceLifecycle',
  create(_options, host) {
    const immortal = new Set(['default', host.brand.systemNamespace, host.brand.publicNamespace]);
    const isNamespaces = (a: AdmissionAttributes) => a.resource.group === '' && a.resource.resource === 'namespaces';
    return {
      handles: (op, a) => (op === 'DELETE' && isNamespaces(a)) || (op === 'CREATE' && a.type.namespaced && !!a.namespace),
      async validate(a) {
        if (a.operation === 'DELETE') {
          if (immortal.has(a.name)) throw host.errors.admissionForbidden(a, 'this namespace may not be deleted');
          return;
        }
        const nsType = host.type('', 'namespaces');
        if (!nsType) return;
        const ns = await host.objects.get(nsType, '', a.namespace);
        if (!ns) throw host.errors.notFound('', 'namespaces', a.namespace);
        if (ns.metadata?.deletionTimestamp || (ns.status as { phase?: string } | undefined)?.phase === 'Terminating') {
          const e = host.errors.status(403, 'Forbidden', `${a.resource.resource} "${a.name}" is forbidden: unable to create new content in namespace ${a.namespace} because it is being terminated`);
          e.details = { name: a.name, kind: a.resource.resource, group: a.resource.group || undefined, causes: [{ reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' }] };
          throw e;
        }
      },
    };
  },
};
export default plugin;
