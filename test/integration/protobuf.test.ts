// Protobuf on the wire: answers (get, list, watch frames, Status errors, writes) decoded with
// protobufjs against the catalog; content negotiation with fallbacks and 406; Protobuf request
// bodies written concurrently; the spec's media type in the default brand.
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';
import { ProtobufCodec, wrap, type ProtoCatalog } from '../../kernel/api/repr/protobuf.js';
import { PROTOBUF_CATALOG } from '../../plugins/lib/protobuf-catalog.js';
import { pbType, protobufjsRoot, protobufWatch, rawRequest } from '../lib/protobuf.js';

const PB = 'application/vnd.kubernetes.protobuf';
const root = protobufjsRoot(PROTOBUF_CATALOG as ProtoCatalog);
const codec = new ProtobufCodec([PROTOBUF_CATALOG]);
const MAGIC = Buffer.from('k8s\0', 'latin1');

/** The envelope read by protobufjs: magic, then Unknown{typeMeta, raw}. */
function envelope(b: Buffer): { typeMeta: { apiVersion: string; kind: string }; raw: Uint8Array } {
  if (!b.subarray(0, 4).equals(MAGIC)) throw new Error(`no magic: ${b.subarray(0, 16).toString('hex')}`);
  return pbType(root, 'Unknown').decode(b.subarray(4)) as never;
}
const read = (name: string, raw: Uint8Array) => pbType(root, name).toObject(pbType(root, name).decode(raw), { longs: Number, defaults: false }) as any;
const strip = (o: any) => { const { apiVersion: _a, kind: _k, ...rest } = o; return rest; };

async function json(s: TestServer, p: string) {
  const r = await s.get(p);
  return r.json;
}

t.test('Protobuf answers and negotiation (kubernetes brand)', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  for (let i = 0; i < 3; i++) {
    const r = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm${i}`, labels: { n: String(i) } }, data: { k: `v${i}` } } });
    t.equal(r.status, 201);
  }

  await t.test('get', async (t) => {
    const r = await rawRequest(s, 'GET', '/api/v1/namespaces/default/configmaps/cm1', { accept: PB });
    t.equal(r.status, 200);
    t.equal(r.headers['content-type'], PB);
    const env = envelope(r.body);
    t.same(env.typeMeta, { apiVersion: 'v1', kind: 'ConfigMap' });
    const m = read('core.v1.ConfigMap', env.raw);
    t.equal(m.f1.f1, 'cm1', 'metadata.name (ObjectMeta field 1)');
    t.same(m.f2, { k: 'v1' }, 'data (field 2)');
    t.same(codec.decode('core.v1.ConfigMap', env.raw), strip(await json(s, '/api/v1/namespaces/default/configmaps/cm1')), 'the same object as the JSON answer');
    const again = await rawRequest(s, 'GET', '/api/v1/namespaces/default/configmaps/cm1', { accept: PB });
    t.ok(again.body.equals(r.body), 'the same bytes again (cached)');
  });

  await t.test('list', async (t) => {
    const r = await rawRequest(s, 'GET', '/api/v1/namespaces/default/configmaps', { accept: `${PB}, application/json` });
    t.equal(r.headers['content-type'], PB);
    const env = envelope(r.body);
    t.same(env.typeMeta, { apiVersion: 'v1', kind: 'ConfigMapList' });
    const l = read('core.v1.ConfigMapList', env.raw);
    const j = await json(s, '/api/v1/namespaces/default/configmaps');
    t.equal(l.f1.f2, j.metadata.resourceVersion, 'ListMeta.resourceVersion');
    t.same(l.f2.map((i: any) => i.f1.f1), j.items.map((i: any) => i.metadata.name));
    const mine = codec.decode('core.v1.ConfigMapList', env.raw) as any;
    t.same(mine.items, j.items.map(strip), 'items equal the JSON list');
    const paged = envelope((await rawRequest(s, 'GET', '/api/v1/namespaces/default/configmaps?limit=2', { accept: PB })).body);
    const pl = read('core.v1.ConfigMapList', paged.raw);
    t.equal(pl.f2.length, 2);
    t.ok(pl.f1.f3, 'continue token');
    t.equal(pl.f1.f4, j.items.length - 2, 'remainingItemCount');
  });

  await t.test('negotiation', async (t) => {
    const any = await rawRequest(s, 'GET', '/api/v1/namespaces/default/configmaps/cm0', { accept: '*/*' });
    t.equal(any.headers['content-type'], 'application/json');
    const first = await rawRequest(s, 'GET', '/api/v1/namespaces/default/configmaps/cm0', { accept: `application/json, ${PB}` });
    t.equal(first.headers['content-type'], 'application/json', 'the client\'s order wins');
    const table = await rawRequest(s, 'GET', '/api/v1/namespaces/default/configmaps', { accept: `${PB};as=Table;v=v1;g=meta.k8s.io, application/json;as=Table;v=v1;g=meta.k8s.io, ${PB}` });
    t.equal(table.headers['content-type'], 'application/json', 'Table stays JSON');
    t.equal(JSON.parse(table.body.toString()).kind, 'Table');
    const no = await rawRequest(s, 'GET', '/api/v1/namespaces/default/configmaps', { accept: 'text/html' });
    t.equal(no.status, 406);
    t.same(JSON.parse(no.body.toString()), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `only the following media types are accepted: application/json, application/yaml, ${PB}`, reason: 'NotAcceptable', code: 406 });
    const tableOnly = await rawRequest(s, 'GET', '/api/v1/namespaces/default/configmaps', { accept: `${PB};as=Table;v=v1;g=meta.k8s.io` });
    t.equal(tableOnly.status, 406, 'a Table in Protobuf is not served');
  });

  await t.test('Status errors in Protobuf', async (t) => {
    const r = await rawRequest(s, 'GET', '/api/v1/namespaces/default/configmaps/missing', { accept: `${PB}, application/json` });
    t.equal(r.status, 404);
    t.equal(r.headers['content-type'], PB);
    const env = envelope(r.body);
    t.same(env.typeMeta, { apiVersion: 'v1', kind: 'Status' });
    const st = codec.decode('meta.v1.Status', env.raw) as any;
    t.match(st, { status: 'Failure', reason: 'NotFound', code: 404, details: { name: 'missing', kind: 'configmaps' } });
    t.equal(read('meta.v1.Status', env.raw).f6, 404, 'code is field 6');
  });

  await t.test('watch frames', async (t) => {
    const rv = (await json(s, '/api/v1/namespaces/default/configmaps')).metadata.resourceVersion;
    const frames: Buffer[][] = [[], []];
    const ws = frames.map((f) => protobufWatch(s, `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}`, PB, (b) => f.push(Buffer.from(b))));
    // uWebSockets sends a binary stream's head with its first frame (see kernel/http/uws.ts).
    await new Promise((r) => setTimeout(r, 300));
    await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched' }, data: { a: 'b' } } });
    await s.request('DELETE', '/api/v1/namespaces/default/configmaps/watched');
    const end = Date.now() + 5000;
    while (Date.now() < end && (frames[0].length < 2 || frames[1].length < 2)) await new Promise((r) => setTimeout(r, 20));
    t.equal((await ws[0].headers)['content-type'], `${PB};stream=watch`);
    ws.forEach((w) => w.close());
    t.equal(frames[0].length, 2);
    t.ok(frames[0][0].equals(frames[1][0]) && frames[0][1].equals(frames[1][1]), 'every watcher gets the same bytes');
    const ev = read('meta.v1.WatchEvent', frames[0][0]);
    t.equal(ev.f1, 'ADDED');
    const obj = envelope(Buffer.from(ev.f2.raw)); // RawExtension.raw (field 1): the enveloped object
    t.same(obj.typeMeta, { apiVersion: 'v1', kind: 'ConfigMap' });
    t.equal(read('core.v1.ConfigMap', obj.raw).f1.f1, 'watched');
    t.equal(read('meta.v1.WatchEvent', frames[0][1]).f1, 'DELETED');
  });

  await t.test('writes in Protobuf both ways, concurrently', async (t) => {
    const body = (name: string, v: string) => wrap('v1', 'ConfigMap', codec.encode('core.v1.ConfigMap', { metadata: { name }, data: { v } }));
    const headers = { 'content-type': PB, accept: PB };
    const created = await Promise.all(Array.from({ length: 12 }, (_, i) => rawRequest(s, 'POST', '/api/v1/namespaces/default/configmaps', headers, body(`p${i}`, 'x'))));
    t.same(created.map((r) => r.status), Array(12).fill(201), 'concurrent creates of different objects');
    t.equal(read('core.v1.ConfigMap', envelope(created[0].body).raw).f1.f1, 'p0');
    const updated = await Promise.all(Array.from({ length: 12 }, (_, i) => rawRequest(s, 'PUT', '/api/v1/namespaces/default/configmaps/p0', headers, body('p0', String(i)))));
    t.same(updated.map((r) => r.status), Array(12).fill(200), 'concurrent updates of one object (no resourceVersion: each applies)');
    const rvs = updated.map((r) => read('core.v1.ConfigMap', envelope(r.body).raw).f1.f6);
    t.equal(new Set(rvs).size, 12, 'twelve distinct revisions');
    const twice = await Promise.all([0, 1].map(() => rawRequest(s, 'POST', '/api/v1/namespaces/default/configmaps', headers, body('same', 'x'))));
    t.same(twice.map((r) => r.status).sort(), [201, 409], 'concurrent creates of one name: one wins');
    const conflict = twice.find((r) => r.status === 409)!;
    t.equal((codec.decode('meta.v1.Status', envelope(conflict.body).raw) as any).reason, 'AlreadyExists');

    // DeleteOptions in Protobuf: a failed precondition, then a delete answered with a Status.
    const del = (uid: string) => wrap('v1', 'DeleteOptions', codec.encode('meta.v1.DeleteOptions', { preconditions: { uid } }));
    const bad = await rawRequest(s, 'DELETE', '/api/v1/namespaces/default/configmaps/p1', headers, del('nope'));
    t.equal(bad.status, 409, bad.body.toString('latin1'));
    const uid = (await json(s, '/api/v1/namespaces/default/configmaps/p1')).metadata.uid;
    const ok = await rawRequest(s, 'DELETE', '/api/v1/namespaces/default/configmaps/p1', headers, del(uid));
    t.equal(ok.status, 200);
    t.match(codec.decode('meta.v1.Status', envelope(ok.body).raw), { status: 'Success', details: { name: 'p1' } });

    const truncated = await rawRequest(s, 'POST', '/api/v1/namespaces/default/configmaps', headers, body('cut', 'x').subarray(0, 20));
    t.equal(truncated.status, 400, 'a truncated body');
    t.equal((await s.get('/api/v1/namespaces/default/configmaps/cut')).status, 404, 'nothing written');
  });

  await t.test('sub-resources and reviews', async (t) => {
    const dep = { metadata: { name: 'web' }, spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } };
    const c = await rawRequest(s, 'POST', '/apis/apps/v1/namespaces/default/deployments', { 'content-type': PB, accept: PB }, wrap('apps/v1', 'Deployment', codec.encode('apps.v1.Deployment', dep)));
    t.equal(c.status, 201);
    const scale = await rawRequest(s, 'GET', '/apis/apps/v1/namespaces/default/deployments/web/scale', { accept: PB });
    const env = envelope(scale.body);
    t.same(env.typeMeta, { apiVersion: 'autoscaling/v1', kind: 'Scale' });
    t.equal((codec.decode('autoscaling.v1.Scale', env.raw) as any).spec.replicas, 1);
    const put = await rawRequest(s, 'PUT', '/apis/apps/v1/namespaces/default/deployments/web/scale', { 'content-type': PB, accept: PB },
      wrap('autoscaling/v1', 'Scale', codec.encode('autoscaling.v1.Scale', { metadata: { name: 'web', namespace: 'default' }, spec: { replicas: 4 } })));
    t.equal(put.status, 200);
    t.equal((codec.decode('autoscaling.v1.Scale', envelope(put.body).raw) as any).spec.replicas, 4);
    const ssar = await rawRequest(s, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { 'content-type': PB, accept: PB },
      wrap('authorization.k8s.io/v1', 'SelfSubjectAccessReview', codec.encode('authorization.v1.SelfSubjectAccessReview', { spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } })));
    t.equal(ssar.status, 201);
    t.equal((codec.decode('authorization.v1.SelfSubjectAccessReview', envelope(ssar.body).raw) as any).status.allowed, true);
  });
});

t.test('the default brand uses the spec\'s media type', async (t) => {
  const s = await withServer(t, { brand: 'cluster' });
  const type = 'application/vnd.cluster.protobuf';
  const r = await rawRequest(s, 'GET', '/api/v1/namespaces/default', { accept: type });
  t.equal(r.headers['content-type'], type);
  t.same(envelope(r.body).typeMeta, { apiVersion: 'v1', kind: 'Namespace' });
  const k = await rawRequest(s, 'GET', '/api/v1/namespaces/default', { accept: PB });
  t.equal(k.status, 406, 'the other brand\'s type is not ours');
  const role = wrap('rbac.authorization.cluster.io/v1', 'Role', codec.encode('rbac.v1.Role', { metadata: { name: 'r' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] }));
  const c = await rawRequest(s, 'POST', '/apis/rbac.authorization.cluster.io/v1/namespaces/default/roles', { 'content-type': type }, role);
  t.equal(c.status, 201, c.body.toString());
  t.same(JSON.parse(c.body.toString()).rules, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]);
});
