// Bench helpers: start a server binary on a fresh data dir, measure CPU of processes, run the load
// inside a forked worker process, and format the results.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fdatasyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const mainJs = path.join(repoRoot, 'dist/kernel/main.js');

// ------------------------------------------------------------------ the server under test

export interface BenchServer {
  proc: ChildProcess;
  pid: number;
  port: number;
  dataDir: string;
  token: string;
  ca: string;
  /** The node:tls (client-certificate) listener's port, when the server runs one. */
  mtlsPort: number;
  args: string[];
  stop(): Promise<void>;
}

/**
 * CPUs (a taskset list such as "0" or "0-1") the server and the load generator are held to, when set
 * (--server-cpus, --load-cpus): one core each, apart, to measure the server at one core and two.
 */
export const pinning: { server?: string; load?: string } = {};

/** The command line, held to `cpus` by taskset when given. */
export function pinned(cpus: string | undefined, cmd: string, args: string[]): [string, string[]] {
  return cpus ? ['taskset', ['-c', cpus, cmd, ...args]] : [cmd, args];
}

/** Spawn dist/kernel/main.js on a new temp data dir and wait for its "serving" log line. */
export async function startBenchServer(extraArgs: string[], nodeArgs: string[] = [], opts: { dataDir?: string; keepData?: boolean } = {}): Promise<BenchServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'capi-bench-'));
  // JSON log lines: the "serving" line is parsed below
  const args = ['--data-dir', dataDir, '--secure-port', '0', '--logging-format=json', ...extraArgs];
  const proc = spawn(...pinned(pinning.server, process.execPath, [...nodeArgs, mainJs, ...args]), { stdio: ['ignore', 'ignore', 'pipe'] });
  let mtlsPort = 0;
  const port = await new Promise<number>((resolve, reject) => {
    let buf = '';
    const seen: string[] = [];
    const onData = (d: Buffer) => {
      buf += d.toString('utf8');
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        seen.push(line);
        let o: { msg?: string; address?: string } | undefined;
        try { o = JSON.parse(line); } catch { /* not a log line */ }
        if (o?.msg === 'serving' && o.address) {
          if ((o as { mtls?: string }).mtls) mtlsPort = Number(new URL((o as { mtls: string }).mtls).port);
          proc.stderr!.off('data', onData);
          proc.stderr!.resume(); // keep draining, never parse again
          resolve(Number(new URL(o.address).port));
        }
      }
    };
    proc.stderr!.on('data', onData);
    proc.once('exit', (code) => reject(new Error(`server exited (${code}) before serving:\n${seen.join('\n')}${buf}`)));
  });
  const token = readFileSync(path.join(dataDir, 'pki/tokens.csv'), 'utf8').split('\n').find((l) => l.trim() && !l.startsWith('#'))!.split(',')[0].trim();
  const ca = readFileSync(path.join(dataDir, 'pki/ca.crt'), 'utf8');
  return {
    proc, pid: proc.pid!, port, mtlsPort, dataDir, token, ca, args,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(timer);
      }
      if (!opts.keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One request from the coordinator (setup only, not measured). */
export function request(s: { port: number; token: string; ca: string }, method: string, p: string, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { authorization: `Bearer ${s.token}`, accept: 'application/json' };
    if (payload) headers['content-type'] = 'application/json';
    const req = https.request({ host: '127.0.0.1', port: s.port, method, path: p, headers, ca: s.ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

// ------------------------------------------------------------------ CPU and machine

let clockTicks: number | undefined;

/** User + system CPU seconds of a process (all its threads) from /proc/<pid>/stat. */
export function procCpuSeconds(pid: number): number {
  if (clockTicks === undefined) {
    try { clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100; } catch { clockTicks = 100; }
  }
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // fields after the command name (which may contain spaces) start at field 3 (state)
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / clockTicks; // utime (14), stime (15)
}

/** CPU seconds of a process's main thread (the JavaScript event loop) and of all its other threads together. */
export function procThreadCpuSeconds(pid: number): { main: number; others: number } {
  const total = procCpuSeconds(pid);
  let main = total;
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    main = (Number(f[11]) + Number(f[12])) / clockTicks!;
  } catch { /* no per-thread accounting */ }
  return { main, others: Math.max(0, total - main) };
}

/** Busy CPU seconds of the whole machine, all cores (from the first line of /proc/stat). */
export function machineBusySeconds(): number {
  procCpuSeconds(process.pid); // makes sure clockTicks is known
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user)
  const busy = f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] ?? 0);
  return busy / clockTicks!;
}

export function machineInfo() {
  let cpuModel = 'unknown';
  try { cpuModel = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpuModel; } catch { /* not Linux */ }
  let nproc = os.availableParallelism();
  try { nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim()) || nproc; } catch { /* no coreutils */ }
  return { nproc, cpuModel, node: process.version, platform: `${process.platform}/${process.arch}`, kernel: os.release(), memoryGiB: Math.round(os.totalmem() / 2 ** 30 * 10) / 10 };
}

/** Latency of a small append + fdatasync on the temp dir's disk: the floor under one durable write. */
export function measureDiskSync(samples = 200): { samples: number; p50ms: number; p99ms: number; meanMs: number } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-bench-sync-'));
  const fd = openSync(path.join(dir, 'probe'), 'a');
  const buf = Buffer.alloc(200, 120);
  const lat: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now();
      writeSync(fd, buf);
      fdatasyncSync(fd);
      lat.push(performance.now() - t0);
    }
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
  lat.sort((a, b) => a - b);
  return { samples, p50ms: percentile(lat, 50), p99ms: percentile(lat, 99), meanMs: lat.reduce((a, b) => a + b, 0) / lat.length };
}

// ------------------------------------------------------------------ statistics and output

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const width = header.map((_, c) => Math.max(...cells.map((r) => r[c].length)));
  const line = (r: string[]) => r.map((v, c) => (c === 0 ? v.padEnd(width[c]) : v.padStart(width[c]))).join('  ');
  return [line(cells[0]), width.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

// ------------------------------------------------------------------ the load worker (a forked process)

export type LoadKind = 'create' | 'get';
/** https: node:https with a keep-alive Agent; raw: a minimal HTTP/1.1 client on node:tls (much less client CPU per request). */
export type ClientKind = 'https' | 'raw';

/**
 * A minimal keep-alive HTTP/1.1 client on one TLS connection, one request at a time: the request
 * is written as prepared bytes and the response is parsed only as far as the status, the headers
 * and the body length (Content-Length or chunked).
 */
class RawConnection {
  private socket: tls.TLSSocket | undefined;
  private buf: Buffer = Buffer.alloc(0);
  private pending: { resolve: (r: { status: number; body: Buffer }) => void; reject: (e: Error) => void } | undefined;

  constructor(private init: WorkerInit) {}

  private connect(): tls.TLSSocket {
    const i = this.init;
    const sock = tls.connect({ host: i.host, port: i.port, ca: i.ca, cert: i.cert, key: i.key, rejectUnauthorized: i.ca !== undefined, servername: i.servername });
    sock.setNoDelay(true);
    sock.on('data', (d: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      this.parse();
    });
    const fail = (e: Error) => {
      if (this.socket === sock) this.socket = undefined;
      this.buf = Buffer.alloc(0);
      const p = this.pending;
      this.pending = undefined;
      p?.reject(e);
    };
    sock.on('error', fail);
    sock.on('close', () => fail(new Error('connection closed')));
    return sock;
  }

  request(head: string, body?: string): Promise<{ status: number; body: Buffer }> {
    this.socket ??= this.connect();
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket!.write(body ? head + body : head);
    });
  }

  private parse(): void {
    if (!this.pending) return;
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = this.buf.toString('latin1', 0, end);
    const status = Number(head.slice(9, 12));
    const lenMatch = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    let bodyStart = end + 4;
    let body: Buffer;
    let consumed: number;
    if (lenMatch) {
      const len = Number(lenMatch[1]);
      if (this.buf.length < bodyStart + len) return;
      body = this.buf.subarray(bodyStart, bodyStart + len);
      consumed = bodyStart + len;
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      const parts: Buffer[] = [];
      for (;;) {
        const eol = this.buf.indexOf('\r\n', bodyStart);
        if (eol < 0) return;
        const size = parseInt(this.buf.toString('latin1', bodyStart, eol), 16);
        if (this.buf.length < eol + 2 + size + 2) return;
        if (size === 0) { consumed = eol + 4; break; }
        parts.push(this.buf.subarray(eol + 2, eol + 2 + size));
        bodyStart = eol + 2 + size + 2;
      }
      body = Buffer.concat(parts);
    } else {
      body = Buffer.alloc(0);
      consumed = bodyStart;
    }
    this.buf = this.buf.subarray(consumed);
    const p = this.pending;
    this.pending = undefined;
    p.resolve({ status, body });
  }

  close(): void {
    this.socket?.destroy();
  }
}

export interface WorkerInit {
  type: 'init';
  host: string;
  port: number;
  /** SNI name, when the target is named by host name. */
  servername?: string;
  /** Empty when a client certificate authenticates. */
  token: string;
  /** CA to trust; undefined skips verification (--insecure). */
  ca?: string;
  namespace: string;
  kind: LoadKind;
  concurrency: number;
  worker: number;
  run: string;
  getPath?: string;
  client: ClientKind;
  /** Client certificate and key (PEM) for the node:tls listener. */
  cert?: string;
  key?: string;
}

export interface WorkerResult {
  type: 'result';
  ops: number;
  errors: number;
  firstError?: string;
  latenciesMs: number[];
  cpuSeconds: number;
}

/**
 * Worker process body: `concurrency` loops, each sending one request at a time over a shared
 * keep-alive agent. Starts (warm-up) on init, counts from "measure", stops counting at "stop" and
 * reports completed requests, their latencies and this process's own CPU time in that window.
 */
export function loadWorkerMain(): void {
  let init: WorkerInit;
  let measuring = false;
  let stopping = false;
  let ops = 0;
  let errors = 0;
  let firstError: string | undefined;
  let lat: number[] = [];
  let cpu0 = process.cpuUsage();
  let loops: Promise<void>[] = [];

  // the first answer (or failure) tells the harness this worker's load is flowing: its warm-up starts then
  let flowing = false;
  const answered = () => { if (!flowing) { flowing = true; process.send!({ type: 'flowing' }); } };

  const once = (agent: https.Agent, method: string, p: string, body: string | undefined, want: number): Promise<void> =>
    new Promise((resolve) => {
      const t0 = performance.now();
      const headers: Record<string, string> = { accept: 'application/json' };
      if (init.token) headers.authorization = `Bearer ${init.token}`;
      if (body) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = String(Buffer.byteLength(body));
      }
      const count = (ok: boolean, detail: () => string) => {
        answered();
        if (!measuring) return;
        if (ok) {
          ops++;
          lat.push(performance.now() - t0);
        } else {
          errors++;
          firstError ??= detail();
        }
      };
      const req = https.request({ host: init.host, port: init.port, method, path: p, headers, agent }, (res) => {
        const ok = res.statusCode === want;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => { if (!ok) chunks.push(c); });
        res.on('end', () => {
          count(ok, () => `${method} ${p}: ${res.statusCode} ${Buffer.concat(chunks).toString('utf8').slice(0, 300)}`);
          resolve();
        });
      });
      req.on('error', (e) => {
        count(false, () => `${method} ${p}: ${e.message}`);
        setTimeout(resolve, 10);
      });
      req.end(body);
    });

  const createPath = () => `/api/v1/namespaces/${init.namespace}/configmaps`;
  const createBody = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { key: 'value' } });

  const loop = async (agent: https.Agent, slot: number) => {
    const base = `b${init.run}-${init.worker}-${slot}-`;
    for (let i = 0; !stopping; i++) {
      if (init.kind === 'create') await once(agent, 'POST', createPath(), createBody(base + i), 201);
      else await once(agent, 'GET', init.getPath!, undefined, 200);
    }
  };

  const rawLoop = async (slot: number) => {
    const conn = new RawConnection(init);
    // With a client certificate the request carries no token: x509 authenticates it.
    const auth = init.token ? `Authorization: Bearer ${init.token}\r\n` : '';
    const common = `Host: ${init.host}:${init.port}\r\n${auth}Accept: application/json\r\n`;
    const getHead = `GET ${init.getPath} HTTP/1.1\r\n${common}\r\n`;
    const base = `b${init.run}-${init.worker}-${slot}-`;
    for (let i = 0; !stopping; i++) {
      let method = 'GET';
      let head = getHead;
      let body: string | undefined;
      let want = 200;
      if (init.kind === 'create') {
        method = 'POST';
        body = createBody(base + i);
        head = `POST ${createPath()} HTTP/1.1\r\n${common}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
        want = 201;
      }
      const t0 = performance.now();
      try {
        const r = await conn.request(head, body);
        answered();
        if (measuring) {
          if (r.status === want) {
            ops++;
            lat.push(performance.now() - t0);
          } else {
            errors++;
            firstError ??= `${method}: ${r.status} ${r.body.toString('utf8').slice(0, 300)}`;
          }
        }
      } catch (e) {
        answered();
        if (measuring) {
          errors++;
          firstError ??= `${method}: ${(e as Error).message}`;
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    conn.close();
  };

  process.on('message', (m: { type: string } & Partial<WorkerInit>) => {
    if (m.type === 'init') {
      init = m as WorkerInit;
      if (init.client === 'raw') {
        loops = Array.from({ length: init.concurrency }, (_, slot) => rawLoop(slot));
      } else {
        const agent = new https.Agent({ keepAlive: true, maxSockets: init.concurrency, ca: init.ca, cert: init.cert, key: init.key, rejectUnauthorized: init.ca !== undefined, servername: init.servername });
        loops = Array.from({ length: init.concurrency }, (_, slot) => loop(agent, slot));
        void Promise.all(loops).then(() => agent.destroy());
      }
    } else if (m.type === 'measure') {
      ops = 0;
      errors = 0;
      lat = [];
      cpu0 = process.cpuUsage();
      measuring = true;
    } else if (m.type === 'stop') {
      const cpu = process.cpuUsage(cpu0);
      measuring = false;
      stopping = true;
      const result: WorkerResult = { type: 'result', ops, errors, firstError, latenciesMs: lat, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
      // answer now: requests still in flight are outside the window either way
      process.send!(result, () => {
        void Promise.all(loops).then(() => process.exit(0));
      });
    }
  });
}
