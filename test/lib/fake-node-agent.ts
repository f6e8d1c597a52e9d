// A small fake node agent for tests: HTTPS with a test CA, requiring and recording the API server's
// client certificate, serving what the server proxies to a node agent — /containerLogs (with
// follow), /exec and /attach over the WebSocket channel protocols (v4/v5.channel.k8s.io) and over
// SPDY/3.1 (test/lib/spdy.ts), /portForward over SPDY/3.1, and any other path as plain text (for
// nodes/proxy). Commands it "runs": `echo ARGS` (ARGS on stdout), `cat` (stdin back to stdout until
// stdin closes), `fail N` (exit status N), anything else exits 127.
import https from 'node:https';
import net from 'node:net';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { IncomingMessage } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateCA, signCert } from '../../kernel/ops/pki.js';
import type { TestServer } from './server.js';
import { serveSpdy } from './spdy.js';

export interface AgentRequest { method: string; path: string; cn: string; headers: IncomingMessage['headers'] }
export interface FakeNodeAgent { port: number; seen: AgentRequest[]; close(): void }

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const WS_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'];

/** Outcome of a fake command: what it wrote and its exit status. */
export interface Run { stdout: (d: Buffer | string) => void; stderr: (d: Buffer | string) => void; exit: (code: number) => void }

/** Runs a fake command against stdin chunks (null: stdin closed). Returns the stdin sink. */
export function runCommand(argv: string[], io: Run): (chunk: Buffer | null) => void {
  const [cmd, ...args] = argv;
  if (cmd === 'echo') { io.stdout(`${args.join(' ')}\n`); io.exit(0); return () => {}; }
  if (cmd === 'fail') { io.stderr('failing\n'); io.exit(Number(args[0] ?? 1)); return () => {}; }
  if (cmd === 'cat') return (c) => { if (c) io.stdout(c); else io.exit(0); };
  io.stderr(`${cmd}: not found\n`);
  io.exit(127);
  return () => {};
}

/** The error channel's content for an exit status, as the node agent writes it (a Status). */
export function exitStatus(code: number): string {
  if (code === 0) return JSON.stringify({ metadata: {}, status: 'Success' });
  return JSON.stringify({
    metadata: {}, status: 'Failure', message: `command terminated with non-zero exit code: error executing command [fake], exit code ${code}`,
    reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  });
}

function wsFrame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x80 | opcode, len]) : len < 0x10000 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (len >= 126) {
    head[0] = 0x80 | opcode;
    if (len < 0x10000) { head[1] = 126; head.writeUInt16BE(len, 2); } else { head[1] = 127; head.writeBigUInt64BE(BigInt(len), 2); }
  }
  return Buffer.concat([head, payload]);
}

/** The channel protocol over a WebSocket: frames carry a channel byte (0 stdin, 1 stdout, 2 stderr, 3 error; v5: 255 closes a channel). */
function serveChannels(sock: Duplex, head: Buffer, protocol: string, argv: string[] | undefined, attach: string): void {
  const send = (ch: number, d: Buffer | string) => { if (!sock.destroyed) sock.write(wsFrame(2, Buffer.concat([Buffer.from([ch]), Buffer.from(d)]))); };
  let done = false;
  const io: Run = {
    stdout: (d) => send(1, d), stderr: (d) => send(2, d),
    exit: (code) => {
      if (done) return;
      done = true;
      send(3, exitStatus(code));
      sock.write(wsFrame(8, Buffer.from([0x03, 0xe8])));
      setTimeout(() => sock.end(), 50);
    },
  };
  // A container's output comes a moment after the exec starts, as on a real node: kubectl 1.32's
  // WebSocket client discards ("Unknown stream id 1") output that reaches it before it has set up its
  // streams, which an at-once echo did under load (a client race, not the server's). Input that
  // arrives meanwhile waits for the command.
  const early: (Buffer | null)[] = [];
  let stdin: (c: Buffer | null) => void = (c) => { early.push(c); };
  setTimeout(() => {
    const sink = argv ? runCommand(argv, io) : (() => { io.stdout(`attached to ${attach}\n`); return (c: Buffer | null) => { if (c) io.stdout(c); else io.exit(0); }; })();
    stdin = sink;
    for (const c of early.splice(0)) sink(c);
  }, 200);
  let buf: Buffer = head;
  const onData = (d: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    for (;;) {
      if (buf.length < 2) return;
      const op = buf[0] & 0x0f;
      let len = buf[1] & 0x7f;
      let off = 2;
      if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); off = 4; } else if (len === 127) { if (buf.length < 10) return; len = Number(buf.readBigUInt64BE(2)); off = 10; }
      const masked = (buf[1] & 0x80) !== 0;
      const total = off + (masked ? 4 : 0) + len;
      if (buf.length < total) return;
      const payload = Buffer.from(buf.subarray(total - len, total));
      if (masked) { const m = buf.subarray(off, off + 4); for (let i = 0; i < len; i++) payload[i] ^= m[i & 3]; }
      buf = buf.subarray(total);
      if (op === 8) { sock.end(wsFrame(8, payload.subarray(0, 2))); return; }
      if (op === 9) { sock.write(wsFrame(10, payload)); continue; }
      if ((op === 1 || op === 2) && payload.length) {
        if (payload[0] === 0) stdin(payload.subarray(1));
        else if (payload[0] === 255 && payload[1] === 0 && protocol.startsWith('v5')) stdin(null);
      }
    }
  };
  sock.on('data', onData);
  sock.on('error', () => sock.destroy());
  if (head.length) onData(Buffer.alloc(0));
}

export async function startFakeNodeAgent(ca: { certPem: string; keyPem: string }, host = '127.0.0.1'): Promise<FakeNodeAgent> {
  const serving = await signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: 'node-1' }, ips: [host], usages: ['serverAuth'], days: 1 });
  const seen: AgentRequest[] = [];
  const record = (req: IncomingMessage) => {
    const cn = String((req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '');
    seen.push({ method: req.method!, path: req.url!, cn, headers: req.headers });
  };
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    record(req);
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/?]+)(\?.*)?$/.exec(req.url!);
    if (/^\/(exec|attach|portForward)\//.test(req.url!)) { res.writeHead(400, { 'content-type': 'text/plain' }); res.end('Upgrade request required'); return; }
    if (req.url!.startsWith('/page.html')) {
      // links for a proxy to rewrite: absolute paths and this host's URLs; relative ones and other hosts stay
      const host = `${req.headers.host}`;
      const html = `<html><head><link rel="stylesheet" href="/style.css"></head><body><a href="/metrics">m</a> <IMG SRC='/logo.png' alt="/not-a-link"> <a href="relative/x">r</a> <a href="https://${host}/abs?q=1#f">a</a> <a href="https://other.example/x">o</a><script src=/app.js></script><p title="/kept">text with /path</p></body></html>`;
      const gz = req.url!.includes('gzip');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...(gz ? { 'content-encoding': 'gzip' } : {}) });
      res.end(gz ? gzipSync(html) : html);
      return;
    }
    if (req.url === '/redirect') { res.writeHead(302, { location: '/healthz' }); res.end(); return; }
    if (!m) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end(`node agent ${req.method} ${req.url}${chunks.length ? ` body=${Buffer.concat(chunks)}` : ''}\n`); });
      return;
    }
    const q = new URLSearchParams(m[4]?.slice(1) ?? '');
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write(`log of ${m[1]}/${m[2]}/${m[3]} line 1\n`);
    if (q.get('follow') !== 'true') { res.end(`log of ${m[1]}/${m[2]}/${m[3]} line 2\n`); return; }
    let n = 2;
    const timer = setInterval(() => { res.write(`follow line ${n++}\n`); if (n > 4) { clearInterval(timer); res.end(); } }, 100);
    req.on('close', () => clearInterval(timer));
  });
  server.on('upgrade', (req: IncomingMessage, sock: Duplex, head: Buffer) => {
    record(req);
    const url = new URL(req.url!, 'https://agent');
    const m = /^\/(exec|attach|portForward)\/([^/]+)\/([^/]+)(?:\/([^/]+))?$/.exec(url.pathname);
    const refuse = (code: number, text: string) => sock.end(`HTTP/1.1 ${code} Refused\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
    if (!m) return refuse(404, 'not found');
    const argv = m[1] === 'exec' ? url.searchParams.getAll('command') : undefined;
    const upgrade = String(req.headers.upgrade ?? '').toLowerCase();
    if (upgrade === 'websocket') {
      const offered = String(req.headers['sec-websocket-protocol'] ?? '').split(',').map((s) => s.trim());
      const protocol = m[1] === 'portForward' ? undefined : WS_PROTOCOLS.find((p) => offered.includes(p));
      if (!protocol) return refuse(400, `unsupported WebSocket subprotocols: ${offered.join(', ')}`);
      const accept = createHash('sha1').update(String(req.headers['sec-websocket-key']) + GUID).digest('base64');
      sock.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\nSec-WebSocket-Protocol: ${protocol}\r\n\r\n`);
      return serveChannels(sock, head, protocol, argv, m[4] ?? '');
    }
    if (upgrade === 'spdy/3.1') return serveSpdy(req, sock, head, m[1] === 'portForward' ? { portForward: true } : { argv, attach: m[4] ?? '' });
    refuse(400, 'Upgrade request required');
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return { port: (server.address() as net.AddressInfo).port, seen, close: () => { server.close(); server.closeAllConnections(); } };
}

/** A test CA for node agents, the server's client certificate from it, and the server flags that use them. */
export async function nodeAgentCredentials(): Promise<{ ca: { certPem: string; keyPem: string }; args: string[] }> {
  const ca = await generateCA({ CN: 'node-agent-ca' });
  const client = await signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: 'apiserver-node-agent-client', O: ['system:masters'] }, usages: ['clientAuth'], days: 1 });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-na-'));
  const f = (n: string, c: string) => { const p = path.join(dir, n); writeFileSync(p, c); return p; };
  return { ca, args: ['--kubelet-client-certificate', f('client.crt', client.certPem), '--kubelet-client-key', f('client.key', client.keyPem), '--kubelet-certificate-authority', f('ca.crt', ca.certPem)] };
}

/** Registers a node whose agent listens on 127.0.0.1:port. */
export async function registerNode(s: TestServer, name: string, port: number): Promise<void> {
  await s.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name } } });
  const r = await s.request('PATCH', `/api/v1/nodes/${name}/status`, {
    body: { status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } } },
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  if (r.status !== 200) throw new Error(`node ${name}: ${r.status} ${r.text}`);
}
