// The small request/response interface the pipeline works on. uWebSockets.js is the default
// transport (kernel/http/uws.ts); node:tls listeners (mutual TLS, where the peer certificate is
// needed) implement the same interface (kernel/http/node.ts).
import type { Duplex } from 'node:stream';
import type { AuthRequest } from '../contracts/index.js';

export interface KRequest extends AuthRequest {
  method: string; // upper case
  path: string; // decoded path without the query
  query: URLSearchParams;
  /** Reads the whole body; rejects with a 413 StatusError past `limit` bytes. */
  body(limit: number): Promise<Buffer>;
  /**
   * Streams the body instead (a proxy relaying it): chunks as they arrive, no limit; when `data`
   * returns false the client is paused until `resume()`. Transports that cannot leave it undefined.
   */
  streamBody?(sink: BodySink): { resume(): void };
}

export interface BodySink {
  /** false: backed up, pause the client. */
  data(chunk: Buffer): boolean;
  end(): void;
}

export type StreamFraming = 'lines' | 'frames';

/**
 * Headers every answer of a request carries (flow control's), handed to the transport beside the
 * handler's instead of merged into a copy: written after them, a same-named one in their place.
 */
export type ExtraHeaders = Readonly<Record<string, string>> | undefined;

/** `headers` with `extra` merged in, for transports that take one header object. */
export function withExtraHeaders(headers: Record<string, string>, extra: ExtraHeaders): Record<string, string> {
  return extra ? { ...headers, ...extra } : headers;
}

export interface KResponse {
  readonly aborted: boolean;
  /** Sends a complete response. */
  send(code: number, headers: Record<string, string>, body?: Uint8Array | string, extra?: ExtraHeaders): void;
  /**
   * Starts a chunked streaming response; the head goes out at once. `framing` says what the stream
   * is made of, so a transport that can only flush its head or finish a chunk by writing more may
   * write bytes the stream's readers skip: `lines`, newline-delimited JSON (a blank line is
   * ignored); `frames`, length-prefixed Protobuf frames each under 16 MiB (their first byte is 0).
   */
  start(code: number, headers: Record<string, string>, framing?: StreamFraming, extra?: ExtraHeaders): void;
  /** Writes one chunk; false when the socket is backed up (the data is still queued). */
  write(chunk: Uint8Array | string): boolean;
  /** Called each time queued data has drained after write returned false. */
  onDrain(cb: () => void): void;
  /**
   * The most bytes this connection's transport may hold beyond what write() returning false
   * reports: what a write it reported as taken still left in its buffers (uWS's cork buffer; node's
   * stream up to its high-water mark) and the TLS front's buffers for the connection. A stalled
   * stream counts it in the output budget.
   */
  readonly heldBeyond?: number;
  /** Called once if the client goes away. */
  onClose(cb: () => void): void;
  /** Ends a streaming response. */
  end(): void;
  /**
   * Starts an answer of exactly `total` body bytes (Content-Length, no chunked framing) whose body
   * `write` then gives in pieces; it is complete with its last byte (no `end`). A piece the socket
   * does not take at once is kept and sent as the socket drains: write returns false, onDrain fires
   * once it has gone, and no piece may be written meanwhile.
   */
  startSized(code: number, headers: Record<string, string>, total: number, extra?: ExtraHeaders): void;
  /** Drops the connection at once: an answer that cannot be finished. */
  close(): void;
  /** Upgrades to a WebSocket when the transport can (uWS), answering with `protocol` (default: the client's first). */
  upgrade?: (handlers: WebSocketHandlers, protocol?: string) => boolean;
  /**
   * Present on a request asking for a protocol upgrade when the transport can hand over the raw
   * connection (node:http): takes the client's socket and the bytes already read past the head.
   * After this the caller owns the connection (writes the 101 answer itself); send/start no longer apply.
   */
  hijack?: () => { socket: Duplex; head: Buffer };
}

export interface WebSocketHandlers {
  open(ws: WebSocketLike): void;
  close(): void;
  drain?(): void;
  /** A message from the client (a copy: it may be kept). */
  message?(data: Buffer, binary: boolean): void;
}

export interface WebSocketLike {
  /** Sends a text message, or a binary one with `binary`; false when the connection is backed up (the message is queued). */
  send(data: Uint8Array | string, binary?: boolean): boolean;
  end(code?: number, reason?: string): void;
  bufferedAmount(): number;
}

/** A handler answers at once when it can, or returns a promise when it has to wait. */
export type Handler = (req: KRequest, res: KResponse) => void | Promise<void>;

/** Runs a handler: what goes wrong, at once or later, is a plain 500 (when the client is still there). */
export function runHandler(handler: Handler, req: KRequest, res: KResponse): void {
  const failed = (err: unknown) => { if (!res.aborted) res.send(500, { 'content-type': 'text/plain' }, String(err)); };
  try { handler(req, res)?.catch(failed); } catch (e) { failed(e); }
}

/** A result that is still to come (a plugin's thenable included), as opposed to one given at once. */
export function isPromise<T>(x: T | Promise<T>): x is Promise<T> {
  return typeof (x as { then?: unknown } | undefined)?.then === 'function';
}

export interface Listener {
  port: number;
  /** Resolves once the port is released (at once for most listeners; when a listening thread has ended). */
  close(): void | Promise<unknown>;
  /** Closes the connections still open too (after the drain): a read loop's thread must not keep any (replicas/loops.ts). */
  closeConnections?(): void;
}
