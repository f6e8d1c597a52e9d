// Signer <domain>/apiserver-client (kubernetes.io/kube-apiserver-client): client certificates the API
// server trusts. Any subject (CertificateSubjectRestriction bars system:masters at creation);
// subject alternative names and key usages kept; usages must include client auth and come only from
// digital signature, key encipherment and client auth.
import { builtinSigner } from '../../lib/builtin-signer.js';

const ALLOWED = ['digital signature', 'key encipherment', 'client auth'];

export default builtinSigner({
  name: 'apiserver-client',
  signer: (b) => b.signers.apiserverClient,
  keepSans: true,
  restrict: (_csr, usages) => {
    if (!usages.includes('client auth')) return 'usages must include "client auth"';
    const bad = usages.filter((u) => !ALLOWED.includes(u));
    return bad.length ? `usages ${JSON.stringify(bad)} are not allowed: only ${JSON.stringify(ALLOWED)}` : undefined;
  },
});
