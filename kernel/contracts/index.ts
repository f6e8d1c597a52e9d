// The plugin contracts: one small typed interface per plugin kind.
// A plugin module's default export (or the module itself) is a PluginModule; the loader
// checks `kind` and `contract` before calling `create`. Bump CONTRACT_VERSION only on a
// breaking change to one of these interfaces; plugins declare the version they were built for.
import type { ProtoCatalog } from '../api/repr/protobuf.js';
import type { Brand } from './brand.js';
import type { StatusError } from './status.js';

export const CONTRACT_VERSION = 1;

export type PluginKind = 'authenticator' | 'authorizer' | 'admission' | 'signer' | 'controller' | 'storage' | 'types' | 'audit' | 'flowcontrol';

export interface PluginModule<K extends PluginKind = PluginKind> {
  kind: K;
  /** The contract version this plugin implements (CONTRACT_VERSION when it was built). */
  contract: number;
  /** Optional semver range of the host package this plugin was tested with, e.g. ">=0.1 <1". */
  host?: string;
  name: string;
  create(options: Record<string, unknown>, host: PluginHost): PluginInstance<K> | Promise<PluginInstance<K>>;
}

export type PluginInstance<K extends PluginKind> =
  K extends 'authenticator' ? Authenticator :
  K extends 'authorizer' ? Authorizer :
  K extends 'admission' ? AdmissionPlugin :
  K extends 'signer' ? Signer :
  K extends 'controller' ? Controller :
  K extends 'storage' ? StorageBackend :
  K extends 'types' ? TypeProvider :
  K extends 'audit' ? AuditBackend :
  K extends 'flowcontrol' ? FlowControl : never;

// ---------------------------------------------------------------- identity and requests

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** What the kernel learns from a request path; the attributes authorizers see (Part B). */
export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** API verb: get list watch create update patch delete deletecollection, or the lower-case HTTP method for non-resource requests. */
  verb: string;
  apiPrefix: string; // "api" | "apis" | ""
  apiGroup: string; // "" is the core group
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

/** A transport-neutral view of an incoming request, enough for authenticators. */
export interface AuthRequest {
  method: string;
  path: string;
  header(name: string): string | undefined;
  /** All values of a repeatable header (lower-case name). */
  headerValues(name: string): string[];
  /** Names (lower case) of every header present. */
  headerNames(): string[];
  /** The verified TLS client certificate chain, when the transport can see it (node:tls transport). */
  peerCertificate?: import('node:tls').PeerCertificate;
  remoteAddress: string;
}

// ---------------------------------------------------------------- authenticator

export type AuthenticationResult =
  | { user: UserInfo }
  /** The credential was presented and is invalid: the request is refused with 401, never anonymous. */
  | { rejected: string }
  /** No credential this authenticator understands: try the next one. */
  | null;

export interface Authenticator {
  authenticate(req: AuthRequest): AuthenticationResult | Promise<AuthenticationResult>;
  ready?(): boolean;
  close?(): Promise<void>;
}

// ---------------------------------------------------------------- authorizer

export interface AuthorizationAttributes extends RequestInfo {
  user: UserInfo;
}

export type AuthorizationDecision = { decision: 'allow' | 'deny' | 'no-opinion'; reason?: string };

export interface Authorizer {
  authorize(attrs: AuthorizationAttributes): AuthorizationDecision | Promise<AuthorizationDecision>;
  ready?(): boolean;
  /**
   * The reference server's post-start hooks this plugin stands for ("rbac/bootstrap-roles"): each is a
   * named check `poststarthook/<name>` of /healthz, /livez and /readyz, passing once the plugin started.
   */
  postStartHooks?: readonly string[];
  close?(): Promise<void>;
}

// ---------------------------------------------------------------- admission

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionAttributes {
  operation: Operation;
  /** Adds an audit annotation to this request's audit event (shown at the given level and above; default Metadata). */
  annotate?(key: string, value: string, level?: 'Metadata' | 'Request'): void;
  /** The object being written; mutating plugins change it in place. Undefined on DELETE and CONNECT. */
  object?: KObject;
  oldObject?: KObject;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subresource: string;
  namespace: string;
  name: string;
  user: UserInfo;
  options?: Record<string, unknown>;
  dryRun: boolean;
  type: TypeDef;
  /** Adds a warning to the response (a `299 - "<text>"` Warning header), e.g. from an admission webhook's response. */
  warn?(text: string): void;
  /** Set while the chain reinvokes a mutating plugin that asked for it (see AdmissionPlugin.wantsReinvocation). */
  reinvoking?: boolean;
}

export interface AdmissionPlugin {
  /** Whether this plugin wants to see this operation at all. */
  handles(op: Operation, attrs: AdmissionAttributes): boolean;
  /** Mutating phase. Throw a StatusError (or any Error, sent as 403 Forbidden) to refuse. */
  admit?(attrs: AdmissionAttributes): void | Promise<void>;
  /** Validating phase: must not change the object. */
  validate?(attrs: AdmissionAttributes): void | Promise<void>;
  /** A plugin with side effects makes dry-run requests fail instead of running. */
  sideEffects?: boolean;
  /**
   * Reinvocation (the reference's reinvocationPolicy IfNeeded), asked twice. Right after this plugin's
   * admit() in the mutating pass, without `changedAfter`: may it want reinvoking for this request at
   * all (false spares the chain the bookkeeping)? Then after the whole pass, with `changedAfter`
   * telling whether the object changed after that admit() returned (later plugins): true gets admit()
   * once more, with attrs.reinvoking set. A plugin may also answer true for changes made inside its
   * own admit() after the part that wants reinvoking (one webhook changing the object after another).
   */
  wantsReinvocation?(attrs: AdmissionAttributes, changedAfter?: boolean): boolean;
  ready?(): boolean;
  close?(): Promise<void>;
}

// ---------------------------------------------------------------- signer (certificates issue)

/** An approved CertificateSigningRequest, as a signer sees it. */
export interface SignRequest {
  /** The CertificateSigningRequest's name. */
  name: string;
  /** The PKCS#10 request, PEM; the API has parsed it and checked its signature. */
  request: string;
  /** spec.usages: the reference's key usage names ("digital signature", "client auth", ...). */
  usages: string[];
  /** spec.expirationSeconds, when the requester asked for a shorter lifetime. */
  expirationSeconds?: number;
  /** Who created the request (spec.username, uid, groups, extra). */
  requester: UserInfo;
}

export interface Signer {
  /** The spec.signerName this signer serves, e.g. "example.com/my-signer". */
  signerName: string;
  /**
   * PEM CERTIFICATE block(s) for an approved request. Throw to refuse: the message becomes the
   * request's `Failed` condition (and a server log line), nothing is issued.
   */
  sign(req: SignRequest): Promise<string>;
}

// ---------------------------------------------------------------- flow control (overload protection)

/** What flow control sees of a request: who asks for what (after impersonation, before authorization). */
export interface FlowRequest {
  info: RequestInfo;
  user: UserInfo;
  /** Exec, attach, port-forward, proxy, log follow: held open, never counted against a limit (watches are not long-running here). */
  longRunning: boolean;
  /** For lists: how many objects of the resource there are, and the page size asked for (0: all). */
  listSize?: number;
  limit?: number;
  /** Whether the client went away while the request waited. */
  aborted(): boolean;
}

/**
 * The answer of flow control: run now (and call release once the request is done — for a watch, once
 * it is established), or reject with 429. `headers` go on the response either way
 * (X-Kubernetes-PF-FlowSchema-UID / -PriorityLevel-UID).
 */
export type FlowDecision =
  | { run: true; headers?: Record<string, string>; release(): void }
  | { run: false; headers?: Record<string, string>; retryAfterSeconds: number };

export interface FlowControl {
  /** Classifies the request and waits, if it must queue, until it may run or is rejected. */
  admit(req: FlowRequest): FlowDecision | Promise<FlowDecision>;
  /**
   * The reference server's post-start hooks this plugin stands for ("rbac/bootstrap-roles"): each is a
   * named check `poststarthook/<name>` of /healthz, /livez and /readyz, passing once the plugin started.
   */
  postStartHooks?: readonly string[];
  close?(): Promise<void>;
}

// ---------------------------------------------------------------- controller

export interface Controller {
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
  /**
   * Runs on every server replica (the server's own controllers, such as CRD establishing and the
   * server's Service). Others run, under leader election, only on the holder of the Lease.
   */
  perServer?: boolean;
  ready?(): boolean;
  /**
   * The reference server's post-start hooks this plugin stands for ("rbac/bootstrap-roles"): each is a
   * named check `poststarthook/<name>` of /healthz, /livez and /readyz, passing once the plugin started.
   */
  postStartHooks?: readonly string[];
  /** Called once the server listens, with the port it serves on (the --secure-port 0 case). */
  listening?(info: { port: number }): void | Promise<void>;
}

// ---------------------------------------------------------------- storage backend

/** A stored value with the revision that last modified it. */
export interface KV {
  key: string;
  value: Uint8Array;
  modRevision: number;
  createRevision: number;
}

export interface StorageEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  key: string;
  revision: number;
  /** New value (ADDED, MODIFIED) or the last value before deletion (DELETED). */
  value: Uint8Array;
  createRevision: number;
  /** Revision of the value this event replaced (0 for ADDED). */
  prevRevision: number;
}

export type WriteOp =
  | { type: 'create'; key: string; value: (revision: number) => Uint8Array }
  /** expectRevision: the modRevision the caller read; a mismatch is a conflict. */
  | { type: 'update'; key: string; expectRevision: number; value: (revision: number) => Uint8Array }
  | { type: 'delete'; key: string; expectRevision: number };

export type WriteResult =
  | { ok: true; revision: number; value?: Uint8Array; createRevision: number }
  | { ok: false; reason: 'exists' | 'not-found' | 'conflict'; current?: KV };

/**
 * Turns a value into the bytes a storage backend keeps and back (encryption at rest, from
 * --encryption-provider-config). key is the storage key, which ciphers may bind the value to.
 */
export interface ValueTransformer {
  toStorage(key: string, value: Uint8Array): Uint8Array;
  /** Throws when the stored bytes cannot be read with the configured providers. */
  fromStorage(key: string, stored: Uint8Array): Uint8Array;
}

/**
 * The storage interface: a revisioned key-value log. Revisions are global and strictly increasing;
 * an etcd backend maps etcd revisions one to one. Every backend runs test/storage-conformance.
 */
export interface StorageBackend {
  open(): Promise<void>;
  close(): Promise<void>;
  /** Highest committed (durable) revision whose events have all reached the onCommit listener. */
  currentRevision(): number;
  /**
   * For a store shared with other servers: a quorum read of the store's latest revision, which a
   * consistent read waits for the cache to reach. Without it, currentRevision() is that revision.
   */
  latestRevision?(): Promise<number>;
  /** Oldest revision still available for historical reads and watch resume. */
  compactedRevision(): number;
  get(key: string): Promise<KV | undefined>;
  /** Current values of all keys under prefix, in key order (startKey inclusive, at most limit). */
  range(prefix: string, opts?: { startKey?: string; limit?: number }): Promise<KV[]>;
  /** Stream of all current values as of currentRevision() when called, for warming the cache at start. */
  all(): AsyncIterable<KV>;
  /** Commit one write; resolves after it is durable. Conflicts resolve with ok:false, they do not throw. */
  write(op: WriteOp): Promise<WriteResult>;
  /** History of committed events with revision > after, in revision order (throws if compacted past). */
  history(after: number, prefix?: string): AsyncIterable<StorageEvent>;
  /**
   * Called for every committed event, in revision order, after it is durable, with the revision the
   * store has now reached (at least the last event's; more when revisions passed without an event
   * under this server's keys). One subscriber: the kernel's cache.
   */
  onCommit(listener: (events: StorageEvent[], revision: number) => void): void;
  /** Drop history at or below revision. */
  compact(revision: number): Promise<void>;
  ready?(): boolean;
  /** The health check ready() backs: its name (default "storage") and whether /livez includes it (default true). */
  health?: { name: string; live: boolean };
}

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

// ---------------------------------------------------------------- type catalog

/** Any API object as JSON. */
export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: unknown[];
  managedFields?: unknown[];
  [field: string]: unknown;
}

export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description?: string;
  priority?: number;
  /** Simple dotted JSON path into the object (".spec.replicas"), or a function for computed cells. */
  path?: string;
  cell?: (obj: KObject, now: number) => unknown;
  /** The object's name, placed by the type itself: the table then has no leading Name column. */
  isName?: boolean;
}

/**
 * Structural schema of a type, with the merge markers server-side apply and strategic merge need.
 * `ref` names an entry of the provider's definitions (shared sub-schemas such as ObjectMeta).
 */
export type Schema =
  | { type: 'object'; fields?: Record<string, Schema>; additional?: Schema; required?: string[]; mapType?: 'atomic' | 'granular'; patchStrategy?: string; description?: string; preserveUnknown?: boolean; nullable?: boolean }
  | { type: 'array'; items: Schema; listType?: 'atomic' | 'set' | 'map'; mapKeys?: string[]; patchStrategy?: string; patchMergeKey?: string; description?: string; nullable?: boolean }
  | { type: 'string' | 'integer' | 'number' | 'boolean'; format?: string; enum?: string[]; description?: string; /** null is a value here, not "unset" */ nullable?: boolean }
  | { type: 'int-or-string'; description?: string }
  | { type: 'any'; description?: string }
  | { type: 'ref'; ref: string; description?: string };

/** One served resource type: data, not code (functions only where a rule cannot be data). */
export interface TypeDef {
  group: string; // "" for core
  version: string;
  kind: string;
  resource: string; // plural
  singular: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  /** Verbs on the main resource (defaults to the full set). */
  verbs?: string[];
  /** Sub-resources, e.g. ["status", "scale"]. */
  subresources?: string[];
  /** Name syntax: DNS subdomain (default), DNS label, or path segment. */
  nameRule?: 'subdomain' | 'label' | 'path-segment';
  /** Whether generation is bumped by spec changes (types with a spec). */
  hasSpec?: boolean;
  /** Fields a write to the main resource may not change via the status sub-resource, and vice versa: the status field name. */
  statusField?: string;
  /**
   * metadata fields a write to the status sub-resource does not change (its strategy resets them from
   * the stored object): e.g. ["labels"] for Deployments. Other metadata changes there apply, as in the reference.
   */
  statusKeepsMetadata?: string[];
  /** false: an update must carry metadata.resourceVersion (the reference's AllowUnconditionalUpdate); default true. */
  unconditionalUpdate?: boolean;
  /** Fill defaults in place (pure). */
  defaults?: (obj: KObject, brand: Brand) => void;
  /** Type-specific validation: returns causes (field, message, reason). */
  validate?: (obj: KObject, old: KObject | undefined, brand: Brand, subresource?: string) => FieldCause[];
  /** Extra table columns beyond Name; Created At/Age is the default last column. */
  columns?: TableColumn[];
  /**
   * Sub-resources that open a stream to the object's node (pods: exec, attach, portforward, proxy).
   * The kernel runs CONNECT admission with the request's options, then proxies to the upstream a
   * plugin names (PluginHost.serveConnect), protocol upgrades included; without one, 503.
   */
  connectSubresources?: string[];
  /** The Protobuf catalog holding the type's messages (and its sub-resources' kinds), and the type's message: present when the type speaks Protobuf. */
  protobuf?: { catalog: ProtoCatalog; message: string };
  /** A virtual type: not stored, only `create`, answered by this handler (access reviews, TokenReview). */
  virtual?: VirtualHandler;
  /**
   * A computed type: not stored, read-only (`get` and `list`; set `verbs` to match). Each read asks
   * this for the current objects (componentstatuses: health probes); label and field selectors apply.
   */
  computed?: () => Promise<KObject[]>;
  /** Discovery facts of sub-resources that differ from the defaults (verbs, and the kind of objects a sub-resource takes). */
  subresourceInfo?: Record<string, { verbs: string[]; kind?: string; group?: string; version?: string }>;
  /** Field selector fields the watch fan-out indexes (a watch pinning one is not matched by scanning). */
  indexedFields?: string[];
  /** Field selector fields this type supports beyond metadata.name / metadata.namespace. */
  fieldSelectors?: Record<string, (obj: KObject) => string>;
  /** Finalizers kept outside metadata.finalizers, written only through the `finalize` sub-resource (namespaces: "spec.finalizers"). */
  finalizersField?: string;
  /** status.phase set when deletion begins and the object lingers (namespaces: "Terminating"). */
  terminatingPhase?: string;
  /** Structural schema (with merge markers); absent means unstructured: every list atomic, every key a field. */
  schema?: Schema;
  /** Named sub-schemas `ref` schemas point at (shared across the provider's types). */
  definitions?: Record<string, Schema>;
  /** Name of the definition of this kind, e.g. "io.k8s.api.core.v1.Pod" (for OpenAPI documents). */
  definitionName?: string;
  /** Storage key prefix override (defaults to "/<group or core>/<resource>"). */
  storageResource?: string;
  /**
   * Stored with another group's resource of the same name (the reference's cohabiting resources:
   * events.<domain>/v1 Events are core v1 Events): the group whose storage prefix this type shares,
   * and with it the objects, uids, resourceVersions, history and watch fan-out. `storageVersion` then
   * names a version of that group, and `convert` / `convertObject` move objects between the two.
   */
  storageGroup?: string;
  /**
   * The field selector labels this type accepts, each mapped to the stored resource's field it reads
   * (the reference's field label conversion): a type stored with another group's resource names the
   * fields after its own schema while `fieldSelectors` read the stored form. Without it, the keys of
   * `fieldSelectors` (and metadata.name / metadata.namespace) are the labels.
   */
  fieldLabels?: Record<string, string>;
  /** A deprecated API version (Part A, Versioning): requests get the `<domain>/deprecated` audit annotation and count in apiserver_requested_deprecated_apis. */
  deprecated?: boolean;
  /** Release the deprecated version is removed in, e.g. "1.25" (the metric's removed_release label). */
  removedRelease?: string;
  /** Warning header text sent with every request to this version (a custom resource's deprecationWarning). */
  deprecationWarning?: string;
  /** false: strategic merge patch is refused with 415 even with a schema (custom resources have no patch strategies). */
  strategicMerge?: boolean;
  /** Where the scale sub-resource reads and writes (dotted paths, "spec.replicas"); default spec.replicas, status.replicas, spec.selector as matchLabels. */
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  /** Refuses creates with this message while set (a custom resource whose definition is being deleted). */
  createForbidden?: string;
  /** Sub-resources beyond status and finalize that write one field path of the object (CSR approval: "status.conditions"). */
  subresourceFields?: Record<string, string>;
  /**
   * Versions stored apart (a custom resource with several versions): converts objects, whatever
   * version they were stored in, into `apiVersion` ("example.com/v1"; "v1" for the core group). Reads
   * convert into this TypeDef's apiVersion; writes convert into the stored one (`storageVersion` of
   * `storageGroup`, see storedApiVersion) before storing. Throw a StatusError to fail the request.
   */
  convert?: (objs: KObject[], apiVersion: string) => Promise<KObject[]>;
  /**
   * The same conversion for one object, in process and synchronous (the built-in catalog's
   * multi-version groups set both). With it a watch converts each event once per served version
   * and every watcher of that version shares the bytes; without it each watcher converts its own.
   */
  convertObject?: (obj: KObject, apiVersion: string) => KObject;
  /**
   * Defaults applied when objects are read, not written back (the reference defaults custom resources
   * on read): for objects stored before a `default` was added. `pending` names the stored objects that
   * lack some (kept small: objects written since have them); `apply` returns the defaulted object.
   */
  readDefaults?: { any(): boolean; pending(namespace: string, name: string): boolean; apply(obj: KObject): KObject };
  /** The version objects are stored in, when it is not this one (with `convert`); a version of `storageGroup` when that is set. */
  storageVersion?: string;
  /** Decoded as unstructured JSON (custom resources): strict errors list duplicates, then the unknown fields pruning found, sorted. */
  unstructured?: boolean;
  /**
   * OpenAPI definitions the type publishes as they are (a custom resource's schema as written), for
   * the kind and its list, in v2 and v3 form; without them the documents are rendered from `schema`.
   */
  openapi?: { v2: Record<string, unknown>; v3: Record<string, unknown>; listV2: Record<string, unknown>; listV3: Record<string, unknown> };
  /** Per-type hooks on the write path that need state or other objects (allocators, graceful deletion). */
  strategy?: TypeStrategy;
}

/** What a strategy hook knows of the write it runs in. */
export interface WriteContext {
  dryRun: boolean;
  user: UserInfo;
  subresource: string;
}

/** Called once a write that a strategy prepared has committed (true) or failed (false): keep or undo what it reserved. */
export type WriteFinisher = (committed: boolean) => void | Promise<void>;

/**
 * The reference's registry strategy hooks that data cannot express. They run after mutating admission
 * and before validation, so what they set (an allocated cluster IP) is validated and stored with the
 * object; a StatusError they throw refuses the write.
 */
export interface TypeStrategy {
  beginCreate?(obj: KObject, ctx: WriteContext): Promise<WriteFinisher | void> | WriteFinisher | void;
  beginUpdate?(obj: KObject, old: KObject, ctx: WriteContext): Promise<WriteFinisher | void> | WriteFinisher | void;
  /** After the object has left storage (released allocations). */
  afterDelete?(obj: KObject): void | Promise<void>;
  /**
   * Graceful deletion: how many seconds the object lingers with deletionTimestamp set before it goes
   * (0: at once). `requested` is DeleteOptions.gracePeriodSeconds when given.
   */
  gracePeriod?(obj: KObject, requested: number | undefined): number | Promise<number>;
}

export interface FieldCause {
  reason: string; // FieldValueInvalid, FieldValueRequired, FieldValueNotSupported, FieldValueDuplicate, FieldValueTooLong, FieldValueForbidden
  message: string;
  field: string;
}

export interface TypeProvider {
  types(brand: Brand): TypeDef[];
  /** Called once storage is loaded and objects are readable, before serving (allocation repair, system objects). */
  start?(): void | Promise<void>;
  stop?(): void | Promise<void>;
  /**
   * The reference server's post-start hooks this plugin stands for ("rbac/bootstrap-roles"): each is a
   * named check `poststarthook/<name>` of /healthz, /livez and /readyz, passing once the plugin started.
   */
  postStartHooks?: readonly string[];
}

// ---------------------------------------------------------------- host: what plugins may use

export interface ObjectClient {
  get(type: TypeDef, namespace: string, name: string): Promise<KObject | undefined>;
  list(type: TypeDef, namespace?: string): Promise<KObject[]>;
  create(type: TypeDef, obj: KObject): Promise<KObject>;
  update(type: TypeDef, obj: KObject, subresource?: string): Promise<KObject>;
  /** opts: DeleteOptions (propagationPolicy, gracePeriodSeconds, preconditions, dryRun). */
  delete(type: TypeDef, namespace: string, name: string, opts?: { propagationPolicy?: string; gracePeriodSeconds?: number; preconditions?: { uid?: string; resourceVersion?: string }; dryRun?: string[] }): Promise<KObject | undefined>;
  /** Subscribe to committed changes of a type; returns an unsubscribe function. */
  watch(type: TypeDef, listener: (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KObject) => void): () => void;
  /**
   * Every current object of a type as its identity and a lazy parse: for a controller that must know
   * the whole set but read few of the bodies (the garbage collector's start with a million objects).
   */
  scan?(type: TypeDef, visit: (o: ScannedObject) => void): void;
}

export interface ScannedObject {
  namespace: string;
  name: string;
  /** Whether the stored JSON contains any of `texts` (no parse; may say yes for text inside a string value). */
  mentions(...texts: string[]): boolean;
  object(): KObject;
}

export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  /** An info line shown only from verbosity `level` (-v), as the reference's klog.V(level). */
  v(level: number, msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface PluginHost {
  brand: Brand;
  dataDir: string;
  log: Logger;
  /** Look up a served type by group and resource (plural). */
  type(group: string, resource: string): TypeDef | undefined;
  /** Every served type. */
  allTypes(): TypeDef[];
  /** Object access for controllers and admission plugins, as the server itself: no authentication or authorization; defaulting, admission and validation run as for any write. */
  objects: ObjectClient;
  /** Errors with Status bodies. */
  errors: {
    forbidden(msg: string): StatusError;
    /** 403 for an admission refusal, worded as the reference words them: `pods "x" is forbidden: <msg>`. */
    admissionForbidden(attrs: AdmissionAttributes, msg: string): StatusError;
    /** 422 Invalid; `group` qualifies the kind in the message ("Role.rbac.authorization.k8s.io"). */
    invalid(kind: string, name: string, causes: FieldCause[], group?: string): StatusError;
    status(code: number, reason: string, msg: string): StatusError;
    /** 404 `pods "x" not found` with the reference's details (name, group, kind = resource). */
    notFound(group: string, resource: string, name: string): StatusError;
  };
  featureGates: Record<string, boolean>;
  /** Asks the configured authorizer chain (for access reviews). */
  authorize(attrs: AuthorizationAttributes): Promise<AuthorizationDecision>;
  /** Runs a bearer token through the configured authenticators (for TokenReview); undefined if none accepts it. */
  authenticateToken(token: string): Promise<UserInfo | undefined>;
  /**
   * Serves a create-only sub-resource of a stored type from this plugin (serviceaccounts/token);
   * discovery lists it. (Virtual types are TypeDefs with a `virtual` handler, from a types plugin.)
   */
  serve(route: VirtualRoute, handler: VirtualHandler): void;
  /** Answers GET of a non-resource path from this plugin (/.well-known/openid-configuration). */
  servePath(path: string, handler: () => { contentType: string; body: string }): void;
  /** Checks every create and update of a type before admission (RBAC escalation prevention). Throw a StatusError to refuse. */
  guardWrites(group: string, resource: string, guard: WriteGuard): void;
  /** Counters, gauges and histograms served on /metrics. */
  metrics: PluginMetrics;
  /** The configured certificate signers (for the signing controller). */
  signers(): Signer[];
  /** The storage backend's health, as its /readyz check sees it: the check's name ("etcd", "storage") and the answer. */
  storageHealth(): { name: string; healthy: boolean };
  /** For storage backends: what values go through before they are stored (encryption at rest), if configured. */
  valueTransformer?: ValueTransformer;
  /**
   * Serves types that appear and disappear at run time (custom resources): replaces the types this
   * plugin last served under `owner` by `types` (an empty list stops serving them). Objects already
   * stored under a type's storage prefix are served again; watches on a type no longer served end.
   * Throws when a type is already served by someone else.
   */
  serveTypes(owner: string, types: TypeDef[]): void;
  /** Called after the served types changed (serveTypes): plugins that follow every type take in the new ones. */
  onTypesChanged(listener: () => void): void;
  /** Durable records a plugin keeps outside the API (allocation tables), in the storage backend under its own prefix. */
  state(owner: string): PluginState;
  /** Serves a GET sub-resource of a stored type by streaming from an upstream HTTPS endpoint the handler names (pods/log → the node agent). */
  serveStream(route: VirtualRoute, handler: StreamHandler): void;
  /**
   * Serves whole group-versions from other servers (API aggregation): replaces what this owner served
   * before with `remotes`. Requests under /apis/<group>/<version> are authenticated and authorized
   * here, then proxied to the target with the user in the front-proxy headers; /apis and
   * /apis/<group> list them.
   */
  serveRemote(owner: string, remotes: RemoteGroupVersion[]): void;
  /**
   * The client certificate this server presents when it proxies to extension servers
   * (--proxy-client-cert-file/--proxy-client-key-file, or one signed at first start by a front-proxy
   * CA under <dataDir>/pki; `caPem` is that CA then).
   */
  frontProxyClient(): { certPem: string; keyPem: string; caPem?: string };
  /** Options of the configured authenticators (by plugin name), for publishing what clients must trust. */
  authenticatorOptions(plugin: string): Record<string, unknown> | undefined;
  /**
   * Serves a CONNECT sub-resource (pods/exec, nodes/proxy) of a type listing it in
   * connectSubresources: after authorization and CONNECT admission the request (any method, its
   * body, a WebSocket or SPDY upgrade) is proxied to the upstream the handler names. With
   * `route.path` (a proxy), a trailing path after the sub-resource is accepted and given to the
   * handler, and plain requests are proxied as the reference's proxy transport does (kernel/api/proxy.ts
   * ConnectOptions); `route.upgradeRequired` refuses requests without an upgrade (exec, attach,
   * portforward); `route.objectName` maps the name in the path ("https:node-1:10250") to the stored object's.
   */
  serveConnect(route: ConnectRoute, handler: ConnectHandler): void;
}

export type ConnectRoute = VirtualRoute & { path?: boolean; upgradeRequired?: boolean; objectName?: (name: string) => string };

/** A CONNECT request as a ConnectHandler sees it: `path` is what follows the sub-resource ("" or "/metrics"). */
export interface ConnectRequest { method: string; namespace: string; name: string; subresource: string; path: string; query: URLSearchParams; user: UserInfo }
export type ConnectHandler = (req: ConnectRequest) => Promise<UpstreamTarget>;

/** A group-version served by another server (an APIService naming a service). */
export interface RemoteGroupVersion {
  group: string;
  version: string;
  groupPriorityMinimum: number;
  versionPriority: number;
  /** Where a request goes now; throw a StatusError (e.g. 503) when there is nowhere to send it. */
  target(): UpstreamTarget | Promise<UpstreamTarget>;
  /** The group-version's APIResourceList as last fetched from the server, for aggregated discovery. */
  resources?(): Record<string, unknown> | undefined;
  /** false while the last discovery check failed (the resources above are then "Stale"). */
  fresh?(): boolean;
  /** The group-version's OpenAPI v3 document as last fetched from the server (JSON text), for /openapi/v3. */
  openapiV3?(): string | undefined;
}

/**
 * An upstream the server proxies a streaming sub-resource to, with the client credentials to present.
 * An http: URL is plain HTTP; https: without `ca` is not verified unless `verify` says so (a pod's own endpoint).
 */
export interface UpstreamTarget {
  url: string;
  ca?: string;
  cert?: string;
  key?: string;
  /** TLS server name to verify (and send as SNI) when it differs from the URL's host. */
  servername?: string;
  /** Whether the server certificate is verified (default: only when `ca` is given); with no `ca`, against the system roots. */
  verify?: boolean;
}
export type StreamHandler = (req: { namespace: string; name: string; query: URLSearchParams; user: UserInfo }) => Promise<UpstreamTarget>;

/** A plugin's durable key-value records: creates are atomic (race-free reservations) and resolve once durable. */
export interface PluginState {
  list(): Promise<{ key: string; value: string }[]>;
  /** false when the key exists already. */
  create(key: string, value: string): Promise<boolean>;
  delete(key: string): Promise<void>;
}

export interface VirtualRoute {
  /** The parent type's group and resource, and the sub-resource's name. */
  group: string;
  resource: string;
  subresource: string;
  /** Kind of the sub-resource's request/response object, for discovery (TokenRequest). */
  kind?: string;
  subresourceGroup?: string;
  subresourceVersion?: string;
}

export interface VirtualRequest {
  body: KObject;
  user: UserInfo;
  namespace: string;
  /** The parent object's name, for sub-resources. */
  name: string;
  dryRun: boolean;
}

export type VirtualHandler = (req: VirtualRequest) => Promise<{ code?: number; object: KObject }>;

export type WriteGuard = (op: 'CREATE' | 'UPDATE', obj: KObject, old: KObject | undefined, user: UserInfo) => void | Promise<void>;
