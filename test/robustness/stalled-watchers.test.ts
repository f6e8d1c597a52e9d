// Issue 20, stalled watchers: many watches whose clients never read, on raw TLS sockets through the
// default listener (the TLS front before uWS), while ConfigMaps keep changing. What they hold counts in
// the output budget and the budget holds (apiserver_output_queued_bytes, sampled throughout); the
// stalled streams are closed; a watcher that reads gets every event; every write is answered; and once
// the stalled ones are gone nothing is counted any more.
import tls from 'node:tls';
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';
import { until } from '../lib/poll.js';
import { metric } from '../lib/metrics.js';

const CM = '/api/v1/namespaces/default/configmaps';
const KiB = 1024;
const MiB = 1024 * KiB;
const BUDGET = 4 * MiB;
const STALLED = 60;

function stalledWatch(s: TestServer): tls.TLSSocket {
  const sock = tls.connect({ host: '127.0.0.1', port: s.port, ca: s.ca, servername: 'localhost' }, () => {
    sock.write(`GET ${CM}?watch=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.token}\r\n\r\n`);
    sock.pause();
  });
  sock.on('error', () => {});
  return sock;
}

t.test('stalled watchers are bounded by the output budget, closed, and leave nothing counted', async (t) => {
  const s = await withServer(t, { env: { CAPI_OUTPUT_BUDGET_BYTES: String(BUDGET), CAPI_WATCH_BUDGET_BYTES: String(MiB) } });
  t.equal(await metric(s, 'apiserver_output_budget_bytes'), BUDGET, 'the budget is exposed');
  const value = (n: number) => String(n).padStart(64 * KiB, '-');
  for (let i = 0; i < 5; i++) t.equal((await s.request('POST', CM, { body: { metadata: { name: `cm-${i}` }, data: { v: value(0) } } })).status, 201);

  const seen = new Set<string>();
  const reader = s.stream(`${CM}?watch=true&resourceVersion=${(await s.get(CM)).json.metadata.resourceVersion}`, (ev) => { seen.add(ev.object.metadata.resourceVersion); });
  t.teardown(() => reader.close());
  let readerEnded: number | undefined;
  void reader.done.then((code) => { readerEnded = code; });
  const stalled = Array.from({ length: STALLED }, () => stalledWatch(s));
  t.teardown(() => { for (const x of stalled) x.destroy(); });
  t.equal(await until(() => metric(s, 'apiserver_registered_watchers'), (n) => n === STALLED + 1), STALLED + 1, 'every watch is registered');

  // Each write is a 64 KiB event for every watcher: the kernel's and the front's buffers fill within
  // a few dozen, then what each stalled stream holds is the server's, counted.
  const written: string[] = [];
  let maxQueued = 0;
  let backedUp = 0;
  let n = 0;
  const sample = async () => {
    const q = await metric(s, 'apiserver_output_queued_bytes');
    maxQueued = Math.max(maxQueued, q);
    backedUp = Math.max(backedUp, await metric(s, 'apiserver_output_backed_up_streams'));
  };
  while (n < 1000) {
    const r = await s.request('PATCH', `${CM}/cm-${n % 5}`, { raw: JSON.stringify({ data: { v: value(++n) } }), headers: { 'content-type': 'application/merge-patch+json' } });
    if (r.status !== 200) { t.fail(`write ${n}: ${r.status} ${r.text}`); break; }
    written.push(r.json.metadata.resourceVersion);
    // The reader reads in this process, which a busy machine may starve: it is kept within a few
    // events of the writes so that it is a reading stream, never one the per-watch budget closes.
    if (written.length - seen.size > 4) await until(() => seen.size, (x) => written.length - x <= 4 || readerEnded !== undefined);
    if (n % 5 === 0) await sample();
    if (n % 20 === 0 && n >= 200 && await metric(s, 'apiserver_registered_watchers') === 1) break;
  }
  t.ok(backedUp > 0, `stalled streams were seen backed up (${backedUp} at once)`);
  t.ok(maxQueued > 0 && maxQueued <= BUDGET, `the bytes queued stayed within the budget: at most ${(maxQueued / MiB).toFixed(2)} MiB of ${BUDGET / MiB} MiB`);

  t.equal(await until(() => metric(s, 'apiserver_registered_watchers'), (x) => x === 1), 1, 'every stalled watch was closed; the reader remains');
  t.ok(await metric(s, 'apiserver_terminated_watchers_total') > 0, 'stalled watchers were closed by the budget, and counted');
  t.ok(s.logs.some((l) => l.includes('closed a stream that stopped reading')), 'and logged');
  t.equal(await until(() => metric(s, 'apiserver_output_queued_bytes'), (x) => x === 0), 0, 'nothing is counted once they are gone');
  t.equal(await metric(s, 'apiserver_output_backed_up_streams'), 0, 'no stream is backed up');

  // The reader saw every write, in spite of the stalled ones.
  await until(() => seen.size, () => written.every((rv) => seen.has(rv)));
  t.equal(readerEnded, undefined, 'the reading watch stayed open');
  t.same(written.filter((rv) => !seen.has(rv)), [], `the reading watcher received all ${written.length} events`);
  const r = await s.request('PATCH', `${CM}/cm-0`, { raw: JSON.stringify({ data: { v: 'after' } }), headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal(r.status, 200, 'writes are answered after it all');
});
