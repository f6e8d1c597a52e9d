// AlwaysAllow: every request is authorized.
import { CONTRACT_VERSION, type Authorizer, type PluginModule } from '../../../kernel/contracts/index.js';

const plugin: PluginModule<'authorizer'> = {
  kind: 'authorizer',
  contract: CONTRACT_VERSION,
  name: 'always-allow',
  create(): Authorizer {
    return { authorize: () => ({ decision: 'allow' }) };
  },
};

export default plugin;
