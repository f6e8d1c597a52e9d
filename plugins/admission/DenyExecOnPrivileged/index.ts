// DenyExecOnPrivileged (deprecated in the reference): no exec into or attach to a pod that runs a
// privileged container. DenyEscalatingExec also covers host namespaces.
import { denyExecPlugin } from '../DenyEscalatingExec/index.js';

export default denyExecPlugin('DenyExecOnPrivileged', { hostNetwork: false, hostPID: false, hostIPC: false, privileged: true });
