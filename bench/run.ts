// The bench harness: `npm run bench -- [scenario...] [--duration s] [--warmup s] [--concurrency 1,8,...] [--workers n] [--client raw|https] [--cpu-prof dir]`.
// Starts the real server per scenario on a fresh data dir, drives it over HTTPS from forked load
// worker processes, and prints a table (and writes bench/results/<timestamp>.json).
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FLAGS } from '../kernel/flags.js';
import {
  loadWorkerMain, machineBusySeconds, machineInfo, measureDiskSync, percentile, procThreadCpuSeconds, repoRoot, request, startBenchServer, table,
  type BenchServer, type ClientKind, type LoadKind, type WorkerInit, type WorkerResult,
} from './lib.js';
import { benchList, benchMemory, benchWatch, printRead, type ReadResult } from './readpath.js';
import { benchApply } from './apply.js';

/** Read-path scenarios (bench/readpath.ts): their own measurements and tables. */
const READ_SCENARIOS: Record<string, { description: string; run: (o: Options) => Promise<ReadResult[]> }> = {
  list: { description: 'LIST of 10,000 1-KiB ConfigMaps: consistent, resourceVersion=0, and paged by 500', run: () => benchList() },
  watch: { description: 'watch fan-out to 100 and 1,000 watchers while a writer runs: deliveries/s, latency p50/p99', run: async (o) => [await benchWatch(100, o.duration), await benchWatch(1000, o.duration)] },
  memory: { description: 'server RSS empty, at 10,000 and 100,000 objects, and with 10,000 idle watchers', run: () => benchMemory() },
  apply: {
    description: 'writes (bench/apply.ts): applies/s and merge/strategic patches/s at concurrency 32; latency of large applies with the worker pool off, all-on and default, and the longest GET meanwhile',
    run: (o) => benchApply({ duration: o.duration, warmup: o.warmup, concurrency: o.concurrency }),
  },
};

interface Scenario {
  name: string;
  description: string;
  kind: LoadKind;
  serverArgs: string[];
  concurrency: number[];
  /** Drive the node:tls (client-certificate) listener instead of the uWebSockets.js one. */
  listener?: 'mtls';
  /** Authenticate by the first-start admin client certificate instead of the token. */
  clientCert?: boolean;
  /** Why the scenario cannot run in this build, if it cannot. */
  unavailable?: string;
}

const GROUP_COMMIT_FLAG = 'storage-group-commit';
const hasGroupCommitFlag = GROUP_COMMIT_FLAG in FLAGS;

const SCENARIOS: Scenario[] = [
  { name: 'create', description: 'POST of small ConfigMaps, durable (group commit, the default)', kind: 'create', serverArgs: [], concurrency: [1, 8, 32, 64] },
  {
    name: 'create-nosync-compare',
    description: `the same with --${GROUP_COMMIT_FLAG}=false: one synced batch per write`,
    kind: 'create',
    serverArgs: [`--${GROUP_COMMIT_FLAG}=false`],
    concurrency: [1, 8, 32, 64],
    unavailable: hasGroupCommitFlag ? undefined : `this build has no --${GROUP_COMMIT_FLAG} flag (kernel/flags.ts)`,
  },
  { name: 'get', description: 'GET of one ConfigMap by name', kind: 'get', serverArgs: [], concurrency: [32, 64] },
  { name: 'get-mtls', description: 'the same GET through the node:tls listener, with the admin token', kind: 'get', serverArgs: [], concurrency: [32, 64], listener: 'mtls' },
  { name: 'get-mtls-cert', description: 'the same GET through the node:tls listener, authenticated by client certificate (x509)', kind: 'get', serverArgs: [], concurrency: [32, 64], listener: 'mtls', clientCert: true },
];

interface Options {
  scenarios: string[];
  duration: number;
  warmup: number;
  concurrency?: number[];
  workers: number;
  client: ClientKind;
  cpuProf?: string;
}

function usage(): string {
  return [
    'Usage: npm run bench -- [scenario...] [options]',
    '',
    'Scenarios (default: all):',
    ...SCENARIOS.map((s) => `  ${s.name.padEnd(24)} ${s.description}; concurrency ${s.concurrency.join(',')}${s.unavailable ? ` (unavailable: ${s.unavailable})` : ''}`),
    ...Object.entries(READ_SCENARIOS).map(([n, r]) => `  ${n.padEnd(24)} ${r.description}`),
    '',
    'Options:',
    '  --duration <s>        measured seconds per run (default 5)',
    '  --warmup <s>          unmeasured seconds before each run (default 1)',
    '  --concurrency <list>  concurrency levels for every scenario, e.g. 1,8,32',
    '  --workers <n>         load generator processes (default: number of CPUs, at most the concurrency)',
    '  --client <raw|https>  load client: a minimal keep-alive HTTP/1.1 client on node:tls (default: it costs far less CPU per request),',
    '                        or node:https with keep-alive Agents',
    '  --cpu-prof <dir>      run the server with --cpu-prof and write its profiles to <dir>',
  ].join('\n');
}

function parseOptions(argv: string[]): Options {
  const o: Options = { scenarios: [], duration: 5, warmup: 1, workers: machineInfo().nproc, client: 'raw' };
  const num = (flag: string, v: string | undefined) => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n) || n < 0) throw new Error(`${flag} needs a number`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = () => inline ?? argv[++i];
    if (flag === '--help' || flag === '-h') { process.stdout.write(usage() + '\n'); process.exit(0); }
    else if (flag === '--duration') o.duration = num(flag, value());
    else if (flag === '--warmup') o.warmup = num(flag, value());
    else if (flag === '--workers') o.workers = Math.max(1, Math.floor(num(flag, value())));
    else if (flag === '--concurrency') o.concurrency = String(value()).split(',').map((x) => Math.floor(num(flag, x.trim()))).filter((n) => n > 0);
    else if (flag === '--client') {
      const c = String(value());
      if (c !== 'https' && c !== 'raw') throw new Error('--client is https or raw');
      o.client = c;
    } else if (flag === '--cpu-prof') o.cpuProf = path.resolve(String(value()));
    else if (flag.startsWith('-')) throw new Error(`unknown option ${flag}\n\n${usage()}`);
    else o.scenarios.push(...flag.split(',').filter(Boolean));
  }
  for (const s of o.scenarios) if (!SCENARIOS.some((x) => x.name === s) && !(s in READ_SCENARIOS)) throw new Error(`unknown scenario "${s}"\n\n${usage()}`);
  if (!o.scenarios.length) o.scenarios = [...SCENARIOS.map((s) => s.name), ...Object.keys(READ_SCENARIOS)];
  // the comparison needs its baseline
  if (o.scenarios.includes('create-nosync-compare') && !o.scenarios.includes('create')) o.scenarios.unshift('create');
  return o;
}

interface RunResult {
  scenario: string;
  serverArgs: string[];
  concurrency: number;
  workers: number;
  ops: number;
  errors: number;
  firstError?: string;
  seconds: number;
  opsPerSec: number;
  p50ms: number;
  p90ms: number;
  p99ms: number;
  maxMs: number;
  serverCpuSeconds: number;
  serverCpuPct: number;
  serverCpuMsPerOp: number;
  /** Of the server's CPU: its main thread (the event loop) and its other threads (storage thread pool, GC helpers). */
  serverMainThreadCpuPct: number;
  serverOtherThreadsCpuPct: number;
  clientCpuSeconds: number;
  clientCpuPct: number;
  /** Busy CPU of the whole machine not spent in the server or the load workers (other processes, kernel work not charged to either). */
  otherCpuPct: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const selfPath = fileURLToPath(import.meta.url);

/** One measured run at one concurrency: fork the load workers, warm up, measure, collect. */
async function runOnce(s: BenchServer, sc: Scenario, concurrency: number, o: Options, run: string, getPath?: string): Promise<RunResult> {
  const nWorkers = Math.min(o.workers, concurrency);
  const workers: ChildProcess[] = [];
  const results: Promise<WorkerResult>[] = [];
  for (let w = 0; w < nWorkers; w++) {
    const share = Math.floor(concurrency / nWorkers) + (w < concurrency % nWorkers ? 1 : 0);
    const child = fork(selfPath, ['--worker'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    workers.push(child);
    results.push(new Promise((resolve, reject) => {
      child.on('message', (m: WorkerResult) => { if (m.type === 'result') resolve(m); });
      child.once('exit', (code) => reject(new Error(`load worker exited (${code}) without a result`)));
    }));
    const init: WorkerInit = { type: 'init', port: sc.listener === 'mtls' ? s.mtlsPort : s.port, token: s.token, ca: s.ca, kind: sc.kind, concurrency: share, worker: w, run, getPath, client: o.client };
    if (sc.clientCert) {
      init.cert = readFileSync(path.join(s.dataDir, 'pki', 'admin-client.crt'), 'utf8');
      init.key = readFileSync(path.join(s.dataDir, 'pki', 'admin-client.key'), 'utf8');
      init.client = 'raw';
    }
    child.send(init);
  }
  await sleep(o.warmup * 1000);
  for (const c of workers) c.send({ type: 'measure' });
  const cpu0 = procThreadCpuSeconds(s.pid);
  const busy0 = machineBusySeconds();
  const t0 = performance.now();
  await sleep(o.duration * 1000);
  for (const c of workers) c.send({ type: 'stop' });
  const cpu1 = procThreadCpuSeconds(s.pid);
  const busy1 = machineBusySeconds();
  const seconds = (performance.now() - t0) / 1000;
  const got = await Promise.all(results);
  // the workers exit once their last in-flight request is answered; do not let one linger
  await Promise.all(workers.map((c) => new Promise<void>((r) => {
    if (c.exitCode !== null || c.signalCode !== null) return r();
    const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
    c.once('exit', () => { clearTimeout(timer); r(); });
  })));

  const lat = Float64Array.from(got.flatMap((g) => g.latenciesMs)).sort();
  const ops = got.reduce((a, g) => a + g.ops, 0);
  const clientCpu = got.reduce((a, g) => a + g.cpuSeconds, 0);
  const serverCpu = cpu1.main + cpu1.others - cpu0.main - cpu0.others;
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return {
    scenario: sc.name, serverArgs: sc.serverArgs, concurrency, workers: nWorkers, ops,
    errors: got.reduce((a, g) => a + g.errors, 0), firstError: got.find((g) => g.firstError)?.firstError,
    seconds: r2(seconds), opsPerSec: Math.round(ops / seconds),
    p50ms: r2(percentile(lat, 50)), p90ms: r2(percentile(lat, 90)), p99ms: r2(percentile(lat, 99)), maxMs: r2(lat.length ? lat[lat.length - 1] : NaN),
    serverCpuSeconds: r2(serverCpu), serverCpuPct: Math.round((serverCpu / seconds) * 100), serverCpuMsPerOp: ops ? Math.round((serverCpu / ops) * 1e5) / 100 : NaN,
    serverMainThreadCpuPct: Math.round(((cpu1.main - cpu0.main) / seconds) * 100), serverOtherThreadsCpuPct: Math.round(((cpu1.others - cpu0.others) / seconds) * 100),
    clientCpuSeconds: r2(clientCpu), clientCpuPct: Math.round((clientCpu / seconds) * 100),
    otherCpuPct: Math.max(0, Math.round(((busy1 - busy0 - serverCpu - clientCpu) / seconds) * 100)),
  };
}

async function runScenario(sc: Scenario, o: Options, onRow: (r: RunResult) => void): Promise<RunResult[]> {
  const nodeArgs = o.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProf}`, `--cpu-prof-name=${sc.name}.cpuprofile`] : [];
  if (o.cpuProf) mkdirSync(o.cpuProf, { recursive: true });
  const s = await startBenchServer(sc.serverArgs, nodeArgs);
  const out: RunResult[] = [];
  try {
    let getPath: string | undefined;
    if (sc.kind === 'get') {
      getPath = '/api/v1/namespaces/default/configmaps/bench-get';
      const r = await request(s, 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bench-get' }, data: { key: 'value' } });
      if (r.status !== 201) throw new Error(`creating the object to GET: ${r.status} ${r.text}`);
    }
    const levels = o.concurrency ?? sc.concurrency;
    for (let i = 0; i < levels.length; i++) {
      const r = await runOnce(s, sc, levels[i], o, `${i}`, getPath);
      out.push(r);
      onRow(r);
    }
  } finally {
    await s.stop();
  }
  return out;
}

const HEADER = ['scenario', 'conc', 'ops', 'seconds', 'ops/s', 'p50 ms', 'p99 ms', 'server CPU %', '(main thr)', 'client CPU %', 'other CPU %', 'srv CPU ms/op', 'errors'];
const rowOf = (r: RunResult) => [r.scenario, r.concurrency, r.ops, r.seconds.toFixed(2), r.opsPerSec, r.p50ms.toFixed(2), r.p99ms.toFixed(2), r.serverCpuPct, r.serverMainThreadCpuPct, r.clientCpuPct, r.otherCpuPct, r.serverCpuMsPerOp.toFixed(2), r.errors];

async function main() {
  const o = parseOptions(process.argv.slice(2));
  const machine = machineInfo();
  const disk = measureDiskSync();
  const startedAt = new Date();
  process.stdout.write(`machine: ${machine.nproc} CPUs (${machine.cpuModel}), node ${machine.node}, ${machine.platform}, kernel ${machine.kernel}\n`);
  process.stdout.write(`disk: 200-byte append + fdatasync in ${os.tmpdir()}: p50 ${disk.p50ms.toFixed(2)} ms, p99 ${disk.p99ms.toFixed(2)} ms\n`);
  process.stdout.write(`runs: ${o.warmup}s warm-up + ${o.duration}s measured each; up to ${o.workers} load worker processes; client ${o.client}\n\n`);

  const results: RunResult[] = [];
  const skipped: { scenario: string; reason: string }[] = [];
  const readResults: ReadResult[] = [];
  for (const name of o.scenarios) {
    if (name in READ_SCENARIOS) {
      process.stderr.write(`${name}: ${READ_SCENARIOS[name].description}\n`);
      readResults.push(...(await READ_SCENARIOS[name].run(o)));
      continue;
    }
    const sc = SCENARIOS.find((s) => s.name === name)!;
    if (sc.unavailable) {
      skipped.push({ scenario: name, reason: sc.unavailable });
      process.stdout.write(`skipping ${name}: ${sc.unavailable}\n`);
      continue;
    }
    process.stderr.write(`${name}: ${sc.description}\n`);
    results.push(...(await runScenario(sc, o, (r) => process.stderr.write(`  concurrency ${r.concurrency}: ${r.opsPerSec} ops/s, p99 ${r.p99ms} ms${r.errors ? `, ${r.errors} errors (${r.firstError})` : ''}\n`))));
  }

  if (results.length) process.stdout.write(table(HEADER, results.map(rowOf)) + '\n');
  if (readResults.length) process.stdout.write('\n' + printRead(readResults));
  process.stdout.write(`CPU columns are percent of one core over the measured window (${machine.nproc} cores: ${machine.nproc * 100} % is the ceiling); (main thr) = the server's event-loop thread; other = machine busy time minus server and load workers.\n`);

  const disturbed = results.filter((r) => r.otherCpuPct > 25);
  if (disturbed.length) {
    process.stdout.write(`warning: other work used more than 25 % of a core during ${disturbed.length} of ${results.length} runs (up to ${Math.max(...disturbed.map((r) => r.otherCpuPct))} %): those figures are disturbed; rerun on a quiet machine.\n`);
  }

  const base = results.filter((r) => r.scenario === 'create');
  const nosync = results.filter((r) => r.scenario === 'create-nosync-compare');
  const comparison = base
    .map((b) => ({ concurrency: b.concurrency, groupCommit: b.opsPerSec, oneSyncPerWrite: nosync.find((n) => n.concurrency === b.concurrency)?.opsPerSec }))
    .filter((c) => c.oneSyncPerWrite !== undefined);
  if (comparison.length) {
    process.stdout.write('\ncreates/s, group commit vs one sync per write:\n');
    process.stdout.write(table(['concurrency', 'group commit', 'one sync/write', 'ratio'], comparison.map((c) => [c.concurrency, c.groupCommit, c.oneSyncPerWrite!, (c.groupCommit / c.oneSyncPerWrite!).toFixed(2) + 'x'])) + '\n');
  }

  const dir = path.join(repoRoot, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, startedAt.toISOString().replace(/[:.]/g, '-') + '.json');
  writeFileSync(file, JSON.stringify({ startedAt: startedAt.toISOString(), command: ['node', 'dist/bench/run.js', ...process.argv.slice(2)].join(' '), options: o, machine, disk, results, readResults, comparison, skipped }, null, 2) + '\n');
  process.stdout.write(`\nresults: ${path.relative(process.cwd(), file)}\n`);
}

if (process.argv[2] === '--worker') {
  loadWorkerMain();
} else {
  main().catch((e) => {
    process.stderr.write(`bench: ${(e as Error).message}\n`);
    process.exit(1);
  });
}
