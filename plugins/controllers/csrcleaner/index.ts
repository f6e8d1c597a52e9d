// csrcleaner: deletes certificate signing requests as the reference's cleaner does: approved, denied
// or failed ones an hour after that condition was last updated (Part B, Limits), pending ones after
// a day, and issued ones whose certificate has expired. Runs at start and then every
// `intervalSeconds` (default one hour, the reference's polling interval).
import { X509Certificate } from 'node:crypto';
import { CONTRACT_VERSION, type KObject, type PluginModule } from '../../../kernel/contracts/index.js';
import { conditionsOf, statusOf } from '../../lib/certificates.js';

const HOUR = 3600_000;
const AFTER_FINAL_MS = HOUR;
const PENDING_MS = 24 * HOUR;

/** Why a request is due for deletion at `now`, or undefined. */
export function expired(csr: KObject, now: number): string | undefined {
  const cert = statusOf(csr).certificate;
  if (typeof cert === 'string' && cert) {
    try {
      const c = new X509Certificate(Buffer.from(cert, 'base64'));
      if (Date.parse(c.validTo) < now) return 'issued certificate has expired';
    } catch { /* unparsable: the age rules below decide */ }
  }
  for (const c of conditionsOf(csr)) {
    if (!['Approved', 'Denied', 'Failed'].includes(c.type)) continue;
    const at = Date.parse(c.lastUpdateTime ?? c.lastTransitionTime ?? '');
    if (!Number.isNaN(at) && now - at > AFTER_FINAL_MS) return `${String(c.type).toLowerCase()} more than an hour ago`;
  }
  const created = Date.parse(csr.metadata?.creationTimestamp ?? '');
  if (!conditionsOf(csr).length && !cert && !Number.isNaN(created) && now - created > PENDING_MS) return 'pending for more than a day';
  return undefined;
}

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'csrcleaner',
  create(options, host) {
    const interval = (typeof options.intervalSeconds === 'number' && options.intervalSeconds > 0 ? options.intervalSeconds : 3600) * 1000;
    const type = host.type(`certificates.${host.brand.domain}`, 'certificatesigningrequests');
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    async function sweep() {
      const now = Date.now();
      for (const csr of await host.objects.list(type!)) {
        const why = expired(csr, now);
        if (!why) continue;
        host.log.info('csrcleaner: deleting certificate signing request', { csr: csr.metadata!.name, reason: why });
        try { await host.objects.delete(type!, '', csr.metadata!.name!); } catch (e) { host.log.warn('csrcleaner', { error: String(e) }); }
      }
    }
    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      start() {
        if (!type) { host.log.info('csrcleaner idle: CertificateSigningRequest is not served'); return; }
        const tick = () => { void sweep().finally(() => { if (!stopped) { timer = setTimeout(tick, interval); timer.unref(); } }); };
        tick();
      },
      stop() { stopped = true; if (timer) clearTimeout(timer); },
    };
  },
};
export default plugin;
