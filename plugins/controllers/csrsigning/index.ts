// csrsigning: issues certificates for approved requests through the signer plugin named by
// spec.signerName. A signer's refusal becomes a `Failed` condition (reason SignerValidationFailure)
// and a server log line; nothing is issued. Requests for signers not configured here are left alone
// (an external signer may serve them).
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';
import { hasCondition, requestPem, requester, specOf, statusOf } from '../../lib/certificates.js';
import { condition, csrLoop } from '../../lib/csr-controller.js';

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'csrsigning',
  create(_options, host) {
    const loop = csrLoop(host, 'csrsigning', async (csr, type) => {
      if (!hasCondition(csr, 'Approved') || hasCondition(csr, 'Denied') || hasCondition(csr, 'Failed') || statusOf(csr).certificate) return;
      const spec = specOf(csr);
      const signer = host.signers().find((s) => s.signerName === spec.signerName);
      if (!signer) return;
      const name = csr.metadata!.name!;
      let pem: string;
      try {
        const req = requestPem(csr);
        if ('error' in req) throw new Error(req.error);
        pem = await signer.sign({ name, request: req.pem, usages: Array.isArray(spec.usages) ? spec.usages : [], expirationSeconds: typeof spec.expirationSeconds === 'number' ? spec.expirationSeconds : undefined, requester: requester(csr) });
      } catch (e) {
        const message = (e as Error).message;
        host.log.warn('csrsigning: signing failed', { csr: name, signerName: spec.signerName, error: message });
        const conditions = [...((statusOf(csr).conditions as unknown[]) ?? []), condition('Failed', 'SignerValidationFailure', message)];
        await host.objects.update(type, { ...csr, status: { ...statusOf(csr), conditions } }, 'status');
        return;
      }
      await host.objects.update(type, { ...csr, status: { ...statusOf(csr), certificate: Buffer.from(pem).toString('base64') } }, 'status');
    });
    // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
    return { externalLease: 'kube-controller-manager', start: () => loop.start(), stop: () => loop.stop() };
  },
};
export default plugin;
