// AlwaysDeny (deprecated in the reference, for testing): refuses every write and connect request.
import { CONTRACT_VERSION, type AdmissionAttributes, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';

/** The reference's admission.NewForbidden: `<resource> "<name>" is forbidden: <reason>`. */

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'AlwaysDeny',
  create(_options, host) {
    host.log.warn('admission plugin AlwaysDeny is deprecated and refuses every write');
    return {
      handles: () => true,
      admit(a) {
        throw host.errors.admissionForbidden(a, 'admission control is denying all modifications');
      },
    };
  },
};
export default plugin;
