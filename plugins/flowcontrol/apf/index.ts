// API Priority and Fairness, as the reference does it: each request is classified by the first
// matching FlowSchema into a priority level; exempt levels run at once; limited levels share the
// server's concurrency by their nominal shares, lend and borrow seats between them by demand
// (borrowing.ts), queue fairly by flow, and answer 429 with Retry-After when their queues are full or
// a request waited too long. The configuration is the stored
// FlowSchema / PriorityLevelConfiguration objects when the flowcontrol types are served and the
// mandatory ones exist, and the reference's bootstrap configuration (defaults.ts) until then.
import { createHash } from 'node:crypto';
import type { FlowControl, FlowDecision, FlowRequest, KObject, PluginHost, PluginModule, TypeDef } from '../../../kernel/contracts/index.js';
import { CONTRACT_VERSION } from '../../../kernel/contracts/index.js';
import { classify, orderSchemas, seatsFor } from './classify.js';
import { defaultFlowSchemas, defaultPriorityLevels, type FlowSchemaSpec, type Named, type PriorityLevelSpec } from './defaults.js';
import { flowHash, QueueSet, type QueueConfig } from './queueset.js';
import { boundsOf, dealSeats, type BorrowingLevel } from './borrowing.js';

export interface ApfOptions {
  /** Seats of the whole server (the reference: --max-requests-inflight + --max-mutating-requests-inflight). */
  serverConcurrencyLimit?: number;
  /** Longest a request waits in a queue before it is rejected (the reference: a quarter of --request-timeout, at most 1m). */
  queueWaitSeconds?: number;
  /** How often seats are dealt again between levels by their demand (the reference: 10 s). */
  borrowingPeriodSeconds?: number;
}

const FS_HEADER = 'X-Kubernetes-PF-FlowSchema-UID';
const PL_HEADER = 'X-Kubernetes-PF-PriorityLevel-UID';

/** A stable UID for a configuration object that exists only in code (the bootstrap defaults). */
const uidOf = (kind: string, name: string) => {
  const h = createHash('sha256').update(`${kind}/${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

/** A schema's response headers and metric labels, with the level they were made for. */
interface Tag { level: Level; headers: Record<string, string>; labels: { flow_schema: string; priority_level: string } }

interface Level {
  name: string;
  uid: string;
  exempt: boolean;
  queues?: QueueSet;
  /** Limited levels: nominal seats, and how far borrowing may move them; the smoothed demand. */
  borrowing?: BorrowingLevel;
  /** Retry-After in seconds: 1, doubled for each second that keeps dropping requests (at most 60), halved after a quiet one. */
  retryAfter: number;
  lastDropSecond: number;
}

class Apf implements FlowControl {
  readonly postStartHooks = ['priority-and-fairness-config-consumer', 'priority-and-fairness-filter'];
  private schemas: (Named<FlowSchemaSpec> & { uid: string })[] = [];
  private levels = new Map<string, Level>();
  /** A schema's response headers and metric labels with its level, made once per configuration (not per request). */
  private tags = new Map<object, Tag>();
  private unsubscribe: (() => void)[] = [];
  private rejected;
  private dispatched;
  private executing;
  private inQueue;
  private limitGauges;
  private adjustTimer: ReturnType<typeof setInterval> | undefined;

  constructor(private host: PluginHost, private serverSeats: number, private waitMs: number, periodMs = 10_000) {
    const m = host.metrics;
    this.rejected = m.counter('apiserver_flowcontrol_rejected_requests_total', '[BETA] Number of requests rejected by API Priority and Fairness subsystem', ['flow_schema', 'priority_level', 'reason']);
    this.dispatched = m.counter('apiserver_flowcontrol_dispatched_requests_total', '[BETA] Number of requests executed by API Priority and Fairness subsystem', ['flow_schema', 'priority_level']);
    this.executing = m.gauge('apiserver_flowcontrol_current_executing_requests', '[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem', ['flow_schema', 'priority_level']);
    this.inQueue = m.gauge('apiserver_flowcontrol_current_inqueue_requests', '[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem', ['flow_schema', 'priority_level']);
    const g = (name: string, help: string) => m.gauge(`apiserver_flowcontrol_${name}`, help, ['priority_level']);
    this.limitGauges = {
      nominal: g('nominal_limit_seats', '[BETA] Nominal number of execution seats configured for each priority level'),
      current: g('current_limit_seats', '[ALPHA] current derived number of execution seats available to each priority level'),
      lower: g('lower_limit_seats', '[ALPHA] Configured lower bound on number of execution seats available to each priority level'),
      upper: g('upper_limit_seats', '[ALPHA] Configured upper bound on number of execution seats available to each priority level'),
      target: g('target_seats', '[ALPHA] Seat allocation targets'),
    };
    this.configure(defaultFlowSchemas(host.brand), defaultPriorityLevels());
    if (periodMs > 0) {
      this.adjustTimer = setInterval(() => this.adjust(), periodMs);
      this.adjustTimer.unref?.();
    }
  }

  /** Deals the seats again between the limited levels, by their seat demand over the last period. */
  adjust(): void {
    const levels = [...this.levels.values()].filter((l) => l.queues && l.borrowing);
    if (!levels.length) return;
    const { seats, targets } = dealSeats(levels.map((l) => l.borrowing!), levels.map((l) => l.queues!.takeDemandStats()));
    levels.forEach((l, i) => {
      if (seats[i] !== l.queues!.seats) l.queues!.setSeats(seats[i]);
      const labels = { priority_level: l.name };
      this.limitGauges.current.set(labels, seats[i]);
      this.limitGauges.target.set(labels, targets[i]);
    });
  }

  /** Starts following the stored configuration objects, when their types are served. */
  follow(): void {
    const group = `flowcontrol.apiserver.${this.host.brand.domain}`;
    const fsType = this.host.type(group, 'flowschemas');
    const plType = this.host.type(group, 'prioritylevelconfigurations');
    if (!fsType || !plType) return;
    let pending = false;
    const reload = () => {
      if (pending) return;
      pending = true;
      queueMicrotask(() => { pending = false; void this.reload(fsType, plType); });
    };
    this.unsubscribe.push(this.host.objects.watch(fsType, reload), this.host.objects.watch(plType, reload));
    reload();
  }

  private async reload(fsType: TypeDef, plType: TypeDef): Promise<void> {
    try {
      const [fss, pls] = await Promise.all([this.host.objects.list(fsType), this.host.objects.list(plType)]);
      const named = <S>(o: KObject) => ({ name: o.metadata!.name!, uid: o.metadata!.uid, spec: o.spec as S });
      const levels = pls.map((o) => named<PriorityLevelSpec>(o));
      // Until the mandatory objects are stored, the bootstrap configuration stays in force.
      if (!levels.some((l) => l.name === 'exempt') || !levels.some((l) => l.name === 'catch-all')) return;
      this.configure(fss.map((o) => named<FlowSchemaSpec>(o)), levels);
    } catch (e) {
      this.host.log.warn('flow control: reading FlowSchemas and PriorityLevelConfigurations failed; keeping the current configuration', { error: String(e) });
    }
  }

  /** Seats per limited level from the nominal shares; existing queues keep their waiting requests. */
  private configure(schemas: Named<FlowSchemaSpec>[], levels: Named<PriorityLevelSpec>[]): void {
    const limited = levels.filter((l) => l.spec.type === 'Limited');
    const shares = limited.reduce((a, l) => a + (l.spec.limited?.nominalConcurrencyShares ?? 30), 0) || 1;
    const next = new Map<string, Level>();
    for (const l of levels) {
      const old = this.levels.get(l.name);
      const uid = l.uid ?? uidOf('PriorityLevelConfiguration', l.name);
      if (l.spec.type !== 'Limited') {
        next.set(l.name, { name: l.name, uid, exempt: true, retryAfter: 1, lastDropSecond: 0 });
        continue;
      }
      const lim = l.spec.limited!;
      const seats = Math.ceil((this.serverSeats * (lim.nominalConcurrencyShares ?? 30)) / shares);
      const q = lim.limitResponse.type === 'Queue' ? lim.limitResponse.queuing ?? { queues: 64, handSize: 8, queueLengthLimit: 50 } : undefined;
      const cfg: QueueConfig = { seats, queues: q?.queues ?? 0, handSize: q?.handSize ?? 0, queueLengthLimit: q?.queueLengthLimit ?? 0 };
      // A level starts (and starts again, when changed) at its nominal seats; borrowing moves it from there.
      let queues = old?.queues;
      if (queues) queues.reconfigure(cfg);
      else queues = new QueueSet(cfg);
      const bounds = boundsOf(seats, lim.lendablePercent ?? 0, lim.borrowingLimitPercent);
      const borrowing: BorrowingLevel = { bounds, smoothed: old?.borrowing?.smoothed ?? 0 };
      const labels = { priority_level: l.name };
      this.limitGauges.nominal.set(labels, seats);
      this.limitGauges.current.set(labels, seats);
      this.limitGauges.lower.set(labels, bounds.min);
      this.limitGauges.upper.set(labels, Number.isFinite(bounds.max) ? bounds.max : this.serverSeats);
      next.set(l.name, { name: l.name, uid, exempt: false, queues, borrowing, retryAfter: old?.retryAfter ?? 1, lastDropSecond: old?.lastDropSecond ?? 0 });
    }
    this.levels = next;
    this.tags = new Map();
    this.schemas = orderSchemas(schemas).map((s) => ({ ...s, uid: s.uid ?? uidOf('FlowSchema', s.name) }));
  }

  admit(req: FlowRequest): FlowDecision | Promise<FlowDecision> {
    if (req.longRunning) return { run: true, release() {} };
    const c = classify(this.schemas, req);
    // A request no schema matches (or one whose level is gone) goes to catch-all, as the reference's fallback.
    const schema = c?.schema ?? this.schemas.find((s) => s.name === 'catch-all');
    const level = (schema && this.levels.get(schema.spec.priorityLevelConfiguration.name)) ?? this.levels.get('catch-all');
    if (!schema || !level) return { run: true, release() {} };
    let tag = this.tags.get(schema);
    if (tag?.level !== level) this.tags.set(schema, (tag = { level, headers: { [FS_HEADER]: schema.uid, [PL_HEADER]: level.uid }, labels: { flow_schema: schema.name, priority_level: level.name } }));
    const { headers, labels } = tag;
    if (level.exempt || !level.queues) {
      this.dispatched.inc(labels);
      return { run: true, headers, release() {} };
    }
    const queues = level.queues;
    const seats = seatsFor(req);
    const a = queues.admit(flowHash(`${schema.name}\u0000${c?.distinguisher ?? ''}`), seats, this.waitMs);
    if ('rejected' in a) return this.reject(tag, queues.queued ? 'queue-full' : 'concurrency-limit');
    if (a.now) return this.run(tag, queues, a.width);
    this.inQueue.inc(labels);
    return a.wait.then((ok) => {
      this.inQueue.dec(labels);
      if (!ok) return this.reject(tag, 'time-out');
      if (req.aborted()) {
        queues.release(a.width);
        return this.reject(tag, 'cancelled');
      }
      return this.run(tag, queues, a.width);
    });
  }

  private run(tag: Tag, queues: QueueSet, width: number): FlowDecision {
    const labels = tag.labels;
    this.dispatched.inc(labels);
    this.executing.inc(labels);
    let released = false;
    return {
      run: true,
      headers: tag.headers,
      release: () => {
        if (released) return;
        released = true;
        this.executing.dec(labels);
        queues.release(width);
      },
    };
  }

  private reject(tag: Tag, reason: string): FlowDecision {
    this.rejected.inc({ ...tag.labels, reason });
    return { run: false, headers: tag.headers, retryAfterSeconds: this.noteDrop(tag.level) };
  }

  private noteDrop(l: Level): number {
    const now = Math.floor(Date.now() / 1000);
    if (now !== l.lastDropSecond) {
      l.retryAfter = now - l.lastDropSecond === 1 ? Math.min(60, l.retryAfter * 2) : Math.max(1, l.retryAfter >> 1);
      l.lastDropSecond = now;
    }
    return l.retryAfter;
  }

  async close(): Promise<void> {
    clearInterval(this.adjustTimer);
    for (const u of this.unsubscribe.splice(0)) u();
  }
}

const plugin: PluginModule<'flowcontrol'> = {
  kind: 'flowcontrol',
  contract: CONTRACT_VERSION,
  name: 'apf',
  create(options: ApfOptions, host) {
    // the server's seats: with read loops, each loop has its share
    const seats = Math.max(1, Math.ceil(Math.floor(options.serverConcurrencyLimit ?? 600) / Math.max(1, host.loops ?? 1)));
    const waitMs = Math.min(60, Math.max(0, options.queueWaitSeconds ?? 15)) * 1000;
    const periodMs = Math.max(0, options.borrowingPeriodSeconds ?? 10) * 1000;
    const apf = new Apf(host, seats, waitMs, periodMs);
    // the types are all registered by now; the objects arrive through the watch
    apf.follow();
    return apf;
  },
};
export default plugin;
