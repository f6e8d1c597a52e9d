// The host ports of a pod and when two clash, as the reference's NodePorts rule reads them: the
// scheduler's filter and a node agent's admission both refuse a pod whose host port is taken.
import type { KObject } from '../../kernel/contracts/index.js';
import { isObj, list } from './json.js';

export interface HostPort { ip: string; protocol: string; port: number }

/** The host ports a pod's containers ask for (init containers' are not counted, as in the reference). */
export function hostPorts(pod: KObject): HostPort[] {
  const containers = isObj(pod.spec) ? list(pod.spec.containers) : [];
  return containers.flatMap((c) => list(c.ports)).filter((p) => typeof p.hostPort === 'number' && p.hostPort > 0)
    .map((p) => ({ ip: p.hostIP || '0.0.0.0', protocol: p.protocol || 'TCP', port: p.hostPort }));
}

/** Same protocol and port on the same address, or where either is 0.0.0.0. */
export const portsClash = (a: HostPort, b: HostPort): boolean =>
  a.protocol === b.protocol && a.port === b.port && (a.ip === '0.0.0.0' || b.ip === '0.0.0.0' || a.ip === b.ip);
