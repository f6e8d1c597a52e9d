// A small HTTP/1.1 client over TLS for webhook calls: keep-alive connections pooled per webhook,
// one TLS write per request, and an incremental response reader (Content-Length, chunked, or until
// close) with a body size limit. It costs a fraction of node:https per call, which matters because
// every admitted write may make several calls.
import { isIP } from 'node:net';
import tls from 'node:tls';

export interface PostRequest {
  /** Connections are reused only between requests with the same pool key. */
  poolKey: string;
  /** Owner of the pool (a webhook); `retain` closes the pools of owners no longer listed. */
  group: string;
  host: string;
  port: number;
  /** Path with query. */
  path: string;
  /** The Host header: the URL's host[:port], or <svc>.<ns>.svc:<port>. */
  hostHeader: string;
  /** Name the certificate must be valid for; also SNI unless it is an IP address. */
  serverName: string;
  ca?: string;
  cert?: string;
  key?: string;
  /** Header lines besides Host, Content-Length and Connection. */
  headers: [string, string][];
  body: Buffer;
  timeoutMs: number;
  maxBodyBytes: number;
}

export interface PostResponse {
  status: number;
  body: Buffer;
}

/** A transport failure; `code` is Node's error code when there is one (ECONNREFUSED, CERT_HAS_EXPIRED, ...). */
export class TransportError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
  }
}

const HEAD_END = Buffer.from('\r\n\r\n');
const MAX_HEAD_BYTES = 64 * 1024;

/** Reads one response from a stream of buffers. */
class ResponseReader {
  status = 0;
  keepAlive = true;
  /** Set once a complete response was read. */
  done = false;
  /** Whether any response byte arrived (a reused connection that died before that may be retried). */
  started = false;
  private head: Buffer | undefined = Buffer.alloc(0);
  private mode: 'length' | 'chunked' | 'close' = 'close';
  private remaining = 0;
  private chunkState: 'size' | 'data' | 'data-end' | 'trailer' = 'size';
  private line = '';
  private parts: Buffer[] = [];
  private size = 0;

  constructor(private maxBody: number) {}

  /** Feeds bytes; throws TransportError on a protocol violation or a too large body. */
  feed(b: Buffer): void {
    if (b.length) this.started = true;
    if (this.head) {
      const all = this.head.length ? Buffer.concat([this.head, b]) : b;
      const end = all.indexOf(HEAD_END);
      if (end < 0) {
        if (all.length > MAX_HEAD_BYTES) throw new TransportError('malformed HTTP response: header too large');
        this.head = all;
        return;
      }
      this.parseHead(all.subarray(0, end).toString('latin1'));
      this.head = undefined;
      b = all.subarray(end + 4);
      if (this.status >= 100 && this.status < 200) {
        // an interim response: the real one follows
        this.head = Buffer.alloc(0);
        this.mode = 'close';
        if (b.length) this.feed(b);
        return;
      }
      if (this.mode === 'length' && this.remaining === 0) this.done = true;
    }
    if (!b.length || this.done) return;
    if (this.mode === 'length') {
      const take = Math.min(b.length, this.remaining);
      this.add(b.subarray(0, take));
      this.remaining -= take;
      if (take < b.length) this.keepAlive = false; // bytes beyond the response: do not reuse
      if (this.remaining === 0) this.done = true;
    } else if (this.mode === 'close') {
      this.add(b);
    } else {
      this.chunked(b);
    }
  }

  /** The stream ended: complete for until-close bodies, an error otherwise. */
  end(): void {
    if (this.done) return;
    if (!this.head && this.mode === 'close') {
      this.done = true;
      this.keepAlive = false;
      return;
    }
    throw new TransportError(this.started ? 'unexpected EOF' : 'EOF');
  }

  body(): Buffer {
    return this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts, this.size);
  }

  private add(b: Buffer): void {
    this.size += b.length;
    if (this.size > this.maxBody) throw new TransportError(`response body larger than ${this.maxBody} bytes`);
    this.parts.push(b);
  }

  private parseHead(text: string): void {
    const lines = text.split('\r\n');
    const m = /^HTTP\/(\d)\.(\d) (\d{3})/.exec(lines[0] ?? '');
    if (!m) throw new TransportError(`malformed HTTP response ${JSON.stringify((lines[0] ?? '').slice(0, 64))}`);
    this.status = Number(m[3]);
    const http10 = m[1] === '1' && m[2] === '0';
    let length = -1, chunked = false, connection = '';
    for (let i = 1; i < lines.length; i++) {
      const c = lines[i].indexOf(':');
      if (c <= 0) continue;
      const name = lines[i].slice(0, c).trim().toLowerCase();
      const value = lines[i].slice(c + 1).trim();
      if (name === 'content-length') {
        if (!/^\d+$/.test(value)) throw new TransportError('malformed HTTP response: bad Content-Length');
        length = Number(value);
      } else if (name === 'transfer-encoding') chunked = value.toLowerCase().split(',').map((x) => x.trim()).includes('chunked');
      else if (name === 'connection') connection = value.toLowerCase();
    }
    this.keepAlive = http10 ? connection.includes('keep-alive') : !connection.includes('close');
    if (this.status === 204 || this.status === 304) {
      this.mode = 'length';
      this.remaining = 0;
    } else if (chunked) {
      this.mode = 'chunked';
    } else if (length >= 0) {
      if (length > this.maxBody) throw new TransportError(`response body larger than ${this.maxBody} bytes`);
      this.mode = 'length';
      this.remaining = length;
    } else {
      this.mode = 'close';
      this.keepAlive = false;
    }
  }

  private chunked(b: Buffer): void {
    let i = 0;
    while (i < b.length && !this.done) {
      if (this.chunkState === 'data') {
        const take = Math.min(b.length - i, this.remaining);
        this.add(b.subarray(i, i + take));
        this.remaining -= take;
        i += take;
        if (this.remaining === 0) {
          this.chunkState = 'data-end';
          this.line = '';
        }
        continue;
      }
      // line-oriented states: read up to LF (the CR before it may have come in the previous buffer)
      const nl = b.indexOf(0x0a, i);
      const piece = b.subarray(i, nl < 0 ? b.length : nl).toString('latin1');
      if (nl < 0) {
        this.line += piece;
        if (this.line.length > 4096) throw new TransportError('malformed chunked encoding');
        return;
      }
      let line = this.line + piece;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      this.line = '';
      i = nl + 1;
      if (this.chunkState === 'data-end') {
        if (line !== '') throw new TransportError('malformed chunked encoding');
        this.chunkState = 'size';
      } else if (this.chunkState === 'size') {
        const n = parseInt(line.split(';')[0].trim(), 16);
        if (!Number.isFinite(n) || n < 0) throw new TransportError('malformed chunked encoding');
        if (n === 0) this.chunkState = 'trailer';
        else {
          this.chunkState = 'data';
          this.remaining = n;
        }
      } else if (line === '') {
        this.done = true; // end of trailers
      }
    }
    if (this.done && i < b.length) this.keepAlive = false;
  }
}

interface Pool {
  group: string;
  idle: tls.TLSSocket[];
}

export class Http1Client {
  private pools = new Map<string, Pool>();
  private contexts = new Map<string, tls.SecureContext>();

  /** Closes idle connections of groups not listed (webhooks removed or changed). */
  retain(groups: Iterable<string>): void {
    const keep = new Set(groups);
    for (const [k, p] of this.pools) {
      if (keep.has(p.group)) continue;
      for (const s of p.idle) s.destroy();
      this.pools.delete(k);
    }
  }

  close(): void {
    for (const p of this.pools.values()) for (const s of p.idle) s.destroy();
    this.pools.clear();
  }

  private context(r: PostRequest): tls.SecureContext {
    const k = `${r.ca ?? ''}\0${r.cert ?? ''}\0${r.key ?? ''}`;
    let c = this.contexts.get(k);
    if (!c) {
      c = tls.createSecureContext({ ...(r.ca ? { ca: r.ca } : {}), ...(r.cert && r.key ? { cert: r.cert, key: r.key } : {}) });
      if (this.contexts.size > 256) this.contexts.clear();
      this.contexts.set(k, c);
    }
    return c;
  }

  private takeIdle(r: PostRequest): tls.TLSSocket | undefined {
    const p = this.pools.get(r.poolKey);
    while (p?.idle.length) {
      const s = p.idle.pop()!;
      if (!s.destroyed && s.writable && s.readable) return s;
      s.destroy();
    }
    return undefined;
  }

  private putIdle(r: PostRequest, s: tls.TLSSocket): void {
    let p = this.pools.get(r.poolKey);
    if (!p) this.pools.set(r.poolKey, (p = { group: r.group, idle: [] }));
    if (p.idle.length >= 64) {
      s.destroy();
      return;
    }
    const drop = () => {
      const i = p!.idle.indexOf(s);
      if (i >= 0) p!.idle.splice(i, 1);
      s.destroy();
    };
    s.once('end', drop);
    s.once('close', drop);
    s.on('error', drop);
    (s as unknown as { _idleDrop?: () => void })._idleDrop = drop;
    p.idle.push(s);
  }

  private connect(r: PostRequest, signal: { dead: boolean; socket?: tls.TLSSocket }): Promise<tls.TLSSocket> {
    return new Promise((resolve, reject) => {
      const s = tls.connect({
        host: r.host, port: r.port, secureContext: this.context(r), ALPNProtocols: ['http/1.1'],
        ...(isIP(r.serverName) ? {} : { servername: r.serverName }),
        checkServerIdentity: (_h, cert) => tls.checkServerIdentity(r.serverName, cert),
      });
      signal.socket = s; // a timeout during the handshake closes it
      const fail = (e: NodeJS.ErrnoException) => {
        s.destroy();
        reject(new TransportError(e.message, e.code));
      };
      s.once('error', fail);
      s.once('secureConnect', () => {
        s.off('error', fail);
        if (signal.dead) {
          s.destroy();
          return;
        }
        s.setNoDelay(true);
        resolve(s);
      });
      s.once('close', () => reject(new TransportError('connection closed during the TLS handshake', 'ECONNRESET')));
    });
  }

  /** One request and its response on a connection; resolves with the reader, whatever the status. */
  private exchange(s: tls.TLSSocket, payload: Buffer, maxBody: number, signal: { dead: boolean; socket?: tls.TLSSocket }): Promise<ResponseReader> {
    signal.socket = s;
    const idleDrop = (s as unknown as { _idleDrop?: () => void })._idleDrop;
    if (idleDrop) {
      s.off('end', idleDrop);
      s.off('close', idleDrop);
      s.off('error', idleDrop);
      delete (s as unknown as { _idleDrop?: () => void })._idleDrop;
    }
    return new Promise((resolve, reject) => {
      const reader = new ResponseReader(maxBody);
      const cleanup = () => {
        s.off('data', onData);
        s.off('end', onEnd);
        s.off('close', onClose);
        s.off('error', onError);
      };
      const finish = () => {
        cleanup();
        resolve(reader);
      };
      const fail = (e: TransportError) => {
        cleanup();
        s.destroy();
        (e as TransportError & { started?: boolean }).started = reader.started;
        reject(e);
      };
      const onData = (b: Buffer) => {
        try {
          reader.feed(b);
        } catch (e) {
          fail(e as TransportError);
          return;
        }
        if (reader.done) finish();
      };
      const onEnd = () => {
        try {
          reader.end();
          reader.keepAlive = false;
          finish();
        } catch (e) {
          fail(e as TransportError);
        }
      };
      const onClose = () => {
        if (reader.done) return;
        try {
          reader.end();
          reader.keepAlive = false;
          finish();
        } catch (e) {
          fail(e as TransportError);
        }
      };
      const onError = (e: NodeJS.ErrnoException) => fail(new TransportError(e.message, e.code));
      s.on('data', onData);
      s.once('end', onEnd);
      s.once('close', onClose);
      s.on('error', onError);
      s.write(payload);
    });
  }

  /** POSTs and returns the status and body; rejects with TransportError (message 'context deadline exceeded' on timeout). */
  async post(r: PostRequest): Promise<PostResponse> {
    const head = [`POST ${r.path} HTTP/1.1`, `Host: ${r.hostHeader}`];
    for (const [k, v] of r.headers) head.push(`${k}: ${v}`);
    head.push(`Content-Length: ${r.body.length}`, '', '');
    const payload = Buffer.concat([Buffer.from(head.join('\r\n'), 'latin1'), r.body]);
    const signal: { dead: boolean; socket?: tls.TLSSocket } = { dead: false };
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        signal.dead = true;
        signal.socket?.destroy();
        reject(new TransportError('context deadline exceeded', 'ETIMEDOUT'));
      }, r.timeoutMs);
    });
    const attempt = async (): Promise<PostResponse> => {
      // A pooled connection the server has meanwhile closed fails before any response byte: retry on a new one.
      for (let tries = 0; ; tries++) {
        const reused = this.takeIdle(r);
        const s = reused ?? (await this.connect(r, signal));
        if (signal.dead) {
          s.destroy();
          throw new TransportError('context deadline exceeded', 'ETIMEDOUT');
        }
        try {
          const reader = await this.exchange(s, payload, r.maxBodyBytes, signal);
          if (reader.keepAlive && !signal.dead) this.putIdle(r, s);
          else s.destroy();
          return { status: reader.status, body: reader.body() };
        } catch (e) {
          const started = (e as { started?: boolean }).started;
          if (reused && !started && !signal.dead && tries < 2) continue;
          throw e;
        }
      }
    };
    try {
      return await Promise.race([attempt(), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}
