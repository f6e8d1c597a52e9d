// The small loop the certificate controllers share: watch CertificateSigningRequests, handle each
// changed one once at a time (a name changed again while handled is handled again), log failures.
import type { KObject, PluginHost, TypeDef } from '../../kernel/contracts.js';

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
  const queue = new Set<string>();
  let running = false;
  let stopped = false;
  let unwatch = () => {};
  async function work() {
    if (running || stopped) return;
    running = true;
    try {
      while (queue.size && !stopped) {
        const name = queue.values().next().value as string;
        queue.delete(name);
        const csr = await host.objects.get(type!, '', name);
        if (!csr) continue;
        try { await handle(csr, type!); } catch (e) { host.log.warn(`${controller}: ${(e as Error).message}`, { csr: name }); }
      }
    } finally {
      running = false;
    }
  }
  const add = (name: string) => { queue.add(name); void work(); };
  return {
    type,
    async start() {
      unwatch = host.objects.watch(type, (ev, o) => { if (ev !== 'DELETED') add(o.metadata!.name!); });
      for (const o of await host.objects.list(type)) add(o.metadata!.name!);
    },
    stop() { stopped = true; unwatch(); },
  };
}

/** A condition as the reference's controllers write it. */
export function condition(type: string, reason: string, message: string): Record<string, string> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return { type, status: 'True', reason, message, lastUpdateTime: now, lastTransitionTime: now };
}
