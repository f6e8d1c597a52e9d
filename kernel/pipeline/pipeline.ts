// The request pipeline, in its order: audit and metrics wrap the request; under its deadline it is
// authenticated, impersonated, given a flow-control seat, authorized and routed (admission and the
// store happen inside the registry); an error becomes a Status.
import { sendError } from '../api/repr/senderror.js';
import type { Brand } from '../contracts/brand.js';
import type { RequestInfo, UserInfo } from '../contracts/index.js';
import { isPromise, type KRequest, type KResponse } from '../http/types.js';
import type { AuditContext, Auditor } from '../ops/audit.js';
import type { ServerLogger } from '../ops/logging.js';
import { ResponseTap, type ServerMetrics } from '../ops/metrics.js';
import { authenticate, type NamedAuthenticator } from './authenticate.js';
import { authorize } from './authorize.js';
import { enterFlowControl, type FlowContext, type Seat } from './flowcontrol.js';
import { impersonate, type ImpersonateContext } from './impersonate.js';
import { requestInfo } from '../api/requestinfo.js';
import { route, type RouteContext } from './route.js';
import { requestDeadlineMs, settleWithin, timedOut, type RunState } from './timeout.js';

/** Everything the stages need, each stage typed by its own part of it. */
export interface PipelineContext extends ImpersonateContext, FlowContext, RouteContext {
  readonly brand: Brand;
  readonly log: ServerLogger;
  readonly metrics: ServerMetrics;
  /** Set when audit backends are configured; undefined keeps the request path free of audit work. */
  readonly auditor?: Auditor;
  readonly requestTimeoutSeconds: number;
  readonly authenticators: readonly NamedAuthenticator[];
}

/** One request on its way through the stages. */
interface Flight extends RunState { readonly req: KRequest; readonly tap: ResponseTap; readonly info: RequestInfo; readonly audit: AuditContext | undefined }

/**
 * The stages run synchronously as long as each answers at once (a cached token, an immediate seat,
 * an authorizer's remembered decision, an object from the cache): such a request makes no promise
 * and sets no deadline timer. The first stage that has to wait turns the rest into a promise chain.
 */
export class RequestPipeline {
  /** Requests being served: a graceful stop waits for them. */
  inFlight = 0;

  constructor(private readonly ctx: PipelineContext) {}

  handle(req: KRequest, res: KResponse): void | Promise<void> {
    const ctx = this.ctx;
    this.inFlight++;
    const started = performance.now();
    const info = requestInfo(req.method, req.path, req.query);
    // The wrapper notes the status code for the metrics; with audit backends it also feeds the
    // request's audit context (and adds the Audit-Id header).
    let tap: ResponseTap;
    let audit: AuditContext | undefined;
    if (ctx.auditor) {
      const a = ctx.auditor.begin(req, info, res);
      tap = a;
      audit = a.audit;
    } else {
      tap = new ResponseTap(res);
    }
    const f: Flight = { req, tap, info, audit, timedOut: false };
    // the log line is written after the answer, when the transport may no longer know the address
    if (ctx.log.verbosity >= 3) f.srcIP = req.remoteAddress;
    let work: void | Promise<void> = undefined;
    let limitMs: number | undefined;
    try {
      limitMs = requestDeadlineMs(info, req.query, ctx.requestTimeoutSeconds);
      work = this.serve(f);
    } catch (e) {
      this.failed(f, e);
    }
    if (!isPromise(work)) return this.finished(f, started);
    return this.waitFor(f, work, limitMs, started);
  }

  /** The rest of a request that had to wait somewhere: under its deadline. */
  private async waitFor(f: Flight, work: Promise<void>, limitMs: number | undefined, started: number): Promise<void> {
    try {
      if (limitMs === undefined) await work;
      else if ((await settleWithin(work, limitMs)) === 'timeout') timedOut(this.ctx.log, f.req, f.tap, f, work);
    } catch (e) {
      this.failed(f, e);
    } finally {
      this.finished(f, started);
    }
  }

  private failed(f: Flight, e: unknown): void {
    f.audit?.failed(e);
    sendError(f.tap, e, f.req.header('accept'), this.ctx.brand, this.ctx.log);
  }

  private finished(f: Flight, started: number): void {
    const ctx = this.ctx;
    this.inFlight--;
    ctx.metrics.request(f.req, f.info, f.tap.code, started);
    if (ctx.log.verbosity >= 3) this.logRequest(f, started);
    // A watch's last event goes out when its stream ends (AuditResponse.end).
    if (f.audit && (!f.tap.streaming || f.timedOut)) f.audit.complete(f.tap.code);
  }

  /**
   * The request after its deadline was set: authenticate, impersonate, flow control, authorize,
   * route. The flow-control seat is given back whatever ends the request: its answer, an error, the
   * client going away, or the deadline (then the work goes on unseen, as the reference's does).
   */
  private serve(f: Flight): void | Promise<void> {
    const caller = authenticate(this.ctx.authenticators, f.req);
    return isPromise(caller) ? caller.then((c) => this.authenticated(f, c)) : this.authenticated(f, caller);
  }

  private authenticated(f: Flight, caller: UserInfo): void | Promise<void> {
    f.audit?.authenticated(caller);
    const user = impersonate(this.ctx, f.req, caller);
    return isPromise(user) ? user.then((u) => this.enter(f, caller, u)) : this.enter(f, caller, user);
  }

  private enter(f: Flight, caller: UserInfo, user: UserInfo): void | Promise<void> {
    f.user = user;
    if (f.audit && user !== caller) f.audit.impersonated(user);
    // Flow control sits where the reference has it: after impersonation, before authorization.
    const seat = enterFlowControl(this.ctx, f.req, f.tap, f.info, user, f);
    return isPromise(seat) ? seat.then((s) => this.seated(f, user, s)) : this.seated(f, user, seat);
  }

  private seated(f: Flight, user: UserInfo, seat: Seat | undefined | 'stop'): void | Promise<void> {
    if (seat === 'stop') return;
    let out: void | Promise<void>;
    try {
      const allowed = authorize(this.ctx, user, f.info, f.audit);
      out = isPromise(allowed) ? allowed.then(() => this.route(f, user, seat)) : this.route(f, user, seat);
    } catch (e) {
      seat?.release();
      throw e;
    }
    // a watch gives its seat back once it is established, as in the reference
    if (!isPromise(out)) return seat?.release();
    if (!seat) return out;
    // a request that waits gives its seat back if its client goes away
    f.tap.onClose(() => seat.release());
    return out.finally(() => seat.release());
  }

  private route(f: Flight, user: UserInfo, seat: Seat | undefined): void | Promise<void> {
    return route(this.ctx, f.req, f.tap, f.info, user, f.audit, seat);
  }

  /** The reference's -v=3 request line. */
  private logRequest(f: Flight, started: number): void {
    const { req, tap: { code } } = f;
    const qs = req.query.toString();
    this.ctx.log.v(3, 'HTTP', {
      verb: req.method, URI: qs ? `${req.path}?${qs}` : req.path, user: f.user?.username ?? '', latency: `${(performance.now() - started).toFixed(3)}ms`,
      userAgent: req.header('user-agent') ?? '', srcIP: f.srcIP, resp: code,
    });
  }
}
