// LimitPodHardAntiAffinityTopology: required pod anti-affinity may only spread over
// <keyDomain>/hostname, so one pod cannot keep a whole zone or region to itself.
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'LimitPodHardAntiAffinityTopology',
  create(_options, host) {
    const hostname = `${host.brand.keyDomain}/hostname`;
    return {
      handles: (op, a) => (op === 'CREATE' || op === 'UPDATE') && a.resource.group === '' && a.resource.resource === 'pods' && !a.subresource,
      validate(a) {
        const terms: J[] = (a.object as J).spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
        const bad = terms.find((t) => t?.topologyKey !== hostname);
        if (!bad) return;
        const name = (a.object as J).metadata?.name ?? '';
        const e = host.errors.status(403, 'Forbidden', `pods "${name}" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ${bad.topologyKey ?? ''} but only key ${hostname} is allowed`);
        e.details = { name, kind: 'pods' };
        throw e;
      },
    };
  },
};
export default plugin;
