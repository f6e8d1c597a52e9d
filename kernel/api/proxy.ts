// Proxying to an upstream a plugin names (a node agent, a pod): answers are streamed with
// backpressure both ways, and a protocol upgrade (WebSocket, SPDY/3.1) is passed through as the
// reference's upgrade-aware handler does it: the client's request, Upgrade header included, goes to
// the upstream; the upstream's 101 answer goes back to the client, then raw bytes flow both ways
// until either side closes. Upgrades need a transport that can hand over the client's connection
// (KResponse.hijack: the node:http backends); elsewhere they are refused with a Status.
import http from 'node:http';
import https from 'node:https';
import { STATUS_CODES } from 'node:http';
import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Socket } from 'node:net';
import type { KRequest, KResponse } from '../http/types.js';
import tls from 'node:tls';
import type { UpstreamTarget, UserInfo } from '../contracts/index.js';
import { StatusError } from '../contracts/status.js';

const PASSED_HEADERS = ['content-type', 'content-length', 'cache-control'];

/** Hop-by-hop headers (RFC 9110 §7.6.1) and those the proxy sets itself: never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'content-length']);
/** Request headers that never travel to a node agent or pod: hop-by-hop ones, and credentials the server has consumed. */
const isConsumed = (h: string) => HOP_BY_HOP.has(h) || h === 'authorization' || h.startsWith('impersonate-') || h.startsWith('x-remote-');
/** Answer headers not relayed on a plain proxied answer (the transport frames the body itself). */
const ANSWER_DROPPED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'proxy-connection']);

/** A dial failure worded as Go's net package words it ("dial tcp 10.0.0.1:10250: connect: connection refused"). */
export function dialError(url: URL, e: NodeJS.ErrnoException): string {
  const addr = `${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`;
  const why: Record<string, string> = {
    ECONNREFUSED: 'connect: connection refused', EHOSTUNREACH: 'connect: no route to host', ENETUNREACH: 'connect: network is unreachable',
    ETIMEDOUT: 'i/o timeout', ECONNRESET: 'read: connection reset by peer', ENOTFOUND: `lookup ${url.hostname}: no such host`,
  };
  const w = e.code ? why[e.code] : undefined;
  return w ? `dial tcp ${addr}: ${w}` : e.message;
}

/** How long a connection to an upstream may take to open (the reference's node agent dialer waits 30 s). */
const DIAL_TIMEOUT_MS = 30_000;

function upstreamRequest(target: UpstreamTarget, method: string, headers: Record<string, string | string[]>): http.ClientRequest {
  const url = new URL(target.url);
  const req = url.protocol === 'http:' ? http.request(url, { method, headers, agent: false }) : https.request(url, {
    method, headers, agent: false, ca: target.ca, cert: target.cert, key: target.key, servername: target.servername,
    // a node agent is verified against --kubelet-certificate-authority when given; a pod's endpoint never is (as the reference)
    rejectUnauthorized: target.verify ?? !!target.ca,
    ...(target.servername ? { checkServerIdentity: (_h: string, cert: tls.PeerCertificate) => tls.checkServerIdentity(target.servername!, cert) } : {}),
  });
  // only the dial is timed: an open stream (exec, logs -f) may stay quiet for as long as it likes
  req.on('socket', (sock: Socket) => {
    const timer = setTimeout(() => req.destroy(Object.assign(new Error('i/o timeout'), { code: 'ETIMEDOUT' })), DIAL_TIMEOUT_MS);
    sock.once('connect', () => clearTimeout(timer));
    sock.once('close', () => clearTimeout(timer));
  });
  return req;
}

/** Streams an upstream answer to the client: status, the content headers, the body with backpressure. */
function relay(ur: http.IncomingMessage, res: KResponse, headers: Record<string, string>, resolve: () => void): void {
  res.start(ur.statusCode ?? 502, headers);
  ur.on('data', (c: Buffer) => { if (!res.write(c)) ur.pause(); });
  res.onDrain(() => ur.resume());
  ur.on('end', () => { res.end(); resolve(); });
  ur.on('error', () => { res.end(); resolve(); });
}

/** GET of a streamed sub-resource (pods/log): the upstream's answer with its content headers. */
export function proxyStream(res: KResponse, method: string, target: UpstreamTarget): Promise<void> {
  return new Promise((resolve, reject) => {
    const up = upstreamRequest(target, method, { accept: '*/*' });
    up.on('response', (ur) => {
      const headers: Record<string, string> = {};
      for (const h of PASSED_HEADERS) if (typeof ur.headers[h] === 'string' && h !== 'content-length') headers[h] = ur.headers[h] as string;
      relay(ur, res, headers, resolve);
    });
    res.onClose(() => up.destroy());
    up.on('error', (e: NodeJS.ErrnoException) => {
      const verb = method.charAt(0) + method.slice(1).toLowerCase();
      const why = dialError(new URL(target.url), e);
      reject(new StatusError(500, 'InternalError', `${verb} ${JSON.stringify(target.url)}: ${why}`, { causes: [{ message: why }] }));
    });
    up.end();
  });
}

/**
 * The upstream request of a CONNECT: `onAnswer` runs for its first answer (a response or an
 * upgrade); failing to reach it before any answer rejects with the reference's dial error.
 */
function connectUpstream(target: UpstreamTarget, method: string, headers: Record<string, string | string[]>, reject: (e: StatusError) => void) {
  const url = new URL(target.url);
  const up = upstreamRequest(target, method, headers);
  let answered = false;
  up.on('error', (e: NodeJS.ErrnoException) => {
    if (answered) return;
    answered = true;
    reject(new StatusError(500, '', `error dialing backend: ${dialError(url, e)}`));
  });
  const answer = () => { answered = true; };
  up.once('response', answer);
  up.once('upgrade', answer);
  return { up, answered: () => answered };
}

/** An upstream's refusal of an upgrade: its (short) answer, whole, with the headers an end-to-end answer keeps. */
function relayRefusal(ur: http.IncomingMessage, res: KResponse, resolve: () => void): void {
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(ur.headers)) if (v !== undefined && !ANSWER_DROPPED.has(k)) h[k] = Array.isArray(v) ? v.join(', ') : v;
  const chunks: Buffer[] = [];
  let size = 0;
  ur.on('data', (c: Buffer) => { size += c.length; if (size <= 1 << 20) chunks.push(c); });
  ur.on('end', () => { res.send(ur.statusCode ?? 502, h, Buffer.concat(chunks)); resolve(); });
  ur.on('error', () => { res.send(ur.statusCode ?? 502, h, Buffer.concat(chunks)); resolve(); });
}

/** How the kernel proxies a CONNECT sub-resource (PluginHost.serveConnect's route). */
export interface ConnectOptions {
  /** A request without an upgrade is a 400 (exec, attach, portforward). */
  upgradeRequired?: boolean;
  /**
   * For a proxy sub-resource, what follows it in the request path: a plain (not upgraded) request is
   * proxied as the reference's proxy transport does it — an empty path is redirected to '/',
   * X-Forwarded-Uri names the request's path, and links in HTML answers and redirects to the
   * upstream's own absolute paths are rewritten under the proxy's path; an unreachable upstream is
   * a 503 "error trying to reach service".
   */
  proxyPath?: string;
}

/** URL-valued attributes of HTML elements whose links a proxy rewrites (those the reference lists). */
const URL_ATTRS: Record<string, string[]> = {
  a: ['href'], applet: ['codebase'], area: ['href'], audio: ['src'], base: ['href'], blockquote: ['cite'], body: ['background'],
  button: ['formaction'], command: ['icon'], del: ['cite'], embed: ['src'], form: ['action'], frame: ['longdesc', 'src'],
  head: ['profile'], html: ['manifest'], iframe: ['longdesc', 'src'], img: ['longdesc', 'src', 'usemap'], input: ['src', 'usemap', 'formaction'],
  ins: ['cite'], link: ['href'], object: ['classid', 'codebase', 'data', 'usemap'], q: ['cite'], script: ['src'], source: ['src'], video: ['poster', 'src'],
};

/** Rewrites the URL-valued attributes of start tags; everything else stays byte for byte. */
export function rewriteHtml(html: string, rewrite: (url: string) => string): string {
  return html.replace(/<([a-zA-Z][a-zA-Z0-9]*)(\s[^>]*)?>/g, (tag: string, name: string, attrs: string | undefined) => {
    const keys = URL_ATTRS[name.toLowerCase()];
    if (!keys || !attrs) return tag;
    const out = attrs.replace(/(\s)([a-zA-Z][a-zA-Z0-9-]*)(\s*=\s*)("[^"]*"|'[^']*'|[^\s"'>]+)/g, (m: string, sp: string, key: string, eq: string, val: string) => {
      if (!keys.includes(key.toLowerCase())) return m;
      const q = val[0] === '"' || val[0] === "'" ? val[0] : '';
      return `${sp}${key}${eq}${q}${rewrite(q ? val.slice(1, -1) : val)}${q}`;
    });
    return `<${name}${out}>`;
  });
}

/**
 * A link seen in an upstream's answer, as the reference's proxy rewrites it: an absolute path, or a
 * URL on the upstream's own host, goes under `prefix` (unless it already is); relative links and
 * other hosts stay.
 */
export function rewriteUrl(link: string, source: URL, prefix: string): string {
  const withHost = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(link) || link.startsWith('//');
  let u: URL;
  try { u = new URL(link, source); } catch { return link; }
  if (withHost ? u.host !== source.host : !link.startsWith('/')) return link;
  const tail = `${u.search}${u.hash}`;
  if (u.pathname.startsWith(prefix)) return `${u.pathname}${tail}`;
  return `${posix.join(prefix, u.pathname)}${tail}`;
}

/** True when the request asks for a protocol upgrade (WebSocket, SPDY/3.1). */
export function wantsUpgrade(req: KRequest): boolean {
  return !!req.header('upgrade') && /(?:^|,)\s*upgrade\s*(?:,|$)/i.test(req.headerValues('connection').join(','));
}

/**
 * A CONNECT sub-resource (exec, attach, portforward, proxy) to `target`: the client's method, the
 * end-to-end headers and the body; an upgrade is passed through when the transport allows it.
 * Resolves once the answer is streamed or the upgraded connection is handed over.
 */
export async function proxyConnect(req: KRequest, res: KResponse, target: UpstreamTarget, maxBody: number, o: ConnectOptions = {}): Promise<void> {
  const upgrade = wantsUpgrade(req);
  if (o.upgradeRequired && !upgrade) throw new StatusError(400, 'BadRequest', 'Upgrade request required');
  const proxy = o.proxyPath !== undefined && !upgrade ? o.proxyPath : undefined;
  if (proxy === '') {
    // the reference's redirect of an empty proxy path to one ending in '/'
    const q = req.query.toString();
    return res.send(301, { location: `${req.path}/${q ? `?${q}` : ''}` }, '');
  }
  if (upgrade && !res.hijack) {
    if (res.upgrade && req.header('upgrade')?.toLowerCase() === 'websocket') return bridgeWebSocket(req, res, target);
    throw new StatusError(400, 'BadRequest', `protocol upgrades (${req.header('upgrade')}) are not served on this listener; use the secure port behind its TLS front or --mtls-port`);
  }
  const headers: Record<string, string | string[]> = {};
  for (const name of req.headerNames()) if (!isConsumed(name)) headers[name] = req.headerValues(name);
  if (upgrade) {
    headers.connection = 'Upgrade';
    headers.upgrade = req.headerValues('upgrade').join(', ');
  }
  // a proxy tells the upstream where it is mounted, as the reference's proxy transport does
  const prefix = proxy !== undefined ? req.path.slice(0, req.path.length - proxy.length) : undefined;
  if (prefix !== undefined) headers['x-forwarded-uri'] = req.path;
  const body = upgrade || req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.body(maxBody);
  return new Promise((resolve, reject) => {
    const { up } = connectUpstream(target, req.method, headers, prefix === undefined ? reject
      : (e) => reject(new StatusError(503, 'ServiceUnavailable', e.message.replace(/^error dialing backend: /, 'error trying to reach service: '))));
    up.on('upgrade', (ur, upSock: Socket, upHead: Buffer) => {
      const { socket, head } = res.hijack!();
      let out = `HTTP/1.1 ${ur.statusCode ?? 101} ${ur.statusMessage || STATUS_CODES[ur.statusCode ?? 101]}\r\n`;
      for (let i = 0; i < ur.rawHeaders.length; i += 2) out += `${ur.rawHeaders[i]}: ${ur.rawHeaders[i + 1]}\r\n`;
      socket.write(`${out}\r\n`);
      if (upHead.length) socket.write(upHead);
      if (head.length) upSock.write(head);
      upSock.setNoDelay(true);
      socket.pipe(upSock);
      upSock.pipe(socket);
      const close = () => { socket.destroy(); upSock.destroy(); };
      socket.on('error', close);
      upSock.on('error', close);
      socket.on('close', close);
      upSock.on('close', close);
      resolve();
    });
    up.on('response', (ur) => {
      if (upgrade) return relayRefusal(ur, res, resolve);
      const h: Record<string, string> = {};
      for (const [k, v] of Object.entries(ur.headers)) if (v !== undefined && !ANSWER_DROPPED.has(k)) h[k] = Array.isArray(v) ? v.join(', ') : v;
      if (prefix === undefined) return relay(ur, res, h, resolve);
      const source = new URL(target.url);
      if (h.location) { h.location = rewriteUrl(h.location, source, prefix); return relay(ur, res, h, resolve); }
      const type = (h['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      const enc = (h['content-encoding'] ?? '').toLowerCase();
      if (type !== 'text/html' || (enc !== '' && enc !== 'gzip')) return relay(ur, res, h, resolve);
      // an HTML page: its links to the upstream's own paths are made to go through the proxy
      const chunks: Buffer[] = [];
      ur.on('data', (c: Buffer) => chunks.push(c));
      ur.on('error', () => { res.send(ur.statusCode ?? 502, h, Buffer.concat(chunks)); resolve(); });
      ur.on('end', () => {
        let raw = Buffer.concat(chunks);
        try {
          const html = rewriteHtml((enc === 'gzip' ? gunzipSync(raw) : raw).toString('utf8'), (u) => rewriteUrl(u, source, prefix));
          raw = enc === 'gzip' ? gzipSync(html) : Buffer.from(html);
        } catch { /* a body that does not decode goes as it came */ }
        res.send(ur.statusCode ?? 502, h, raw);
        resolve();
      });
    });
    res.onClose(() => up.destroy());
    up.end(body);
  });
}

/** One WebSocket frame as a client sends it (FIN set, payload masked). */
function clientFrame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const head = Buffer.alloc(len < 126 ? 6 : len < 0x10000 ? 8 : 14);
  head[0] = 0x80 | opcode;
  let off = 2;
  if (len < 126) head[1] = 0x80 | len;
  else if (len < 0x10000) { head[1] = 0x80 | 126; head.writeUInt16BE(len, 2); off = 4; } else { head[1] = 0x80 | 127; head.writeBigUInt64BE(BigInt(len), 2); off = 10; }
  const mask = randomBytes(4);
  mask.copy(head, off);
  const body = Buffer.allocUnsafe(len);
  for (let i = 0; i < len; i++) body[i] = payload[i] ^ mask[i & 3];
  return Buffer.concat([head, body]);
}

/**
 * Where the transport terminates WebSockets itself (uWS) and cannot hand over the connection: a
 * WebSocket upgrade is bridged message by message. The upstream gets the client's handshake (its
 * offered sub-protocols); on its 101 the client is upgraded with the sub-protocol the upstream chose,
 * and messages are copied both ways (binary stays binary), close frames end both sides.
 */
function bridgeWebSocket(req: KRequest, res: KResponse, target: UpstreamTarget): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  for (const name of req.headerNames()) if (!isConsumed(name) && name !== 'sec-websocket-extensions') headers[name] = req.headerValues(name);
  headers.connection = 'Upgrade';
  headers.upgrade = 'websocket';
  return new Promise((resolve, reject) => {
    const { up, answered } = connectUpstream(target, req.method, headers, reject);
    up.on('response', (ur) => relayRefusal(ur, res, resolve));
    up.on('upgrade', (ur, upSock: Socket, upHead: Buffer) => {
      upSock.setNoDelay(true);
      upSock.pause();
      let open = true;
      const protocol = typeof ur.headers['sec-websocket-protocol'] === 'string' ? ur.headers['sec-websocket-protocol'] : undefined;
      const ok = res.upgrade!({
        open: (ws) => {
          let buf: Buffer = upHead;
          let parts: Buffer[] = [];
          let opcode = 0;
          const onData = (d: Buffer) => {
            buf = buf.length ? Buffer.concat([buf, d]) : d;
            while (buf.length >= 2) {
              let len = buf[1] & 0x7f;
              let off = 2;
              if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); off = 4; } else if (len === 127) { if (buf.length < 10) return; len = Number(buf.readBigUInt64BE(2)); off = 10; }
              if (buf[1] & 0x80) off += 4; // a server must not mask; tolerated
              if (buf.length < off + len) return;
              const fin = (buf[0] & 0x80) !== 0;
              const op = buf[0] & 0x0f;
              let payload: Buffer = Buffer.from(buf.subarray(off, off + len));
              if (buf[1] & 0x80) { const m = buf.subarray(off - 4, off); for (let i = 0; i < len; i++) payload[i] ^= m[i & 3]; }
              buf = buf.subarray(off + len);
              if (op === 0x8) { open = false; ws.end(payload.length >= 2 ? payload.readUInt16BE(0) : 1000, payload.subarray(2).toString()); upSock.end(); return; }
              if (op === 0x9) { upSock.write(clientFrame(0xa, payload)); continue; }
              if (op === 0xa) continue;
              if (op !== 0) { opcode = op; parts = []; }
              parts.push(payload);
              if (!fin) continue;
              payload = parts.length === 1 ? parts[0] : Buffer.concat(parts);
              parts = [];
              if (!ws.send(payload, opcode === 0x2)) upSock.pause();
            }
          };
          upSock.on('data', onData);
          upSock.on('close', () => { if (open) { open = false; ws.end(1000, ''); } });
          upSock.on('error', () => upSock.destroy());
          if (upHead.length) onData(Buffer.alloc(0));
          upSock.resume();
        },
        message: (data, binary) => { if (!upSock.destroyed) upSock.write(clientFrame(binary ? 0x2 : 0x1, data)); },
        drain: () => upSock.resume(),
        close: () => {
          if (open) { open = false; if (!upSock.destroyed) upSock.end(clientFrame(0x8, Buffer.from([0x03, 0xe8]))); }
          setTimeout(() => upSock.destroy(), 1000).unref();
        },
      }, protocol);
      if (!ok) upSock.destroy();
      resolve();
    });
    res.onClose(() => { if (!answered()) up.destroy(); });
    up.end();
  });
}

/** Answers up to this size with a length are relayed whole; longer or unsized ones (watches) stream. */
const WHOLE_ANSWER_BYTES = 1 << 20;

/** The user, in the front-proxy headers every aggregated server reads (extra keys percent-encoded). */
export function frontProxyHeaders(user: UserInfo): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = { 'X-Remote-User': user.username };
  if (user.groups.length) h['X-Remote-Group'] = [...user.groups];
  for (const [k, vs] of Object.entries(user.extra ?? {})) if (vs.length) h[`X-Remote-Extra-${encodeURIComponent(k)}`] = [...vs];
  return h;
}

export interface ProxyRequestOptions {
  /** Request body bytes read at most (413 beyond), where the body cannot stream. */
  maxBodyBytes: number;
}

/**
 * Relays a whole request (method, path, query, headers, body) to an upstream HTTPS server as `user`
 * (front-proxy headers, the target's client certificate) and its answer back, as the reference's
 * aggregation proxy does: every header but hop-by-hop ones both ways; a long or unsized answer (a
 * watch) streams with backpressure (the upstream is paused while the client is backed up), and so
 * does the request body where the transport can stream it (the client is paused while the upstream
 * is backed up; no size limit here, the upstream has its own). An upstream that cannot be reached
 * is a 503 in plain text with the error, as the reference answers.
 */
export async function proxyRequest(req: KRequest, res: KResponse, target: UpstreamTarget, user: UserInfo, o: ProxyRequestOptions): Promise<void> {
  const hasBody = !(req.method === 'GET' || req.method === 'HEAD') || req.header('content-length') !== undefined || req.header('transfer-encoding') !== undefined;
  // A body streams through when the transport can (backpressure to the client); else it is read whole first.
  const streamed = hasBody && !!req.streamBody;
  const body = hasBody && !streamed ? await req.body(o.maxBodyBytes) : undefined;
  const headers: Record<string, string | string[]> = {};
  for (const name of req.headerNames()) {
    // credentials this server consumed stay here; X-Remote-* are set afresh from the user
    if (isConsumed(name)) continue;
    const vs = req.headerValues(name);
    headers[name] = vs.length === 1 ? vs[0] : vs;
  }
  Object.assign(headers, frontProxyHeaders(user));
  if (req.remoteAddress) headers['X-Forwarded-For'] = [...req.headerValues('x-forwarded-for'), req.remoteAddress].join(', ');
  if (body) headers['content-length'] = String(body.length);
  else if (streamed && req.header('content-length') !== undefined) headers['content-length'] = req.header('content-length')!;
  const base = new URL(target.url);
  const qs = req.query.toString();
  const url = new URL(`${encodeURI(req.path)}${qs ? `?${qs}` : ''}`, base);
  return new Promise((resolve) => {
    let answered = false;
    /** The streamed body's control: once the upstream has answered (or failed), the client is never held back again. */
    let ctl: { resume(): void } | undefined;
    const up = upstreamRequest({ ...target, url: url.href }, req.method, headers);
    up.on('error', (e: NodeJS.ErrnoException) => {
      ctl?.resume();
      if (answered) return;
      answered = true;
      res.send(503, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' }, `${dialError(url, e)}\n`);
      resolve();
    });
    up.on('response', (ur) => {
      answered = true;
      ctl?.resume();
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(ur.headers)) {
        if (v === undefined || HOP_BY_HOP.has(k)) continue;
        out[k] = Array.isArray(v) ? v.join(', ') : v;
      }
      const code = ur.statusCode ?? 502;
      const len = Number(ur.headers['content-length']);
      if (req.method === 'HEAD' || (Number.isFinite(len) && len <= WHOLE_ANSWER_BYTES)) {
        const chunks: Buffer[] = [];
        ur.on('data', (c: Buffer) => chunks.push(c));
        ur.on('end', () => { res.send(code, out, req.method === 'HEAD' ? '' : Buffer.concat(chunks)); resolve(); });
        ur.on('error', () => { res.send(code, out, Buffer.concat(chunks)); resolve(); });
        return;
      }
      relay(ur, res, out, resolve);
    });
    res.onClose(() => up.destroy());
    if (streamed) {
      ctl = req.streamBody!({ data: (c) => up.write(c) || answered, end: () => up.end() });
      up.on('drain', () => ctl!.resume());
    } else {
      up.end(body);
    }
  });
}
