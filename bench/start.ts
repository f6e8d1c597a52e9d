// The start scenario (`npm run bench -- start [--runs n] [--reference <dir>]`): time to a serving
// server for a test suite. Each run is a fresh Node.js process (bench/start-child.ts) that imports
// the library and calls startServer({ memory: true }) twice: the first server of a process and a
// second one beside it; then the command `--ephemeral --print-kubeconfig`, from spawn to the printed
// line; with --reference, the reference's start-kube-apiserver.sh (FRESH=1: new etcd data and PKI,
// as a test harness starts it) from spawn to /readyz ok, polled every 20 ms.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { percentile, repoRoot, table } from './lib.js';

interface ChildResult { imported: number; first: { serving: number; ready: number }; second: { serving: number; ready: number } }

const ms = (n: number) => Math.round(n);
const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

function runChild(): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'dist/bench/start-child.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as ChildResult) : reject(new Error(`start-child exited with ${code}: ${out}`))));
  });
}

/** Milliseconds from spawning the command to its printed kubeconfig line; then SIGTERM at once, and a clean exit expected. */
function runCommand(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [path.join(repoRoot, 'dist/kernel/main.js'), '--ephemeral', '--print-kubeconfig'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let took = 0;
    child.stdout.once('data', () => { took = performance.now() - t0; child.kill('SIGTERM'); });
    child.once('exit', (code, signal) => {
      if (!took) reject(new Error(`the command exited with ${code ?? signal} before printing`));
      else if (code !== 0) reject(new Error(`the command did not stop cleanly on SIGTERM: ${code ?? signal}`));
      else resolve(took);
    });
  });
}

function getStatus(url: string, token?: string): Promise<number> {
  return new Promise((resolve) => {
    https.get(url, { rejectUnauthorized: false, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => { res.resume(); resolve(res.statusCode!); }).on('error', () => resolve(0));
  });
}

/** The reference (etcd + kube-apiserver) through its scripts in `dir`: milliseconds from spawn to /readyz ok; stopped after. */
async function runReference(dir: string): Promise<number> {
  execFileSync(path.join(dir, 'stop-kube-apiserver.sh'), { stdio: 'ignore' });
  const port = process.env.APISERVER_PORT ?? '26443';
  const t0 = performance.now();
  const script = spawn(path.join(dir, 'start-kube-apiserver.sh'), { env: { ...process.env, FRESH: '1' }, stdio: 'ignore' });
  const tokenFile = path.join(dir, 'admin.token');
  try {
    for (;;) {
      const token = existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : undefined;
      if ((await getStatus(`https://127.0.0.1:${port}/readyz`, token)) === 200) return performance.now() - t0;
      if (script.exitCode !== null && script.exitCode !== 0) throw new Error(`start-kube-apiserver.sh exited with ${script.exitCode}`);
      if (performance.now() - t0 > 120_000) throw new Error('the reference was not ready within 120 s');
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await new Promise((r) => (script.exitCode === null ? script.once('exit', r) : r(undefined)));
    execFileSync(path.join(dir, 'stop-kube-apiserver.sh'), { stdio: 'ignore' });
  }
}

export async function benchStart(runs: number, referenceDir?: string): Promise<string> {
  const lines = [`start: ${runs} runs each; load average before: ${load()}`];
  const children: ChildResult[] = [];
  for (let i = 0; i < runs; i++) children.push(await runChild());
  const commands: number[] = [];
  for (let i = 0; i < runs; i++) commands.push(await runCommand());
  const reference: number[] = [];
  if (referenceDir) for (let i = 0; i < Math.min(runs, 3); i++) reference.push(await runReference(referenceDir));
  const row = (what: string, xs: number[]) => [what, ms(median(xs)), ms(Math.min(...xs)), ms(Math.max(...xs))];
  lines.push(table(['milliseconds', 'median', 'min', 'max'], [
    row('import of the library (first server\'s process)', children.map((c) => c.imported)),
    row('startServer, first in its process: call to serving', children.map((c) => c.first.serving)),
    row('  ... to /readyz ok', children.map((c) => c.first.ready)),
    row('startServer, second in the process: call to serving', children.map((c) => c.second.serving)),
    row('  ... to /readyz ok', children.map((c) => c.second.ready)),
    row('--ephemeral --print-kubeconfig: spawn to the printed path', commands),
    ...(reference.length ? [row('reference etcd + kube-apiserver (FRESH=1): spawn to /readyz ok', reference)] : []),
  ]));
  lines.push(`load average after: ${load()}`);
  return lines.join('\n') + '\n';
}
