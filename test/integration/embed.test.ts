// The library form (kernel/embed.ts, `import { startServer } from 'cluster-apiserver'`): a server in
// the test's own process, on the memory store, used through @kubernetes/client-node; two side by side;
// stop() gives back the port, the data directory and lets the process exit.
import t, { type Test } from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import https from 'node:https';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { startServer, type EmbeddedServer } from '../../kernel/embed.js';
import { mainJs, repoRoot } from '../lib/server.js';
import { until } from '../lib/poll.js';

const started = async (t: Test, o: Parameters<typeof startServer>[0] = { memory: true }): Promise<EmbeddedServer> => {
  const s = await startServer(o);
  t.teardown(() => s.stop());
  return s;
};
const clientOf = (s: EmbeddedServer) => {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(s.kubeconfig);
  return { kc, core: kc.makeApiClient(k8s.CoreV1Api) };
};
/** GET on a server with its CA and the given token: the status code. */
const statusOf = (s: EmbeddedServer, p: string, token: string) => new Promise<number>((resolve, reject) => {
  https.get(`${s.url}${p}`, { ca: s.ca, headers: { authorization: `Bearer ${token}` } }, (res) => { res.resume(); resolve(res.statusCode!); }).on('error', reject);
});
const canListen = (port: number) => new Promise<boolean>((resolve) => {
  const srv = net.createServer();
  srv.once('error', () => resolve(false));
  srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
});

t.test('a memory-store server through @kubernetes/client-node: list, create, watch', async (t) => {
  const s = await started(t);
  t.match(s.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  t.equal(s.url, `https://127.0.0.1:${s.port}`);
  t.match(s.ca, /BEGIN CERTIFICATE/);
  t.ok(s.kubeconfig.includes(s.token), 'the kubeconfig carries the admin token');
  t.notOk(existsSync(path.join(s.dataDir, 'store')), 'the memory store writes no store directory');
  const { kc, core } = clientOf(s);
  const names = await until(async () => (await core.listNamespace()).items.map((n) => n.metadata!.name!), (l) => l.includes('default') && l.includes('kube-system'), 60_000);
  t.ok(names.includes('default'), 'the system namespaces, under the Kubernetes names (the library\'s default brand)');

  const list = await core.listNamespacedConfigMap({ namespace: 'default' });
  const seen: string[] = [];
  const req = await new k8s.Watch(kc).watch('/api/v1/namespaces/default/configmaps', { resourceVersion: list.metadata!.resourceVersion },
    (type: string, obj: k8s.V1ConfigMap) => seen.push(`${type} ${obj.metadata!.name} ${obj.data?.k ?? ''}`), () => {});
  t.teardown(() => req.abort());
  const made = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'cm' }, data: { k: '1' } } });
  t.equal(made.metadata!.name, 'cm');
  await core.replaceNamespacedConfigMap({ name: 'cm', namespace: 'default', body: { ...made, data: { k: '2' } } });
  await until(() => seen, (l) => l.includes('MODIFIED cm 2'), 60_000);
  t.same(seen.filter((e) => e.includes(' cm ')), ['ADDED cm 1', 'MODIFIED cm 2'], 'the watch from the list\'s resourceVersion sees both writes, in order');
  t.equal((await core.readNamespacedConfigMap({ name: 'cm', namespace: 'default' })).data?.k, '2');
});

t.test('two servers in one process: their own ports, their own data', async (t) => {
  const [a, b] = await Promise.all([started(t), started(t)]);
  t.not(a.port, b.port, 'different ports');
  t.not(a.dataDir, b.dataDir, 'different data directories');
  t.not(a.token, b.token, 'different credentials');
  await clientOf(a).core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'only-in-a' } } });
  const inB = await clientOf(b).core.listNamespacedConfigMap({ namespace: 'default' });
  t.notOk(inB.items.some((c) => c.metadata!.name === 'only-in-a'), 'a write to one is not seen by the other');
  t.equal((await clientOf(a).core.readNamespacedConfigMap({ name: 'only-in-a', namespace: 'default' })).metadata!.name, 'only-in-a');
  t.equal(await statusOf(b, '/api/v1/namespaces', b.token), 200);
  t.equal(await statusOf(b, '/api/v1/namespaces', a.token), 401, 'one server does not take the other\'s token');
});

t.test('stop() frees the port and removes the temporary data directory; a given one is kept', async (t) => {
  const s = await startServer({ memory: true });
  t.notOk(await canListen(s.port), 'the port is taken while serving');
  await s.stop();
  t.ok(await canListen(s.port), 'the port is free after stop()');
  t.notOk(existsSync(s.dataDir), 'the temporary data directory is gone');
  await s.stop(); // a second stop is harmless

  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-embed-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const kept = await startServer({ dataDir: dir, config: { controllers: [] } });
  t.equal(kept.dataDir, dir);
  await clientOf(kept).core.createNamespace({ body: { metadata: { name: 'kept' } } });
  await kept.stop();
  t.ok(readdirSync(dir).includes('store'), 'a given data directory is kept, with its (on-disk) store');
  const again = await started(t, { dataDir: dir, config: { controllers: [] } });
  t.equal((await clientOf(again).core.readNamespace({ name: 'kept' })).metadata!.name, 'kept', 'and served again by the next start');
});

t.test('a bad configuration or a taken port is refused with a message, and leaves nothing behind', async (t) => {
  const temporaries = () => readdirSync(os.tmpdir()).filter((n) => n.startsWith('cluster-apiserver-')).sort();
  const before = temporaries();
  await t.rejects(startServer({ memory: true, config: { nosuchkey: 1 } as never }), /unknown key "nosuchkey"/);
  await t.rejects(startServer({ memory: true, config: { controllers: [{ plugin: 'no-such-controller' }] } }), /no-such-controller/);
  const a = await started(t);
  await t.rejects(startServer({ memory: true, port: a.port }), new RegExp(`${a.port}`), 'a port in use: the error names it');
  t.same(temporaries().filter((n) => n !== path.basename(a.dataDir)), before, 'no temporary data directory left by the refused starts');
  t.equal(await statusOf(a, '/readyz', a.token), 200, 'the server on that port is untouched');
});

t.test('a process that starts and stops servers exits by itself', async (t) => {
  const { NODE_OPTIONS: _, ...env } = process.env; // without the test runner's loaders
  const child = spawn(process.execPath, [path.join(repoRoot, 'test/fixtures/embed-start-stop.mjs')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  // a hang is what this looks for: a generous bound turns it into a failure rather than the file's timeout
  const hung = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(hung);
  t.equal(code, 0, `exit code 0 by itself: no timer, thread or socket left, a refused start's included (output: ${out}${err})`);
  t.equal(out, 'stopped\n', 'the two started, the third refused, both stopped');
});

t.test('the command form: --ephemeral --print-kubeconfig, for a harness in another language', async (t) => {
  const child = spawn(process.execPath, [mainJs, '--ephemeral', '--print-kubeconfig'], { cwd: os.tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const firstLine = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d) => { out += d; if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n'))); });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before printing: ${err}`)));
  });
  t.ok(path.isAbsolute(firstLine) && firstLine.endsWith('admin.kubeconfig'), `stdout's line is the kubeconfig's path: ${firstLine}`);
  const dataDir = path.dirname(firstLine);
  t.notOk(existsSync(path.join(dataDir, 'store')), 'the memory store: no store on disk');
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(firstLine);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'from-harness' } } });
  t.equal((await core.readNamespace({ name: 'from-harness' })).metadata!.name, 'from-harness', 'the kubeconfig works, with the Kubernetes names');
  t.match(err, /cluster-apiserver is serving/, 'the welcome went to stderr');
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'SIGTERM: exit status 0');
  t.equal(out, `${firstLine}\n`, 'stdout held that one line and nothing else');
  t.notOk(existsSync(dataDir), 'the temporary data directory is gone after SIGTERM');
});

t.test('--ephemeral with a data directory or another store is refused; a failed start leaves no directory', async (t) => {
  const run = async (args: string[]) => {
    const argv = args[0] === 'repair' ? ['repair', '--ephemeral', ...args.slice(1)] : ['--ephemeral', ...args];
    const child = spawn(process.execPath, [mainJs, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    return { code, err };
  };
  for (const args of [['--data-dir', os.tmpdir()], ['--storage-backend', 'embedded']]) {
    const { code, err } = await run(args);
    t.equal(code, 2, `${args.join(' ')}: exit status 2`);
    t.match(err, /--ephemeral/, `with a message: ${err.trim()}`);
  }
  const temporaries = () => readdirSync(os.tmpdir()).filter((n) => n.startsWith('cluster-apiserver-')).sort();
  const taken = await started(t);
  const before = temporaries();
  for (const args of [['--secure-port', String(taken.port)], ['repair']]) {
    const { code, err } = await run(args);
    t.equal(code, 1, `${args.join(' ')}: exit status 1 (${err.trim().split('\n').pop()})`);
  }
  t.same(temporaries(), before, 'the temporary data directories of the failed runs are gone');
});

t.test('docs/embedding.md: its client-node sample runs as written', async (t) => {
  const doc = readFileSync(path.join(repoRoot, 'docs/embedding.md'), 'utf8');
  const sample = /```js\n([\s\S]*?)```/.exec(doc)![1];
  // run from inside the package, where 'cluster-apiserver' names this package
  const file = path.join(repoRoot, `embedding-sample-${process.pid}.mjs`);
  writeFileSync(file, sample);
  t.teardown(() => rmSync(file, { force: true }));
  const { NODE_OPTIONS: _, ...env } = process.env;
  const child = spawn(process.execPath, [file], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.equal(code, 0, `exit code 0 (output: ${out})`);
  t.match(out, /mode: 'fast'/, 'it prints what the comment says');
});

/** The first event of a watch (then the request is dropped). */
const firstEvent = (s: EmbeddedServer, p: string) => new Promise<any>((resolve, reject) => {
  const req = https.get(`${s.url}${p}`, { ca: s.ca, headers: { authorization: `Bearer ${s.token}` } }, (res) => {
    let buf = '';
    res.on('data', (d) => {
      buf = (buf + d).replace(/^\n+/, ''); // blank lines keep the stream alive
      if (buf.includes('\n')) { resolve(JSON.parse(buf.slice(0, buf.indexOf('\n')))); req.destroy(); }
    });
  });
  req.on('error', (e) => (String(e).includes('socket hang up') ? undefined : reject(e)));
});

t.test('the memory store keeps history for watches until it is compacted, then 410 Expired', async (t) => {
  const s = await started(t, { memory: true, config: { storage: { plugin: 'memory', options: { retentionSeconds: 1 } }, controllers: [] } });
  const { core } = clientOf(s);
  await core.createNamespace({ body: { metadata: { name: 'h' } } }); // no controllers: no default namespace
  const rv = (await core.createNamespacedConfigMap({ namespace: 'h', body: { metadata: { name: 'h1' } } })).metadata!.resourceVersion!;
  await core.createNamespacedConfigMap({ namespace: 'h', body: { metadata: { name: 'h2' } } });
  const path0 = `/api/v1/namespaces/h/configmaps?watch=1&resourceVersion=${rv}`;
  const replay = await firstEvent(s, path0);
  t.same([replay.type, replay.object.metadata.name], ['ADDED', 'h2'], 'a watch from a recent resourceVersion replays what came after it');
  const expired = await until(async () => {
    await core.createNamespacedConfigMap({ namespace: 'h', body: { metadata: { generateName: 'more-' } } });
    return firstEvent(s, path0);
  }, (e) => e.type === 'ERROR', 60_000, 250);
  t.equal(expired.type, 'ERROR', 'once the retention has passed: an ERROR event');
  t.equal(expired.object.code, 410);
  t.equal(expired.object.reason, 'Expired');
});

const python = ['/usr/bin/python3', 'python3'].find((p) => spawnSync(p, ['-c', 'import kubernetes'], { stdio: 'ignore' }).status === 0);

t.test('docs/embedding.md: its Python harness sample runs as written', { skip: python ? false : 'the Python client is not installed (apt-get install -y python3-kubernetes)' }, async (t) => {
  const doc = readFileSync(path.join(repoRoot, 'docs/embedding.md'), 'utf8');
  const sample = /```python\n([\s\S]*?)```/.exec(doc)![1];
  // the command as this checkout runs it (npx finds an installed package's bin, not this repository's own)
  const script = sample.replace(/^COMMAND = \['npx', 'cluster-apiserver', /m, `COMMAND = [${JSON.stringify(process.execPath)}, ${JSON.stringify(mainJs)}, `);
  t.not(script, sample, 'the sample names its command where the test expects it');
  const temporaries = () => readdirSync(os.tmpdir()).filter((n) => n.startsWith('cluster-apiserver-')).sort();
  const before = temporaries();
  const run = spawnSync(python!, ['-c', script], { encoding: 'utf8', timeout: 300_000 });
  t.equal(run.status, 0, `exit status 0 (${run.stderr})`);
  t.match(run.stdout, /'from-python'/, 'the namespace it created is listed');
  t.match(run.stdout, /'kube-system'/, 'beside the system namespaces, under the Kubernetes names');
  t.same(temporaries(), before, 'the server\'s temporary data directory is gone after terminate()');
});

t.test('the configuration object as a file holds it: simulated nodes and the scheduler, pods scheduled and running', async (t) => {
  const s = await started(t, { memory: true, config: { enableControllers: [{ plugin: 'scheduler' }, { plugin: 'simulated-nodes', options: { count: 2 } }] } });
  const { core } = clientOf(s);
  const nodes = await until(async () => (await core.listNode()).items.map((n) => n.metadata!.name!), (l) => l.length === 2, 60_000);
  t.same(nodes.sort(), ['sim-node-0', 'sim-node-1'], 'two simulated nodes');
  await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } });
  const pod = await until(() => core.readNamespacedPod({ name: 'p', namespace: 'default' }), (p) => p.status?.phase === 'Running', 60_000);
  t.equal(pod.status?.phase, 'Running', 'scheduled onto a simulated node and reported running');
  t.ok(nodes.includes(pod.spec!.nodeName!), `on ${pod.spec!.nodeName}`);
});

t.test('--ephemeral: a SIGTERM during start-up, or at once on the printed line, still removes the directory', async (t) => {
  const temporaries = () => readdirSync(os.tmpdir()).filter((n) => n.startsWith('cluster-apiserver-')).sort();
  const before = temporaries();
  // -v=2 logs each start-up step on stderr: the first one means start-up is under way
  const during = spawn(process.execPath, [mainJs, '--ephemeral', '--print-kubeconfig', '-v=2'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  during.stderr.on('data', (d) => { err += d; if (err.includes('start-up step')) during.kill('SIGTERM'); });
  const code = await new Promise<number | null>((resolve) => during.once('exit', resolve));
  t.equal(code, 1, 'exit status 1, through the exit handlers rather than the signal\'s default');
  t.match(err, /SIGTERM during start-up/);
  // a harness that signals the moment it has read the line (no request in between)
  for (let i = 0; i < 3; i++) {
    const quick = spawn(process.execPath, [mainJs, '--ephemeral', '--print-kubeconfig'], { stdio: ['ignore', 'pipe', 'ignore'] });
    quick.stdout.once('data', () => quick.kill('SIGTERM'));
    const [c, signal] = await new Promise<[number | null, string | null]>((resolve) => quick.once('exit', (c2, s2) => resolve([c2, s2])));
    t.same([c, signal], [0, null], 'exit status 0, not killed by the signal');
  }
  t.same(temporaries(), before, 'no temporary data directory left');
});
