// Memory under stalled watchers (issue 20): N watchers open a ConfigMap watch on raw TLS sockets and
// never read, while a writer changes 16 KiB ConfigMaps about 40 times a second and one watcher reads
// everything. Samples the server's RSS, process.memoryUsage() and the output budget's own total
// (/metrics), the write rate, /livez latency and the closed watchers; then closes the stalled sockets,
// collects garbage (through the inspector) and samples again.
//
//   npm run -s build && node --experimental-websocket dist/bench/stalled-watchers.js [--watchers 200] [--seconds 60] [--listener front|direct]
//
// Extra environment (CAPI_OUTPUT_BUDGET_BYTES, CAPI_WATCH_BUDGET_BYTES) goes to the server.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import tls from 'node:tls';
import { startBenchServer } from './lib.js';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const N = Number(arg('watchers', '200'));
const SECONDS = Number(arg('seconds', '60'));
const LISTENER = arg('listener', 'front');
const RATE = Number(arg('rate', '40'));
const MiB = 1024 * 1024;
const CM = '/api/v1/namespaces/default/configmaps';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

const inspectPort = 20000 + Math.floor(Math.random() * 20000);
const s = await startBenchServer(LISTENER === 'direct' ? ['--secure-port-client-certs=false'] : [], [`--inspect=127.0.0.1:${inspectPort}`]);
const agent = new https.Agent({ keepAlive: true, maxSockets: 8 });
function req(method: string, p: string, body?: string, ctype = 'application/json'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${s.token}`, accept: 'application/json' };
    if (body) headers['content-type'] = ctype;
    const r = https.request({ host: '127.0.0.1', port: s.port, method, path: p, headers, ca: s.ca, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
    });
    r.on('error', reject);
    r.end(body);
  });
}

async function gc(): Promise<void> {
  const list = await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json() as { webSocketDebuggerUrl: string }[];
  const ws = new (globalThis as unknown as { WebSocket: new (u: string) => { onopen: () => void; onmessage: () => void; send(s: string): void; close(): void } }).WebSocket(list[0].webSocketDebuggerUrl);
  await new Promise<void>((resolve) => {
    ws.onopen = () => ws.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
    ws.onmessage = () => { ws.close(); resolve(); };
  });
}

const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${s.pid}/status`, 'utf8'))![1]) / 1024;
async function metrics(): Promise<Record<string, number>> {
  const text = (await req('GET', '/metrics')).text;
  const one = (re: RegExp) => { let n = 0; for (const m of text.matchAll(re)) n += Number(m[1]); return n; };
  return {
    queued: one(/^apiserver_output_queued_bytes (\S+)/gm) / MiB,
    backedUp: one(/^apiserver_output_backed_up_streams (\S+)/gm),
    closed: one(/^apiserver_terminated_watchers_total\{[^}]*\} (\S+)/gm),
    watchers: one(/^apiserver_registered_watchers\{[^}]*\} (\S+)/gm),
    heap: one(/^nodejs_memory_bytes\{kind="heap_used"\} (\S+)/gm) / MiB,
    external: one(/^nodejs_memory_bytes\{kind="external"\} (\S+)/gm) / MiB,
    arrayBuffers: one(/^nodejs_memory_bytes\{kind="array_buffers"\} (\S+)/gm) / MiB,
  };
}

// 10 ConfigMaps of 16 KiB, changed in turn
const value = (i: number) => String(i).padStart(16 * 1024, 'x');
for (let i = 0; i < 10; i++) await req('POST', CM, JSON.stringify({ metadata: { name: `cm-${i}` }, data: { v: value(0) } }));

// the reading watcher counts what it gets
let seen = 0;
const reader = tls.connect({ host: '127.0.0.1', port: s.port, ca: s.ca, servername: 'localhost' }, () => {
  reader.write(`GET ${CM}?watch=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.token}\r\n\r\n`);
});
reader.on('data', (d: Buffer) => { for (let i = d.indexOf('{"type"'); i >= 0; i = d.indexOf('{"type"', i + 1)) seen++; });
reader.on('error', () => {});

const stalled: tls.TLSSocket[] = [];
for (let i = 0; i < N; i++) {
  const sock = tls.connect({ host: '127.0.0.1', port: s.port, ca: s.ca, servername: 'localhost' }, () => {
    sock.write(`GET ${CM}?watch=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.token}\r\n\r\n`);
    sock.pause();
  });
  sock.on('error', () => {});
  stalled.push(sock);
  if (i % 50 === 49) await sleep(100);
}

let writes = 0;
let writing = true;
const writer = (async () => {
  let n = 0;
  while (writing) {
    const t0 = performance.now();
    n++;
    const r = await req('PATCH', `${CM}/cm-${n % 10}`, JSON.stringify({ data: { v: value(n) } }), 'application/merge-patch+json');
    if (r.status === 200) writes++;
    await sleep(Math.max(0, 1000 / RATE - (performance.now() - t0)));
  }
})();

console.log(`listener ${LISTENER}, ${N} stalled watchers, ${RATE} writes/s of 16 KiB, ${SECONDS} s; budget ${process.env.CAPI_OUTPUT_BUDGET_BYTES ?? 'default'}; RSS at start ${rssMiB().toFixed(0)} MiB`);
console.log('t(s)\tRSS\tqueued\tbackedUp\twatchers\tclosed\theap\texternal\tarrayBuf\twrites/s\tlivez ms\tread\tload');
const t0 = Date.now();
let lastWrites = 0;
let peak = 0;
const row = async (label: string) => {
  const l0 = performance.now();
  await req('GET', '/livez');
  const livez = performance.now() - l0;
  const m = await metrics();
  const rss = rssMiB();
  peak = Math.max(peak, rss);
  const w = (writes - lastWrites) / 5;
  lastWrites = writes;
  console.log([label, rss.toFixed(0), m.queued.toFixed(1), m.backedUp, m.watchers, m.closed, m.heap.toFixed(0), m.external.toFixed(0), m.arrayBuffers.toFixed(0), w.toFixed(1), livez.toFixed(0), seen, load()].join('\t'));
};
while (Date.now() - t0 < SECONDS * 1000) {
  await sleep(5000);
  await row(String(Math.round((Date.now() - t0) / 1000)));
}
writing = false;
await writer;
console.log(`writes ${writes}, reader saw ${seen} events; peak RSS ${peak.toFixed(0)} MiB`);
for (const x of stalled) x.destroy();
await sleep(5000);
lastWrites = writes;
await row('closed+5s');
await gc();
await sleep(2000);
await row('closed+gc');
reader.destroy();
agent.destroy();
await s.stop();
