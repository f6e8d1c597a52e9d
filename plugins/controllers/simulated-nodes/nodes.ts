// The node side of the simulated nodes: each registers as a node agent does (the Node created with
// its status), keeps its Lease renewed, reports its status again every report period, and registers
// again when its Node is deleted. TaintNodesByCondition admission gives every new Node the not-ready
// taint; the node lifecycle controller takes it off a Ready node, and since this server has none by
// default, the simulated node takes it off its own Node (as that controller would).
import type { KObject, PluginHost, TypeDef } from '../../../kernel/contracts/index.js';
import { list, type J } from '../../lib/json.js';
import { cidr, ipText, type SimOptions } from './options.js';
import { createHash } from 'node:crypto';

/** RFC 3339 with seconds, as metav1.Time. */
export const stamp = (ms = Date.now()): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
/** RFC 3339 with microseconds, as metav1.MicroTime. */
const microStamp = (ms = Date.now()): string => new Date(ms).toISOString().replace(/Z$/, '000Z');
/** A stable hex id made from text (machine ids, container ids, image digests). */
export const hexId = (text: string, len = 64): string => createHash('sha256').update(text).digest('hex').slice(0, len);

/** What the pod side needs to know of a node. */
export interface SimNode {
  name: string;
  hostIP: string;
  /** The first address of its pod range (a /24). */
  podBase: number;
}

export function planNodes(o: SimOptions): SimNode[] {
  const pods = cidr(o.podCIDR, 'podCIDR').base;
  const nodes = cidr(o.nodeCIDR, 'nodeCIDR').base;
  return Array.from({ length: o.count }, (_, i) => ({ name: `${o.namePrefix}${i}`, hostIP: ipText(nodes + 2 + i), podBase: pods + 256 * i }));
}

function conditions(now: string): J[] {
  const c = (type: string, status: string, reason: string, message: string) => ({ type, status, lastHeartbeatTime: now, lastTransitionTime: now, reason, message });
  return [
    c('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
    c('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
    c('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
    c('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
  ];
}

export class NodeAgents {
  private nodeType: TypeDef | undefined;
  private leaseType: TypeDef | undefined;
  private renew: NodeJS.Timeout | undefined;
  private report: NodeJS.Timeout | undefined;
  private retries = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(private host: PluginHost, private o: SimOptions, readonly nodes: SimNode[]) {}

  private node(n: SimNode): KObject {
    const kd = this.host.brand.keyDomain;
    const cap = { cpu: this.o.cpu, memory: this.o.memory, pods: this.o.pods, 'ephemeral-storage': this.o.ephemeralStorage, 'hugepages-1Gi': '0', 'hugepages-2Mi': '0' };
    const cidrText = `${ipText(n.podBase)}/24`;
    return {
      apiVersion: 'v1', kind: 'Node',
      metadata: {
        name: n.name,
        labels: {
          [`beta.${kd}/arch`]: this.o.architecture, [`beta.${kd}/os`]: 'linux',
          [`${kd}/arch`]: this.o.architecture, [`${kd}/hostname`]: n.name, [`${kd}/os`]: 'linux', ...this.o.labels,
        },
        annotations: { [`node.alpha.${kd}/ttl`]: '0', [`volumes.${kd}/controller-managed-attach-detach`]: 'true' },
      },
      spec: { podCIDR: cidrText, podCIDRs: [cidrText], ...(this.o.taints.length ? { taints: this.o.taints } : {}) },
      status: {
        capacity: cap, allocatable: cap, conditions: conditions(stamp()),
        addresses: [{ type: 'InternalIP', address: n.hostIP }, { type: 'Hostname', address: n.name }],
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        nodeInfo: {
          machineID: hexId(`machine/${n.name}`, 32), systemUUID: hexId(`uuid/${n.name}`, 32), bootID: hexId(`boot/${n.name}`, 32),
          kernelVersion: '6.1.0-simulated', osImage: 'Simulated node', containerRuntimeVersion: 'simulated://1.0.0',
          kubeletVersion: this.o.kubeletVersion, kubeProxyVersion: this.o.kubeletVersion, operatingSystem: 'linux', architecture: this.o.architecture,
        },
      },
    };
  }

  async start(): Promise<void> {
    this.nodeType = this.host.type('', 'nodes');
    this.leaseType = this.host.type(`coordination.${this.host.brand.domain}`, 'leases');
    if (!this.nodeType) throw new Error('simulated-nodes: the nodes type is not served');
    for (const n of this.nodes) await this.register(n);
    this.renew = setInterval(() => void this.renewLeases(), this.o.leaseRenewSeconds * 1000);
    this.report = setInterval(() => void this.reportStatus(), this.o.statusReportSeconds * 1000);
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.renew);
    clearInterval(this.report);
    for (const t of this.retries.values()) clearTimeout(t);
    this.retries.clear();
  }

  /** Our Node was deleted: register it again (a failed try is retried a little later). */
  nodeDeleted(name: string): void {
    const n = this.nodes.find((x) => x.name === name);
    if (!n || this.stopped || this.retries.has(name)) return;
    this.retries.set(name, setTimeout(() => {
      this.retries.delete(name);
      this.register(n).catch((e) => {
        this.host.log.warn('simulated node registration failed', { node: name, error: String(e) });
        this.nodeDeleted(name);
      });
    }, 1000));
  }

  /** Create the Node with its status (or, when it exists, report the status) and its Lease. */
  private async register(n: SimNode): Promise<void> {
    const want = this.node(n);
    let node = await this.host.objects.get(this.nodeType!, '', n.name);
    if (!node) {
      try { node = await this.host.objects.create(this.nodeType!, want); } catch (e) {
        if ((e as { code?: number }).code !== 409) throw e;
        node = await this.host.objects.get(this.nodeType!, '', n.name);
      }
    } else {
      node = await this.host.objects.update(this.nodeType!, { ...node, status: { ...(node.status as J), ...(want.status as J), conditions: this.heartbeat(node) } }, 'status');
    }
    if (node) await this.untaint(node);
    await this.renewLease(n.name, node?.metadata?.uid);
  }

  /** The conditions with a fresh heartbeat, keeping each transition time. */
  private heartbeat(node: KObject): J[] {
    const now = stamp();
    const old = list((node.status as J | undefined)?.conditions);
    return conditions(now).map((c) => {
      const prev = old.find((x) => x.type === c.type);
      return prev && prev.status === c.status ? { ...c, lastTransitionTime: prev.lastTransitionTime ?? now } : c;
    });
  }

  private async untaint(node: KObject): Promise<void> {
    const key = `node.${this.host.brand.keyDomain}/not-ready`;
    const taints = list((node.spec as J | undefined)?.taints);
    if (!taints.some((t) => t.key === key && t.effect === 'NoSchedule')) return;
    for (let tries = 0; tries < 5; tries++) {
      const cur = tries ? await this.host.objects.get(this.nodeType!, '', node.metadata!.name!) : node;
      if (!cur) return;
      const spec = { ...(cur.spec as J) };
      spec.taints = list(spec.taints).filter((t) => !(t.key === key && t.effect === 'NoSchedule'));
      if (!spec.taints.length) delete spec.taints;
      try { await this.host.objects.update(this.nodeType!, { ...cur, spec }); return; } catch (e) {
        if ((e as { code?: number }).code !== 409) throw e;
      }
    }
  }

  private renewing = false;

  /** One round of renewals at a time (a slow round on a busy machine is not overlapped by the next). */
  private async renewLeases(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    try {
      for (const n of this.nodes) {
        if (this.stopped) return;
        await this.renewLease(n.name).catch((e) => {
          // a conflict is retried by the next round, 10 seconds on
          if ((e as { code?: number }).code !== 409) this.host.log.warn('simulated node lease renewal failed', { node: n.name, error: String(e) });
        });
      }
    } finally {
      this.renewing = false;
    }
  }

  /** Renew (or create) the node's Lease, owned by its Node as a node agent's is. */
  private async renewLease(name: string, nodeUid?: string): Promise<void> {
    if (!this.leaseType) return;
    const ns = this.host.brand.nodeLeaseNamespace;
    const spec = { holderIdentity: name, leaseDurationSeconds: this.o.leaseDurationSeconds, renewTime: microStamp() };
    const lease = await this.host.objects.get(this.leaseType, ns, name);
    if (lease) {
      await this.host.objects.update(this.leaseType, { ...lease, spec: { ...(lease.spec as J), ...spec } });
      return;
    }
    const uid = nodeUid ?? (await this.host.objects.get(this.nodeType!, '', name))?.metadata?.uid;
    const ownerReferences = uid ? [{ apiVersion: 'v1', kind: 'Node', name, uid }] : undefined;
    await this.host.objects.create(this.leaseType, { apiVersion: `coordination.${this.host.brand.domain}/v1`, kind: 'Lease', metadata: { name, namespace: ns, ownerReferences }, spec });
  }

  /**
   * A Node of ours changed: when its conditions no longer say what this node agent says (the node
   * lifecycle controller marked it Unknown while the server was stalled), report at once, as a node
   * agent reports a changed status without waiting for the report period.
   */
  nodeChanged(node: KObject): void {
    const name = node.metadata!.name!;
    const have = list((node.status as J | undefined)?.conditions);
    const differs = conditions('').some((c) => have.find((x) => x.type === c.type)?.status !== c.status);
    if (!differs || this.stopped || this.reports.has(name)) return;
    this.reports.add(name);
    void this.reportOne(name).finally(() => this.reports.delete(name));
  }

  private reports = new Set<string>();

  /** The periodic status report: fresh heartbeats on every condition. */
  private async reportStatus(): Promise<void> {
    for (const n of this.nodes) {
      if (this.stopped) return;
      await this.reportOne(n.name);
    }
  }

  /** Report one node's conditions, reading it again after a conflict (a few times). */
  private async reportOne(name: string): Promise<void> {
    for (let tries = 0; tries < 5 && !this.stopped; tries++) {
      try {
        const node = await this.host.objects.get(this.nodeType!, '', name);
        if (node) await this.host.objects.update(this.nodeType!, { ...node, status: { ...(node.status as J), conditions: this.heartbeat(node) } }, 'status');
        return;
      } catch (e) {
        if ((e as { code?: number }).code === 409) continue;
        if ((e as { code?: number }).code !== 404) this.host.log.warn('simulated node status report failed', { node: name, error: String(e) });
        return;
      }
    }
  }
}
