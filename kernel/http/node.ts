// node:http transport: the same pipeline behind Node's HTTP server, for what uWebSockets.js cannot
// give JavaScript — the TLS peer certificate (the --mtls-port listener) and the raw connection of a
// protocol upgrade other than its own WebSocket handling (SPDY/3.1 and WebSocket pass-through for
// pods/exec and the like: the TLS front sends such connections to the upgrade backend below). uWS
// stays the default and the fast path.
import http, { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import net, { type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';
import { runHandler, withExtraHeaders, type ExtraHeaders, type Handler, type KRequest, type KResponse, type Listener, type WebSocketHandlers } from './types.js';
import { acceptWebSocket } from './websocket.js';
import { errors } from '../contracts/status.js';
import { listenError, portFree } from './listen.js';
import { parseProxyHeader, type PeerTable } from './front.js';
import { MAX_HEAD } from './framer.js';

class NodeResponse implements KResponse {
  private closeCbs: (() => void)[] = [];
  private finished = false;
  /** node:http sends no body for a HEAD request by itself; a stream (a watch) just ends after its head. */
  private readonly headOnly: boolean;
  /** A write node:http reported as taken may still sit in the socket's stream, up to its high-water mark. */
  get heldBeyond() { return this.res.socket?.writableHighWaterMark ?? 16 * 1024; }
  constructor(private res: ServerResponse) {
    this.headOnly = res.req.method === 'HEAD';
    res.on('close', () => { for (const cb of this.closeCbs.splice(0)) cb(); });
  }
  get aborted() { return this.res.destroyed && !this.res.writableFinished; }
  send(code: number, headers: Record<string, string>, body: Uint8Array | string = '', extra?: ExtraHeaders) {
    if (this.aborted || this.finished) return;
    this.finished = true;
    this.res.writeHead(code, { ...multi(withExtraHeaders(headers, extra)), 'content-length': Buffer.byteLength(body as string) });
    this.res.end(body);
  }
  start(code: number, headers: Record<string, string>, _framing?: unknown, extra?: ExtraHeaders) {
    if (this.aborted) return;
    const h = multi(withExtraHeaders(headers, extra));
    this.res.writeHead(code, this.headOnly ? { ...h, 'transfer-encoding': 'chunked' } : h);
    if (this.headOnly) return this.end();
    this.res.flushHeaders();
  }
  write(chunk: Uint8Array | string) { return this.aborted || this.finished ? false : this.res.write(chunk); }
  startSized(code: number, headers: Record<string, string>, total: number, extra?: ExtraHeaders) {
    if (this.aborted) return;
    this.res.writeHead(code, { ...multi(withExtraHeaders(headers, extra)), 'content-length': total });
    if (total === 0) this.end();
  }
  close() { this.finished = true; this.res.destroy(); }
  onDrain(cb: () => void) { this.res.on('drain', cb); }
  onClose(cb: () => void) { if (this.res.destroyed) cb(); else this.closeCbs.push(cb); }
  end() { if (!this.aborted && !this.finished) { this.finished = true; this.res.end(); } }
}

/** Several values of one header (Warning) travel joined by "\n": node writes an array as a line each. */
function multi(headers: Record<string, string>): Record<string, string | string[]> {
  let out: Record<string, string | string[]> | undefined;
  for (const k in headers) if (headers[k].includes('\n')) (out ??= { ...headers })[k] = headers[k].split('\n');
  return out ?? headers;
}

/**
 * The answer to a request that asked for a protocol upgrade, on its raw connection: an answer that
 * refuses the upgrade is written as HTTP/1.1 and closes the connection; hijack hands the connection
 * over (the upgrade-aware proxy writes the upstream's 101 itself).
 */
class UpgradeResponse implements KResponse {
  private done = false;
  private closeCbs: (() => void)[] = [];
  constructor(private socket: Duplex, private head: Buffer) {
    socket.on('close', () => { for (const cb of this.closeCbs.splice(0)) cb(); });
    socket.on('error', () => socket.destroy());
  }
  get aborted() { return this.socket.destroyed; }
  private writeHead(code: number, headers: Record<string, string>, length?: number) {
    let out = `HTTP/1.1 ${code} ${STATUS_CODES[code] ?? ''}\r\n`;
    for (const k in headers) for (const v of headers[k].split('\n')) out += `${k}: ${v}\r\n`;
    if (length !== undefined) out += `Content-Length: ${length}\r\n`;
    this.socket.write(`${out}Connection: close\r\n\r\n`);
  }
  send(code: number, headers: Record<string, string>, body: Uint8Array | string = '', extra?: ExtraHeaders) {
    if (this.aborted || this.done) return;
    this.done = true;
    const b = typeof body === 'string' ? Buffer.from(body) : body;
    this.writeHead(code, withExtraHeaders(headers, extra), b.length);
    this.socket.end(b);
  }
  start(code: number, headers: Record<string, string>, _framing?: unknown, extra?: ExtraHeaders) {
    if (this.aborted || this.done) return;
    this.writeHead(code, withExtraHeaders(headers, extra));
  }
  startSized(code: number, headers: Record<string, string>, total: number, extra?: ExtraHeaders) {
    if (this.aborted || this.done) return;
    this.writeHead(code, withExtraHeaders(headers, extra), total);
    this.sizedLeft = total;
    if (total === 0) this.end();
  }
  /** Bytes a sized answer still has to write: the connection ends with the last one. */
  private sizedLeft: number | undefined;
  close() { this.done = true; this.socket.destroy(); }
  write(chunk: Uint8Array | string) {
    if (this.aborted || this.done) return false;
    const ok = this.socket.write(chunk);
    if (this.sizedLeft !== undefined && (this.sizedLeft -= Buffer.byteLength(chunk as string)) <= 0) this.end();
    return ok;
  }
  onDrain(cb: () => void) { this.socket.on('drain', cb); }
  onClose(cb: () => void) { if (this.socket.destroyed) cb(); else this.closeCbs.push(cb); }
  end() { if (!this.aborted && !this.done) { this.done = true; this.socket.end(); } }
  hijack = () => { this.done = true; return { socket: this.socket, head: this.head }; };
  upgrade?: (handlers: WebSocketHandlers, protocol?: string) => boolean;
  /** Hands the connection to a protocol that answers the upgrade itself. */
  takeOver(run: (socket: Duplex, head: Buffer) => boolean): boolean {
    if (this.aborted || this.done) return false;
    this.done = true;
    return run(this.socket, this.head);
  }
}

/** Who a connection that came through the TLS front is (from its PROXY header): address and verified certificate. */
const fronted = new WeakMap<Socket, { remoteAddress: string; peer?: PeerCertificate }>();

/** A connection's peer certificate does not change: read (and parse) it once per connection, not per request. */
const peers = new WeakMap<TLSSocket, PeerCertificate>();
function peerOf(sock: TLSSocket): PeerCertificate {
  let p = peers.get(sock);
  if (!p) peers.set(sock, (p = sock.getPeerCertificate(true)));
  return p;
}

function makeRequest(req: IncomingMessage): KRequest {
  const url = new URL(req.url ?? '/', 'https://localhost');
  let path = url.pathname;
  try { path = decodeURIComponent(path); } catch { /* keep raw */ }
  const sock = req.socket as TLSSocket;
  const front = fronted.get(sock);
  // Only a certificate the TLS layer verified against the client CA is handed to authenticators.
  const peer = front ? front.peer : sock.authorized ? peerOf(sock) : undefined;
  return {
    method: (req.method ?? 'GET').toUpperCase(),
    path,
    query: url.searchParams,
    remoteAddress: front ? front.remoteAddress : sock.remoteAddress ?? '',
    peerCertificate: peer && Object.keys(peer).length ? peer : undefined,
    header: (name) => req.headersDistinct[name.toLowerCase()]?.[0],
    headerValues: (name) => req.headersDistinct[name.toLowerCase()] ?? [],
    headerNames: () => Object.keys(req.headersDistinct),
    body(limit: number) {
      return new Promise((resolve, reject) => {
        const declared = Number(req.headers['content-length'] ?? 0);
        if (declared > limit) {
          req.resume();
          return reject(errors.tooLarge(`Request entity too large: limit is ${limit}`));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        req.on('data', (c: Buffer) => {
          size += c.length;
          if (size > limit) {
            req.removeAllListeners('data');
            req.resume();
            reject(errors.tooLarge(`Request entity too large: limit is ${limit}`));
          } else chunks.push(c);
        });
        req.on('end', () => resolve(Buffer.concat(chunks)));
        req.on('error', reject);
      });
    },
  };
}

export interface NodeTlsListenOptions {
  host: string;
  port: number;
  certFile: string;
  keyFile: string;
  /**
   * CA bundles client certificates are verified against, combined into one trust list: a certificate
   * that chains to any of them is exposed as `peerCertificate`. This is only a first filter; each
   * authenticator verifies the chain again against its own CA (x509 against --client-ca-file, the
   * front proxy against --requestheader-client-ca-file). Clients without a certificate are still served.
   */
  clientCAFiles?: string[];
  handler: Handler;
  maxConnections: number; // taken at once; past it a new one is closed as it arrives (ops/connections.ts)
  /** The port shared with the read loops' listeners (SO_REUSEPORT; uws.ts does the same): opened by the writer, joined by a loop. */
  sharedPort?: 'open' | 'join';
}

/** Serves requests and upgrade requests of a node:http(s) server through the pipeline. */
function serveOn(server: http.Server, handler: Handler): void {
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const kres = new NodeResponse(res);
    runHandler(handler, makeRequest(req), kres);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const kres = new UpgradeResponse(socket, head);
    // Served here (a watch over WebSocket); proxied upgrades take the socket with hijack instead.
    if (String(req.headers.upgrade).toLowerCase() === 'websocket') kres.upgrade = (handlers, protocol) => kres.takeOver((s, h) => acceptWebSocket(s, h, req.headers, handlers, protocol));
    runHandler(handler, makeRequest(req), kres);
  });
  server.keepAliveTimeout = 60_000;
}

/**
 * The TLS front's second backend (front.ts): plain HTTP on a private Unix socket for connections
 * whose first request asks for a protocol upgrade. Each connection starts with the front's PROXY v2
 * header, read here before the HTTP parser sees the rest: it carries the client's address or the
 * handle of its verified certificate, looked up in the same PeerTable as the uWS backend uses.
 */
export function listenUpgradeBackend(o: { path: string; peers: PeerTable; handler: Handler }): Promise<Listener> {
  // the front has checked the head against Go's limit already (framer.ts); node's own is 16 KiB
  const server = http.createServer({ maxHeaderSize: MAX_HEAD });
  serveOn(server, o.handler);
  const raw = net.createServer((sock) => {
    let buf: Buffer = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      const p = parseProxyHeader(buf);
      if (p === 'short') return;
      sock.off('data', onData);
      if (!p) { sock.destroy(); return; }
      const conn = p.handle ? o.peers.get(p.handle) : undefined;
      fronted.set(sock, conn ? { remoteAddress: conn.remoteAddress, peer: conn.peer } : { remoteAddress: p.handle ? '' : p.address });
      // the HTTP parser reads from the socket's handle from here on: the bytes already read go in first
      server.emit('connection', sock);
      if (buf.length > p.length) sock.emit('data', buf.subarray(p.length));
    };
    sock.on('data', onData);
    sock.on('error', () => sock.destroy());
  });
  return new Promise((resolve, reject) => {
    raw.once('error', reject);
    raw.listen(o.path, () => resolve({ port: 0, close: () => { raw.close(); server.closeAllConnections(); } }));
  });
}

/** Whether listeners of this Node.js can share a port (the `reusePort` listen option: Node 22.12, 23.1 and later). */
export const nodeSharesPort = ((v) => v[0] > 22 || (v[0] === 22 && v[1] >= 12))(process.versions.node.split('.').map(Number));

export function listenNodeTls(o: NodeTlsListenOptions): Promise<Listener> {
  const server = https.createServer({
    maxHeaderSize: MAX_HEAD, // Go's limit, as on the default port (framer.ts); node's own is 16 KiB
    cert: readFileSync(o.certFile),
    key: readFileSync(o.keyFile),
    ca: o.clientCAFiles?.length ? o.clientCAFiles.map((f) => readFileSync(f)) : undefined,
    requestCert: !!o.clientCAFiles?.length,
    rejectUnauthorized: false, // an unverified certificate is ignored, not a handshake failure: the request may carry a token
  });
  serveOn(server, o.handler);
  server.maxConnections = o.maxConnections;
  return (o.sharedPort === 'open' ? portFree(o.host, o.port) : Promise.resolve(o.port)).then((port) => new Promise((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(listenError(o.host, port, e)));
    server.listen({ port, host: o.host, reusePort: !!o.sharedPort }, () => {
      const addr = server.address();
      resolve({ port: typeof addr === 'object' && addr ? addr.port : port, close: () => { server.close(); server.closeIdleConnections(); } });
    });
  }));
}
