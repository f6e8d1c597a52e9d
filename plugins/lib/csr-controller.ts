// The small loop the certificate controllers share: watch CertificateSigningRequests, handle each
// changed one once at a time (a name changed again while handled is handled again), log failures.
import type { KObject, PluginHost, TypeDef } from '../../kernel/contracts/index.js';
import { WorkQueue } from './work-queue.js';

export interface CSRLoop {
  type: TypeDef;
  start(): Promise<void>;
  stop(): void;
}

export function csrLoop(host: PluginHost, controller: string, handle: (csr: KObject, type: TypeDef) => Promise<void>): CSRLoop {
  const type = host.type(`certificates.${host.brand.domain}`, 'certificatesigningrequests');
  if (!type) {
    // a configuration without the certificates types has no requests to handle (as the reference's
    // controller manager skips controllers whose API is off)
    host.log.info(`${controller} idle: CertificateSigningRequest is not served`);
    return { type: undefined as unknown as TypeDef, async start() {}, stop() {} };
  }
  // one request at a time, a name changed again while handled is handled again (plugins/lib/work-queue.ts)
  const queue = new WorkQueue(async (name) => {
    const csr = await host.objects.get(type, '', name);
    if (csr) await handle(csr, type);
  }, (name, e) => host.log.warn(`${controller}: ${(e as Error).message}`, { csr: name }), 0);
  let unwatch = () => {};
  return {
    type,
    async start() {
      unwatch = host.objects.watch(type, (ev, o) => { if (ev !== 'DELETED') queue.add(o.metadata!.name!); });
      for (const o of await host.objects.list(type)) queue.add(o.metadata!.name!);
    },
    stop() { unwatch(); void queue.stop(); },
  };
}

/** A condition as the reference's controllers write it. */
export function condition(type: string, reason: string, message: string): Record<string, string> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return { type, status: 'True', reason, message, lastUpdateTime: now, lastTransitionTime: now };
}
