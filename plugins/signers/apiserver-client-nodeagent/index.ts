// Signer <domain>/apiserver-client-nodeagent (kubernetes.io/kube-apiserver-client-kubelet): node
// agents' client certificates. Organization exactly system:nodes, common name system:node:<name>,
// no subject alternative names, usages exactly key encipherment, digital signature, client auth.
import { builtinSigner, exactUsages, nodeSubject, sansOf } from '../../lib/builtin-signer.js';

const usages = exactUsages(['key encipherment', 'digital signature', 'client auth']);

export default builtinSigner({
  name: 'apiserver-client-nodeagent',
  signer: (b) => b.signers.apiserverClientNodeAgent,
  keepSans: false,
  restrict: (csr, u) => {
    const s = sansOf(csr);
    if (s.dns.length || s.ip.length || s.email.length || s.uri.length) return 'subject alternative names are not allowed';
    return nodeSubject(csr) ?? usages(u);
  },
});
