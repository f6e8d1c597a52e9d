// One port for clients with and without certificates. uWebSockets.js terminates TLS in C++ and
// never shows JavaScript the peer certificate, and whether a client sends one is only known in the
// middle of the handshake, so no byte-level router can choose a TLS stack for it beforehand.
// When client certificates are wanted on the main port, node:tls terminates TLS there (asking for,
// not requiring, a certificate) and hands the plaintext stream to the uWS app on a private Unix socket,
// prefixed with a PROXY protocol v2 header — the standard way a TLS-terminating front tells its
// backend who the client is. For a certificate-less connection the header carries the client's
// address. For a connection with a verified certificate it carries a per-connection handle instead:
// an address in the discard-only prefix 100::/64 (RFC 6666) whose low 64 bits are random; uWS reads
// it back with getProxiedRemoteAddress and the kernel looks the connection's certificate up by it.
// The socket lives in a fresh 0700 directory, so only this user can reach it at all.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import tls, { type PeerCertificate, type TLSSocket } from 'node:tls';
import type { Listener } from './types.js';
import { listenError } from './listen.js';

const SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
/** Text form uWS gives a handle address: the first four groups of 100::/64. */
export const HANDLE_PREFIX = '0100:0000:0000:0000:';

export interface PeerConnection {
  peer: PeerCertificate;
  remoteAddress: string;
}

/** Verified peer certificates of live front connections, by the handle address uWS reports. */
export class PeerTable {
  private byHandle = new Map<string, PeerConnection>();
  add(conn: PeerConnection): { handle: string; bytes: Buffer } {
    const bytes = Buffer.concat([Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]), randomBytes(8)]);
    const hex = bytes.toString('hex');
    const handle = hex.match(/.{4}/g)!.join(':');
    this.byHandle.set(handle, conn);
    return { handle, bytes };
  }
  get(handle: string): PeerConnection | undefined { return this.byHandle.get(handle); }
  delete(handle: string): void { this.byHandle.delete(handle); }
}

/** A PROXY v2 PROXY-command header for a TCP stream from `src` (16-byte IPv6 or a textual address). */
export function proxyHeader(src: string | Buffer, srcPort: number): Buffer {
  let family: number;
  let addr: Buffer;
  if (Buffer.isBuffer(src)) {
    family = 0x21;
    addr = src;
  } else if (net.isIPv4(src)) {
    family = 0x11;
    addr = Buffer.from(src.split('.').map(Number));
  } else if (net.isIPv4(src.replace(/^::ffff:/, ''))) {
    family = 0x11;
    addr = Buffer.from(src.replace(/^::ffff:/, '').split('.').map(Number));
  } else {
    family = 0x21;
    addr = ipv6Bytes(src);
  }
  const len = addr.length * 2 + 4;
  const head = Buffer.alloc(16);
  SIGNATURE.copy(head);
  head[12] = 0x21; // version 2, PROXY
  head[13] = family; // TCP over IPv4 or IPv6
  head.writeUInt16BE(len, 14);
  const body = Buffer.alloc(len);
  addr.copy(body, 0); // source; the destination stays zero (uWS does not read it)
  body.writeUInt16BE(srcPort & 0xffff, addr.length * 2);
  return Buffer.concat([head, body]);
}

function ipv6Bytes(a: string): Buffer {
  const out = Buffer.alloc(16);
  const [hi, lo] = a.split('::');
  const groups = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16) || 0) : []);
  const h = groups(hi);
  const l = lo === undefined ? [] : groups(lo);
  const all = lo === undefined ? h : [...h, ...new Array(8 - h.length - l.length).fill(0), ...l];
  all.slice(0, 8).forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

export interface FrontOptions {
  host: string;
  port: number;
  certFile: string;
  keyFile: string;
  /** CA bundles client certificates are requested for and verified against (as on the node:tls listener). */
  clientCAFiles: string[];
  peers: PeerTable;
}

/** A private Unix socket path for the uWS backend of a front (in a new 0700 directory). */
export function privateSocketPath(): { path: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-'));
  return { path: path.join(dir, 'uws.sock'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function listenFront(o: FrontOptions, backendPath: string): Promise<Listener> {
  const server = tls.createServer({
    cert: readFileSync(o.certFile),
    key: readFileSync(o.keyFile),
    ca: o.clientCAFiles.map((f) => readFileSync(f)),
    requestCert: true,
    rejectUnauthorized: false, // an unverified certificate is ignored, as on the reference: the request may carry a token
  }, (sock: TLSSocket) => {
    sock.setNoDelay(true);
    let handle: string | undefined;
    let src: string | Buffer = sock.remoteAddress ?? '127.0.0.1';
    if (sock.authorized) {
      const peer = sock.getPeerCertificate(true);
      if (peer && Object.keys(peer).length) {
        const h = o.peers.add({ peer, remoteAddress: sock.remoteAddress ?? '' });
        handle = h.handle;
        src = h.bytes;
      }
    }
    const back = net.connect(backendPath);
    back.setNoDelay(true);
    back.write(proxyHeader(src, sock.remotePort ?? 0));
    sock.pipe(back);
    back.pipe(sock);
    sock.on('close', () => { if (handle) o.peers.delete(handle); back.destroy(); });
    sock.on('error', () => sock.destroy());
    back.on('error', () => back.destroy());
    back.on('close', () => {
      if (sock.destroyed) return;
      // Lingering close: keep reading what the client still sends (the rest of a refused body), or
      // closing with unread data would reset the connection and lose the answer.
      sock.resume();
      sock.end();
      setTimeout(() => sock.destroy(), 5000).unref();
    });
  });
  server.on('tlsClientError', () => { /* a failed handshake is the client's problem */ });
  return new Promise((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(listenError(o.host, o.port, e)));
    server.listen(o.port, o.host, () => {
      const addr = server.address();
      resolve({ port: typeof addr === 'object' && addr ? addr.port : o.port, close: () => server.close() });
    });
  });
}
