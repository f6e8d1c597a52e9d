// NamespaceExists: writes to namespaced objects in a namespace that does not exist are refused with
// the namespace's NotFound.
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts.js';

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'NamespaceExists',
  create(_options, host) {
    return {
      handles: (op, a) => op !== 'CONNECT' && !!a.namespace && a.type.namespaced,
      async validate(a) {
        const t = host.type('', 'namespaces');
        if (!t || (await host.objects.get(t, '', a.namespace))) return;
        const e = host.errors.status(404, 'NotFound', `namespaces "${a.namespace}" not found`);
        e.details = { name: a.namespace, kind: 'namespaces' };
        throw e;
      },
    };
  },
};
export default plugin;
