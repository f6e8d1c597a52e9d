// The request pipeline, in its order: audit and metrics wrap the request; under its deadline it is
// authenticated, impersonated, given a flow-control seat, authorized and routed (admission and the
// store happen inside the registry); an error becomes a Status.
import { sendError } from '../api/repr/senderror.js';
import type { Brand } from '../contracts/brand.js';
import type { RequestInfo } from '../contracts/index.js';
import type { KRequest, KResponse } from '../http/types.js';
import type { AuditContext, Auditor } from '../ops/audit.js';
import type { ServerLogger } from '../ops/logging.js';
import { ResponseTap, type ServerMetrics } from '../ops/metrics.js';
import { authenticate, type NamedAuthenticator } from './authenticate.js';
import { authorize } from './authorize.js';
import { enterFlowControl, type FlowContext } from './flowcontrol.js';
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

export class RequestPipeline {
  /** Requests being served: a graceful stop waits for them. */
  inFlight = 0;

  constructor(private readonly ctx: PipelineContext) {}

  async handle(req: KRequest, res: KResponse): Promise<void> {
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
    const run: RunState = { timedOut: false };
    // the log line is written after the answer, when the transport may no longer know the address
    if (ctx.log.verbosity >= 3) run.srcIP = req.remoteAddress;
    try {
      const limitMs = requestDeadlineMs(info, req.query, ctx.requestTimeoutSeconds);
      const work = this.serve(req, tap, info, audit, run);
      if (limitMs === undefined) await work;
      else if ((await settleWithin(work, limitMs)) === 'timeout') timedOut(ctx.log, req, tap, run, work);
    } catch (e) {
      audit?.failed(e);
      sendError(tap, e, req.header('accept'), ctx.brand, ctx.log);
    } finally {
      this.inFlight--;
      ctx.metrics.request(req, info, tap.code, started);
      if (ctx.log.verbosity >= 3) this.logRequest(req, run, tap.code, started);
      // A watch's last event goes out when its stream ends (AuditResponse.end).
      if (audit && (!tap.streaming || run.timedOut)) audit.complete(tap.code);
    }
  }

  /**
   * The request after its deadline was set: authenticate, impersonate, flow control, authorize,
   * route. The flow-control seat is given back whatever ends the request: its answer, an error, the
   * client going away, or the deadline (then the work goes on unseen, as the reference's does).
   */
  private async serve(req: KRequest, tap: ResponseTap, info: RequestInfo, audit: AuditContext | undefined, run: RunState): Promise<void> {
    const ctx = this.ctx;
    const caller = await authenticate(ctx.authenticators, req);
    audit?.authenticated(caller);
    const user = (run.user = await impersonate(ctx, req, caller));
    if (audit && user !== caller) audit.impersonated(user);
    // Flow control sits where the reference has it: after impersonation, before authorization.
    const seat = await enterFlowControl(ctx, req, tap, info, user, run);
    if (seat === 'stop') return;
    try {
      await authorize(ctx, user, info, audit);
      await route(ctx, req, tap, info, user, audit, () => seat?.release());
    } finally {
      // a watch gives its seat back once it is established, as in the reference
      seat?.release();
    }
  }

  /** The reference's -v=3 request line. */
  private logRequest(req: KRequest, run: RunState, code: number, started: number): void {
    const qs = req.query.toString();
    this.ctx.log.v(3, 'HTTP', {
      verb: req.method, URI: qs ? `${req.path}?${qs}` : req.path, user: run.user?.username ?? '', latency: `${(performance.now() - started).toFixed(3)}ms`,
      userAgent: req.header('user-agent') ?? '', srcIP: run.srcIP, resp: code,
    });
  }
}
