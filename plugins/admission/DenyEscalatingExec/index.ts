// DenyEscalatingExec (deprecated in the reference): no exec into or attach to a pod that runs a
// privileged container or shares the host's network, PID or IPC namespace. DenyExecOnPrivileged
// reuses this with the privileged check only.
import { CONTRACT_VERSION, type AdmissionAttributes, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;
export interface ExecChecks { hostNetwork: boolean; hostPID: boolean; hostIPC: boolean; privileged: boolean }

function forbidden(host: PluginHost, a: AdmissionAttributes, msg: string) {
  const e = host.errors.status(403, 'Forbidden', `pods "${a.name}" is forbidden: ${msg}`);
  e.details = { name: a.name, kind: 'pods' };
  return e;
}

/** Why exec or attach into this pod is refused, if it is. */
export function execRefusal(pod: J, checks: ExecChecks): string | undefined {
  const spec: J = pod.spec ?? {};
  if (checks.hostNetwork && spec.hostNetwork === true) return 'cannot exec into or attach to a container using host network';
  if (checks.hostPID && spec.hostPID === true) return 'cannot exec into or attach to a container using host pid';
  if (checks.hostIPC && spec.hostIPC === true) return 'cannot exec into or attach to a container using host ipc';
  const all: J[] = ['initContainers', 'containers', 'ephemeralContainers'].flatMap((k) => (Array.isArray(spec[k]) ? spec[k] : []));
  if (checks.privileged && all.some((c) => c?.securityContext?.privileged === true)) return 'cannot exec into or attach to a privileged container';
  return undefined;
}

/** The plugin for a set of checks (shared with DenyExecOnPrivileged). */
export function denyExecPlugin(name: string, checks: ExecChecks): PluginModule<'admission'> {
  return {
    kind: 'admission',
    contract: CONTRACT_VERSION,
    name,
    create(_options, host) {
      host.log.warn(`admission plugin ${name} is deprecated`);
      return {
        handles: (op, a) => op === 'CONNECT' && a.resource.group === '' && a.resource.resource === 'pods' && (a.subresource === 'exec' || a.subresource === 'attach'),
        async validate(a) {
          const t = host.type('', 'pods');
          const pod = t && (await host.objects.get(t, a.namespace, a.name));
          if (!pod) throw forbidden(host, a, `pods "${a.name}" not found`);
          const why = execRefusal(pod, checks);
          if (why) throw forbidden(host, a, why);
        },
      };
    },
  };
}

export default denyExecPlugin('DenyEscalatingExec', { hostNetwork: true, hostPID: true, hostIPC: true, privileged: true });
