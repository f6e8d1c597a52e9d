// TaintNodesByCondition: a new Node starts tainted node.<keyDomain>/not-ready:NoSchedule; the node
// lifecycle controller removes the taint once the node reports Ready.
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'TaintNodesByCondition',
  create(_options, host) {
    const key = `node.${host.brand.keyDomain}/not-ready`;
    return {
      handles: (op, a) => op === 'CREATE' && a.resource.group === '' && a.resource.resource === 'nodes' && !a.subresource,
      admit(a) {
        const node = a.object as J;
        const spec: J = node.spec && typeof node.spec === 'object' ? node.spec : (node.spec = {});
        const taints: J[] = Array.isArray(spec.taints) ? spec.taints : [];
        // a taint matches on key and effect, whatever its value
        if (taints.some((t) => t?.key === key && t?.effect === 'NoSchedule')) return;
        spec.taints = [...taints, { key, effect: 'NoSchedule' }];
      },
    };
  },
};
export default plugin;
