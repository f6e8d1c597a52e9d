// What plugins report through: audit backends, metrics, and the log.
import type { UserInfo } from './identity.js';

// ---------------------------------------------------------------- audit

/** How much of a request an audit event carries (the reference's policy levels, in increasing order). */
export type AuditLevel = 'None' | 'Metadata' | 'Request' | 'RequestResponse';
export type AuditStage = 'RequestReceived' | 'ResponseStarted' | 'ResponseComplete' | 'Panic';

/** What an audit backend's policy decides on: the request as authenticated (before impersonation). */
export interface AuditRequestAttributes {
  /** The authenticated user; username "" and no groups when authentication failed. */
  user: UserInfo;
  /** API verb for resource requests (get list watch create ...), lower-case HTTP method otherwise. */
  verb: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  path: string;
  apiGroup: string;
  apiVersion?: string;
  nonResource: boolean;
}

/** A level, plus the stages to leave out and whether managedFields are dropped from logged objects. */
export interface AuditPolicyDecision {
  level: AuditLevel;
  omitStages?: AuditStage[];
  omitManagedFields?: boolean;
}

export interface AuditObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  apiGroup?: string;
  apiVersion?: string;
  subresource?: string;
}

/** One audit event, in the reference's audit.<domain>/v1 Event shape (optional fields are left out, not null). */
export interface AuditEvent {
  kind: 'Event';
  apiVersion: string;
  level: Exclude<AuditLevel, 'None'>;
  auditID: string;
  stage: AuditStage;
  requestURI: string;
  verb: string;
  /** Empty object when authentication failed. */
  user: Partial<UserInfo>;
  impersonatedUser?: UserInfo;
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: AuditObjectReference;
  responseStatus?: { metadata: Record<string, string>; status?: string; message?: string; reason?: string; details?: unknown; code: number };
  /** Level Request and above. */
  requestObject?: unknown;
  /** Level RequestResponse. */
  responseObject?: unknown;
  /** RFC 3339 with microseconds. */
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

/** An audit sink with its own policy: asked for a level once per request, then handed each event. */
export interface AuditBackend {
  level(attrs: AuditRequestAttributes): AuditLevel | AuditPolicyDecision;
  /** Must not throw or block for long: it runs on the request path. */
  record(event: AuditEvent): void;
  close?(): Promise<void>;
}

// ---------------------------------------------------------------- metrics

/** Label name → value; labels a metric declares but the call leaves out are "". */
export type MetricLabels = Record<string, string>;

export interface MetricCounter {
  inc(labels?: MetricLabels, n?: number): void;
}

export interface MetricGauge {
  set(labels: MetricLabels | undefined, value: number): void;
  inc(labels?: MetricLabels, n?: number): void;
  dec(labels?: MetricLabels, n?: number): void;
}

export interface MetricHistogram {
  observe(labels: MetricLabels | undefined, value: number): void;
}

/**
 * Metrics a plugin exports on /metrics (Prometheus text format). Registering a name again with the same
 * type and label names returns the same metric (two plugin instances may share one); anything else
 * throws. Names follow Prometheus rules; help may start with a stability marker such as "[ALPHA] ".
 */
export interface PluginMetrics {
  counter(name: string, help: string, labelNames?: string[]): MetricCounter;
  gauge(name: string, help: string, labelNames?: string[]): MetricGauge;
  /** Buckets: upper bounds in increasing order (default: the Prometheus client's defaults). */
  histogram(name: string, help: string, labelNames?: string[], buckets?: number[]): MetricHistogram;
}

export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  /** An info line shown only from verbosity `level` (-v), as the reference's klog.V(level). */
  v(level: number, msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}
