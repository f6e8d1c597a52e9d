// A minimal SPDY/3.1 server side for the fake node agent (fake-node-agent.ts): only what kubectl's
// exec, attach and port-forward use. Frames: SYN_STREAM in (the client opens every stream), SYN_REPLY
// out, DATA both ways (FIN closes a direction), PING echoed; SETTINGS, WINDOW_UPDATE and the like are
// ignored (nothing here sends anywhere near a 64 KiB window). Header blocks are zlib streams, one per
// direction for the whole session, primed with the SPDY/3 dictionary and flushed per block.
import zlib from 'node:zlib';
import type { Duplex } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { exitStatus, runCommand, type Run } from './fake-node-agent.js';

/** The SPDY/3 header compression dictionary: length-prefixed words, then a run of common values. */
const WORDS = ['options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset', 'accept-encoding', 'accept-language',
  'accept-ranges', 'age', 'allow', 'authorization', 'cache-control', 'connection', 'content-base', 'content-encoding', 'content-language',
  'content-length', 'content-location', 'content-md5', 'content-range', 'content-type', 'date', 'etag', 'expect', 'expires', 'from', 'host',
  'if-match', 'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'pragma',
  'proxy-authenticate', 'proxy-authorization', 'range', 'referer', 'retry-after', 'server', 'te', 'trailer', 'transfer-encoding', 'upgrade',
  'user-agent', 'vary', 'via', 'warning', 'www-authenticate', 'method', 'get', 'status', '200 OK', 'version', 'HTTP/1.1', 'url', 'public',
  'set-cookie', 'keep-alive', 'origin'];
const TAIL = '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505'
  + '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized403 Forbidden'
  + '404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable'
  + 'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT'
  + 'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,'
  + 'publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';
export const SPDY_DICTIONARY = Buffer.concat([
  ...WORDS.map((w) => { const b = Buffer.alloc(4 + w.length); b.writeUInt32BE(w.length); b.write(w, 4, 'latin1'); return b; }),
  Buffer.from(TAIL, 'latin1'),
]);

const SYN_STREAM = 1, SYN_REPLY = 2, RST_STREAM = 3, PING = 6, GOAWAY = 7;
const FLAG_FIN = 1;

/** One direction's header compression: each block goes through the session's zlib stream, flushed. */
function zstream(z: zlib.Inflate | zlib.Deflate): (chunk: Buffer) => Promise<Buffer> {
  const out: Buffer[] = [];
  z.on('data', (d: Buffer) => out.push(d));
  z.on('error', () => {});
  return (chunk) => new Promise((resolve) => {
    z.write(chunk);
    z.flush(zlib.constants.Z_SYNC_FLUSH, () => resolve(Buffer.concat(out.splice(0))));
  });
}

interface Stream { id: number; headers: Record<string, string>; onData?: (d: Buffer) => void; onFin?: () => void; closed: boolean }

export function serveSpdy(req: IncomingMessage, sock: Duplex, head: Buffer, mode: { portForward: true } | { argv?: string[]; attach: string }): void {
  const offered = String(req.headers['x-stream-protocol-version'] ?? '').split(',').map((s) => s.trim());
  const protocol = 'portForward' in mode ? 'portforward.k8s.io' : ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'].find((p) => offered.includes(p));
  if (!protocol || !offered.includes(protocol)) {
    sock.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    return;
  }
  sock.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`);
  const inflater = zlib.createInflate({ dictionary: SPDY_DICTIONARY });
  const deflater = zlib.createDeflate({ dictionary: SPDY_DICTIONARY });
  const inflate = zstream(inflater);
  const deflate = zstream(deflater);
  const streams = new Map<number, Stream>();

  const control = (type: number, flags: number, body: Buffer) => {
    const h = Buffer.alloc(8);
    h.writeUInt16BE(0x8003, 0);
    h.writeUInt16BE(type, 2);
    h.writeUInt32BE(body.length, 4);
    h[4] = flags;
    if (!sock.destroyed) sock.write(Buffer.concat([h, body]));
  };
  const data = (s: Stream, d: Buffer | string, fin = false) => {
    if (s.closed) return;
    const b = Buffer.from(d);
    const h = Buffer.alloc(8);
    h.writeUInt32BE(s.id & 0x7fffffff, 0);
    h.writeUInt32BE(b.length, 4);
    h[4] = fin ? FLAG_FIN : 0;
    if (fin) s.closed = true;
    if (!sock.destroyed) sock.write(Buffer.concat([h, b]));
  };
  const headerBlock = async (block: Buffer): Promise<Record<string, string>> => {
    const raw = await inflate(block);
    const out: Record<string, string> = {};
    let off = 4;
    for (let n = raw.readUInt32BE(0); n > 0; n--) {
      const kl = raw.readUInt32BE(off); const k = raw.toString('latin1', off + 4, off + 4 + kl); off += 4 + kl;
      const vl = raw.readUInt32BE(off); out[k] = raw.toString('latin1', off + 4, off + 4 + vl); off += 4 + vl;
    }
    return out;
  };
  const reply = async (id: number) => {
    const idb = Buffer.alloc(4);
    idb.writeUInt32BE(id);
    control(SYN_REPLY, 0, Buffer.concat([idb, await deflate(Buffer.alloc(4))]));
  };

  const opened = (s: Stream) => ('portForward' in mode ? forwardPort(s) : execStream(s));

  // exec / attach: run once the streams the query asked for are all open
  const q = new URL(req.url!, 'https://agent').searchParams;
  const want = ['error', ...(q.get('input') ? ['stdin'] : []), ...(q.get('output') ? ['stdout'] : []), ...(q.get('error') && !q.get('tty') ? ['stderr'] : [])];
  const byType = new Map<string, Stream>();
  let started = false;
  const execStream = (s: Stream) => {
    byType.set(s.headers.streamtype, s);
    if (started || !want.every((t) => byType.has(t))) return;
    started = true;
    const m = mode as { argv?: string[]; attach: string };
    let done = false;
    const io: Run = {
      stdout: (d) => { const o = byType.get('stdout'); if (o) data(o, d); },
      stderr: (d) => { const e = byType.get('stderr') ?? byType.get('stdout'); if (e) data(e, d); },
      exit: (code) => {
        if (done) return;
        done = true;
        for (const t of ['stdout', 'stderr']) { const x = byType.get(t); if (x) data(x, '', true); }
        const err = byType.get('error')!;
        if (protocol === 'v4.channel.k8s.io') data(err, exitStatus(code));
        else if (code !== 0) data(err, `command terminated with exit code ${code}`);
        data(err, '', true);
      },
    };
    const sink = m.argv ? runCommand(m.argv, io) : (() => { io.stdout(`attached to ${m.attach}\n`); return (c: Buffer | null) => { if (c) io.stdout(c); else io.exit(0); }; })();
    const stdin = byType.get('stdin');
    if (stdin) { stdin.onData = (d) => sink(d); stdin.onFin = () => sink(null); }
  };

  // port-forward: each data stream reaches a fake service at the port that answers "echo:<bytes>"
  const forwardPort = (s: Stream) => {
    if (s.headers.streamtype !== 'data') return;
    s.onData = (d) => data(s, Buffer.concat([Buffer.from(`echo from port ${s.headers.port}: `), d]));
    s.onFin = () => data(s, '', true);
  };

  // frames are handled one after another (header blocks decompress asynchronously, in order)
  const frame = async (isControl: boolean, type: number, id: number, flags: number, body: Buffer) => {
    if (!isControl) {
      const s = streams.get(id);
      if (s && body.length) s.onData?.(body);
      if (s && flags & FLAG_FIN) s.onFin?.();
      return;
    }
    if (type === SYN_STREAM) {
      const s: Stream = { id: body.readUInt32BE(0) & 0x7fffffff, headers: await headerBlock(body.subarray(10)), closed: false };
      streams.set(s.id, s);
      await reply(s.id);
      opened(s);
      if (flags & FLAG_FIN) s.onFin?.();
    } else if (type === PING) {
      control(PING, 0, body);
    } else if (type === RST_STREAM) {
      const s = streams.get(body.readUInt32BE(0) & 0x7fffffff);
      if (s) s.closed = true;
    } else if (type === GOAWAY) {
      sock.end();
    }
  };
  let chain = Promise.resolve();
  let buf: Buffer = head;
  const onData = (chunk: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    while (buf.length >= 8) {
      const len = buf.readUInt32BE(4) & 0xffffff;
      if (buf.length < 8 + len) return;
      const args = [(buf[0] & 0x80) !== 0, buf.readUInt16BE(2), buf.readUInt32BE(0) & 0x7fffffff, buf[4], Buffer.from(buf.subarray(8, 8 + len))] as const;
      buf = buf.subarray(8 + len);
      chain = chain.then(() => frame(...args)).catch(() => { sock.destroy(); });
    }
  };
  sock.on('data', onData);
  sock.on('error', () => sock.destroy());
  sock.on('close', () => { inflater.close(); deflater.close(); });
  if (head.length) onData(Buffer.alloc(0));
}
