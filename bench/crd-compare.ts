// Custom resources against ConfigMaps on one server: LIST of 10,000 objects of the same shape and
// watch fan-out to 100 watchers, to check that custom resources take no slower path.
//   npm run -s build && node dist/bench/crd-compare.js [objects] [watchers] [writes]
import https from 'node:https';
import { percentile } from './lib.js';
import { startServer, type TestServer } from '../test/lib/server.js';

const objects = Number(process.argv[2] ?? 10_000);
const watchers = Number(process.argv[3] ?? 100);
const writes = Number(process.argv[4] ?? 1_000);

interface Kind { label: string; path: string; body: (name: string) => unknown }
const PAD = 'x'.repeat(800);
const KINDS: Kind[] = [
  { label: 'ConfigMap', path: '/api/v1/namespaces/default/configmaps', body: (name) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { pad: PAD, t: String(Date.now()) } }) },
  { label: 'custom resource', path: '/apis/bench.example.com/v1/namespaces/default/benchmaps', body: (name) => ({ apiVersion: 'bench.example.com/v1', kind: 'BenchMap', metadata: { name }, data: { pad: PAD, t: String(Date.now()) } }) },
];

async function fill(s: TestServer, k: Kind, n: number, prefix: string, concurrency = 32) {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) {
      const i = next++;
      const r = await s.request('POST', k.path, { body: k.body(`${prefix}-${i}`) });
      if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text.slice(0, 200)}`);
    }
  }));
}

function timedList(s: TestServer, p: string, agent: https.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    https.get({ host: '127.0.0.1', port: s.port, path: p, ca: s.ca, agent, headers: { authorization: `Bearer ${s.token}`, accept: 'application/json' } }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve(performance.now() - t0));
    }).on('error', reject);
  });
}

async function listFigures(s: TestServer, k: Kind) {
  const agent = new https.Agent({ keepAlive: true });
  for (let i = 0; i < 3; i++) await timedList(s, k.path, agent);
  const ms: number[] = [];
  for (let i = 0; i < 15; i++) ms.push(await timedList(s, k.path, agent));
  agent.destroy();
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), min: ms[0] };
}

async function watchFigures(s: TestServer, k: Kind) {
  const rv = (await s.get(`${k.path}?limit=1`)).json.metadata.resourceVersion;
  let events = 0;
  const streams = Array.from({ length: watchers }, () => s.stream(`${k.path}?watch=1&resourceVersion=${rv}`, () => { events++; }));
  for (const st of streams) st.done.catch(() => {}); // closing a stream may reset it
  await new Promise((r) => setTimeout(r, 1000));
  const t0 = performance.now();
  await fill(s, k, writes, `w${Date.now()}`, 16);
  const expected = writes * watchers;
  while (events < expected && performance.now() - t0 < 120_000) await new Promise((r) => setTimeout(r, 10));
  const seconds = (performance.now() - t0) / 1000;
  for (const st of streams) st.close();
  return { deliveriesPerSec: Math.round(events / seconds), delivered: events, expected, seconds: seconds.toFixed(1) };
}

const s = await startServer({ brand: 'cluster' });
try {
  const crd = {
    apiVersion: 'apiextensions.cluster.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'benchmaps.bench.example.com' },
    spec: { group: 'bench.example.com', scope: 'Namespaced', names: { plural: 'benchmaps', singular: 'benchmap', kind: 'BenchMap' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { data: { type: 'object', additionalProperties: { type: 'string' } } } } } }] },
  };
  await s.request('POST', '/apis/apiextensions.cluster.io/v1/customresourcedefinitions', { body: crd });
  for (let i = 0; i < 100 && (await s.get(KINDS[1].path)).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
  const rows: string[] = [];
  for (const k of KINDS) {
    await fill(s, k, objects, 'l');
    const l = await listFigures(s, k);
    const w = await watchFigures(s, k);
    process.stderr.write(`${k.label}: measured\n`);
    rows.push(`${k.label.padEnd(16)} list of ${objects}: p50 ${l.p50.toFixed(1)} ms (min ${l.min.toFixed(1)})   watch, ${watchers} watchers, ${writes} writes: ${w.deliveriesPerSec} deliveries/s (${w.delivered}/${w.expected} in ${w.seconds} s)`);
  }
  process.stdout.write(rows.join('\n') + '\n');
} finally {
  await s.stop();
}
