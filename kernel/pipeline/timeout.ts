// Request deadlines: --request-timeout, or the client's shorter ?timeout=, and the reference's answer
// when one passes. Long-running requests (watches, exec, attach, port-forward, proxy, log) have none.
import { queryTimeoutMs } from '../api/options.js';
import type { RequestInfo, UserInfo } from '../contracts/index.js';
import type { KRequest } from '../http/types.js';
import type { ServerLogger } from '../ops/logging.js';
import type { ResponseTap } from '../ops/metrics.js';

/** Sub-resources the reference counts as long-running: held open, never limited by flow control. */
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/** Held open and never limited by flow control (a watch is not: it gives its seat back once established). */
export function isLongRunning(info: RequestInfo): boolean {
  return info.verb === 'proxy' || LONG_RUNNING_SUBRESOURCES.has(info.subresource);
}

/** What the timeout and the pipeline share about one request. */
export interface RunState { timedOut: boolean; user?: UserInfo; seat?: { release(): void }; srcIP?: string }

/** The reference's timeout answer: its timeout writer JSON-encodes the bare Status (no kind or apiVersion), newline-terminated. */
const REQUEST_TIMEOUT_BODY = `${JSON.stringify({ metadata: {}, status: 'Failure', message: 'Timeout: request did not complete within the allotted timeout', reason: 'Timeout', details: {}, code: 504 })}\n`;

/** 'timeout' when `work` has not settled within `ms`; its outcome (or rejection) otherwise. */
export async function settleWithin(work: Promise<void>, ms: number): Promise<'done' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((r) => { timer = setTimeout(() => r('timeout'), ms); });
  try {
    return await Promise.race([work.then(() => 'done' as const), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The deadline of a request that is not long-running: --request-timeout, or the client's shorter
 * `?timeout=` (0 or a longer one leaves the server's), as the reference's request-deadline filter.
 */
export function requestDeadlineMs(info: RequestInfo, q: URLSearchParams, requestTimeoutSeconds: number): number | undefined {
  if (info.verb === 'watch' || isLongRunning(info)) return undefined;
  const max = requestTimeoutSeconds * 1000;
  const ms = queryTimeoutMs(q);
  return ms !== undefined && ms > 0 && ms < max ? ms : max;
}

/**
 * The deadline passed: the reference's 504 (its timeout writer's body, without the handler's
 * headers), or, when the answer had already begun, the connection dropped. The seat goes back now;
 * whatever the work still writes goes nowhere, and how it ends is only logged.
 */
export function timedOut(log: ServerLogger, req: KRequest, tap: ResponseTap, run: RunState, work: Promise<void>): void {
  run.timedOut = true;
  run.seat?.release();
  if (tap.code === 0) {
    tap.extraHeaders = undefined;
    tap.warning = undefined;
    tap.send(504, { 'content-type': 'text/plain; charset=utf-8' }, REQUEST_TIMEOUT_BODY);
  } else {
    tap.close();
  }
  tap.seal();
  work.then(
    () => log.v(2, 'post-timeout activity', { verb: req.method, URI: req.path, result: 'completed' }),
    (e) => log.v(2, 'post-timeout activity', { verb: req.method, URI: req.path, result: String((e as Error)?.message ?? e).slice(0, 512) }),
  );
}
