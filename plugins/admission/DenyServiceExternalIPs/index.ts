// DenyServiceExternalIPs: Services may not gain spec.externalIPs; ones they already have may stay
// (or be removed).
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'DenyServiceExternalIPs',
  create(_options, host) {
    return {
      handles: (op, a) => (op === 'CREATE' || op === 'UPDATE') && a.resource.group === '' && a.resource.resource === 'services' && !a.subresource,
      validate(a) {
        const ips: string[] = (a.object as J).spec?.externalIPs ?? [];
        const had = new Set<string>((a.oldObject as J | undefined)?.spec?.externalIPs ?? []);
        if (!ips.length || ips.every((ip) => had.has(ip))) return;
        const shown = `[]string{${ips.map((ip) => JSON.stringify(ip)).join(', ')}}`;
        throw host.errors.invalid('Service', a.name, [{ reason: 'FieldValueInvalid', field: 'spec.externalIPs', message: `Invalid value: ${shown}: Use of external IPs is denied by admission control` }]);
      },
    };
  },
};
export default plugin;
