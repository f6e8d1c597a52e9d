// CertificateSubjectRestriction: a request for the API-server client signer may not ask for the
// system:masters group in its subject (that group bypasses authorization).
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';
import { isCSRWrite, parseRequest, requestPem, specOf, subjectOf } from '../../lib/certificates.js';

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'CertificateSubjectRestriction',
  create(_options, host) {
    const signer = host.brand.signers.apiserverClient;
    return {
      handles: (op, a) => op === 'CREATE' && isCSRWrite(a, host.brand.domain, ''),
      validate(a) {
        if (specOf(a.object!).signerName !== signer) return;
        const pem = requestPem(a.object!);
        const parsed = 'error' in pem ? pem : parseRequest(pem.pem);
        if ('error' in parsed) throw host.errors.admissionForbidden(a, `failed to parse CSR: ${parsed.error}`);
        if (subjectOf(parsed.csr).O.includes('system:masters')) throw host.errors.admissionForbidden(a, `use of ${signer} signer with system:masters group is not allowed`);
      },
    };
  },
};
export default plugin;
