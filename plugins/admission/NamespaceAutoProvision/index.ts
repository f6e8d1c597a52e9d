// NamespaceAutoProvision: creating a namespaced object in a namespace that does not exist creates the
// namespace first (not for dry-run requests).
import { CONTRACT_VERSION, type AdmissionAttributes, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';


const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'NamespaceAutoProvision',
  create(_options, host) {
    return {
      handles: (op, a) => op === 'CREATE' && !a.dryRun && !!a.namespace && a.type.namespaced,
      async admit(a) {
        const t = host.type('', 'namespaces');
        if (!t || (await host.objects.get(t, '', a.namespace))) return;
        try {
          await host.objects.create(t, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: a.namespace } });
        } catch (e) {
          if ((e as { code?: number }).code === 409) return; // created meanwhile
          throw host.errors.admissionForbidden(a, (e as Error).message);
        }
      },
    };
  },
};
export default plugin;
