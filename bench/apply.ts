// Write-path scenario of the bench: server-side apply and patches.
// - throughput: applies/s of a small ConfigMap, and merge / strategic patches/s, at concurrency 32
//   (forked load processes on raw keep-alive TLS connections, so the client costs little);
// - latency: sequential applies of a 200-container pod and of ConfigMaps of 10 KiB, 64 KiB,
//   256 KiB and 1 MiB, against servers started with the worker pool off (CAPI_WORKERS=off), with
//   every merge on a worker (CAPI_WORKER_THRESHOLD_BYTES=0) and with the default threshold, while a
//   forked prober keeps GETting a small object: the longest GET during the applies shows how long
//   the server's event loop was blocked;
// - cost: in this process, what the parts of one apply cost at those sizes (the merge itself, the
//   structured clone a worker hop needs, decoding the body with the YAML parser and with JSON.parse),
//   the figures behind the worker threshold.
import { fork, type ChildProcess } from 'node:child_process';
import https from 'node:https';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { serialize } from 'node:v8';
import YAML from 'yaml';
import { brands } from '../kernel/contracts/brand.js';
import type { KObject } from '../kernel/contracts/index.js';
import { builtinTypes } from '../plugins/types/builtin/index.js';
import { runMergeTask, type MergeTask } from '../workers/merge/index.js';
import { machineBusySeconds, percentile, procCpuSeconds, procThreadCpuSeconds, startBenchServer, type BenchServer } from './lib.js';
import type { ReadResult } from './readpath.js';

const self = fileURLToPath(import.meta.url);
const CM_PATH = '/api/v1/namespaces/default/configmaps';
const DEP_PATH = '/apis/apps/v1/namespaces/default/deployments';
const POD_PATH = '/api/v1/namespaces/default/pods';
const APPLY = 'application/apply-patch+yaml';
const MERGE = 'application/merge-patch+json';
const SMP = 'application/strategic-merge-patch+json';

export interface ApplyBenchOptions {
  duration: number;
  warmup: number;
  concurrency?: number[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.timeOrigin + performance.now();
const round = (x: number, d = 2) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : NaN);

// ------------------------------------------------------------------ a minimal keep-alive client

/** One TLS connection, one request at a time; parses status, Content-Length or chunked bodies. */
class Conn {
  private sock: tls.TLSSocket | undefined;
  private buf: Buffer = Buffer.alloc(0);
  private waiter: { ok: (r: { status: number; body: Buffer }) => void; fail: (e: Error) => void } | undefined;

  constructor(private port: number, private ca: string, private token: string) {}

  private open(): tls.TLSSocket {
    const s = tls.connect({ host: '127.0.0.1', port: this.port, ca: this.ca });
    s.setNoDelay(true);
    s.on('data', (d: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      this.tryParse();
    });
    const broken = (e: Error) => {
      if (this.sock === s) this.sock = undefined;
      this.buf = Buffer.alloc(0);
      const w = this.waiter;
      this.waiter = undefined;
      w?.fail(e);
    };
    s.on('error', broken);
    s.on('close', () => broken(new Error('connection closed')));
    return s;
  }

  send(method: string, path: string, contentType?: string, body?: string): Promise<{ status: number; body: Buffer }> {
    this.sock ??= this.open();
    let head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${this.token}\r\nAccept: application/json\r\n`;
    if (body !== undefined) head += `Content-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
    return new Promise((ok, fail) => {
      this.waiter = { ok, fail };
      this.sock!.write(body === undefined ? `${head}\r\n` : head + '\r\n' + body);
    });
  }

  private tryParse(): void {
    if (!this.waiter) return;
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = this.buf.toString('latin1', 0, end);
    const status = Number(head.slice(9, 12));
    const len = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    let body: Buffer;
    let used: number;
    if (len) {
      const n = Number(len[1]);
      if (this.buf.length < end + 4 + n) return;
      body = this.buf.subarray(end + 4, end + 4 + n);
      used = end + 4 + n;
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      const parts: Buffer[] = [];
      let at = end + 4;
      for (;;) {
        const eol = this.buf.indexOf('\r\n', at);
        if (eol < 0) return;
        const size = parseInt(this.buf.toString('latin1', at, eol), 16);
        if (this.buf.length < eol + 2 + size + 2) return;
        if (size === 0) { used = eol + 4; break; }
        parts.push(this.buf.subarray(eol + 2, eol + 2 + size));
        at = eol + 2 + size + 2;
      }
      body = Buffer.concat(parts);
    } else {
      body = Buffer.alloc(0);
      used = end + 4;
    }
    this.buf = this.buf.subarray(used);
    const w = this.waiter;
    this.waiter = undefined;
    w.ok({ status, body });
  }

  close(): void {
    this.sock?.destroy();
  }
}

// ------------------------------------------------------------------ child processes

type LoadKind = 'apply' | 'merge' | 'strategic-cm' | 'strategic-deploy';

interface LoadInit { role: 'load'; port: number; token: string; ca: string; kind: LoadKind; connections: number; prefix: string }
interface ProbeInit { role: 'probe'; port: number; token: string; ca: string; connections: number; path: string }

const smallConfigMap = (name: string, n: number) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { key: 'value', n: String(n) } });
const smallDeployment = (name: string, image: string) => JSON.stringify({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image }] } } },
});

/** What one load request is: method, path, content type and body for iteration `i` on object `name`. */
function loadRequest(kind: LoadKind, name: string, i: number): [string, string, string] {
  switch (kind) {
    case 'apply': return [`${CM_PATH}/${name}?fieldManager=bench`, APPLY, smallConfigMap(name, i)];
    case 'merge': return [`${CM_PATH}/${name}?fieldManager=bench-merge`, MERGE, `{"data":{"n":"${i}"}}`];
    case 'strategic-cm': return [`${CM_PATH}/${name}?fieldManager=bench-smp`, SMP, `{"data":{"n":"${i}"}}`];
    case 'strategic-deploy': return [`${DEP_PATH}/${name}?fieldManager=bench-smp`, SMP, `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"img:${i}"}]}}}}`];
  }
}

async function loadChild(init: LoadInit): Promise<void> {
  let measuring = false;
  let stopping = false;
  let ops = 0;
  let errors = 0;
  let firstError: string | undefined;
  const lat: number[] = [];
  let cpu0 = process.cpuUsage();
  const conns = Array.from({ length: init.connections }, () => new Conn(init.port, init.ca, init.token));
  // Every connection works on its own object, created (by apply) before the load starts.
  const names = conns.map((_, k) => `${init.prefix}-${k}`);
  await Promise.all(conns.map(async (c, k) => {
    const r = init.kind === 'strategic-deploy'
      ? await c.send('PATCH', `${DEP_PATH}/${names[k]}?fieldManager=bench`, APPLY, smallDeployment(names[k], 'img:0'))
      : await c.send('PATCH', `${CM_PATH}/${names[k]}?fieldManager=bench`, APPLY, smallConfigMap(names[k], -1));
    if (r.status !== 201 && r.status !== 200) throw new Error(`setup of ${names[k]}: ${r.status} ${r.body.toString().slice(0, 300)}`);
  }));
  process.on('message', (m: { type: string }) => {
    if (m.type === 'measure') {
      ops = 0;
      errors = 0;
      lat.length = 0;
      cpu0 = process.cpuUsage();
      measuring = true;
    } else if (m.type === 'stop') {
      const c = process.cpuUsage(cpu0);
      measuring = false;
      stopping = true;
      process.send!({ type: 'done', ops, errors, firstError, lat, cpuSeconds: (c.user + c.system) / 1e6 });
    }
  });
  process.send!({ type: 'ready' });
  await Promise.all(conns.map(async (c, k) => {
    for (let i = 0; !stopping; i++) {
      const [p, ct, body] = loadRequest(init.kind, names[k], i);
      const t0 = performance.now();
      try {
        const r = await c.send('PATCH', p, ct, body);
        if (!measuring) continue;
        if (r.status === 200 || r.status === 201) {
          ops++;
          lat.push(performance.now() - t0);
        } else {
          errors++;
          firstError ??= `${r.status} ${r.body.toString().slice(0, 300)}`;
        }
      } catch (e) {
        if (measuring) {
          errors++;
          firstError ??= (e as Error).message;
        }
        await sleep(10);
      }
    }
    c.close();
  }));
}

/** GETs a small object over and over; answers with the GETs that overlapped a window of time. */
async function probeChild(init: ProbeInit): Promise<void> {
  const log: [number, number][] = []; // [start, end] in absolute ms
  let stopping = false;
  process.on('message', (m: { type: string; from?: number; to?: number }) => {
    if (m.type === 'window') {
      const inside = log.filter(([s, e]) => e >= m.from! && s <= m.to!).map(([s, e]) => e - s);
      process.send!({ type: 'window', latencies: inside });
      // Keep the log short: nothing before this window is asked for again.
      const keepFrom = log.findIndex(([, e]) => e >= m.to!);
      log.splice(0, keepFrom < 0 ? log.length : keepFrom);
    } else if (m.type === 'stop') {
      stopping = true;
    }
  });
  const conns = Array.from({ length: init.connections }, () => new Conn(init.port, init.ca, init.token));
  process.send!({ type: 'ready' });
  await Promise.all(conns.map(async (c) => {
    while (!stopping) {
      const s = now();
      try {
        const r = await c.send('GET', init.path);
        if (r.status === 200) log.push([s, now()]);
      } catch {
        await sleep(10);
      }
    }
    c.close();
  }));
  process.exit(0);
}

function spawnChild(init: LoadInit | ProbeInit): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const c = fork(self, ['--apply-child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const onMsg = (m: { type: string }) => {
      if (m.type === 'ready') {
        c.off('message', onMsg);
        resolve(c);
      }
    };
    c.on('message', onMsg);
    c.once('exit', (code) => reject(new Error(`apply bench child exited (${code}) before it was ready`)));
    c.send(init);
  });
}

function ask<T>(c: ChildProcess, msg: object, reply: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { type: string }) => {
      if (m.type === reply) {
        c.off('message', on);
        resolve(m as T);
      }
    };
    c.on('message', on);
    c.send(msg);
  });
}

// ------------------------------------------------------------------ throughput

interface LoadReport { ops: number; errors: number; firstError?: string; lat: number[]; cpuSeconds: number }

async function throughput(s: BenchServer, kind: LoadKind, concurrency: number, o: ApplyBenchOptions, label: string, run: number): Promise<ReadResult> {
  const procs = Math.min(2, concurrency);
  const children = await Promise.all(Array.from({ length: procs }, (_, w) => spawnChild({
    role: 'load', port: s.port, token: s.token, ca: s.ca, kind, prefix: `t${run}-${kind}-${w}`,
    connections: Math.floor(concurrency / procs) + (w < concurrency % procs ? 1 : 0),
  })));
  await sleep(o.warmup * 1000);
  const cpu0 = procThreadCpuSeconds(s.pid);
  const busy0 = machineBusySeconds();
  const t0 = performance.now();
  for (const c of children) c.send({ type: 'measure' });
  await sleep(o.duration * 1000);
  const reports = await Promise.all(children.map((c) => ask<LoadReport>(c, { type: 'stop' }, 'done')));
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = procThreadCpuSeconds(s.pid);
  const busy = machineBusySeconds() - busy0;
  for (const c of children) c.kill();
  const ops = reports.reduce((a, r) => a + r.ops, 0);
  const errors = reports.reduce((a, r) => a + r.errors, 0);
  const lat = Float64Array.from(reports.flatMap((r) => r.lat)).sort();
  const server = cpu1.main + cpu1.others - cpu0.main - cpu0.others;
  const client = reports.reduce((a, r) => a + r.cpuSeconds, 0);
  return {
    scenario: 'apply-throughput', case: label, conc: concurrency, 'ops/s': Math.round(ops / seconds), 'p50 ms': round(percentile(lat, 50)), 'p99 ms': round(percentile(lat, 99)),
    'server CPU %': Math.round((server / seconds) * 100), '(main thr)': Math.round(((cpu1.main - cpu0.main) / seconds) * 100),
    'srv CPU ms/op': ops ? round((server / ops) * 1000, 3) : NaN, 'client CPU %': Math.round((client / seconds) * 100),
    'other CPU %': Math.max(0, Math.round(((busy - server - client) / seconds) * 100)), errors: errors ? `${errors} (${reports.find((r) => r.firstError)?.firstError})` : 0,
  };
}

// ------------------------------------------------------------------ latency of large applies

interface Target { label: string; path: string; body: (v: number) => string; iterations: number }

function configMapOfSize(name: string, bytes: number, v: number): string {
  const keys = Math.max(1, Math.round(bytes / 1024));
  const data: Record<string, string> = {};
  // Values of ~1000 bytes; each apply changes every value (the version number leads each one).
  for (let i = 0; i < keys; i++) data[`key-${String(i).padStart(5, '0')}`] = `${v}-${i}-`.padEnd(Math.min(1000, Math.max(8, bytes - 60)), 'x');
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
}

function podWithContainers(name: string, n: number, v: number): string {
  const containers = Array.from({ length: n }, (_, i) => ({
    name: `c-${i}`, image: `registry.example.com/team/app-${i}:1.${v % 2}`,
    ports: [{ containerPort: 8000 + i, name: `p-${i}` }], env: [{ name: 'INDEX', value: String(i) }],
    resources: { requests: { cpu: '10m', memory: '16Mi' } },
  }));
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers } });
}

const TARGETS: Target[] = [
  { label: 'Pod, 200 containers', path: `${POD_PATH}/pod200`, body: (v) => podWithContainers('pod200', 200, v), iterations: 20 },
  { label: 'ConfigMap 10 KiB', path: `${CM_PATH}/cm10k`, body: (v) => configMapOfSize('cm10k', 10 * 1024, v), iterations: 40 },
  { label: 'ConfigMap 64 KiB', path: `${CM_PATH}/cm64k`, body: (v) => configMapOfSize('cm64k', 64 * 1024, v), iterations: 30 },
  { label: 'ConfigMap 256 KiB', path: `${CM_PATH}/cm256k`, body: (v) => configMapOfSize('cm256k', 256 * 1024, v), iterations: 15 },
  { label: 'ConfigMap 1 MiB', path: `${CM_PATH}/cm1m`, body: (v) => configMapOfSize('cm1m', 1000 * 1024, v), iterations: 8 },
];

function applyOnce(s: BenchServer, agent: https.Agent, p: string, body: string): Promise<{ status: number; ms: number; text: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = https.request({
      host: '127.0.0.1', port: s.port, method: 'PATCH', path: `${p}?fieldManager=bench&force=true`, ca: s.ca, agent,
      headers: { authorization: `Bearer ${s.token}`, accept: 'application/json', 'content-type': APPLY, 'content-length': String(Buffer.byteLength(body)) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - t0, text: res.statusCode! < 300 ? '' : Buffer.concat(chunks).toString().slice(0, 300) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const SERVER_MODES: { label: string; env: Record<string, string> }[] = [
  { label: 'workers off', env: { CAPI_WORKERS: 'off' } },
  { label: 'all on workers', env: { CAPI_WORKER_THRESHOLD_BYTES: '0' } },
  { label: 'default (32 KiB)', env: {} },
];

/** Starts a server with extra environment variables (the spawn inherits process.env at that moment). */
async function startWithEnv(env: Record<string, string>): Promise<BenchServer> {
  const saved: Record<string, string | undefined> = {};
  for (const k of ['CAPI_WORKERS', 'CAPI_WORKER_THRESHOLD_BYTES']) {
    saved[k] = process.env[k];
    delete process.env[k];
  }
  Object.assign(process.env, env);
  try {
    return await startBenchServer([]);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

async function latency(mode: { label: string; env: Record<string, string> }): Promise<ReadResult[]> {
  const s = await startWithEnv(mode.env);
  const out: ReadResult[] = [];
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  let probe: ChildProcess | undefined;
  try {
    const setup = await applyOnce(s, agent, `${CM_PATH}/probe`, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe' }, data: { a: '1' } }));
    if (setup.status !== 201) throw new Error(`probe object: ${setup.status} ${setup.text}`);
    probe = await spawnChild({ role: 'probe', port: s.port, token: s.token, ca: s.ca, connections: 2, path: `${CM_PATH}/probe` });
    await sleep(300);
    const idle = await probeWindow(probe, 500);
    out.push({
      scenario: 'apply-latency', server: mode.label, object: 'none (idle server)', 'body KiB': 0, applies: 0, 'p50 ms': '', 'max ms': '',
      'main thr CPU ms/apply': '', 'other thr CPU ms/apply': '', GETs: idle.length, 'GET p99 ms': round(percentile(idle, 99)), 'GET max ms': round(idle[idle.length - 1]), 'other CPU %': '',
    });
    for (const target of TARGETS) {
      // The first apply creates the object; it is not counted.
      const first = await applyOnce(s, agent, target.path, target.body(0));
      if (first.status !== 201) throw new Error(`${target.label}: ${first.status} ${first.text}`);
      const bodyKiB = Buffer.byteLength(target.body(1)) / 1024;
      const ms: number[] = [];
      const from = now();
      const cpu0 = procThreadCpuSeconds(s.pid);
      const busy0 = machineBusySeconds();
      const mine0 = ownCpuSeconds(probe);
      for (let i = 1; i <= target.iterations; i++) {
        const r = await applyOnce(s, agent, target.path, target.body(i));
        if (r.status !== 200) throw new Error(`${target.label}: ${r.status} ${r.text}`);
        ms.push(r.ms);
      }
      const cpu1 = procThreadCpuSeconds(s.pid);
      const to = now();
      // Busy time of the machine not spent by the server, this process or the prober: other work.
      const other = machineBusySeconds() - busy0 - (cpu1.main + cpu1.others - cpu0.main - cpu0.others) - (ownCpuSeconds(probe) - mine0);
      await sleep(50);
      const gets = await ask<{ latencies: number[] }>(probe, { type: 'window', from, to }, 'window');
      const g = gets.latencies.sort((a, b) => a - b);
      ms.sort((a, b) => a - b);
      out.push({
        scenario: 'apply-latency', server: mode.label, object: target.label, 'body KiB': round(bodyKiB, 1), applies: target.iterations,
        'p50 ms': round(percentile(ms, 50)), 'max ms': round(ms[ms.length - 1]),
        'main thr CPU ms/apply': round(((cpu1.main - cpu0.main) * 1000) / target.iterations), 'other thr CPU ms/apply': round(((cpu1.others - cpu0.others) * 1000) / target.iterations),
        GETs: g.length, 'GET p99 ms': round(percentile(g, 99)), 'GET max ms': round(g[g.length - 1]),
        'other CPU %': Math.max(0, Math.round((other / ((to - from) / 1000)) * 100)),
      });
    }
  } finally {
    if (probe) probe.send({ type: 'stop' });
    agent.destroy();
    await s.stop();
  }
  return out;
}

/** CPU seconds of this process plus the prober's. */
function ownCpuSeconds(probe: ChildProcess): number {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6 + procCpuSeconds(probe.pid!);
}

/** GET latencies of the prober over the next `ms` milliseconds. */
async function probeWindow(probe: ChildProcess, ms: number): Promise<number[]> {
  const from = now();
  await sleep(ms);
  const r = await ask<{ latencies: number[] }>(probe, { type: 'window', from, to: now() }, 'window');
  return r.latencies.sort((a, b) => a - b);
}

// ------------------------------------------------------------------ cost of the parts of one apply

/** Mean milliseconds of `f` over `n` calls, after a few unmeasured ones. */
function meanMs(f: (i: number) => unknown, n: number): number {
  for (let i = 0; i < 3; i++) f(i);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) f(i);
  return (performance.now() - t0) / n;
}

export function applyCosts(): ReadResult[] {
  const types = builtinTypes(brands.cluster);
  const typeOf = (kind: string) => types.find((t) => t.group === '' && t.kind === kind)!;
  const cases: { label: string; kind: string; body: (v: number) => string }[] = [
    ...[1, 10, 64, 256, 1000].map((k) => ({ label: `ConfigMap ${k === 1000 ? '1 MiB' : `${k} KiB`}`, kind: 'ConfigMap', body: (v: number) => configMapOfSize('c', k * 1024, v) })),
    ...[1, 10, 25, 50, 100, 200].map((n) => ({ label: `Pod, ${n} container${n > 1 ? 's' : ''}`, kind: 'Pod', body: (v: number) => podWithContainers('p', n, v) })),
  ];
  const out: ReadResult[] = [];
  for (const c of cases) {
    const type = typeOf(c.kind);
    const task = (live: KObject | null, v: number): MergeTask => ({
      op: 'apply', live, applied: JSON.parse(c.body(v)) as KObject, manager: 'bench', force: true, schema: type.schema, definitions: type.definitions,
      apiVersion: 'v1', kind: c.kind, time: '2026-01-01T00:00:00Z',
    });
    const created = runMergeTask(task(null, 0));
    if (!created.ok || !('apply' in created) || !('object' in created.apply)) throw new Error(`${c.label}: ${JSON.stringify(created).slice(0, 300)}`);
    const live = created.apply.object;
    const bytes = Buffer.byteLength(JSON.stringify(live)) + Buffer.byteLength(c.body(1));
    const n = Math.max(5, Math.min(200, Math.round(4e6 / bytes)));
    const bodies = Array.from({ length: n + 3 }, (_, i) => c.body(i + 1));
    const build = meanMs((i) => task(live, i + 1), n);
    const merge = meanMs((i) => runMergeTask(task(live, i + 1)), n) - build;
    // What a worker hop copies on the main thread: the task without the definitions (kept by key).
    const clone = meanMs((i) => serialize({ ...task(live, i + 1), definitions: undefined }), n) - build;
    out.push({
      scenario: 'apply-cost', object: c.label, 'live+body KiB': round(bytes / 1024, 1), 'SSA merge ms': round(merge, 2), 'structured clone ms': round(Math.max(0, clone), 2),
      'YAML.parse ms': round(meanMs((i) => YAML.parse(bodies[i]), Math.min(n, 20)), 2), 'JSON.parse ms': round(meanMs((i) => JSON.parse(bodies[i]), n), 3),
    });
  }
  return out;
}

// ------------------------------------------------------------------ the scenario

export async function benchApply(o: ApplyBenchOptions): Promise<ReadResult[]> {
  const out: ReadResult[] = [];
  const levels = o.concurrency?.length ? o.concurrency : [32];
  const s = await startBenchServer([]);
  try {
    let run = 0;
    for (const c of levels) {
      out.push(await throughput(s, 'apply', c, o, 'apply, small ConfigMap', run++));
      out.push(await throughput(s, 'merge', c, o, 'merge patch, small ConfigMap', run++));
      out.push(await throughput(s, 'strategic-cm', c, o, 'strategic patch, small ConfigMap', run++));
      out.push(await throughput(s, 'strategic-deploy', c, o, 'strategic patch, Deployment image', run++));
    }
    const cpu = procCpuSeconds(s.pid);
    process.stderr.write(`  apply throughput done (server CPU so far ${cpu.toFixed(1)} s)\n`);
  } finally {
    await s.stop();
  }
  for (const mode of SERVER_MODES) {
    process.stderr.write(`  apply latency: ${mode.label}\n`);
    out.push(...(await latency(mode)));
  }
  process.stderr.write('  apply cost (in this process)\n');
  out.push(...applyCosts());
  return out;
}

if (process.argv[2] === '--apply-child') {
  process.once('message', (init: LoadInit | ProbeInit) => {
    const main = init.role === 'load' ? loadChild(init) : probeChild(init);
    main.catch((e) => {
      process.stderr.write(`apply bench child: ${(e as Error).message}\n`);
      process.exit(1);
    });
  });
}
