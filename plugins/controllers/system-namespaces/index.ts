// The namespaces every cluster has exist from the first start, and come back at a start if gone, as
// the reference server's own system-namespaces controller makes them. This is the API server's work,
// not the controller manager's: it runs whether or not an external controller manager does (the
// deletion of namespaces is the `namespace` controller's, which steps aside for one).
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'system-namespaces',
  create(_options, host) {
    return {
      postStartHooks: ['start-system-namespaces-controller'],
      // every server of a shared store, as every reference server runs its own; once per process
      perServer: true,
      oncePerProcess: true,
      async start() {
        const nsType = host.type('', 'namespaces');
        if (!nsType) return;
        // the node-lease one is not immortal, as in the reference
        for (const name of ['default', host.brand.systemNamespace, host.brand.publicNamespace, host.brand.nodeLeaseNamespace]) {
          if (await host.objects.get(nsType, '', name)) continue;
          try {
            await host.objects.create(nsType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
          } catch (e) {
            if ((e as { code?: number }).code !== 409) throw e;
          }
        }
      },
      stop() {},
    };
  },
};
export default plugin;
