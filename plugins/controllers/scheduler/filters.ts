// The scheduler's filters: whether a pod may run on a node, and if not why, in the order and with
// the reasons of the reference's default filter plugins (NodeUnschedulable, NodeName,
// TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit). A node whose Ready condition is False or
// Unknown counts as carrying the not-ready or unreachable NoSchedule taint the reference's node
// lifecycle controller would put on it, so its reason reads the same.
import { fitsNode, tolerates } from '../../lib/node-match.js';
import { hostPorts, portsClash } from '../../lib/host-ports.js';
import type { KObject } from '../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../lib/json.js';
import { podTotal, resourceList, type ResourceList } from '../../admission/ResourceQuota/quantity.js';

/** A node with what its bound pods already take. */
export interface NodeInfo {
  node: KObject;
  name: string;
  allocatable: ResourceList;
  requested: ResourceList;
  /** CPU (milli) and memory (bytes) requested, a pod without requests counted at the scoring defaults. */
  nonZero: { cpu: bigint; memory: bigint };
  pods: number;
  /** Host ports bound pods use, as "<ip> <protocol> <port>". */
  ports: Set<string>;
}

/**
 * Why a node does not fit: the reasons counted in the FailedScheduling message, and whether
 * removing pods (preemption) could help (false for the reference's UnschedulableAndUnresolvable).
 */
export interface Misfit { reasons: string[]; resolvable: boolean }

const NANO = 1_000_000_000n;

const spec = (o: KObject): J => (isObj(o.spec) ? o.spec : {});

/** Whether a pod has finished (its requests no longer count on its node). */
export const isTerminal = (pod: KObject) => ['Succeeded', 'Failed'].includes((pod.status as J | undefined)?.phase);

/** Nodes with the requests of the pods bound to them and not finished. */
export function nodeInfos(nodes: KObject[], pods: KObject[]): NodeInfo[] {
  const byName = new Map(nodes.map((n) => [n.metadata!.name!, { node: n, name: n.metadata!.name!, allocatable: resourceList((n.status as J | undefined)?.allocatable), requested: new Map(), nonZero: { cpu: 0n, memory: 0n }, pods: 0, ports: new Set() } as NodeInfo]));
  for (const p of pods) {
    const info = byName.get(spec(p).nodeName);
    if (info && !isTerminal(p)) assume(info, p);
  }
  return [...byName.values()];
}

/** Counts a pod on a node (a binding this pass made, before the cache shows it). */
export function assume(info: NodeInfo, pod: KObject): void {
  info.pods++;
  const nz = nonZeroRequests(pod);
  info.nonZero.cpu += nz.cpu;
  info.nonZero.memory += nz.memory;
  for (const p of hostPorts(pod)) info.ports.add(`${p.ip} ${p.protocol} ${p.port}`);
  for (const [k, q] of podTotal(spec(pod), 'requests')) info.requested.set(k, { nano: (info.requested.get(k)?.nano ?? 0n) + q.nano, format: q.format });
}

/** What the reference's scoring assumes of a container without requests: 100m CPU, 200 MiB memory. */
const DEFAULT_MILLI_CPU = 100n;
const DEFAULT_MEMORY = 200n * 1024n * 1024n;

/** CPU (milli) and memory (bytes) a pod requests for scoring: containers without a request count at the defaults. */
export function nonZeroRequests(pod: KObject): { cpu: bigint; memory: bigint } {
  const of = (c: J) => {
    const r = resourceList(c.resources?.requests);
    return { cpu: r.has('cpu') ? r.get('cpu')!.nano / 1_000_000n : DEFAULT_MILLI_CPU, memory: r.has('memory') ? r.get('memory')!.nano / NANO : DEFAULT_MEMORY };
  };
  const total = { cpu: 0n, memory: 0n };
  for (const c of list(spec(pod).containers).map(of)) { total.cpu += c.cpu; total.memory += c.memory; }
  for (const c of list(spec(pod).initContainers).map(of)) { if (c.cpu > total.cpu) total.cpu = c.cpu; if (c.memory > total.memory) total.memory = c.memory; }
  const overhead = resourceList(spec(pod).overhead);
  total.cpu += (overhead.get('cpu')?.nano ?? 0n) / 1_000_000n;
  total.memory += (overhead.get('memory')?.nano ?? 0n) / NANO;
  return total;
}

/** NodePorts: a wanted host port clashes with a used one (plugins/lib/host-ports.ts). */
function nodePortsClash(pod: KObject, info: NodeInfo): boolean {
  return hostPorts(pod).some((w) => [...info.ports].some((used) => {
    const [ip, protocol, port] = used.split(' ');
    return portsClash(w, { ip, protocol, port: Number(port) });
  }));
}

interface Taint { key: string; value?: string; effect: string }

/** The node's taints, with the one its Ready condition stands for. */
function taintsOf(node: KObject, brandTaint: (name: string) => string): Taint[] {
  const taints = list(spec(node).taints) as Taint[];
  const ready = list((node.status as J | undefined)?.conditions).find((c) => c.type === 'Ready');
  const implied = ready?.status === 'False' ? 'not-ready' : ready?.status === 'Unknown' ? 'unreachable' : undefined;
  if (!implied) return taints;
  const key = brandTaint(implied);
  return taints.some((t) => t.key === key && t.effect === 'NoSchedule') ? taints : [...taints, { key, effect: 'NoSchedule' }];
}

/** NodeResourcesFit: pod count, then each requested resource against allocatable less what bound pods request. */
function resourceMisfits(pod: KObject, info: NodeInfo): string[] {
  const out: string[] = [];
  const allowedPods = (info.allocatable.get('pods')?.nano ?? 0n) / NANO;
  if (BigInt(info.pods + 1) > allowedPods) out.push('Too many pods');
  const want = podTotal(spec(pod), 'requests');
  const order = ['cpu', 'memory', 'ephemeral-storage', ...[...want.keys()].filter((k) => !['cpu', 'memory', 'ephemeral-storage', 'pods'].includes(k)).sort()];
  for (const k of order) {
    const q = want.get(k)?.nano ?? 0n;
    if (q > 0n && q > (info.allocatable.get(k)?.nano ?? 0n) - (info.requested.get(k)?.nano ?? 0n)) out.push(`Insufficient ${k}`);
  }
  return out;
}

/** Why the pod does not fit the node (the first failing filter's reasons), or undefined when it fits. */
export function misfit(pod: KObject, info: NodeInfo, brandTaint: (name: string) => string): Misfit | undefined {
  const tolerations = list(spec(pod).tolerations);
  const node = info.node;
  if (spec(node).unschedulable && !tolerations.some((t) => tolerates(t, { key: brandTaint('unschedulable'), effect: 'NoSchedule' }))) {
    return { reasons: ['node(s) were unschedulable'], resolvable: false };
  }
  const wanted = spec(pod).nodeName;
  if (wanted && wanted !== info.name) return { reasons: ["node(s) didn't match the requested node name"], resolvable: false };
  const untolerated = taintsOf(node, brandTaint).find((t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !tolerations.some((x) => tolerates(x, t)));
  if (untolerated) return { reasons: [`node(s) had untolerated taint {${untolerated.key}: ${untolerated.value ?? ''}}`], resolvable: false };
  if (!fitsNode(spec(pod), node)) return { reasons: ["node(s) didn't match Pod's node affinity/selector"], resolvable: false };
  if (nodePortsClash(pod, info)) return { reasons: ["node(s) didn't have free ports for the requested pod ports"], resolvable: true };
  const short = resourceMisfits(pod, info);
  return short.length ? { reasons: short, resolvable: true } : undefined;
}
