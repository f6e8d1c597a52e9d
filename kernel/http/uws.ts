// uWebSockets.js transport: the fast path for HTTP and TLS.
// We load the native binary directly instead of the package's wrapper, because the wrapper silently
// falls back to a slow pure-JavaScript implementation when the binary does not load; here that is an error.
import { createRequire } from 'node:module';
import { STATUS_CODES } from 'node:http';
import type { PeerCertificate } from 'node:tls';
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket, WebSocket } from 'uWebSockets.js';
import { runHandler, withExtraHeaders, type BodySink, type ExtraHeaders, type Handler, type KRequest, type KResponse, type Listener, type StreamFraming, type WebSocketHandlers } from './types.js';
import { errors } from '../contracts/status.js';
import { portFree, probeListenFailure } from './listen.js';
import { FRONT_HELD_BYTES, HANDLE_PREFIX, type PeerTable } from './front.js';
import { HEAD_REF, type FrontHead } from './framer.js';

type Uws = typeof import('uWebSockets.js');
const require = createRequire(import.meta.url);

export const uwsBinary = `uWebSockets.js/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;

/** Why the native binary does not load on this Node.js and libc (undefined: it loads). */
export function uwsLoadError(): string | undefined {
  try { uws(); return undefined; } catch (e) { return (e as Error).message; }
}

let loaded: Uws | undefined;
export function uws(): Uws {
  if (loaded) return loaded;
  try {
    loaded = require(uwsBinary) as Uws;
  } catch (e) {
    throw new Error(`the native uWebSockets.js binary ${uwsBinary} does not load on this system (${(e as Error).message.split('\n')[0]}); refusing the slow JavaScript fallback`);
  }
  return loaded;
}

/** Largest write made inside one cork(): uWS's cork buffer is 16 KiB, less room for the chunk header. */
const CORK_PIECE = 16 * 1024 - 64;
const ZERO = new Uint8Array(1);

/** Go's status texts where node's differ (the reference's server writes Go's). */
const GO_STATUS_TEXT: Record<number, string> = { 413: 'Request Entity Too Large', 414: 'Request URI Too Long', 416: 'Requested Range Not Satisfiable', 418: "I'm a teapot" };
const statusLine = (code: number) => `${code} ${GO_STATUS_TEXT[code] ?? STATUS_CODES[code] ?? ''}`;

class UwsResponse implements KResponse {
  aborted = false;
  private done = false;
  /** uWS's response object is gone (or going): nothing may be read from it any more. */
  get finished(): boolean { return this.aborted || this.done; }
  private drainCb: (() => void) | undefined;
  private congested = false;
  private writableSet = false;
  private closeCbs: (() => void)[] = [];
  upgrade?: (handlers: WebSocketHandlers, protocol?: string) => boolean;
  /**
   * The answer to a HEAD request: its head only, whatever the handler writes. uWS sends what it is
   * given, and body bytes after a HEAD answer corrupt the next answer on a keep-alive connection.
   */
  headOnly = false;
  /** Set by makeRequest while a request body is still arriving: the answer waits for it (below). */
  bodyPending?: { discard(): void; then: (() => void) | undefined };

  /** What a write reported as taken may still leave in uWS's buffer (one cork piece), and, behind the front, the front's buffers. */
  readonly heldBeyond: number;

  constructor(private res: HttpResponse, frontHeld = 0) {
    this.heldBeyond = CORK_PIECE + frontHeld;
  }

  /** uWS has finished with the response: nothing is pending, it needs no abort handler. */
  ended = false;

  /** uWS wants an abort handler on a response its handler left unfinished; one answered at once (most GETs) needs none. */
  watchAborts(): void {
    this.res.onAborted(() => {
      this.aborted = true;
      for (const cb of this.closeCbs.splice(0)) cb();
    });
  }

  private head(code: number, headers: Record<string, string>, extra: ExtraHeaders) {
    this.res.writeStatus(statusLine(code));
    // as if merged ({ ...headers, ...extra }): extra's value in place of a same-named header, its others after
    for (const k in headers) this.header(k, extra !== undefined && Object.hasOwn(extra, k) ? extra[k] : headers[k]);
    if (extra !== undefined) for (const k in extra) if (!Object.hasOwn(headers, k)) this.header(k, extra[k]);
  }

  private header(k: string, v: string) {
    // several values of one header (Warning) travel joined by "\n": a header line each
    if (v.includes('\n')) for (const line of v.split('\n')) this.res.writeHeader(k, line);
    else this.res.writeHeader(k, v);
  }

  send(code: number, headers: Record<string, string>, body: Uint8Array | string = '', extra?: ExtraHeaders): void {
    if (this.aborted || this.done) return;
    const pending = this.bodyPending;
    if (pending) {
      // An answer given before the body has arrived (401, 403, 413) waits for the rest of the body,
      // read and dropped, for at most 5 s: uWS closes a `Connection: close` connection as soon as it
      // has answered, and closing with unread input resets the connection, losing the answer.
      this.bodyPending = undefined;
      pending.discard();
      const timer = setTimeout(() => pending.then?.(), 5000);
      pending.then = () => { clearTimeout(timer); pending.then = undefined; this.send(code, headers, body, extra); };
      return;
    }
    this.done = true;
    const buf = typeof body === 'string' ? Buffer.from(body) : body;
    if (this.headOnly) return this.endHead(code, headers, extra, buf.length);
    this.res.cork(() => {
      this.head(code, headers, extra);
      if (buf.length <= CORK_PIECE) {
        this.res.end(buf);
        this.ended = true;
        return;
      }
      // Larger bodies go out as the socket accepts them, not copied whole into the send buffer (and
      // not through end() inside cork(), which loses what does not fit the cork buffer when the
      // socket is backed up, as write() does).
      const total = buf.length;
      const start = this.res.getWriteOffset();
      const [ok, finished] = this.res.tryEnd(buf, total);
      this.ended = finished;
      if (!ok && !finished) {
        this.res.onWritable((offset) => {
          const [ok2] = this.res.tryEnd(buf.subarray(offset - start), total);
          return ok2;
        });
      }
    });
  }

  /** A HEAD answer: the head, with the length a GET would have had when known, and the end. */
  private endHead(code: number, headers: Record<string, string>, extra: ExtraHeaders, length?: number): void {
    this.done = true;
    this.res.cork(() => {
      this.head(code, headers, extra);
      // written as a header: uWS's own reported length leaves it waiting for that many body bytes
      if (length !== undefined) this.res.writeHeader('content-length', String(length));
      this.res.endWithoutBody();
      this.ended = true;
    });
    // a stream's producer (a watch, a sized list) stops: nothing it writes goes out
    for (const cb of this.closeCbs.splice(0)) cb();
  }

  start(code: number, headers: Record<string, string>, framing?: StreamFraming, extra?: ExtraHeaders): void {
    if (this.aborted) return;
    // a stream's head says chunked, as a GET's would (Go's server says so too): without a length or
    // that, clients do not reuse the connection
    if (this.headOnly) return this.endHead(code, { ...withExtraHeaders(headers, extra), 'transfer-encoding': 'chunked' }, undefined);
    // uWS sends the head only with the first body bytes, and a chunk's closing CRLF only with the
    // next chunk: readers that wait for a whole chunk (Python's urllib3) would see each event one
    // write late. So a stream always has one byte written ahead, a chunk of its own, that its
    // readers skip: a newline between JSON events; for Protobuf frames, the next frame's first
    // byte (always 0 below 16 MiB), which that frame's write then leaves out. Other streams (a
    // proxied answer) get a leading newline when they are JSON, nothing otherwise.
    this.framing = framing;
    this.filler = framing === 'frames' ? ZERO : framing === 'lines' || /json/i.test(headers['content-type'] ?? '') ? '\n' : '';
    this.res.cork(() => { this.head(code, headers, extra); this.res.write(this.filler); });
  }
  /** What a write to send the head or to drain carries: a newline for JSON streams, nothing for binary ones. */
  private filler: string | Uint8Array = '\n';
  private framing: StreamFraming | undefined;

  write(chunk: Uint8Array | string): boolean {
    if (this.aborted || this.done) return false;
    if (this.sized) return this.writePiece(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    let ok = true;
    let data = typeof chunk === 'string' && chunk.length > CORK_PIECE / 4 ? Buffer.from(chunk) : chunk;
    if (this.framing === 'frames') {
      const b = typeof data === 'string' ? Buffer.from(data) : data;
      // The byte written ahead was this frame's first: a frame of 16 MiB or more cannot follow it.
      if (b[0] !== 0) { this.close(); return false; }
      data = b.subarray(1);
    }
    // A small write and its byte ahead share one cork: one send to the socket, not two (behind the
    // front that is one read and one TLS record per event batch instead of two, on every watcher).
    // Both fit the cork buffer: CORK_PIECE leaves room for two chunk headers and the byte.
    if (this.framing && data.length <= CORK_PIECE - 16) {
      this.res.cork(() => { ok = this.res.write(data); ok = this.res.write(this.filler) && ok; });
      if (!ok) this.backedUp();
      return ok;
    }
    if (typeof data === 'string' || data.length <= CORK_PIECE) this.res.cork(() => { ok = this.res.write(data); });
    else {
      // uWS 20.30 loses data written inside cork() when it does not fit the rest of the 16 KiB cork
      // buffer and the socket is backed up (measured on the front's Unix socket: the bytes of a
      // large write vanish, the stream goes on after them). Each piece fits, so nothing is lost.
      for (let at = 0; at < data.length; at += CORK_PIECE) {
        const piece = data.subarray(at, at + CORK_PIECE);
        this.res.cork(() => { ok = this.res.write(piece) && ok; });
      }
    }
    // The byte ahead (above) completes this write's chunk on the wire.
    if (this.framing) this.res.cork(() => { ok = this.res.write(this.filler) && ok; });
    if (!ok) this.backedUp();
    return ok;
  }

  private backedUp(): void {
    if (this.congested) return;
    this.congested = true;
    // uWS stops draining a response's buffer by itself once an onWritable handler is registered,
    // so the handler must write to drain: it writes a newline, which newline-delimited JSON
    // streams ignore. It does so on every writable event, not only while we know of a backlog: a
    // corked write can report success and still leave bytes buffered when the cork is released.
    this.writable();
  }

  /** One handler for both kinds of streams (uWS keeps one per response). */
  private writable(): void {
    if (this.writableSet) return;
    this.writableSet = true;
    this.res.onWritable((offset) => {
      if (this.aborted || this.done) return true;
      const sized = this.sized;
      if (sized) {
        if (!sized.piece) return true;
        const [ok, finished] = this.res.tryEnd(sized.piece.subarray(offset - sized.pieceAt), sized.total);
        if (finished) this.done = true;
        if (!ok) return false;
        sized.piece = undefined;
        this.drainCb?.();
        return true;
      }
      // A Protobuf stream's byte ahead is written once per frame, never here.
      const drained = this.res.write(this.framing === 'frames' ? '' : this.filler);
      if (drained && this.congested) {
        this.congested = false;
        this.drainCb?.();
      }
      return drained;
    });
  }

  /** A sized answer (startSized) in progress: its length, and the piece the socket has not taken yet. */
  private sized: { total: number; piece?: Uint8Array; pieceAt: number } | undefined;

  startSized(code: number, headers: Record<string, string>, total: number, extra?: ExtraHeaders): void {
    if (this.aborted || this.done) return;
    if (this.headOnly) return this.endHead(code, headers, extra, total);
    this.sized = { total, pieceAt: 0 };
    this.res.cork(() => this.head(code, headers, extra));
    if (total === 0) this.writePiece(new Uint8Array(0));
  }

  private writePiece(piece: Uint8Array): boolean {
    const sized = this.sized!;
    if (sized.piece) return false;
    let ok = true;
    this.res.cork(() => {
      const at = this.res.getWriteOffset();
      const [written, finished] = this.res.tryEnd(piece, sized.total);
      ok = written;
      if (finished) this.done = this.ended = true;
      else if (!written) { sized.piece = piece; sized.pieceAt = at; }
    });
    if (!ok) this.writable();
    return ok;
  }

  close(): void {
    if (this.aborted) return;
    this.done = this.ended = true;
    this.res.close();
  }

  /** Called each time a backed-up stream has drained. */
  onDrain(cb: () => void): void { this.drainCb = cb; }
  onClose(cb: () => void): void { if (this.aborted) cb(); else this.closeCbs.push(cb); }

  end(): void {
    if (this.aborted || this.done) return;
    this.done = true;
    this.res.cork(() => this.res.end());
    this.ended = true;
    for (const cb of this.closeCbs.splice(0)) cb();
  }
}

function stashedHead(req: HttpRequest, peers: PeerTable): FrontHead | undefined {
  const ref = req.getHeader(HEAD_REF);
  return ref ? peers.takeHead(ref) ?? { method: 'GET', target: '/', headers: [], http10: false } : undefined;
}

/** A handle address of the front (HANDLE_PREFIX): 100::/64. */
const isHandle = (a: Uint8Array) => a.length === 16 && a[0] === 1 && a[1] === 0 && a[2] === 0 && a[3] === 0 && a[4] === 0 && a[5] === 0 && a[6] === 0 && a[7] === 0;

/** The body of a request that has one, collected (or streamed) as uWS hands it over. */
class BodyState {
  chunks: Buffer[] = [];
  size = 0;
  complete = false;
  waiting: (() => void) | undefined;
  overLimit = false;
  limit = Infinity;
  discard = false;
  /** Set by streamBody: chunks go there as they arrive instead of being collected. */
  sink: BodySink | undefined;
  paused = false;

  constructor(res: HttpResponse, kres: UwsResponse) {
    const pending: NonNullable<UwsResponse['bodyPending']> = { discard: () => { this.discard = true; this.chunks.length = 0; }, then: undefined };
    kres.bodyPending = pending;
    res.onData((ab, isLast) => {
      if (isLast && kres.bodyPending === pending) kres.bodyPending = undefined;
      if (this.discard) {
        if (isLast) pending.then?.();
        return;
      }
      const sink = this.sink;
      if (sink) {
        if (ab.byteLength && !sink.data(Buffer.from(ab.slice(0))) && !isLast) { res.pause(); this.paused = true; }
        if (isLast) sink.end();
        return;
      }
      if (!this.overLimit) {
        this.size += ab.byteLength;
        if (this.size > this.limit) {
          this.overLimit = true;
          this.chunks.length = 0;
        } else {
          this.chunks.push(Buffer.from(ab.slice(0)));
        }
      }
      if (isLast) {
        this.complete = true;
        this.waiting?.();
      }
    });
  }
}

/**
 * A request as uWS gave it: uWS's request object lives only during the callback, so method, path,
 * query and headers are copied at once. The client's address is read from the response object when
 * first asked for (a fresh ArrayBuffer each time: most requests never need it); that object is gone
 * once the answer is complete, so a reader that needs the address later reads it before.
 */
class UwsRequest implements KRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  /** A header's value, or its values when it came more than once (one array less per header on most requests). */
  private readonly headers = new Map<string, string | string[]>();
  private readonly bodyState: BodyState | undefined;
  private addr: string | undefined;
  private peer: PeerCertificate | undefined;
  private peerLooked = false;

  constructor(private readonly res: HttpResponse, req: HttpRequest, private readonly kres: UwsResponse, private readonly peers: PeerTable | undefined) {
    // Behind the front, a request uWS could not have parsed comes as a stand-in naming the head the
    // front validated (framer.ts); the front never forwards a client's own HEAD_REF header.
    const stashed = peers ? stashedHead(req, peers) : undefined;
    let rawUrl: string;
    if (stashed) {
      this.method = stashed.method.toUpperCase();
      const q = stashed.target.indexOf('?');
      rawUrl = q < 0 ? stashed.target : stashed.target.slice(0, q);
      this.query = new URLSearchParams(q < 0 ? '' : stashed.target.slice(q + 1));
      for (const [k, v] of stashed.headers) this.add(k, v);
    } else {
      this.method = req.getCaseSensitiveMethod().toUpperCase();
      rawUrl = req.getUrl();
      this.query = new URLSearchParams(req.getQuery() ?? '');
      req.forEach((k, v) => this.add(k, v));
    }
    kres.headOnly = this.method === 'HEAD';
    let path: string;
    if (!rawUrl.includes('%')) path = rawUrl;
    else try { path = decodeURIComponent(rawUrl); } catch { path = rawUrl; }
    this.path = path;
    const m = this.method;
    // Start collecting the body right away (uWS requires onData to be set synchronously).
    const hasBody = m !== 'GET' && m !== 'HEAD' && m !== 'DELETE' || (this.header('content-length') ?? '0') !== '0' || this.headers.has('transfer-encoding');
    this.bodyState = hasBody ? new BodyState(res, kres) : undefined;
  }

  private add(k: string, v: string): void {
    const had = this.headers.get(k);
    if (had === undefined) this.headers.set(k, v);
    else if (typeof had === 'string') this.headers.set(k, [had, v]);
    else had.push(v);
  }

  get remoteAddress(): string {
    if (this.addr === undefined) this.readPeer();
    return this.addr ?? '';
  }

  /**
   * Only the front sees client certificates: without it there is none to look up. Behind it, the
   * raw address (fewer bytes than its text) says whether it is a handle before any text is made.
   */
  get peerCertificate(): PeerCertificate | undefined {
    if (this.addr === undefined && !this.peerLooked && this.peers && !this.kres.finished) {
      this.peerLooked = true;
      if (isHandle(new Uint8Array(this.res.getProxiedRemoteAddress()))) this.readPeer();
    }
    return this.peer;
  }

  /** Behind the TLS front the client's address (or the handle of its verified certificate) comes in the PROXY header (front.ts). */
  private readPeer(): void {
    if (this.kres.finished) return;
    const res = this.res;
    if (!this.peers) { this.addr = Buffer.from(res.getRemoteAddressAsText()).toString(); return; }
    const addr = Buffer.from(res.getProxiedRemoteAddressAsText()).toString();
    if (!addr.startsWith(HANDLE_PREFIX)) { this.addr = addr; return; }
    const conn = this.peers.get(addr);
    this.addr = conn?.remoteAddress ?? '';
    this.peer = conn?.peer;
  }

  header(name: string): string | undefined {
    const v = this.headers.get(name.toLowerCase());
    return typeof v === 'string' ? v : v?.[0];
  }

  headerValues(name: string): string[] {
    const v = this.headers.get(name.toLowerCase());
    return v === undefined ? [] : typeof v === 'string' ? [v] : v;
  }

  headerNames(): string[] { return [...this.headers.keys()]; }

  body(max: number): Promise<Buffer> {
    const b = this.bodyState;
    if (!b) return Promise.resolve(Buffer.alloc(0));
    b.limit = max;
    const declared = Number(this.header('content-length') ?? '0');
    if (declared > max || b.size > max) b.overLimit = true;
    const finish = (): Promise<Buffer> => (b.overLimit ? Promise.reject(errors.tooLarge(`Request entity too large: limit is ${max}`)) : Promise.resolve(Buffer.concat(b.chunks)));
    if (b.complete || b.overLimit) return finish();
    return new Promise<void>((resolve) => { b.waiting = resolve; this.kres.onClose(() => resolve()); }).then(finish);
  }

  streamBody(s: BodySink): { resume(): void } {
    // What arrived before is handed over first; then chunks as they come, the client paused
    // (uWS stops reading its socket) whenever the sink is backed up, until it calls resume().
    const b = this.bodyState;
    if (!b) { s.end(); return { resume: () => {} }; }
    const before = Buffer.concat(b.chunks);
    b.chunks.length = 0;
    if (before.length) s.data(before);
    if (b.complete) s.end();
    else b.sink = s;
    // only a paused client is resumed (resuming one that is not paused disturbs uWS's keep-alive)
    return { resume: () => { if (b.paused && !this.kres.aborted) { b.paused = false; this.res.resume(); } } };
  }
}

export interface UwsListenOptions {
  host: string;
  port: number;
  tls?: { certFile: string; keyFile: string };
  /** Serve plain HTTP on this Unix socket behind the TLS front, which speaks PROXY v2 (host, port and tls are then unused). */
  behindFront?: { path: string; peers: PeerTable };
  /** Listen with SO_REUSEPORT, as the read loops' apps do on one port: the first opens it (no other server may hold it), the others join. */
  sharedPort?: 'open' | 'join';
  handler: Handler;
}

export function listenUws(opts: UwsListenOptions): Promise<Listener> {
  const lib = uws();
  const front = opts.behindFront;
  const app: TemplatedApp = opts.tls && !front ? lib.SSLApp({ cert_file_name: opts.tls.certFile, key_file_name: opts.tls.keyFile }) : lib.App();
  const serve = (res: HttpResponse, req: HttpRequest, wsContext?: unknown) => {
    const kres = new UwsResponse(res, front ? FRONT_HELD_BYTES : 0);
    const kreq = new UwsRequest(res, req, kres, front?.peers);
    if (wsContext) {
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      kres.upgrade = (handlers, chosen) => {
        if (kres.aborted) return false;
        res.cork(() => res.upgrade({ handlers }, key, chosen ?? protocol.split(',')[0]?.trim() ?? '', extensions, wsContext as never));
        kres.ended = true;
        return true;
      };
    }
    runHandler(opts.handler, kreq, kres);
    if (!kres.ended) kres.watchAborts();
  };
  app.any('/*', (res, req) => serve(res, req));
  app.ws<{ handlers: WebSocketHandlers }>('/*', {
    maxPayloadLength: 64 * 1024,
    maxBackpressure: 16 * 1024 * 1024,
    idleTimeout: 0,
    upgrade: (res, req, context) => serve(res, req, context),
    open: (ws: WebSocket<{ handlers: WebSocketHandlers }>) => {
      const h = ws.getUserData().handlers;
      h.open({
        send: (d, binary) => ws.send(d, !!binary) === 1,
        end: (code, reason) => ws.end(code, reason),
        bufferedAmount: () => ws.getBufferedAmount(),
      });
    },
    drain: (ws) => ws.getUserData().handlers.drain?.(),
    message: (ws, msg, isBinary) => ws.getUserData().handlers.message?.(Buffer.from(msg.slice(0)), isBinary),
    close: (ws) => ws.getUserData().handlers.close(),
  });
  if (front) {
    return new Promise((resolve, reject) => {
      app.listen_unix((sock) => (sock ? resolve({ port: 0, close: () => lib.us_listen_socket_close(sock), closeConnections: () => (app as unknown as { close(): void }).close() }) : reject(new Error(`cannot listen on ${front.path}`))), front.path);
    });
  }
  return (opts.sharedPort === 'open' ? portFree(opts.host, opts.port) : Promise.resolve(opts.port)).then((port) => new Promise((resolve, reject) => {
    // LIBUS_LISTEN_EXCLUSIVE_PORT: without it uWS sets SO_REUSEPORT and a second server would share the
    // port (and split clients between two stores) instead of failing.
    const listen = app.listen as unknown as (host: string, port: number, options: number, cb: (s: us_listen_socket | false) => void) => void;
    listen.call(app, opts.host, port, opts.sharedPort ? 0 : 1, (sock: us_listen_socket | false) => {
      // app.close (not in uWS's typings) closes every socket of the app, the kept-alive idle ones included
      if (sock) return resolve({ port: lib.us_socket_local_port(sock), close: () => lib.us_listen_socket_close(sock), closeConnections: () => (app as unknown as { close(): void }).close() });
      void probeListenFailure(opts.host, opts.port).then(reject);
    });
  }));
}
