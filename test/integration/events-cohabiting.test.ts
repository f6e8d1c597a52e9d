// core v1 Events and events.<domain>/v1 Events are one stored resource, as in the reference: an
// event written through either group is read, listed, selected, watched, updated, patched and deleted
// through the other, with one uid and one resourceVersion sequence. Expected JSON is the reference's
// (kube-apiserver 1.28.7), read back after the same requests.
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';
import { kubectl, kubectlRelease, kubectlPath } from '../lib/kubectl.js';
import { eventually } from '../lib/poll.js';

const CORE = '/api/v1/namespaces/default/events';

function newEvent(group: string, name: string) {
  return {
    apiVersion: `${group}/v1`, kind: 'Event', metadata: { name },
    eventTime: '2024-01-01T00:00:00.000000Z', reportingController: 'ctl/x', reportingInstance: 'inst', action: 'Act', reason: 'Why', type: 'Normal',
    note: 'hello', regarding: { kind: 'Pod', name: 'p', namespace: 'default' }, related: { kind: 'Node', name: 'n' },
    series: { count: 2, lastObservedTime: '2024-01-01T00:00:01.000000Z' },
  };
}

const coreEvent = (name: string) => ({
  apiVersion: 'v1', kind: 'Event', metadata: { name }, involvedObject: { kind: 'Pod', name: 'p' }, reason: 'R', message: 'm',
  source: { component: 'kubelet', host: 'n1' }, firstTimestamp: '2024-01-01T00:00:00Z', lastTimestamp: '2024-01-01T00:00:00Z', count: 1, type: 'Normal',
});

/** The object without metadata's server-set fields, to compare bodies across servers. */
function body(o: Record<string, unknown>) {
  const { metadata: _m, ...rest } = o;
  return rest;
}

/** A watch's events, collected as they arrive. */
function watch(s: TestServer, path: string) {
  const seen: { type: string; object: any }[] = [];
  const w = s.stream(`${path}?watch=1&resourceVersion=0`, (ev) => seen.push(ev));
  return { seen, close: () => w.close() };
}

for (const brand of ['kubernetes', 'cluster'] as const) {
  t.test(`core and events.<domain> Events are one resource (${brand} brand)`, async (t) => {
    const s = await withServer(t, { brand });
    const group = brand === 'kubernetes' ? 'events.k8s.io' : 'events.cluster.io';
    const EV = `/apis/${group}/v1/namespaces/default/events`;

    t.test('created through the events group: read, listed and selected through core', async (t) => {
      const c = await s.request('POST', `${EV}?fieldManager=mgr1`, { body: newEvent(group, 'e1') });
      t.equal(c.status, 201, c.text);
      t.same(body(c.json), {
        apiVersion: `${group}/v1`, kind: 'Event',
        eventTime: '2024-01-01T00:00:00.000000Z', series: { count: 2, lastObservedTime: '2024-01-01T00:00:01.000000Z' },
        reportingController: 'ctl/x', reportingInstance: 'inst', action: 'Act', reason: 'Why', regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
        related: { kind: 'Node', name: 'n' }, note: 'hello', type: 'Normal', deprecatedSource: {}, deprecatedFirstTimestamp: null, deprecatedLastTimestamp: null,
      }, 'the answer carries the zero values the reference writes');
      const g = await s.get(`${CORE}/e1`);
      t.equal(g.status, 200, g.text);
      t.same(body(g.json), {
        apiVersion: 'v1', kind: 'Event', involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'Why', message: 'hello',
        source: {}, firstTimestamp: null, lastTimestamp: null, type: 'Normal', eventTime: '2024-01-01T00:00:00.000000Z',
        series: { count: 2, lastObservedTime: '2024-01-01T00:00:01.000000Z' }, action: 'Act', related: { kind: 'Node', name: 'n' },
        reportingComponent: 'ctl/x', reportingInstance: 'inst',
      });
      t.equal(g.json.metadata.uid, c.json.metadata.uid, 'one object: one uid');
      t.equal(g.json.metadata.resourceVersion, c.json.metadata.resourceVersion, 'and one resourceVersion');
      t.equal(g.json.metadata.managedFields[0].apiVersion, `${group}/v1`, 'managedFields keep the writer\'s apiVersion, as the reference shows them');
      t.ok(g.json.metadata.managedFields[0].fieldsV1['f:note'], 'and its field names');
      for (const sel of ['source=ctl/x', 'reportingComponent=ctl/x', 'involvedObject.name=p,reason=Why']) {
        const l = await s.get(`${CORE}?fieldSelector=${encodeURIComponent(sel)}`);
        t.same(l.json.items?.map((i: any) => i.metadata.name), ['e1'], `core ${sel}`);
      }
      t.same((await s.get(`${CORE}?fieldSelector=source%3Dother`)).json.items, [], 'a selector that does not match');
    });

    t.test('created through core: read and selected through the events group', async (t) => {
      const c = await s.request('POST', CORE, { body: coreEvent('c1') });
      t.equal(c.status, 201, c.text);
      const g = await s.get(`${EV}/c1`);
      t.equal(g.status, 200, g.text);
      t.same(body(g.json), {
        apiVersion: `${group}/v1`, kind: 'Event', eventTime: null, reason: 'R', regarding: { kind: 'Pod', name: 'p' }, note: 'm', type: 'Normal',
        deprecatedSource: { component: 'kubelet', host: 'n1' }, deprecatedFirstTimestamp: '2024-01-01T00:00:00Z', deprecatedLastTimestamp: '2024-01-01T00:00:00Z', deprecatedCount: 1,
      });
      t.equal(g.json.metadata.uid, c.json.metadata.uid);
      const l = await s.get(`${EV}?fieldSelector=${encodeURIComponent('regarding.kind=Pod,reason=R')}`);
      t.same(l.json.items.map((i: any) => i.metadata.name), ['c1']);
      t.same((await s.get(`${CORE}?fieldSelector=source%3Dkubelet`)).json.items.map((i: any) => i.metadata.name), ['c1'], 'core source= finds it');
      t.same((await s.get(EV)).json.items.map((i: any) => i.metadata.name), ['c1', 'e1'], 'the events group lists both');
      t.same((await s.get(CORE)).json.items.map((i: any) => i.metadata.name), ['c1', 'e1'], 'core lists both');
      const bad = await s.get(`${EV}?fieldSelector=source%3Dkubelet`);
      t.equal(bad.status, 400);
      t.equal(bad.json.message, 'field label not supported: source', 'the events group names its own labels, as the reference');
    });

    t.test('updates and patches through either group', async (t) => {
      const merge = await s.request('PATCH', `${CORE}/e1`, { body: { metadata: { labels: { via: 'core-merge' } } }, headers: { 'content-type': 'application/merge-patch+json' } });
      t.equal(merge.status, 200, merge.text);
      const strategic = await s.request('PATCH', `${EV}/c1`, { body: { metadata: { labels: { via: 'events-strategic' } } }, headers: { 'content-type': 'application/strategic-merge-patch+json' } });
      t.equal(strategic.status, 200, strategic.text);
      t.equal(strategic.json.note, 'm');
      const applied = await s.request('PATCH', `${EV}/c1?fieldManager=applier`, { body: { apiVersion: `${group}/v1`, kind: 'Event', metadata: { name: 'c1', annotations: { a: 'b' } } }, headers: { 'content-type': 'application/apply-patch+yaml' } });
      t.equal(applied.status, 200, applied.text);
      const cur = (await s.get(`${CORE}/c1`)).json;
      t.same([cur.metadata.labels, cur.metadata.annotations, cur.message], [{ via: 'events-strategic' }, { a: 'b' }, 'm']);
      t.equal((await s.get(`${EV}/e1`)).json.metadata.labels.via, 'core-merge');
      const before = (await s.get(`${EV}/c1`)).json;
      const put = await s.request('PUT', `${EV}/c1`, { body: { ...before, metadata: { ...before.metadata, labels: { via: 'events-put' } } } });
      t.equal(put.status, 200, put.text);
      t.same((await s.get(`${CORE}/c1`)).json.metadata.labels, { via: 'events-put' }, 'an update through the events group is the core object\'s');
      const core = (await s.get(`${CORE}/c1`)).json;
      const coreput = await s.request('PUT', `${CORE}/c1`, { body: { ...core, message: 'changed' } });
      t.equal(coreput.status, 200, coreput.text);
      t.equal((await s.get(`${EV}/c1`)).json.note, 'changed', 'and the other way');
    });

    t.test('watches of both groups see writes through either, and deletions', async (t) => {
      const wc = watch(s, CORE);
      const we = watch(s, EV);
      t.teardown(() => { wc.close(); we.close(); });
      t.ok(await eventually(() => wc.seen.length >= 2 && we.seen.length >= 2), 'initial state');
      t.equal((await s.request('POST', EV, { body: newEvent(group, 'w1') })).status, 201);
      t.equal((await s.request('POST', CORE, { body: coreEvent('w2') })).status, 201);
      const found = (seen: { type: string; object: any }[], type: string, name: string) => seen.find((e) => e.type === type && e.object.metadata.name === name);
      t.ok(await eventually(() => !!(found(wc.seen, 'ADDED', 'w1') && found(wc.seen, 'ADDED', 'w2') && found(we.seen, 'ADDED', 'w1') && found(we.seen, 'ADDED', 'w2'))), 'both watches see both creates');
      t.equal(found(wc.seen, 'ADDED', 'w1')!.object.apiVersion, 'v1');
      t.equal(found(wc.seen, 'ADDED', 'w1')!.object.message, 'hello', 'core watchers get core objects');
      t.equal(found(we.seen, 'ADDED', 'w2')!.object.apiVersion, `${group}/v1`);
      t.equal(found(we.seen, 'ADDED', 'w2')!.object.note, 'm', 'events watchers get events objects');
      t.equal((await s.request('DELETE', `${CORE}/w1`)).status, 200);
      t.equal((await s.request('DELETE', `${EV}/w2`)).status, 200);
      t.ok(await eventually(() => !!(found(we.seen, 'DELETED', 'w1') && found(wc.seen, 'DELETED', 'w2'))), 'a delete through one group is DELETED on the other\'s watch');
      t.equal((await s.get(`${EV}/w1`)).status, 404);
      t.equal((await s.get(`${CORE}/w2`)).status, 404);
    });

    t.test('validation per request version, with the reference\'s causes', async (t) => {
      const strict = await s.request('POST', EV, { body: { apiVersion: `${group}/v1`, kind: 'Event', metadata: { name: 'bad1' }, deprecatedCount: 3, type: 'Foo', series: { count: 1 } } });
      t.equal(strict.status, 422);
      t.equal(strict.json.message, 'Event "bad1" is invalid: [series.count: Invalid value: "": should be at least 2, series.lastObservedTime: Required value, eventTime: Required value, type: Invalid value: "": has invalid value: Foo, count: Invalid value: "": needs to be unset]');
      t.equal(strict.json.details.group, undefined, 'the stored (core) kind is named');
      const legacy = await s.request('POST', CORE, { body: { apiVersion: 'v1', kind: 'Event', metadata: { name: 'bad2' }, eventTime: '2024-01-01T00:00:00.000000Z', involvedObject: { kind: 'Pod', namespace: 'other' } } });
      t.equal(legacy.status, 422);
      t.equal(legacy.json.message, 'Event "bad2" is invalid: [reportingComponent: Required value, reportingComponent: Invalid value: "": name part must be non-empty, reportingComponent: Invalid value: "": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\'), reportingInstance: Required value, action: Required value, reason: Required value]');
      const ns = await s.request('POST', CORE, { body: { apiVersion: 'v1', kind: 'Event', metadata: { name: 'bad3' }, involvedObject: { kind: 'Pod', namespace: 'other' } } });
      t.equal(ns.json.message, 'Event "bad3" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace');
      const e = (await s.request('POST', EV, { body: newEvent(group, 'imm') })).json;
      const upd = await s.request('PUT', `${EV}/imm`, { body: { ...e, note: 'changed', reason: 'Other', action: 'B' } });
      t.equal(upd.json.message, 'Event "imm" is invalid: [reason: Invalid value: "Other": field is immutable, message: Invalid value: "changed": field is immutable, action: Invalid value: "B": field is immutable]');
      const viaCore = await s.request('PATCH', `${CORE}/imm`, { body: { message: 'via core' }, headers: { 'content-type': 'application/merge-patch+json' } });
      t.equal(viaCore.status, 200, 'core v1 updates are not held to the strict rules');
    });

    t.test('discovery lists both groups, with the stored resource\'s hash', async (t) => {
      const core = (await s.get('/api/v1')).json.resources.find((r: any) => r.name === 'events');
      const ev = (await s.get(`/apis/${group}/v1`)).json.resources.find((r: any) => r.name === 'events');
      t.ok(core && ev);
      t.equal(ev.storageVersionHash, core.storageVersionHash);
      if (brand === 'kubernetes') t.equal(ev.storageVersionHash, 'r2yiGXH7wu8=', 'the reference\'s');
    });
  });
}

const kubectlBin = kubectlRelease('1.28') ?? kubectlPath;
t.test('kubectl get events shows an event created through events.k8s.io/v1', { skip: kubectlBin ? false : 'no kubectl' }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  t.equal((await s.request('POST', '/apis/events.k8s.io/v1/namespaces/default/events', { body: newEvent('events.k8s.io', 'from-events-api') })).status, 201);
  const r = await kubectl(s, ['get', 'events', '-n', 'default', '-o', 'wide'], { bin: kubectlBin });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /from-events-api/);
  t.match(r.stdout, /Why\s+pod\/p\s+.*ctl\/x, inst\s+hello/);
  const sel = await kubectl(s, ['get', 'events', '-n', 'default', '--field-selector', 'source=ctl/x', '-o', 'name'], { bin: kubectlBin });
  t.equal(sel.stdout.trim(), 'event/from-events-api', sel.stderr);
});
