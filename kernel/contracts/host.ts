// The host: what plugins may use of the server (PluginHost) and its object client.
import type { Brand } from './brand.js';
import type { UserInfo } from './identity.js';
import type { KObject, FieldCause } from './objects.js';
import type { Logger, PluginMetrics } from './observe.js';
import type { AdmissionAttributes, AuthorizationAttributes, AuthorizationDecision, Signer } from './requests.js';
import type { ConnectHandler, ConnectRoute, PluginState, RemoteGroupVersion, StreamHandler, VirtualHandler, VirtualRoute, WriteGuard } from './routes.js';
import type { StatusError } from './status.js';
import type { ValueTransformer } from './storage.js';
import type { TypeDef } from './types.js';

export interface ObjectClient {
  get(type: TypeDef, namespace: string, name: string): Promise<KObject | undefined>;
  list(type: TypeDef, namespace?: string): Promise<KObject[]>;
  /** With `subresource`: POSTs `obj` (a Binding, an Eviction) to that create-only sub-resource of the object obj.metadata names, as a client would (its admission, then the plugin serving it); returns the answer (a Status). */
  create(type: TypeDef, obj: KObject, subresource?: string): Promise<KObject>;
  update(type: TypeDef, obj: KObject, subresource?: string): Promise<KObject>;
  /** opts: DeleteOptions (propagationPolicy, gracePeriodSeconds, preconditions, dryRun). */
  delete(type: TypeDef, namespace: string, name: string, opts?: { propagationPolicy?: string; gracePeriodSeconds?: number; preconditions?: { uid?: string; resourceVersion?: string }; dryRun?: string[] }): Promise<KObject | undefined>;
  /** Subscribe to committed changes of a type (`only`: of objects with this name/namespace; no others are parsed for it); returns an unsubscribe function. */
  watch(type: TypeDef, listener: (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KObject) => void, only?: { name?: string; namespace?: string }): () => void;
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

export interface PluginHost {
  brand: Brand;
  dataDir: string;
  log: Logger;
  /** With read loops, the event loops serving (writer and read loops): a server-wide limit is this many loops' shares. */
  loops: number;
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
