// Publishes what an extension API server needs to trust this server's clients and its front proxy,
// as the reference's cluster-authentication-trust controller does: the ConfigMap
// `extension-apiserver-authentication` in the system namespace with client-ca-file (the x509
// authenticator's CAs, --client-ca-file), requestheader-client-ca-file (--requestheader-client-ca-file
// plus, when this server signed its own front-proxy client certificate, that CA) and the
// requestheader-* header names and allowed names as JSON lists. Kept current: files re-read every
// minute, the ConfigMap recreated when deleted and reset when changed.
import { readFile } from 'node:fs/promises';
import { CONTRACT_VERSION, type KObject, type PluginModule } from '../../../kernel/contracts/index.js';
import { WorkQueue } from '../../lib/work-queue.js';

export const CONFIGMAP_NAME = 'extension-apiserver-authentication';

const list = (v: unknown): string[] => (typeof v === 'string' ? v.split(',') : Array.isArray(v) ? v : []).filter((x): x is string => typeof x === 'string' && x.trim() !== '').map((x) => x.trim());

/** PEM texts one after the other, as they are (a newline between two only where the first lacks one). */
const concat = (pems: string[]) => pems.filter(Boolean).reduce((acc, p) => (acc === '' || acc.endsWith('\n') ? acc + p : `${acc}\n${p}`), '');

async function bundle(files: string[]): Promise<string> {
  return concat(await Promise.all(files.map((f) => readFile(f, 'utf8'))));
}

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'cluster-authentication-trust',
  create(options, host) {
    const nsType = host.type('', 'namespaces');
    const cmType = host.type('', 'configmaps');
    const ns = host.brand.systemNamespace;
    const refreshMs = Number(options.refreshSeconds ?? 60) * 1000;
    let want: Record<string, string> = {};
    let unwatch: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;

    /** The ConfigMap's data from the configuration as it is now. */
    async function compute(): Promise<Record<string, string>> {
      const data: Record<string, string> = {};
      const x509 = host.authenticatorOptions('x509');
      const clientCA = list(x509?.clientCAFile);
      if (clientCA.length) data['client-ca-file'] = await bundle(clientCA);
      const rh = host.authenticatorOptions('request-header');
      const fp = host.frontProxyClient();
      let ca = rh ? await bundle(list(rh.clientCAFile)) : '';
      if (fp.caPem && !ca.includes(fp.caPem.trim())) ca = concat([ca, fp.caPem]);
      if (ca) {
        data['requestheader-client-ca-file'] = ca;
        const names = list(rh?.allowedNames);
        // The certificate this server made for itself must pass an allowed-names list, when there is one.
        if (fp.caPem && names.length && !names.includes('front-proxy-client')) names.push('front-proxy-client');
        if (fp.caPem && !rh) names.push('front-proxy-client');
        data['requestheader-allowed-names'] = JSON.stringify(names);
        data['requestheader-extra-headers-prefix'] = JSON.stringify(rh ? list(rh.extraHeadersPrefixes) : ['X-Remote-Extra-']);
        data['requestheader-group-headers'] = JSON.stringify(rh ? list(rh.groupHeaders) : ['X-Remote-Group']);
        data['requestheader-username-headers'] = JSON.stringify(rh ? list(rh.usernameHeaders) : ['X-Remote-User']);
      }
      return data;
    }

    async function sync(): Promise<void> {
      if (!nsType || !cmType) return;
      if (!(await host.objects.get(nsType, '', ns))) {
        try { await host.objects.create(nsType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }); } catch (e) { if ((e as { code?: number }).code !== 409) throw e; }
      }
      const cur = await host.objects.get(cmType, ns, CONFIGMAP_NAME);
      if (!cur) {
        await host.objects.create(cmType, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: CONFIGMAP_NAME, namespace: ns }, data: want });
        return;
      }
      const have = (cur.data ?? {}) as Record<string, string>;
      if (Object.keys(have).length === Object.keys(want).length && Object.entries(want).every(([k, v]) => have[k] === v) && !cur.binaryData) return;
      const next: KObject = { ...cur, data: want };
      delete next.binaryData;
      await host.objects.update(cmType, next);
    }

    const queue = new WorkQueue(sync, (_k, e) => host.log.warn('cluster-authentication-trust', { error: String((e as Error)?.message ?? e) }));
    const refresh = async () => {
      try { want = await compute(); } catch (e) { host.log.warn('cluster-authentication-trust: cannot read a CA file', { error: String((e as Error)?.message ?? e) }); return; }
      queue.add('sync');
    };

    return {
      postStartHooks: ['start-cluster-authentication-info-controller'],
      async start() {
        if (!nsType || !cmType) return;
        want = await compute();
        await sync();
        unwatch = host.objects.watch(cmType, () => queue.add('sync'), { name: CONFIGMAP_NAME, namespace: ns });
        timer = setInterval(() => void refresh(), refreshMs);
        timer.unref();
      },
      async stop() {
        unwatch?.();
        if (timer) clearInterval(timer);
        await queue.stop();
      },
    };
  },
};

export default plugin;
