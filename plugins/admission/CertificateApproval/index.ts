// CertificateApproval: an update of certificatesigningrequests/approval needs verb `approve` on the
// request's signer (resource `signers`, name `<domain>/<path>` or `<domain>/*`).
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';
import { isCSRWrite, mayUseSigner, specOf } from '../../lib/certificates.js';

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'CertificateApproval',
  create(_options, host) {
    return {
      handles: (op, a) => op === 'UPDATE' && isCSRWrite(a, host.brand.domain, 'approval'),
      async validate(a) {
        const signer = String(specOf(a.oldObject ?? a.object!).signerName ?? '');
        if (!(await mayUseSigner(host, a.user, 'approve', signer))) throw host.errors.admissionForbidden(a, `user not permitted to approve requests with signerName "${signer}"`);
      },
    };
  },
};
export default plugin;
