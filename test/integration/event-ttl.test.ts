// Events expire `--event-ttl` after their last write, as in the reference (default 1h): watchers see
// them DELETED; a write renews the time; events written through events.<domain>/v1 expire too (one
// stored resource); and a restart counts from the time an event records, not from the restart.
// Times are asserted as lower bounds only (a busy machine can only make a deletion later).
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';
import { eventually } from '../lib/poll.js';

const TTL_MS = 2000;
const EVENTS = '/api/v1/namespaces/default/events';

const coreEvent = (name: string) => ({
  apiVersion: 'v1', kind: 'Event', metadata: { name }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'R', message: 'm',
  source: { component: 'kubelet', host: 'n1' }, count: 1, type: 'Normal',
});

/** Each object's DELETED arrival time, from a watch opened now. */
function deletions(s: TestServer) {
  const at = new Map<string, number>();
  const w = s.stream(`${EVENTS}?watch=1`, (ev) => { if (ev.type === 'DELETED') at.set(ev.object.metadata.name, Date.now()); });
  return { at, close: () => w.close() };
}

t.test('events expire after their last write', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--event-ttl=2s'] });
  const gone = deletions(s);
  t.teardown(gone.close);

  const t0 = Date.now();
  t.equal((await s.request('POST', EVENTS, { body: coreEvent('once') })).status, 201);
  t.equal((await s.request('POST', EVENTS, { body: coreEvent('renewed') })).status, 201);
  const viaEvents = {
    apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'new-api' }, eventTime: '2024-01-01T00:00:00.000000Z',
    reportingController: 'ctl/x', reportingInstance: 'i', action: 'A', reason: 'R', type: 'Normal', regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
  };
  t.equal((await s.request('POST', '/apis/events.k8s.io/v1/namespaces/default/events', { body: viaEvents })).status, 201);

  // renew one event three times, 1 s apart: each write moves its expiry
  let lastWrite = 0;
  for (let i = 2; i <= 4; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    lastWrite = Date.now();
    const r = await s.request('PATCH', `${EVENTS}/renewed`, { body: { count: i }, headers: { 'content-type': 'application/merge-patch+json' } });
    t.equal(r.status, 200, `renewal ${i}`);
  }
  t.ok(await eventually(() => gone.at.has('once') && gone.at.has('renewed') && gone.at.has('new-api')), 'all three expire and watchers see DELETED');
  t.ok(gone.at.get('once')! >= t0 + TTL_MS, 'not before the TTL after its write');
  t.ok(gone.at.get('new-api')! >= t0 + TTL_MS, 'an events.k8s.io event expires the same way');
  t.ok(gone.at.get('renewed')! >= lastWrite + TTL_MS, 'a renewed event lives the TTL after its last write');
  t.ok(gone.at.get('renewed')! > gone.at.get('once')!, 'later than the one written once');
  t.equal((await s.get(`${EVENTS}/once`)).status, 404);
  t.equal((await s.get(`${EVENTS}`)).json.items.length, 0, 'none left');
});

t.test('after a restart an event expires from the time it records', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--event-ttl=2s'] });
  t.equal((await s.request('POST', EVENTS, { body: coreEvent('old') })).status, 201);
  const written = Date.now();
  await s.stop();
  // down for longer than the TTL: at start the event is already due
  await new Promise((r) => setTimeout(r, TTL_MS + 500));
  await s.restart();
  t.ok(await eventually(async () => (await s.get(`${EVENTS}/old`)).status === 404), 'deleted once the server is back');
  t.ok(Date.now() >= written + TTL_MS);
});

t.test('default TTL is an hour: a fresh event stays', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  t.equal((await s.request('POST', EVENTS, { body: coreEvent('stays') })).status, 201);
  await new Promise((r) => setTimeout(r, 2500));
  t.equal((await s.get(`${EVENTS}/stays`)).status, 200);
});
