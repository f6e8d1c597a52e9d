// A large body's decode and field checks run on a worker thread (workers/body/checkbody.ts), a small
// one's on the event loop (kernel/api/registry/body.ts): the client must not be able to tell which.
// Each case is sent twice, as written and padded past the worker threshold with a long annotation
// (which changes no finding: the small one carries a short one, so lines are numbered alike), in JSON and YAML, under every fieldValidation mode; the answers must
// agree in status, message and warnings, and what is stored must be the same but for the padding.
import t from 'tap';
import { withServer } from '../lib/server.js';
import { rawRequest } from '../lib/protobuf.js';
import { ProtobufCodec, wrap, type ProtoCatalog } from '../../kernel/api/repr/protobuf.js';
import { PROTOBUF_CATALOG } from '../../plugins/lib/protobuf-catalog.js';

const CM = '/api/v1/namespaces/default/configmaps';
const PAD = 'p'.repeat(40 * 1024);

type Case = { name: string; json: (name: string, pad: string) => string; yaml: (name: string, pad: string) => string };
const meta = (name: string, pad: string) => `{"name":"${name}"${pad ? `,"annotations":{"pad":"${pad}"}` : ''}}`;
const yamlMeta = (name: string, pad: string) => `metadata:\n  name: ${name}\n${pad ? `  annotations:\n    pad: ${pad}\n` : ''}`;

const CASES: Case[] = [
  {
    name: 'unknown fields and a duplicate key',
    json: (n, p) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":${meta(n, p)},"spec":{"x":1},"data":{"a":"1","a":"2","b":null},"extra":true}`,
    yaml: (n, p) => `apiVersion: v1\nkind: ConfigMap\n${yamlMeta(n, p)}spec:\n  x: 1\ndata:\n  a: "1"\n  a: "2"\n  b: null\nextra: true\n`,
  },
  {
    name: 'a value of the wrong type',
    json: (n, p) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":${meta(n, p)},"data":{"a":12345678901}}`,
    yaml: (n, p) => `apiVersion: v1\nkind: ConfigMap\n${yamlMeta(n, p)}data:\n  a: 12345678901\n`,
  },
  {
    name: 'a clean body',
    json: (n, p) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":${meta(n, p)},"data":{"a":"1"}}`,
    yaml: (n, p) => `apiVersion: v1\nkind: ConfigMap\n${yamlMeta(n, p)}data:\n  a: "1"\n`,
  },
  {
    name: 'a syntax error',
    json: (n, p) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":${meta(n, p)},"data":{"a":"1"}`,
    yaml: (n, p) => `apiVersion: v1\nkind: ConfigMap\n${yamlMeta(n, p)}data:\n  a: [1\n`,
  },
];

const types = { json: 'application/json', yaml: 'application/yaml', 'json as yaml': 'application/yaml' } as const;
/** What a client sees, with the padding and the object's identity set aside. */
const seen = (r: { status: number; headers: Record<string, unknown>; json?: any }) => {
  const body = r.json ?? {};
  if (body.kind === 'ConfigMap') {
    delete body.metadata.annotations?.pad;
    if (body.metadata.annotations && !Object.keys(body.metadata.annotations).length) delete body.metadata.annotations;
    for (const k of ['name', 'uid', 'resourceVersion', 'creationTimestamp', 'managedFields']) delete body.metadata[k];
  }
  // A syntax error says where it is, which the padding moves.
  if (typeof body.message === 'string') body.message = body.message.replace(/position \d+/, 'position N').replace(/\d+ \+ \d+ > \d+/, 'N + N > N').replace(/column \d+/, 'column N');
  return { status: r.status, warning: r.headers.warning, body };
};

t.test('a body checked on a worker is answered as one checked on the event loop', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  let n = 0;
  for (const c of CASES) {
    // JSON sent as YAML (YAML's superset): decoded as YAML, its duplicates found and worded as JSON's.
    for (const format of ['json', 'yaml', 'json as yaml'] as const) {
      for (const mode of ['Strict', 'Warn', 'Ignore']) {
        const text = (pad: string) => c[format === 'json as yaml' ? 'json' : format](`c${n++}`, pad);
        const send = (pad: string) => s.request('POST', `${CM}?fieldValidation=${mode}`, { raw: text(pad), headers: { 'content-type': types[format] } });
        const small = await send('x');
        const large = await send(PAD);
        t.same(seen(large), seen(small), `${c.name}, ${format}, ${mode}: ${small.status} either way`);
      }
    }
  }
});

t.test('a Protobuf body decoded on a worker is answered as one decoded on the event loop', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const codec = new ProtobufCodec([PROTOBUF_CATALOG as ProtoCatalog]);
  const inner = (name: string, pad: string) => codec.encode('core.v1.ConfigMap', { metadata: { name, annotations: { pad } }, data: { a: '1', b: '' } });
  const send = (raw: Buffer) => rawRequest(s, 'POST', CM, { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' }, raw);
  const answer = (r: { status: number; body: Buffer }) => ({ status: r.status, json: JSON.parse(r.body.toString()) });
  // Changes to the object's bytes inside a good envelope: the object's decode is what moves to a worker.
  const cases: [string, (raw: Uint8Array) => Uint8Array][] = [
    ['a valid body', (raw) => raw],
    ['an object cut short', (raw) => raw.subarray(0, raw.length - 3)],
    ['a field of the wrong wire type', (raw) => { const c = Uint8Array.from(raw); c[c.length - 6] = 0x10; return c; }],
    ['a field nobody knows', (raw) => Buffer.concat([raw, Buffer.from([0xf8, 0x07, 0x01])])],
  ];
  let n = 0;
  for (const [what, change] of cases) {
    const small = answer(await send(wrap('v1', 'ConfigMap', change(inner(`p${n++}`, 'x')))));
    const large = answer(await send(wrap('v1', 'ConfigMap', change(inner(`p${n++}`, PAD)))));
    t.same(seen({ ...large, headers: {} }), seen({ ...small, headers: {} }), `${what}: ${small.status} either way`);
  }
});
