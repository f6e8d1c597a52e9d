// NamespaceExists: writes to namespaced objects in a namespace that does not exist are refused with
// the namespace's NotFound.
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';

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
        throw host.errors.notFound('', 'namespaces', a.namespace);
      },
    };
  },
};
export default plugin;
