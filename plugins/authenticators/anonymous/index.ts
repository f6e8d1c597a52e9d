// Requests that carry no credential at all are the anonymous user. The kernel runs this last; a request
// with an Authorization header nobody accepted must get 401, so this plugin stays out of it.
import { CONTRACT_VERSION, type Authenticator, type PluginModule } from '../../../kernel/contracts/index.js';

const plugin: PluginModule<'authenticator'> = {
  kind: 'authenticator',
  contract: CONTRACT_VERSION,
  name: 'anonymous',
  create(): Authenticator {
    return {
      authenticate(req) {
        if (req.header('authorization') !== undefined) return null;
        return { user: { username: 'system:anonymous', groups: ['system:unauthenticated'] } };
      },
    };
  },
};

export default plugin;
