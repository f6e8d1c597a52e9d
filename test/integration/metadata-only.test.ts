// Metadata-only clients (client-go's metadata informers: the garbage collector, quota, the namespace
// controller) ask for PartialObjectMetadata(List), Protobuf first then JSON. Generated from
// discovery, so that no type is left out: every listable and watchable resource, custom resources
// included, answers lists and watch events with metadata only, in the representation asked for.
import t from 'tap';
import https from 'node:https';
import { withServer, type TestServer } from '../lib/server.js';
import { establish, widgetCRD } from '../lib/crd.js';
import { ProtobufCodec, unwrap } from '../../kernel/api/repr/protobuf.js';
import { rawRequest } from '../lib/protobuf.js';
import protobuf from 'protobufjs';

const PB = 'application/vnd.kubernetes.protobuf';
const meta = (as: string, pb: boolean) => `${pb ? `${PB};as=${as};g=meta.k8s.io;v=v1,` : ''}application/json;as=${as};g=meta.k8s.io;v=v1,application/json`;
const codec = new ProtobufCodec([]);

/** The first complete event of a watch in either representation: [type, kind, apiVersion, decoded object]. */
function firstEvent(s: TestServer, path: string, accept: string): Promise<{ contentType: string; type: string; kind: string; apiVersion: string; object: any }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: s.port, path, headers: { authorization: `Bearer ${s.token}`, accept }, ca: s.ca }, (res) => {
      let buf = Buffer.alloc(0);
      const contentType = String(res.headers['content-type']);
      res.on('data', (c: Buffer) => {
        buf = Buffer.concat([buf, c]);
        if (contentType.startsWith(PB)) {
          if (buf.length < 4 || buf.length < 4 + buf.readUInt32BE(0)) return;
          // WatchEvent: 1 type (string), 2 object (RawExtension: 1 raw bytes, the enveloped object).
          const r = protobuf.Reader.create(buf.subarray(4, 4 + buf.readUInt32BE(0)));
          r.uint32();
          const type = r.string();
          r.uint32();
          const inner = protobuf.Reader.create(r.bytes());
          inner.uint32();
          const env = unwrap(Buffer.from(inner.bytes()));
          resolve({ contentType, type, kind: env.kind, apiVersion: env.apiVersion, object: codec.decode('meta.v1.PartialObjectMetadata', env.raw) });
        } else {
          const line = buf.toString('utf8').split('\n').find((l) => l.trim() && l.endsWith('}'));
          if (!line) return;
          const ev = JSON.parse(line);
          resolve({ contentType, type: ev.type, kind: ev.object.kind, apiVersion: ev.object.apiVersion, object: ev.object });
        }
        req.destroy();
      });
    });
    req.on('error', (e) => { if (!String(e).includes('socket hang up')) reject(e); });
    req.setTimeout(30_000, () => { req.destroy(); reject(new Error(`no event on ${path}`)); });
    req.end();
  });
}

t.test('every listable and watchable resource answers metadata only, JSON and Protobuf', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  await establish(s, { ...widgetCRD(), apiVersion: 'apiextensions.k8s.io/v1' });
  const resources: { path: string; name: string; namespaced: boolean }[] = [];
  const gvs = ['/api/v1', ...(await s.get('/apis')).json.groups.flatMap((g: any) => g.versions.map((v: any) => `/apis/${v.groupVersion}`))];
  for (const base of gvs) {
    for (const r of (await s.get(base)).json.resources) if (!r.name.includes('/') && r.verbs.includes('list') && r.verbs.includes('watch')) resources.push({ path: base, name: r.name, namespaced: r.namespaced });
  }
  t.ok(resources.some((r) => r.name === 'widgets'), 'the custom resource is among them');
  t.ok(resources.length > 40, `${resources.length} resources`);
  for (const r of resources) {
    const collection = `${r.path}/${r.name}`;
    for (const pb of [true, false]) {
      const what = `${collection} (${pb ? 'Protobuf' : 'JSON'})`;
      const list = await rawRequest(s, 'GET', `${collection}?limit=2`, { accept: meta('PartialObjectMetadataList', pb) });
      t.equal(list.status, 200, `${what}: list`);
      if (pb) {
        t.equal(list.headers['content-type'], PB, `${what}: list in Protobuf`);
        const env = unwrap(list.body);
        t.same([env.kind, env.apiVersion], ['PartialObjectMetadataList', 'meta.k8s.io/v1'], `${what}: a PartialObjectMetadataList`);
      } else {
        const body = JSON.parse(list.body.toString('utf8'));
        t.same([body.kind, body.apiVersion], ['PartialObjectMetadataList', 'meta.k8s.io/v1'], `${what}: a PartialObjectMetadataList`);
        t.ok(body.items.every((i: any) => i.kind === 'PartialObjectMetadata' && Object.keys(i).sort().join() === 'apiVersion,kind,metadata'), `${what}: items are metadata only`);
      }
      // The initial-events-end bookmark is there for every type, objects or not.
      const ev = await firstEvent(s, `${collection}?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`, meta('PartialObjectMetadata', pb));
      t.equal(ev.contentType, pb ? `${PB};stream=watch` : 'application/json', `${what}: watch content type`);
      t.same([ev.kind, ev.apiVersion], ['PartialObjectMetadata', 'meta.k8s.io/v1'], `${what}: ${ev.type} event carries metadata only`);
      if (!pb) t.same(Object.keys(ev.object).sort(), ['apiVersion', 'kind', 'metadata'], `${what}: nothing but metadata`);
    }
  }
});
