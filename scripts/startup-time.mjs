#!/usr/bin/env node
// Time from `npm start` to the first `kubectl get ns` answer, as a person would see it on a built
// tree: npm runs scripts/start.mjs, which runs the server; kubectl reads the admin kubeconfig the
// server writes. The first run creates the data directory (PKI, bootstrap objects); the figures that
// count are the later runs, on an existing data directory.
//
//   node scripts/startup-time.mjs [--runs 5] [--data-dir DIR] [--kubectl PATH] [--direct] [--cpu-prof DIR]
//
// --direct starts `node scripts/start.mjs` without npm, to tell npm's own share.
// --cpu-prof writes a V8 CPU profile of each server start into DIR (node --cpu-prof, which npm
// cannot pass on: the server is then started with `node --cpu-prof scripts/start.mjs`, without npm).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const runs = Number(arg('runs', '5'));
const kubectl = arg('kubectl', ['/usr/lib/google-cloud-sdk/bin/kubectl', 'kubectl'].find((k) => k.includes('/') ? existsSync(k) : true));
const cpuProf = arg('cpu-prof', '');
const ownDir = !arg('data-dir', '');
const dataDir = arg('data-dir', '') || mkdtempSync(path.join(os.tmpdir(), 'capi-startup-'));
const kubeconfig = path.join(dataDir, 'admin.kubeconfig');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function once() {
  const t0 = performance.now();
  const flags = ['--data-dir', dataDir, '--brand', 'kubernetes', '--secure-port', '0'];
  const [cmd, args] = cpuProf ? [process.execPath, ['--cpu-prof', '--cpu-prof-dir', cpuProf, 'scripts/start.mjs', ...flags]]
    : process.argv.includes('--direct') ? [process.execPath, ['scripts/start.mjs', ...flags]]
    : ['npm', ['start', '-s', '--', ...flags]];
  // detached: the server runs in npm's process group, stopped as a whole afterwards
  const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  let serving = 0;
  let answered = 0;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`server exited:\n${out}`);
      if (performance.now() - t0 > 60_000) throw new Error(`no answer within 60 s:\n${out}`);
      if (!serving && out.includes('is serving')) serving = performance.now() - t0;
      if (serving) {
        const r = spawnSync(kubectl, ['--kubeconfig', kubeconfig, 'get', 'ns'], { encoding: 'utf8' });
        if (r.status === 0 && r.stdout.includes('default')) { answered = performance.now() - t0; break; }
      }
      await sleep(20);
    }
  } finally {
    try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
    await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
  }
  return { serving, answered };
}

const results = [];
for (let i = 0; i <= runs; i++) {
  const r = await once();
  console.log(`${i === 0 && ownDir ? 'first start (new data directory)' : `run ${i}`}: "is serving" after ${(r.serving / 1000).toFixed(2)} s, kubectl get ns answered after ${(r.answered / 1000).toFixed(2)} s`);
  if (i > 0 || !ownDir) results.push(r.answered);
}
results.sort((a, b) => a - b);
console.log(`load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}; first kubectl answer: median ${(results[results.length >> 1] / 1000).toFixed(2)} s, best ${(results[0] / 1000).toFixed(2)} s, worst ${(results[results.length - 1] / 1000).toFixed(2)} s`);
if (ownDir) rmSync(dataDir, { recursive: true, force: true });
