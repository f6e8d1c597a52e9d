// Publishes the cluster CA as a ConfigMap (`kube-root-ca.crt` with the kubernetes brand,
// `root-ca.crt` with the cluster brand) in every namespace and keeps it current: recreated when
// deleted, reset when changed. Projected service account volumes read it.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CONTRACT_VERSION, type KObject, type PluginModule } from '../../../kernel/contracts/index.js';
import { WorkQueue } from '../../lib/work-queue.js';

interface Options {
  /** PEM bundle to publish (the reference's --root-ca-file); default the first-start CA. */
  rootCAFile?: string;
}

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'root-ca-publisher',
  create(options, host) {
    const o = options as Options;
    const name = host.brand.name === 'kubernetes' ? 'kube-root-ca.crt' : 'root-ca.crt';
    const description = `Contains a CA bundle that can be used to verify the ${host.brand.name === 'kubernetes' ? 'kube-apiserver' : `${host.brand.name}-apiserver`} when using internal endpoints such as the internal service IP or ${host.brand.name}.default.svc. No other usage is guaranteed across distributions of ${host.brand.name === 'kubernetes' ? 'Kubernetes' : host.brand.name} clusters.`;
    const nsType = host.type('', 'namespaces');
    const cmType = host.type('', 'configmaps');
    let ca = '';
    const unwatch: (() => void)[] = [];

    async function sync(ns: string) {
      const n = await host.objects.get(nsType!, '', ns);
      if (!n || n.metadata?.deletionTimestamp) return;
      const cur = await host.objects.get(cmType!, ns, name);
      const annotations = { [`${host.brand.keyDomain}/description`]: description };
      if (!cur) {
        await host.objects.create(cmType!, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, annotations }, data: { 'ca.crt': ca } });
        return;
      }
      const data = cur.data as Record<string, string> | undefined;
      if (data?.['ca.crt'] === ca && Object.keys(data).length === 1 && cur.metadata?.annotations?.[`${host.brand.keyDomain}/description`] === description) return;
      const next: KObject = { ...cur, data: { 'ca.crt': ca }, metadata: { ...cur.metadata, annotations: { ...cur.metadata?.annotations, ...annotations } } };
      await host.objects.update(cmType!, next);
    }

    const queue = new WorkQueue(sync, (ns, e) => {
      const code = (e as { code?: number }).code;
      if (code !== 403 && code !== 404) host.log.warn('root-ca-publisher', { namespace: ns, error: String(e) });
    });
    const kick = (ns: string) => queue.add(ns);

    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      async start() {
        if (!nsType || !cmType) return;
        ca = await readFile(o.rootCAFile ?? path.join(host.dataDir, 'pki', 'ca.crt'), 'utf8');
        unwatch.push(host.objects.watch(nsType, (ev, obj) => { if (ev !== 'DELETED') kick(obj.metadata!.name!); }));
        unwatch.push(host.objects.watch(cmType, (_ev, obj) => kick(obj.metadata!.namespace!), { name }));
        for (const n of await host.objects.list(nsType)) kick(n.metadata!.name!);
      },
      async stop() {
        for (const u of unwatch) u();
        await queue.stop();
      },
    };
  },
};
export default plugin;
