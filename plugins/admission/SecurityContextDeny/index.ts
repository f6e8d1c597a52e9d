// SecurityContextDeny (deprecated in the reference): pods may not set the security context fields that
// would let them choose their identity: pod-level supplementalGroups, seLinuxOptions, runAsUser and
// fsGroup, and container-level seLinuxOptions and runAsUser.
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;
const set = (v: unknown) => v !== undefined && v !== null;

/** The first forbidden field's message, in the reference's order. */
export function deniedField(spec: J): string | undefined {
  const sc: J = spec.securityContext ?? {};
  for (const f of ['SupplementalGroups', 'SELinuxOptions', 'RunAsUser', 'FSGroup']) {
    const json = f === 'SELinuxOptions' ? 'seLinuxOptions' : f === 'FSGroup' ? 'fsGroup' : f[0].toLowerCase() + f.slice(1);
    if (set(sc[json])) return `pod.Spec.SecurityContext.${f} is forbidden`;
  }
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    if (set(c?.securityContext?.seLinuxOptions)) return 'SecurityContext.SELinuxOptions is forbidden';
    if (set(c?.securityContext?.runAsUser)) return 'SecurityContext.RunAsUser is forbidden';
  }
  return undefined;
}

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'SecurityContextDeny',
  create(_options, host) {
    return {
      handles: (op, a) => (op === 'CREATE' || op === 'UPDATE') && a.resource.group === '' && a.resource.resource === 'pods' && !a.subresource,
      validate(a) {
        const msg = deniedField((a.object as J).spec ?? {});
        if (!msg) return;
        const name = (a.object as J).metadata?.name ?? '';
        const e = host.errors.status(403, 'Forbidden', `pods "${name}" is forbidden: ${msg}`);
        e.details = { name, kind: 'pods' };
        throw e;
      },
    };
  },
};
export default plugin;
