// AlwaysAdmit (deprecated in the reference): admits every request; it exists so configurations that
// name it keep working.
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'AlwaysAdmit',
  create(_options, host) {
    host.log.warn('admission plugin AlwaysAdmit is deprecated and admits every request');
    return { handles: () => false };
  },
};
export default plugin;
