// The Protobuf codec: every kind of the catalog round-trips JSON → Protobuf → JSON unchanged (every
// field set), a second implementation (protobufjs reflection) reads our bytes the same way, the
// special encodings match the reference's, and malformed input is always a clean error.
import t from 'tap';
import { getBrand } from '../../kernel/contracts/brand.js';
import { ProtobufCodec, decodeProtobuf, type ProtoField, formatDuration, parseDuration, unwrap, wrap } from '../../kernel/api/repr/protobuf.js';
import { builtinTypes } from '../../plugins/types/builtin/index.js';
import { PROTOBUF_CATALOG } from '../../plugins/lib/protobuf-catalog.js';
import { protobufjsRoot, pbType, sampleObject } from '../lib/protobuf.js';
import type { StatusError } from '../../kernel/contracts/status.js';

const codec = new ProtobufCodec([PROTOBUF_CATALOG]);
const brand = getBrand('kubernetes');

t.test('every kind of the reference API round-trips with every field set', async (t) => {
  const kinds = Object.entries(PROTOBUF_CATALOG.kinds);
  t.ok(kinds.length > 250, `${kinds.length} kinds`);
  for (const [, message] of kinds) {
    const obj = sampleObject(PROTOBUF_CATALOG, message);
    const back = codec.decode(message, codec.encode(message, obj));
    if (JSON.stringify(back) !== JSON.stringify(obj)) t.same(back, obj, message);
  }
  t.pass('all kinds');
});

t.test('every type the server serves has a message, and realistic objects round-trip', async (t) => {
  for (const b of ['cluster', 'kubernetes']) {
    for (const type of builtinTypes(getBrand(b))) {
      t.ok(type.protobuf, `${b}: ${type.group}/${type.version} ${type.kind}`);
    }
  }
  const deployment = {
    metadata: { name: 'web', namespace: 'shop', uid: 'u-1', resourceVersion: '12', generation: 2, creationTimestamp: '2024-01-02T03:04:05Z', labels: { app: 'web' }, annotations: { a: '' },
      managedFields: [{ manager: 'kubectl', operation: 'Update', apiVersion: 'apps/v1', time: '2024-01-02T03:04:05Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }] },
    spec: {
      replicas: 0, selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: {
        containers: [{ name: 'nginx', image: 'nginx', ports: [{ containerPort: 80, protocol: 'TCP' }], resources: { limits: { cpu: '500m', memory: '1Gi' } },
          livenessProbe: { httpGet: { path: '/', port: 'http', scheme: 'HTTP' }, periodSeconds: 10 } }],
        volumes: [{ name: 'cfg', configMap: { name: 'settings', defaultMode: 420 } }],
        securityContext: {}, terminationGracePeriodSeconds: 30 } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
      progressDeadlineSeconds: 600,
    },
    status: { conditions: [{ type: 'Available', status: 'True', lastUpdateTime: '2024-01-02T03:04:05Z', lastTransitionTime: '2024-01-02T03:04:05Z', reason: 'R', message: 'm' }] },
  };
  const pb = codec.encode('apps.v1.Deployment', deployment);
  t.same(codec.decode('apps.v1.Deployment', pb), deployment, 'pointer zero (replicas: 0), inline volume source and probe handler, int-or-string, quantities, times, FieldsV1');
  const secret = { metadata: { name: 's' }, data: { p: Buffer.from('hunter2').toString('base64') }, type: 'Opaque' };
  t.same(codec.decode('core.v1.Secret', codec.encode('core.v1.Secret', secret)), secret, 'bytes maps in base64');
  const event = { metadata: { name: 'e' }, eventTime: '2024-01-02T03:04:05.123456Z', reportingController: 'c', regarding: { kind: 'Pod' }, deprecatedSource: {} };
  t.same(codec.decode('events.v1.Event', codec.encode('events.v1.Event', event)), event, 'MicroTime');
});

t.test('a second implementation reads our bytes', async (t) => {
  const root = protobufjsRoot(PROTOBUF_CATALOG);
  const cm = { metadata: { name: 'c', namespace: 'd', creationTimestamp: '2024-01-02T03:04:05Z' }, data: { a: 'b' } };
  const env = wrap('v1', 'ConfigMap', codec.encode('core.v1.ConfigMap', cm));
  const unk = pbType(root, 'Unknown').decode(env.subarray(4)) as unknown as { typeMeta: { apiVersion: string; kind: string }; raw: Uint8Array };
  t.same(unk.typeMeta, { apiVersion: 'v1', kind: 'ConfigMap' });
  const m = pbType(root, 'core.v1.ConfigMap').toObject(pbType(root, 'core.v1.ConfigMap').decode(unk.raw), { longs: Number }) as any;
  t.equal(m.f1.f1, 'c');
  t.equal(m.f1.f8.seconds, Date.parse('2024-01-02T03:04:05Z') / 1000, 'Time is {seconds}');
  t.same(m.f2, { a: 'b' });
  // And protobufjs bytes decode with ours.
  const T = pbType(root, 'rbac.v1.RoleBinding');
  const bytes = T.encode(T.fromObject({ f1: { f1: 'rb' }, f2: [{ f1: 'User', f3: 'bob' }], f3: { f1: 'rbac.authorization.k8s.io', f2: 'ClusterRole', f3: 'view' } })).finish();
  t.same(codec.decode('rbac.v1.RoleBinding', bytes), { metadata: { name: 'rb' }, subjects: [{ kind: 'User', name: 'bob' }], roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' } });
});

t.test('Go JSON semantics on decode', async (t) => {
  // What a Go client writes for a bare object: every non-pointer field, zero or not.
  const b = codec.encode('core.v1.ContainerStatus', { name: 'c', ready: false, restartCount: 0, image: '', imageID: '', containerID: '', started: false });
  t.same(codec.decode('core.v1.ContainerStatus', b), { name: 'c', ready: false, restartCount: 0, image: '', imageID: '', started: false }, 'omitempty zero values dropped, others and pointers kept');
  const root = protobufjsRoot(PROTOBUF_CATALOG);
  const meta = pbType(root, 'meta.v1.ObjectMeta');
  t.same(codec.decode('meta.v1.ObjectMeta', meta.encode(meta.fromObject({ f1: 'x', f8: {} })).finish()), { name: 'x' }, 'a zero Time is unset');
});

t.test('durations, times and int-or-string as the reference writes them', async (t) => {
  for (const [s, ns] of [['1h0m0s', 3600e9], ['1m30s', 90e9], ['250ms', 250e6], ['0s', 0], ['1.5s', 1.5e9], ['-2m3s', -123e9], ['3µs', 3000], ['7ns', 7]] as const) {
    t.equal(formatDuration(ns), s);
    t.equal(parseDuration(s), ns);
  }
  t.equal(parseDuration('1h'), 3600e9);
  t.throws(() => parseDuration('5 minutes'));
  t.equal(codec.decode('intstr.IntOrString', codec.encode('intstr.IntOrString', 5)), 5);
  t.equal(codec.decode('intstr.IntOrString', codec.encode('intstr.IntOrString', '5%')), '5%');
});

t.test('malformed bodies are a 400, never a crash or a partial object', async (t) => {
  const types = builtinTypes(brand);
  const dep = types.find((x) => x.kind === 'Deployment')!;
  const good = wrap('apps/v1', 'Deployment', codec.encode('apps.v1.Deployment', sampleObject(PROTOBUF_CATALOG, 'apps.v1.Deployment')));
  t.ok(decodeProtobuf(good, brand, dep).metadata);
  const headerAndRaw = good.length - 4; // the trailer (empty contentEncoding, contentType) is optional
  for (let cut = 0; cut < headerAndRaw; cut += 1 + Math.floor(cut / 50)) {
    try {
      decodeProtobuf(good.subarray(0, cut), brand, dep);
      t.fail(`a body cut at ${cut} decoded`);
    } catch (e) {
      if ((e as StatusError).code !== 400) t.fail(`cut at ${cut}: ${(e as Error).message}`);
    }
  }
  // Random bytes and bit flips: a 400 or a (different) object, never another exception.
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let i = 0; i < 3000; i++) {
    const b = Buffer.from(good);
    for (let k = 0; k < 1 + rnd() * 4; k++) b[4 + Math.floor(rnd() * (b.length - 4))] = Math.floor(rnd() * 256);
    try { decodeProtobuf(b, brand, dep); } catch (e) {
      if ((e as StatusError).code !== 400) { t.fail(`flip ${i}: ${(e as Error).stack}`); break; }
    }
  }
  // Deep nesting is refused.
  let deep = Buffer.alloc(0);
  const not = (PROTOBUF_CATALOG.messages['apiextensions.v1.JSONSchemaProps'] as ProtoField[]).find(([j]) => j === 'not')![1];
  for (let i = 0; i < 200; i++) deep = Buffer.concat([varint((not << 3) | 2), varint(deep.length), deep]);
  t.throws(() => codec.decode('apiextensions.v1.JSONSchemaProps', deep), /nests too deeply/);
  t.throws(() => unwrap(Buffer.from('k8s\0\x12\x05ab')), /out of range|past the end/);
  t.throws(() => unwrap(Buffer.from('k8s\0')), /empty body/);
  t.end();
});

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 127) { out.push((n & 127) | 128); n >>>= 7; }
  out.push(n);
  return Buffer.from(out);
}
