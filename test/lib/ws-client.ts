// A minimal WebSocket client (RFC 6455) over node:tls, enough for watch tests: the opening
// handshake with Sec-WebSocket-Key, reading the server's frames (which must not be masked),
// answering pings, and sending a masked close frame. No extensions, no compression.
import { createHash, randomBytes } from 'node:crypto';
import tls from 'node:tls';

const HANDSHAKE_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export const OP_CONTINUATION = 0x0;
export const OP_TEXT = 0x1;
export const OP_BINARY = 0x2;
export const OP_CLOSE = 0x8;
export const OP_PING = 0x9;
export const OP_PONG = 0xa;

/** One complete message as it arrived: its opcode, payload, and how many frames carried it. */
export interface WsMessage {
  opcode: number;
  data: Buffer;
  frames: number;
  /** The payload as UTF-8 text (meaningful for text frames). */
  text: string;
}

export interface WsConnectOptions {
  host?: string;
  port: number;
  path: string;
  ca?: Buffer;
  token?: string;
  headers?: Record<string, string>;
  protocols?: string[];
  /** Fails the connect after this long without a handshake answer (default 10 s). */
  timeoutMs?: number;
}

export interface WsClient {
  /** HTTP status of the handshake answer (101 when upgraded). */
  status: number;
  /** Handshake answer headers, lower-cased names. */
  headers: Record<string, string>;
  /** Body of a refused handshake (non-101), as far as it arrived with the headers. */
  body: string;
  /** Whether Sec-WebSocket-Accept matched the key we sent. */
  acceptOk: boolean;
  /** Data messages (text and binary) in arrival order. */
  messages: WsMessage[];
  /** Set when a frame from the server had the mask bit set (servers must not mask). */
  sawMaskedFrame: boolean;
  /** Code and reason of the server's close frame, once received. */
  closeFrame?: { code?: number; reason: string };
  /** Resolves when the TLS socket has closed. */
  closed: Promise<void>;
  /** Called for every data message as it arrives. */
  onMessage?: (m: WsMessage) => void;
  /** Resolves when `pred` holds over the messages, or rejects after timeoutMs. */
  waitFor(pred: (msgs: WsMessage[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Sends a masked text frame. */
  send(text: string): void;
  /** Sends a masked binary frame. */
  sendBinary(data: Buffer): void;
  /** Writes bytes as they are (a hand-made frame). */
  sendRaw(bytes: Buffer): void;
  /** Sends a masked close frame (code 1000 by default). */
  close(code?: number, reason?: string): void;
  /** Drops the connection without a close frame. */
  destroy(): void;
}

/** Encodes one client frame: FIN set, payload masked with a fresh random key. */
export function encodeClientFrame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  let head: Buffer;
  if (len < 126) {
    head = Buffer.alloc(2);
    head[1] = 0x80 | len;
  } else if (len < 0x10000) {
    head = Buffer.alloc(4);
    head[1] = 0x80 | 126;
    head.writeUInt16BE(len, 2);
  } else {
    head = Buffer.alloc(10);
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(len), 2);
  }
  head[0] = 0x80 | (opcode & 0x0f);
  const mask = randomBytes(4);
  const body = Buffer.alloc(len);
  for (let i = 0; i < len; i++) body[i] = payload[i] ^ mask[i & 3];
  return Buffer.concat([head, mask, body]);
}

export function connectWebSocket(opts: WsConnectOptions): Promise<WsClient> {
  const host = opts.host ?? '127.0.0.1';
  const key = randomBytes(16).toString('base64');
  const expectedAccept = createHash('sha1').update(key + HANDSHAKE_GUID).digest('base64');
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ host, port: opts.port, ca: opts.ca, servername: host === '127.0.0.1' ? undefined : host });
    let settled = false;
    const timer = setTimeout(() => fail(new Error('websocket handshake timed out')), opts.timeoutMs ?? 10_000);
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      reject(e);
    };
    let closedResolve!: () => void;
    const closed = new Promise<void>((r) => (closedResolve = r));
    sock.on('close', () => closedResolve());
    sock.on('error', (e) => fail(e));

    const client: WsClient = {
      status: 0, headers: {}, body: '', acceptOk: false, messages: [], sawMaskedFrame: false, closed,
      waitFor(pred, timeoutMs = 10_000) {
        return new Promise((res, rej) => {
          if (pred(client.messages)) return res();
          const deadline = setTimeout(() => { clearInterval(iv); rej(new Error(`websocket wait timed out with ${client.messages.length} messages`)); }, timeoutMs);
          const iv = setInterval(() => {
            if (pred(client.messages)) { clearInterval(iv); clearTimeout(deadline); res(); }
          }, 10);
        });
      },
      send(text) { if (!sock.destroyed) sock.write(encodeClientFrame(OP_TEXT, Buffer.from(text, 'utf8'))); },
      sendBinary(data) { if (!sock.destroyed) sock.write(encodeClientFrame(OP_BINARY, data)); },
      sendRaw(bytes) { if (!sock.destroyed) sock.write(bytes); },
      close(code = 1000, reason = '') {
        if (sock.destroyed) return;
        const r = Buffer.from(reason, 'utf8');
        const p = Buffer.alloc(2 + r.length);
        p.writeUInt16BE(code, 0);
        r.copy(p, 2);
        sock.write(encodeClientFrame(OP_CLOSE, p));
      },
      destroy() { sock.destroy(); },
    };

    let buf: Buffer = Buffer.alloc(0);
    let upgraded = false;
    // A fragmented message being assembled.
    let partial: { opcode: number; parts: Buffer[]; frames: number } | undefined;

    const readFrames = () => {
      for (;;) {
        if (buf.length < 2) return;
        const b0 = buf[0], b1 = buf[1];
        const fin = (b0 & 0x80) !== 0;
        const opcode = b0 & 0x0f;
        const masked = (b1 & 0x80) !== 0;
        let len = b1 & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          off = 10;
        }
        let mask: Buffer | undefined;
        if (masked) {
          if (buf.length < off + 4) return;
          mask = buf.subarray(off, off + 4);
          off += 4;
          client.sawMaskedFrame = true;
        }
        if (buf.length < off + len) return;
        let payload = Buffer.from(buf.subarray(off, off + len));
        if (mask) for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
        buf = buf.subarray(off + len);

        if (opcode === OP_CLOSE) {
          client.closeFrame = { code: payload.length >= 2 ? payload.readUInt16BE(0) : undefined, reason: payload.subarray(2).toString('utf8') };
          // Echo the close (as the protocol asks) unless we started it; then the server drops TCP.
          if (!sock.destroyed) sock.end(encodeClientFrame(OP_CLOSE, payload.subarray(0, 2)));
          continue;
        }
        if (opcode === OP_PING) { if (!sock.destroyed) sock.write(encodeClientFrame(OP_PONG, payload)); continue; }
        if (opcode === OP_PONG) continue;
        if (opcode === OP_CONTINUATION) {
          if (!partial) continue; // protocol error from the server: ignore
          partial.parts.push(payload);
          partial.frames++;
        } else {
          partial = { opcode, parts: [payload], frames: 1 };
        }
        if (fin && partial) {
          payload = Buffer.concat(partial.parts);
          const m: WsMessage = { opcode: partial.opcode, data: payload, frames: partial.frames, text: payload.toString('utf8') };
          partial = undefined;
          client.messages.push(m);
          client.onMessage?.(m);
        }
      }
    };

    sock.on('data', (d: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1').split('\r\n');
        buf = buf.subarray(end + 4);
        const m = /^HTTP\/1\.1 (\d{3})/.exec(head[0]);
        client.status = m ? Number(m[1]) : 0;
        for (const line of head.slice(1)) {
          const i = line.indexOf(':');
          if (i > 0) client.headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
        }
        client.acceptOk = client.headers['sec-websocket-accept'] === expectedAccept;
        upgraded = true;
        if (client.status !== 101) {
          // Not upgraded: hand back what arrived of the body, then stop.
          settled = true;
          clearTimeout(timer);
          let answered = false;
          let bodyTimer: NodeJS.Timeout | undefined;
          const done = () => {
            if (answered) return;
            answered = true;
            clearTimeout(bodyTimer);
            client.body = buf.toString('utf8');
            resolve(client);
          };
          const cl = Number(client.headers['content-length'] ?? NaN);
          if (!Number.isNaN(cl) && buf.length < cl) {
            sock.on('data', () => { if (buf.length >= cl) { sock.destroy(); done(); } });
            sock.on('close', () => done());
            bodyTimer = setTimeout(() => { sock.destroy(); done(); }, 2000);
          } else {
            sock.destroy();
            done();
          }
          return;
        }
        settled = true;
        clearTimeout(timer);
        resolve(client);
      }
      if (client.status === 101) readFrames();
    });

    sock.once('secureConnect', () => {
      const lines = [
        `GET ${opts.path} HTTP/1.1`,
        `Host: ${host}:${opts.port}`,
        'Upgrade: websocket',
        'Connection: Upgrade',
        `Sec-WebSocket-Key: ${key}`,
        'Sec-WebSocket-Version: 13',
      ];
      if (opts.protocols?.length) lines.push(`Sec-WebSocket-Protocol: ${opts.protocols.join(', ')}`);
      if (opts.token) lines.push(`Authorization: Bearer ${opts.token}`);
      for (const [k, v] of Object.entries(opts.headers ?? {})) lines.push(`${k}: ${v}`);
      sock.write(lines.join('\r\n') + '\r\n\r\n');
    });
  });
}
