// csrapproving: approves node-agent client requests (the node-agent client signer, a node subject,
// no alternative names, the node client usages) when a SubjectAccessReview allows the requester to
// create certificatesigningrequests/selfnodeclient (renewing its own certificate: common name =
// requester) or certificatesigningrequests/nodeclient, as the reference's approver does.
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';
import { conditionsOf, hasCondition, parseRequest, requestPem, requester, sansOf, specOf, strList, subjectOf } from '../../lib/certificates.js';
import { condition, csrLoop } from '../../lib/csr-controller.js';

const NODE_CLIENT_USAGES = ['key encipherment', 'digital signature', 'client auth'];

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'csrapproving',
  create(_options, host) {
    const group = `certificates.${host.brand.domain}`;
    const loop = csrLoop(host, 'csrapproving', async (csr, type) => {
      const spec = specOf(csr);
      if (spec.signerName !== host.brand.signers.apiserverClientNodeAgent) return;
      if (hasCondition(csr, 'Approved') || hasCondition(csr, 'Denied') || hasCondition(csr, 'Failed')) return;
      const pem = requestPem(csr);
      const parsed = 'error' in pem ? undefined : parseRequest(pem.pem);
      if (!parsed || 'error' in parsed) return;
      const subject = subjectOf(parsed.csr);
      const sans = sansOf(parsed.csr);
      const usages = strList(spec.usages);
      const nodeClient = subject.O.length === 1 && subject.O[0] === 'system:nodes' && subject.CN.startsWith('system:node:') &&
        !sans.dns.length && !sans.ip.length && !sans.email.length && !sans.uri.length &&
        usages.length === NODE_CLIENT_USAGES.length && NODE_CLIENT_USAGES.every((u) => usages.includes(u));
      if (!nodeClient) return;
      const user = requester(csr);
      const self = subject.CN === user.username;
      // The reference tries the self-renewal permission first, then the general one.
      for (const [sub, message] of [
        ...(self ? [['selfnodeclient', 'Auto approving self kubelet client certificate after SubjectAccessReview.']] : []),
        ['nodeclient', 'Auto approving kubelet client certificate after SubjectAccessReview.'],
      ] as [string, string][]) {
        const d = await host.authorize({ user, isResourceRequest: true, path: '', verb: 'create', apiPrefix: 'apis', apiGroup: group, apiVersion: '*', namespace: '', resource: 'certificatesigningrequests', subresource: sub, name: '' });
        if (d.decision !== 'allow') continue;
        await host.objects.update(type, { ...csr, status: { ...(csr.status as object), conditions: [...conditionsOf(csr), condition('Approved', 'AutoApproved', message)] } }, 'approval');
        return;
      }
    });
    // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
    return { externalLease: 'kube-controller-manager', start: () => loop.start(), stop: () => loop.stop() };
  },
};
export default plugin;
