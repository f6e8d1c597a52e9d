// bootstrapsigner: keeps the `cluster-info` ConfigMap of the public namespace signed for every
// bootstrap token that may sign (usage-bootstrap-signing "true", not expired): key
// `jws-kubeconfig-<token-id>` holds a detached JWS (HS256, key = "<id>.<secret>", kid = id) of the
// `kubeconfig` value, which a joining node verifies with the token it was given. Signatures of
// tokens that are gone, expired or no longer signing are removed; stale ones are replaced.
import { CompactSign } from 'jose';
import { CONTRACT_VERSION, type KObject, type PluginModule } from '../../../kernel/contracts/index.js';
import { readBootstrapToken } from '../../lib/bootstrap-tokens.js';

const PREFIX = 'jws-kubeconfig-';

/** Detached compact JWS: "<header>..<signature>". */
export async function detachedJWS(content: string, tokenId: string, tokenSecret: string): Promise<string> {
  const full = await new CompactSign(new TextEncoder().encode(content)).setProtectedHeader({ alg: 'HS256', kid: tokenId }).sign(new TextEncoder().encode(`${tokenId}.${tokenSecret}`));
  const [h, , s] = full.split('.');
  return `${h}..${s}`;
}

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'bootstrapsigner',
  create(_options, host) {
    const secretType = host.type('', 'secrets')!;
    const cmType = host.type('', 'configmaps')!;
    const pub = host.brand.publicNamespace;
    const unwatch: (() => void)[] = [];
    const expiryTimers = new Set<NodeJS.Timeout>();
    let running = false;
    let again = false;

    async function sign() {
      const cm = await host.objects.get(cmType, pub, 'cluster-info');
      if (!cm) return;
      const data = { ...((cm.data ?? {}) as Record<string, string>) };
      const content = data.kubeconfig;
      const want: Record<string, string> = {};
      if (typeof content === 'string') {
        for (const s of await host.objects.list(secretType, host.brand.systemNamespace)) {
          const tok = readBootstrapToken(host, s);
          if (!tok || !tok.usages.has('signing')) continue;
          if (tok.expires !== undefined && tok.expires <= Date.now()) continue;
          if (tok.expires !== undefined) {
            // re-run when this token expires, to drop its signature
            const t = setTimeout(() => { expiryTimers.delete(t); schedule(); }, Math.min(tok.expires - Date.now() + 10, 2 ** 31 - 1));
            t.unref();
            expiryTimers.add(t);
          }
          want[PREFIX + tok.id] = await detachedJWS(content, tok.id, tok.secret);
        }
      }
      let changed = false;
      for (const k of Object.keys(data)) if (k.startsWith(PREFIX) && !(k in want)) { delete data[k]; changed = true; }
      for (const [k, v] of Object.entries(want)) if (data[k] !== v) { data[k] = v; changed = true; }
      if (changed) await host.objects.update(cmType, { ...cm, data });
    }
    function schedule() {
      if (running) { again = true; return; }
      running = true;
      void sign().catch((e) => host.log.warn('bootstrapsigner', { error: String(e) })).finally(() => {
        running = false;
        if (again) { again = false; schedule(); }
      });
    }
    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      start() {
        unwatch.push(host.objects.watch(secretType, () => schedule(), { namespace: host.brand.systemNamespace }));
        unwatch.push(host.objects.watch(cmType, () => schedule(), { namespace: pub, name: 'cluster-info' }));
        schedule();
      },
      stop() { for (const u of unwatch) u(); for (const t of expiryTimers) clearTimeout(t); },
    };
  },
};
export default plugin;
