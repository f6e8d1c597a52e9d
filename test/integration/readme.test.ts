// The README's quick start, as written: its first command's `npm start -- ARGS` (on a free port) in
// an empty directory, then its second command there, must answer with the namespaces. Then the
// custom-resource commands with the example manifests the README names.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../lib/server.js';
import { kubectlPath, noKubectl } from '../lib/kubectl.js';
import { until } from '../lib/poll.js';

const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
/** The shell lines of the first ```sh block after a heading, comments dropped. */
function commands(heading: string): string[] {
  const from = readme.indexOf(`\n## ${heading}\n`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(from))![1];
  return block.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter(Boolean);
}

t.test('README quick start: two commands to a working kubectl get namespaces', { skip: noKubectl }, async (t) => {
  const lines = commands('Quick start');
  t.equal(lines.length, 2, 'two commands');
  const start = /^npm install && npm start -- (.*)$/.exec(lines[0]);
  t.ok(start, `the first installs and starts: ${lines[0]}`);
  t.match(lines[1], /^kubectl --kubeconfig data\/admin\.kubeconfig get namespaces$/);

  const cwd = mkdtempSync(path.join(os.tmpdir(), 'capi-readme-'));
  t.teardown(() => rmSync(cwd, { recursive: true, force: true }));
  const server = spawn(process.execPath, [path.join(repoRoot, 'scripts/start.mjs'), ...start![1].split(/\s+/), '--secure-port', '0'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  server.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  server.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  t.teardown(() => { server.kill(); });
  await until(() => out, (o) => o.includes('is serving'), 60_000);
  t.match(out, /cluster-apiserver is serving https:\/\/127\.0\.0\.1:\d+ \(brand kubernetes/);
  // At the default verbosity the banner is not buried: the serving line at most, before it.
  const before = out.slice(0, out.indexOf('cluster-apiserver is serving')).split('\n').filter((l) => /^[IWE]\d{4} /.test(l));
  t.ok(before.length <= 2, `log lines before the banner: ${before.length}\n${before.join('\n')}`);
  t.ok(existsSync(path.join(cwd, 'data/admin.kubeconfig')), './data/admin.kubeconfig');

  const run = (line: string) => {
    const [cmd, ...args] = line.split(/\s+/);
    t.equal(cmd, 'kubectl');
    return spawnSync(kubectlPath!, args, { cwd, encoding: 'utf8', env: { ...process.env, HOME: cwd }, timeout: 60_000 });
  };
  const ns = run(lines[1]);
  t.equal(ns.status, 0, ns.stderr);
  t.match(ns.stdout, /^NAME\s+STATUS\s+AGE\n/);
  for (const n of ['default', 'kube-node-lease', 'kube-public', 'kube-system']) t.match(ns.stdout, new RegExp(`\\n${n}\\s+Active`), n);

  // The custom resources section: its manifests are in the checkout, the data directory in cwd.
  for (const line of commands('Custom resources')) {
    for (const part of line.split('&&').map((p) => p.trim())) {
      const [, ...args] = part.split(/\s+/);
      t.same(args.slice(0, 2), ['--kubeconfig', 'data/admin.kubeconfig'], `${part}: the data directory's kubeconfig`);
      args[1] = path.join(cwd, args[1]);
      const r = spawnSync(kubectlPath!, args, { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, HOME: cwd }, timeout: 60_000 });
      t.equal(r.status, 0, `${part}: ${r.stderr}`);
      if (args[0] === 'get') t.match(r.stdout, /nightly\s+0 3 \* \* \*\s+1\s+/, 'the example CronTab, defaulted');
    }
  }
});

t.test('every kubectl command in the README names the data directory\'s kubeconfig, never the current context', async (t) => {
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  const kubectlLines = blocks.flatMap((b) => b.split('\n')).flatMap((l) => l.replace(/\s+#.*$/, '').split(/&&|\|/)).map((p) => p.trim()).filter((p) => /^kubectl\b/.test(p));
  t.ok(kubectlLines.length >= 6, `${kubectlLines.length} kubectl commands`);
  for (const l of kubectlLines) t.match(l, /^kubectl --kubeconfig data\/admin\.kubeconfig /, l);
});


t.test('docs/plugins.md walks through every example package test/fixtures holds', async (t) => {
  const plugins = readFileSync(path.join(repoRoot, 'docs/plugins.md'), 'utf8');
  const fixtures = path.join(repoRoot, 'test/fixtures');
  const packages = readdirSync(fixtures).filter((d) => existsSync(path.join(fixtures, d, 'package.json'))).sort();
  const words = ['no', 'one', 'two', 'three', 'four', 'five', 'six'];
  const counted = [...plugins.matchAll(/\b(\w+) (?:complete )?example packages\b/gi)].map((m) => m[1].toLowerCase()).filter((w) => words.includes(w));
  t.ok(counted.length >= 2, `the count is said ${counted.length} times`);
  for (const c of counted) t.equal(c, words[packages.length], `"${c} example packages": there are ${packages.length}`);
  const loop = /for d in ([\w -]+); do/.exec(plugins);
  t.same(loop?.[1].trim().split(/\s+/).sort(), packages, 'the publishing steps pack each of them');
});
