// What the scheduler tells about a pod, as the reference's scheduler does: events through
// events.<domain>/v1 (reportingController = the scheduler's name, reportingInstance = name-hostname,
// a repeat within six minutes counted in the first one's series), the FailedScheduling message built
// as the reference's FitError prints it, and the PodScheduled=False condition of a pod that fits nowhere.
import { hostname } from 'node:os';
import type { KObject, PluginHost, TypeDef } from '../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../lib/json.js';
import type { Misfit } from './filters.js';

/** The reference's message when the cluster has no node at all. */
export const NO_NODES = 'no nodes available to schedule pods';

/** How long repeats of an event go into its series (the reference's event cache). */
const SERIES_WINDOW_MS = 6 * 60_000;

/** "3 a, 1 b": each reason with how many nodes gave it, sorted as strings. */
function histogram(reasons: string[]): string {
  const counts = new Map<string, number>();
  for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  return [...counts].map(([r, n]) => `${n} ${r}`).sort().join(', ');
}

/**
 * `0/N nodes are available: <reasons>. preemption: <...>.` This scheduler never preempts: a node
 * where removing pods could help counts as having no victims, which is what the reference finds
 * when no pod of lower priority runs there (all pods without a priority class).
 */
export function fitErrorMessage(pod: KObject, numNodes: number, misfits: Misfit[]): string {
  const head = `0/${numNodes} nodes are available:`;
  const filters = histogram(misfits.flatMap((m) => m.reasons));
  const preemption = (pod.spec as J | undefined)?.preemptionPolicy === 'Never'
    ? 'preemption: not eligible due to preemptionPolicy=Never.'
    : `preemption: ${head} ${histogram(misfits.map((m) => (m.resolvable ? 'No preemption victims found for incoming pod' : 'Preemption is not helpful for scheduling')))}.`;
  return `${head}${filters ? ` ${filters}.` : ''} ${preemption}.`;
}

const microTime = (ms: number) => new Date(ms).toISOString().replace(/Z$/, '000Z');

/** Writes events about pods as one reporting controller (the scheduler's name). */
export class EventRecorder {
  private readonly instance: string;
  /** Recent events by what makes them the same (type, action, reason, the pod's uid and version). */
  private readonly recent = new Map<string, { namespace: string; name: string; count: number; at: number }>();
  private seq = 0n;

  constructor(private readonly host: PluginHost, private readonly type: TypeDef | undefined, private readonly controller: string) {
    this.instance = `${controller}-${hostname()}`;
  }

  /** Writes the event; a failure (the namespace terminating) is logged and the event dropped, as the reference's recorder drops it. */
  async record(pod: KObject, type: 'Normal' | 'Warning', reason: string, action: string, note: string): Promise<void> {
    try {
      await this.write(pod, type, reason, action, note);
    } catch (e) {
      this.host.log.warn('scheduler: event not written', { pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, reason, error: String(e) });
    }
  }

  private async write(pod: KObject, type: string, reason: string, action: string, note: string): Promise<void> {
    if (!this.type) return;
    const m = pod.metadata!;
    const now = Date.now();
    const key = JSON.stringify([type, action, reason, m.namespace, m.uid, m.resourceVersion]);
    for (const [k, v] of this.recent) if (now - v.at > SERIES_WINDOW_MS) this.recent.delete(k);
    const seen = this.recent.get(key);
    if (seen && (await this.addToSeries(seen, now))) return;
    const name = `${m.name}.${(BigInt(now) * 1_000_000n + (this.seq++ % 1_000_000n)).toString(16)}`;
    const event: KObject = {
      apiVersion: `${this.type.group}/${this.type.version}`, kind: 'Event', metadata: { name, namespace: m.namespace },
      eventTime: microTime(now), reportingController: this.controller, reportingInstance: this.instance, action, reason, type, note,
      regarding: { kind: 'Pod', namespace: m.namespace, name: m.name, uid: m.uid, apiVersion: 'v1', resourceVersion: m.resourceVersion },
    };
    await this.host.objects.create(this.type, event);
    this.recent.set(key, { namespace: m.namespace!, name, count: 1, at: now });
  }

  /** Counts a repeat in the first event's series; false when that event is gone. */
  private async addToSeries(seen: { namespace: string; name: string; count: number; at: number }, now: number): Promise<boolean> {
    // Both event APIs store one resource, which the object client reads in the core form: written back in that form.
    const core = this.host.type('', 'events');
    const ev = core && (await this.host.objects.get(core, seen.namespace, seen.name));
    if (!ev) return false;
    seen.count++;
    seen.at = now;
    await this.host.objects.update(core, { ...ev, series: { count: seen.count, lastObservedTime: microTime(now) } });
    return true;
  }
}

/** Sets PodScheduled=False (reason Unschedulable, the message) unless the pod already says so. */
export async function markUnschedulable(host: PluginHost, pods: TypeDef, pod: KObject, message: string): Promise<void> {
  const status: J = isObj(pod.status) ? pod.status : {};
  const prev = list(status.conditions).find((c) => c.type === 'PodScheduled');
  if (prev?.status === 'False' && prev.reason === 'Unschedulable' && prev.message === message) return;
  const condition = {
    type: 'PodScheduled', status: 'False', lastProbeTime: null, reason: 'Unschedulable', message,
    lastTransitionTime: prev?.status === 'False' ? prev.lastTransitionTime : new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
  };
  const conditions = [...list(status.conditions).filter((c) => c.type !== 'PodScheduled'), condition];
  await host.objects.update(pods, { ...pod, status: { ...status, conditions } }, 'status');
}
