// CertificateSigning: an update of certificatesigningrequests/status that changes status.certificate
// needs verb `sign` on the request's signer (resource `signers`, name `<domain>/<path>` or `<domain>/*`).
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';
import { isCSRWrite, mayUseSigner, specOf, statusOf } from '../../lib/certificates.js';

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'CertificateSigning',
  create(_options, host) {
    return {
      handles: (op, a) => op === 'UPDATE' && isCSRWrite(a, host.brand.domain, 'status'),
      async validate(a) {
        if ((statusOf(a.object!).certificate ?? '') === (statusOf(a.oldObject!).certificate ?? '')) return;
        const signer = String(specOf(a.oldObject!).signerName ?? '');
        if (!(await mayUseSigner(host, a.user, 'sign', signer))) throw host.errors.admissionForbidden(a, `user not permitted to sign requests with signerName "${signer}"`);
      },
    };
  },
};
export default plugin;
