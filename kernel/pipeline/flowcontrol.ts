// Flow control (API Priority and Fairness or the in-flight limits): a seat for the request, or 429.
import type { FlowControl, FlowDecision, FlowRequest, RequestInfo, UserInfo } from '../contracts/index.js';
import { isPromise, type KRequest, type KResponse } from '../http/types.js';
import type { ResponseTap } from '../ops/metrics.js';
import { isLongRunning, type RunState } from './timeout.js';

/** What flow control needs: the plugin, if one is configured, and how many objects a list may read. */
export interface FlowContext {
  readonly flowControl?: FlowControl;
  /** The number of stored objects of the listed resource, when it is served. */
  listSize(info: RequestInfo): number | undefined;
}

/** A seat the request holds until it gives it back. */
export interface Seat { release(): void }

/**
 * Waits for the request's seat: the seat, `undefined` without flow control, or 'stop' when the
 * request ends here (turned away with 429, or its deadline passed while it waited). The seat goes
 * back whatever ends the request: the client going away or the deadline included.
 */
export function enterFlowControl(ctx: FlowContext, req: KRequest, tap: ResponseTap, info: RequestInfo, user: UserInfo, run: RunState): Seat | undefined | 'stop' | Promise<Seat | undefined | 'stop'> {
  if (!ctx.flowControl) return run.timedOut ? 'stop' : undefined;
  const flow = ctx.flowControl.admit(flowRequest(ctx, info, user, req, tap));
  return isPromise(flow) ? flow.then((d) => seated(d, tap, run)) : seated(flow, tap, run);
}

function seated(flow: FlowDecision, tap: ResponseTap, run: RunState): Seat | 'stop' {
  if (run.timedOut) { if (flow.run) flow.release(); return 'stop'; }
  if (flow.headers) tap.extraHeaders = flow.headers;
  if (!flow.run) { tooManyRequests(tap, flow.retryAfterSeconds); return 'stop'; }
  run.seat = flow;
  return flow;
}

/** What flow control sees of a request; lists carry the number of objects they may read, for their seats. */
function flowRequest(ctx: FlowContext, info: RequestInfo, user: UserInfo, req: KRequest, res: KResponse): FlowRequest {
  const fr: FlowRequest = { info, user, longRunning: isLongRunning(info), aborted: () => res.aborted };
  if (info.verb === 'list') {
    const size = ctx.listSize(info);
    if (size !== undefined) fr.listSize = size;
    fr.limit = Number(req.query.get('limit')) || 0;
  }
  return fr;
}

/** The reference answers a request flow control turns away with plain text, not a Status. */
function tooManyRequests(res: KResponse, retryAfterSeconds: number): void {
  res.send(429, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', 'retry-after': String(retryAfterSeconds) }, 'Too many requests, please try again later.\n');
}
