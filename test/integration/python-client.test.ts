// The official Python client (Debian's python3-kubernetes) watching through the server: each event
// reaches `watch.Watch().stream()` when it is sent, not when the next one arrives. urllib3 hands a
// chunk over only once its closing CRLF is read, so this fails where a chunk is left open.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { withServer } from '../lib/server.js';
import { until } from '../lib/poll.js';

const python = ['/usr/bin/python3', 'python3'].find((p) => spawnSync(p, ['-c', 'import kubernetes'], { stdio: 'ignore' }).status === 0);
const skip = python ? false : 'the Python client is not installed (apt-get install -y python3-kubernetes); .ci/run installs it';

const WATCHER = `
import sys
from kubernetes import client, config, watch
config.load_kube_config(config_file=sys.argv[1])
w = watch.Watch()
for ev in w.stream(client.CoreV1Api().list_namespaced_config_map, namespace=sys.argv[2], timeout_seconds=120):
    print(ev['type'], ev['object'].metadata.name, ev['object'].metadata.resource_version, flush=True)
`;

t.test('python3-kubernetes watch sees each event when it is sent', { skip }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  t.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'py' } } })).status, 201);
  // The namespace's one object so far: the root CA ConfigMap, published by a controller.
  await until(() => s.get('/api/v1/namespaces/py/configmaps/kube-root-ca.crt'), (r) => r.status === 200, 60_000);
  const seen: string[] = [];
  const py = spawn(python!, ['-c', WATCHER, `${s.dataDir}/admin.kubeconfig`, 'py']);
  t.teardown(() => { py.kill(); });
  let out = '';
  py.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    const lines = out.split('\n');
    out = lines.pop()!;
    seen.push(...lines);
  });
  let err = '';
  py.stderr.on('data', (d: Buffer) => { err += d.toString(); });

  // The initial state: one event, and nothing is written after it.
  await until(() => seen.length, (n) => n >= 1, 60_000);
  t.match(seen[0], /^ADDED kube-root-ca\.crt /, `the initial ADDED arrives on its own${err ? `\n${err}` : ''}`);
  // Each later event arrives before anything else is written.
  for (const name of ['one', 'two']) {
    t.equal((await s.request('POST', '/api/v1/namespaces/py/configmaps', { body: { metadata: { name } } })).status, 201);
    await until(() => seen.some((l) => l.startsWith(`ADDED ${name} `)), Boolean, 60_000);
    t.ok(seen.some((l) => l.startsWith(`ADDED ${name} `)), `ADDED ${name} is seen with no later write`);
  }
  const cm = await s.request('PUT', '/api/v1/namespaces/py/configmaps/one', { body: { metadata: { name: 'one' }, data: { k: 'v' } } });
  t.equal(cm.status, 200);
  await until(() => seen.some((l) => l === `MODIFIED one ${cm.json.metadata.resourceVersion}`), Boolean, 60_000);
  t.ok(seen.includes(`MODIFIED one ${cm.json.metadata.resourceVersion}`), 'MODIFIED one, with its resourceVersion');
});
