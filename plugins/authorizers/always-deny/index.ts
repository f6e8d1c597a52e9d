// AlwaysDeny (testing only): every request is refused.
import { CONTRACT_VERSION, type Authorizer, type PluginModule } from '../../../kernel/contracts/index.js';

const plugin: PluginModule<'authorizer'> = {
  kind: 'authorizer',
  contract: CONTRACT_VERSION,
  name: 'always-deny',
  create(): Authorizer {
    return { authorize: () => ({ decision: 'deny', reason: 'Everything is forbidden.' }) };
  },
};

export default plugin;
