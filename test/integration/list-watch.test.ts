// Lists, paging and watches over real HTTPS against a started server: every cell of Part A's get,
// list and watch resourceVersion tables, list object shape and order, paging consistency under
// concurrent writes, token and history expiry, selectors, watch semantics (history replay,
// selector enter/leave, bookmarks, streaming lists, WebSocket), slow-watcher eviction and resuming
// a watch across a server restart.
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import tls from 'node:tls';
import t from 'tap';
import { brands, sleep, withServer, type Reply, type TestServer } from '../lib/server.js';
import { connectWebSocket, OP_TEXT } from '../lib/ws-client.js';
import { eventually } from '../lib/poll.js';

/** Waits for an in-memory condition (10 s by default: watches across restarts take longer). */
const until = (pred: () => boolean, ms = 10_000, step = 10) => eventually(pred, ms, step);

/** These tests count every ConfigMap in their namespaces: without the root CA one the publisher adds. */
const NO_ROOT_CA = ['root-ca-publisher', 'cluster-authentication-trust'];

/** The assertions the helpers use, from any tap test. */
interface Tap { equal(a: unknown, b: unknown, m: string): unknown; ok(a: unknown, m: string): unknown }

// ------------------------------------------------------------------ helpers

const CM = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

function cmBody(name: string, ns: string, labels?: Record<string, string>, data: Record<string, string> = { a: '1' }) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, ...(labels ? { labels } : {}) }, data };
}

async function must(r: Promise<Reply>, code: number, what: string): Promise<any> {
  const x = await r;
  if (x.status !== code) throw new Error(`${what}: expected ${code}, got ${x.status}: ${x.text.slice(0, 400)}`);
  return x.json;
}

const mkNs = (s: TestServer, name: string) =>
  must(s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } }), 201, `create namespace ${name}`);
const mkCm = (s: TestServer, ns: string, name: string, labels?: Record<string, string>, data?: Record<string, string>) =>
  must(s.request('POST', CM(ns), { body: cmBody(name, ns, labels, data) }), 201, `create configmap ${ns}/${name}`);
const patchCm = (s: TestServer, ns: string, name: string, patch: unknown) =>
  must(s.request('PATCH', `${CM(ns)}/${name}`, { body: patch, headers: { 'content-type': 'application/merge-patch+json' } }), 200, `patch configmap ${ns}/${name}`);
const delCm = (s: TestServer, ns: string, name: string) => must(s.request('DELETE', `${CM(ns)}/${name}`), 200, `delete configmap ${ns}/${name}`);

/** The current revision, from a consistent list. */
async function currentRv(s: TestServer): Promise<number> {
  const l = await must(s.get('/api/v1/namespaces'), 200, 'list namespaces');
  return Number(l.metadata.resourceVersion);
}

const rvOf = (o: any) => Number(o.metadata.resourceVersion);
/** "name@rv" per item, in the order given. */
const itemSigs = (items: any[]) => items.map((i) => `${i.metadata.name}@${i.metadata.resourceVersion}`);
/** "TYPE name@rv" per event. */
const evSigs = (evs: Ev[]) => evs.map((e) => `${e.type} ${e.object?.metadata?.name}@${e.object?.metadata?.resourceVersion}`);

/** Whether `p` settles within `ms` (the timer does not keep the process alive afterwards). */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((r) => { timer = setTimeout(() => r(false), ms); });
  return Promise.race([p.then(() => true, () => true), timeout]).finally(() => clearTimeout(timer));
}

interface Ev { type: string; object: any }

interface WatchHandle {
  status: number;
  headers: IncomingHttpHeaders;
  /** Resolves when the response head arrived. */
  ready: Promise<void>;
  events: Ev[];
  /** Each non-empty line of the body, as sent. */
  lines: string[];
  /** Lines that were not JSON. */
  bad: string[];
  text: string;
  /** The response completed (chunked terminator), rather than the connection dying. */
  ended: boolean;
  done: Promise<void>;
  close(): void;
  until(pred: (evs: Ev[]) => boolean, ms?: number): Promise<boolean>;
}

/** Opens a watch (or any GET) on its own connection and records every line as it arrives. */
function openWatch(s: TestServer, p: string, headers: Record<string, string> = {}): WatchHandle {
  let readyResolve!: () => void;
  let doneResolve!: () => void;
  const w: WatchHandle = {
    status: 0, headers: {}, events: [], lines: [], bad: [], text: '', ended: false,
    ready: new Promise<void>((r) => (readyResolve = r)),
    done: new Promise<void>((r) => (doneResolve = r)),
    close: () => req.destroy(),
    until: (pred, ms = 60_000) => until(() => pred(w.events), ms),
  };
  const req = https.request({
    host: '127.0.0.1', port: s.port, method: 'GET', path: p, ca: s.ca, agent: false,
    headers: { authorization: `Bearer ${s.token}`, accept: 'application/json', ...headers },
  }, (res) => {
    w.status = res.statusCode!;
    w.headers = res.headers;
    readyResolve();
    res.setEncoding('utf8');
    let buf = '';
    res.on('data', (c: string) => {
      w.text += c;
      buf += c;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (!line.trim()) continue;
        w.lines.push(line);
        try { w.events.push(JSON.parse(line)); } catch { w.bad.push(line); }
      }
    });
    res.on('end', () => {
      w.ended = true;
      if (buf.trim()) {
        // A non-watch answer (an error Status) has no trailing newline.
        try { w.events.push(JSON.parse(buf)); } catch { w.bad.push(buf); }
      }
      doneResolve();
    });
    res.on('close', () => doneResolve());
    res.on('error', () => doneResolve());
  });
  req.on('error', () => { readyResolve(); doneResolve(); });
  req.end();
  return w;
}

/** Runs a watch with timeoutSeconds and returns it once the server ended it. */
async function watchAll(s: TestServer, p: string, timeoutSeconds = 1): Promise<WatchHandle> {
  const w = openWatch(s, `${p}${p.includes('?') ? '&' : '?'}timeoutSeconds=${timeoutSeconds}`);
  const killer = setTimeout(() => w.close(), (timeoutSeconds + 10) * 1000);
  await w.done;
  clearTimeout(killer);
  return w;
}

function expect422(t: Tap, r: Reply, domain: string, field: string, what: string) {
  t.equal(r.status, 422, `${what}: 422 (${r.text.slice(0, 300)})`);
  t.equal(r.json?.reason, 'Invalid', `${what}: reason Invalid`);
  t.equal(r.json?.details?.kind, 'ListOptions', `${what}: kind ListOptions`);
  t.equal(r.json?.details?.group, `meta.${domain}`, `${what}: group meta.${domain}`);
  t.ok((r.json?.details?.causes ?? []).some((c: any) => c.field === field), `${what}: a cause on ${field}`);
}

const pod = (name: string, ns: string, nodeName?: string) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns },
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'busybox:1.36' }] },
});

// ------------------------------------------------------------------ per brand

for (const brand of brands) {
  t.test(`lists and watches (${brand} brand)`, async (t) => {
    const s = await withServer(t, { withoutControllers: NO_ROOT_CA, brand, env: { CAPI_BOOKMARK_INTERVAL_MS: '500' } });
    const domain = brand === 'kubernetes' ? 'k8s.io' : 'cluster.io';

    // The list-table fixture: a, b, c at revision R1; then b updated, c deleted, d created.
    await mkNs(s, 'lt');
    const a = await mkCm(s, 'lt', 'a');
    const b1 = await mkCm(s, 'lt', 'b');
    const c = await mkCm(s, 'lt', 'c');
    const R1 = rvOf(c);
    const b2 = await patchCm(s, 'lt', 'b', { data: { a: '2' } });
    await delCm(s, 'lt', 'c');
    const d = await mkCm(s, 'lt', 'd');
    const atR1 = itemSigs([a, b1, c]);
    const latest = itemSigs([a, b2, d]);
    const future = rvOf(d) + 100_000;

    // Requests at a future revision wait a few seconds before their 504: start them now, check them later.
    const futureStart = Date.now();
    const futureP = Promise.all([
      s.get(`${CM('lt')}/b?resourceVersion=${future}`),
      s.get(`${CM('lt')}?resourceVersion=${future}`),
      s.get(`${CM('lt')}?resourceVersion=${future}&limit=1`),
      s.get(`${CM('lt')}?resourceVersion=${future}&resourceVersionMatch=Exact`),
      s.get(`${CM('lt')}?resourceVersion=${future}&resourceVersionMatch=NotOlderThan&limit=1`),
    ]).then((rs) => ({ rs, waited: Date.now() - futureStart }));

    await t.test('get: unset, "0", not older than', async (t) => {
      const g = await s.get(`${CM('lt')}/b`);
      t.equal(g.status, 200);
      t.equal(g.json.metadata.resourceVersion, b2.metadata.resourceVersion, 'unset: the most recent');
      const z = await s.get(`${CM('lt')}/b?resourceVersion=0`);
      t.equal(z.status, 200, '"0": any version');
      t.equal(z.json.metadata.name, 'b');
      const old = await s.get(`${CM('lt')}/b?resourceVersion=${rvOf(b1)}`);
      t.equal(old.status, 200, 'an older revision: not older than it');
      t.ok(rvOf(old.json) >= rvOf(b1), 'not older than the requested version');
      t.equal(old.json.data.a, '2', 'served from the latest state');
      const exact = await s.get(`${CM('lt')}/b?resourceVersion=${rvOf(b2)}`);
      t.equal(exact.status, 200);
      t.equal(exact.json.metadata.resourceVersion, b2.metadata.resourceVersion);

      // the reference's watch cache cannot parse it: its InvalidError, a 500 without a reason
      const bad = await s.get(`${CM('lt')}/b?resourceVersion=abc`);
      t.same([bad.status, bad.json?.message], [500, 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'], 'a malformed resourceVersion is the reference\'s 500');
    });

    await t.test('list table: resourceVersionMatch unset, limit unset', async (t) => {
      const u = await s.get(CM('lt'));
      t.equal(u.status, 200);
      t.same(itemSigs(u.json.items), latest, 'unset: most recent');
      t.ok(rvOf(u.json) >= rvOf(d), 'list revision covers the last write');
      const z = await s.get(`${CM('lt')}?resourceVersion=0`);
      t.equal(z.status, 200, '"0": any');
      t.equal(z.json.kind, 'ConfigMapList');
      t.match(z.json.metadata.resourceVersion, /^\d+$/);
      const o = await s.get(`${CM('lt')}?resourceVersion=${R1}`);
      t.equal(o.status, 200, 'other: not older than');
      t.ok(rvOf(o.json) >= R1, `list rv ${o.json.metadata.resourceVersion} >= ${R1}`);
      t.ok(rvOf(o.json) >= rvOf(d), 'served at the latest revision');
      t.same(itemSigs(o.json.items), latest, 'items of the latest revision');
    });

    await t.test('list table: resourceVersionMatch unset, limit set, no continue', async (t) => {
      const u = await s.get(`${CM('lt')}?limit=10`);
      t.equal(u.status, 200);
      t.same(itemSigs(u.json.items), latest, 'unset: most recent');
      t.ok(rvOf(u.json) >= rvOf(d));
      t.equal(u.json.metadata.continue, '', 'complete: continue is empty');
      t.equal(u.json.metadata.remainingItemCount, undefined);
      const z = await s.get(`${CM('lt')}?limit=10&resourceVersion=0`);
      t.equal(z.status, 200, '"0": any');
      const x = await s.get(`${CM('lt')}?limit=10&resourceVersion=${R1}`);
      t.equal(x.status, 200, `other: exact (${x.text.slice(0, 200)})`);
      t.equal(x.json.metadata.resourceVersion, String(R1), 'the list reports the requested revision');
      t.same(itemSigs(x.json.items), atR1, 'the collection as it was at that revision (b unmodified, c present, d absent)');
      t.equal(x.json.items.find((i: any) => i.metadata.name === 'b')?.data?.a, '1', 'b with its old data');
      // Paging through the old revision.
      const p1 = await s.get(`${CM('lt')}?limit=2&resourceVersion=${R1}`);
      t.equal(p1.status, 200);
      t.same(itemSigs(p1.json.items), atR1.slice(0, 2));
      t.equal(p1.json.metadata.resourceVersion, String(R1));
      t.ok(p1.json.metadata.continue, 'a continue token');
      t.equal(p1.json.metadata.remainingItemCount, 1);
      const tok = encodeURIComponent(p1.json.metadata.continue);
      const p2 = await s.get(`${CM('lt')}?limit=2&continue=${tok}`);
      t.equal(p2.status, 200, 'continue with resourceVersion unset');
      t.same(itemSigs(p2.json.items), atR1.slice(2));
      t.equal(p2.json.metadata.resourceVersion, String(R1), 'continue: the first chunk\'s revision');
      t.equal(p2.json.metadata.continue, '');
      t.equal(p2.json.metadata.remainingItemCount, undefined);
    });

    await t.test('remainingItemCount at the latest revision: per namespace and across all', async (t) => {
      await mkNs(s, 'rca');
      await mkNs(s, 'rcb');
      for (let i = 0; i < 7; i++) await mkCm(s, 'rca', `a${i}`);
      for (let i = 0; i < 3; i++) await mkCm(s, 'rcb', `b${i}`);
      const pages = async (base: string, limit: number) => {
        const counts: (number | undefined)[] = [];
        const names: string[] = [];
        let cont = '';
        let rv = '';
        do {
          const r = await s.get(`${base}?limit=${limit}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
          rv ||= r.json.metadata.resourceVersion;
          counts.push(r.json.metadata.remainingItemCount);
          names.push(...r.json.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`));
          cont = r.json.metadata.continue;
        } while (cont);
        return { counts, names, rv };
      };
      const a = await pages(CM('rca'), 3);
      t.same(a.counts, [4, 1, undefined], 'one namespace');
      t.equal(a.names.length, 7);
      const every = await pages('/api/v1/configmaps', 4);
      // the whole collection at the first page's revision (the server's own ConfigMaps may come and go)
      const all = await s.get(`/api/v1/configmaps?resourceVersion=${every.rv}&resourceVersionMatch=Exact`);
      const total = all.json.items.length;
      t.equal(every.names.length, total, 'all namespaces: every object once');
      t.same(every.counts.slice(0, -1), every.counts.slice(0, -1).map((_, i) => total - 4 * (i + 1)), 'all namespaces: what is left after each page');
      t.equal(every.counts[every.counts.length - 1], undefined);
    });

    await t.test('list table: resourceVersionMatch unset, limit and continue', async (t) => {
      const p1 = await s.get(`${CM('lt')}?limit=1`);
      t.equal(p1.status, 200);
      const rv = p1.json.metadata.resourceVersion;
      const tok = encodeURIComponent(p1.json.metadata.continue);
      t.ok(tok);
      const unset = await s.get(`${CM('lt')}?limit=1&continue=${tok}`);
      t.equal(unset.status, 200, 'rv unset: continue token, exact');
      t.equal(unset.json.metadata.resourceVersion, rv);
      t.same(itemSigs(unset.json.items), latest.slice(1, 2));
      const zero = await s.get(`${CM('lt')}?limit=1&continue=${tok}&resourceVersion=0`);
      t.equal(zero.status, 200, 'rv "0": treated as continue');
      t.equal(zero.json.metadata.resourceVersion, rv);
      t.same(itemSigs(zero.json.items), latest.slice(1, 2));
      for (const other of [R1, rv]) {
        const bad = await s.get(`${CM('lt')}?limit=1&continue=${tok}&resourceVersion=${other}`);
        t.equal(bad.status, 400, `rv ${other} with continue: 400`);
        t.equal(bad.json?.reason, 'BadRequest');
        t.match(bad.json?.message ?? '', /resource ?version/i);
      }
    });

    await t.test('list table: resourceVersionMatch=Exact', async (t) => {
      for (const lim of ['', '&limit=10']) {
        expect422(t, await s.get(`${CM('lt')}?resourceVersionMatch=Exact${lim}`), domain, 'resourceVersionMatch', `Exact, rv unset${lim}`);
        expect422(t, await s.get(`${CM('lt')}?resourceVersionMatch=Exact&resourceVersion=0${lim}`), domain, 'resourceVersionMatch', `Exact, rv "0"${lim}`);
        const x = await s.get(`${CM('lt')}?resourceVersionMatch=Exact&resourceVersion=${R1}${lim}`);
        t.equal(x.status, 200, `Exact, other${lim}: 200`);
        t.equal(x.json.metadata.resourceVersion, String(R1), `Exact${lim}: list at the requested revision`);
        t.same(itemSigs(x.json.items), atR1, `Exact${lim}: the collection as it was`);
      }
      const now = await s.get(`${CM('lt')}?resourceVersionMatch=Exact&resourceVersion=${rvOf(d)}`);
      t.same(itemSigs(now.json.items), latest, 'Exact at the latest write');
      const mid = await s.get(`${CM('lt')}?resourceVersionMatch=Exact&resourceVersion=${rvOf(b2)}`);
      t.same(itemSigs(mid.json.items), itemSigs([a, b2, c]), 'Exact between writes: b updated, c not yet deleted');
      const before = await s.get(`${CM('lt')}?resourceVersionMatch=Exact&resourceVersion=${rvOf(a)}`);
      t.same(itemSigs(before.json.items), itemSigs([a]), 'Exact at the first create');
    });

    await t.test('list table: resourceVersionMatch=NotOlderThan', async (t) => {
      for (const lim of ['', '&limit=10']) {
        expect422(t, await s.get(`${CM('lt')}?resourceVersionMatch=NotOlderThan${lim}`), domain, 'resourceVersionMatch', `NotOlderThan, rv unset${lim}`);
        const z = await s.get(`${CM('lt')}?resourceVersionMatch=NotOlderThan&resourceVersion=0${lim}`);
        t.equal(z.status, 200, `NotOlderThan, "0"${lim}: any`);
        const o = await s.get(`${CM('lt')}?resourceVersionMatch=NotOlderThan&resourceVersion=${R1}${lim}`);
        t.equal(o.status, 200, `NotOlderThan, other${lim}`);
        t.ok(rvOf(o.json) >= R1, `NotOlderThan${lim}: list rv >= requested`);
        t.same(itemSigs(o.json.items), latest, `NotOlderThan${lim}: not the old state`);
      }
    });

    await t.test('list table: resourceVersionMatch with continue, unknown values', async (t) => {
      const p1 = await s.get(`${CM('lt')}?limit=1`);
      const tok = encodeURIComponent(p1.json.metadata.continue);
      for (const m of ['Exact', 'NotOlderThan']) {
        expect422(t, await s.get(`${CM('lt')}?limit=1&continue=${tok}&resourceVersionMatch=${m}`), domain, 'resourceVersionMatch', `${m} with continue`);
        expect422(t, await s.get(`${CM('lt')}?limit=1&continue=${tok}&resourceVersionMatch=${m}&resourceVersion=${R1}`), domain, 'resourceVersionMatch', `${m} with continue and rv`);
      }
      expect422(t, await s.get(`${CM('lt')}?resourceVersionMatch=Newest&resourceVersion=${R1}`), domain, 'resourceVersionMatch', 'unknown resourceVersionMatch');
      expect422(t, await s.get(`${CM('lt')}?resourceVersionMatch=exact&resourceVersion=${R1}`), domain, 'resourceVersionMatch', 'case matters: "exact"');
      // The reference: "sendInitialEvents is forbidden for list".
      expect422(t, await s.get(`${CM('lt')}?sendInitialEvents=true`), domain, 'sendInitialEvents', 'sendInitialEvents on a list (not a watch)');
    });

    await t.test('list table: invalid combinations are field errors of kind Forbidden, as the reference writes them', async (t) => {
      // The reference's ListOptions validation uses field.Forbidden for these (reason FieldValueForbidden,
      // message "Forbidden: ..."), and field.NotSupported for an unknown value.
      const r = await s.get(`${CM('lt')}?resourceVersionMatch=Exact`);
      const cause = r.json?.details?.causes?.[0];
      t.equal(cause?.reason, 'FieldValueForbidden', 'rv unset with resourceVersionMatch: FieldValueForbidden');
      t.match(cause?.message ?? '', /^Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided/, 'message "Forbidden: ..."');
      const u = await s.get(`${CM('lt')}?resourceVersionMatch=Newest&resourceVersion=${R1}`);
      t.equal(u.json?.details?.causes?.[0]?.reason, 'FieldValueNotSupported', 'unknown value: FieldValueNotSupported');
    });

    await t.test('list objects: kind, continue, remainingItemCount, order', async (t) => {
      for (const ns of ['lo-c', 'lo-a', 'lo-b']) await mkNs(s, ns);
      for (const [ns, name] of [['lo-c', 'm'], ['lo-a', 'z'], ['lo-b', 'a'], ['lo-a', 'b'], ['lo-c', 'a'], ['lo-b', 'y'], ['lo-a', 'k']]) {
        await mkCm(s, ns, name, { order: 'yes' });
      }
      const all = await s.get('/api/v1/configmaps');
      t.equal(all.status, 200);
      t.equal(all.json.kind, 'ConfigMapList');
      t.equal(all.json.apiVersion, 'v1');
      t.equal(all.json.metadata.continue, '', 'continue present and empty on a complete list');
      t.equal(all.json.metadata.remainingItemCount, undefined, 'no remainingItemCount on a complete list');
      const keys: [string, string][] = all.json.items.map((i: any) => [i.metadata.namespace, i.metadata.name] as [string, string]);
      const sorted = [...keys].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0));
      t.same(keys, sorted, 'items ordered by namespace, then name');
      const mine = keys.filter(([ns]) => ns.startsWith('lo-')).map(([ns, n]) => `${ns}/${n}`);
      t.same(mine, ['lo-a/b', 'lo-a/k', 'lo-a/z', 'lo-b/a', 'lo-b/y', 'lo-c/a', 'lo-c/m']);

      const nsList = await s.get(`/apis/apps/v1/namespaces/lo-a/deployments`);
      t.equal(nsList.json.kind, 'DeploymentList', 'kind of a named-group list');
      t.equal(nsList.json.apiVersion, 'apps/v1');
      t.same(nsList.json.items, [], 'empty list has items: []');
      t.equal(nsList.json.metadata.continue, '');

      const c1 = await s.get('/api/v1/namespaces/lo-a/configmaps?limit=2');
      t.equal(c1.json.metadata.remainingItemCount, 1, 'a chunk with more: remainingItemCount');
      t.ok(c1.json.metadata.continue);
      const c2 = await s.get(`/api/v1/namespaces/lo-a/configmaps?limit=2&continue=${encodeURIComponent(c1.json.metadata.continue)}`);
      t.equal(c2.json.metadata.continue, '', 'last chunk: continue empty');
      t.equal(c2.json.metadata.remainingItemCount, undefined, 'last chunk: no remainingItemCount');
      const exactly = await s.get('/api/v1/namespaces/lo-a/configmaps?limit=3');
      t.equal(exactly.json.items.length, 3);
      t.equal(exactly.json.metadata.remainingItemCount, undefined, 'limit equal to the size: no remainingItemCount');

      const withLabel = await s.get('/api/v1/configmaps?limit=2&labelSelector=order%3Dyes');
      t.equal(withLabel.json.items.length, 2);
      t.ok(withLabel.json.metadata.continue, 'more with a label selector');
      t.equal(withLabel.json.metadata.remainingItemCount, undefined, 'never with a label selector');
      const withField = await s.get('/api/v1/configmaps?limit=2&fieldSelector=metadata.namespace%3Dlo-a');
      t.equal(withField.json.items.length, 2);
      t.ok(withField.json.metadata.continue, 'more with a field selector');
      t.equal(withField.json.metadata.remainingItemCount, undefined, 'never with a field selector');
      // Paging with a selector still yields every match exactly once.
      const seen: string[] = [];
      let tok = '';
      for (let i = 0; i < 10; i++) {
        const r = await s.get(`/api/v1/configmaps?limit=2&labelSelector=order%3Dyes${tok ? `&continue=${encodeURIComponent(tok)}` : ''}`);
        seen.push(...r.json.items.map((x: any) => `${x.metadata.namespace}/${x.metadata.name}`));
        tok = r.json.metadata.continue;
        if (!tok) break;
      }
      t.same(seen, ['lo-a/b', 'lo-a/k', 'lo-a/z', 'lo-b/a', 'lo-b/y', 'lo-c/a', 'lo-c/m'], 'selector paging: every match once, in order');
    });

    await t.test('paging: a consistent snapshot under concurrent writes', async (t) => {
      await mkNs(s, 'pg');
      const created: any[] = [];
      for (let i = 0; i < 50; i++) created.push(await mkCm(s, 'pg', `pg-${String(i).padStart(2, '0')}`));
      const expected = itemSigs(created);
      const chunks: any[] = [];
      let tok = '';
      let n = 0;
      for (;;) {
        const r = await s.get(`${CM('pg')}?limit=7${tok ? `&continue=${encodeURIComponent(tok)}` : ''}`);
        t.equal(r.status, 200, `chunk ${chunks.length}`);
        if (r.status !== 200) break;
        chunks.push(r.json);
        tok = r.json.metadata.continue;
        if (!tok || chunks.length > 20) break;
        // Between chunks: create (before, inside and after the rest), update and delete ahead and behind.
        n++;
        await mkCm(s, 'pg', `pg-${String(45 - n).padStart(2, '0')}x`);
        await mkCm(s, 'pg', `pg-00-new-${n}`);
        await mkCm(s, 'pg', `pg-99-new-${n}`);
        await patchCm(s, 'pg', `pg-${String(49 - n).padStart(2, '0')}`, { data: { a: `changed-${n}` } });
        await patchCm(s, 'pg', `pg-${String(n - 1).padStart(2, '0')}`, { data: { a: `behind-${n}` } });
        await delCm(s, 'pg', `pg-${String(35 + n).padStart(2, '0')}`);
      }
      const R = chunks[0].metadata.resourceVersion;
      t.equal(chunks.length, 8, '50 items in chunks of 7');
      t.ok(chunks.every((c) => c.metadata.resourceVersion === R), 'every chunk reports the first chunk\'s resourceVersion');
      t.ok(chunks.slice(0, -1).every((c) => c.items.length === 7), 'full chunks');
      t.same(chunks.map((c) => c.metadata.remainingItemCount), [43, 36, 29, 22, 15, 8, 1, undefined], 'remainingItemCount per chunk');
      const union = chunks.flatMap((c) => itemSigs(c.items));
      t.same(union, expected, 'the union of the chunks is exactly the collection at that revision');
      t.ok(chunks.flatMap((c) => c.items).every((i: any) => i.data.a === '1'), 'no chunk shows a later update');
      const exact = await s.get(`${CM('pg')}?resourceVersionMatch=Exact&resourceVersion=${R}`);
      t.equal(exact.status, 200);
      t.same(union, itemSigs(exact.json.items), 'same as an Exact list at that revision');
      const now = await s.get(CM('pg'));
      t.equal(now.json.items.length, 50 + 3 * n - n, 'the latest list shows the writes');

      // Across all namespaces, with writes in between in namespaces before, inside and after the one being read.
      await mkNs(s, 'pg0');
      await mkNs(s, 'pgz');
      const allChunks: any[] = [];
      let atok = '';
      for (let i = 0; i < 200; i++) {
        const r = await s.get(`/api/v1/configmaps?limit=9${atok ? `&continue=${encodeURIComponent(atok)}` : ''}`);
        if (r.status !== 200) { t.equal(r.status, 200, `all-namespaces chunk ${i}`); break; }
        allChunks.push(r.json);
        atok = r.json.metadata.continue;
        if (!atok) break;
        await mkCm(s, 'pg0', `w-${i}`);
        await mkCm(s, 'pgz', `w-${i}`);
        await mkCm(s, 'pg', `pg-50-${i}`);
        if (i < 5) await delCm(s, 'pg', `pg-${String(10 + i).padStart(2, '0')}`);
      }
      const AR = allChunks[0].metadata.resourceVersion;
      t.ok(allChunks.length > 3, `several chunks across namespaces (${allChunks.length})`);
      t.ok(allChunks.every((c) => c.metadata.resourceVersion === AR), 'all-namespaces chunks share one resourceVersion');
      const allExact = await s.get(`/api/v1/configmaps?resourceVersionMatch=Exact&resourceVersion=${AR}`);
      const allUnion = allChunks.flatMap((c) => c.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}@${i.metadata.resourceVersion}`));
      t.same(allUnion, allExact.json.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}@${i.metadata.resourceVersion}`), 'all-namespaces union equals the Exact list at that revision');
      t.notOk(allUnion.some((x) => x.startsWith('pg0/') || x.startsWith('pgz/')), 'no object written after the first chunk');

      const bad1 = await s.get(`${CM('pg')}?limit=7&continue=not-a-token`);
      t.equal(bad1.status, 400, 'a malformed continue token: 400');
      t.equal(bad1.json?.reason, 'BadRequest');
      const bogus = Buffer.from(JSON.stringify({ hello: 'world' })).toString('base64url');
      t.equal((await s.get(`${CM('pg')}?limit=7&continue=${bogus}`)).status, 400, 'a well-encoded but meaningless token: 400');
    });

    await t.test('get and list at a future revision: a short wait, then 504 Timeout with Retry-After', async (t) => {
      const { rs, waited } = await futureP;
      const whats = ['get', 'list', 'list limit (exact)', 'list Exact', 'list NotOlderThan+limit'];
      rs.forEach((r, i) => {
        const what = whats[i];
        t.equal(r.status, 504, `${what} at a future revision: 504 (${r.text.slice(0, 200)})`);
        t.equal(r.json?.reason, 'Timeout', `${what}: reason Timeout`);
        t.match(String(r.headers['retry-after']), /^\d+$/, `${what}: Retry-After header in seconds`);
        const causes = r.json?.details?.causes ?? [];
        t.ok(causes.some((c: any) => c.reason === 'ResourceVersionTooLarge'), `${what}: cause ResourceVersionTooLarge`);
        t.ok(causes.some((c: any) => /Too large resource version/i.test(c.message)), `${what}: "Too large resource version"`);
        t.match(r.json?.message ?? '', /Too large resource version/i);
      });
      t.ok(waited >= 500, `the server waited before the 504 (${waited} ms)`);
    });

    await t.test('selectors on list, watch and deletecollection', async (t) => {
      await mkNs(s, 'sel');
      await mkCm(s, 'sel', 's1', { app: 'web', tier: 'fe' });
      await mkCm(s, 'sel', 's2', { app: 'db', tier: 'be' });
      await mkCm(s, 'sel', 's3', { app: 'web' });
      await mkCm(s, 'sel', 's4');
      const names = async (q: string) => {
        const r = await s.get(`${CM('sel')}?${q}`);
        if (r.status !== 200) return `${r.status}: ${r.text.slice(0, 200)}`;
        return r.json.items.map((i: any) => i.metadata.name).join(',');
      };
      const labelCases: [string, string][] = [
        ['app=web', 's1,s3'], ['app==web', 's1,s3'], ['app!=web', 's2,s4'], ['app in (web,db)', 's1,s2,s3'],
        ['app notin (web)', 's2,s4'], ['tier', 's1,s2'], ['!tier', 's3,s4'], ['app=web,tier=fe', 's1'], ['app=web,!tier', 's3'],
        ['app in (none)', ''],
      ];
      for (const [sel, want] of labelCases) t.equal(await names(`labelSelector=${encodeURIComponent(sel)}`), want, `labelSelector ${sel}`);
      const fieldCases: [string, string][] = [
        ['metadata.name=s1', 's1'], ['metadata.name==s1', 's1'], ['metadata.name!=s1', 's2,s3,s4'],
        ['metadata.namespace=sel', 's1,s2,s3,s4'], ['metadata.namespace!=sel', ''], ['metadata.namespace==other', ''],
        ['metadata.name!=s1,metadata.name!=s2', 's3,s4'],
      ];
      for (const [sel, want] of fieldCases) t.equal(await names(`fieldSelector=${encodeURIComponent(sel)}`), want, `fieldSelector ${sel}`);
      t.equal(await names(`labelSelector=app%3Dweb&fieldSelector=metadata.name%21%3Ds1`), 's3', 'label and field selectors together');
      const across = await s.get(`/api/v1/configmaps?fieldSelector=${encodeURIComponent('metadata.namespace=sel')}`);
      t.same(across.json.items.map((i: any) => i.metadata.name), ['s1', 's2', 's3', 's4'], 'metadata.namespace across all namespaces');
      const acrossNot = await s.get(`/api/v1/configmaps?fieldSelector=${encodeURIComponent('metadata.namespace!=sel')}`);
      t.ok(acrossNot.json.items.length > 0 && acrossNot.json.items.every((i: any) => i.metadata.namespace !== 'sel'), 'metadata.namespace!= across all namespaces');

      // Per-type fields: secrets' type and pods' spec.nodeName.
      for (const [name, type] of [['opaque', 'Opaque'], ['custom', 'example.com/custom']]) {
        await must(s.request('POST', '/api/v1/namespaces/sel/secrets', { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, type, data: { k: 'dg==' } } }), 201, `secret ${name}`);
      }
      const secrets = async (sel: string) => (await s.get(`/api/v1/namespaces/sel/secrets?fieldSelector=${encodeURIComponent(sel)}`)).json?.items?.map((i: any) => i.metadata.name).join(',');
      t.equal(await secrets('type=Opaque'), 'opaque', 'secrets type=');
      t.equal(await secrets('type==example.com/custom'), 'custom', 'secrets type==');
      t.equal(await secrets('type!=Opaque'), 'custom', 'secrets type!=');
      for (const [name, node] of [['p1', 'n1'], ['p2', 'n2'], ['p3', undefined]] as const) {
        await must(s.request('POST', '/api/v1/namespaces/sel/pods', { body: pod(name, 'sel', node) }), 201, `pod ${name}`);
      }
      const pods = async (sel: string) => (await s.get(`/api/v1/namespaces/sel/pods?fieldSelector=${encodeURIComponent(sel)}`)).json?.items?.map((i: any) => i.metadata.name).join(',');
      t.equal(await pods('spec.nodeName=n1'), 'p1', 'pods spec.nodeName=');
      t.equal(await pods('spec.nodeName==n2'), 'p2', 'pods spec.nodeName==');
      t.equal(await pods('spec.nodeName!=n1'), 'p2,p3', 'pods spec.nodeName!=');
      t.equal(await pods('spec.nodeName='), 'p3', 'spec.nodeName= selects unscheduled pods');
      const allPods = await s.get(`/api/v1/pods?fieldSelector=${encodeURIComponent('spec.nodeName=n2')}`);
      t.same(allPods.json.items.map((i: any) => i.metadata.name), ['p2'], 'spec.nodeName across all namespaces');

      const unsupported = await s.get(`${CM('sel')}?fieldSelector=${encodeURIComponent('data.a=1')}`);
      t.equal(unsupported.status, 400, 'an unsupported field: 400');
      t.match(unsupported.json?.message ?? '', /data\.a/, 'the message names the field');
      t.match(unsupported.json?.message ?? '', /field label not supported: data\.a/);
      const podOnly = await s.get(`${CM('sel')}?fieldSelector=${encodeURIComponent('spec.nodeName=n1')}`);
      t.equal(podOnly.status, 400, 'another type\'s field: 400');
      t.match(podOnly.json?.message ?? '', /spec\.nodeName/);
      const wUnsupported = await s.get(`${CM('sel')}?watch=1&fieldSelector=${encodeURIComponent('data.a=1')}`);
      t.equal(wUnsupported.status, 400, 'an unsupported field on watch: 400');
      const badLabel = await s.get(`${CM('sel')}?labelSelector=${encodeURIComponent('app in (web')}`);
      t.equal(badLabel.status, 400, 'a malformed label selector: 400');

      // Watch with label and field selectors from the current revision.
      const R = await currentRv(s);
      const wl = openWatch(s, `${CM('sel')}?watch=1&resourceVersion=${R}&labelSelector=${encodeURIComponent('app in (web)')}`);
      const wf = openWatch(s, `${CM('sel')}?watch=1&resourceVersion=${R}&fieldSelector=${encodeURIComponent('metadata.name!=s1')}`);
      await sleep(100);
      await patchCm(s, 'sel', 's1', { data: { a: 'x' } });
      await patchCm(s, 'sel', 's2', { data: { a: 'x' } });
      await patchCm(s, 'sel', 's3', { data: { a: 'x' } });
      t.ok(await wl.until((e) => e.length >= 2, 60_000), 'label watch events');
      t.ok(await wf.until((e) => e.length >= 2, 60_000), 'field watch events');
      await sleep(200);
      t.same(wl.events.map((e) => `${e.type} ${e.object.metadata.name}`), ['MODIFIED s1', 'MODIFIED s3'], 'label-selector watch');
      t.same(wf.events.map((e) => `${e.type} ${e.object.metadata.name}`), ['MODIFIED s2', 'MODIFIED s3'], 'field-selector watch');
      wl.close();
      wf.close();

      // deletecollection with field and label selectors.
      const dc = await s.request('DELETE', `${CM('sel')}?fieldSelector=${encodeURIComponent('metadata.name=s4')}`);
      t.equal(dc.status, 200, dc.text.slice(0, 200));
      t.same(dc.json?.items?.map((i: any) => i.metadata.name), ['s4'], 'deletecollection with a field selector');
      const dl = await s.request('DELETE', `${CM('sel')}?labelSelector=${encodeURIComponent('tier=be')}`);
      t.same(dl.json?.items?.map((i: any) => i.metadata.name), ['s2'], 'deletecollection with a label selector');
      const dsec = await s.request('DELETE', `/api/v1/namespaces/sel/secrets?fieldSelector=${encodeURIComponent('type!=Opaque')}`);
      t.same(dsec.json?.items?.map((i: any) => i.metadata.name), ['custom'], 'deletecollection with a per-type field selector');
      t.equal(await names(''), 's1,s3', 'the rest is kept');
      const dbad = await s.request('DELETE', `${CM('sel')}?fieldSelector=${encodeURIComponent('data.a=x')}`);
      t.equal(dbad.status, 400, 'deletecollection with an unsupported field: 400');
      t.equal(await names(''), 's1,s3', 'nothing deleted by a refused deletecollection');
    });

    await t.test('watch: watch=1 and watch=true stream one JSON object per line; timeoutSeconds ends cleanly', async (t) => {
      await mkNs(s, 'wb');
      await mkCm(s, 'wb', 'x');
      await mkCm(s, 'wb', 'y');
      const t0 = Date.now();
      const [w1, wt, w0] = await Promise.all([
        watchAll(s, `${CM('wb')}?watch=1`),
        watchAll(s, `${CM('wb')}?watch=true`),
        watchAll(s, `${CM('wb')}?watch=1&resourceVersion=0`),
      ]);
      const took = Date.now() - t0;
      for (const [w, what] of [[w1, 'watch=1'], [wt, 'watch=true'], [w0, 'watch=1&resourceVersion=0']] as const) {
        t.equal(w.status, 200, `${what}: 200`);
        t.equal(w.headers['transfer-encoding'], 'chunked', `${what}: chunked`);
        t.match(String(w.headers['content-type']), /^application\/json/, `${what}: JSON`);
        t.same(w.bad, [], `${what}: every line is JSON`);
        t.ok(w.text.endsWith('\n'), `${what}: each event ends with a newline`);
        t.ok(w.events.every((e) => Object.keys(e).sort().join() === 'object,type'), `${what}: {type, object}`);
        t.same(w.events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED x', 'ADDED y'], `${what}: synthetic ADDED for existing objects`);
        t.ok(w.ended, `${what}: timeoutSeconds ended the stream cleanly`);
      }
      t.ok(took >= 900, `timeoutSeconds=1 ended the stream, not before a second (${took} ms)`);
      // unset/"0": the synthetic state, then changes.
      const live = openWatch(s, `${CM('wb')}?watch=1`);
      t.ok(await live.until((e) => e.length >= 2, 60_000), 'initial state');
      await mkCm(s, 'wb', 'z');
      await patchCm(s, 'wb', 'x', { data: { a: '9' } });
      await delCm(s, 'wb', 'y');
      t.ok(await live.until((e) => e.length >= 5, 60_000), 'then the changes');
      t.same(live.events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED x', 'ADDED y', 'ADDED z', 'MODIFIED x', 'DELETED y']);
      live.close();
      const bad = await s.get(`${CM('wb')}?watch=1&resourceVersion=abc`);
      t.equal(bad.status, 500, 'a malformed resourceVersion on watch: the reference\'s 500 (test/robustness/resource-version.test.ts)');
    });

    await t.test('watch: a timeoutSeconds past a 32-bit timer in milliseconds keeps the watch open', async (t) => {
      await mkNs(s, 'longwatch');
      const ws = ['2147484', '9999999999'].map((secs) => openWatch(s, `${CM('longwatch')}?watch=1&timeoutSeconds=${secs}`));
      await Promise.all(ws.map((w) => w.ready));
      await sleep(300);
      await mkCm(s, 'longwatch', 'after');
      for (const w of ws) {
        t.equal(w.status, 200);
        t.ok(await w.until((e) => e.some((x) => x.object?.metadata?.name === 'after'), 60_000), 'an event after the watch began arrives');
        t.notOk(w.ended, 'the watch is still open');
        w.close();
      }
    });

    await t.test('watch: response head arrives before any event', async (t) => {
      // Clients (client-go's Watch) wait for the 200 before they consider the watch established.
      const R = await currentRv(s);
      const w = openWatch(s, `${CM('wb')}?watch=1&resourceVersion=${R}`);
      const got = await within(w.ready, 1000);
      t.ok(got, 'the 200 and its headers are sent when the watch starts, not with the first event');
      t.equal(w.events.length, 0);
      w.close();
    });

    await t.test('watch from a revision: only later changes, nothing missed, nothing repeated', async (t) => {
      await mkNs(s, 'wr');
      await mkCm(s, 'wr', 'pre');
      const R0 = await currentRv(s);
      const w1 = openWatch(s, `${CM('wr')}?watch=1&resourceVersion=${R0}`);
      await sleep(100);
      const acks: number[] = [];
      acks.push(rvOf(await mkCm(s, 'wr', 'x1')));
      acks.push(rvOf(await mkCm(s, 'wr', 'x2')));
      acks.push(rvOf(await mkCm(s, 'wr', 'x3')));
      acks.push(rvOf(await patchCm(s, 'wr', 'x1', { data: { a: '2' } })));
      await delCm(s, 'wr', 'x2');
      acks.push(rvOf(await patchCm(s, 'wr', 'x3', { metadata: { labels: { l: 'v' } } })));
      acks.push(rvOf(await mkCm(s, 'wr', 'x4')));
      await delCm(s, 'wr', 'x1');
      t.ok(await w1.until((e) => e.length >= 8, 60_000), 'eight events');
      await sleep(200);
      w1.close();
      const all = evSigs(w1.events);
      t.same(w1.events.map((e) => `${e.type} ${e.object.metadata.name}`),
        ['ADDED x1', 'ADDED x2', 'ADDED x3', 'MODIFIED x1', 'DELETED x2', 'MODIFIED x3', 'ADDED x4', 'DELETED x1'], 'no synthetic events, every change in order');
      const revs = w1.events.map(rvOfEv);
      t.ok(revs.every((r, i) => i === 0 || r > revs[i - 1]), 'revisions increase');
      t.ok(revs[0] > R0, 'all after the starting revision');
      for (const r of acks) t.ok(revs.includes(r), `the write at ${r} is in the stream`);
      const delObj = w1.events[4].object;
      t.equal(delObj.metadata.name, 'x2');
      t.equal(delObj.kind, 'ConfigMap', 'DELETED carries the object');

      const ks = [0, 2, 3, 5, 7];
      const [again, ...replays] = await Promise.all([R0, ...ks.map((k) => revs[k])].map((r) => watchAll(s, `${CM('wr')}?watch=1&resourceVersion=${r}`)));
      ks.forEach((k, i) => {
        t.equal(replays[i].status, 200);
        t.same(evSigs(replays[i].events), all.slice(k + 1), `from the revision of event ${k}: exactly the events after it`);
      });
      t.same(evSigs(again.events), all, 'from the first revision: the same events again');
    });

    await t.test('watch one object, and across all namespaces', async (t) => {
      for (const ns of ['wa1', 'wa2']) await mkNs(s, ns);
      const R0 = await currentRv(s);
      const one = openWatch(s, `${CM('wa1')}?watch=1&resourceVersion=${R0}&fieldSelector=${encodeURIComponent('metadata.name=x')}`);
      const across = openWatch(s, `/api/v1/configmaps?watch=1&resourceVersion=${R0}`);
      const nsScoped = openWatch(s, `${CM('wa2')}?watch=1&resourceVersion=${R0}`);
      await sleep(100);
      await mkCm(s, 'wa1', 'x');
      await mkCm(s, 'wa1', 'y');
      await mkCm(s, 'wa2', 'x');
      await patchCm(s, 'wa1', 'x', { data: { a: '3' } });
      await patchCm(s, 'wa1', 'y', { data: { a: '3' } });
      await delCm(s, 'wa1', 'x');
      t.ok(await across.until((e) => e.filter((x) => x.object.metadata.namespace?.startsWith('wa')).length >= 6, 60_000));
      await sleep(200);
      t.same(one.events.map((e) => `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}`), ['ADDED wa1/x', 'MODIFIED wa1/x', 'DELETED wa1/x'], 'fieldSelector=metadata.name: one object only');
      t.same(across.events.filter((x) => x.object.metadata.namespace?.startsWith('wa')).map((e) => `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}`),
        ['ADDED wa1/x', 'ADDED wa1/y', 'ADDED wa2/x', 'MODIFIED wa1/x', 'MODIFIED wa1/y', 'DELETED wa1/x'], 'all namespaces');
      t.same(nsScoped.events.map((e) => `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}`), ['ADDED wa2/x'], 'one namespace');
      for (const w of [one, across, nsScoped]) w.close();
      // A watch of one object from rv unset: the synthetic ADDED of that object only.
      const single = await watchAll(s, `${CM('wa1')}?watch=1&fieldSelector=${encodeURIComponent('metadata.name=y')}`);
      t.same(single.events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED y']);
      // By name across all namespaces (kubectl get -A --field-selector metadata.name=x): every
      // namespace's object of that name, for list and watch alike.
      await mkCm(s, 'wa1', 'x');
      const named = await s.get(`/api/v1/configmaps?fieldSelector=${encodeURIComponent('metadata.name=x')}`);
      t.equal(named.status, 200, named.text.slice(0, 200));
      t.same(named.json?.items?.filter((i: any) => i.metadata.namespace.startsWith('wa')).map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`), ['wa1/x', 'wa2/x'], 'list by name across all namespaces');
      const namedWatch = await watchAll(s, `/api/v1/configmaps?watch=1&fieldSelector=${encodeURIComponent('metadata.name==x')}`);
      t.equal(namedWatch.status, 200);
      t.same(namedWatch.events.filter((e) => e.object.metadata.namespace.startsWith('wa')).map((e) => `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}`), ['ADDED wa1/x', 'ADDED wa2/x'], 'watch by name across all namespaces');
      t.equal((await s.get('/api/v1/configmaps/x')).status, 404, 'a name in the path of a cluster-wide namespaced collection is still no route');
    });

    await t.test('watch with a label selector: leaving is DELETED, entering is ADDED', async (t) => {
      await mkNs(s, 'wl');
      const R0 = await currentRv(s);
      const path = `${CM('wl')}?watch=1&resourceVersion=${R0}&labelSelector=${encodeURIComponent('team=a')}`;
      const w = openWatch(s, path);
      await sleep(100);
      await mkCm(s, 'wl', 'l1', { team: 'a' });
      await mkCm(s, 'wl', 'l2', { team: 'b' });
      await patchCm(s, 'wl', 'l1', { metadata: { labels: { team: 'b' } } });
      await patchCm(s, 'wl', 'l2', { metadata: { labels: { team: 'a' } } });
      await patchCm(s, 'wl', 'l2', { data: { a: 'changed' } });
      await patchCm(s, 'wl', 'l1', { data: { a: 'changed' } });
      await delCm(s, 'wl', 'l2');
      await delCm(s, 'wl', 'l1');
      const want = ['ADDED l1', 'DELETED l1', 'ADDED l2', 'MODIFIED l2', 'DELETED l2'];
      t.ok(await w.until((e) => e.length >= want.length, 60_000));
      await sleep(200);
      t.same(w.events.map((e) => `${e.type} ${e.object.metadata.name}`), want, 'live');
      // The reference sends a leaving object's previous content (which matched) at the event's revision.
      t.same(w.events[1]?.object.metadata.labels, { team: 'a' }, 'DELETED on leaving carries the previous object (team=a)');
      t.ok(rvOfEv(w.events[1]) > rvOfEv(w.events[0]), 'at the revision of the change');
      w.close();
      const replay = await watchAll(s, path);
      t.same(evSigs(replay.events), evSigs(w.events), 'replayed from history: the same events');
    });

    // The reference refuses a pod update that changes spec.nodeName (pods are bound once, through
    // pods/binding), so a pod cannot move between nodes: a watch pinned to a node index sees pods
    // enter and leave it through its label selector instead.
    await t.test('watch pods by spec.nodeName (an indexed field) and labels: leaving the selection is DELETED', async (t) => {
      await mkNs(s, 'wp');
      const R0 = await currentRv(s);
      const p1 = `/api/v1/namespaces/wp/pods?watch=1&resourceVersion=${R0}&fieldSelector=${encodeURIComponent('spec.nodeName=n1')}&labelSelector=team%3Da`;
      const p2 = `/api/v1/pods?watch=1&resourceVersion=${R0}&fieldSelector=${encodeURIComponent('spec.nodeName=n2')}`;
      const w1 = openWatch(s, p1);
      const w2 = openWatch(s, p2);
      await sleep(100);
      const merge = { 'content-type': 'application/merge-patch+json' };
      await must(s.request('POST', '/api/v1/namespaces/wp/pods', { body: { ...pod('p', 'wp', 'n1'), metadata: { name: 'p', namespace: 'wp', labels: { team: 'a' } } } }), 201, 'pod');
      await must(s.request('POST', '/api/v1/namespaces/wp/pods', { body: pod('q', 'wp', 'n2') }), 201, 'pod');
      await must(s.request('POST', '/api/v1/namespaces/wp/pods', { body: pod('r', 'wp', 'n3') }), 201, 'pod');
      await must(s.request('PATCH', '/api/v1/namespaces/wp/pods/p', { body: { metadata: { labels: { team: 'b' } } }, headers: merge }), 200, 'relabel pod');
      await must(s.request('PATCH', '/api/v1/namespaces/wp/pods/q', { body: { metadata: { labels: { x: 'y' } } }, headers: merge }), 200, 'label pod');
      await must(s.request('DELETE', '/api/v1/namespaces/wp/pods/q?gracePeriodSeconds=0'), 200, 'delete pod');
      t.ok(await w2.until((e) => e.length >= 3, 60_000));
      t.ok(await w1.until((e) => e.length >= 2, 60_000));
      await sleep(200);
      // As the reference's watch cache does: an object leaving the selected set is sent as DELETED
      // with its previous content (still matching the selector) at the event's resourceVersion.
      t.same(w1.events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED p', 'DELETED p'], 'the n1 team=a watcher');
      t.same(w1.events[1]?.object.metadata.labels, { team: 'a' }, 'DELETED carries the previous object (team=a)');
      t.ok(Number(w1.events[1]?.object.metadata.resourceVersion) > Number(w1.events[0]?.object.metadata.resourceVersion), '... at the revision of the change');
      t.same(w2.events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.spec?.nodeName}`), ['ADDED q n2', 'MODIFIED q n2', 'DELETED q n2'], 'the n2 watcher');
      w1.close();
      w2.close();
      const [r1, r2] = await Promise.all([watchAll(s, p1), watchAll(s, p2)]);
      t.same(evSigs(r1.events), evSigs(w1.events), 'n1 replayed from history');
      t.same(evSigs(r2.events), evSigs(w2.events), 'n2 replayed from history');
    });

    await t.test('bookmarks only with allowWatchBookmarks=true', async (t) => {
      const R = await currentRv(s);
      const [withBm, without] = await Promise.all([
        watchAll(s, `${CM('wb')}?watch=1&resourceVersion=${R}&allowWatchBookmarks=true`, 2),
        watchAll(s, `${CM('wb')}?watch=1&resourceVersion=${R}`, 2),
      ]);
      const bms = withBm.events.filter((e) => e.type === 'BOOKMARK');
      t.ok(bms.length >= 2, `bookmarks every ~500 ms (${bms.length})`);
      for (const b of bms) {
        t.same(Object.keys(b.object).sort(), ['apiVersion', 'kind', 'metadata'], 'bookmark object: kind, apiVersion, metadata');
        t.same(Object.keys(b.object.metadata), ['resourceVersion'], 'bookmark metadata: resourceVersion only');
        t.equal(b.object.kind, 'ConfigMap');
        t.equal(b.object.apiVersion, 'v1');
        t.ok(rvOf(b.object) >= R, 'bookmark revision not older than the start');
      }
      t.equal(without.events.filter((e) => e.type === 'BOOKMARK').length, 0, 'none without allowWatchBookmarks');
      t.equal(without.events.length, 0);
    });

    await t.test('streaming list: sendInitialEvents', async (t) => {
      await mkNs(s, 'si');
      for (const n of ['i1', 'i2', 'i3']) await mkCm(s, 'si', n);
      const before = await currentRv(s);
      const w = openWatch(s, `${CM('si')}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
      t.ok(await w.until((e) => e.some((x) => x.type === 'BOOKMARK'), 60_000), 'a bookmark ends the initial events');
      await mkCm(s, 'si', 'i4');
      t.ok(await w.until((e) => e.some((x) => x.type === 'ADDED' && x.object.metadata.name === 'i4'), 60_000));
      const seq = w.events.map((e) => (e.type === 'BOOKMARK' ? 'BOOKMARK' : `${e.type} ${e.object.metadata.name}`));
      t.same(seq.slice(0, 5), ['ADDED i1', 'ADDED i2', 'ADDED i3', 'BOOKMARK', 'ADDED i4'], 'initial state, bookmark, then live changes');
      const bm = w.events.find((e) => e.type === 'BOOKMARK')!;
      t.same(bm.object.metadata.annotations, { [`${domain}/initial-events-end`]: 'true' }, `annotation ${domain}/initial-events-end`);
      t.ok(rvOf(bm.object) >= before, 'the bookmark revision covers the initial state');
      t.equal(bm.object.kind, 'ConfigMap');
      w.close();
      // With an explicit starting revision too.
      const w2 = await watchAll(s, `${CM('si')}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${before}`);
      t.same(w2.events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata.name), ['i1', 'i2', 'i3', 'i4'], 'resourceVersion given: state not older than it');
      const noRvm = await s.get(`${CM('si')}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true`);
      expect422(t, noRvm, domain, 'resourceVersionMatch', 'sendInitialEvents without resourceVersionMatch=NotOlderThan');
      const exact = await s.get(`${CM('si')}?watch=1&sendInitialEvents=true&resourceVersionMatch=Exact&allowWatchBookmarks=true&resourceVersion=${before}`);
      t.equal(exact.status, 422, 'sendInitialEvents with resourceVersionMatch=Exact: 422');
    });

    await t.test('watch over WebSocket: one text frame per event, same JSON as HTTP', async (t) => {
      await mkNs(s, 'wsk');
      await mkCm(s, 'wsk', 'old');
      const R0 = await currentRv(s);
      const p = `${CM('wsk')}?watch=1&resourceVersion=${R0}`;
      const ws = await connectWebSocket({ port: s.port, path: p, ca: s.ca, token: s.token });
      t.equal(ws.status, 101, `upgraded (${ws.body.slice(0, 200)})`);
      t.ok(ws.acceptOk, 'Sec-WebSocket-Accept matches the key');
      const http = openWatch(s, p);
      await sleep(150);
      await mkCm(s, 'wsk', 'a', { k: 'v' }, { big: 'x'.repeat(70_000) }); // a frame over 64 KiB: 64-bit length
      await patchCm(s, 'wsk', 'a', { data: { small: '1' } });
      await mkCm(s, 'wsk', 'b');
      await delCm(s, 'wsk', 'a');
      t.ok(await ws.waitFor((m) => m.length >= 4, 5000).then(() => true, () => false), 'four messages over the WebSocket');
      t.ok(await http.until((e) => e.length >= 4, 60_000), 'four events over HTTP');
      t.equal(ws.messages.length, http.lines.length);
      t.ok(ws.messages.every((m) => m.opcode === OP_TEXT), 'text frames');
      t.ok(ws.messages.every((m) => m.frames === 1), 'one frame per event');
      t.notOk(ws.sawMaskedFrame, 'server frames are not masked');
      t.same(ws.messages.map((m) => m.text), http.lines, 'each frame is the JSON of the HTTP line');
      t.same(ws.messages.map((m) => { const e = JSON.parse(m.text); return `${e.type} ${e.object.metadata.name}`; }), ['ADDED a', 'MODIFIED a', 'ADDED b', 'DELETED a']);
      http.close();
      ws.close(1000);
      const closed = await within(ws.closed, 5000);
      t.ok(closed, 'the server closes the connection after our close frame');
      t.equal(ws.closeFrame?.code, 1000, 'the server answered with a close frame');
      // A WebSocket watch from rv unset gets the synthetic state too.
      const ws2 = await connectWebSocket({ port: s.port, path: `${CM('wsk')}?watch=1`, ca: s.ca, token: s.token });
      t.equal(ws2.status, 101);
      t.ok(await ws2.waitFor((m) => m.length >= 2, 5000).then(() => true, () => false));
      t.same(ws2.messages.map((m) => JSON.parse(m.text).object.metadata.name), ['b', 'old']);
      ws2.destroy();
      // Unauthenticated upgrade is refused.
      const anon = await connectWebSocket({ port: s.port, path: p, ca: s.ca, token: 'nope' });
      t.equal(anon.status, 401, 'bad token: 401, no upgrade');
    });

    await t.test('watch over WebSocket: events committed together still arrive one per message', async (t) => {
      // Concurrent creates share group commits, so one fan-out hands a watcher several events at once;
      // over HTTP they may share a write, over a WebSocket each must stay its own message.
      await mkNs(s, 'wsb');
      const R0 = await currentRv(s);
      const ws = await connectWebSocket({ port: s.port, path: `${CM('wsb')}?watch=1&resourceVersion=${R0}`, ca: s.ca, token: s.token });
      t.equal(ws.status, 101);
      const N = 120;
      const made = await Promise.all(Array.from({ length: N }, (_, i) => mkCm(s, 'wsb', `c${i}`)));
      t.equal(made.length, N, 'all created');
      t.ok(await ws.waitFor((m) => m.length >= N, 10_000).then(() => true, () => false), `${N} messages (got ${ws.messages.length})`);
      const parsed = ws.messages.map((m) => { try { return JSON.parse(m.text); } catch { return undefined; } });
      t.ok(parsed.every((e) => e?.type === 'ADDED'), 'every message is exactly one event');
      t.equal(new Set(parsed.map((e) => e?.object?.metadata?.name)).size, N, 'each object once');
      ws.destroy();
    });

    await t.test('the server still serves after all of the above', async (t) => {
      t.equal((await s.get(CM('lt'))).status, 200);
    });
  });
}

function rvOfEv(e: Ev): number { return Number(e.object.metadata.resourceVersion); }

// ------------------------------------------------------------------ history window (kubernetes brand)

t.test('history window: expired continue token, Exact and watch older than retained', async (t) => {
  const s = await withServer(t, { withoutControllers: NO_ROOT_CA, brand: 'kubernetes', args: ['--storage-retention=2s'] });
  await mkNs(s, 'hw');
  for (const n of ['a', 'b', 'c']) await mkCm(s, 'hw', n);
  const first = await s.get(`${CM('hw')}?limit=1`);
  t.equal(first.status, 200);
  const R = rvOf(first.json);
  const tok = encodeURIComponent(first.json.metadata.continue);
  t.ok(tok);
  // Still within the window: the continue works and Exact works.
  t.equal((await s.get(`${CM('hw')}?limit=1&continue=${tok}`)).status, 200, 'fresh token');
  for (const n of ['d', 'e', 'f']) await mkCm(s, 'hw', n);
  await patchCm(s, 'hw', 'a', { data: { a: 'x' } });
  t.equal((await s.get(`${CM('hw')}?resourceVersionMatch=Exact&resourceVersion=${R}`)).status, 200, 'Exact within the window');
  const writesDone = Date.now();
  let cont: Reply | undefined;
  for (let i = 0; i < 40; i++) {
    cont = await s.get(`${CM('hw')}?limit=1&continue=${tok}`);
    if (cont.status !== 200) break;
    await sleep(250);
  }
  t.equal(cont!.status, 410, 'an expired continue token: 410');
  t.equal(cont!.json?.reason, 'Expired');
  t.match(cont!.json?.message ?? '', /too old to display a consistent list result/);
  t.match(cont!.json?.message ?? '', /start a new list without the continue parameter/, 'the restart-the-list message');
  t.ok(cont!.json?.metadata?.continue, 'a fresh continue token is offered, as the reference does');
  t.ok(Date.now() - writesDone >= 1500, 'not expired before the window');
  const wait = 4000 - (Date.now() - writesDone);
  if (wait > 0) await sleep(wait);

  const exact = await s.get(`${CM('hw')}?resourceVersionMatch=Exact&resourceVersion=${R}`);
  t.equal(exact.status, 410, 'Exact list older than the window: 410');
  t.equal(exact.json?.reason, 'Expired');
  const exactLimit = await s.get(`${CM('hw')}?limit=2&resourceVersion=${R}`);
  t.equal(exactLimit.status, 410, 'limit + rv (exact) older than the window: 410');

  const w = await watchAll(s, `${CM('hw')}?watch=1&resourceVersion=${R}`, 5);
  t.equal(w.status, 200);
  t.ok(w.events.length >= 1, 'an event');
  const err = w.events[0];
  t.equal(err?.type, 'ERROR', 'an ERROR event');
  t.equal(err?.object?.kind, 'Status');
  t.equal(err?.object?.code, 410, 'code 410');
  t.ok(['Expired', 'Gone'].includes(err?.object?.reason), `reason Expired or Gone (${err?.object?.reason})`);
  t.equal(w.events.length, 1, 'nothing after the error');
  t.ok(w.ended, 'then the stream ends');
  // A watch from the current revision still works.
  const now = await currentRv(s);
  const ok = await watchAll(s, `${CM('hw')}?watch=1&resourceVersion=${now}`);
  t.equal(ok.events.length, 0, 'current revision: no error');
});

// ------------------------------------------------------------------ slow watchers

// This case runs with uWS terminating TLS itself (--secure-port-client-certs=false): the per-watcher
// cap counts what a stream wrote while its socket was backed up until the socket drains completely,
// and behind the node:tls front (the default with x509) uWS writes to a Unix socket of about 200 KiB
// instead of a loopback TCP buffer of several MiB, so under this burst a *reading* watcher reaches
// the test's tiny 256 KiB cap too (docs/operations.md, "Transport").
t.test('a watcher that never reads is closed; a reading one gets everything', async (t) => {
  const s = await withServer(t, { withoutControllers: NO_ROOT_CA, env: { CAPI_WATCH_BUDGET_BYTES: '262144' }, args: ['--secure-port-client-certs=false'] });
  await mkNs(s, 'ev');
  const R0 = await currentRv(s);
  const path = `${CM('ev')}?watch=1&resourceVersion=${R0}`;
  // The stalled watcher: sends its request, then never reads.
  const raw = tls.connect({ host: '127.0.0.1', port: s.port, ca: s.ca });
  await new Promise<void>((r, j) => { raw.once('secureConnect', () => r()); raw.once('error', j); });
  let rawBytes = 0;
  const rawChunks: Buffer[] = [];
  let rawEnded = false;
  raw.on('data', (d: Buffer) => { rawBytes += d.length; rawChunks.push(d); });
  raw.on('end', () => { rawEnded = true; });
  raw.on('close', () => { rawEnded = true; });
  raw.on('error', () => { rawEnded = true; });
  raw.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nAuthorization: Bearer ${s.token}\r\nAccept: application/json\r\n\r\n`);
  raw.pause();
  const reader = openWatch(s, path);
  await sleep(200);

  // Big enough that the kernel's socket buffers (a few MiB on loopback) cannot hide the stall.
  const N = 300;
  const payload = 'x'.repeat(32 * 1024);
  let next = 0;
  const worker = async () => {
    while (next < N) {
      const i = next++;
      await mkCm(s, 'ev', `big-${String(i).padStart(3, '0')}`, undefined, { blob: payload });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  t.ok(await reader.until((e) => e.length >= N, 60_000), `the reading watcher got all ${N} events (${reader.events.length})`);
  t.equal(new Set(reader.events.map((e) => e.object.metadata.name)).size, N, 'each once');
  t.ok(reader.events.every((e) => e.type === 'ADDED'));
  t.equal(reader.status, 200);
  t.notOk(reader.ended, 'the reading watcher is still open');

  // Now let the stalled one read what the server kept for it: it must end before all events.
  raw.resume();
  let last = -1;
  for (let i = 0; i < 50 && !rawEnded; i++) {
    await sleep(100);
    const text = Buffer.concat(rawChunks).toString('latin1');
    if (/\r\n0\r\n\r\n$/.test(text)) break; // chunked terminator: the response ended
    if (rawBytes === last && i > 10) break;
    last = rawBytes;
  }
  const text = Buffer.concat(rawChunks).toString('latin1');
  const got = (text.match(/"type":"ADDED"/g) ?? []).length;
  const terminated = rawEnded || /\r\n0\r\n\r\n$/.test(text);
  t.ok(terminated, `the server ended the stalled watch (socket end: ${rawEnded})`);
  t.ok(got < N, `the stalled watcher was cut off (${got} of ${N} events reached it)`);
  raw.destroy();

  const after = await s.get(`${CM('ev')}?limit=1`);
  t.equal(after.status, 200, 'the server keeps serving');
  const late = openWatch(s, `${CM('ev')}?watch=1&resourceVersion=${await currentRv(s)}`);
  await sleep(100);
  await mkCm(s, 'ev', 'after');
  t.ok(await late.until((e) => e.length >= 1, 60_000), 'new watches work');
  t.ok(await reader.until((e) => e.length >= N + 1, 60_000), 'the reading watcher keeps going');
  late.close();
  reader.close();
});

t.test('a watcher whose socket backed up gets every pending event once it reads again', async (t) => {
  // Default budget (16 MiB): the backed-up watcher must not be closed, and what the server queued for
  // it must reach it as soon as it reads again, without waiting for another change to happen. On the
  // default secure port (through the TLS front): uWS lost the bytes of a large write made inside
  // cork() on a backed-up socket, which looked like a last event waiting for the next write.
  const s = await withServer(t, { withoutControllers: NO_ROOT_CA });
  await mkNs(s, 'bp');
  const R0 = await currentRv(s);
  const raw = tls.connect({ host: '127.0.0.1', port: s.port, ca: s.ca });
  await new Promise<void>((r, j) => { raw.once('secureConnect', () => r()); raw.once('error', j); });
  let events = 0;
  let tail = '';
  const count = (x: string) => (x.match(/"type":"ADDED"/g) ?? []).length;
  raw.on('data', (d: Buffer) => {
    const text = tail + d.toString('latin1');
    events += count(text) - count(tail);
    tail = text.slice(-32);
  });
  raw.write(`GET ${CM('bp')}?watch=1&resourceVersion=${R0} HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nAuthorization: Bearer ${s.token}\r\nAccept: application/json\r\n\r\n`);
  await sleep(100);
  raw.pause();
  // ~10 MiB: more than the kernel's socket buffers hold, far less than the budget.
  const N = 320;
  const payload = 'x'.repeat(32 * 1024);
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < N) {
      const i = next++;
      await mkCm(s, 'bp', `bp-${String(i).padStart(3, '0')}`, undefined, { blob: payload });
    }
  }));
  await sleep(100);
  raw.resume();
  // 10 MiB through TLS while another suite may share the machine: seconds, not milliseconds
  const all = await until(() => events >= N, 60_000);
  t.ok(all, `every queued event arrives once the client reads (${events} of ${N}, no further writes)`);
  if (!all) {
    // Diagnostic: another write pushes out some of what was stuck.
    await mkCm(s, 'bp', 'nudge');
    await until(() => events >= N + 1, 1000);
    t.comment(`after one more write: ${events} of ${N + 1} events arrived`);
  }
  raw.destroy();
});

// ------------------------------------------------------------------ resume after restart

t.test('a watch resumes across a server restart from the last revision seen', async (t) => {
  const s = await withServer(t, { withoutControllers: NO_ROOT_CA, brand: 'cluster' });
  await mkNs(s, 'rs');
  const R0 = await currentRv(s);
  const w = openWatch(s, `${CM('rs')}?watch=1&resourceVersion=${R0}`);
  await sleep(100);
  await mkCm(s, 'rs', 'r1');
  await mkCm(s, 'rs', 'r2');
  await mkCm(s, 'rs', 'r3');
  const chunk1 = await must(s.get(`${CM('rs')}?limit=1`), 200, 'first chunk before the restart');
  await patchCm(s, 'rs', 'r1', { data: { a: '2' } });
  await delCm(s, 'rs', 'r2');
  t.ok(await w.until((e) => e.length >= 5, 60_000), 'five events before the restart');
  const before = evSigs(w.events);
  const lastSeen = rvOfEv(w.events[4]);
  const midSeen = rvOfEv(w.events[1]);

  await s.restart();
  await w.done;
  t.ok(true, 'the open watch ended with the restart');
  const post: number[] = [];
  post.push(rvOf(await mkCm(s, 'rs', 'r4')));
  post.push(rvOf(await patchCm(s, 'rs', 'r3', { data: { a: '3' } })));
  await delCm(s, 'rs', 'r1');
  t.ok(post[0] > lastSeen, 'revisions keep increasing after the restart');

  const [fromLast, fromMid, fromStart, lastBefore] = await Promise.all([lastSeen, midSeen, R0, lastSeen - 1].map((r) => watchAll(s, `${CM('rs')}?watch=1&resourceVersion=${r}`)));
  t.equal(fromLast.status, 200);
  t.same(fromLast.events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED r4', 'MODIFIED r3', 'DELETED r1'], 'from the last revision seen: exactly the later events');
  t.same(fromLast.events.slice(0, 2).map(rvOfEv), post, 'at the revisions the writes reported');
  const after = evSigs(fromLast.events);

  t.same(evSigs(fromMid.events), [...before.slice(2), ...after], 'from a revision before the restart: storage history, then the rest, none repeated');
  t.same(evSigs(fromStart.events), [...before, ...after], 'from the first revision: everything, once');
  t.same(evSigs(lastBefore.events), [before[4], ...after], 'one revision earlier: the delete, then the rest');

  // A continue token is good for 5 minutes (Part A, Limits); a restart one second later does not change that.
  const cont = await s.get(`${CM('rs')}?limit=1&continue=${encodeURIComponent(chunk1.metadata.continue)}`);
  t.equal(cont.status, 200, `a continue token from before the restart still works within its lifetime (${cont.status} ${cont.json?.message ?? ''})`);
  if (cont.status === 200) {
    t.equal(cont.json.metadata.resourceVersion, chunk1.metadata.resourceVersion, 'at the first chunk\'s revision');
    t.same(cont.json.items.map((i: any) => i.metadata.name), ['r2'], 'the next item as it was');
  }

  // Exact lists from before the restart: the in-memory history starts empty, so 410 (or served from storage).
  const ex = await s.get(`${CM('rs')}?resourceVersionMatch=Exact&resourceVersion=${midSeen}`);
  t.ok(ex.status === 410 || ex.status === 200, `Exact list from before the restart: 410 or the old state (${ex.status})`);
  if (ex.status === 200) t.same(ex.json.items.map((i: any) => i.metadata.name), ['r1', 'r2']);
});
