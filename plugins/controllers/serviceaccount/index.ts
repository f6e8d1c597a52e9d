// serviceaccount: every namespace that is not being deleted has a `default` ServiceAccount; one
// deleted is created again.
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';

const DEFAULT = 'default';

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'serviceaccount',
  create(_options, host) {
    const nsType = host.type('', 'namespaces')!;
    const saType = host.type('', 'serviceaccounts')!;
    const unwatch: (() => void)[] = [];
    async function ensure(ns: string) {
      const n = await host.objects.get(nsType, '', ns);
      if (!n || n.metadata?.deletionTimestamp) return;
      if (await host.objects.get(saType, ns, DEFAULT)) return;
      try {
        await host.objects.create(saType, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT, namespace: ns } });
      } catch (e) {
        if ((e as { code?: number }).code !== 409) host.log.warn('serviceaccount controller', { namespace: ns, error: String(e) });
      }
    }
    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      async start() {
        unwatch.push(host.objects.watch(nsType, (ev, o) => { if (ev !== 'DELETED') void ensure(o.metadata!.name!); }));
        unwatch.push(host.objects.watch(saType, (ev, o) => { if (ev === 'DELETED' && o.metadata?.name === DEFAULT) void ensure(o.metadata.namespace!); }));
        for (const n of await host.objects.list(nsType)) await ensure(n.metadata!.name!);
      },
      stop() { for (const u of unwatch) u(); },
    };
  },
};
export default plugin;
