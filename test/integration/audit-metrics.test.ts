// Audit logging (the log backend with a policy file, rotation) and /metrics, against a real server.
import t from 'tap';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot, sleep, withServer, type TestServer } from '../lib/server.js';

const fixture = path.join(repoRoot, 'test/fixtures/annotating-admission/index.js');
const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

const policy = `apiVersion: audit.cluster.io/v1
kind: Policy
rules:
  - level: None
    nonResourceURLs: ["/healthz*", "/livez*", "/readyz*"]
  - level: Metadata
    nonResourceURLs: ["/metrics"]
    omitStages: ["RequestReceived"]
  - level: RequestResponse
    users: ["system:anonymous"]
    verbs: ["create"]
  - level: None
    verbs: ["list"]
    resources:
      - group: ""
        resources: ["configmaps"]
  - level: RequestResponse
    namespaces: ["rr"]
  - level: Request
    resources:
      - group: ""
        resources: ["secrets"]
  - level: Metadata
    userGroups: ["system:masters"]
    omitStages: ["RequestReceived"]
  - level: Request
`;

/** The complete lines of the log: the server may be halfway through appending the last one. */
function readEvents(file: string): any[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** Polls the log until the events of one audit ID satisfy `done` (events are written after the response). */
async function eventsOf(file: string, id: string, done: (evs: any[]) => boolean = (evs) => evs.some((e) => e.stage === 'ResponseComplete')): Promise<any[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const evs = readEvents(file).filter((e) => e.auditID === id);
    if (done(evs) || Date.now() > deadline) return evs;
    await sleep(20);
  }
}

function scrape(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const out: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`bad exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const lm of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[lm[1]] = lm[2];
    out.push({ name: m[1], labels, value: m[3] === '+Inf' ? Infinity : Number(m[3]) });
  }
  return out;
}

const pick = (samples: ReturnType<typeof scrape>, name: string, labels: Record<string, string>) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

t.test('audit log with a policy file, and /metrics', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-audit-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const policyFile = path.join(dir, 'policy.yaml');
  writeFileSync(policyFile, policy);
  const config = path.join(dir, 'config.yaml');
  writeFileSync(config, `admission:\n  - plugin: NamespaceLifecycle\n  - plugin: ${JSON.stringify(fixture)}\n`);
  const log = path.join(dir, 'logs', 'audit.log');
  const s: TestServer = await withServer(t, { args: ['--config', config, '--audit-log-path', log, '--audit-policy-file', policyFile, '--authorization-mode=AlwaysAllow'] });
  const cm = (name: string, ns = 'default') => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { k: 'v' } });

  await t.test('Metadata by user group: metadata only, RequestReceived omitted, admission annotation', async (t) => {
    const r = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('meta'), headers: { 'user-agent': 'audit-test/1.0' } });
    t.equal(r.status, 201, r.text);
    const id = r.headers['audit-id'] as string;
    t.match(id, /^[0-9a-f-]{36}$/, 'Audit-Id header');
    const evs = await eventsOf(log, id);
    t.same(evs.map((e) => e.stage), ['ResponseComplete'], 'only ResponseComplete');
    const e = evs[0];
    t.equal(e.kind, 'Event');
    t.equal(e.apiVersion, 'audit.cluster.io/v1');
    t.equal(e.level, 'Metadata');
    t.equal(e.auditID, id, 'auditID equals the Audit-Id header');
    t.equal(e.requestURI, '/api/v1/namespaces/default/configmaps');
    t.equal(e.verb, 'create');
    t.equal(e.user.username, 'admin');
    t.ok(e.user.groups.includes('system:masters'));
    t.notOk('impersonatedUser' in e);
    t.ok(Array.isArray(e.sourceIPs) && e.sourceIPs.length > 0, 'sourceIPs');
    t.equal(e.userAgent, 'audit-test/1.0');
    t.same(e.objectRef, { resource: 'configmaps', namespace: 'default', name: 'meta', apiVersion: 'v1' });
    t.same(e.responseStatus, { metadata: {}, code: 201 });
    t.notOk('requestObject' in e, 'no requestObject at Metadata');
    t.notOk('responseObject' in e, 'no responseObject at Metadata');
    t.match(e.requestReceivedTimestamp, TS);
    t.match(e.stageTimestamp, TS);
    t.ok(e.stageTimestamp >= e.requestReceivedTimestamp);
    t.same(e.annotations, { 'authorization.cluster.io/decision': 'allow', 'authorization.cluster.io/reason': '', 'example.com/x': 'y' }, 'Request-level annotation left out');
    t.same(Object.keys(e), ['kind', 'apiVersion', 'level', 'auditID', 'stage', 'requestURI', 'verb', 'user', 'sourceIPs', 'userAgent', 'objectRef', 'responseStatus', 'requestReceivedTimestamp', 'stageTimestamp', 'annotations'], 'field order of the reference');
  });

  await t.test('None by verb and resource: no events, Audit-Id still set', async (t) => {
    const r = await s.get('/api/v1/namespaces/default/configmaps');
    t.equal(r.status, 200);
    const id = r.headers['audit-id'] as string;
    t.match(id, /^[0-9a-f-]{36}$/);
    // a later audited request's event proves the log has caught up past this one
    const later = await s.get('/api/v1/namespaces/default/configmaps/meta');
    await eventsOf(log, later.headers['audit-id'] as string);
    t.same(readEvents(log).filter((e) => e.auditID === id), []);
  });

  await t.test('Request by resource: the request object, no response object', async (t) => {
    const body = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sec', namespace: 'default' }, stringData: { password: 'p' } };
    const r = await s.request('POST', '/api/v1/namespaces/default/secrets', { body });
    t.equal(r.status, 201, r.text);
    const evs = await eventsOf(log, r.headers['audit-id'] as string);
    t.same(evs.map((e) => e.stage), ['RequestReceived', 'ResponseComplete']);
    const [rr, rc] = evs;
    t.equal(rr.level, 'Request');
    t.notOk('responseStatus' in rr, 'RequestReceived has no response status');
    t.notOk('requestObject' in rr, 'the body is not read yet at RequestReceived');
    t.equal(rc.level, 'Request');
    t.same(rc.requestObject, body, 'requestObject as sent');
    t.notOk('responseObject' in rc);
    t.equal(rc.responseStatus.code, 201);
    t.equal(rc.annotations['example.com/x'], 'y');
    t.equal(rc.annotations['example.com/detail'], 'CREATE secrets', 'Request-level annotation at level Request');
    t.equal(rc.auditID, rr.auditID);
    t.equal(rc.requestReceivedTimestamp, rr.requestReceivedTimestamp);
  });

  await t.test('RequestResponse by namespace: request and response objects', async (t) => {
    t.equal((await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'rr' } } })).status, 201);
    const r = await s.request('POST', '/api/v1/namespaces/rr/configmaps', { body: cm('full', 'rr') });
    t.equal(r.status, 201, r.text);
    const evs = await eventsOf(log, r.headers['audit-id'] as string);
    const e = evs.find((x) => x.stage === 'ResponseComplete');
    t.equal(e.level, 'RequestResponse');
    t.same(e.requestObject, cm('full', 'rr'));
    t.same(e.responseObject, r.json, 'responseObject is what the client got');
    t.equal(e.responseObject.metadata.uid, r.json.metadata.uid);
    t.same(e.objectRef, { resource: 'configmaps', namespace: 'rr', name: 'full', apiVersion: 'v1' });
  });

  await t.test('RequestResponse by user and verb; the catch-all rule for the same user otherwise', async (t) => {
    const c = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('anon'), token: null });
    t.equal(c.status, 201, c.text);
    const ce = (await eventsOf(log, c.headers['audit-id'] as string)).find((x) => x.stage === 'ResponseComplete');
    t.equal(ce.level, 'RequestResponse');
    t.same(ce.user, { username: 'system:anonymous', groups: ['system:unauthenticated'] });
    t.equal(ce.responseObject.metadata.name, 'anon');
    const g = await s.request('GET', '/api/v1/namespaces/default/configmaps/anon', { token: null });
    t.equal(g.status, 200);
    const ge = await eventsOf(log, g.headers['audit-id'] as string);
    t.same(ge.map((e) => [e.stage, e.level]), [['RequestReceived', 'Request'], ['ResponseComplete', 'Request']]);
    t.notOk('requestObject' in ge[1], 'a GET has no request object');
    t.notOk('responseObject' in ge[1]);
  });

  await t.test('errors: the Status in responseStatus; failed authentication', async (t) => {
    const r = await s.get('/api/v1/namespaces/default/configmaps/missing');
    t.equal(r.status, 404);
    const [e] = await eventsOf(log, r.headers['audit-id'] as string);
    t.same(e.responseStatus, { metadata: {}, status: 'Failure', message: 'configmaps "missing" not found', reason: 'NotFound', details: { name: 'missing', kind: 'configmaps' }, code: 404 });
    const u = await s.request('GET', '/api/v1/namespaces/default/configmaps/meta', { token: 'not-a-token' });
    t.equal(u.status, 401);
    const ue = await eventsOf(log, u.headers['audit-id'] as string);
    t.same(ue.map((x) => x.stage), ['ResponseComplete'], 'no RequestReceived without a user');
    t.same(ue[0].user, {});
    t.equal(ue[0].level, 'Request', 'the policy ran with no user');
    t.equal(ue[0].responseStatus.code, 401);
    t.notOk(ue[0].annotations, 'no authorization decision');
  });

  await t.test('impersonation: user is the caller, impersonatedUser the target', async (t) => {
    const r = await s.get('/api/v1/namespaces/default/configmaps/meta', { 'impersonate-user': 'bob', 'impersonate-group': 'team' });
    t.equal(r.status, 200, r.text);
    const [e] = await eventsOf(log, r.headers['audit-id'] as string);
    t.equal(e.level, 'Metadata', 'the policy sees the authenticated caller');
    t.equal(e.user.username, 'admin');
    t.same(e.impersonatedUser, { username: 'bob', groups: ['team', 'system:authenticated'] });
    t.equal(e.verb, 'get');
  });

  await t.test('delete: admission annotations and the object reference', async (t) => {
    const r = await s.request('DELETE', '/api/v1/namespaces/default/secrets/sec');
    t.equal(r.status, 200, r.text);
    const evs = await eventsOf(log, r.headers['audit-id'] as string);
    const e = evs.find((x) => x.stage === 'ResponseComplete');
    t.equal(e.verb, 'delete');
    t.same(e.objectRef, { resource: 'secrets', namespace: 'default', name: 'sec', apiVersion: 'v1' });
    t.equal(e.annotations['example.com/detail'], 'DELETE secrets');
  });

  await t.test('watch: ResponseStarted, then ResponseComplete when the stream ends', async (t) => {
    const w = s.stream('/api/v1/namespaces/rr/configmaps?watch=1&timeoutSeconds=1', () => {});
    await w.done;
    let evs: any[] = [];
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      evs = readEvents(log).filter((e) => e.verb === 'watch' && e.objectRef?.namespace === 'rr');
      if (evs.some((e) => e.stage === 'ResponseComplete')) break;
      await sleep(20);
    }
    t.same(evs.map((e) => e.stage), ['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
    t.equal(new Set(evs.map((e) => e.auditID)).size, 1, 'one audit ID');
    t.equal(evs[1].responseStatus.code, 200);
    t.equal(evs[2].responseStatus.code, 200);
    t.notOk('responseObject' in evs[2], 'a stream has no response object');
    t.equal(evs[0].requestURI, '/api/v1/namespaces/rr/configmaps?watch=1&timeoutSeconds=1');
  });

  await t.test('/metrics: request counts, durations, storage and watcher gauges, plugin metrics', async (t) => {
    // a few more requests of known shapes
    t.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { body: cm('dry') })).status, 201);
    t.equal((await s.get('/api/v1/configmaps')).status, 200);
    t.equal((await s.get('/metrics')).status, 200, 'counted by the next scrape');
    const w = s.stream('/api/v1/namespaces/default/configmaps?watch=1', () => {});
    let samples: ReturnType<typeof scrape> = [];
    let r;
    const deadline = Date.now() + 5000;
    do {
      r = await s.get('/metrics');
      samples = scrape(r.text);
    } while (!pick(samples, 'apiserver_registered_watchers', { kind: 'ConfigMap' }).length && Date.now() < deadline && (await sleep(20), true));
    t.equal(r.status, 200);
    t.match(r.headers['content-type'], /^text\/plain; version=0\.0\.4/);
    t.match(r.text, /^# HELP apiserver_request_total \[STABLE\] /m);
    t.match(r.text, /^# TYPE apiserver_request_total counter$/m);

    const posts = pick(samples, 'apiserver_request_total', { verb: 'POST', resource: 'configmaps', code: '201', dry_run: '' });
    t.equal(posts.length, 1, 'one series for created configmaps');
    t.same(posts[0].labels, { verb: 'POST', dry_run: '', group: '', version: 'v1', resource: 'configmaps', subresource: '', scope: 'resource', component: 'apiserver', code: '201' });
    t.ok(posts[0].value >= 3, `created configmaps counted (${posts[0].value})`);
    t.equal(pick(samples, 'apiserver_request_total', { verb: 'POST', resource: 'configmaps', code: '201', dry_run: 'All' })[0]?.value, 1, 'dry_run label');
    t.ok(pick(samples, 'apiserver_request_total', { verb: 'LIST', resource: 'configmaps', scope: 'namespace', code: '200' })[0]?.value >= 1, 'LIST in a namespace');
    t.ok(pick(samples, 'apiserver_request_total', { verb: 'LIST', resource: 'configmaps', scope: 'cluster', code: '200' })[0]?.value >= 1, 'LIST across namespaces');
    t.ok(pick(samples, 'apiserver_request_total', { verb: 'GET', resource: 'configmaps', code: '404' })[0]?.value >= 1, 'GET 404');
    t.ok(pick(samples, 'apiserver_request_total', { verb: 'GET', resource: 'configmaps', code: '401' })[0]?.value >= 1, 'GET 401');
    t.ok(pick(samples, 'apiserver_request_total', { verb: 'WATCH', resource: 'configmaps', code: '200' })[0]?.value >= 1, 'WATCH');
    t.ok(pick(samples, 'apiserver_request_total', { verb: 'DELETE', resource: 'secrets', code: '200' })[0]?.value >= 1, 'DELETE');
    t.ok(pick(samples, 'apiserver_request_total', { verb: 'GET', subresource: '/metrics', scope: '', code: '200' })[0]?.value >= 1, 'non-resource path');

    t.match(r.text, /^# TYPE apiserver_request_duration_seconds histogram$/m);
    const sel = { verb: 'POST', resource: 'configmaps', dry_run: '' };
    const buckets = pick(samples, 'apiserver_request_duration_seconds_bucket', sel);
    t.same(buckets.map((b) => b.labels.le), ['0.005', '0.025', '0.05', '0.1', '0.2', '0.4', '0.6', '0.8', '1', '1.25', '1.5', '2', '3', '4', '5', '6', '8', '10', '15', '20', '30', '45', '60', '+Inf'], 'reference buckets');
    for (let i = 1; i < buckets.length; i++) t.ok(buckets[i].value >= buckets[i - 1].value, 'cumulative');
    const count = pick(samples, 'apiserver_request_duration_seconds_count', sel)[0];
    t.equal(count.value, buckets[buckets.length - 1].value, '_count equals the +Inf bucket');
    t.equal(count.value, posts[0].value, 'one observation per request');
    t.ok(pick(samples, 'apiserver_request_duration_seconds_sum', sel)[0].value > 0);
    t.same(pick(samples, 'apiserver_request_duration_seconds_count', { verb: 'WATCH' }), [], 'watches are not timed');

    t.ok(pick(samples, 'apiserver_storage_objects', { resource: 'configmaps' })[0]?.value >= 3, 'stored configmaps');
    t.ok(pick(samples, 'apiserver_storage_objects', { resource: 'namespaces' })[0]?.value >= 4, 'stored namespaces');
    t.ok(pick(samples, 'apiserver_storage_objects', { resource: 'deployments.apps' }).length === 1, 'named groups as resource.group');
    t.same(pick(samples, 'apiserver_registered_watchers', { kind: 'ConfigMap' }).map((x) => [x.labels, x.value]), [[{ group: '', version: 'v1', kind: 'ConfigMap' }, 1]], 'the open watch');
    t.ok(pick(samples, 'apiserver_storage_current_revision', {})[0]?.value > 0);
    t.ok(pick(samples, 'apiserver_storage_compacted_revision', {}).length === 1);
    t.match(r.text, /^# TYPE apiserver_requested_deprecated_apis gauge$/m, 'deprecated APIs gauge declared');
    t.match(r.text, /^# TYPE apiserver_admission_webhook_rejection_count counter$/m, 'webhook rejection counter declared');
    t.match(r.text, /^# TYPE apiserver_admission_webhook_admission_duration_seconds histogram$/m);
    t.ok(pick(samples, 'apiserver_audit_event_total', {})[0]?.value > 0, 'audit events counted');
    t.ok(pick(samples, 'apiserver_audit_level_total', { level: 'None' })[0]?.value >= 1);

    t.match(r.text, /^# HELP example_admission_calls_total Calls of the annotating test admission plugin\.$/m, 'plugin metric');
    t.ok(pick(samples, 'example_admission_calls_total', { operation: 'CREATE' })[0]?.value >= 5, 'plugin counter counts');
    t.ok(pick(samples, 'example_admission_calls_total', { operation: 'DELETE' })[0]?.value >= 1);

    w.close();
    await w.done;
    const deadline2 = Date.now() + 5000;
    while (Date.now() < deadline2) {
      samples = scrape((await s.get('/metrics')).text);
      if (!pick(samples, 'apiserver_registered_watchers', { kind: 'ConfigMap' }).length) break;
      await sleep(20);
    }
    t.same(pick(samples, 'apiserver_registered_watchers', { kind: 'ConfigMap' }), [], 'the watcher is gone');

    // /metrics is authorized and audited like any non-resource path
    const m = await s.get('/metrics');
    const [me] = await eventsOf(log, m.headers['audit-id'] as string);
    t.equal(me.verb, 'get');
    t.equal(me.requestURI, '/metrics');
    t.notOk('objectRef' in me);
    t.equal(me.annotations['authorization.cluster.io/decision'], 'allow');
    t.same(readEvents(log).filter((e) => e.requestURI.startsWith('/healthz')), [], 'health checks at None');
  });
});

t.test('audit log rotation by size', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-audit-rot-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const policyFile = path.join(dir, 'policy.yaml');
  writeFileSync(policyFile, 'apiVersion: audit.cluster.io/v1\nkind: Policy\nomitStages: ["RequestReceived"]\nrules:\n  - level: RequestResponse\n');
  const log = path.join(dir, 'audit.log');
  const s = await withServer(t, { args: ['--audit-log-path', log, '--audit-policy-file', policyFile, '--audit-log-maxsize', '1', '--audit-log-maxbackup', '2', '--audit-log-maxage', '30', '--authorization-mode=AlwaysAllow'] });
  const big = 'x'.repeat(200 * 1024);
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const r = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { big } } });
    t.equal(r.status, 201);
    ids.push(r.headers['audit-id'] as string);
  }
  await eventsOf(log, ids[ids.length - 1]);
  const backups = readdirSync(dir).filter((f) => f.startsWith('audit-')).sort();
  t.equal(backups.length, 2, `at most --audit-log-maxbackup rotated files are kept (${backups.join(', ')})`);
  for (const b of backups) t.match(b, /^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log$/, 'backup name');
  const limit = 1024 * 1024;
  for (const f of ['audit.log', ...backups]) t.ok(statSync(path.join(dir, f)).size <= limit, `${f} within --audit-log-maxsize`);
  const kept = [...backups.flatMap((b) => readEvents(path.join(dir, b))), ...readEvents(log)];
  const keptIds = kept.map((e) => e.auditID);
  t.ok(keptIds.includes(ids[ids.length - 1]), 'newest event kept');
  t.notOk(keptIds.includes(ids[0]), 'oldest events rotated away');
  for (const e of kept) if (e.verb === 'create') t.equal(e.requestObject.data.big.length, big.length);
  // the retained events are consecutive: newest files, in order
  const created = kept.filter((e) => e.verb === 'create').map((e) => ids.indexOf(e.auditID));
  t.same(created, [...created].sort((a, b) => a - b), 'in order across files');
});

t.test('/metrics is authorized as a non-resource path', async (t) => {
  const s = await withServer(t, { args: ['--authorization-mode', 'AlwaysDeny'] });
  const r = await s.get('/metrics');
  t.equal(r.status, 403);
  t.match(r.json.message, /cannot get path "\/metrics"/);
  t.notOk(r.headers['audit-id'], 'no Audit-Id without audit backends');
});
