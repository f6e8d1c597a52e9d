// Auditing: one AuditContext per request when at least one audit backend is configured. It asks
// each backend's policy for a level once the caller is authenticated, collects what the event needs
// as the request runs (impersonated user, authorization decision, admission annotations, the request
// and response bodies only when the level logs them), and hands each backend its events in the
// reference's audit.<domain>/v1 Event shape: RequestReceived, ResponseStarted (watches) and
// ResponseComplete. Without a backend the pipeline never creates a context.
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import YAML from 'yaml';
import type { Brand } from '../contracts/brand.js';
import type {
  AdmissionAttributes, AuditBackend, AuditEvent, AuditLevel, AuditObjectReference, AuditPolicyDecision, AuditRequestAttributes, AuditStage,
  AuthorizationDecision, Logger, RequestInfo, TypeDef, UserInfo,
} from '../contracts/index.js';
import type { KRequest, KResponse, StreamFraming } from '../http/types.js';
import { ResponseTap, type ServerMetrics } from './metrics.js';
import { isStatusError } from '../contracts/status.js';

const RANK: Record<AuditLevel, number> = { None: 0, Metadata: 1, Request: 2, RequestResponse: 3 };
const LEVELS = Object.keys(RANK) as AuditLevel[];
const NO_USER: UserInfo = { username: '', groups: [] };

/** RFC 3339 time with microseconds, as the reference writes audit timestamps. */
export function microTimestamp(): string {
  const ms = performance.timeOrigin + performance.now();
  const whole = Math.floor(ms);
  const micros = Math.min(999, Math.floor((ms - whole) * 1000));
  return new Date(whole).toISOString().slice(0, -1) + String(micros).padStart(3, '0') + 'Z';
}

function normalizeDecision(d: AuditLevel | AuditPolicyDecision | undefined): AuditPolicyDecision {
  const out = typeof d === 'string' ? { level: d } : d && typeof d === 'object' ? d : { level: 'None' as AuditLevel };
  return RANK[out.level] === undefined ? { level: 'None' } : out;
}

/** The user as the event shows it: empty fields left out. */
function userOut(u: UserInfo): UserInfo {
  const o: UserInfo = { username: u.username } as UserInfo;
  if (u.uid) o.uid = u.uid;
  if (u.groups?.length) o.groups = [...u.groups];
  if (u.extra && Object.keys(u.extra).length) o.extra = u.extra;
  return o;
}

/** X-Forwarded-For addresses, then X-Real-Ip, then the peer address, each once (the reference's order). */
function sourceIPs(req: KRequest): string[] {
  const ips: string[] = [];
  const add = (raw: string | undefined) => {
    let ip = raw?.trim();
    if (!ip) return;
    if (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4) ip = ip.slice(7);
    if (isIP(ip) && !ips.includes(ip)) ips.push(ip);
  };
  const xff = req.header('x-forwarded-for');
  if (xff) for (const p of xff.split(',')) add(p);
  add(req.header('x-real-ip'));
  add(req.remoteAddress);
  return ips;
}

/** Drops metadata.managedFields from an object (and from a list's items) without touching the original. */
function withoutManagedFields(o: unknown): unknown {
  if (!o || typeof o !== 'object' || Array.isArray(o)) return o;
  const obj = o as Record<string, unknown>;
  let out = obj;
  const md = obj.metadata as Record<string, unknown> | undefined;
  if (md && typeof md === 'object' && 'managedFields' in md) {
    const { managedFields: _mf, ...rest } = md;
    out = { ...obj, metadata: rest };
  }
  if (Array.isArray(obj.items)) out = { ...out, items: obj.items.map(withoutManagedFields) };
  return out;
}

function parseBody(body: Uint8Array | string | undefined, contentType: string | undefined): unknown {
  if (body === undefined || body.length === 0) return undefined;
  const text = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  const ct = (contentType ?? 'application/json').toLowerCase();
  try {
    if (ct.includes('yaml')) return YAML.parse(text);
    if (ct.includes('json') || ct === '' || ct.startsWith('*/*')) return JSON.parse(text);
  } catch {
    /* not decodable: the event goes without it */
  }
  return undefined;
}

export interface NamedAuditBackend {
  name: string;
  plugin: AuditBackend;
}

/** The configured audit backends and the names of the annotations the kernel sets. */
export class Auditor {
  readonly apiVersion: string;
  readonly decisionKey: string;
  readonly reasonKey: string;
  readonly deprecatedKey: string;
  readonly removedReleaseKey: string;

  constructor(readonly backends: NamedAuditBackend[], brand: Brand, readonly log: Logger, readonly metrics?: ServerMetrics) {
    this.apiVersion = `audit.${brand.domain}/v1`;
    this.decisionKey = `authorization.${brand.domain}/decision`;
    this.reasonKey = `authorization.${brand.domain}/reason`;
    this.deprecatedKey = `${brand.domain}/deprecated`;
    this.removedReleaseKey = `${brand.domain}/removed-release`;
  }

  /** A request's audit context and the response wrapper that feeds it (status code, Audit-Id header, body when logged). */
  begin(req: KRequest, info: RequestInfo, res: KResponse): AuditResponse {
    return new AuditResponse(res, new AuditContext(this, req, info));
  }

  async close(): Promise<void> {
    for (const b of this.backends) {
      try { await b.plugin.close?.(); } catch (e) { this.log.warn('audit backend close failed', { backend: b.name, error: String(e) }); }
    }
  }
}

/** Everything one request's audit events need, gathered as the request runs. */
export class AuditContext {
  readonly id = randomUUID();
  private readonly received = microTimestamp();
  private decisions: AuditPolicyDecision[] | undefined;
  /** Highest level any backend wants (0 = None). */
  private max = 0;
  private user: UserInfo | undefined;
  private impersonatedUser: UserInfo | undefined;
  private annotations: Record<string, string> | undefined;
  /** Annotations shown only at level Request and above. */
  private requestAnnotations: Record<string, string> | undefined;
  private admission: AdmissionAttributes | undefined;
  private requestBody: Buffer | undefined;
  private responseBody: Uint8Array | string | undefined;
  private responseType: string | undefined;
  private status: { status?: string; message?: string; reason?: string; details?: unknown } | undefined;
  private code = 0;
  private done = false;

  /** Read at once: the transport may no longer know the client's address once the answer is complete. */
  private readonly ips: string[];

  constructor(private readonly auditor: Auditor, private readonly req: KRequest, private readonly info: RequestInfo) {
    this.ips = sourceIPs(req);
  }

  /** Whether the response body is wanted (some backend logs at RequestResponse). */
  get wantsResponse(): boolean { return this.max >= 3; }

  /** Adds an annotation (first value of a key wins); admission plugins reach this as attrs.annotate. */
  readonly annotate = (key: string, value: string, level: 'Metadata' | 'Request' = 'Metadata'): void => {
    if (this.decisions && this.max === 0) return;
    const into = level === 'Request' ? (this.requestAnnotations ??= {}) : (this.annotations ??= {});
    if (!(key in into)) into[key] = String(value);
  };

  /** The caller is known: each backend's policy decides its level; RequestReceived goes out. */
  authenticated(user: UserInfo): void {
    this.user = user;
    this.decide(user);
    this.emit('RequestReceived');
  }

  private decide(user: UserInfo): void {
    const info = this.info;
    const attrs: AuditRequestAttributes = {
      user, verb: info.verb, path: info.path, apiGroup: info.apiGroup, apiVersion: info.apiVersion, nonResource: !info.isResourceRequest,
    };
    if (info.isResourceRequest) {
      attrs.resource = info.resource;
      attrs.subresource = info.subresource;
      attrs.namespace = info.namespace;
      attrs.name = info.name;
    }
    const decisions: AuditPolicyDecision[] = [];
    let max = 0;
    for (const b of this.auditor.backends) {
      let d: AuditPolicyDecision;
      try {
        d = normalizeDecision(b.plugin.level(attrs));
      } catch (e) {
        this.auditor.log.warn('audit policy evaluation failed', { backend: b.name, error: String(e) });
        d = { level: 'None' };
      }
      decisions.push(d);
      max = Math.max(max, RANK[d.level]);
    }
    this.decisions = decisions;
    this.max = max;
    const m = this.auditor.metrics;
    if (m) m.auditLevels.child([LEVELS[max]]).value++;
    if (max >= 2) {
      // Keep the raw request body when it is logged; it is decoded only when the event is built.
      const req = this.req;
      const read = req.body;
      req.body = (limit: number) => read.call(req, limit).then((b) => { this.requestBody = b; return b; });
    }
  }

  impersonated(user: UserInfo): void {
    this.impersonatedUser = user;
  }

  authorized(d: AuthorizationDecision): void {
    if (this.max === 0) return;
    this.annotate(this.auditor.decisionKey, d.decision === 'allow' ? 'allow' : 'forbid');
    this.annotate(this.auditor.reasonKey, d.reason ?? '');
  }

  /** A request to a deprecated API version. */
  deprecated(type: TypeDef): void {
    this.annotate(this.auditor.deprecatedKey, 'true');
    if (type.removedRelease) this.annotate(this.auditor.removedReleaseKey, type.removedRelease);
  }

  /** Admission attributes of this request: they get `annotate`, and name the object a create made. */
  attach(a: AdmissionAttributes): void {
    a.annotate = this.annotate;
    if (this.max > 0) this.admission = a;
  }

  /** The error the request failed with (its Status goes into responseStatus). */
  failed(e: unknown): void {
    if (isStatusError(e)) {
      const s = e.toStatus();
      this.status = { status: s.status, message: s.message, reason: s.reason, details: s.details };
    } else {
      this.status = { status: 'Failure', message: (e as Error)?.message ?? String(e), reason: 'InternalError' };
    }
  }

  responseSent(body: Uint8Array | string | undefined, contentType: string | undefined): void {
    this.responseBody = body;
    this.responseType = contentType;
  }

  /** A streaming response (watch) began. */
  started(code: number): void {
    this.code = code;
    this.emit('ResponseStarted');
  }

  /** The response is complete: the last event goes out (once). */
  complete(code: number): void {
    if (this.done) return;
    this.done = true;
    this.code = code;
    if (!this.decisions) this.decide(NO_USER); // authentication failed: policies see no user
    this.emit('ResponseComplete');
  }

  private objectRef(): AuditObjectReference | undefined {
    const info = this.info;
    if (!info.isResourceRequest) return undefined;
    const ref: AuditObjectReference = { resource: info.resource };
    if (info.namespace) ref.namespace = info.namespace;
    const name = info.name || this.admission?.name;
    if (name) ref.name = name;
    if (info.apiGroup) ref.apiGroup = info.apiGroup;
    if (info.apiVersion) ref.apiVersion = info.apiVersion;
    if (info.subresource) ref.subresource = info.subresource;
    return ref;
  }

  private emit(stage: AuditStage): void {
    const decisions = this.decisions;
    if (!decisions || this.max === 0) return;
    const now = microTimestamp();
    const query = this.req.query.toString();
    const requestURI = query ? `${this.req.path}?${query}` : this.req.path;
    const ips = this.ips;
    const userAgent = this.req.header('user-agent');
    const objectRef = this.objectRef();
    let requestObject: unknown;
    let responseObject: unknown;
    let decoded = false;
    for (let i = 0; i < decisions.length; i++) {
      const d = decisions[i];
      const rank = RANK[d.level];
      if (rank === 0 || d.omitStages?.includes(stage)) continue;
      if (rank >= 2 && !decoded) {
        decoded = true;
        requestObject = parseBody(this.requestBody, this.req.header('content-type'));
        if (this.max >= 3 && stage === 'ResponseComplete') responseObject = parseBody(this.responseBody, this.responseType);
      }
      // Built field by field in the reference's order (JSON keeps insertion order).
      const ev = {
        kind: 'Event', apiVersion: this.auditor.apiVersion, level: d.level, auditID: this.id, stage, requestURI,
        verb: this.info.verb, user: this.user && this.user.username ? userOut(this.user) : {},
      } as AuditEvent;
      if (this.impersonatedUser) ev.impersonatedUser = userOut(this.impersonatedUser);
      if (ips.length) ev.sourceIPs = ips;
      if (userAgent) ev.userAgent = userAgent;
      if (objectRef) ev.objectRef = objectRef;
      if (stage !== 'RequestReceived') {
        const rs: NonNullable<AuditEvent['responseStatus']> = { metadata: {} } as NonNullable<AuditEvent['responseStatus']>;
        const s = this.status;
        if (s) {
          if (s.status) rs.status = s.status;
          if (s.message) rs.message = s.message;
          if (s.reason) rs.reason = s.reason;
          if (s.details) rs.details = s.details;
        }
        rs.code = this.code;
        ev.responseStatus = rs;
        if (rank >= 2 && requestObject !== undefined) ev.requestObject = d.omitManagedFields ? withoutManagedFields(requestObject) : requestObject;
        if (rank >= 3 && responseObject !== undefined) ev.responseObject = d.omitManagedFields ? withoutManagedFields(responseObject) : responseObject;
      }
      ev.requestReceivedTimestamp = this.received;
      ev.stageTimestamp = now;
      if (this.annotations || (rank >= 2 && this.requestAnnotations)) {
        ev.annotations = rank >= 2 && this.requestAnnotations ? { ...this.annotations, ...this.requestAnnotations } : { ...this.annotations };
      }
      try {
        this.auditor.backends[i].plugin.record(ev);
        this.auditor.metrics?.auditEvents.inc();
      } catch (e) {
        this.auditor.log.warn('audit backend failed to record an event', { backend: this.auditor.backends[i].name, error: String(e) });
      }
    }
  }
}

/** The response wrapper of an audited request: adds the Audit-Id header and reports to the context. */
export class AuditResponse extends ResponseTap {
  constructor(inner: KResponse, readonly audit: AuditContext) {
    super(inner);
  }
  override send(code: number, headers: Record<string, string>, body?: Uint8Array | string): void {
    if (this.sealed) return;
    if (this.audit.wantsResponse) this.audit.responseSent(body, headers['content-type']);
    super.send(code, { ...headers, 'Audit-Id': this.audit.id }, body);
  }
  override start(code: number, headers: Record<string, string>, framing?: StreamFraming): void {
    if (this.sealed) return;
    super.start(code, { ...headers, 'Audit-Id': this.audit.id }, framing);
    this.audit.started(code);
  }
  override end(): void {
    if (this.sealed) return;
    super.end();
    if (this.streaming) this.audit.complete(this.code);
  }
  /** A sized answer sent in pieces: kept whole for the audit event only when the policy records response bodies. */
  private pieces: Uint8Array[] | undefined;
  private piecesLeft = 0;
  private piecesType: string | undefined;
  override startSized(code: number, headers: Record<string, string>, total: number): void {
    if (this.sealed) return;
    if (this.audit.wantsResponse) { this.pieces = []; this.piecesLeft = total; this.piecesType = headers['content-type']; }
    super.startSized(code, { ...headers, 'Audit-Id': this.audit.id }, total);
  }
  override write(chunk: Uint8Array | string): boolean {
    const ok = super.write(chunk);
    if (this.pieces && !this.aborted) {
      const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      this.pieces.push(b);
      this.piecesLeft -= b.length;
      if (this.piecesLeft <= 0) { this.audit.responseSent(Buffer.concat(this.pieces), this.piecesType); this.pieces = undefined; }
    }
    return ok;
  }
}
