// Writes without a precondition never fail because another writer got there first (the reference's
// GuaranteedUpdate): many clients patching, applying and updating one object at once all succeed,
// every change lands, and a write that names a resourceVersion still gets its 409 when it is stale.
import t from 'tap';
import { withServer, type Reply, type TestServer } from '../lib/server.js';

const CM = '/api/v1/namespaces/default/configmaps';
const DEP = '/apis/apps/v1/namespaces/default/deployments';
const WRITERS = 8;
const EACH = 100;

function patch(s: TestServer, p: string, type: string, body: unknown, query = ''): Promise<Reply> {
  return s.request('PATCH', p + query, { raw: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': type } });
}

/** Runs `writers` loops of `each` writes at once; returns the status codes seen, by code. */
async function hammer(writers: number, each: number, write: (w: number, i: number) => Promise<Reply>): Promise<Record<number, number>> {
  const codes: Record<number, number> = {};
  const failures: string[] = [];
  await Promise.all(Array.from({ length: writers }, async (_, w) => {
    for (let i = 0; i < each; i++) {
      const r = await write(w, i);
      codes[r.status] = (codes[r.status] ?? 0) + 1;
      if (r.status >= 300 && failures.length < 3) failures.push(r.text);
    }
  }));
  if (failures.length) console.error(failures.join('\n'));
  return codes;
}

t.test('concurrent unconditional writes to one object and to many', async (t) => {
  const s = await withServer(t);
  const create = async (p: string, body: unknown) => t.equal((await s.request('POST', p, { body })).status, 201);

  t.test(`${WRITERS} writers x ${EACH} merge patches on one object: all 200, every one a change`, async (t) => {
    await create(CM, { metadata: { name: 'hot' }, data: {} });
    const rv = (await s.get(`${CM}/hot`)).json.metadata.resourceVersion;
    // Each writer counts up its own key: every patch changes the object, so every one that lands is
    // one MODIFIED event (and the object stays small, as a real hot object does).
    let modified = 0;
    const w = s.stream(`${CM}?watch=true&fieldSelector=metadata.name%3Dhot&resourceVersion=${rv}`, (ev) => { if (ev.type === 'MODIFIED') modified++; });
    const codes = await hammer(WRITERS, EACH, (w, i) => patch(s, `${CM}/hot`, 'application/merge-patch+json', { data: { [`w${w}`]: String(i) } }));
    t.same(codes, { 200: WRITERS * EACH });
    for (let i = 0; i < 100 && modified < WRITERS * EACH; i++) await new Promise((r) => setTimeout(r, 100));
    w.close();
    t.equal(modified, WRITERS * EACH, 'no write was lost: one event per patch');
    const cm = (await s.get(`${CM}/hot`)).json;
    t.same(cm.data, Object.fromEntries(Array.from({ length: WRITERS }, (_, w) => [`w${w}`, String(EACH - 1)])), 'every writer\'s last value');
  });

  t.test('JSON patches (add, then a counter read-modify-write through test+replace would conflict by design)', async (t) => {
    // (an empty data map is not kept, as the reference's omitempty drops it: the patches add to a present one)
    await create(CM, { metadata: { name: 'jp' }, data: { first: 'x' } });
    const codes = await hammer(WRITERS, 25, (w, i) => patch(s, `${CM}/jp`, 'application/json-patch+json', [{ op: 'add', path: `/data/w${w}-${i}`, value: 'x' }]));
    t.same(codes, { 200: WRITERS * 25 });
    t.equal(Object.keys((await s.get(`${CM}/jp`)).json.data).length, WRITERS * 25 + 1);
  });

  t.test('strategic merge patches and server-side apply by several managers', async (t) => {
    await create(CM, { metadata: { name: 'smp' }, data: {} });
    const smp = await hammer(WRITERS, 25, (w, i) => patch(s, `${CM}/smp`, 'application/strategic-merge-patch+json', { data: { [`w${w}-${i}`]: 'x' } }));
    t.same(smp, { 200: WRITERS * 25 });
    // Each manager applies its own growing set of keys: no manager conflicts with another.
    const applied = await hammer(WRITERS, 25, (w, i) => {
      const data: Record<string, string> = {};
      for (let k = 0; k <= i; k++) data[`a${w}-${k}`] = 'x';
      return patch(s, `${CM}/smp`, 'application/apply-patch+yaml', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'smp' }, data }, `?fieldManager=m${w}`);
    });
    t.same(applied, { 200: WRITERS * 25 });
    const cm = (await s.get(`${CM}/smp`)).json;
    t.equal(Object.keys(cm.data).length, WRITERS * 25 * 2);
    t.equal(cm.metadata.managedFields.filter((m: any) => m.operation === 'Apply').length, WRITERS);
  });

  t.test('PUT without resourceVersion, status and scale sub-resources, labels while deleting', async (t) => {
    await create(DEP, {
      metadata: { name: 'web' },
      spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    });
    const base = (await s.get(`${DEP}/web`)).json;
    delete base.metadata.resourceVersion;
    const codes = await hammer(WRITERS, 20, (w, i) => {
      switch (w % 4) {
        case 0: return patch(s, `${DEP}/web/scale`, 'application/merge-patch+json', { spec: { replicas: i } });
        case 1: return patch(s, `${DEP}/web/status`, 'application/merge-patch+json', { status: { observedGeneration: i } });
        case 2: return s.request('PUT', `${DEP}/web`, { body: { ...base, metadata: { ...base.metadata, annotations: { put: String(i) } } } });
        default: return patch(s, `${DEP}/web`, 'application/strategic-merge-patch+json', { metadata: { labels: { [`w${w}`]: String(i) } } });
      }
    });
    t.same(codes, { 200: WRITERS * 20 });
    // Finalizer removal and label patches racing a graceful delete.
    await create(CM, { metadata: { name: 'fin', finalizers: ['example.com/hold'] } });
    t.equal((await s.request('DELETE', `${CM}/fin`)).status, 200);
    const fin = await hammer(4, 10, (w, i) => patch(s, `${CM}/fin`, 'application/merge-patch+json', { metadata: { labels: { [`w${w}`]: String(i) } } }));
    t.same(fin, { 200: 40 });
    t.equal((await patch(s, `${CM}/fin`, 'application/merge-patch+json', { metadata: { finalizers: null } })).status, 200);
    t.equal((await s.get(`${CM}/fin`)).status, 404, 'the last finalizer removed: the object is gone');
  });

  t.test('concurrent writers on different objects', async (t) => {
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => create(CM, { metadata: { name: `own-${w}` }, data: {} })));
    const codes = await hammer(WRITERS, 50, (w, i) => patch(s, `${CM}/own-${w}`, 'application/merge-patch+json', { data: { [`k${i}`]: 'x' } }));
    t.same(codes, { 200: WRITERS * 50 });
    for (let w = 0; w < WRITERS; w++) t.equal(Object.keys((await s.get(`${CM}/own-${w}`)).json.data).length, 50);
  });

  t.test('a stale resourceVersion is still a 409', async (t) => {
    await create(CM, { metadata: { name: 'pre' }, data: {} });
    const rv = (await s.get(`${CM}/pre`)).json.metadata.resourceVersion;
    t.equal((await patch(s, `${CM}/pre`, 'application/merge-patch+json', { data: { a: '1' } })).status, 200);
    const stale = await patch(s, `${CM}/pre`, 'application/merge-patch+json', { metadata: { resourceVersion: rv }, data: { b: '1' } });
    t.equal(stale.status, 409);
    t.equal(stale.json.reason, 'Conflict');
    const cur = (await s.get(`${CM}/pre`)).json;
    const put = await s.request('PUT', `${CM}/pre`, { body: { ...cur, metadata: { ...cur.metadata, resourceVersion: rv } } });
    t.equal(put.status, 409);
    const del = await s.request('DELETE', `${CM}/pre`, { body: { preconditions: { resourceVersion: rv } } });
    t.equal(del.status, 409);
    // Racing conditional writers: exactly one of those naming the same version wins.
    const fresh = (await s.get(`${CM}/pre`)).json.metadata.resourceVersion;
    const racing = await Promise.all(Array.from({ length: WRITERS }, (_, w) => patch(s, `${CM}/pre`, 'application/merge-patch+json', { metadata: { resourceVersion: fresh }, data: { [`r${w}`]: 'x' } })));
    t.same(racing.map((r) => r.status).sort(), [200, ...Array(WRITERS - 1).fill(409)]);
  });
});
