// Metrics in the Prometheus text exposition format (version 0.0.4), served on /metrics.
// A small registry of counter, gauge and histogram families that the kernel and plugins share
// (plugins reach it as PluginHost.metrics), plus the kernel's own request, storage, watch and
// deprecation metrics under the reference server's names and labels.
//
// Hot path: a series is found by walking a trie of Maps keyed by label values (no key string is
// built per observation); the kernel passes its label values in a reused array, so counting a
// request allocates nothing once its series exists.
import { finalWarnings, joinWarnings } from './warnings.js';
import type { MetricCounter, MetricGauge, MetricHistogram, MetricLabels, PluginMetrics, RequestInfo, TypeDef } from '../contracts/index.js';
import type { KRequest, KResponse, StreamFraming, WebSocketHandlers } from '../http/types.js';
import type { ResourceCache } from '../store/cache.js';
import type { WatchHub } from '../watch/fanout.js';
import { OutputBudget } from '../watch/outbudget.js';

type MetricType = 'counter' | 'gauge' | 'histogram';

/** One labelled series. For histograms `value` is the observation count. */
interface Series {
  labels: string[];
  value: number;
  /** Histogram: observations per bucket (not cumulative; the last slot is +Inf). */
  counts?: Float64Array;
  sum?: number;
}

const NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_RE = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The Prometheus client's default buckets. */
export const DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** The reference server's apiserver_request_duration_seconds buckets. */
export const REQUEST_DURATION_BUCKETS: readonly number[] = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** The reference's apiserver_admission_webhook_admission_duration_seconds buckets. */
export const WEBHOOK_DURATION_BUCKETS: readonly number[] = [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25];

const escapeValue = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const escapeHelp = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

export class MetricFamily {
  private root = new Map<string, unknown>();
  readonly series: Series[] = [];
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: MetricType,
    readonly labelNames: readonly string[],
    readonly buckets: readonly number[] = [],
  ) {}

  /** The series of these label values (in labelNames order; missing ones are ""). The array is not kept. */
  child(values: readonly string[]): Series {
    const n = this.labelNames.length;
    let node = this.root;
    for (let i = 0; i < n - 1; i++) {
      const v = values[i] ?? '';
      let next = node.get(v) as Map<string, unknown> | undefined;
      if (!next) node.set(v, (next = new Map()));
      node = next;
    }
    const last = n ? values[n - 1] ?? '' : '';
    let s = node.get(last) as Series | undefined;
    if (!s) {
      const labels: string[] = [];
      for (let i = 0; i < n; i++) labels.push(values[i] ?? '');
      s = { labels, value: 0 };
      if (this.type === 'histogram') {
        s.counts = new Float64Array(this.buckets.length + 1);
        s.sum = 0;
      }
      node.set(last, s);
      this.series.push(s);
    }
    return s;
  }

  /** The series of a label object (child(values(labels)) without the array: plugins count with label objects on every request). */
  childOf(labels: MetricLabels | undefined): Series {
    const names = this.labelNames;
    const n = names.length;
    let node = this.root;
    for (let i = 0; i < n - 1; i++) {
      const next = node.get(labels?.[names[i]] ?? '') as Map<string, unknown> | undefined;
      if (!next) return this.child(this.values(labels));
      node = next;
    }
    return (node.get(n ? labels?.[names[n - 1]] ?? '' : '') as Series | undefined) ?? this.child(this.values(labels));
  }

  /** Label values of a label object, in declaration order. */
  values(labels: MetricLabels | undefined): string[] {
    const out: string[] = [];
    for (const l of this.labelNames) out.push(labels?.[l] ?? '');
    return out;
  }

  observe(s: Series, v: number): void {
    const b = this.buckets;
    let i = 0;
    while (i < b.length && v > b[i]) i++;
    s.counts![i]++;
    s.sum! += v;
    s.value++;
  }

  /** Drops every series (gauges recomputed at scrape time). */
  reset(): void {
    this.root.clear();
    this.series.length = 0;
  }

  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`);
    const names = this.labelNames;
    for (const s of this.series) {
      let lbl = '';
      for (let i = 0; i < names.length; i++) lbl += `${i ? ',' : ''}${names[i]}="${escapeValue(s.labels[i])}"`;
      if (this.type !== 'histogram') {
        out.push(`${this.name}${lbl ? `{${lbl}}` : ''} ${formatNumber(s.value)}`);
        continue;
      }
      const pre = lbl ? `${lbl},` : '';
      let cum = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        cum += s.counts![i];
        const le = i < this.buckets.length ? formatNumber(this.buckets[i]) : '+Inf';
        out.push(`${this.name}_bucket{${pre}le="${le}"} ${cum}`);
      }
      out.push(`${this.name}_sum${lbl ? `{${lbl}}` : ''} ${formatNumber(s.sum!)}`);
      out.push(`${this.name}_count${lbl ? `{${lbl}}` : ''} ${s.value}`);
    }
  }
}

/** The registry behind /metrics and PluginHost.metrics. */
export class MetricsRegistry implements PluginMetrics {
  private families = new Map<string, MetricFamily>();
  private collectors: (() => void)[] = [];

  /** Registers (or finds the identical) family; a clash in type, labels or buckets throws. */
  family(name: string, help: string, type: MetricType, labelNames: readonly string[] = [], buckets?: readonly number[]): MetricFamily {
    if (!NAME_RE.test(name)) throw new Error(`invalid metric name "${name}"`);
    for (const l of labelNames) {
      if (!LABEL_RE.test(l) || l.startsWith('__')) throw new Error(`metric ${name}: invalid label name "${l}"`);
      if (type === 'histogram' && l === 'le') throw new Error(`metric ${name}: a histogram cannot have a label "le"`);
    }
    if (new Set(labelNames).size !== labelNames.length) throw new Error(`metric ${name}: repeated label name`);
    let b: readonly number[] = [];
    if (type === 'histogram') {
      b = buckets ?? DEFAULT_BUCKETS;
      for (let i = 0; i < b.length; i++) {
        if (!Number.isFinite(b[i]) || (i && b[i] <= b[i - 1])) throw new Error(`metric ${name}: buckets must be finite and increasing`);
      }
    }
    const old = this.families.get(name);
    if (old) {
      const same = old.type === type && old.labelNames.join(',') === labelNames.join(',') && old.buckets.join(',') === b.join(',');
      if (!same) throw new Error(`metric ${name} is already registered as a ${old.type} with labels [${old.labelNames.join(', ')}]`);
      return old;
    }
    const f = new MetricFamily(name, help, type, [...labelNames], b);
    this.families.set(name, f);
    return f;
  }

  counter(name: string, help: string, labelNames: string[] = []): MetricCounter {
    const f = this.family(name, help, 'counter', labelNames);
    return {
      inc: (labels, n = 1) => {
        if (!(n >= 0)) throw new Error(`metric ${name}: a counter cannot decrease`);
        f.childOf(labels).value += n;
      },
    };
  }

  gauge(name: string, help: string, labelNames: string[] = []): MetricGauge {
    const f = this.family(name, help, 'gauge', labelNames);
    return {
      set: (labels, v) => { f.childOf(labels).value = v; },
      inc: (labels, n = 1) => { f.childOf(labels).value += n; },
      dec: (labels, n = 1) => { f.childOf(labels).value -= n; },
    };
  }

  histogram(name: string, help: string, labelNames: string[] = [], buckets?: number[]): MetricHistogram {
    const f = this.family(name, help, 'histogram', labelNames, buckets);
    return { observe: (labels, v) => f.observe(f.childOf(labels), v) };
  }

  /** A function run before each scrape (to set gauges from current state). */
  collect(fn: () => void): void {
    this.collectors.push(fn);
  }

  render(): string {
    for (const c of this.collectors) c();
    const out: string[] = [];
    for (const name of [...this.families.keys()].sort()) this.families.get(name)!.render(out);
    return out.join('\n') + '\n';
  }
}

// ---------------------------------------------------------------- response status capture

/**
 * A KResponse that remembers the status code it sent, so the pipeline can count the request.
 * `streaming` is set when a chunked response (a watch) starts.
 */
export class ResponseTap implements KResponse {
  code = 0;
  streaming = false;
  upgrade?: (handlers: WebSocketHandlers, protocol?: string) => boolean;
  hijack?: KResponse['hijack'];
  constructor(readonly inner: KResponse) {
    if (inner.hijack) {
      const take = inner.hijack;
      this.hijack = () => {
        this.code = 101;
        return take.call(inner);
      };
    }
    if (inner.upgrade) {
      const up = inner.upgrade;
      this.upgrade = (handlers, protocol) => {
        this.code = 101;
        return up.call(inner, handlers, protocol);
      };
    }
  }
  /** Headers every answer of this request carries (flow control's classification). */
  extraHeaders: Record<string, string> | undefined;
  /** A Warning header value every response of this request carries (a deprecated version's warning). */
  warning?: string;
  /** A Warning to join into the headers: then the extra headers are merged here too (rare), else the transport writes them beside. */
  private joined(headers: Record<string, string>): Record<string, string> | undefined {
    if (!this.warning && !headers.warning && !this.extraHeaders?.warning) return undefined;
    const h = this.extraHeaders ? { ...headers, ...this.extraHeaders } : headers;
    return { ...h, warning: finalWarnings(joinWarnings(this.warning, h.warning)!) };
  }
  /**
   * Set once the request's deadline answered for it: the work behind it may still run, and what it
   * writes goes nowhere (as the reference's timeout writer drops it); it sees a client that left.
   */
  sealed = false;
  seal(): void { this.sealed = true; }
  get aborted(): boolean { return this.sealed || this.inner.aborted; }
  send(code: number, headers: Record<string, string>, body?: Uint8Array | string): void {
    if (this.sealed) return;
    this.code = code;
    const j = this.joined(headers);
    this.inner.send(code, j ?? headers, body, j ? undefined : this.extraHeaders);
  }
  start(code: number, headers: Record<string, string>, framing?: StreamFraming): void {
    if (this.sealed) return;
    this.code = code;
    this.streaming = true;
    const j = this.joined(headers);
    this.inner.start(code, j ?? headers, framing, j ? undefined : this.extraHeaders);
  }
  startSized(code: number, headers: Record<string, string>, total: number): void {
    if (this.sealed) return;
    this.code = code;
    const j = this.joined(headers);
    this.inner.startSized(code, j ?? headers, total, j ? undefined : this.extraHeaders);
  }
  close(): void { if (!this.sealed) this.inner.close(); }
  write(chunk: Uint8Array | string): boolean { return this.sealed ? true : this.inner.write(chunk); }
  onDrain(cb: () => void): void { this.inner.onDrain(cb); }
  onClose(cb: () => void): void { this.inner.onClose(cb); }
  end(): void { if (!this.sealed) this.inner.end(); }
}

// ---------------------------------------------------------------- the kernel's metrics

const REQUEST_LABELS = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;
const CONNECT_SUBRESOURCES = new Set(['exec', 'attach', 'portforward', 'proxy']);
const HEALTH_PATH = /^\/(?:healthz|livez|readyz)(?:\/|$)/;

const codeStrings: string[] = [];
const codeString = (c: number): string => (codeStrings[c] ??= String(c));

/** Upper-case verb as the reference reports it in apiserver_request_total. */
export function metricVerb(req: KRequest, info: RequestInfo): string {
  if (!info.isResourceRequest) return req.method;
  // the reference instruments its connect routes (exec, attach, portforward, proxy) as CONNECT, whatever the method
  if (info.name && CONNECT_SUBRESOURCES.has(info.subresource)) return 'CONNECT';
  switch (info.verb) {
    case 'get': return 'GET';
    case 'list': return 'LIST';
    case 'watch': return 'WATCH';
    case 'create': return 'POST';
    case 'update': return 'PUT';
    case 'patch': return (req.header('content-type') ?? '').startsWith('application/apply-patch') ? 'APPLY' : 'PATCH';
    case 'delete': return 'DELETE';
    case 'deletecollection': return 'DELETECOLLECTION';
    default: return req.method;
  }
}

/** "resource" for one named object (and every create), "namespace" or "cluster" for collections, "" for non-resource paths. */
export function metricScope(info: RequestInfo): string {
  if (info.name || info.verb === 'create') return 'resource';
  if (info.namespace) return 'namespace';
  return info.isResourceRequest ? 'cluster' : '';
}

function dryRunLabel(q: URLSearchParams): string {
  // most requests have no query: URLSearchParams' lookups are not free
  if (q.size === 0 || !q.has('dryRun')) return '';
  const vals = q.getAll('dryRun');
  for (const v of vals) if (v !== 'All') return 'invalid';
  return vals.sort().join(',');
}

/** Stability marker the reference puts at the start of help text. */
const ALPHA = '[ALPHA] ';
const STABLE = '[STABLE] ';

export interface ServerMetricsSource {
  /** Whether a group/version/resource is served (labels of unknown resources are blanked, so bad paths cannot grow the series without bound). */
  served(group: string, version: string, resource: string): boolean;
  /** Distinct resource caches (one per stored resource) for apiserver_storage_objects. */
  caches(): Iterable<ResourceCache>;
  currentRevision(): number;
  compactedRevision(): number;
}

/** The kernel's metrics on top of a registry. */
export class ServerMetrics {
  readonly registry = new MetricsRegistry();
  private requests: MetricFamily;
  private durations: MetricFamily;
  private deprecated: MetricFamily;
  readonly auditEvents: MetricCounter;
  readonly auditLevels: MetricFamily;
  private scratch: string[] = new Array(REQUEST_LABELS.length + 1).fill('');
  private watchers = new Map<ResourceCache, number>();

  constructor(private src: ServerMetricsSource) {
    const r = this.registry;
    this.requests = r.family('apiserver_request_total', `${STABLE}Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.`, 'counter', [...REQUEST_LABELS, 'code']);
    this.durations = r.family('apiserver_request_duration_seconds', `${STABLE}Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component (watches and connections excluded).`, 'histogram', REQUEST_LABELS, REQUEST_DURATION_BUCKETS);
    this.deprecated = r.family('apiserver_requested_deprecated_apis', `${STABLE}Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.`, 'gauge', ['group', 'version', 'resource', 'subresource', 'removed_release']);
    // The admission webhook metrics, declared here so they exist before any webhook plugin loads;
    // plugins get the same families by registering the same name and labels.
    r.family('apiserver_admission_webhook_rejection_count', `${ALPHA}Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.`, 'counter', ['name', 'operation', 'type', 'error_type', 'rejection_code']);
    r.family('apiserver_admission_webhook_admission_duration_seconds', `${STABLE}Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).`, 'histogram', ['name', 'type', 'operation', 'rejected'], WEBHOOK_DURATION_BUCKETS);
    this.auditEvents = r.counter('apiserver_audit_event_total', `${ALPHA}Counter of audit events generated and sent to the audit backend.`);
    this.auditLevels = r.family('apiserver_audit_level_total', `${ALPHA}Counter of policy levels for audit events (1 per request).`, 'counter', ['level']);

    const objects = r.family('apiserver_storage_objects', `${STABLE}Number of stored objects at the time of last check split by kind.`, 'gauge', ['resource']);
    const watchers = r.family('apiserver_registered_watchers', `${ALPHA}Number of currently registered watchers for a given resources`, 'gauge', ['group', 'version', 'kind']);
    const rev = r.family('apiserver_storage_current_revision', `${ALPHA}Highest committed revision of the storage log.`, 'gauge');
    const compacted = r.family('apiserver_storage_compacted_revision', `${ALPHA}Revision at or below which the storage log's history has been compacted.`, 'gauge');
    r.collect(() => {
      objects.reset();
      for (const rc of src.caches()) {
        const t = rc.type;
        objects.child([t.group ? `${t.resource}.${t.group}` : t.resource]).value = rc.byKey.size;
      }
      watchers.reset();
      for (const [rc, n] of this.watchers) {
        const t = rc.type;
        if (n > 0) watchers.child([t.group, t.version, t.kind]).value = n;
      }
      rev.child([]).value = src.currentRevision();
      compacted.child([]).value = src.compactedRevision();
    });
  }

  /** Counts registered watchers per resource by wrapping the hub's add and remove. */
  /** The watch history's size against its bounds (kernel/store/cache.ts). */
  instrumentHistory(cache: { eventBytes: number; historyEvents: number; maxEventBytes: number; maxEvents: number; floor: number }): void {
    const r = this.registry;
    const bytes = r.gauge('apiserver_watch_history_bytes', 'Bytes of the object versions the watch history holds in memory (bounded by the storage option historyMaxBytes).');
    const events = r.gauge('apiserver_watch_history_events', 'Events the watch history holds in memory (bounded by the storage option historyMaxEvents).');
    const bound = r.gauge('apiserver_watch_history_limit', 'The watch history\'s bounds, by kind (bytes, events).', ['kind']);
    const floor = r.gauge('apiserver_watch_history_oldest_resource_version', 'The resource version below which watches and lists get 410 Expired.');
    r.collect(() => {
      bytes.set({}, cache.eventBytes);
      events.set({}, cache.historyEvents);
      bound.set({ kind: 'bytes' }, cache.maxEventBytes);
      bound.set({ kind: 'events' }, cache.maxEvents);
      floor.set({}, cache.floor);
    });
  }

  instrumentWatchHub(hub: WatchHub): void {
    const add = hub.add.bind(hub);
    const remove = hub.remove.bind(hub);
    hub.add = (rc, w) => {
      const before = hub.count;
      add(rc, w);
      if (hub.count > before) this.watchers.set(rc, (this.watchers.get(rc) ?? 0) + 1);
    };
    hub.remove = (rc, w) => {
      const before = hub.count;
      remove(rc, w);
      if (hub.count < before) this.watchers.set(rc, (this.watchers.get(rc) ?? 1) - 1);
    };
  }

  /** One finished (or, for a watch, established) request: apiserver_request_total and the duration histogram. */
  request(req: KRequest, info: RequestInfo, code: number, startMs: number): void {
    const v = this.scratch;
    const verb = metricVerb(req, info);
    v[0] = verb;
    v[1] = dryRunLabel(req.query);
    if (info.isResourceRequest && (code < 400 || this.src.served(info.apiGroup, info.apiVersion, info.resource))) {
      v[2] = info.apiGroup;
      v[3] = info.apiVersion;
      v[4] = info.resource;
      v[5] = info.subresource;
    } else {
      v[2] = v[3] = v[4] = '';
      // Non-resource paths are labelled by path where they were served (health checks by name);
      // refused or unknown paths are not, to keep the series bounded.
      v[5] = !info.isResourceRequest && (code < 400 || HEALTH_PATH.test(info.path)) ? info.path : '';
    }
    v[6] = metricScope(info);
    v[7] = 'apiserver';
    if (verb !== 'WATCH' && verb !== 'CONNECT') this.durations.observe(this.durations.child(v), (performance.now() - startMs) / 1000);
    v[8] = codeString(code);
    this.requests.child(v).value++;
  }

  /** /metrics in the Prometheus text format (a HEAD without the body); false for any other path. */
  answer(req: KRequest, res: KResponse): boolean {
    if (req.path !== '/metrics') return false;
    res.send(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }, req.method === 'HEAD' ? '' : this.registry.render());
    return true;
  }

  /** A request to a deprecated API version: apiserver_requested_deprecated_apis is 1 for it. */
  deprecatedRequest(type: TypeDef, subresource: string): void {
    this.deprecated.child([type.group, type.version, type.resource, subresource, type.removedRelease ?? '']).value = 1;
  }
}

/**
 * The output budget watches and large list answers share; every stream it closes is logged, and
 * counted: watches as the reference counts them, lists in a counter of their own.
 */
export function meteredOutputBudget(r: MetricsRegistry, limitBytes: number, log: { warn(msg: string, fields?: Record<string, unknown>): void }): OutputBudget {
  const terminated = r.counter('apiserver_terminated_watchers_total', 'Counter of watchers closed due to unresponsiveness broken by resource type.', ['group', 'resource']);
  const cut = r.counter('apiserver_output_budget_closed_lists_total', 'Counter of list answers cut short because their client stopped reading while the server\'s output budget was exceeded, by resource type.', ['group', 'resource']);
  const budget = new OutputBudget(limitBytes, ({ holder, queued, total, reason }) => {
    (holder.kind === 'watch' ? terminated : cut).inc({ group: holder.group, resource: holder.resource });
    log.warn('closed a stream that stopped reading', { stream: holder.what, reason, queuedBytes: queued, serverQueuedBytes: total });
  });
  const queued = r.gauge('apiserver_output_queued_bytes', 'Bytes written to watch and list streams that their clients have not taken yet, counted in the server\'s output budget.');
  const limit = r.gauge('apiserver_output_budget_bytes', 'The server\'s output budget: the most bytes all streams together may hold for clients that do not read.');
  const streams = r.gauge('apiserver_output_backed_up_streams', 'Streams (watches and list answers) whose clients have bytes queued now.');
  // The process's memory beside it, as the reference's process collector and Node's client libraries name it.
  const rss = r.gauge('process_resident_memory_bytes', 'Resident memory size in bytes.');
  const mem = r.gauge('nodejs_memory_bytes', 'process.memoryUsage(): the V8 heap used and total, external memory and ArrayBuffers (Buffers included).', ['kind']);
  r.collect(() => {
    queued.set({}, budget.total);
    limit.set({}, budget.limitBytes);
    streams.set({}, budget.backedUp());
    const m = process.memoryUsage();
    rss.set({}, m.rss);
    mem.set({ kind: 'heap_used' }, m.heapUsed);
    mem.set({ kind: 'heap_total' }, m.heapTotal);
    mem.set({ kind: 'external' }, m.external);
    mem.set({ kind: 'array_buffers' }, m.arrayBuffers);
  });
  return budget;
}
