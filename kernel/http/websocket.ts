// WebSocket (RFC 6455) on a raw connection, for the node:http transports: the server side of the
// handshake, unmasked frames out, masked frames in (text, binary, ping, close), no extensions.
// uWebSockets.js does this itself; here it lets watches over WebSocket work on Node's own stack.
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { WebSocketHandlers, WebSocketLike } from './types.js';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** The largest message taken from a client (as the uWS transport's maxPayloadLength). */
const MAX_PAYLOAD = 64 * 1024;

/** One frame, FIN set, unmasked (servers never mask). */
function frame(opcode: number, payload: Buffer): Buffer {
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x80 | opcode, n]) : n < 65536 ? Buffer.from([0x80 | opcode, 126, n >> 8, n & 0xff]) : Buffer.alloc(10);
  if (n >= 65536) {
    head[0] = 0x80 | opcode;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([head, payload]);
}

/**
 * Answers the handshake with 101 on `socket` and runs the connection with `handlers`. `head`: the
 * bytes read past the request head. Returns false (and answers nothing) when the request has no key.
 */
export function acceptWebSocket(socket: Duplex, head: Buffer, headers: Record<string, string | string[] | undefined>, handlers: WebSocketHandlers, protocol?: string): boolean {
  const key = headers['sec-websocket-key'];
  if (typeof key !== 'string' || !key) return false;
  const chosen = protocol ?? String(headers['sec-websocket-protocol'] ?? '').split(',')[0]?.trim();
  const accept = createHash('sha1').update(key + GUID).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n${chosen ? `Sec-WebSocket-Protocol: ${chosen}\r\n` : ''}\r\n`);
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    handlers.close();
  };
  const ws: WebSocketLike = {
    send(data, binary) {
      if (closed) return false;
      return socket.write(frame(binary ? 0x2 : 0x1, typeof data === 'string' ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength)));
    },
    end(code = 1000, reason = '') {
      if (closed) return;
      const body = Buffer.alloc(2 + Buffer.byteLength(reason));
      body.writeUInt16BE(code);
      body.write(reason, 2);
      socket.end(frame(0x8, body));
      close();
    },
    bufferedAmount: () => socket.writableLength,
  };
  let buf = head;
  let failed = false;
  // a protocol error: the close frame goes out (socket.end flushes it; destroy only for a client that never closes), nothing more is read
  const fail = () => { failed = true; ws.end(1002, 'protocol error'); setTimeout(() => socket.destroy(), 5000).unref(); };
  const read = () => {
    // Frames as they complete: 2-byte header, extended length, the client's 4-byte mask, payload.
    while (buf.length >= 2 && !failed) {
      const opcode = buf[0] & 0x0f;
      const masked = (buf[1] & 0x80) !== 0;
      let len = buf[1] & 0x7f;
      // reserved bits (no extension), opcodes RFC 6455 does not define, control frames fragmented or over 125 bytes
      if ((buf[0] & 0x70) !== 0 || (opcode > 0x2 && opcode < 0x8) || opcode > 0xa || (opcode >= 0x8 && (!(buf[0] & 0x80) || len > 125))) return fail();
      let at = 2;
      if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); at = 4; }
      else if (len === 127) { if (buf.length < 10) return; len = Number(buf.readBigUInt64BE(2)); at = 10; }
      if (!masked || len > MAX_PAYLOAD) return fail();
      if (buf.length < at + 4 + len) return;
      const mask = buf.subarray(at, at + 4);
      const payload = Buffer.from(buf.subarray(at + 4, at + 4 + len));
      for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
      buf = buf.subarray(at + 4 + len);
      if (opcode === 0x8) { ws.end(payload.length >= 2 ? payload.readUInt16BE(0) : 1000); return; }
      if (opcode === 0x9) socket.write(frame(0xa, payload));
      else if (opcode === 0x1 || opcode === 0x2) handlers.message?.(payload, opcode === 0x2);
    }
  };
  socket.on('data', (d: Buffer) => { if (failed) return; buf = buf.length ? Buffer.concat([buf, d]) : d; read(); });
  socket.on('drain', () => handlers.drain?.());
  socket.on('close', close);
  socket.on('error', () => socket.destroy());
  handlers.open(ws);
  if (buf.length) read();
  return true;
}
