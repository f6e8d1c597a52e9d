// The plugin kinds on the request path: authenticator, authorizer, admission, flow control, and the
// certificate signer the API calls on approval.
import type { UserInfo, RequestInfo, AuthRequest } from './identity.js';
import type { KObject } from './objects.js';
import type { TypeDef } from './types.js';

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
