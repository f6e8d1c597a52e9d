// The request timeout (issue 20): every request that is not long-running is answered by
// --request-timeout (or its shorter ?timeout=) with the reference's 504, and its API Priority and
// Fairness seat comes back then, or as soon as its client goes away, so a flood of requests that
// cannot complete (here: held by a validating webhook that never answers) never locks other users out.
import t, { type Test } from 'tap';
import https from 'node:https';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { withServer, type TestServer } from '../lib/server.js';
import { until } from '../lib/poll.js';
import { generateCA, signCert } from '../../kernel/ops/pki.js';

type J = Record<string, any>;
const AR = '/apis/admissionregistration.k8s.io/v1';
const RBAC = 'rbac.authorization.k8s.io';
/** The reference's timeout writer: the bare Status JSON-encoded, a newline, no Content-Type of its own (Go sniffs text/plain). */
const TIMEOUT_BODY = '{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}\n';

// A webhook server that takes every review and never answers it.
const ca = await generateCA({ CN: 'timeout-webhook-ca' });
const serving = await signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: 'webhook' }, ips: ['127.0.0.1'], usages: ['serverAuth'], days: 1 });
const held = new Set<ServerResponse>();
let reviews = 0;
const hooks = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
  req.resume();
  req.on('end', () => { reviews++; held.add(res); });
});
await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
/** Fails every review still held (so the server's own work behind timed-out requests ends). */
const releaseHeld = () => { for (const r of held) r.destroy(); held.clear(); };
t.teardown(() => { releaseHeld(); hooks.closeAllConnections(); hooks.close(); });

/** A server whose ConfigMaps labelled hang=yes wait on the webhook (30 s, its longest timeout), and user alice may do anything. */
async function serverWithHangingWebhook(t: Test, args: string[]): Promise<TestServer> {
  // few seats in all, so a handful of held requests fill alice's priority level
  const s = await withServer(t, { brand: 'kubernetes', args: ['--max-requests-inflight=20', '--max-mutating-requests-inflight=10', ...args] });
  t.teardown(releaseHeld);
  const bind = await s.request('POST', `/apis/${RBAC}/v1/clusterrolebindings`, {
    body: { apiVersion: `${RBAC}/v1`, kind: 'ClusterRoleBinding', metadata: { name: 'alice-admin' }, roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'User', apiGroup: RBAC, name: 'alice' }] },
  });
  t.equal(bind.status, 201);
  const hook = await s.request('POST', `${AR}/validatingwebhookconfigurations`, { body: {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'never-answers' },
    webhooks: [{
      name: 'never.answers.example.com', clientConfig: { url: `https://127.0.0.1:${(hooks.address() as AddressInfo).port}/hang`, caBundle: Buffer.from(ca.certPem).toString('base64') },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      objectSelector: { matchLabels: { hang: 'yes' } }, timeoutSeconds: 30, failurePolicy: 'Fail', sideEffects: 'None', admissionReviewVersions: ['v1'],
    }],
  } });
  t.equal(hook.status, 201);
  return s;
}

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; text: string }

/** One request as alice on its own connection; `abort` lets the test hang up before the answer. */
function asAlice(s: TestServer, method: string, p: string, body?: unknown): { done: Promise<Answer>; abort(): void } {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const req = https.request({
    host: '127.0.0.1', port: s.port, method, path: p, ca: s.ca, agent: false,
    headers: { authorization: `Bearer ${s.token}`, 'impersonate-user': 'alice', accept: 'application/json', ...(text ? { 'content-type': 'application/json' } : {}) },
  });
  const done = new Promise<Answer>((resolve) => {
    req.on('response', (res) => {
      let out = '';
      res.on('data', (d) => (out += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: out }));
    });
    req.on('error', (e) => resolve({ status: 0, headers: {}, text: e.message }));
  });
  req.end(text);
  return { done, abort: () => req.destroy() };
}

const held$ = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { hang: 'yes' } } });

/** alice's priority level (global-default) as the metrics show it: its seats now, and the requests executing in it. */
async function level(s: TestServer): Promise<{ seats: number; executing: number }> {
  const m = (await s.get('/metrics')).text;
  const val = (name: string) => Number(new RegExp(`^${name}\\{[^}]*priority_level="global-default"[^}]*\\} (\\S+)$`, 'm').exec(m)?.[1] ?? NaN);
  return { seats: val('apiserver_flowcontrol_current_limit_seats'), executing: val('apiserver_flowcontrol_current_executing_requests') };
}

/** As many GETs as alice's level has seats, and two more, at once: all answered 200 only when no seat is held. */
async function aliceIsServed(t: Test, s: TestServer, seats: number): Promise<void> {
  const gets = await Promise.all(Array.from({ length: seats + 2 }, () => asAlice(s, 'GET', '/api/v1/namespaces/default/configmaps').done));
  t.same(gets.map((g) => g.status), gets.map(() => 200), 'alice is served again: every seat came back');
}

t.test('--request-timeout: requests held past it end in the reference\'s 504 and give their seats back', async (t) => {
  const s = await serverWithHangingWebhook(t, ['--request-timeout=2s']);
  const { seats } = await level(s);
  t.ok(seats >= 1, `alice's level has ${seats} seats`);
  const before = reviews;
  // one held request per seat: the level is full while they wait on the webhook
  const answers = await Promise.all(Array.from({ length: seats }, (_, i) => asAlice(s, 'POST', '/api/v1/namespaces/default/configmaps', held$(`held-${i}`)).done));
  t.equal(reviews - before, seats, 'each one was held by the webhook');
  for (const a of answers) {
    t.equal(a.status, 504);
    t.equal(a.text, TIMEOUT_BODY);
    t.equal(a.headers['content-type'], 'text/plain; charset=utf-8');
    t.notOk(a.headers['x-kubernetes-pf-flowschema-uid'], 'the handler\'s headers are not sent with the timeout, as in the reference');
  }
  const after = await level(s);
  t.equal(after.executing, 0, 'nothing executes in alice\'s level any more');
  await aliceIsServed(t, s, after.seats);

  await t.test('?timeout= longer than the server\'s is capped by it; a bad one is a 400', async (t) => {
    const capped = await s.request('POST', '/api/v1/namespaces/default/configmaps?timeout=1h', { body: held$('capped') });
    t.equal(capped.status, 504);
    t.equal(capped.text, TIMEOUT_BODY);
    for (const [v, msg] of [['soon', 'time: invalid duration "soon"'], ['5', 'time: missing unit in duration "5"'], ['5y', 'time: unknown unit "y" in duration "5y"']]) {
      const r = await s.get(`/api/v1/namespaces?timeout=${v}`);
      t.equal(r.status, 400, v);
      t.equal(r.json.reason, 'BadRequest');
      t.equal(r.json.message, `invalid timeout specified in the request URL - ${msg}`);
    }
    t.equal((await s.get('/api/v1/namespaces?timeout=0s')).status, 200, '0 leaves the server\'s timeout');
  });

  await t.test('watches are long-running: no timeout ends them', async (t) => {
    const lines: unknown[] = [];
    const w = s.stream('/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=4', (l) => lines.push(l));
    const code = await w.done;
    t.equal(code, 200, 'the watch ran its own 4 s, past the 2 s request timeout, and ended normally');
    t.ok(lines.length > 0, 'with its events');
  });
});

t.test('?timeout= shortens the server\'s timeout; a client that hangs up gives its seat back at once', async (t) => {
  // the server's own timeout is longer than the webhook's 30 s: what ends these requests is the test's
  const s = await serverWithHangingWebhook(t, ['--request-timeout=2m']);
  const short = await s.request('POST', '/api/v1/namespaces/default/configmaps?timeout=1s', { body: held$('short') });
  t.equal(short.status, 504, 'ended by its own 1 s, long before the webhook\'s 30 s would have failed it (500)');
  t.equal(short.text, TIMEOUT_BODY);

  const { seats } = await level(s);
  const before = reviews;
  const calls = Array.from({ length: seats }, (_, i) => asAlice(s, 'POST', '/api/v1/namespaces/default/configmaps', held$(`gone-${i}`)));
  await until(() => reviews - before, (n) => n === seats, 60_000);
  t.equal((await level(s)).executing, seats, 'all of them hold a seat of alice\'s level');
  for (const c of calls) c.abort();
  // (the webhook would hold them 30 s)
  const after = await until(() => level(s), (l) => l.executing === 0, 60_000);
  t.equal(after.executing, 0, 'their seats came back when their clients hung up');
  await aliceIsServed(t, s, after.seats);
});
