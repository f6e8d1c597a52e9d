// Signer <domain>/nodeagent-serving (kubernetes.io/kubelet-serving): node agents' serving
// certificates. Organization exactly system:nodes, common name system:node:<name>, at least one DNS
// or IP name and no e-mail or URI names, usages exactly key encipherment, digital signature, server auth.
import { builtinSigner, exactUsages, nodeSubject, sansOf } from '../../lib/builtin-signer.js';

const usages = exactUsages(['key encipherment', 'digital signature', 'server auth']);

export default builtinSigner({
  name: 'nodeagent-serving',
  signer: (b) => b.signers.nodeAgentServing,
  keepSans: true,
  restrict: (csr, u) => {
    const s = sansOf(csr);
    if (!s.dns.length && !s.ip.length) return 'at least one DNS or IP subject alternative name is required';
    if (s.email.length || s.uri.length) return 'e-mail and URI subject alternative names are not allowed';
    return nodeSubject(csr) ?? usages(u);
  },
});
