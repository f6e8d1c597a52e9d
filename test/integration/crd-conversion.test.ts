// Several versions of a custom resource: conversion None (apiVersion only) and Webhook (a real HTTPS
// ConversionReview server written here, verified with caBundle), reads and watches in every served
// version, writes stored in the storage version, objects still readable after the storage version
// changes, the webhook's failures, and deprecation warnings.
import t from 'tap';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sleep, withServer } from '../lib/server.js';
import { generateCA, signCert } from '../../kernel/ops/pki.js';
import { establish } from '../lib/crd.js';
import { metric } from '../lib/metrics.js';
import { until } from '../lib/poll.js';
import tls from 'node:tls';

type J = Record<string, any>;
const CRDS = '/apis/apiextensions.cluster.io/v1/customresourcedefinitions';
const ca = await generateCA({ CN: 'conversion-ca' });
const serving = await signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: 'converter' }, ips: ['127.0.0.1'], usages: ['serverAuth'], days: 1 });

// v1: spec.host + spec.port; v2: spec.endpoint "host:port".
const reviews: J[] = [];
let broken = false;
function convert(o: J, to: string): J {
  const out = structuredClone(o);
  out.apiVersion = to;
  if (to.endsWith('/v2') && o.spec && 'host' in o.spec) out.spec = { endpoint: `${o.spec.host}:${o.spec.port}` };
  if (to.endsWith('/v1') && o.spec && 'endpoint' in o.spec) {
    const [host, port] = String(o.spec.endpoint).split(':');
    out.spec = { host, port: Number(port) };
  }
  out.metadata = { ...out.metadata, labels: { ...out.metadata?.labels, converted: 'yes' }, uid: 'the-webhook-may-not-change-this' };
  return out;
}
const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    reviews.push(review);
    const r = review.request;
    const response = broken
      ? { uid: r.uid, result: { status: 'Failure', message: 'the converter is down' } }
      : { uid: r.uid, result: { status: 'Success' }, convertedObjects: r.objects.map((o: J) => convert(o, r.desiredAPIVersion)) };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'ConversionReview', response }));
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
t.teardown(() => { server.closeAllConnections(); server.close(); });
const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/convert`;

const v1Schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { host: { type: 'string' }, port: { type: 'integer' } } } } } };
const v2Schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { endpoint: { type: 'string' } } } } } };
const crd = (storage: 'v1' | 'v2') => ({
  apiVersion: 'apiextensions.cluster.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'backends.conv.example.com' },
  spec: {
    group: 'conv.example.com', scope: 'Namespaced', names: { plural: 'backends', singular: 'backend', kind: 'Backend' },
    versions: [
      { name: 'v1', served: true, storage: storage === 'v1', schema: v1Schema, deprecated: true },
      { name: 'v2', served: true, storage: storage === 'v2', schema: v2Schema },
    ],
    conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url, caBundle: Buffer.from(ca.certPem).toString('base64') } } },
  },
});
const V1 = '/apis/conv.example.com/v1/namespaces/default/backends';
const V2 = '/apis/conv.example.com/v2/namespaces/default/backends';

t.test('conversion webhook', async (t) => {
  const s = await withServer(t);
  await establish(s, crd('v1'));

  const c = await s.request('POST', V1, { body: { apiVersion: 'conv.example.com/v1', kind: 'Backend', metadata: { name: 'a' }, spec: { host: 'db', port: 5432 } } });
  t.equal(c.status, 201, 'status');
  t.equal(c.headers.warning, '299 - "conv.example.com/v1 Backend is deprecated"', 'deprecated version warns');
  t.equal(reviews.length, 0, 'a write in the storage version needs no conversion');

  const g = await s.get(`${V2}/a`);
  t.equal(g.status, 200, 'status');
  t.same(g.json.spec, { endpoint: 'db:5432' }, 'read in v2 through the webhook');
  t.equal(g.json.apiVersion, 'conv.example.com/v2');
  t.equal(g.json.metadata.labels.converted, 'yes', 'labels may change');
  t.not(g.json.metadata.uid, 'the-webhook-may-not-change-this', 'other metadata is the stored one');
  const rv = reviews[reviews.length - 1];
  t.equal(rv.apiVersion, 'apiextensions.cluster.io/v1');
  t.equal(rv.kind, 'ConversionReview');
  t.equal(rv.request.desiredAPIVersion, 'conv.example.com/v2');

  const events: J[] = [];
  const w = s.stream(`${V2}?watch=1`, (e) => events.push(e));
  const c2 = await s.request('POST', V2, { body: { apiVersion: 'conv.example.com/v2', kind: 'Backend', metadata: { name: 'b' }, spec: { endpoint: 'cache:6379' } } });
  t.equal(c2.status, 201, 'status');
  t.same(c2.json.spec, { endpoint: 'cache:6379' }, 'answered in the version written');
  const b1 = await s.get(`${V1}/b`);
  t.same(b1.json.spec, { host: 'cache', port: 6379 }, 'stored in v1 (the storage version)');
  const l2 = await s.get(V2);
  t.same(l2.json.items.map((i: J) => i.spec.endpoint), ['db:5432', 'cache:6379'], 'list converted in one batch');
  const patched = await s.request('PATCH', `${V2}/a`, { raw: JSON.stringify({ spec: { endpoint: 'db:6543' } }), headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal(patched.status, 200, 'status');
  t.same((await s.get(`${V1}/a`)).json.spec, { host: 'db', port: 6543 }, 'a patch in v2 is stored as v1');
  for (let i = 0; i < 100 && events.length < 3; i++) await sleep(30);
  t.ok(events.length >= 3 && events.every((e) => e.object.apiVersion === 'conv.example.com/v2' && 'endpoint' in e.object.spec), JSON.stringify(events.map((e) => [e.type, e.object.apiVersion])));
  w.close();

  // The storage version moves to v2: v1 objects stay readable; new writes are stored as v2.
  const cur = (await s.get(`${CRDS}/backends.conv.example.com`)).json;
  const up = await s.request('PUT', `${CRDS}/backends.conv.example.com`, { body: { ...cur, spec: crd('v2').spec } });
  t.equal(up.status, 200, 'status');
  t.same(up.json.status.storedVersions, ['v1', 'v2']);
  for (let i = 0; i < 100; i++) {
    await sleep(30);
    const r = await s.request('POST', V2, { body: { apiVersion: 'conv.example.com/v2', kind: 'Backend', metadata: { name: `probe-${i}` }, spec: { endpoint: 'x:1' } } });
    if (r.status === 201 && (await s.get(`${V1}/probe-${i}`)).json.spec.host === 'x') {
      // Stored as v2 now: reading it in v2 needs no webhook.
      const before = reviews.length;
      await s.get(`${V2}/probe-${i}`);
      t.equal(reviews.length, before, 'stored in the new storage version');
      break;
    }
  }
  t.same((await s.get(`${V2}/a`)).json.spec, { endpoint: 'db:6543' }, 'an object stored in the old version is still readable');

  broken = true;
  const f = await s.get(`${V2}/b`);
  t.equal(f.status, 500);
  t.match(f.json.message, /conversion webhook for conv.example.com\/v1, Kind=Backend failed: the converter is down/);
  broken = false;
});

t.test('conversion None: apiVersion only', async (t) => {
  const s = await withServer(t);
  const none = crd('v1');
  (none.spec as J).conversion = { strategy: 'None' };
  (none.spec as J).versions[1].schema = v1Schema;
  await establish(s, none);
  t.equal((await s.request('POST', V1, { body: { apiVersion: 'conv.example.com/v1', kind: 'Backend', metadata: { name: 'n' }, spec: { host: 'h', port: 1 } } })).status, 201);
  const g = await s.get(`${V2}/n`);
  t.equal(g.json.apiVersion, 'conv.example.com/v2');
  t.same(g.json.spec, { host: 'h', port: 1 });
});

t.test('a stalled watch converted by the webhook is held to the output budget', async (t) => {
  // Before: the converting stage took every event at once and queued its conversions without bound,
  // so nothing was counted and the stalled watch was never closed.
  const MiB = 1024 * 1024;
  const s = await withServer(t, { env: { CAPI_OUTPUT_BUDGET_BYTES: String(4 * MiB), CAPI_WATCH_BUDGET_BYTES: String(MiB) } });
  await establish(s, crd('v1'));
  const host = 'h'.repeat(32 * 1024);
  t.equal((await s.request('POST', V1, { body: { apiVersion: 'conv.example.com/v1', kind: 'Backend', metadata: { name: 'big' }, spec: { host, port: 1 } } })).status, 201);
  const sock = tls.connect({ host: '127.0.0.1', port: s.port, ca: s.ca, servername: 'localhost' }, () => {
    sock.write(`GET ${V2}?watch=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.token}\r\n\r\n`);
    sock.pause();
  });
  sock.on('error', () => {});
  t.teardown(() => sock.destroy());
  await until(() => metric(s, 'apiserver_registered_watchers'), (n) => n === 1);
  let maxQueued = 0;
  for (let i = 2; i < 2000 && await metric(s, 'apiserver_registered_watchers') === 1; i++) {
    const r = await s.request('PATCH', `${V1}/big`, { body: { spec: { port: i } }, headers: { 'content-type': 'application/merge-patch+json' } });
    if (r.status !== 200) { t.fail(`write ${i}: ${r.status}`); break; }
    maxQueued = Math.max(maxQueued, await metric(s, 'apiserver_output_queued_bytes'));
  }
  t.equal(await metric(s, 'apiserver_registered_watchers'), 0, 'the stalled converted watch was closed');
  t.ok(await metric(s, 'apiserver_terminated_watchers_total') > 0, 'by the budget');
  t.ok(maxQueued > 0 && maxQueued <= 4 * MiB, `what it held was counted and within the budget (at most ${(maxQueued / MiB).toFixed(2)} MiB)`);
});
