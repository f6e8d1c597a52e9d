// Memory under stalled readers: watches whose clients stop reading (initial-state watches
// included) are closed when they pass their own cap or when all of them together pass the server's
// output budget, largest first; each closure is counted (apiserver_terminated_watchers_total) and
// logged, the server's memory stays bounded, and readers that keep reading are served. An initial
// state waits for its client (it is never queued whole): what piles up for a stalled watcher is the
// events that follow it. Large list answers go out with backpressure too, and count in the same
// budget while their client is not reading.
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { withServer, sleep, type TestServer } from '../lib/server.js';

const CM = '/api/v1/namespaces/default/configmaps';
const MiB = 1024 * 1024;

/** A watch (or list) whose client never reads: the request goes out, then the socket is paused for good. */
function stalledWatch(s: TestServer, path: string, accept = 'application/json'): tls.TLSSocket {
  const sock = tls.connect({ host: '127.0.0.1', port: s.port, ca: s.ca, servername: 'localhost' }, () => {
    sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.token}\r\nAccept: ${accept}\r\n\r\n`);
    sock.pause();
  });
  sock.on('error', () => {});
  return sock;
}

const rssMiB = (s: TestServer) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${s.proc.pid}/status`, 'utf8'))![1]) / 1024;

async function terminated(s: TestServer, metric = 'apiserver_terminated_watchers_total'): Promise<number> {
  const text = (await s.get('/metrics')).text;
  let n = 0;
  for (const m of text.matchAll(new RegExp(`^${metric}\\{[^}]*\\} (\\d+)`, 'gm'))) n += Number(m[1]);
  return n;
}

async function closedCount(s: TestServer, want: number, metric?: string): Promise<number> {
  let closed = 0;
  for (let i = 0; i < 100 && closed < want; i++) {
    await sleep(200);
    closed = await terminated(s, metric);
  }
  return closed;
}

/** Changes every big ConfigMap `rounds` times: each change is a 300 KB event for every watcher. */
let churned = 0;
async function churn(s: TestServer, rounds: number): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    const value = String(++churned).padStart(300_000, '-');
    const res = await s.request('PATCH', `${CM}/big-${r % 100}`, { raw: JSON.stringify({ data: { v: value } }), headers: { 'content-type': 'application/merge-patch+json' } });
    if (res.status !== 200) throw new Error(`patch: ${res.status} ${res.text}`);
  }
}

const SIE = `${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`;

t.test('stalled watchers are closed within the per-stream cap and the server budget', async (t) => {
  const s = await withServer(t, { env: { CAPI_WATCH_BUDGET_BYTES: String(8 * MiB), CAPI_OUTPUT_BUDGET_BYTES: String(64 * MiB) } });
  // 30 MB of ConfigMaps: every initial state is far larger than what the kernel's socket buffers absorb.
  const value = 'x'.repeat(300_000);
  for (let i = 0; i < 100; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, j) => s.request('POST', CM, { body: { metadata: { name: `big-${i + j}` }, data: { v: value } } })));
  }

  t.test('each stream past its own cap (initial-state watches included)', async (t) => {
    const rssBefore = rssMiB(s);
    const stalled = [...Array.from({ length: 3 }, () => stalledWatch(s, SIE)), ...Array.from({ length: 3 }, () => stalledWatch(s, `${CM}?watch=true`))];
    t.teardown(() => { for (const x of stalled) x.destroy(); });
    // Each initial state waits for its client: nothing is closed, and little is held, until events pile up behind it.
    await sleep(1000);
    t.equal(await terminated(s), 0, 'a stalled initial state alone is not queued in memory');
    t.ok(rssMiB(s) - rssBefore < 100, `server memory grew ${(rssMiB(s) - rssBefore).toFixed(0)} MiB for ${stalled.length} stalled initial states of 30 MB`);
    await churn(s, 40);
    t.equal(await closedCount(s, stalled.length), stalled.length, 'every stalled watcher was closed and counted');
    const lines = s.logs.filter((l) => l.includes('closed a stream that stopped reading'));
    t.equal(lines.length, stalled.length, 'and logged');
    t.ok(lines.every((l) => /reason\W+stream budget/.test(l) && /queuedBytes\W+\d+/.test(l)), `with the reason and the bytes: ${lines.join('\n')}`);
    const grown = rssMiB(s) - rssBefore;
    t.ok(grown < 200, `server memory grew ${grown.toFixed(0)} MiB for ${stalled.length} stalled readers of 30 MB each`);
  });

  t.test('all streams together past the server budget: the largest first', async (t) => {
    await s.stop();
    const s2 = await withServer(t, { dataDir: s.dataDir, keepDataDir: true, env: { CAPI_WATCH_BUDGET_BYTES: String(64 * MiB), CAPI_OUTPUT_BUDGET_BYTES: String(12 * MiB) } });
    const stalled = Array.from({ length: 4 }, () => stalledWatch(s2, SIE));
    t.teardown(() => { for (const x of stalled) x.destroy(); });
    await sleep(500);
    // Events pile up behind each stalled initial state until all of them together pass 12 MiB; the
    // one holding the most goes first, then the next as the rest grow again.
    // (at most 60 rounds: the loop ends once all are closed; at load 12 the last of four outlasted 20)
    for (let r = 0; r < 60 && (await terminated(s2)) < stalled.length; r++) await churn(s2, 10);
    t.equal(await closedCount(s2, stalled.length), stalled.length, 'every stalled watcher was closed and counted');
    const lines = s2.logs.filter((l) => l.includes('closed a stream that stopped reading'));
    t.ok(lines.length === stalled.length && lines.every((l) => /reason\W+server budget/.test(l)), `closed over the server budget: ${lines.join('\n')}`);
    // A reader that reads is served in full meanwhile.
    const list = await s2.get(`${CM}?limit=5`);
    t.equal(list.status, 200);
    t.equal(list.json.items.length, 5);
    t.equal((await s2.get('/readyz')).status, 200);
  });
});

t.test('stalled list readers: answers go out with backpressure, counted in the server budget', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', withoutControllers: ['root-ca-publisher'], env: { CAPI_OUTPUT_BUDGET_BYTES: String(24 * MiB) } });
  const value = 'x'.repeat(300_000);
  for (let i = 0; i < 100; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, j) => s.request('POST', CM, { body: { metadata: { name: `big-${i + j}` }, data: { v: value } } })));
  }
  const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
  const PB = 'application/vnd.kubernetes.protobuf';

  t.test('a reader that reads gets every large form whole, with its length', async (t) => {
    const json = await s.get(CM);
    t.equal(json.status, 200);
    t.equal(json.json.items.length, 100, 'JSON: every item');
    t.equal(Number(json.headers['content-length']), Buffer.byteLength(json.text), 'JSON: Content-Length, not chunked');
    t.ok(json.json.items.every((o: any, i: number, a: any[]) => o.data.v === value && (i === 0 || a[i - 1].metadata.name < o.metadata.name)), 'each object as stored, in order');
    const table = await s.get(`${CM}?includeObject=Object`, { accept: TABLE });
    t.equal(table.json.rows.length, 100, 'Table: every row');
    t.equal(table.json.rows[99].object.data.v, value);
    const yaml = await s.get(CM, { accept: 'application/yaml' });
    t.equal(yaml.status, 200);
    t.equal((yaml.text.match(/^\s+kind: ConfigMap$/gm) ?? []).length, 100, 'YAML: every item');
    const pb = await new Promise<Buffer>((resolve, reject) => {
      const sock = tls.connect({ host: '127.0.0.1', port: s.port, ca: s.ca, servername: 'localhost' }, () => {
        sock.write(`GET ${CM} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.token}\r\nAccept: ${PB}\r\nConnection: close\r\n\r\n`);
      });
      const chunks: Buffer[] = [];
      sock.on('data', (d) => chunks.push(d)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject);
    });
    const at = pb.indexOf('\r\n\r\n');
    const len = Number(/content-length: (\d+)/i.exec(pb.subarray(0, at).toString())?.[1]);
    const body = pb.subarray(at + 4);
    t.equal(body.length, len, 'Protobuf: the whole body, as its Content-Length says');
    t.same(body.subarray(0, 4), Buffer.from([0x6b, 0x38, 0x73, 0x00]), 'Protobuf: the envelope');
    t.equal(body.length > 30e6 ? 'large' : 'small', 'large');
  });

  t.test('many stalled readers: memory stays bounded, the largest holders are closed and logged', async (t) => {
    const rssBefore = rssMiB(s);
    // A YAML (or Table) answer is built for its client alone: a stalled one holds all of it (30 MB
    // here, over the 24 MiB budget), and is closed once it has been backed up for a second.
    const built = [...Array.from({ length: 3 }, () => stalledWatch(s, CM, 'application/yaml')), stalledWatch(s, `${CM}?includeObject=Object`, TABLE)];
    t.teardown(() => { for (const x of built) x.destroy(); });
    t.equal(await closedCount(s, built.length, 'apiserver_output_budget_closed_lists_total'), built.length, 'every stalled built answer was closed and counted');
    const lines = s.logs.filter((l) => l.includes('closed a stream that stopped reading'));
    t.equal(lines.length, built.length, `logged: ${lines.join('\n')}`);
    t.ok(lines.every((l) => /list \/api\/v1\/namespaces\/default\/configmaps/.test(l) && /reason\W+server budget/.test(l) && Number(/queuedBytes=(\d+)/.exec(l)?.[1]) > 20e6), 'as lists holding most of their answer, over the server budget');
    const grownBuilt = rssMiB(s) - rssBefore;
    // Building them is transient memory (the joined JSON; the YAML writer's document on the worker
    // threads takes several times the answer's size while it runs): freed afterwards, though the
    // process need not hand it back to the system at once. 400–700 MiB measured.
    t.ok(grownBuilt < 1024, `server memory grew ${grownBuilt.toFixed(0)} MiB while building and closing four 30 MB answers`);
    // Twenty JSON readers hold little each (the answer is read from the cache as the socket takes it).
    const rssMid = rssMiB(s);
    const json = Array.from({ length: 20 }, () => stalledWatch(s, CM));
    t.teardown(() => { for (const x of json) x.destroy(); });
    await sleep(3000);
    t.equal(await terminated(s, 'apiserver_output_budget_closed_lists_total'), built.length, 'stalled JSON readers hold too little to be closed');
    const grown = rssMiB(s) - rssMid;
    // One joined copy of the list (30 MB) is kept for the next identical list and shared by all 20.
    t.ok(grown < 150, `server memory grew ${grown.toFixed(0)} MiB for 20 stalled JSON readers of a 30 MB list`);
    // Readers that read are served meanwhile.
    const list = await s.get(`${CM}?limit=5`);
    t.equal(list.json.items.length, 5);
    t.equal((await s.get('/readyz')).status, 200);
  });
});
