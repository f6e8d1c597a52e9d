// The watch history is bounded by bytes and by events, not only by time: a client writing large
// objects cannot make the server hold them all for the retention window. Past a bound the oldest
// events go (in memory and in the store's history), a watch from before them gets 410 Expired, and
// /metrics reports the history's size.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withServer, type TestServer } from '../lib/server.js';
import { metric } from '../lib/metrics.js';
import { until } from '../lib/poll.js';

function configWith(t: { teardown(fn: () => unknown): void }, options: Record<string, number>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-cfg-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ storage: { plugin: 'embedded', options: { retentionSeconds: 300, groupCommit: true, ...options } } }));
  return file;
}

/** The first event of a watch of default's ConfigMaps from `rv`. */
function firstEvent(s: TestServer, rv: string): Promise<any> {
  return new Promise((resolve) => {
    const w = s.stream(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=5`, (ev) => { resolve(ev); w.close(); });
    void w.done.then(() => resolve(undefined));
  });
}

/** Creates a ConfigMap of `size` bytes of data; returns the revision just before it (a watch from there sees it). */
async function create(s: TestServer, name: string, size: number): Promise<string> {
  const r = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: 'x'.repeat(size) } } });
  if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text}`);
  return String(Number(r.json.metadata.resourceVersion) - 1);
}

const expired = (ev: any) => ev?.type === 'ERROR' && ev.object?.code === 410 && ev.object?.reason === 'Expired';

t.test('bytes: past historyMaxBytes the oldest events go and a watch from before them gets 410 Expired', async (t) => {
  const maxBytes = 200_000;
  const s = await withServer(t, { args: ['--config', configWith(t, { historyMaxBytes: maxBytes })] });
  const first = await create(s, 'first', 10);
  t.match(await firstEvent(s, first), { type: 'ADDED' }, 'within the bound the watch replays');
  let last = first;
  for (let i = 0; i < 30; i++) last = await create(s, `big-${i}`, 20_000); // 600 kB of object versions
  const ev = await until(() => firstEvent(s, first), expired);
  t.ok(expired(ev), `a watch from before the dropped events: 410 Expired (${JSON.stringify(ev?.object ?? ev)})`);
  t.match(await firstEvent(s, last), { type: 'ADDED', object: { metadata: { name: 'big-29' } } }, 'a watch from a recent revision still replays');
  const bytes = await metric(s, 'apiserver_watch_history_bytes');
  t.ok(bytes > 0 && bytes <= maxBytes, `apiserver_watch_history_bytes within the bound (${bytes})`);
  t.equal(await metric(s, 'apiserver_watch_history_limit'), maxBytes + 1_000_000, 'the bounds are reported (bytes and the default event count)');
});

t.test('events: past historyMaxEvents the oldest events go and a watch from before them gets 410 Expired', async (t) => {
  const s = await withServer(t, { args: ['--config', configWith(t, { historyMaxEvents: 40 })] });
  const first = await create(s, 'first', 10);
  for (let i = 0; i < 60; i++) await create(s, `small-${i}`, 10);
  const ev = await until(() => firstEvent(s, first), expired);
  t.ok(expired(ev), `a watch from before the dropped events: 410 Expired (${JSON.stringify(ev?.object ?? ev)})`);
  const events = await metric(s, 'apiserver_watch_history_events');
  t.ok(events > 0 && events <= 40, `apiserver_watch_history_events within the bound (${events})`);
  t.equal((await s.get('/api/v1/namespaces/default/configmaps/small-59')).status, 200, 'current objects are untouched');
});
