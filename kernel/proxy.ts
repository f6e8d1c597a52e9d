// Streams a request's answer from an upstream HTTPS endpoint (a node agent) to the client, with
// backpressure both ways: the upstream is paused while the client's socket is backed up.
import https from 'node:https';
import tls from 'node:tls';
import type { KRequest, KResponse } from './http/types.js';
import type { UpstreamTarget, UserInfo } from './contracts.js';
import { StatusError } from './status.js';

const PASSED_HEADERS = ['content-type', 'content-length', 'cache-control'];

export function proxyStream(res: KResponse, method: string, target: UpstreamTarget): Promise<void> {
  return new Promise((resolve, reject) => {
    const url = new URL(target.url);
    const up = https.request(url, {
      method, ca: target.ca, cert: target.cert, key: target.key, rejectUnauthorized: !!target.ca,
      headers: { accept: '*/*' },
    }, (ur) => {
      const headers: Record<string, string> = {};
      for (const h of PASSED_HEADERS) if (typeof ur.headers[h] === 'string' && h !== 'content-length') headers[h] = ur.headers[h] as string;
      res.start(ur.statusCode ?? 502, headers);
      ur.on('data', (c: Buffer) => { if (!res.write(c)) ur.pause(); });
      res.onDrain(() => ur.resume());
      ur.on('end', () => { res.end(); resolve(); });
      ur.on('error', () => { res.end(); resolve(); });
    });
    res.onClose(() => up.destroy());
    up.on('error', (e) => {
      const verb = method.charAt(0) + method.slice(1).toLowerCase();
      reject(new StatusError(500, 'InternalError', `${verb} ${JSON.stringify(target.url)}: ${e.message}`, { causes: [{ message: e.message }] }));
    });
    up.end();
  });
}

/** Hop-by-hop headers (RFC 9110 §7.6.1) and those the proxy sets itself: never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'content-length']);
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
  /** Request body bytes read at most (413 beyond). */
  maxBodyBytes: number;
  /** Incoming headers not passed on, by lower-case name or prefix (credentials the server consumed). */
  dropHeaders: (name: string) => boolean;
}

/**
 * Relays a whole request (method, path, query, headers, body) to an upstream HTTPS server as `user`
 * (front-proxy headers, the target's client certificate) and its answer back, as the reference's
 * aggregation proxy does: every header but hop-by-hop ones both ways; a long or unsized answer (a
 * watch) streams with backpressure (the upstream is paused while the client is backed up). An
 * upstream that cannot be reached is a 503 in plain text with the error, as the reference answers.
 */
export async function proxyRequest(req: KRequest, res: KResponse, target: UpstreamTarget, user: UserInfo, o: ProxyRequestOptions): Promise<void> {
  const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.body(o.maxBodyBytes);
  const headers: Record<string, string | string[]> = {};
  for (const name of req.headerNames()) {
    if (HOP_BY_HOP.has(name) || o.dropHeaders(name)) continue;
    const vs = req.headerValues(name);
    headers[name] = vs.length === 1 ? vs[0] : vs;
  }
  Object.assign(headers, frontProxyHeaders(user));
  if (req.remoteAddress) headers['X-Forwarded-For'] = [...req.headerValues('x-forwarded-for'), req.remoteAddress].join(', ');
  if (body) headers['content-length'] = String(body.length);
  const base = new URL(target.url);
  const qs = req.query.toString();
  const url = new URL(`${encodeURI(req.path)}${qs ? `?${qs}` : ''}`, base);
  return new Promise((resolve) => {
    let answered = false;
    const up = https.request(url, {
      method: req.method, headers, ca: target.ca, cert: target.cert, key: target.key, servername: target.servername,
      rejectUnauthorized: target.verify ?? !!target.ca, agent: false,
      ...(target.servername ? { checkServerIdentity: (_h: string, cert: import('node:tls').PeerCertificate) => tls.checkServerIdentity(target.servername!, cert) } : {}),
    }, (ur) => {
      answered = true;
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
      res.start(code, out);
      ur.on('data', (c: Buffer) => { if (!res.write(c)) ur.pause(); });
      res.onDrain(() => ur.resume());
      ur.on('end', () => { res.end(); resolve(); });
      ur.on('error', () => { res.end(); resolve(); });
    });
    res.onClose(() => up.destroy());
    up.on('error', (e) => {
      if (answered) return;
      answered = true;
      res.send(503, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' }, `${e.message}\n`);
      resolve();
    });
    up.end(body);
  });
}
