// Signer <domain>/legacy-unknown: no trust anywhere, any usages, never a CA. The v1 API refuses to
// create requests for it; only requests stored by older versions reach it.
import { builtinSigner } from '../../lib/builtin-signer.js';

export default builtinSigner({
  name: 'legacy-unknown',
  signer: (b) => b.signers.legacyUnknown,
  keepSans: true,
  restrict: () => undefined,
});
