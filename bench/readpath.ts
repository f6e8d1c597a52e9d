// Read-path scenarios of the bench: LIST of 10,000 objects, watch fan-out to 100 and 1,000 watchers
// while a writer runs, and server memory at 10,000 / 100,000 objects and with 10,000 idle watchers.
// Watchers and the writer run in forked processes (one per core) over raw TLS sockets, so the
// load generator's own cost stays small; every figure comes with the CPU that produced it.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { machineBusySeconds, percentile, procCpuSeconds, startBenchServer, table } from './lib.js';
import { authLine, tlsOptions, type Target } from './target.js';
import protobuf from 'protobufjs';
import { metaCodec, unwrap } from '../kernel/api/repr/protobuf.js';

const self = fileURLToPath(import.meta.url);
const pad = (n: number) => 'x'.repeat(n);

/**
 * What the read-path scenarios list and watch: ConfigMaps, or custom resources of the same shape
 * (a `data` map of strings) served from a CustomResourceDefinition, to compare the two paths.
 */
export type Resource = 'configmaps' | 'custom';
const collection = (r: Resource | undefined, ns: string) => (r === 'custom' ? `/apis/bench.example.com/v1/namespaces/${ns}/benchmaps` : `/api/v1/namespaces/${ns}/configmaps`);
const objectBody = (r: Resource | undefined, name: string, data: Record<string, string>) =>
  r === 'custom' ? { apiVersion: 'bench.example.com/v1', kind: 'BenchMap', metadata: { name }, data } : { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data };

/** The CustomResourceDefinition of the custom resources the `-cr` scenarios use, created and Established. */
export async function defineBenchResource(t: Target): Promise<void> {
  const agent = new https.Agent({ keepAlive: true });
  const group = await timedGet(t, agent, '/apis').then((r) => (JSON.parse(r.body.toString()).groups as { name: string }[]).find((g) => g.name.startsWith('apiextensions.'))!.name);
  const crd = {
    apiVersion: `${group}/v1`, kind: 'CustomResourceDefinition', metadata: { name: 'benchmaps.bench.example.com' },
    spec: { group: 'bench.example.com', scope: 'Namespaced', names: { plural: 'benchmaps', singular: 'benchmap', kind: 'BenchMap' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { data: { type: 'object', additionalProperties: { type: 'string' } } } } } }] },
  };
  await new Promise<void>((resolve, reject) => {
    const req = https.request({ host: t.host, port: t.port, path: `/apis/${group}/v1/customresourcedefinitions`, method: 'POST', ...tlsOptions(t), agent,
      headers: { 'content-type': 'application/json', ...(t.token ? { authorization: `Bearer ${t.token}` } : {}) } }, (res) => { res.resume(); res.on('end', () => (res.statusCode === 201 || res.statusCode === 409 ? resolve() : reject(new Error(`create CRD: ${res.statusCode}`)))); });
    req.on('error', reject);
    req.end(JSON.stringify(crd));
  });
  for (let i = 0; i < 200; i++) {
    try { await timedGet(t, agent, `${collection('custom', t.namespace)}?limit=1`); agent.destroy(); return; } catch { await new Promise((r) => setTimeout(r, 50)); }
  }
  throw new Error('the bench CustomResourceDefinition was not served');
}

export interface ReadResult { scenario: string; [k: string]: string | number }

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : 0;
}

/** RSS of every process of a target (the reference is kube-apiserver plus etcd): the sum, and each ("689 + 199"). */
function rssOf(pids: number[]): { 'RSS MiB': number; 'per process MiB': string } {
  const each = pids.map(rssMiB);
  return { 'RSS MiB': each.reduce((a, b) => a + b, 0), 'per process MiB': each.join(' + ') };
}

/** GET a path and read the whole body (not parsed): milliseconds and bytes. */
/** The Protobuf media type the `-pb` scenarios ask for (the kubernetes brand's; the reference's). */
export const PROTOBUF = 'application/vnd.kubernetes.protobuf';

function timedGet(t: Target, agent: https.Agent, p: string, accept = 'application/json'): Promise<{ ms: number; bytes: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const headers: Record<string, string> = { accept };
    if (t.token) headers.authorization = `Bearer ${t.token}`;
    const req = https.request({ host: t.host, port: t.port, path: p, ...tlsOptions(t), agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        if (res.statusCode !== 200) return reject(new Error(`GET ${p}: ${res.statusCode} ${body.toString().slice(0, 200)}`));
        resolve({ ms: performance.now() - t0, bytes: body.length, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Creates `n` ConfigMaps of about `size` bytes in the target's namespace from forked writer processes. */
export async function fill(t: Target, n: number, size: number, prefix: string, resource?: Resource, concurrency = 64): Promise<void> {
  const workers = Math.max(1, Math.min(2, os.cpus().length));
  await Promise.all(Array.from({ length: workers }, (_, w) => runChild({ role: 'writer', target: wire(t), count: Math.ceil(n / workers), concurrency: Math.ceil(concurrency / workers), size, prefix: `${prefix}-${w}`, resource })));
}

/** What a child process needs of a target to reach it. */
type TargetWire = Pick<Target, 'host' | 'port' | 'token' | 'ca' | 'cert' | 'key' | 'namespace'>;
const wire = (t: Target): TargetWire => ({ host: t.host, port: t.port, token: t.token, ca: t.ca, cert: t.cert, key: t.key, namespace: t.namespace });
const connect = (t: TargetWire) => tls.connect({ host: t.host, port: t.port, ...tlsOptions(t as Target) });

// ------------------------------------------------------------------ child processes

interface ChildInit {
  role: 'writer' | 'watchers';
  target: TargetWire;
  count: number; // writer: objects to create (0: until told to stop); watchers: connections
  concurrency?: number; size?: number; prefix?: string;
  path?: string; probes?: number;
  resource?: Resource;
  /** Watchers: ask for Protobuf frames instead of JSON lines. */
  protobuf?: boolean;
}

function runChild(init: ChildInit, onStarted?: (c: ChildProcess) => void): Promise<any> {
  return new Promise((resolve, reject) => {
    const c = fork(self, ['--readpath-child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    c.on('message', (m: any) => {
      if (m.type === 'ready') onStarted?.(c);
      if (m.type === 'done') { resolve(m); c.kill(); }
    });
    c.once('exit', (code) => (code ? reject(new Error(`bench child exited ${code}`)) : undefined));
    c.send(init);
  });
}

/** A keep-alive raw HTTP/1.1 request loop on one TLS socket (writer). */
function rawPoster(init: ChildInit) {
  const t = init.target;
  const sock = connect(t);
  sock.setNoDelay(true);
  let buf = '';
  let waiting: (() => void) | undefined;
  sock.on('data', (d: Buffer) => {
    buf += d.toString('latin1');
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const len = Number(/content-length:\s*(\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
    if (buf.length < end + 4 + len) return;
    buf = buf.slice(end + 4 + len);
    const w = waiting;
    waiting = undefined;
    w?.();
  });
  return {
    post(body: string): Promise<void> {
      return new Promise((resolve) => {
        waiting = resolve;
        sock.write(`POST ${collection(init.resource, t.namespace!)} HTTP/1.1\r\nHost: ${t.host}\r\n${authLine(t as Target)}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      });
    },
    close: () => sock.destroy(),
  };
}

async function childMain() {
  const init = await new Promise<ChildInit>((r) => process.once('message', (m) => r(m as ChildInit)));
  const cpu0 = process.cpuUsage();
  if (init.role === 'writer') {
    let stop = false;
    process.on('message', (m: any) => { if (m.type === 'stop') stop = true; });
    let made = 0;
    const loop = async (k: number) => {
      const p = rawPoster(init);
      for (let i = 0; !stop && (init.count === 0 || made < init.count); i++) {
        made++;
        const body = JSON.stringify(objectBody(init.resource, `${init.prefix}-${k}-${i}`, { t: String(Date.now()), pad: pad(init.size ?? 100) }));
        await p.post(body);
      }
      p.close();
    };
    process.send!({ type: 'ready' });
    await Promise.all(Array.from({ length: init.concurrency ?? 8 }, (_, k) => loop(k)));
    const c = process.cpuUsage(cpu0);
    process.send!({ type: 'done', made, cpuSeconds: (c.user + c.system) / 1e6 });
    return;
  }
  // Watchers: count events by their `{"type":"` prefix (Protobuf: the envelope magic, once per
  // event); probes also read the writer's timestamp (Protobuf: the data map entry "t").
  const pb = !!init.protobuf;
  const marker = pb ? Buffer.from('k8s\0', 'latin1') : Buffer.from('{"type":"');
  const tmark = pb ? Buffer.from([0x0a, 0x01, 0x74, 0x12]) : Buffer.from('"t":"');
  const stamp = (d: Buffer, t: number) => (pb ? d.toString('latin1', t + tmark.length + 1, t + tmark.length + 1 + d[t + tmark.length]) : d.toString('latin1', t + tmark.length, d.indexOf(34, t + tmark.length)));
  let events = 0;
  let open = 0;
  let failed = 0;
  let counting = false;
  const latencies: number[] = [];
  const sockets: tls.TLSSocket[] = [];
  // Probes are spread over the connections, not the first ones opened: the server writes its
  // watchers in the order they came, so the first ones would only ever show the head of a fan-out.
  const probes = Math.min(init.probes ?? 0, init.count);
  const every = probes ? Math.floor(init.count / probes) : 0;
  if (!init.count) process.send!({ type: 'ready', failed: 0 });
  for (let i = 0; i < init.count; i++) {
    const probe = probes > 0 && i % every === every - 1 && i < every * probes;
    const sock = connect(init.target);
    sockets.push(sock);
    // ready once every connection is open or has failed (a server out of file descriptors refuses
    // some: they are counted, not waited for)
    let settled = false;
    const settle = (ok: boolean) => {
      if (settled) return;
      settled = true;
      if (ok) open++;
      else failed++;
      if (open + failed === init.count) process.send!({ type: 'ready', failed });
    };
    sock.on('secureConnect', () => {
      sock.write(`GET ${init.path} HTTP/1.1\r\nHost: ${init.target.host}\r\n${authLine(init.target as Target)}Accept: ${pb ? PROTOBUF : 'application/json'}\r\n\r\n`);
    });
    // open: the watch's answer has begun (a TLS handshake alone does not say the server took it)
    sock.once('data', (d: Buffer) => settle(d.subarray(0, 12).toString('latin1') === 'HTTP/1.1 200'));
    sock.on('close', () => settle(false));
    sock.on('data', (d: Buffer) => {
      if (!counting) return;
      let i = d.indexOf(marker);
      while (i >= 0) {
        events++;
        if (probe) {
          const t = d.indexOf(tmark, i);
          if (t >= 0) latencies.push(Date.now() - Number(stamp(d, t)));
        }
        i = d.indexOf(marker, i + marker.length);
      }
    });
    sock.on('error', () => {});
    if (i % 200 === 199) await new Promise((r) => setTimeout(r, 20)); // do not storm the accept queue
  }
  process.on('message', (m: any) => {
    if (m.type === 'count') { counting = true; events = 0; latencies.length = 0; }
    if (m.type === 'report') {
      const c = process.cpuUsage(cpu0);
      process.send!({ type: 'done', events, latencies, failed, cpuSeconds: (c.user + c.system) / 1e6 });
      for (const s of sockets) s.destroy();
    }
  });
}

// ------------------------------------------------------------------ scenarios

/** The CPU seconds of a target's server process, when it is known (NaN otherwise). */
const cpuOf = (t: Target) => (t.pid ? procCpuSeconds(t.pid) : NaN);

/** The current resourceVersion of the target's namespace list, to start watches from. */
async function currentRV(t: Target, agent: https.Agent, resource?: Resource): Promise<string> {
  const r = await timedGet(t, agent, `${collection(resource, t.namespace)}?limit=1`);
  return JSON.parse(r.body.toString()).metadata.resourceVersion;
}

/** The continue token of a Protobuf list: ListMeta (field 1 of the list message) field 3. */
function protobufContinue(body: Buffer): string {
  const env = unwrap(body);
  const r = protobuf.Reader.create(env.raw);
  if (r.uint32() !== 10) return '';
  const len = r.uint32();
  return (metaCodec.decode('meta.v1.ListMeta', env.raw.subarray(r.pos, r.pos + len)) as { continue?: string }).continue ?? '';
}

export async function benchList(t: Target, objects = 10_000, size = 1024, resource?: Resource, accept = 'application/json'): Promise<ReadResult[]> {
  const s = t;
  {
    await fill(s, objects, size - 200, 'l', resource);
    const agent = new https.Agent({ keepAlive: true });
    const out: ReadResult[] = [];
    const measure = async (label: string, once: () => Promise<number>) => {
      for (let i = 0; i < 3; i++) await once(); // warm
      const ms: number[] = [];
      const c0 = cpuOf(s);
      for (let i = 0; i < 15; i++) ms.push(await once());
      const srvMs = ((cpuOf(s) - c0) * 1000) / 15;
      ms.sort((a, b) => a - b);
      out.push({ scenario: (resource === 'custom' ? 'list-cr' : 'list') + (accept === PROTOBUF ? '-pb' : ''), target: s.label, case: label, objects, 'p50 ms': ms[7].toFixed(1), 'min ms': ms[0].toFixed(1), 'max ms': ms[14].toFixed(1), 'server CPU ms/list': srvMs.toFixed(1) });
    };
    const base = collection(resource, s.namespace);
    const first = await timedGet(s, agent, base);
    const count = JSON.parse(first.body.toString()).items.length;
    // The server may hold objects of its own there (e.g. the root CA ConfigMap): at least ours.
    if (count < objects) throw new Error(`list returned ${count} items, expected ${objects}`);
    await measure('consistent (resourceVersion unset)', async () => (await timedGet(s, agent, base, accept)).ms);
    await measure('any (resourceVersion=0)', async () => (await timedGet(s, agent, `${base}?resourceVersion=0`, accept)).ms);
    await measure('paged by 500 (all chunks)', async () => {
      let total = 0;
      let cont = '';
      do {
        const r = await timedGet(s, agent, `${base}?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`, accept);
        total += r.ms;
        cont = accept === PROTOBUF ? protobufContinue(r.body) : JSON.parse(r.body.toString()).metadata.continue;
      } while (cont);
      return total;
    });
    agent.destroy();
    return out;
  }
}

export async function benchWatch(t: Target, watchers: number, seconds = 5, writers = 8, resource?: Resource, protobuf = false): Promise<ReadResult> {
  const s = t;
  {
    const agent = new https.Agent({ keepAlive: false });
    const rv = await currentRV(s, agent, resource);
    agent.destroy();
    const procs = Math.max(1, Math.min(2, os.cpus().length));
    const children: ChildProcess[] = [];
    const reports = Array.from({ length: procs }, (_, w) => runChild({ role: 'watchers', target: wire(s), count: Math.ceil(watchers / procs), path: `${collection(resource, s.namespace)}?watch=1&resourceVersion=${rv}`, probes: 10, protobuf }, (c) => children.push(c)));
    while (children.length < procs) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    for (const c of children) c.send({ type: 'count' });
    const cpu0 = cpuOf(s);
    const busy0 = machineBusySeconds();
    const t0 = performance.now();
    let writer!: ChildProcess;
    const wrote = runChild({ role: 'writer', target: wire(s), count: 0, concurrency: writers, size: 700, prefix: 'w', resource }, (c) => (writer = c));
    await new Promise((r) => setTimeout(r, seconds * 1000));
    writer.send({ type: 'stop' });
    const w = await wrote;
    await new Promise((r) => setTimeout(r, 500)); // let in-flight deliveries land
    const elapsed = (performance.now() - t0) / 1000;
    const srvCpu = cpuOf(s) - cpu0;
    for (const c of children) c.send({ type: 'report' });
    const rs = await Promise.all(reports);
    const busy = machineBusySeconds() - busy0;
    const events = rs.reduce((a, r) => a + r.events, 0);
    const lat = rs.flatMap((r) => r.latencies).sort((a: number, b: number) => a - b);
    const clientCpu = rs.reduce((a, r) => a + r.cpuSeconds, 0) + w.cpuSeconds;
    return {
      scenario: (resource === 'custom' ? 'watch-cr' : 'watch') + (protobuf ? '-pb' : ''), target: s.label, watchers, 'writes/s': Math.round(w.made / seconds), 'deliveries/s': Math.round(events / elapsed),
      'expected': w.made * watchers, delivered: events, 'p50 ms': lat.length ? percentile(lat, 50) : '-', 'p99 ms': lat.length ? percentile(lat, 99) : '-',
      'server CPU %': Number.isNaN(srvCpu) ? '-' : Math.round((srvCpu / elapsed) * 100), 'client CPU %': Math.round((clientCpu / elapsed) * 100), 'machine busy %': Math.round((busy / elapsed) * 100),
    };
  }
}

/** ConfigMaps in the target's namespace, from a one-item list's remainingItemCount (the fill does not check each answer). */
async function countObjects(t: Target): Promise<number> {
  const agent = new https.Agent({ keepAlive: false });
  const l = JSON.parse((await timedGet(t, agent, `${collection(undefined, t.namespace)}?limit=1`)).body.toString());
  return (l.items?.length ?? 0) + (l.metadata?.remainingItemCount ?? 0);
}

/**
 * RSS of a server filled through its API with 10,000 and then 100,000 ConfigMaps of about 1 KiB (32
 * concurrent creates), read from /proc of its processes: ours, or any server on this machine whose
 * pids are given (--target-pid, summed: kube-apiserver and etcd). Ours alone also gets the idle
 * watchers case, on a fresh server of its own.
 */
/** How long the memory scenario waits after each fill before its second reading of RSS. */
const SETTLE_MS = 20_000;
export const SETTLED = 'RSS MiB 20 s later';

export async function benchMemory(make: () => Promise<Target>, watchers = true): Promise<ReadResult[]> {
  const out: ReadResult[] = [];
  const s = await make();
  const pids = s.pids ?? (s.pid ? [s.pid] : []);
  if (!pids.length) { await s.stop(); throw new Error(`memory: the RSS of ${s.label} is read from /proc: give its pid(s) with --target-pid`); }
  const ours = s.label === 'ours';
  const row = async (label: string, expect?: number) => {
    const objects = expect === undefined ? '' : await countObjects(s);
    // at least: ours may hold the namespace's root CA ConfigMap too
    if (expect !== undefined && Number(objects) < expect) throw new Error(`memory: ${s.label} holds ${objects} ConfigMaps in ${s.namespace}, expected ${expect} (creates failed)`);
    const atOnce = rssOf(pids);
    // and once the writes have been still a while: what a filled server holds, without the fill's
    // garbage (ours collects it a few seconds after a burst of writes; kernel/ops/settle.ts)
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    out.push({ scenario: 'memory', target: s.label, case: label, objects, ...atOnce, [SETTLED]: rssOf(pids)['RSS MiB'] });
  };
  try {
    await row(ours ? 'empty server' : 'before the fill (a running server)');
    await fill(s, 10_000, 800, 'm', undefined, 32);
    await row('10,000 objects of 1 KiB', 10_000);
    await fill(s, 90_000, 800, 'n', undefined, 32);
    await row('100,000 objects of 1 KiB', 100_000);
  } finally {
    await s.stop();
  }
  if (!ours || !watchers) return out;
  const ws = await startBenchServer([]);
  const w: Target = { label: 'ours', host: '127.0.0.1', port: ws.port, token: ws.token, ca: ws.ca, pid: ws.pid, namespace: 'default', stop: () => ws.stop() };
  try {
    const before = rssMiB(w.pid!);
    const procs = 2;
    const children: ChildProcess[] = [];
    const reports = Array.from({ length: procs }, () => runChild({ role: 'watchers', target: wire(w), count: 5000, path: '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1' }, (c) => children.push(c)));
    while (children.length < procs) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 1000));
    const after = rssMiB(w.pid!);
    for (const c of children) c.send({ type: 'report' });
    const failed = (await Promise.all(reports)).reduce((n, r) => n + (r.failed ?? 0), 0);
    const open = 10_000 - failed;
    out.push({ scenario: 'memory', target: 'ours', case: `10,000 idle watchers (${open.toLocaleString('en-US')} opened${failed ? `; ${failed} connections failed` : ''})`, 'RSS MiB': after, 'per watcher KiB': open ? (((after - before) * 1024) / open).toFixed(1) : '' });
  } finally {
    await w.stop();
  }
  return out;
}

/**
 * Restart with many objects: fill a server with `objects` ConfigMaps of 800 bytes through the API,
 * stop it gracefully, start it again on the same data directory and time it to "serving" and to the
 * first answered LIST; RSS once filled and once restarted.
 */
export async function benchRestart(objects: number, keepDataDir = false): Promise<ReadResult[]> {
  const out: ReadResult[] = [];
  const first = await startBenchServer([], [], { keepData: true });
  const dataDir = first.dataDir;
  try {
    const t: Target = { label: 'ours', host: '127.0.0.1', port: first.port, token: first.token, ca: first.ca, pid: first.pid, namespace: 'default', stop: () => first.stop() };
    const t0 = performance.now();
    await fill(t, objects, 800, 'r');
    const fillSeconds = (performance.now() - t0) / 1000;
    out.push({ scenario: 'restart', case: `filled: ${objects.toLocaleString('en-US')} objects`, seconds: fillSeconds.toFixed(1), 'RSS MiB': rssMiB(first.pid) });
    await first.stop();
    const started = performance.now();
    const again = await startBenchServer([], [], { dataDir, keepData: true });
    const serving = (performance.now() - started) / 1000;
    // CPU to serving (all threads; on a shared machine steadier than wall time) and how busy the machine was
    const servingCpu = procCpuSeconds(again.pid);
    const load = os.loadavg()[0].toFixed(2);
    const t2: Target = { ...t, port: again.port, pid: again.pid };
    // the first LIST (one item, so it measures readiness, not transfer)
    const agent = new https.Agent({ keepAlive: true });
    for (;;) {
      try { await timedGet(t2, agent, '/api/v1/namespaces/default/configmaps?limit=1'); break; } catch { await new Promise((r) => setTimeout(r, 20)); }
    }
    agent.destroy();
    const answered = (performance.now() - started) / 1000;
    out.push({ scenario: 'restart', case: 'restarted', 'serving s': serving.toFixed(1), 'first list s': answered.toFixed(1), 'CPU s to serving': servingCpu.toFixed(1), 'load average': load, 'RSS MiB': rssMiB(again.pid) });
    await again.stop();
  } finally {
    if (keepDataDir) process.stderr.write(`restart: data directory kept at ${dataDir}\n`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
  return out;
}

export function printRead(rows: ReadResult[]): string {
  const groups = new Map<string, ReadResult[]>();
  for (const r of rows) groups.set(r.scenario, [...(groups.get(r.scenario) ?? []), r]);
  let s = '';
  for (const [, rs] of groups) {
    const cols = [...new Set(rs.flatMap((r) => Object.keys(r)))];
    s += table(cols, rs.map((r) => cols.map((c) => r[c] ?? ''))) + '\n';
  }
  return s;
}

if (process.argv[2] === '--readpath-child') void childMain();
