// Idle TLS connections against a started server, on the Node.js this script runs on (its transport:
// uWebSockets.js and the TLS front on Node 20, Node's own TLS stack on 22/24):
//   1. the server's RSS before, with N idle connections open, and 5, 20 and 40 s after they closed;
//   2. when the server closes 20 connections that never send a request, and 20 after one request.
//
//   node dist/bench/idle-connections.js [--connections 10000]
//   <node-22>/bin/node dist/bench/idle-connections.js
//
// On the default port each connection takes three of the server's descriptors (docs/operations.md,
// "Open files"): with the usual limit of 20,000, ask for at most 6,000 there.
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import { startBenchServer } from './lib.js';

const arg = (name: string, dflt: number) => { const i = process.argv.indexOf(name); return i > 0 ? Number(process.argv[i + 1]) : dflt; };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const s = await startBenchServer(['--brand', 'kubernetes']);
const rss = () => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${s.pid}/status`, 'utf8'))![1]) / 1024);
const open = (afterRequest = false) => new Promise<tls.TLSSocket | undefined>((resolve) => {
  const c = tls.connect({ host: '127.0.0.1', port: s.port, ca: s.ca, servername: 'localhost' }, () => {
    if (afterRequest) c.write('GET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    resolve(c);
  });
  c.on('data', () => {});
  c.on('error', () => resolve(undefined));
});

try {
  console.log(`Node.js ${process.version}, server pid ${s.pid}`);
  await sleep(5000);
  const n = arg('--connections', 10_000);
  const before = rss();
  const socks: tls.TLSSocket[] = [];
  for (let i = 0; i < n; i += 50) {
    for (const c of await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => open()))) if (c) socks.push(c);
  }
  await sleep(2000);
  console.log(`RSS before ${before} MiB; with ${socks.length} of ${n} idle connections open ${rss()} MiB`);
  for (const c of socks) c.destroy();
  await sleep(5000);
  const after = [rss()];
  await sleep(15_000);
  after.push(rss());
  await sleep(20_000);
  after.push(rss());
  console.log(`RSS 5, 20 and 40 s after they closed: ${after.join(', ')} MiB`);

  const closedAt: Record<string, number[]> = { 'without a request': [], 'after one request': [] };
  const t0 = Date.now();
  for (const [kind, list] of Object.entries(closedAt)) {
    for (let i = 0; i < 20; i++) (await open(kind === 'after one request'))?.on('close', () => list.push(Math.round((Date.now() - t0) / 1000)));
  }
  await sleep(100_000);
  for (const [kind, list] of Object.entries(closedAt)) console.log(`idle connections ${kind}: ${list.length} of 20 closed by the server, at ${list.length ? `${Math.min(...list)}-${Math.max(...list)} s` : '-'}`);
} finally {
  await s.stop();
}
process.exit(0);
