// The bench harness: `npm run bench -- [scenario...] [--duration s] [--warmup s] [--concurrency 1,8,...] [--workers n] [--client raw|https] [--cpu-prof dir]`.
// Starts the real server per scenario on a fresh data dir, drives it over HTTPS from forked load
// worker processes, and prints a table (and writes bench/results/<timestamp>.json).
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FLAGS } from '../kernel/ops/flags.js';
import {
  loadWorkerMain, machineBusySeconds, machineInfo, measureDiskSync, percentile, procThreadCpuSeconds, repoRoot, table,
  type ClientKind, type LoadKind, type WorkerInit, type WorkerResult,
  pinning,
} from './lib.js';
import { PROTOBUF, benchList, benchMemory, benchRestart, benchWatch, defineBenchResource, SETTLED, printRead, type ReadResult } from './readpath.js';
import { benchApply } from './apply.js';
import { benchStart } from './start.js';
import { plot } from './plot.js';
import { call, ownEtcdTarget, ownTarget, readKubeconfig, remoteTarget, tlsOptions, type RemoteOptions, type Target } from './target.js';
import { runWrk, wrkAvailable } from './wrk.js';
import { yardstickTarget } from './yardstick.js';

/** Read-path scenarios (bench/readpath.ts): their own measurements and tables. `remote`: can drive any server. */
const READ_SCENARIOS: Record<string, { description: string; remote: boolean; explicit?: boolean; serverArgs?: string[]; run: (o: Options, t: () => Promise<Target>) => Promise<ReadResult[]> }> = {
  list: { description: 'LIST of 10,000 1-KiB ConfigMaps: consistent, resourceVersion=0, and paged by 500', remote: true, run: (_o, t) => withTarget(t, (x) => benchList(x)) },
  watch: {
    description: 'watch fan-out to 100 and 1,000 watchers while 8 writers run: deliveries/s, latency p50/p99 (of 20 watchers spread over the connections), writes/s; and the writes/s of the same writers with no watcher',
    remote: true,
    run: async (o, t) => [await withTarget(t, (x) => benchWatch(x, 0, o.duration)), await withTarget(t, (x) => benchWatch(x, 100, o.duration)), await withTarget(t, (x) => benchWatch(x, 1000, o.duration))],
  },
  'list-uws-tls': {
    description: 'the list scenario with --secure-port-client-certs=false (uWS terminates TLS: no front thread copying the 15 MB)',
    remote: false, serverArgs: ['--secure-port-client-certs=false'], run: (_o, t) => withTarget(t, (x) => benchList(x)),
  },
  'watch-loops-1': {
    description: 'the watch scenario with --secure-port-client-certs=false --read-loops 1: watchers spread over two loops sharing the port',
    remote: false, serverArgs: ['--secure-port-client-certs=false', '--read-loops', '1'],
    run: async (o, t) => [await withTarget(t, (x) => benchWatch(x, 100, o.duration)), await withTarget(t, (x) => benchWatch(x, 1000, o.duration))],
  },
  'watch-uws-tls': {
    description: 'the watch scenario with --secure-port-client-certs=false (one loop; the yardstick of watch-loops-1)',
    remote: false, serverArgs: ['--secure-port-client-certs=false'],
    run: async (o, t) => [await withTarget(t, (x) => benchWatch(x, 100, o.duration)), await withTarget(t, (x) => benchWatch(x, 1000, o.duration))],
  },
  'list-pb': {
    description: 'the list scenario answered in Protobuf (Accept: application/vnd.kubernetes.protobuf; the kubernetes brand)',
    remote: true, serverArgs: ['--brand', 'kubernetes'], run: (_o, t) => withTarget(t, (x) => benchList(x, 10_000, 1024, undefined, PROTOBUF)),
  },
  'watch-pb': {
    description: 'the watch scenario (100 and 1,000 watchers) with Protobuf frames',
    remote: true, serverArgs: ['--brand', 'kubernetes'],
    run: async (o, t) => [await withTarget(t, (x) => benchWatch(x, 100, o.duration, 8, undefined, true)), await withTarget(t, (x) => benchWatch(x, 1000, o.duration, 8, undefined, true))],
  },
  'list-cr': {
    description: 'the list scenario with 10,000 custom resources of the same shape (a CustomResourceDefinition with a schema) instead of ConfigMaps',
    remote: false, run: (_o, t) => withTarget(t, async (x) => { await defineBenchResource(x); return benchList(x, 10_000, 1024, 'custom'); }),
  },
  'watch-cr': {
    description: 'the watch scenario (100 and 1,000 watchers) on custom resources instead of ConfigMaps',
    remote: false,
    run: async (o, t) => [
      await withTarget(t, async (x) => { await defineBenchResource(x); return benchWatch(x, 100, o.duration, 8, 'custom'); }),
      await withTarget(t, async (x) => { await defineBenchResource(x); return benchWatch(x, 1000, o.duration, 8, 'custom'); }),
    ],
  },
  restart: {
    description: 'fill --objects ConfigMaps (default 1,000,000), restart on the same data directory: seconds to serving and to the first LIST, RSS (our server only; not in the default set: it takes minutes)',
    remote: false, explicit: true, run: (o) => benchRestart(o.objects ?? 1_000_000, o.keepDataDir),
  },
  memory: {
    description: 'server RSS empty, at 10,000 and 100,000 1-KiB ConfigMaps (32 concurrent creates; read at once and again 20 s later), and with 10,000 idle watchers (ours only); another server\'s RSS from /proc of its --target-pid processes, summed',
    // side by side, the ours-only idle watchers case is left out (it hung here with 10,000 watchers: not yet looked into)
    remote: true, run: (o, t) => benchMemory(t, !o.remote),
  },
  start: {
    description: 'time to a serving server for tests: startServer({ memory: true }) first and second in a process, and --ephemeral --print-kubeconfig (--runs, default 5); with --reference <dir>, the reference\'s start-kube-apiserver.sh (FRESH=1) from the same run (bench/start.ts)',
    remote: false, explicit: true,
    run: async (o) => { process.stdout.write(await benchStart(o.runs ?? 5, o.reference)); return []; },
  },
  apply: {
    description: 'writes (bench/apply.ts): applies/s and merge/strategic patches/s at concurrency 32; latency of large applies with the worker pool off, all-on and default, and the longest GET meanwhile (our server only)',
    remote: false,
    run: (o) => benchApply({ duration: o.duration, warmup: o.warmup, concurrency: o.concurrency }),
  },
};

/** Runs `f` on a target made for it and stops the target after. */
async function withTarget<T>(make: () => Promise<Target>, f: (t: Target) => Promise<T>): Promise<T> {
  const t = await make();
  try {
    return await f(t);
  } finally {
    await t.stop();
  }
}

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
  /** Can drive a server named by --target / --compare (core ConfigMaps only, no server flags). */
  remote?: boolean;
  /** Not an API server: the bare TLS yardstick (bench/yardstick.ts), measured in the same run. */
  yardstick?: boolean;
}

const GROUP_COMMIT_FLAG = 'storage-group-commit';
const hasGroupCommitFlag = GROUP_COMMIT_FLAG in FLAGS;

const SCENARIOS: Scenario[] = [
  { name: 'create', description: 'POST of small ConfigMaps, durable (group commit, the default)', kind: 'create', serverArgs: [], concurrency: [1, 8, 32, 64], remote: true },
  {
    name: 'create-nosync-compare',
    description: `the same with --${GROUP_COMMIT_FLAG}=false: one synced batch per write`,
    kind: 'create',
    serverArgs: [`--${GROUP_COMMIT_FLAG}=false`],
    concurrency: [1, 8, 32, 64],
    unavailable: hasGroupCommitFlag ? undefined : `this build has no --${GROUP_COMMIT_FLAG} flag (kernel/ops/flags.ts)`,
  },
  { name: 'yardstick', description: 'the physical yardstick: a bare uWebSockets.js TLS server answering a fixed 1 KiB body, same load generator (GET figures are read against it)', kind: 'get', serverArgs: [], concurrency: [32, 64], yardstick: true, remote: true },
  { name: 'get', description: 'GET of one ConfigMap by name (default: the secure port takes client certificates, node:tls front before uWS)', kind: 'get', serverArgs: [], concurrency: [32, 64], remote: true },
  { name: 'get-cert', description: 'the same GET on the secure port, authenticated by client certificate (x509)', kind: 'get', serverArgs: [], concurrency: [32, 64], clientCert: true },
  { name: 'get-loops-1', description: 'the same GET with --read-loops 1: connections spread over the writer loop and one read loop', kind: 'get', serverArgs: ['--read-loops', '1'], concurrency: [32, 64] },
  { name: 'get-loops-2', description: 'the same GET with --read-loops 2', kind: 'get', serverArgs: ['--read-loops', '2'], concurrency: [32, 64] },
  { name: 'get-uws-tls-loops-1', description: 'GET with --secure-port-client-certs=false --read-loops 1: both loops terminate TLS on the shared port', kind: 'get', serverArgs: ['--secure-port-client-certs=false', '--read-loops', '1'], concurrency: [32, 64] },
  { name: 'create-uws-tls', description: 'durable creates with --secure-port-client-certs=false (uWS terminates TLS; the yardstick of create-uws-tls-loops-1)', kind: 'create', serverArgs: ['--secure-port-client-certs=false'], concurrency: [32, 64] },
  { name: 'create-uws-tls-loops-1', description: 'durable creates with --secure-port-client-certs=false --read-loops 1: request work on both loops, commits on the writer', kind: 'create', serverArgs: ['--secure-port-client-certs=false', '--read-loops', '1'], concurrency: [32, 64] },
  { name: 'create-loops-1', description: 'durable creates with --read-loops 1 (decoding, admission and encoding on both loops; commits on the writer)', kind: 'create', serverArgs: ['--read-loops', '1'], concurrency: [32, 64] },
  { name: 'get-uws-tls', description: 'the same GET with --secure-port-client-certs=false: uWebSockets.js terminates TLS itself', kind: 'get', serverArgs: ['--secure-port-client-certs=false'], concurrency: [32, 64] },
  { name: 'get-mtls', description: 'the same GET through the separate node:tls listener (--mtls-port), with the admin token', kind: 'get', serverArgs: ['--mtls-port', '0'], concurrency: [32, 64], listener: 'mtls' },
  { name: 'get-mtls-cert', description: 'the same GET through the separate node:tls listener, authenticated by client certificate (x509)', kind: 'get', serverArgs: ['--mtls-port', '0'], concurrency: [32, 64], listener: 'mtls', clientCert: true },
];

interface Options {
  scenarios: string[];
  duration: number;
  warmup: number;
  concurrency?: number[];
  workers: number;
  /** Objects the restart scenario fills before restarting. */
  objects?: number;
  /** The restart scenario keeps its filled data directory (for bench/startup.ts). */
  keepDataDir?: boolean;
  /** Runs of the start scenario. */
  runs?: number;
  /** The start scenario: the directory of the reference's start-kube-apiserver.sh and stop-kube-apiserver.sh. */
  reference?: string;
  client: ClientKind;
  cpuProf?: string;
  /** node: our forked load processes; wrk: Debian's wrk (GET and create); both: each in turn, to check they agree. */
  generator: 'node' | 'wrk' | 'both';
  /** A running server to measure instead of (--target) or beside (--compare) our own. */
  remote?: RemoteOptions;
  compare: boolean;
  /** etcd: each scenario on the embedded store and on a local etcd, side by side. */
  storage: 'embedded' | 'etcd';
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
    '  --objects <n>         objects the restart scenario fills (default 1,000,000)',
    '  --keep-data-dir       the restart scenario keeps its filled data directory and prints where',
    '  --runs <n>            runs of the start scenario (default 5)',
    '  --reference <dir>     the start scenario also starts the reference with <dir>/start-kube-apiserver.sh (FRESH=1)',
    '  --warmup <s>          unmeasured seconds before each run (default 1)',
    '  --concurrency <list>  concurrency levels for every scenario, e.g. 1,8,32',
    '  --workers <n>         load generator processes (default: number of CPUs, at most the concurrency)',
    '  --client <raw|https>  load client: a minimal keep-alive HTTP/1.1 client on node:tls (default: it costs far less CPU per request),',
    '                        or node:https with keep-alive Agents',
    '  --cpu-prof <dir>      run the server with --cpu-prof and write its profiles to <dir>',
    '  --generator <g>       node (default), wrk (Debian\'s wrk, GET and create only) or both',
    '  --server-cpus <list>  hold our server to these CPUs (taskset list, e.g. 0), and',
    '  --load-cpus <list>    wrk to these (e.g. 1): the read-loops scenarios at one core and two, load apart',
    '  --storage <s>         embedded (default), or etcd: every scenario also on our server over a local etcd',
    '                        (started by the bench from Debian\'s etcd-server), printed side by side',
    '',
    'Any server (the reference included; core ConfigMaps in a namespace of the bench\'s own):',
    '  --target <url>        measure the server at <url> instead of starting ours',
    '  --compare <url>       measure ours and the server at <url> in the same run, and print ratios',
    '  --token <t>           bearer token for --target/--compare',
    '  --kubeconfig <file>   server, CA and credential from a kubeconfig (token or client certificate)',
    '  --cacert <file>       CA of the target\'s serving certificate',
    '  --insecure            do not verify the target\'s serving certificate',
    '  --target-pid <pids>   the target\'s server process on this machine, to report its CPU; more than one, comma-separated',
    '                        (kube-apiserver,etcd): the memory scenario sums their RSS, CPU is the first one\'s',
  ].join('\n');
}

function parseOptions(argv: string[]): Options {
  const o: Options = { scenarios: [], duration: 5, warmup: 1, workers: machineInfo().nproc, client: 'raw', generator: 'node', compare: false, storage: 'embedded' };
  const remote = (): RemoteOptions => (o.remote ??= {});
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
    else if (flag === '--objects') o.objects = Math.max(1, Math.floor(num(flag, value())));
    else if (flag === '--keep-data-dir') o.keepDataDir = true;
    else if (flag === '--runs') o.runs = Math.max(1, Math.floor(num(flag, value())));
    else if (flag === '--reference') o.reference = path.resolve(String(value()));
    else if (flag === '--server-cpus') pinning.server = String(value());
    else if (flag === '--load-cpus') pinning.load = String(value());
    else if (flag === '--workers') o.workers = Math.max(1, Math.floor(num(flag, value())));
    else if (flag === '--concurrency') o.concurrency = String(value()).split(',').map((x) => Math.floor(num(flag, x.trim()))).filter((n) => n > 0);
    else if (flag === '--client') {
      const c = String(value());
      if (c !== 'https' && c !== 'raw') throw new Error('--client is https or raw');
      o.client = c;
    } else if (flag === '--cpu-prof') o.cpuProf = path.resolve(String(value()));
    else if (flag === '--generator') {
      const g = String(value());
      if (g !== 'node' && g !== 'wrk' && g !== 'both') throw new Error('--generator is node, wrk or both');
      o.generator = g;
    } else if (flag === '--storage') {
      const v = String(value());
      if (v !== 'embedded' && v !== 'etcd') throw new Error('--storage is embedded or etcd');
      o.storage = v;
    } else if (flag === '--target' || flag === '--compare') {
      remote().url = String(value());
      o.compare = flag === '--compare';
    } else if (flag === '--token') remote().token = String(value());
    else if (flag === '--kubeconfig') remote().kubeconfig = path.resolve(String(value()));
    else if (flag === '--cacert') remote().caFile = path.resolve(String(value()));
    else if (flag === '--insecure') remote().insecure = true;
    else if (flag === '--target-pid') remote().pids = String(value() ?? '').split(',').map((x) => Math.floor(num(flag, x.trim() || undefined)));
    else if (flag.startsWith('-')) throw new Error(`unknown option ${flag}\n\n${usage()}`);
    else o.scenarios.push(...flag.split(',').filter(Boolean));
  }
  for (const s of o.scenarios) if (!SCENARIOS.some((x) => x.name === s) && !(s in READ_SCENARIOS)) throw new Error(`unknown scenario "${s}"\n\n${usage()}`);
  if (o.remote && !o.remote.url && o.remote.kubeconfig) o.remote.url = readKubeconfig(o.remote.kubeconfig).server;
  if (o.remote && !o.remote.url) throw new Error('--token, --kubeconfig, --cacert, --insecure and --target-pid go with --target or --compare');
  const remoteOk = (n: string) => SCENARIOS.find((x) => x.name === n)?.remote ?? READ_SCENARIOS[n]?.remote;
  if (!o.scenarios.length) {
    o.scenarios = [...SCENARIOS.map((s) => s.name), ...Object.keys(READ_SCENARIOS).filter((n) => !READ_SCENARIOS[n].explicit)];
    if (o.remote) o.scenarios = o.scenarios.filter(remoteOk);
  }
  if (o.storage === 'etcd' && o.remote) throw new Error('--storage etcd measures our own server only (not with --target/--compare)');
  if (o.storage === 'etcd' && !o.scenarios.length) o.scenarios = ['create', 'get', 'list', 'watch'];
  if (o.remote) for (const s of o.scenarios) if (!remoteOk(s)) throw new Error(`scenario "${s}" runs on our own server only (it needs server flags or /proc of the server)`);
  if (o.remote && !o.remote.pids && o.scenarios.includes('memory')) throw new Error('the memory scenario reads the other server\'s RSS from /proc: give its process ids with --target-pid (kube-apiserver and etcd: --target-pid <pid>,<pid>)');
  // the comparison needs its baseline
  if (o.scenarios.includes('create-nosync-compare') && !o.scenarios.includes('create')) o.scenarios.unshift('create');
  return o;
}

interface RunResult {
  scenario: string;
  /** "ours" or the target's host:port. */
  target: string;
  generator: 'node' | 'wrk';
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
async function runOnce(t: Target, sc: Scenario, concurrency: number, o: Options, run: string, getPath?: string): Promise<RunResult> {
  const nWorkers = Math.min(o.workers, concurrency);
  const workers: ChildProcess[] = [];
  const results: Promise<WorkerResult>[] = [];
  const flowing: Promise<void>[] = [];
  for (let w = 0; w < nWorkers; w++) {
    const share = Math.floor(concurrency / nWorkers) + (w < concurrency % nWorkers ? 1 : 0);
    const child = fork(selfPath, ['--worker'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    workers.push(child);
    results.push(new Promise((resolve, reject) => {
      child.on('message', (m: WorkerResult) => { if (m.type === 'result') resolve(m); });
      child.once('exit', (code) => reject(new Error(`load worker exited (${code}) without a result`)));
    }));
    flowing.push(new Promise((resolve) => {
      child.on('message', (m: { type: string }) => { if (m.type === 'flowing') resolve(); });
      child.once('exit', () => resolve());
    }));
    const init: WorkerInit = {
      type: 'init', host: t.host, port: sc.listener === 'mtls' ? t.mtlsPort! : t.port, servername: tlsOptions(t).servername, token: t.token, ca: t.ca, cert: t.cert, key: t.key,
      namespace: t.namespace, kind: sc.kind, concurrency: share, worker: w, run, getPath, client: o.client,
    };
    if (sc.clientCert) {
      init.cert = readFileSync(path.join(t.dataDir!, 'pki', 'admin-client.crt'), 'utf8');
      init.key = readFileSync(path.join(t.dataDir!, 'pki', 'admin-client.key'), 'utf8');
      init.token = '';
      init.client = 'raw';
    }
    child.send(init);
  }
  // the warm-up starts once every worker has had its first answer: on a busy machine forking and
  // connecting can take longer than a warm-up, and a window that opened before the load would count nothing
  let giveUp: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(flowing), new Promise((r) => { giveUp = setTimeout(r, 60_000); })]);
  clearTimeout(giveUp); // a pending timer would keep the process alive after the last run
  await sleep(o.warmup * 1000);
  for (const c of workers) c.send({ type: 'measure' });
  const cpu0 = serverCpu(t);
  const busy0 = machineBusySeconds();
  const t0 = performance.now();
  await sleep(o.duration * 1000);
  for (const c of workers) c.send({ type: 'stop' });
  const cpu1 = serverCpu(t);
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
  return finish(t, sc, 'node', concurrency, nWorkers, {
    ops, errors: got.reduce((a, g) => a + g.errors, 0), firstError: got.find((g) => g.firstError)?.firstError, seconds, lat, clientCpu, cpu0, cpu1, busy: busy1 - busy0,
  });
}

/** CPU of the target's server process (main thread and the rest), NaN when it is not known. */
function serverCpu(t: Target): { main: number; others: number } {
  return t.pid ? procThreadCpuSeconds(t.pid) : { main: NaN, others: NaN };
}

interface Measured { ops: number; errors: number; firstError?: string; seconds: number; lat: Float64Array | { p50: number; p99: number }; clientCpu: number; cpu0: { main: number; others: number }; cpu1: { main: number; others: number }; busy: number }

/** One result row from what a generator measured. */
function finish(t: Target, sc: Scenario, generator: 'node' | 'wrk', concurrency: number, workers: number, m: Measured): RunResult {
  const { ops, seconds, lat, clientCpu, cpu0, cpu1 } = m;
  const serverCpu = cpu1.main + cpu1.others - cpu0.main - cpu0.others;
  const r2 = (x: number) => Math.round(x * 100) / 100;
  const pct = (p: number) => (lat instanceof Float64Array ? percentile(lat, p) : p === 50 ? lat.p50 : p === 99 ? lat.p99 : NaN);
  const known = !Number.isNaN(serverCpu);
  return {
    scenario: sc.name, target: t.label, generator, serverArgs: sc.serverArgs, concurrency, workers, ops,
    errors: m.errors, firstError: m.firstError,
    seconds: r2(seconds), opsPerSec: Math.round(ops / seconds),
    p50ms: r2(pct(50)), p90ms: r2(pct(90)), p99ms: r2(pct(99)), maxMs: r2(lat instanceof Float64Array && lat.length ? lat[lat.length - 1] : NaN),
    serverCpuSeconds: r2(serverCpu), serverCpuPct: Math.round((serverCpu / seconds) * 100), serverCpuMsPerOp: ops ? Math.round((serverCpu / ops) * 1e5) / 100 : NaN,
    serverMainThreadCpuPct: Math.round(((cpu1.main - cpu0.main) / seconds) * 100), serverOtherThreadsCpuPct: Math.round(((cpu1.others - cpu0.others) / seconds) * 100),
    clientCpuSeconds: r2(clientCpu), clientCpuPct: Math.round((clientCpu / seconds) * 100),
    // without the server's pid its CPU is inside "other"
    otherCpuPct: Math.max(0, Math.round(((m.busy - (known ? serverCpu : 0) - clientCpu) / seconds) * 100)),
  };
}

/** The same measurement with Debian's wrk as the generator (after a warm-up run of its own). */
async function runWrkOnce(t: Target, sc: Scenario, concurrency: number, o: Options, run: string, getPath?: string): Promise<RunResult> {
  if (o.warmup > 0) await runWrk(t, sc.kind, getPath, concurrency, Math.max(1, Math.round(o.warmup)), `${run}w`);
  const cpu0 = serverCpu(t);
  const busy0 = machineBusySeconds();
  const r = await runWrk(t, sc.kind, getPath, concurrency, o.duration, run);
  const cpu1 = serverCpu(t);
  const ok = r.requests - r.non2xx;
  return finish(t, sc, 'wrk', concurrency, 1, {
    ops: ok, errors: r.non2xx + r.errors, firstError: r.non2xx ? `${r.non2xx} answers were not 2xx` : undefined, seconds: r.seconds,
    lat: { p50: r.p50ms, p99: r.p99ms }, clientCpu: r.clientCpuSeconds, cpu0, cpu1, busy: machineBusySeconds() - busy0,
  });
}

async function runScenario(sc: Scenario, o: Options, make: () => Promise<Target>, onRow: (r: RunResult) => void): Promise<RunResult[]> {
  const t = await make();
  const out: RunResult[] = [];
  try {
    let getPath: string | undefined;
    if (sc.yardstick) getPath = '/yardstick';
    else if (sc.kind === 'get') {
      getPath = `/api/v1/namespaces/${t.namespace}/configmaps/bench-get`;
      const r = await call(t, 'POST', `/api/v1/namespaces/${t.namespace}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bench-get' }, data: { key: 'value' } });
      if (r.status !== 201) throw new Error(`creating the object to GET: ${r.status} ${r.text}`);
    }
    const levels = o.concurrency ?? sc.concurrency;
    const generators = o.generator === 'both' ? (['node', 'wrk'] as const) : [o.generator];
    for (let i = 0; i < levels.length; i++) {
      for (const g of generators) {
        const r = g === 'wrk' ? await runWrkOnce(t, sc, levels[i], o, `${i}`, getPath) : await runOnce(t, sc, levels[i], o, `${i}`, getPath);
        out.push(r);
        onRow(r);
      }
    }
  } finally {
    await t.stop();
  }
  return out;
}

const HEADER = ['scenario', 'target', 'gen', 'conc', 'ops', 'seconds', 'ops/s', 'p50 ms', 'p99 ms', 'server CPU %', '(main thr)', 'client CPU %', 'other CPU %', 'srv CPU ms/op', 'errors'];
const dash = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
const rowOf = (r: RunResult) => [r.scenario, r.target, r.generator, r.concurrency, r.ops, r.seconds.toFixed(2), r.opsPerSec, dash(r.p50ms, 2), dash(r.p99ms, 2), dash(r.serverCpuPct), dash(r.serverMainThreadCpuPct), r.clientCpuPct, r.otherCpuPct, dash(r.serverCpuMsPerOp, 2), r.errors];

async function main() {
  const o = parseOptions(process.argv.slice(2));
  const machine = machineInfo();
  const disk = measureDiskSync();
  const startedAt = new Date();
  process.stdout.write(`machine: ${machine.nproc} CPUs (${machine.cpuModel}), node ${machine.node}, ${machine.platform}, kernel ${machine.kernel}\n`);
  process.stdout.write(`disk: 200-byte append + fdatasync in ${os.tmpdir()}: p50 ${disk.p50ms.toFixed(2)} ms, p99 ${disk.p99ms.toFixed(2)} ms\n`);
  process.stdout.write(`runs: ${o.warmup}s warm-up + ${o.duration}s measured each; up to ${o.workers} load worker processes; client ${o.client}; generator ${o.generator}\n`);
  if (o.remote) process.stdout.write(`${o.compare ? 'comparing with' : 'target'}: ${o.remote.url}${o.remote.pids ? ` (server pid${o.remote.pids.length > 1 ? 's' : ''} ${o.remote.pids.join(', ')})` : ' (its CPU is not measured: no --target-pid)'}\n`);
  process.stdout.write('\n');
  if (o.generator !== 'node' && !wrkAvailable()) throw new Error('--generator wrk needs wrk on the PATH (Debian: apt-get install wrk)');

  // Each scenario gets fresh targets: a new server of ours (new data directory), a new namespace on a remote one.
  const makers = (sc: { serverArgs?: string[]; name: string }): (() => Promise<Target>)[] => {
    const nodeArgs = o.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProf}`, `--cpu-prof-name=${sc.name}.cpuprofile`] : [];
    if (o.cpuProf) mkdirSync(o.cpuProf, { recursive: true });
    const own = () => ownTarget(sc.serverArgs ?? [], nodeArgs);
    const remote = () => remoteTarget(o.remote!);
    if (o.storage === 'etcd') return [own, () => ownEtcdTarget(sc.serverArgs ?? [], nodeArgs)];
    return o.remote ? (o.compare ? [own, remote] : [remote]) : [own];
  };

  const results: RunResult[] = [];
  const skipped: { scenario: string; reason: string }[] = [];
  const readResults: ReadResult[] = [];
  for (const name of o.scenarios) {
    if (name in READ_SCENARIOS) {
      process.stderr.write(`${name}: ${READ_SCENARIOS[name].description}\n`);
      for (const make of makers({ name, serverArgs: READ_SCENARIOS[name].serverArgs })) readResults.push(...(await READ_SCENARIOS[name].run(o, make)));
      continue;
    }
    const sc = SCENARIOS.find((s) => s.name === name)!;
    if (sc.unavailable) {
      skipped.push({ scenario: name, reason: sc.unavailable });
      process.stdout.write(`skipping ${name}: ${sc.unavailable}\n`);
      continue;
    }
    process.stderr.write(`${name}: ${sc.description}\n`);
    for (const make of sc.yardstick ? [yardstickTarget] : makers(sc)) {
      results.push(...(await runScenario(sc, o, make, (r) => process.stderr.write(`  ${r.target} ${r.generator} concurrency ${r.concurrency}: ${r.opsPerSec} ops/s, p99 ${r.p99ms} ms${r.errors ? `, ${r.errors} errors (${r.firstError})` : ''}\n`))));
    }
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

  const sideBySide = o.compare || o.storage === 'etcd' ? compareRows(results, readResults) : [];
  if (sideBySide.length) {
    const [ours, other] = o.storage === 'etcd' ? ['embedded', 'etcd'] : ['ours', o.remote!.url!];
    process.stdout.write(`\nside by side, same run (ratio: how many times better ${ours} is):\n`);
    process.stdout.write(table(['scenario', 'measure', ours, other, 'ratio'], sideBySide.map((c) => [c.scenario, c.measure, c.ours, c.other, c.ratio.toFixed(2) + 'x'])) + '\n');
  }
  const generators = o.generator === 'both' ? agreement(results) : [];
  if (generators.length) {
    process.stdout.write('\nthe two load generators (node, wrk), same server and concurrency:\n');
    process.stdout.write(table(['scenario', 'target', 'conc', 'node ops/s', 'wrk ops/s', 'difference'], generators.map((g) => [g.scenario, g.target, g.concurrency, g.node, g.wrk, (g.diff * 100).toFixed(1) + ' %'])) + '\n');
  }

  const dir = path.join(repoRoot, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const stem = path.join(dir, startedAt.toISOString().replace(/[:.]/g, '-'));
  // the command as a user would type it again, without the token's value
  const argv = process.argv.slice(2).map((a, i, all) => (all[i - 1] === '--token' ? '<token>' : a.startsWith('--token=') ? '--token=<token>' : a));
  const command = ['npm run bench --', ...argv].join(' ');
  const record = { startedAt: startedAt.toISOString(), command, options: { ...o, remote: o.remote && { ...o.remote, token: o.remote.token ? '(set)' : undefined } }, machine, disk, results, readResults, comparison, sideBySide, generators, skipped };
  writeFileSync(stem + '.json', JSON.stringify(record, null, 2) + '\n');
  writeFileSync(stem + '.svg', plot(command, results, readResults));
  process.stdout.write(`\nresults: ${path.relative(process.cwd(), stem)}.json and .svg\n`);
}

interface SideBySide { scenario: string; measure: string; ours: number; other: number; ratio: number }

/** Pairs our figures with the other target's for the same scenario and case: ratio > 1 means ours is better. */
function compareRows(results: RunResult[], reads: ReadResult[]): SideBySide[] {
  const out: SideBySide[] = [];
  for (const r of results.filter((x) => x.target === 'ours')) {
    const o = results.find((x) => x.target !== 'ours' && x.scenario === r.scenario && x.concurrency === r.concurrency && x.generator === r.generator);
    if (o) out.push({ scenario: r.scenario, measure: `ops/s, concurrency ${r.concurrency} (${r.generator})`, ours: r.opsPerSec, other: o.opsPerSec, ratio: r.opsPerSec / o.opsPerSec });
  }
  for (const r of reads.filter((x) => x.target === 'ours')) {
    const o = reads.find((x) => x.target !== 'ours' && x.scenario === r.scenario && x.case === r.case && x.watchers === r.watchers);
    if (!o) continue;
    if (r.scenario === 'list') out.push({ scenario: 'list', measure: `p50 ms, ${r.case}`, ours: Number(r['p50 ms']), other: Number(o['p50 ms']), ratio: Number(o['p50 ms']) / Number(r['p50 ms']) });
    // less is better: the ratio is theirs over ours
    if (r.scenario === 'memory') {
      out.push({ scenario: 'memory', measure: `RSS MiB, ${r.case}`, ours: Number(r['RSS MiB']), other: Number(o['RSS MiB']), ratio: Number(o['RSS MiB']) / Number(r['RSS MiB']) });
      if (r[SETTLED] !== undefined) out.push({ scenario: 'memory', measure: `${SETTLED}, ${r.case}`, ours: Number(r[SETTLED]), other: Number(o[SETTLED]), ratio: Number(o[SETTLED]) / Number(r[SETTLED]) });
    }
    if (r.scenario === 'watch' && r.watchers) {
      out.push({ scenario: 'watch', measure: `deliveries/s, ${r.watchers} watchers`, ours: Number(r['deliveries/s']), other: Number(o['deliveries/s']), ratio: Number(r['deliveries/s']) / Number(o['deliveries/s']) });
      out.push({ scenario: 'watch', measure: `writes/s, ${r.watchers} watchers`, ours: Number(r['writes/s']), other: Number(o['writes/s']), ratio: Number(r['writes/s']) / Number(o['writes/s']) });
    }
  }
  return out;
}

/** node vs wrk on the same target and concurrency: the relative difference of their ops/s. */
function agreement(results: RunResult[]) {
  return results.filter((r) => r.generator === 'node').flatMap((n) => {
    const w = results.find((x) => x.generator === 'wrk' && x.target === n.target && x.scenario === n.scenario && x.concurrency === n.concurrency);
    return w ? [{ scenario: n.scenario, target: n.target, concurrency: n.concurrency, node: n.opsPerSec, wrk: w.opsPerSec, diff: Math.abs(n.opsPerSec - w.opsPerSec) / Math.max(n.opsPerSec, w.opsPerSec) }] : [];
  });
}

if (process.argv[2] === '--worker') {
  loadWorkerMain();
} else {
  main().catch((e) => {
    process.stderr.write(`bench: ${(e as Error).message}\n`);
    process.exit(1);
  });
}
