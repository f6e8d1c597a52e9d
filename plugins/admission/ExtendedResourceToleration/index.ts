// ExtendedResourceToleration: a pod requesting an extended resource (a domain-prefixed name outside
// <keyDomain>/, such as example.com/gpu) tolerates the NoSchedule taint of the same key that nodes
// offering such resources carry.
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'ExtendedResourceToleration',
  create(_options, host) {
    const kd = host.brand.keyDomain;
    const extended = (r: string) => r.includes('/') && !r.includes(`${kd}/`) && !r.startsWith('requests.');
    return {
      handles: (op, a) => (op === 'CREATE' || op === 'UPDATE') && a.resource.group === '' && a.resource.resource === 'pods' && !a.subresource,
      admit(a) {
        const spec: J = (a.object as J).spec ?? {};
        const names = new Set<string>();
        for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
          for (const r of Object.keys(c?.resources?.requests ?? {})) if (extended(r)) names.add(r);
        }
        if (!names.size) return;
        const tolerations: J[] = Array.isArray(spec.tolerations) ? [...spec.tolerations] : [];
        for (const key of [...names].sort()) {
          const want = { key, operator: 'Exists', effect: 'NoSchedule' };
          if (!tolerations.some((t) => t?.key === key && t?.operator === 'Exists' && t?.effect === 'NoSchedule' && !t?.value)) tolerations.push(want);
        }
        spec.tolerations = tolerations;
      },
    };
  },
};
export default plugin;
