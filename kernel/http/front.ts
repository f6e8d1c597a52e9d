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
import type { PeerCertificate } from 'node:tls';
import { Worker } from 'node:worker_threads';
import type { Listener } from './types.js';
import { listenError } from './listen.js';
import type { FrontHead } from './framer.js';

const SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
/**
 * The most the front holds for one connection whose client stopped reading: it stops reading from
 * uWS once the TLS socket refuses a write (past its 16 KiB high-water mark), so it holds what the
 * TLS socket had queued, the read that was refused (up to 64 KiB) and a TLS record. The rest waits
 * in uWS, where the output budget counts it (kernel/watch/outbudget.ts).
 */
export const FRONT_HELD_BYTES = 16 * 1024 + 64 * 1024 + 17 * 1024;

/** Text form uWS gives a handle address: the first four groups of 100::/64. */
export const HANDLE_PREFIX = '0100:0000:0000:0000:';

export interface PeerConnection {
  peer: PeerCertificate;
  remoteAddress: string;
}

/**
 * Verified peer certificates of live front connections, by the handle address uWS reports; and
 * request heads the front validated but uWS cannot parse (framer.ts), by the name their stand-in
 * head carries.
 */
export class PeerTable {
  private byHandle = new Map<string, PeerConnection>();
  private heads = new Map<string, { head: FrontHead; at: number }>();
  set(handle: string, conn: PeerConnection): void { this.byHandle.set(handle, conn); }
  get(handle: string): PeerConnection | undefined { return this.byHandle.get(handle); }
  delete(handle: string): void { this.byHandle.delete(handle); }
  putHead(ref: string, head: FrontHead): void {
    const now = Date.now();
    // a head whose connection died before uWS read it is never taken: drop such leftovers after a minute
    if (this.heads.size > 64) for (const [k, e] of this.heads) if (now - e.at > 60_000) this.heads.delete(k);
    this.heads.set(ref, { head, at: now });
  }
  takeHead(ref: string): FrontHead | undefined {
    const e = this.heads.get(ref);
    this.heads.delete(ref);
    return e?.head;
  }
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

/**
 * Reads a PROXY v2 header as proxyHeader writes it: 'short' while incomplete, undefined when the
 * bytes are not one; else its length and the source, as a handle (100::/64, printed as uWS prints
 * it) or as an address.
 */
export function parseProxyHeader(b: Buffer): 'short' | undefined | { length: number; address: string; handle?: string } {
  if (b.length < 16) return SIGNATURE.subarray(0, b.length).equals(b) ? 'short' : undefined;
  if (!b.subarray(0, 12).equals(SIGNATURE) || b[12] !== 0x21) return undefined;
  const length = 16 + b.readUInt16BE(14);
  if (b.length < length) return 'short';
  if (b[13] === 0x11 && length >= 16 + 12) return { length, address: [...b.subarray(16, 20)].join('.') };
  if (b[13] === 0x21 && length >= 16 + 36) {
    const a = b.subarray(16, 32);
    const groups = a.toString('hex').match(/.{4}/g)!;
    if (a[0] === 1 && a.subarray(1, 8).every((x) => x === 0)) return { length, address: '', handle: groups.join(':') };
    return { length, address: groups.map((g) => g.replace(/^0+(?=.)/, '')).join(':') };
  }
  return undefined;
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
  maxConnections: number; // taken at once; past it a new one is closed as it arrives (ops/connections.ts)
  /** To the read loop given the connection (backend > 0), which must have it before the ack; `peers` keeps every certificate (the upgrade backend's). */
  route?: (m: FrontConnMessage) => Promise<void>;
}

/** Private Unix socket paths for the backends of a front (in a new 0700 directory): uWS, and the upgrade backend. */
export function privateSocketPath(): { path: string; upgradePath: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-'));
  return { path: path.join(dir, 'uws.sock'), upgradePath: path.join(dir, 'upgrade.sock'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Messages of the front's thread (front-worker.ts) to the main thread, and the answer it waits for. */
export type FrontMessage =
  | { type: 'listening'; port: number }
  | { type: 'error'; code?: string; message: string }
  | FrontConnMessage;
/** About one connection; `backend`: the uWS app it was given to (0: the writer loop's, k: read loop k's, kernel/replicas/). */
export type FrontConnMessage =
  | { type: 'peer'; handle: string; peer: PeerCertificate; remoteAddress: string; backend: number }
  | { type: 'gone'; handle: string; backend: number }
  | { type: 'head'; handle: string; head: FrontHead; backend: number };
export interface FrontAck { type: 'ack'; handle: string }
/** Another uWS app (a read loop's) the front spreads connections over, round robin. */
export interface FrontAddBackend { type: 'backend'; path: string }
/** The main thread's collections after a burst of writes (ops/settle.ts), run on the front's heap too. */
export interface FrontSettle { type: 'settle'; compact: boolean }
export interface FrontInit {
  host: string; port: number; certFile: string; keyFile: string; clientCAFiles: string[]; backendPath: string; maxConnections: number;
  /**
   * The node:http backend (node.ts listenUpgradeBackend) for connections whose first request asks
   * for a protocol upgrade on a path matching `upgradeRoute` (a regular expression's source): the
   * CONNECT sub-resources' paths. uWS cannot hand JavaScript a raw connection to pass an upgrade through.
   */
  upgrade?: { path: string; route: string };
}

/** A new connection handle: an address in 100::/64 with 64 random bits, as bytes for the PROXY header and as uWS prints it. */
export function newHandle(): { handle: string; bytes: Buffer } {
  const bytes = Buffer.concat([Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]), randomBytes(8)]);
  return { handle: bytes.toString('hex').match(/.{4}/g)!.join(':'), bytes };
}

/** Buffers inside a certificate come through postMessage as Uint8Arrays; readers expect Buffers again. */
export function revive(peer: PeerCertificate): PeerCertificate {
  const seen = new Set<object>();
  for (let c = peer as PeerCertificate & { issuerCertificate?: PeerCertificate }; c && !seen.has(c); c = c.issuerCertificate!) {
    seen.add(c);
    if (c.raw && !Buffer.isBuffer(c.raw)) c.raw = Buffer.from(c.raw as Uint8Array);
    const pk = (c as { pubkey?: Uint8Array }).pubkey;
    if (pk && !Buffer.isBuffer(pk)) (c as { pubkey?: Buffer }).pubkey = Buffer.from(pk);
  }
  return peer;
}

/**
 * Starts the front on a thread of its own (front-worker.ts): TLS and the copying between the client
 * and uWS take a second core, while the event loop serves requests. A verified certificate reaches
 * this thread's PeerTable before its connection's first byte reaches uWS (the front waits for the ack).
 */
export function listenFront(o: FrontOptions, backendPath: string, upgrade?: FrontInit['upgrade']): Promise<Listener & { settle(compact: boolean): void; addBackend(path: string): void }> {
  const init: FrontInit = { host: o.host, port: o.port, certFile: o.certFile, keyFile: o.keyFile, clientCAFiles: o.clientCAFiles, backendPath, upgrade, maxConnections: o.maxConnections };
  const worker = new Worker(new URL('./front-worker.js', import.meta.url), { workerData: init });
  const ack = (handle: string) => worker.postMessage({ type: 'ack', handle } satisfies FrontAck);
  // a loop that cannot take it (stopping) leaves the connection to fail there, never the front waiting
  const routed = (m: FrontConnMessage) => void o.route!(m).catch(() => {}).then(() => ack(m.handle));
  return new Promise((resolve, reject) => {
    worker.on('message', (m: FrontMessage) => {
      if (m.type === 'peer') {
        o.peers.set(m.handle, { peer: revive(m.peer), remoteAddress: m.remoteAddress });
        if (m.backend && o.route) routed(m);
        else ack(m.handle);
      } else if (m.type === 'head') {
        if (m.backend && o.route) return routed(m);
        o.peers.putHead(m.handle, m.head);
        ack(m.handle);
      } else if (m.type === 'gone') {
        o.peers.delete(m.handle);
        if (m.backend && o.route) void o.route(m).catch(() => {});
      } else if (m.type === 'listening') {
        resolve({
          port: m.port, close: () => worker.terminate(), settle: (compact) => worker.postMessage({ type: 'settle', compact } satisfies FrontSettle),
          addBackend: (path) => worker.postMessage({ type: 'backend', path } satisfies FrontAddBackend),
        });
      }
      else if (m.type === 'error') { reject(listenError(o.host, o.port, Object.assign(new Error(m.message), { code: m.code }))); void worker.terminate(); }
    });
    worker.once('error', (e) => reject(e));
  });
}
