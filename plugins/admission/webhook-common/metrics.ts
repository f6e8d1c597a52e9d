// Metrics of the admission webhooks, kept per server in plain maps anyone can read (WebhookMetrics) and, when
// the server offers a metrics registry (PluginHost.metrics), mirrored into the reference's families:
//
//   apiserver_admission_webhook_rejection_count{name, operation, type, error_type, rejection_code}
//   apiserver_admission_webhook_admission_duration_seconds{name, type, operation, rejected}
//
// `type` is "admit" for mutating webhooks and "validating" for validating ones; rejection codes above
// 600 count as 600, so a webhook cannot grow the series without bound.

export const REJECTION_METRIC = 'apiserver_admission_webhook_rejection_count';
export const DURATION_METRIC = 'apiserver_admission_webhook_admission_duration_seconds';
/** The reference's buckets for the duration histogram (seconds). */
export const DURATION_BUCKETS: readonly number[] = [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25];

export type WebhookStep = 'admit' | 'validating';
export type RejectionErrorType = 'calling_webhook_error' | 'no_error' | 'apiserver_internal_error';

export interface RejectionLabels {
  name: string;
  operation: string;
  type: WebhookStep;
  error_type: RejectionErrorType;
  rejection_code: string;
}

export interface DurationLabels {
  name: string;
  type: WebhookStep;
  operation: string;
  rejected: 'true' | 'false';
}

/** One histogram series: observation count, sum (seconds) and per-bucket counts (cumulative, as exposed; last slot +Inf). */
export interface DurationSeries {
  count: number;
  sum: number;
  buckets: number[];
}

// The registry the kernel offers plugins, described structurally so this file does not depend on its exact exports.
interface CounterLike { inc(labels?: Record<string, string>, n?: number): void }
interface HistogramLike { observe(labels: Record<string, string> | undefined, value: number): void }
interface RegistryLike {
  counter(name: string, help: string, labelNames?: string[]): CounterLike;
  histogram(name: string, help: string, labelNames?: string[], buckets?: number[]): HistogramLike;
}

const REJECTION_HELP = '[ALPHA] Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.';
const DURATION_HELP = '[STABLE] Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).';

/** One server's webhook counts (a process may run several servers: each has its own). */
export class WebhookMetrics {
  /** JSON.stringify(RejectionLabels) (keys in the order above) → count. */
  readonly rejections = new Map<string, number>();
  /** JSON.stringify(DurationLabels) (keys in the order above) → histogram series. */
  readonly durations = new Map<string, DurationSeries>();
  /** Upper bounds of `DurationSeries.buckets` (one more slot for +Inf). */
  readonly buckets = DURATION_BUCKETS;
  /** Duration series by a cheap key, so a call does not build the JSON key. */
  private readonly seriesByQuickKey = new Map<string, DurationSeries>();

  /** `registry`: the server's metrics registry (PluginHost.metrics), which the counts are mirrored into. */
  constructor(registry?: unknown) { this.bound = bindRegistry(registry); }
  private readonly bound: { rejections: CounterLike; durations: HistogramLike } | undefined;

  /** Counts a rejection: a denial (no_error with the webhook's code), a failed call under failurePolicy Fail, or an internal error. */
  reject(name: string, operation: string, type: WebhookStep, errorType: RejectionErrorType, code: number): void {
    const labels: RejectionLabels = { name, operation, type, error_type: errorType, rejection_code: String(Math.min(Math.max(0, Math.trunc(code) || 0), 600)) };
    const k = JSON.stringify(labels);
    this.rejections.set(k, (this.rejections.get(k) ?? 0) + 1);
    this.bound?.rejections.inc({ ...labels });
  }

  /** Records how long one webhook call took. */
  observe(name: string, type: WebhookStep, operation: string, rejected: boolean, seconds: number): void {
    const labels: DurationLabels = { name, type, operation, rejected: rejected ? 'true' : 'false' };
    const quick = `${name}\0${type}\0${operation}\0${labels.rejected}`;
    let s = this.seriesByQuickKey.get(quick);
    if (!s) {
      const k = JSON.stringify(labels);
      s = this.durations.get(k);
      if (!s) this.durations.set(k, (s = { count: 0, sum: 0, buckets: new Array(DURATION_BUCKETS.length + 1).fill(0) }));
      this.seriesByQuickKey.set(quick, s);
    }
    s.count++;
    s.sum += seconds;
    for (let i = 0; i < DURATION_BUCKETS.length; i++) if (seconds <= DURATION_BUCKETS[i]) s.buckets[i]++;
    s.buckets[DURATION_BUCKETS.length]++;
    this.bound?.durations.observe({ ...labels }, seconds);
  }
}

/** The metric families in the server's registry, when it has one. */
function bindRegistry(registry: unknown): WebhookMetrics['bound'] {
  const reg = registry as RegistryLike | undefined;
  if (!reg || typeof reg.counter !== 'function' || typeof reg.histogram !== 'function') return undefined;
  try {
    return {
      rejections: reg.counter(REJECTION_METRIC, REJECTION_HELP, ['name', 'operation', 'type', 'error_type', 'rejection_code']),
      durations: reg.histogram(DURATION_METRIC, DURATION_HELP, ['name', 'type', 'operation', 'rejected'], [...DURATION_BUCKETS]),
    };
  } catch {
    return undefined; // a registry that declared the families differently: keep the in-memory counts only
  }
}

/** The mutating and validating plugins of one server (one host) share its counts. */
const byHost = new WeakMap<object, WebhookMetrics>();
export function webhookMetricsFor(host: object): WebhookMetrics {
  let m = byHost.get(host);
  if (!m) byHost.set(host, (m = new WebhookMetrics((host as { metrics?: unknown }).metrics)));
  return m;
}
