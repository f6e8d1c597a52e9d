// The simulated-nodes controller's options, checked once at start-up (a bad option stops the server
// with a message naming it), and the small address arithmetic the nodes and pods share.
import { isObj, type J } from '../../lib/json.js';

export interface SimOptions {
  count: number;
  namePrefix: string;
  cpu: string;
  memory: string;
  pods: string;
  ephemeralStorage: string;
  /** Each node's podCIDR is the next /24 of this range (node 0 the first). */
  podCIDR: string;
  /** Each node's InternalIP is the next address of this range, from its third address on. */
  nodeCIDR: string;
  labels: Record<string, string>;
  taints: J[];
  architecture: string;
  kubeletVersion: string;
  /** How long a container of a run-to-completion pod (restartPolicy Never or OnFailure) runs. */
  podRunSeconds: number;
  exitCode: number;
  /** How long containers take to stop after a graceful delete; unset: the pod's whole grace period. */
  stopSeconds?: number;
  /** How often each node's Lease is renewed (the node agent's 10 s). */
  leaseRenewSeconds: number;
  leaseDurationSeconds: number;
  /** How often the node status is reported when nothing changed (the node agent's 5 minutes). */
  statusReportSeconds: number;
  /** Record the node agent's Events about pods (Pulled, Created, Started, Killing). */
  events: boolean;
  /** Images no registry has (a regular expression): their containers wait in ImagePullBackOff, as a rollout to a bad image stalls. */
  unpullableImages: string;
}

const DEFAULTS: SimOptions = {
  count: 3, namePrefix: 'sim-node-', cpu: '8', memory: '32Gi', pods: '110', ephemeralStorage: '100Gi',
  podCIDR: '10.244.0.0/16', nodeCIDR: '172.18.0.0/16', labels: {}, taints: [], architecture: 'amd64',
  kubeletVersion: 'v1.28.7', podRunSeconds: 2, exitCode: 0, leaseRenewSeconds: 10, leaseDurationSeconds: 40, statusReportSeconds: 300, events: true,
  // what tests name when they want an image that cannot be pulled ("foo:non-existent", "invalid-image")
  unpullableImages: 'non-?existent|invalid-image|:404$',
};

/** An IPv4 address as a number, or NaN. */
export function ipNum(ip: string): number {
  const parts = ip.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return NaN;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

export const ipText = (n: number): string => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');

/** An IPv4 CIDR as its first address and size; throws naming the option. */
export function cidr(text: string, option: string): { base: number; size: number } {
  const m = /^([\d.]+)\/(\d{1,2})$/.exec(text);
  const base = m ? ipNum(m[1]) : NaN;
  const bits = m ? Number(m[2]) : NaN;
  if (!(bits >= 0 && bits <= 32) || Number.isNaN(base)) throw new Error(`simulated-nodes: option ${option} must be an IPv4 CIDR such as 10.244.0.0/16, not ${JSON.stringify(text)}`);
  const size = 2 ** (32 - bits);
  return { base: base - (base % size), size };
}

function check(ok: boolean, option: string, want: string, v: unknown): void {
  if (!ok) throw new Error(`simulated-nodes: option ${option} must be ${want}, not ${JSON.stringify(v)}`);
}

/** The options given over the defaults, each checked. */
export function parseOptions(given: Record<string, unknown> | undefined): SimOptions {
  const o = { ...DEFAULTS, ...(given ?? {}) } as SimOptions & Record<string, unknown>;
  const known = new Set([...Object.keys(DEFAULTS), 'stopSeconds']);
  for (const k of Object.keys(given ?? {})) check(known.has(k), k, `one of ${[...known].join(', ')} (unknown option)`, k);
  const int = (k: keyof SimOptions, min: number) => check(Number.isInteger(o[k]) && (o[k] as number) >= min, k, `an integer >= ${min}`, o[k]);
  int('count', 0);
  int('podRunSeconds', 0);
  int('exitCode', 0);
  int('leaseRenewSeconds', 1);
  int('leaseDurationSeconds', 1);
  int('statusReportSeconds', 1);
  if (o.stopSeconds !== undefined) int('stopSeconds', 0);
  check(typeof o.events === 'boolean', 'events', 'true or false', o.events);
  let re = true;
  try { new RegExp(String(o.unpullableImages)); } catch { re = false; }
  check(typeof o.unpullableImages === 'string' && re, 'unpullableImages', 'a regular expression', o.unpullableImages);
  for (const k of ['namePrefix', 'architecture', 'kubeletVersion'] as const) check(typeof o[k] === 'string' && o[k] !== '', k, 'a non-empty string', o[k]);
  // quantities: YAML reads `cpu: 8` as a number
  for (const k of ['cpu', 'memory', 'pods', 'ephemeralStorage'] as const) {
    const v: unknown = o[k];
    check((typeof v === 'string' && /^\d+(\.\d+)?([mkMGTPE]i?|[KMGTPE]i)?$/.test(v)) || (typeof v === 'number' && v >= 0), k, 'a quantity such as 8, 500m or 32Gi', v);
    o[k] = String(v);
  }
  check(isObj(o.labels) && Object.values(o.labels).every((v) => typeof v === 'string'), 'labels', 'a map of strings', o.labels);
  check(Array.isArray(o.taints) && o.taints.every((t) => isObj(t) && typeof t.key === 'string' && typeof t.effect === 'string'), 'taints', 'a list of {key, value?, effect}', o.taints);
  const pods = cidr(o.podCIDR, 'podCIDR');
  check(pods.size >= 256 * Math.max(1, o.count), 'podCIDR', `a range with a /24 for each of the ${o.count} nodes`, o.podCIDR);
  const nodes = cidr(o.nodeCIDR, 'nodeCIDR');
  check(nodes.size >= o.count + 2, 'nodeCIDR', `a range with an address for each of the ${o.count} nodes`, o.nodeCIDR);
  return o;
}
