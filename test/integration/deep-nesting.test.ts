// Nesting depth on every decode path (issue 20): Protobuf bodies carry JSON (managedFields[].fieldsV1,
// RawExtension) that JSON.parse takes at any depth; such a body gets the JSON path's 400, and an
// object stored nested that deep before the limit was enforced there neither hangs the writes and
// deletes that follow nor breaks YAML answers.
import t from 'tap';
import path from 'node:path';
import YAML from 'yaml';
import { withServer } from '../lib/server.js';
import { rawRequest } from '../lib/protobuf.js';
import { ProtobufCodec, wrap, type ProtoCatalog } from '../../kernel/api/repr/protobuf.js';
import { PROTOBUF_CATALOG } from '../../plugins/lib/protobuf-catalog.js';
import { StorageLog } from '../../kernel/store/log.js';

const PB = 'application/vnd.kubernetes.protobuf';
const CM = '/api/v1/namespaces/default/configmaps';
const codec = new ProtobufCodec([PROTOBUF_CATALOG as ProtoCatalog]);
const TOO_DEEP = "the body of the request could not be decoded as JSON: invalid character '{' exceeded max depth";

/** {"f:a":{"f:a":...{}}}, n levels. */
function nested(n: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < n; i++) v = { 'f:a': v };
  return v;
}
const managed = (fieldsV1: unknown) => [{ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1 }];
const configMapPB = (obj: Record<string, unknown>) => wrap('v1', 'ConfigMap', codec.encode('core.v1.ConfigMap', obj));

t.test('Protobuf bodies: embedded JSON nested past the limit is the JSON path\'s 400, on create and update', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const post = (p: string, body: Buffer, method = 'POST') => rawRequest(s, method, p, { 'content-type': PB, accept: 'application/json' }, body);

  const deep = await post(CM, configMapPB({ metadata: { name: 'deep', managedFields: managed(nested(2000)) }, data: { a: 'b' } }));
  t.equal(deep.status, 400, 'managedFields[].fieldsV1 2,000 deep');
  const st = JSON.parse(deep.body.toString());
  t.equal(st.reason, 'BadRequest');
  t.equal(st.message, TOO_DEEP, 'the JSON body\'s message');
  t.equal((await s.get(`${CM}/deep`)).status, 404, 'nothing was stored');

  // A RawExtension (ControllerRevision.data) takes any JSON: bounded alike.
  const crPath = '/apis/apps/v1/namespaces/default/controllerrevisions';
  const cr = (name: string, data: unknown) => wrap('apps/v1', 'ControllerRevision', codec.encode('apps.v1.ControllerRevision', { metadata: { name }, data, revision: 1 }));
  const raw = await post(crPath, cr('deep', nested(2000)));
  t.equal(raw.status, 400, 'RawExtension 2,000 deep');
  t.equal(JSON.parse(raw.body.toString()).message, TOO_DEEP);
  t.equal((await post(crPath, cr('fine', nested(50)))).status, 201, 'a RawExtension within the limit is stored');

  // Within the limit a Protobuf create works; an update that deepens it is refused the same way.
  t.equal((await post(CM, configMapPB({ metadata: { name: 'ok', managedFields: managed(nested(20)) }, data: { a: 'b' } }))).status, 201);
  const put = await post(`${CM}/ok`, configMapPB({ metadata: { name: 'ok', managedFields: managed(nested(2000)) }, data: { a: 'c' } }), 'PUT');
  t.equal(put.status, 400, 'update 2,000 deep');
  t.equal(JSON.parse(put.body.toString()).message, TOO_DEEP);
  t.equal((await s.get(`${CM}/ok`)).json.data.a, 'b', 'the update wrote nothing');
  t.notOk(s.logs.some((l) => l.includes('Maximum call stack')), 'no stack overflow logged');
});

t.test('an object stored 2,000 deep before the limit: writes, deletes and YAML answers still work', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  t.equal((await s.request('POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'deep' }, data: { a: 'b' } } })).status, 201);
  // pad makes the patch's merge input large enough for the worker pool
  const pad = 'x'.repeat(40 * 1024);
  t.equal((await s.request('POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'deep-big' }, data: { a: 'b', pad } } })).status, 201);
  await s.stop();
  // What a Protobuf create stored before the limit held there, written with the server's own store code.
  const log = new StorageLog(path.join(s.dataDir, 'store'));
  await log.open();
  for (const name of ['deep', 'deep-big']) {
    const cur = (await log.range('')).find((kv) => kv.key.endsWith(`/configmaps/default/${name}`))!;
    const obj = JSON.parse(Buffer.from(cur.value).toString());
    obj.metadata.managedFields = managed(nested(2000));
    const w = await log.write({ type: 'update', key: cur.key, expectRevision: cur.modRevision, value: (rev) => { obj.metadata.resourceVersion = String(rev); return Buffer.from(JSON.stringify(obj)); } });
    t.ok(w.ok, `${name} stored 2,000 deep`);
  }
  await log.close();
  await s.restart();

  const yaml = await s.request('GET', '/api/v1/configmaps', { headers: { accept: 'application/yaml' } });
  t.equal(yaml.status, 200, 'a cluster-wide YAML list');
  t.match(yaml.headers['content-type'], /^application\/yaml/);
  t.match(yaml.text, /name: deep\n/, 'with the deep object');
  t.match(yaml.text, /\{"f:a":\{"f:a":/, 'its deepest levels written in flow style (JSON, which YAML reads)');
  const one = await s.request('GET', `${CM}/deep`, { headers: { accept: 'application/yaml' } });
  t.equal(one.status, 200, 'a YAML get');

  for (const name of ['deep', 'deep-big']) {
    const patched = await s.request('PATCH', `${CM}/${name}`, { raw: JSON.stringify({ data: { c: 'd' } }), headers: { 'content-type': 'application/merge-patch+json' } });
    t.equal(patched.status, 200, `${name}: a merge patch is answered`);
    t.equal(patched.json.data.c, 'd');
    // managed fields nested past the limit cannot be decoded: dropped, as the reference drops those it cannot decode
    t.notOk((patched.json.metadata.managedFields ?? []).some((m: { manager: string }) => m.manager === 'm'), `${name}: the undecodable entry is gone`);
    const del = await s.request('DELETE', `${CM}/${name}`);
    t.equal(del.status, 200, `${name}: deleted`);
    t.equal((await s.get(`${CM}/${name}`)).status, 404);
  }
  t.notOk(s.logs.some((l) => l.includes('Maximum call stack')), 'no stack overflow logged');
});
