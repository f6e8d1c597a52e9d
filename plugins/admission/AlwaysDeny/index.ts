// AlwaysDeny (deprecated in the reference, for testing): refuses every write and connect request.
import { CONTRACT_VERSION, type AdmissionAttributes, type PluginHost, type PluginModule } from '../../../kernel/contracts.js';

/** The reference's admission.NewForbidden: `<resource> "<name>" is forbidden: <reason>`. */
function forbidden(host: PluginHost, a: AdmissionAttributes, msg: string) {
  const gr = a.resource.group ? `${a.resource.resource}.${a.resource.group}` : a.resource.resource;
  const name = a.name || a.object?.metadata?.name || '';
  const e = host.errors.status(403, 'Forbidden', `${gr}${name ? ` "${name}"` : ''} is forbidden: ${msg}`);
  e.details = { name: name || undefined, group: a.resource.group || undefined, kind: a.resource.resource };
  return e;
}

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'AlwaysDeny',
  create(_options, host) {
    host.log.warn('admission plugin AlwaysDeny is deprecated and refuses every write');
    return {
      handles: () => true,
      admit(a) {
        throw forbidden(host, a, 'admission control is denying all modifications');
      },
    };
  },
};
export default plugin;
