// Memory under stalled readers: watches whose clients stop reading (initial-state watches
// included) are closed when they pass their own cap or when all of them together pass the server's
// output budget, largest first; each closure is counted (apiserver_terminated_watchers_total) and
// logged, the server's memory stays bounded, and readers that keep reading are served.
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { withServer, sleep, type TestServer } from '../lib/server.js';

const CM = '/api/v1/namespaces/default/configmaps';
const MiB = 1024 * 1024;

/** A watch whose client never reads: the request goes out, then the socket is paused for good. */
function stalledWatch(s: TestServer, path: string): tls.TLSSocket {
  const sock = tls.connect({ host: '127.0.0.1', port: s.port, ca: s.ca, servername: 'localhost' }, () => {
    sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.token}\r\nAccept: application/json\r\n\r\n`);
    sock.pause();
  });
  sock.on('error', () => {});
  return sock;
}

const rssMiB = (s: TestServer) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${s.proc.pid}/status`, 'utf8'))![1]) / 1024;

async function terminated(s: TestServer): Promise<number> {
  const text = (await s.get('/metrics')).text;
  let n = 0;
  for (const m of text.matchAll(/^apiserver_terminated_watchers_total\{[^}]*\} (\d+)/gm)) n += Number(m[1]);
  return n;
}

async function closedCount(s: TestServer, want: number): Promise<number> {
  let closed = 0;
  for (let i = 0; i < 100 && closed < want; i++) {
    await sleep(200);
    closed = await terminated(s);
  }
  return closed;
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
