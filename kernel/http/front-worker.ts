// The TLS front's thread (see front.ts): node:tls terminates the secure port here, asking for but
// not requiring a client certificate, and each connection is copied to the uWS app's private Unix
// socket behind a PROXY v2 header. A verified certificate is announced to the main thread under a
// fresh handle first; the header (which carries the handle) is written only once the main thread has
// it, so no request is ever served without the certificate it came with.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls, { type TLSSocket } from 'node:tls';
import v8 from 'node:v8';
import vm from 'node:vm';
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { newHandle, proxyHeader, type FrontAck, type FrontAddBackend, type FrontInit, type FrontMessage, type FrontSettle } from './front.js';
import { Http10Answer, RequestFramer } from './framer.js';

const o = workerData as FrontInit;
const port = parentPort!;
const post = (m: FrontMessage) => port.postMessage(m);
const acks = new Map<string, () => void>();
let heads = 0;
let gc: (() => void) | undefined;
/** The uWS apps connections are spread over, round robin: the writer loop's, then the read loops' (kernel/replicas/). */
const backends = [o.backendPath];
let nextBackend = 0;
port.on('message', (m: FrontAck | FrontSettle | FrontAddBackend) => {
  if (m.type === 'ack') { acks.get(m.handle)?.(); acks.delete(m.handle); }
  else if (m.type === 'backend') backends.push(m.path);
  else if (m.type === 'settle') {
    // this heap grew with the burst's connections and copies too (the main thread exposed gc)
    gc ??= (vm.runInNewContext('typeof gc === "function" ? gc : undefined') as (() => void) | undefined) ?? (() => {});
    if (m.compact) v8.setFlagsFromString('--compact-on-every-full-gc');
    try { gc(); } finally { if (m.compact) v8.setFlagsFromString('--no-compact-on-every-full-gc'); }
  }
});

/** The upgrade backend takes a connection whose first request asks for an upgrade on a CONNECT path (one check per connection). */
const upgradeRoute = o.upgrade ? new RegExp(o.upgrade.route) : undefined;
function backendFor(first: Buffer, k: number): string {
  if (!upgradeRoute) return backends[k];
  const head = first.toString('latin1', 0, first.indexOf('\r\n\r\n'));
  if (!/\r\nupgrade[ \t]*:/i.test(head)) return backends[k];
  const target = head.slice(head.indexOf(' ') + 1, head.indexOf('\r\n')).split(' ')[0];
  return upgradeRoute.test(target) ? o.upgrade!.path : backends[k];
}

function connect(sock: TLSSocket, src: string | Buffer, handle: string | undefined, backend: number): void {
  /** The loop the certificate was announced to (the connection may go to the upgrade backend instead). */
  const announced = backend;
  let back: net.Socket | undefined;
  const open = (path: string) => {
    const b = net.connect(path);
    b.setNoDelay(true);
    b.on('drain', () => { if (!held) sock.resume(); });
    // answers flow back as they come; the direct handlers cost less per chunk than pipe()
    // an HTTP/1.0 request (the connection's only one) gets its answer as Go writes it (framer.ts)
    let http10: Http10Answer | undefined;
    b.on('data', (d: Buffer) => {
      if (framer.http10First) {
        http10 ??= new Http10Answer();
        d = http10.feed(d);
        if (http10.finished) { sock.end(d); b.destroy(); return; }
      }
      if (!sock.write(d)) b.pause();
    });
    sock.on('drain', () => b.resume());
    b.on('error', () => b.destroy());
    b.on('close', () => {
      if (sock.destroyed) return;
      // Lingering close: keep reading what the client still sends (the rest of a refused body), or
      // closing with unread data would reset the connection and lose the answer.
      sock.resume();
      sock.end();
      setTimeout(() => sock.destroy(), 5000).unref();
    });
    return b;
  };
  // The PROXY header goes out with the first request head, in the same write: uWS misparses a head
  // that arrives in a later read than the PROXY header when it is over about 4 KiB. The backend is
  // chosen by that first head.
  let first: Buffer | undefined = proxyHeader(src, sock.remotePort ?? 0);
  // a connection that never completes its first head is closed as uWS closes an idle one
  const idle = setTimeout(() => { if (!back) sock.destroy(); }, 10_000);
  // each request head reaches uWS in one write (framer.ts); answers flow back as they come
  const write = (b: Buffer) => {
    if (first) { clearTimeout(idle); const to = backendFor(b, backend); if (to === o.upgrade?.path) backend = 0; back = open(to); b = Buffer.concat([first, b]); first = undefined; }
    return back!.write(b);
  };
  // A head uWS cannot parse goes to the main thread first; what follows it waits for the ack
  // (held: bytes, and the names of heads still unacknowledged, in order).
  let held: (Buffer | string)[] | undefined;
  const release = () => {
    while (held?.length) {
      const x = held[0];
      if (typeof x === 'string') { if (acks.has(x)) return; held.shift(); continue; }
      held.shift();
      write(x);
    }
    held = undefined;
    if (!sock.destroyed) sock.resume();
  };
  const framer = new RequestFramer({
    forward: (b) => { if (held) { held.push(b); return false; } return write(b); },
    refuse: (answer) => { sock.end(answer); back?.destroy(); },
    stash: (head) => {
      // a first request for the upgrade backend goes there as it came: node:http reads what uWS cannot
      if (!back && upgradeRoute && head.headers.some(([k]) => k === 'upgrade') && upgradeRoute.test(head.target.split('?')[0])) return undefined;
      const ref = `${threadId}.${++heads}`;
      (held ??= []).push(ref);
      acks.set(ref, () => { acks.delete(ref); release(); });
      post({ type: 'head', handle: ref, head, backend });
      return ref;
    },
  });
  sock.on('data', (d: Buffer) => { if (!framer.push(d)) sock.pause(); });
  sock.on('end', () => { if (back) back.end(); else sock.end(); });
  sock.on('close', () => { clearTimeout(idle); if (handle) post({ type: 'gone', handle, backend: announced }); back?.destroy(); });
}

const server = tls.createServer({
  cert: readFileSync(o.certFile),
  key: readFileSync(o.keyFile),
  ca: o.clientCAFiles.map((f) => readFileSync(f)),
  requestCert: true,
  rejectUnauthorized: false, // an unverified certificate is ignored, as on the reference: the request may carry a token
}, (sock: TLSSocket) => {
  sock.setNoDelay(true);
  sock.on('error', () => sock.destroy());
  const remoteAddress = sock.remoteAddress ?? '127.0.0.1';
  const backend = nextBackend++ % backends.length;
  const peer = sock.authorized ? sock.getPeerCertificate(true) : undefined;
  if (!peer || !Object.keys(peer).length) return connect(sock, remoteAddress, undefined, backend);
  // the client's bytes wait in the (paused) socket until the loop serving it knows the certificate
  const h = newHandle();
  acks.set(h.handle, () => { if (!sock.destroyed) connect(sock, h.bytes, h.handle, backend); else post({ type: 'gone', handle: h.handle, backend }); });
  post({ type: 'peer', handle: h.handle, peer, remoteAddress, backend });
});
server.maxConnections = o.maxConnections;
server.on('tlsClientError', () => { /* a failed handshake is the client's problem */ });
server.once('error', (e: NodeJS.ErrnoException) => post({ type: 'error', code: e.code, message: e.message }));
server.listen(o.port, o.host, () => {
  const addr = server.address();
  post({ type: 'listening', port: typeof addr === 'object' && addr ? addr.port : o.port });
});
