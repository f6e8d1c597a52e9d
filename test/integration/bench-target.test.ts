// The bench drives any server named by URL: run it with --target against a server started here, as
// a user would point it at the reference, and check the record it writes and that it cleans up.
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { repoRoot, withServer } from '../lib/server.js';

const runJs = path.join(repoRoot, 'dist/bench/run.js');
const resultsDir = path.join(repoRoot, 'bench/results');

function bench(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [runJs, ...args], { timeout: 240_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr });
    });
  });
}

function newestRecord(after: number): any {
  const files = readdirSync(resultsDir).filter((f) => f.endsWith('.json')).map((f) => path.join(resultsDir, f)).filter((f) => statSync(f).mtimeMs >= after);
  files.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return files.length ? JSON.parse(readFileSync(files[0], 'utf8')) : undefined;
}

t.test('--target measures a running server with a token, in a namespace it removes after', async (t) => {
  const s = await withServer(t);
  const since = Date.now();
  // two pids, as for kube-apiserver and etcd: the first is the server whose CPU is read
  // a longer window than a figure needs: a CI machine at load 7 once let a 2 s window pass with no answer
  const r = await bench(['get', 'create', '--duration', '5', '--warmup', '2', '--concurrency', '2', '--workers', '1', '--target', s.url, '--token', s.token, '--insecure', '--target-pid', `${s.proc.pid},${process.pid}`]);
  t.equal(r.code, 0, r.out);
  t.match(r.out, `(server pids ${s.proc.pid}, ${process.pid})`);
  const rec = newestRecord(since);
  t.ok(rec, 'a JSON record was written');
  t.notOk(JSON.stringify(rec).includes(s.token), 'the record does not contain the token');
  for (const scenario of ['get', 'create']) {
    const row = rec.results.find((x: any) => x.scenario === scenario);
    t.ok(row && row.ops > 0, `${scenario}: requests were answered`);
    t.equal(row?.errors, 0, `${scenario}: no errors (${row?.firstError ?? ''})`);
    t.equal(row?.target, new URL(s.url).host, `${scenario}: the row names the target`);
  }
  const svg = readFileSync(path.join(resultsDir, path.basename(rec.startedAt.replace(/[:.]/g, '-')) + '.svg'), 'utf8');
  t.match(svg, /^<svg /, 'an SVG plot was written beside the record');
  const nss = await s.get('/api/v1/namespaces');
  const left = nss.json.items.map((n: any) => n.metadata.name).filter((n: string) => n.startsWith('bench-'));
  for (const n of left) {
    const ns = await s.get(`/api/v1/namespaces/${n}`);
    t.ok(ns.status === 404 || ns.json.metadata.deletionTimestamp, `bench namespace ${n} is gone or terminating`);
  }
});

t.test('--compare runs ours and the other server and prints ratios', async (t) => {
  const s = await withServer(t);
  const r = await bench(['get', '--duration', '2', '--warmup', '1', '--concurrency', '2', '--workers', '1', '--compare', s.url, '--token', s.token, '--insecure']);
  t.equal(r.code, 0, r.out);
  t.match(r.out, /side by side, same run/);
  t.match(r.out, /ops\/s, concurrency 2 \(node\)\s+\d+\s+\d+\s+[\d.]+x/);
});

t.test('bad target options are refused with a message', async (t) => {
  const r = await bench(['get', '--token', 'x']);
  t.not(r.code, 0);
  t.match(r.out, /go with --target or --compare/);
  const r2 = await bench(['apply', '--target', 'https://127.0.0.1:1', '--token', 'x']);
  t.not(r2.code, 0);
  t.match(r2.out, /runs on our own server only/);
  // another server's memory is read from /proc: without its pids there is nothing to read
  const r3 = await bench(['memory', '--compare', 'https://127.0.0.1:1', '--token', 'x']);
  t.not(r3.code, 0);
  t.match(r3.out, /memory scenario reads the other server's RSS from \/proc: give its process ids with --target-pid/);
  const r4 = await bench(['memory', '--compare', 'https://127.0.0.1:1', '--token', 'x', '--target-pid', '12,etcd']);
  t.not(r4.code, 0);
  t.match(r4.out, /--target-pid needs a number/);
});
