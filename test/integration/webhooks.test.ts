// Admission webhooks end to end: the real server calling real HTTPS webhook servers on 127.0.0.1,
// each with its own CA. Every test works in its own namespace, and its webhooks select that
// namespace by label, so the tests do not see each other's webhooks.
//
// Throughput with and without webhooks (not run by default):
//   WEBHOOK_BENCH=1 npx tap dist/test/integration/webhooks.test.js --grep=throughput
import t from 'tap';
import https from 'node:https';
import path from 'node:path';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import tls, { type TLSSocket } from 'node:tls';
import { repoRoot, sleep, withServer, type TestServer } from '../lib/server.js';
import { generateCA, signCert } from '../../kernel/ops/pki.js';
import { getBrand } from '../../kernel/contracts/brand.js';
import type { AdmissionAttributes, PluginHost, TypeDef } from '../../kernel/contracts/index.js';
import { matchRules, ruleMatches } from '../../plugins/admission/webhook-common/matching.js';
import { readWebhooks } from '../../plugins/admission/webhook-common/config.js';
import { credentialsFor, type Kubeconfig } from '../../plugins/admission/webhook-common/kubeconfig.js';
import { WebhookMetrics, webhookMetricsFor } from '../../plugins/admission/webhook-common/metrics.js';
import { Http1Client } from '../../plugins/admission/webhook-common/http1.js';

type J = Record<string, any>;
const dir = t.testdir({});
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};
const b64 = (s: string) => Buffer.from(s).toString('base64');

// ---------------------------------------------------------------- the webhook servers

const serviceCA = await generateCA({ CN: 'webhook-ca' });
const serving = await signCert({ caCertPem: serviceCA.certPem, caKeyPem: serviceCA.keyPem, subject: { CN: 'webhook' }, ips: ['127.0.0.1'], dnsNames: ['webhook-svc.wh.svc'], usages: ['serverAuth'], days: 1 });
const clientCA = await generateCA({ CN: 'webhook-clients-ca' });
const apiserverClient = await signCert({ caCertPem: clientCA.certPem, caKeyPem: clientCA.keyPem, subject: { CN: 'apiserver-admission' }, usages: ['clientAuth'], days: 1 });

interface Call { path: string; review: J; auth: string | undefined; clientCN: string | undefined; at: number }
const calls: Call[] = [];
const callsTo = (p: string) => calls.filter((c) => c.path === p);

/** The answer of a webhook path: a response (uid and allowed added unless given), or a raw reply. */
type Behaviour = (review: J, call: Call) => J | { raw: (res: ServerResponse) => void };
const behaviours: Record<string, Behaviour> = {};
const patchOf = (ops: unknown[]) => ({ patchType: 'JSONPatch', patch: b64(JSON.stringify(ops)) });
const addLabel = (review: J, key: string, value: string) => {
  const labels = review.request.object?.metadata?.labels;
  return labels ? [{ op: 'add', path: `/metadata/labels/${key.replace(/\//g, '~1')}`, value }] : [{ op: 'add', path: '/metadata/labels', value: { [key]: value } }];
};

const hanging = new Set<ServerResponse>();
function handler(req: IncomingMessage, res: ServerResponse) {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const p = (req.url ?? '').split('?')[0];
    let review: J = {};
    try { review = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { /* not JSON */ }
    const peer = (req.socket as TLSSocket).getPeerCertificate?.();
    const call: Call = { path: p, review, auth: req.headers.authorization, clientCN: peer && (req.socket as TLSSocket).authorized ? String(peer.subject?.CN) : undefined, at: Date.now() };
    calls.push(call);
    const b = behaviours[p];
    if (!b) {
      res.writeHead(404).end();
      return;
    }
    const out = b(review, call);
    if ('raw' in out && typeof out.raw === 'function') return (out.raw as (r: ServerResponse) => void)(res);
    const response = { uid: review.request?.uid, allowed: true, ...out };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response }));
  });
}

async function listen(opts: https.ServerOptions) {
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem, ...opts }, handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  t.teardown(() => {
    for (const r of hanging) r.destroy();
    server.closeAllConnections();
    server.close();
  });
  return { server, port, url: `https://127.0.0.1:${port}` };
}

const hooks = await listen({});
// a second server that asks for client certificates (credentials from the admission configuration)
const mtls = await listen({ requestCert: true, rejectUnauthorized: false, ca: clientCA.certPem });

// ---------------------------------------------------------------- server configuration

const credentials = file('webhook-credentials.kubeconfig', JSON.stringify({
  apiVersion: 'v1',
  kind: 'Config',
  users: [
    { name: `127.0.0.1:${hooks.port}`, user: { token: 'url-token' } },
    { name: `127.0.0.1:${mtls.port}`, user: { 'client-certificate-data': b64(apiserverClient.certPem), 'client-key-data': b64(apiserverClient.keyPem) } },
    { name: '*.wh.svc', user: { token: 'svc-token' } },
  ],
}));
const imageKubeconfig = (server: string) => JSON.stringify({
  apiVersion: 'v1',
  kind: 'Config',
  clusters: [{ name: 'images', cluster: { server, 'certificate-authority-data': b64(serviceCA.certPem) } }],
  users: [{ name: 'apiserver', user: { token: 'image-token' } }],
  contexts: [{ name: 'images', context: { cluster: 'images', user: 'apiserver' } }],
  'current-context': 'images',
});
const admissionConfig = (imagePolicy: J) => JSON.stringify({
  apiVersion: 'apiserver.config.cluster.io/v1',
  kind: 'AdmissionConfiguration',
  plugins: [
    { name: 'MutatingAdmissionWebhook', configuration: { apiVersion: 'apiserver.config.cluster.io/v1', kind: 'WebhookAdmissionConfiguration', kubeConfigFile: credentials } },
    { name: 'ValidatingAdmissionWebhook', configuration: { apiVersion: 'apiserver.config.cluster.io/v1', kind: 'WebhookAdmissionConfiguration', kubeConfigFile: credentials } },
    { name: 'ImagePolicyWebhook', configuration: { imagePolicy } },
  ],
});
const v1beta1Types = path.join(repoRoot, 'dist/plugins/admission/webhook-common/v1beta1-types.js');
const config = file('config.json', JSON.stringify({ types: [{ plugin: 'builtin' }, { plugin: v1beta1Types }] }));
const admission = file('admission.json', admissionConfig({
  kubeConfigFile: file('images.kubeconfig', imageKubeconfig(`${hooks.url}/imagepolicy`)), allowTTL: 60, denyTTL: 60, retryBackoff: 5, defaultAllow: true,
}));

// The image policy backend: images naming "denied" are refused, "flaky" ones fail (defaultAllow lets them in).
behaviours['/imagepolicy'] = (review) => {
  const images: string[] = (review.spec?.containers ?? []).map((c: J) => c.image);
  if (images.some((i) => i.includes('flaky'))) return { raw: (res) => res.writeHead(500).end('backend trouble') };
  const bad = images.find((i) => i.includes('denied'));
  return { raw: (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'ImageReview', status: bad ? { allowed: false, reason: `${bad} is not from a trusted registry` } : { allowed: true } })) };
};

// Audit: pods at level Request (mutation and patch annotations), Metadata in one namespace (mutation only).
const auditLog = path.join(dir, 'audit.log');
const auditPolicy = file('audit-policy.yaml', [
  'apiVersion: audit.cluster.io/v1',
  'kind: Policy',
  'rules:',
  '  - level: Metadata',
  '    namespaces: ["audit-metadata"]',
  '  - level: Request',
  '    resources: [{ group: "", resources: ["pods"] }]',
  '  - level: None',
  '',
].join('\n'));

const s: TestServer = await withServer(t, { args: ['--config', config, '--admission-control-config-file', admission, '--enable-admission-plugins', 'ImagePolicyWebhook', '--audit-log-path', auditLog, '--audit-policy-file', auditPolicy] });

/** The ResponseComplete audit event of a pod create (events are written after the response). */
async function auditOfCreate(ns: string, name: string): Promise<J | undefined> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const events = existsSync(auditLog) ? readFileSync(auditLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as J) : [];
    const ev = events.find((e) => e.stage === 'ResponseComplete' && e.verb === 'create' && e.objectRef?.namespace === ns && e.objectRef?.name === name);
    if (ev || Date.now() > deadline) return ev;
    await sleep(20);
  }
}

// ---------------------------------------------------------------- helpers

const AR = '/apis/admissionregistration.cluster.io';
let seq = 0;

async function namespace(label: string): Promise<string> {
  const name = `${label}-${++seq}`;
  const r = await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { test: label } } } });
  if (r.status !== 201) throw new Error(`namespace ${name}: ${r.status} ${r.text}`);
  return name;
}

function pod(name: string, labels?: Record<string, string>, image = 'nginx:1.25'): J {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...(labels ? { labels } : {}) }, spec: { containers: [{ name: 'c', image }] } };
}

const createPod = (ns: string, body: J, query = '') => s.request('POST', `/api/v1/namespaces/${ns}/pods${query}`, { body });

/** A webhook entry: url on the main webhook server unless clientConfig is given; selects namespaces labelled test=<label>. */
function hook(name: string, p: string, label: string, more: J = {}): J {
  return {
    name,
    clientConfig: { url: `${hooks.url}${p}`, caBundle: b64(serviceCA.certPem) },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
    namespaceSelector: { matchLabels: { test: label } },
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...more,
  };
}

async function configure(kind: 'mutating' | 'validating', name: string, webhooks: J[], version = 'v1'): Promise<void> {
  const k = kind === 'mutating' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration';
  const r = await s.request('POST', `${AR}/${version}/${k.toLowerCase()}s`, { body: { apiVersion: `admissionregistration.cluster.io/${version}`, kind: k, metadata: { name }, webhooks } });
  if (r.status !== 201) throw new Error(`${k} ${name}: ${r.status} ${r.text}`);
}

const removeConfig = (kind: 'mutating' | 'validating', name: string) =>
  s.request('DELETE', `${AR}/v1/${kind === 'mutating' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations'}/${name}`);

// ---------------------------------------------------------------- tests

t.test('a mutating webhook adds a label with a JSON patch (AdmissionReview v1)', async (t) => {
  const ns = await namespace('mutate');
  behaviours['/mutate'] = (review) => ({ ...patchOf(addLabel(review, 'mutated-by', 'webhook')), warnings: ['label added by the webhook'] });
  await configure('mutating', 'mutate', [hook('label.mutate.example.com', '/mutate', 'mutate')]);
  const r = await createPod(ns, pod('p1', { app: 'web' }));
  t.equal(r.status, 201, 'answered 201', { body: r.text });
  t.same(r.json.metadata.labels, { app: 'web', 'mutated-by': 'webhook' });
  t.match(String(r.headers.warning), /299 - "label added by the webhook"/, 'the webhook warning reaches the client');
  const stored = await s.get(`/api/v1/namespaces/${ns}/pods/p1`);
  t.equal(stored.json.metadata.labels['mutated-by'], 'webhook', 'the patched object is what is stored');
  const review = callsTo('/mutate').at(-1)!.review;
  t.equal(review.apiVersion, 'admission.cluster.io/v1');
  t.equal(review.kind, 'AdmissionReview');
  const req = review.request;
  t.match(req.uid, /^[0-9a-f-]{36}$/);
  t.same(req.kind, { group: '', version: 'v1', kind: 'Pod' });
  t.same(req.resource, { group: '', version: 'v1', resource: 'pods' });
  t.same(req.requestKind, { group: '', version: 'v1', kind: 'Pod' });
  t.equal(req.operation, 'CREATE');
  t.equal(req.namespace, ns);
  t.equal(req.name, 'p1');
  t.equal(req.object.metadata.name, 'p1');
  t.equal(req.oldObject, null);
  t.equal(req.dryRun, false);
  t.equal(req.options.kind, 'CreateOptions');
  t.ok(req.userInfo.username, 'the caller is named');
  t.ok(req.userInfo.groups.includes('system:authenticated'));
  t.equal(callsTo('/mutate').at(-1)!.auth, 'Bearer url-token', 'credentials for the URL host from the kubeconfig');

  // audit annotations: level Request has the mutation and the patch, level Metadata the mutation only
  const ev = await auditOfCreate(ns, 'p1');
  t.ok(ev, 'audit event of the create');
  const ann: Record<string, string> = ev?.annotations ?? {};
  const mutationKey = Object.keys(ann).find((k) => /^mutation\.webhook\.admission\.cluster\.io\/round_0_index_\d+$/.test(k));
  t.ok(mutationKey, 'mutation annotation');
  t.same(JSON.parse(ann[mutationKey!] ?? '{}'), { configuration: 'mutate', webhook: 'label.mutate.example.com', mutated: true });
  const patchKey = mutationKey?.replace(/^mutation\./, 'patch.');
  t.same(JSON.parse(ann[patchKey!] ?? '{}'), { configuration: 'mutate', webhook: 'label.mutate.example.com', patch: [{ op: 'add', path: '/metadata/labels/mutated-by', value: 'webhook' }], patchType: 'JSONPatch' });
  await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'audit-metadata', labels: { test: 'mutate' } } } });
  t.equal((await createPod('audit-metadata', pod('p2'))).status, 201);
  const meta = (await auditOfCreate('audit-metadata', 'p2'))?.annotations ?? {};
  t.ok(Object.keys(meta).some((k) => k.startsWith('mutation.webhook.admission.cluster.io/')), 'Metadata level: the mutation annotation');
  t.notOk(Object.keys(meta).some((k) => k.startsWith('patch.webhook.admission.cluster.io/')), 'Metadata level: no patch annotation');
  await removeConfig('mutating', 'mutate');
});

t.test('a validating webhook denies with its code and message', async (t) => {
  const ns = await namespace('deny');
  behaviours['/deny'] = (review) => review.request.object.metadata.name.startsWith('bad')
    ? { allowed: false, status: { code: 422, message: 'bad pods are not welcome here' } }
    : { allowed: true };
  behaviours['/deny-silent'] = (review) => (review.request.object.metadata.name === 'silent' ? { allowed: false } : {});
  await configure('validating', 'deny', [hook('deny.example.com', '/deny', 'deny'), hook('silent.example.com', '/deny-silent', 'deny')]);
  const bad = await createPod(ns, pod('bad-one'));
  t.equal(bad.status, 422);
  t.equal(bad.json.message, 'admission webhook "deny.example.com" denied the request: bad pods are not welcome here');
  const silent = await createPod(ns, pod('silent'));
  t.equal(silent.status, 403, 'a denial without a code is 403');
  t.equal(silent.json.message, 'admission webhook "silent.example.com" denied the request without explanation');
  t.equal((await s.get(`/api/v1/namespaces/${ns}/pods/bad-one`)).status, 404, 'nothing persisted');
  const good = await createPod(ns, pod('good'));
  t.equal(good.status, 201);
  // validating webhooks run in parallel: both were called for each request
  t.equal(callsTo('/deny').length, 3);
  t.equal(callsTo('/deny-silent').length, 3);
  const metrics = await s.get('/metrics');
  if (metrics.status === 200) {
    t.match(metrics.text, /apiserver_admission_webhook_rejection_count\{[^}]*name="deny.example.com"[^}]*\} 1/, 'the rejection is counted');
  }
  await removeConfig('validating', 'deny');
});

t.test('both AdmissionReview versions: the first supported one is sent, the answer must match it', async (t) => {
  const ns = await namespace('versions');
  behaviours['/v1beta1'] = (review) => patchOf(addLabel(review, 'seen', review.apiVersion.split('/')[1]));
  behaviours['/v2first'] = () => ({});
  await configure('mutating', 'versions', [
    hook('beta.versions.example.com', '/v1beta1', 'versions', { admissionReviewVersions: ['v1beta1', 'v1'] }),
    hook('v2first.versions.example.com', '/v2first', 'versions', { admissionReviewVersions: ['v2', 'v1'] }),
  ]);
  const r = await createPod(ns, pod('p'));
  t.equal(r.status, 201, 'answered 201', { body: r.text });
  t.equal(r.json.metadata.labels.seen, 'v1beta1');
  t.equal(callsTo('/v1beta1').at(-1)!.review.apiVersion, 'admission.cluster.io/v1beta1');
  t.equal(callsTo('/v2first').at(-1)!.review.apiVersion, 'admission.cluster.io/v1', 'v2 is unknown: the next one');
  // a v1 request answered with a v1beta1 review is a failed call
  behaviours['/v2first'] = (review) => ({ raw: (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'admission.cluster.io/v1beta1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } })) });
  const wrong = await createPod(ns, pod('q'));
  t.equal(wrong.status, 500);
  t.match(wrong.json.message, 'failed calling webhook "v2first.versions.example.com": received invalid webhook response: expected webhook response of admission.cluster.io/v1, Kind=AdmissionReview');
  await removeConfig('mutating', 'versions');
});

t.test('failurePolicy on a hanging webhook (timeoutSeconds 1); other requests are not held up', async (t) => {
  const ns = await namespace('hang');
  behaviours['/hang'] = () => ({ raw: (res) => { hanging.add(res); } });
  await configure('validating', 'hang', [
    hook('fail.hang.example.com', '/hang', 'hang', { timeoutSeconds: 1, failurePolicy: 'Fail', objectSelector: { matchLabels: { policy: 'fail' } } }),
    hook('ignore.hang.example.com', '/hang', 'hang', { timeoutSeconds: 1, failurePolicy: 'Ignore', objectSelector: { matchLabels: { policy: 'ignore' } } }),
  ]);
  const t0 = Date.now();
  let failed = false;
  const failing = createPod(ns, pod('f', { policy: 'fail' })).finally(() => { failed = true; });
  // meanwhile, other requests go through at full speed
  const others: number[] = [];
  for (let i = 0; i < 10; i++) {
    const a = Date.now();
    const r = await s.get('/api/v1/namespaces');
    t.equal(r.status, 200);
    others.push(Date.now() - a);
  }
  const unrelated = await createPod(ns, pod('unrelated'));
  t.equal(unrelated.status, 201, 'a pod no webhook selects is created at once');
  t.notOk(failed, `the other requests finished while the hung one still waited (${Date.now() - t0} ms)`);
  const f = await failing;
  const took = Date.now() - t0;
  t.equal(f.status, 500);
  t.equal(f.json.reason, 'InternalError');
  t.match(f.json.message, /^Internal error occurred: failed calling webhook "fail.hang.example.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/hang\?timeout=1s": context deadline exceeded$/);
  t.ok(took >= 950, `failed after the 1 s timeout, not before (${took} ms)`);
  t.comment(`other requests took at most ${Math.max(...others)} ms`);
  const ig = await createPod(ns, pod('i', { policy: 'ignore' }));
  t.equal(ig.status, 201, 'failurePolicy Ignore lets the request through');
  await removeConfig('validating', 'hang');
});

t.test('answers that break the exchange: wrong uid, a patch type other than JSONPatch, a huge body', async (t) => {
  const ns = await namespace('broken');
  behaviours['/wrong-uid'] = () => ({ uid: 'not-the-uid' });
  behaviours['/merge-patch'] = () => ({ patchType: 'MergePatch', patch: b64('{"metadata":{"labels":{"x":"y"}}}') });
  behaviours['/huge'] = (review) => ({ raw: (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const filler = 'x'.repeat(1024 * 1024);
    res.write(`{"apiVersion":"admission.cluster.io/v1","kind":"AdmissionReview","response":{"uid":"${review.request.uid}","allowed":true,"warnings":[`);
    for (let i = 0; i < 10; i++) res.write(`${i ? ',' : ''}"${filler}"`);
    res.end(']}}');
  } });
  const sel = (v: string) => ({ objectSelector: { matchLabels: { case: v } } });
  await configure('mutating', 'broken', [
    hook('uid.broken.example.com', '/wrong-uid', 'broken', sel('uid')),
    hook('patchtype.broken.example.com', '/merge-patch', 'broken', sel('patchtype')),
    hook('huge.broken.example.com', '/huge', 'broken', sel('huge')),
    hook('huge-ignored.broken.example.com', '/huge', 'broken', { ...sel('huge-ignored'), failurePolicy: 'Ignore' }),
  ]);
  const uid = await createPod(ns, pod('a', { case: 'uid' }));
  t.equal(uid.status, 500);
  t.match(uid.json.message, /failed calling webhook "uid.broken.example.com": received invalid webhook response: expected response.uid="[0-9a-f-]+", got "not-the-uid"/);
  const pt = await createPod(ns, pod('b', { case: 'patchtype' }));
  t.equal(pt.status, 500);
  t.match(pt.json.message, 'failed calling webhook "patchtype.broken.example.com": received invalid webhook response: webhook returned invalid response.patchType of "MergePatch"');
  const huge = await createPod(ns, pod('c', { case: 'huge' }));
  t.equal(huge.status, 500, 'a 10 MiB answer is refused');
  t.match(huge.json.message, /failed calling webhook "huge.broken.example.com": failed to call webhook: .*response body larger than 3145728 bytes/);
  const hugeIgnored = await createPod(ns, pod('d', { case: 'huge-ignored' }));
  t.equal(hugeIgnored.status, 201, 'refused answer under failurePolicy Ignore: let through');
  t.equal((await s.get(`/api/v1/namespaces/${ns}/pods/a`)).status, 404);
  await removeConfig('mutating', 'broken');
});

t.test('a patch that breaks the schema is rejected and nothing is stored', async (t) => {
  const ns = await namespace('schema');
  behaviours['/break'] = () => patchOf([{ op: 'replace', path: '/spec/containers', value: 'not-a-list' }]);
  behaviours['/bad-op'] = () => patchOf([{ op: 'remove', path: '/spec/nothing/here' }]);
  await configure('mutating', 'schema', [
    hook('break.schema.example.com', '/break', 'schema', { objectSelector: { matchLabels: { case: 'break' } } }),
    hook('badop.schema.example.com', '/bad-op', 'schema', { objectSelector: { matchLabels: { case: 'badop' } } }),
  ]);
  const r = await createPod(ns, pod('broken', { case: 'break' }));
  t.equal(r.status, 422, 'answered 422', { body: r.text });
  t.match(r.json.message, /spec\.containers/);
  t.equal((await s.get(`/api/v1/namespaces/${ns}/pods/broken`)).status, 404, 'nothing persisted');
  const op = await createPod(ns, pod('badop', { case: 'badop' }));
  t.equal(op.status, 500, 'a patch that cannot be applied is an internal error');
  t.match(op.json.message, 'admission webhook "badop.schema.example.com" returned a patch that could not be applied');
  await removeConfig('mutating', 'schema');
});

t.test('answers nested past the body limit: the review and the patched object are bounded like request bodies', async (t) => {
  const ns = await namespace('deep');
  const deep = (n: number): J => { let v: J = {}; for (let i = 1; i < n; i++) v = { a: v }; return v; };
  // a review answer 2,000 deep (an unknown field the decoder still has to read)
  behaviours['/deep-review'] = (review) => ({ raw: (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
    apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true, extra: deep(2000) },
  })) });
  // a patch within the limit that leaves the object past it
  behaviours['/deep-patch'] = () => patchOf([{ op: 'add', path: '/spec/containers/0/extra', value: deep(997) }]);
  const sel = (v: string) => ({ objectSelector: { matchLabels: { case: v } } });
  await configure('mutating', 'deep', [
    hook('review.deep.example.com', '/deep-review', 'deep', sel('review')),
    hook('patch.deep.example.com', '/deep-patch', 'deep', sel('patch')),
  ]);
  const review = await createPod(ns, pod('a', { case: 'review' }));
  t.equal(review.status, 500);
  t.match(review.json.message, /failed calling webhook "review.deep.example.com": .*invalid JSON in the response: invalid character '\{' exceeded max depth$/);
  const patched = await createPod(ns, pod('b', { case: 'patch' }));
  t.equal(patched.status, 500);
  t.equal(patched.json.message, "Internal error occurred: invalid character '{' exceeded max depth");
  for (const n of ['a', 'b']) t.equal((await s.get(`/api/v1/namespaces/${ns}/pods/${n}`)).status, 404, `${n} was not stored`);
  await removeConfig('mutating', 'deep');
});

t.test('namespaceSelector and objectSelector', async (t) => {
  const inNs = await namespace('selectors');
  const outNs = await namespace('elsewhere');
  behaviours['/sel'] = (review) => patchOf(addLabel(review, 'selected', 'yes'));
  await configure('mutating', 'selectors', [hook('sel.example.com', '/sel', 'selectors', {
    objectSelector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['web', 'api'] }] },
  })]);
  const hit = await createPod(inNs, pod('hit', { tier: 'web' }));
  t.equal(hit.json.metadata.labels.selected, 'yes', 'namespace and object labels match');
  const noLabel = await createPod(inNs, pod('miss', { tier: 'db' }));
  t.equal(noLabel.json.metadata.labels.selected, undefined, 'object labels do not match');
  const otherNs = await createPod(outNs, pod('other', { tier: 'web' }));
  t.equal(otherNs.json.metadata.labels.selected, undefined, 'namespace labels do not match');
  // the namespace object itself is matched by its own labels
  behaviours['/ns'] = (review) => patchOf(addLabel(review, 'seen-by-hook', 'true'));
  await configure('mutating', 'namespaces', [hook('ns.example.com', '/ns', 'nsobject', {
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'] }],
  })]);
  const ns1 = await namespace('nsobject');
  t.equal((await s.get(`/api/v1/namespaces/${ns1}`)).json.metadata.labels['seen-by-hook'], 'true');
  const ns2 = await namespace('other-object');
  t.equal((await s.get(`/api/v1/namespaces/${ns2}`)).json.metadata.labels['seen-by-hook'], undefined);
  await removeConfig('mutating', 'selectors');
  await removeConfig('mutating', 'namespaces');
});

t.test('rules on sub-resources: */status', async (t) => {
  const ns = await namespace('status');
  behaviours['/status'] = (review) => ({ allowed: false, status: { message: `no status updates (${review.request.subResource})` } });
  await configure('validating', 'status', [hook('status.example.com', '/status', 'status', {
    rules: [{ operations: ['UPDATE', 'CREATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/status'] }],
  })]);
  const created = await createPod(ns, pod('p'));
  t.equal(created.status, 201, 'the main resource does not match */status');
  const cur = created.json;
  const upd = await s.request('PUT', `/api/v1/namespaces/${ns}/pods/p/status`, { body: { ...cur, status: { phase: 'Running' } } });
  t.equal(upd.status, 403);
  t.equal(upd.json.message, 'admission webhook "status.example.com" denied the request: no status updates (status)');
  const review = callsTo('/status').at(-1)!.review.request;
  t.equal(review.subResource, 'status');
  t.equal(review.requestSubResource, 'status');
  t.equal(review.oldObject.metadata.name, 'p');
  t.equal(review.options.kind, 'UpdateOptions');
  const main = await s.request('PUT', `/api/v1/namespaces/${ns}/pods/p`, { body: { ...cur, metadata: { ...cur.metadata, labels: { x: 'y' } } } });
  t.equal(main.status, 200, 'updates of the main resource are not matched');
  await removeConfig('validating', 'status');
});

t.test('DELETE and CONNECT requests', async (t) => {
  const ns = await namespace('ops');
  behaviours['/ops'] = (review) => (review.request.name === 'keep' ? { allowed: false, status: { message: `${review.request.operation} refused` } } : {});
  behaviours['/ops-patch'] = () => patchOf([{ op: 'add', path: '/metadata/labels', value: { x: 'y' } }]);
  await configure('validating', 'ops', [hook('ops.example.com', '/ops', 'ops', {
    rules: [{ operations: ['DELETE', 'CONNECT'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'pods/exec', 'pods/portforward'] }],
  })]);
  await configure('mutating', 'ops', [hook('ops-patch.example.com', '/ops-patch', 'ops', {
    rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }], objectSelector: { matchLabels: { patch: 'on-delete' } },
  })]);
  t.equal((await createPod(ns, pod('keep'))).status, 201);
  t.equal((await createPod(ns, pod('go'))).status, 201);
  t.equal((await createPod(ns, pod('odd', { patch: 'on-delete' }))).status, 201);
  const del = await s.request('DELETE', `/api/v1/namespaces/${ns}/pods/keep`);
  t.equal(del.status, 403);
  t.equal(del.json.message, 'admission webhook "ops.example.com" denied the request: DELETE refused');
  const review = callsTo('/ops').at(-1)!.review.request;
  t.equal(review.operation, 'DELETE');
  t.equal(review.object, null);
  t.equal(review.oldObject.metadata.name, 'keep');
  t.equal(review.options.kind, 'DeleteOptions');
  t.equal((await s.request('DELETE', `/api/v1/namespaces/${ns}/pods/go`)).status, 200);
  const odd = await s.request('DELETE', `/api/v1/namespaces/${ns}/pods/odd`);
  t.equal(odd.status, 500);
  t.equal(odd.json.message, 'Internal error occurred: admission webhook "ops-patch.example.com" attempted to modify the object, which is not supported for this operation');
  const exec = await s.request('POST', `/api/v1/namespaces/${ns}/pods/keep/exec?command=ls&stdout=true`);
  t.equal(exec.status, 403);
  t.equal(exec.json.message, 'admission webhook "ops.example.com" denied the request: CONNECT refused');
  const connect = callsTo('/ops').at(-1)!.review.request;
  t.equal(connect.subResource, 'exec');
  t.equal(connect.kind.kind, 'PodExecOptions');
  t.same(connect.object.command, ['ls']);
  t.equal(connect.object.stdout, true, 'a boolean option is a boolean');
  t.equal((await s.request('POST', `/api/v1/namespaces/${ns}/pods/keep/portforward?ports=8080&ports=9090`)).status, 403);
  const forward = callsTo('/ops').at(-1)!.review.request;
  t.equal(forward.kind.kind, 'PodPortForwardOptions');
  t.same(forward.object.ports, [8080, 9090], 'ports are a list of numbers');
  await removeConfig('validating', 'ops');
  await removeConfig('mutating', 'ops');
});

t.test('sideEffects and dry run', async (t) => {
  const ns = await namespace('dryrun');
  behaviours['/dry'] = () => ({});
  await configure('validating', 'dryrun-unknown', [hook('unknown.dryrun.example.com', '/dry', 'dryrun', { sideEffects: undefined, admissionReviewVersions: ['v1'] })], 'v1beta1');
  const before = callsTo('/dry').length;
  const dry = await createPod(ns, pod('p'), '?dryRun=All');
  t.equal(dry.status, 400);
  t.equal(dry.json.message, 'admission webhook "unknown.dryrun.example.com" does not support dry run');
  t.equal(callsTo('/dry').length, before, 'the webhook was not called');
  t.equal((await createPod(ns, pod('real'))).status, 201, 'a real request calls it');
  t.equal(callsTo('/dry').length, before + 1);
  await removeConfig('validating', 'dryrun-unknown');
  await configure('validating', 'dryrun-none', [hook('none.dryrun.example.com', '/dry', 'dryrun', { sideEffects: 'NoneOnDryRun' })]);
  const ok = await createPod(ns, pod('p2'), '?dryRun=All');
  t.equal(ok.status, 201, 'NoneOnDryRun webhooks take dry runs');
  t.equal(callsTo('/dry').at(-1)!.review.request.dryRun, true);
  await removeConfig('validating', 'dryrun-none');
});

t.test('reinvocation: an IfNeeded webhook is called again after a later webhook changed the object', async (t) => {
  const ns = await namespace('reinvoke');
  behaviours['/first'] = () => ({});
  behaviours['/second'] = (review) => (review.request.object.metadata.labels?.second ? {} : patchOf(addLabel(review, 'second', 'done')));
  await configure('mutating', 'reinvoke', [
    hook('first.reinvoke.example.com', '/first', 'reinvoke', { reinvocationPolicy: 'IfNeeded' }),
    hook('second.reinvoke.example.com', '/second', 'reinvoke'),
  ]);
  const r = await createPod(ns, pod('p', { app: 'x' }));
  t.equal(r.status, 201, 'answered 201', { body: r.text });
  const first = callsTo('/first').filter((c) => c.review.request.namespace === ns);
  const second = callsTo('/second').filter((c) => c.review.request.namespace === ns);
  t.equal(first.length, 2, 'the IfNeeded webhook ran twice');
  t.equal(second.length, 1, 'the Never webhook ran once');
  t.equal(first[0].review.request.object.metadata.labels.second, undefined);
  t.equal(first[1].review.request.object.metadata.labels.second, 'done', 'the second call sees the change');
  // no change after it: no second call
  const r2 = await createPod(ns, pod('q', { app: 'x', second: 'done' }));
  t.equal(r2.status, 201);
  t.equal(callsTo('/first').filter((c) => c.review.request.namespace === ns).length, 3, 'no reinvocation without a change');
  await removeConfig('mutating', 'reinvoke');
});

t.test('a webhook behind a service: endpoints, serving certificate for <svc>.<ns>.svc, wildcard credentials', async (t) => {
  await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'wh' } } });
  for (const name of ['webhook-svc', 'impostor-svc']) {
    const svc = await s.request('POST', '/api/v1/namespaces/wh/services', { body: { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ name: 'https', port: 443, targetPort: 8443 }] } } });
    t.equal(svc.status, 201, 'answered 201', { body: svc.text });
    const ep = await s.request('POST', '/api/v1/namespaces/wh/endpoints', { body: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: hooks.port }] }] } });
    t.equal(ep.status, 201, 'answered 201', { body: ep.text });
  }
  const ns = await namespace('service');
  behaviours['/svc'] = (review) => patchOf(addLabel(review, 'via', 'service'));
  const svcRef = (name: string) => ({ clientConfig: { service: { namespace: 'wh', name, path: '/svc' }, caBundle: b64(serviceCA.certPem) } });
  await configure('mutating', 'service', [
    hook('svc.example.com', '', 'service', { ...svcRef('webhook-svc'), objectSelector: { matchLabels: { to: 'good' } } }),
    hook('impostor.example.com', '', 'service', { ...svcRef('impostor-svc'), objectSelector: { matchLabels: { to: 'impostor' } } }),
  ]);
  const r = await createPod(ns, pod('p', { to: 'good' }));
  t.equal(r.status, 201, 'answered 201', { body: r.text });
  t.equal(r.json.metadata.labels.via, 'service');
  t.equal(callsTo('/svc').at(-1)!.auth, 'Bearer svc-token', 'the *.wh.svc credentials');
  const bad = await createPod(ns, pod('q', { to: 'impostor' }));
  t.equal(bad.status, 500, 'the serving certificate is not valid for impostor-svc.wh.svc');
  t.match(bad.json.message, /failed calling webhook "impostor.example.com": failed to call webhook: Post "https:\/\/impostor-svc\.wh\.svc:443\/svc\?timeout=10s": tls: failed to verify certificate/);
  await removeConfig('mutating', 'service');
});

t.test('credentials from the admission configuration: bearer token and client certificate', async (t) => {
  const ns = await namespace('creds');
  behaviours['/token-required'] = (_r, call) => (call.auth === 'Bearer url-token' ? {} : { allowed: false, status: { code: 401, message: 'who are you' } });
  behaviours['/cert-required'] = (_r, call) => (call.clientCN === 'apiserver-admission' ? {} : { allowed: false, status: { code: 401, message: 'no client certificate' } });
  await configure('validating', 'creds', [
    hook('token.creds.example.com', '/token-required', 'creds'),
    { ...hook('cert.creds.example.com', '/cert-required', 'creds'), clientConfig: { url: `${mtls.url}/cert-required`, caBundle: b64(serviceCA.certPem) } },
  ]);
  const r = await createPod(ns, pod('p'));
  t.equal(r.status, 201, 'answered 201', { body: r.text });
  t.equal(callsTo('/cert-required').at(-1)!.clientCN, 'apiserver-admission');
  t.equal(callsTo('/token-required').at(-1)!.auth, 'Bearer url-token');
  await removeConfig('validating', 'creds');
});

t.test('configuration validation', async (t) => {
  const post = (version: string, kind: string, name: string, webhooks: J[]) =>
    s.request('POST', `${AR}/${version}/${kind.toLowerCase()}s`, { body: { apiVersion: `admissionregistration.cluster.io/${version}`, kind, metadata: { name }, webhooks } });
  const dup = await post('v1', 'ValidatingWebhookConfiguration', 'dup', [hook('same.example.com', '/x', 'none'), hook('same.example.com', '/y', 'none')]);
  t.equal(dup.status, 422);
  t.match(dup.json.message, 'webhooks[1].name: Duplicate value: "same.example.com"');
  const betaDup = await post('v1beta1', 'ValidatingWebhookConfiguration', 'dup-beta', [hook('same.example.com', '/x', 'none'), hook('same.example.com', '/y', 'none')]);
  t.equal(betaDup.status, 201, 'v1beta1 allows duplicate names');
  const noSide = await post('v1', 'MutatingWebhookConfiguration', 'noside', [hook('noside.example.com', '/x', 'none', { sideEffects: undefined })]);
  t.equal(noSide.status, 422);
  t.match(noSide.json.message, 'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun');
  const someSide = await post('v1', 'MutatingWebhookConfiguration', 'someside', [hook('some.example.com', '/x', 'none', { sideEffects: 'Some' })]);
  t.equal(someSide.status, 422);
  t.match(someSide.json.message, 'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"');
  const v2 = await post('v1', 'ValidatingWebhookConfiguration', 'v2only', [hook('v2.example.com', '/x', 'none', { admissionReviewVersions: ['v2'] })]);
  t.equal(v2.status, 422, 'no AdmissionReview version the server supports: refused');
  t.match(v2.json.message, 'webhooks[0].admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1');
  const noArv = await post('v1', 'ValidatingWebhookConfiguration', 'noarv', [hook('noarv.example.com', '/x', 'none', { admissionReviewVersions: undefined })]);
  t.equal(noArv.status, 422);
  t.match(noArv.json.message, 'webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1');
  const many = await post('v1', 'ValidatingWebhookConfiguration', 'many', [hook('bad', '/x', 'none', {
    timeoutSeconds: 31, failurePolicy: 'Sometimes',
    clientConfig: { url: 'http://user:pw@example.com/x?q=1#frag' },
    rules: [{ operations: ['CREATE', '*'], apiGroups: [], apiVersions: ['v1'], resources: ['*', 'pods'], scope: 'Everywhere' }],
  })]);
  t.equal(many.status, 422);
  const fields = (many.json.details.causes as J[]).map((c) => `${c.field}: ${c.message}`);
  for (const want of [
    'webhooks[0].name: Invalid value: "bad": should be a domain with at least three segments separated by dots',
    'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds',
    'webhooks[0].failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"',
    "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
    'webhooks[0].clientConfig.url: Invalid value: "user:pw": user information is not permitted in the URL',
    'webhooks[0].clientConfig.url: Invalid value: "frag": fragments are not permitted in the URL',
    'webhooks[0].clientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL',
    'webhooks[0].rules[0].operations: Invalid value: []string{"CREATE", "*"}: if \'*\' is present, must not specify other operations',
    'webhooks[0].rules[0].apiGroups: Required value',
    'webhooks[0].rules[0].resources: Invalid value: []string{"*", "pods"}: if \'*\' is present, must not specify other resources without subresources',
    'webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"',
  ]) t.ok(fields.includes(want), want);
  const svc = await post('v1', 'ValidatingWebhookConfiguration', 'svc', [hook('svc.example.com', '/x', 'none', { clientConfig: { service: { name: '', namespace: '', port: 70000, path: 'no-slash' } } })]);
  t.equal(svc.status, 422);
  const svcCauses = (svc.json.details.causes as J[]).map((c) => `${c.field}: ${c.message}`);
  t.ok(svcCauses.includes('webhooks[0].clientConfig.service.name: Required value: service name is required'));
  t.ok(svcCauses.includes('webhooks[0].clientConfig.service.namespace: Required value: service namespace is required'));
  t.ok(svcCauses.includes('webhooks[0].clientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive'));
  t.ok(svcCauses.includes('webhooks[0].clientConfig.service.path: Invalid value: "no-slash": must start with a \'/\''));
  const both = await post('v1', 'ValidatingWebhookConfiguration', 'both', [hook('both.example.com', '/x', 'none', { clientConfig: {} })]);
  t.match(both.json.message, 'webhooks[0].clientConfig: Required value: exactly one of url or service is required');
  await s.request('DELETE', `${AR}/v1/validatingwebhookconfigurations/dup-beta`);
});

t.test('defaults of v1 and v1beta1', async (t) => {
  const minimal = (version: string): J => ({
    name: 'minimal.example.com',
    clientConfig: { service: { namespace: 'wh', name: 'nothing-here' } },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    ...(version === 'v1' ? { sideEffects: 'None', admissionReviewVersions: ['v1'] } : {}),
    namespaceSelector: { matchLabels: { test: 'never-matches' } },
  });
  const beta = await s.request('POST', `${AR}/v1beta1/mutatingwebhookconfigurations`, { body: { apiVersion: 'admissionregistration.cluster.io/v1beta1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'defaults-beta' }, webhooks: [minimal('v1beta1')] } });
  t.equal(beta.status, 201, 'answered 201', { body: beta.text });
  t.equal(beta.json.apiVersion, 'admissionregistration.cluster.io/v1beta1');
  const b = beta.json.webhooks[0];
  t.match(b, {
    failurePolicy: 'Ignore', matchPolicy: 'Exact', timeoutSeconds: 30, sideEffects: 'Unknown', admissionReviewVersions: ['v1beta1'],
    objectSelector: {}, reinvocationPolicy: 'Never', rules: [{ scope: '*' }], clientConfig: { service: { port: 443 } },
  });
  const v1 = await s.request('POST', `${AR}/v1/mutatingwebhookconfigurations`, { body: { apiVersion: 'admissionregistration.cluster.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'defaults-v1' }, webhooks: [{ ...minimal('v1'), namespaceSelector: undefined }] } });
  t.equal(v1.status, 201, 'answered 201', { body: v1.text });
  t.match(v1.json.webhooks[0], {
    failurePolicy: 'Fail', matchPolicy: 'Equivalent', timeoutSeconds: 10, sideEffects: 'None', admissionReviewVersions: ['v1'],
    namespaceSelector: {}, objectSelector: {}, reinvocationPolicy: 'Never', rules: [{ scope: '*' }], clientConfig: { service: { port: 443 } },
  });
  // the two versions are one collection
  const list = await s.get(`${AR}/v1/mutatingwebhookconfigurations`);
  const names = (list.json.items as J[]).map((i) => i.metadata.name);
  t.ok(names.includes('defaults-beta') && names.includes('defaults-v1'), 'objects of both versions listed together');
  t.equal((await s.get(`${AR}/v1beta1/mutatingwebhookconfigurations/defaults-v1`)).status, 200, 'readable through the other version');
  await s.request('DELETE', `${AR}/v1beta1/mutatingwebhookconfigurations/defaults-beta`);
  await s.request('DELETE', `${AR}/v1/mutatingwebhookconfigurations/defaults-v1`);
});

t.test('a v1beta1 configuration is called with its defaults (failurePolicy Ignore, v1beta1 reviews)', async (t) => {
  const ns = await namespace('beta');
  behaviours['/beta'] = (review) => patchOf(addLabel(review, 'beta', 'yes'));
  await configure('mutating', 'beta', [{ ...hook('beta.example.com', '/beta', 'beta'), sideEffects: 'None', admissionReviewVersions: undefined }], 'v1beta1');
  const r = await createPod(ns, pod('p'));
  t.equal(r.json.metadata.labels.beta, 'yes');
  t.equal(callsTo('/beta').at(-1)!.review.apiVersion, 'admission.cluster.io/v1beta1');
  behaviours['/beta'] = () => ({ raw: (res) => res.writeHead(500).end('down') });
  const down = await createPod(ns, pod('q'));
  t.equal(down.status, 201, 'v1beta1 failurePolicy defaults to Ignore');
  await s.request('DELETE', `${AR}/v1beta1/mutatingwebhookconfigurations/beta`);
});

t.test('new configurations take effect at once, deleted ones stop', async (t) => {
  const ns = await namespace('live');
  behaviours['/live'] = (review) => patchOf(addLabel(review, 'live', 'yes'));
  const before = await createPod(ns, pod('a'));
  t.equal(before.json.metadata.labels?.live, undefined);
  await configure('mutating', 'live', [hook('live.example.com', '/live', 'live')]);
  const during = await createPod(ns, pod('b'));
  t.equal(during.json.metadata.labels?.live, 'yes');
  // a change of the configuration (another path) applies to the next request
  behaviours['/live2'] = (review) => patchOf(addLabel(review, 'live', 'two'));
  const cur = await s.get(`${AR}/v1/mutatingwebhookconfigurations/live`);
  cur.json.webhooks[0].clientConfig.url = `${hooks.url}/live2`;
  t.equal((await s.request('PUT', `${AR}/v1/mutatingwebhookconfigurations/live`, { body: cur.json })).status, 200);
  t.equal((await createPod(ns, pod('c'))).json.metadata.labels?.live, 'two');
  await removeConfig('mutating', 'live');
  const after = await createPod(ns, pod('d'));
  t.equal(after.json.metadata.labels?.live, undefined);
});

t.test('ImagePolicyWebhook: allow, deny, cache, defaultAllow', async (t) => {
  const ns = await namespace('images');
  const before = callsTo('/imagepolicy').length;
  const ok = await createPod(ns, pod('ok', { 'team.image-policy.cluster.io/ticket': 'x' }, 'registry.example.com/app:1'));
  t.equal(ok.status, 201, 'answered 201', { body: ok.text });
  const review = callsTo('/imagepolicy').at(-1)!;
  t.equal(review.review.apiVersion, 'imagepolicy.cluster.io/v1alpha1');
  t.equal(review.review.kind, 'ImageReview');
  t.same(review.review.spec.containers, [{ image: 'registry.example.com/app:1' }]);
  t.equal(review.review.spec.namespace, ns);
  t.equal(review.auth, 'Bearer image-token');
  const withAnn = await createPod(ns, { ...pod('ann', undefined, 'registry.example.com/app:2'), metadata: { name: 'ann', annotations: { 'mycluster.image-policy.cluster.io/ticket-1234': 'break-glass', 'other.example.com/x': 'y' } } });
  t.equal(withAnn.status, 201);
  t.same(callsTo('/imagepolicy').at(-1)!.review.spec.annotations, { 'mycluster.image-policy.cluster.io/ticket-1234': 'break-glass' }, 'only image-policy annotations are sent');
  const denied = await createPod(ns, pod('bad', undefined, 'evil.example.com/denied:1'));
  t.equal(denied.status, 403);
  t.equal(denied.json.message, 'pods "bad" is forbidden: image policy webhook backend denied one or more images: evil.example.com/denied:1 is not from a trusted registry');
  const n = callsTo('/imagepolicy').length;
  t.equal((await createPod(ns, pod('bad2', undefined, 'evil.example.com/denied:1'))).status, 403);
  t.equal(callsTo('/imagepolicy').length, n, 'the denial came from the cache');
  const flaky = await createPod(ns, pod('flaky', undefined, 'registry.example.com/flaky:1'));
  t.equal(flaky.status, 201, 'backend failure with defaultAllow: allowed');
  t.equal(callsTo('/imagepolicy').length, n + 5, 'a failing backend is retried (5 attempts)');
  t.ok(callsTo('/imagepolicy').length > before);

  // a second server whose backend is down and defaultAllow is false
  const closed = https.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const deadPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const strictAdmission = file('admission-strict.json', admissionConfig({ kubeConfigFile: file('images-dead.kubeconfig', imageKubeconfig(`https://127.0.0.1:${deadPort}/imagepolicy`)), retryBackoff: 5 }));
  const strict = await withServer(t, { args: ['--admission-control-config-file', strictAdmission, '--enable-admission-plugins', 'ImagePolicyWebhook'] });
  const r = await strict.request('POST', '/api/v1/namespaces/default/pods', { body: pod('p') });
  t.equal(r.status, 403);
  t.match(r.json.message, /^pods "p" is forbidden: Post "https:\/\/127\.0\.0\.1:\d+\/imagepolicy": dial tcp 127\.0\.0\.1:\d+: connect: connection refused$/);
});

// ---------------------------------------------------------------- pieces, without a server

t.test('rule matching and Equivalent match policy', async (t) => {
  const shape = { operation: 'UPDATE', group: 'apps', version: 'v1', resource: 'deployments', subresource: 'scale', namespaced: true };
  const rule = (resources: string[], more: J = {}) => ({ operations: ['*'], apiGroups: ['apps'], apiVersions: ['v1'], resources, scope: '*', ...more });
  t.ok(ruleMatches(rule(['*/*']), shape));
  t.ok(ruleMatches(rule(['deployments/*']), shape));
  t.ok(ruleMatches(rule(['*/scale']), shape));
  t.notOk(ruleMatches(rule(['*']), shape), '"*" excludes sub-resources');
  t.notOk(ruleMatches(rule(['deployments']), shape));
  t.ok(ruleMatches(rule(['*']), { ...shape, subresource: '' }));
  t.notOk(ruleMatches(rule(['*/*'], { scope: 'Cluster' }), shape));
  t.ok(ruleMatches(rule(['*/*'], { scope: 'Namespaced' }), shape));

  // a group-resource served in two versions
  const types = [{ group: 'widgets.example.com', version: 'v1', kind: 'Widget', resource: 'widgets' }, { group: 'widgets.example.com', version: 'v2', kind: 'Widget', resource: 'widgets' }] as TypeDef[];
  const host = { allTypes: () => types } as unknown as PluginHost;
  const hookFor = (matchPolicy: string) => readWebhooks({
    apiVersion: 'admissionregistration.cluster.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'c' },
    webhooks: [{ name: 'w.example.com', matchPolicy, rules: [{ operations: ['CREATE'], apiGroups: ['widgets.example.com'], apiVersions: ['v1'], resources: ['widgets'] }], clientConfig: { url: 'https://x' } }],
  }, false)[0];
  const attrs = { operation: 'CREATE', kind: { group: 'widgets.example.com', version: 'v2', kind: 'Widget' }, resource: { group: 'widgets.example.com', version: 'v2', resource: 'widgets' }, subresource: '', namespace: 'ns', name: 'w' } as AdmissionAttributes;
  t.equal(matchRules({ ...hookFor('Exact'), index: 0 }, attrs, host), undefined, 'Exact: the v2 request does not match a v1 rule');
  const inv = matchRules({ ...hookFor('Equivalent'), index: 0 }, attrs, host)!;
  t.ok(inv, 'Equivalent: matched through v1');
  t.same(inv.resource, { group: 'widgets.example.com', version: 'v1', resource: 'widgets' }, 'sent as the rule\'s version');
  t.same(inv.kind, { group: 'widgets.example.com', version: 'v1', kind: 'Widget' });
  t.equal(inv.converted, true);
});

t.test('credential lookup in the webhook kubeconfig', async (t) => {
  const kc: Kubeconfig = { file: 'x', clusters: new Map(), contexts: new Map(), currentContext: '', users: new Map([
    ['svc.ns.svc', { token: 'exact' }], ['*.ns.svc', { token: 'wild' }], ['*.svc', { token: 'wilder' }], ['hook.example.com', { token: 'host' }], ['*', { token: 'default' }],
  ]) };
  t.equal(credentialsFor(kc, 'svc.ns.svc')?.token, 'exact');
  t.equal(credentialsFor(kc, 'other.ns.svc')?.token, 'wild');
  t.equal(credentialsFor(kc, 'other.elsewhere.svc')?.token, 'wilder');
  t.equal(credentialsFor(kc, 'svc.ns.svc:8443')?.token, 'default', 'a non-443 port is part of the name');
  t.equal(credentialsFor(kc, 'hook.example.com:443')?.token, 'host', 'an explicit :443 falls back to the bare host');
  t.equal(credentialsFor(kc, 'elsewhere.example.org')?.token, 'default');
  t.equal(credentialsFor(undefined, 'x'), undefined);
});

t.test('the HTTP/1.1 client reads responses however they are framed and split', async (t) => {
  const answers: Record<string, string> = {
    '/chunked': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n3;ext=1\r\n"b"\r\n1\r\n}\r\n0\r\nX-Trailer: 1\r\n\r\n',
    '/length': 'HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{"a":"c"}',
    '/close': 'HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\n\r\nbroken',
    '/continue': 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}',
  };
  let connections = 0;
  const server = tls.createServer({ cert: serving.certPem, key: serving.keyPem }, (sock) => {
    connections++;
    let buf = '';
    sock.on('data', async (d) => {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const len = Number(/content-length: (\d+)/i.exec(buf)![1]);
      if (buf.length < end + 4 + len) return;
      const p = buf.split(' ')[1].split('?')[0];
      buf = '';
      const text = answers[p];
      for (const ch of text) { sock.write(ch); await sleep(0); } // one byte per packet
      if (p === '/close') sock.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const port = (server.address() as AddressInfo).port;
  const http = new Http1Client();
  t.teardown(() => http.close());
  const post = (p: string) => http.post({ poolKey: 'k', group: 'g', host: '127.0.0.1', port, path: p, hostHeader: `127.0.0.1:${port}`, serverName: '127.0.0.1', ca: serviceCA.certPem, headers: [], body: Buffer.from('{}'), timeoutMs: 5000, maxBodyBytes: 100 });
  const chunked = await post('/chunked');
  t.same([chunked.status, chunked.body.toString()], [200, '{"a":"b"}']);
  const length = await post('/length');
  t.same([length.status, length.body.toString()], [200, '{"a":"c"}']);
  t.equal(connections, 1, 'the connection was kept');
  const closed = await post('/close');
  t.same([closed.status, closed.body.toString()], [500, 'broken'], 'a body read until the server closes');
  const cont = await post('/continue');
  t.same([cont.status, cont.body.toString()], [200, '{}'], 'an interim 100 response is skipped');
  t.equal(connections, 2, 'a new connection after the closed one');
  answers['/big'] = `HTTP/1.1 200 OK\r\nContent-Length: 101\r\n\r\n${'x'.repeat(101)}`;
  await t.rejects(post('/big'), { message: 'response body larger than 100 bytes' });
});

t.test('the metrics counter API', async (t) => {
  const webhookMetrics = new WebhookMetrics();
  webhookMetrics.reject('w.example.com', 'CREATE', 'admit', 'no_error', 700);
  webhookMetrics.reject('w.example.com', 'CREATE', 'admit', 'no_error', 700);
  webhookMetrics.observe('w.example.com', 'validating', 'CREATE', false, 0.02);
  t.same([...webhookMetrics.rejections], [[JSON.stringify({ name: 'w.example.com', operation: 'CREATE', type: 'admit', error_type: 'no_error', rejection_code: '600' }), 2]], 'codes above 600 count as 600');
  const d = webhookMetrics.durations.get(JSON.stringify({ name: 'w.example.com', type: 'validating', operation: 'CREATE', rejected: 'false' }))!;
  t.equal(d.count, 1);
  t.same(d.buckets, [0, 1, 1, 1, 1, 1, 1, 1, 1]);
});

t.test('each server (plugin host) has its own webhook counts: several servers in one process', async (t) => {
  const hostA = {}, hostB = {};
  t.equal(webhookMetricsFor(hostA), webhookMetricsFor(hostA), 'the mutating and validating plugins of one server share them');
  webhookMetricsFor(hostA).reject('w.example.com', 'CREATE', 'admit', 'no_error', 403);
  t.equal(webhookMetricsFor(hostA).rejections.size, 1);
  t.equal(webhookMetricsFor(hostB).rejections.size, 0, 'another server counts nothing of it');
});

// ---------------------------------------------------------------- throughput (opt-in)

t.test('throughput: creates/s with one mutating and one validating webhook vs none', { skip: process.env.WEBHOOK_BENCH ? false : 'set WEBHOOK_BENCH=1 to measure' }, async (t) => {
  const seconds = Number(process.env.WEBHOOK_BENCH_SECONDS ?? 5);
  const concurrency = 32;
  const run = async (ns: string, label: string) => {
    let n = 0, errors = 0;
    const end = Date.now() + seconds * 1000;
    await Promise.all(Array.from({ length: concurrency }, async (_, w) => {
      for (let i = 0; Date.now() < end; i++) {
        const r = await s.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${label}-${w}-${i}` }, data: { k: 'v' } } });
        if (r.status === 201) n++; else errors++;
      }
    }));
    return { rate: n / seconds, errors };
  };
  const plain = await namespace('bench-plain');
  const hooked = await namespace('bench');
  behaviours['/bench-mutate'] = (review) => patchOf(addLabel(review, 'benched', 'yes'));
  behaviours['/bench-validate'] = () => ({});
  const onConfigMaps = { rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] };
  await configure('mutating', 'bench', [hook('mutate.bench.example.com', '/bench-mutate', 'bench', onConfigMaps)]);
  await configure('validating', 'bench', [hook('validate.bench.example.com', '/bench-validate', 'bench', onConfigMaps)]);
  await run(plain, 'warm'); // warm up
  const without = await run(plain, 'plain');
  const withHooks = await run(hooked, 'hooked');
  const ratio = withHooks.rate / without.rate;
  t.comment(`creates/s without webhooks: ${without.rate.toFixed(0)}; with a mutating and a validating webhook: ${withHooks.rate.toFixed(0)} (${(ratio * 100).toFixed(0)}%)`);
  t.equal(without.errors + withHooks.errors, 0, 'no failed creates');
  t.ok(ratio >= 0.5, 'at least half the throughput with webhooks');
  await removeConfig('mutating', 'bench');
  await removeConfig('validating', 'bench');
});

