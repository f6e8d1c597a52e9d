// node:tls transport: the same pipeline behind Node's HTTPS server, for listeners that need what
// uWebSockets.js cannot give JavaScript — the TLS peer certificate (mutual TLS). uWS stays the
// default and the fast path; this one exists for client-certificate authentication.
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';
import type { Handler, KRequest, KResponse, Listener } from './types.js';
import { errors } from '../status.js';
import { listenError } from './listen.js';

class NodeResponse implements KResponse {
  private closeCbs: (() => void)[] = [];
  private finished = false;
  constructor(private res: ServerResponse) {
    res.on('close', () => {
      for (const cb of this.closeCbs.splice(0)) cb();
    });
  }
  get aborted() { return this.res.destroyed && !this.res.writableFinished; }
  send(code: number, headers: Record<string, string>, body: Uint8Array | string = '') {
    if (this.aborted || this.finished) return;
    this.finished = true;
    this.res.writeHead(code, { ...headers, 'content-length': Buffer.byteLength(body as string) });
    this.res.end(body);
  }
  start(code: number, headers: Record<string, string>) {
    if (this.aborted) return;
    this.res.writeHead(code, headers);
    this.res.flushHeaders();
  }
  write(chunk: Uint8Array | string) { return this.aborted || this.finished ? false : this.res.write(chunk); }
  onDrain(cb: () => void) { this.res.on('drain', cb); }
  onClose(cb: () => void) { if (this.res.destroyed) cb(); else this.closeCbs.push(cb); }
  end() {
    if (this.aborted || this.finished) return;
    this.finished = true;
    this.res.end();
  }
}

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
  // Only a certificate the TLS layer verified against the client CA is handed to authenticators.
  const peer = sock.authorized ? peerOf(sock) : undefined;
  return {
    method: (req.method ?? 'GET').toUpperCase(),
    path,
    query: url.searchParams,
    remoteAddress: sock.remoteAddress ?? '',
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
}

export function listenNodeTls(o: NodeTlsListenOptions): Promise<Listener> {
  const server = https.createServer({
    cert: readFileSync(o.certFile),
    key: readFileSync(o.keyFile),
    ca: o.clientCAFiles?.length ? o.clientCAFiles.map((f) => readFileSync(f)) : undefined,
    requestCert: !!o.clientCAFiles?.length,
    rejectUnauthorized: false, // an unverified certificate is ignored, not a handshake failure: the request may carry a token
  }, (req, res) => {
    const kres = new NodeResponse(res);
    o.handler(makeRequest(req), kres).catch((err) => kres.send(500, { 'content-type': 'text/plain' }, String(err)));
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(listenError(o.host, o.port, e)));
    server.listen(o.port, o.host, () => {
      const addr = server.address();
      resolve({ port: typeof addr === 'object' && addr ? addr.port : o.port, close: () => { server.close(); server.closeIdleConnections(); } });
    });
  });
}
