// Objects the server keeps in place: the system PriorityClasses, the API Priority and Fairness
// configuration (mandatory and suggested), the root CA ConfigMap in every namespace; and the Job
// strategy's generated selector and labels.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { withServer, sleep, type TestServer } from '../lib/server.js';
import { kubectl, kubectlRelease } from '../lib/kubectl.js';
import { etcdMissing, startEtcd } from '../lib/etcd.js';
import { until } from '../lib/poll.js';

const merge = { 'content-type': 'application/merge-patch+json' };

t.test('system objects (kubernetes brand)', async (t) => {
  const s: TestServer = await withServer(t, { brand: 'kubernetes' });
  // System PriorityClasses.
  const pcs = (await s.get('/apis/scheduling.k8s.io/v1/priorityclasses')).json.items;
  t.same(pcs.map((p: { metadata: { name: string }; value: number }) => [p.metadata.name, p.value]), [['system-cluster-critical', 2000000000], ['system-node-critical', 2000001000]]);
  // They cannot be deleted one by one (the reference's REST Delete), and their names are reserved.
  const del = await s.request('DELETE', '/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical');
  t.equal(del.status, 403);
  t.match(del.json, { reason: 'Forbidden', message: 'priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted', details: { name: 'system-node-critical', group: 'scheduling.k8s.io', kind: 'priorityclasses' } });
  t.equal((await s.get('/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical')).status, 200, 'still there');
  const reserved = await s.request('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { body: { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'system-mine' }, value: 10 } });
  t.match(reserved.json, { code: 422, message: /metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class/ });

  // APF configuration.
  const FC = '/apis/flowcontrol.apiserver.k8s.io/v1beta3';
  const pls = (await s.get(`${FC}/prioritylevelconfigurations`)).json.items.map((o: { metadata: { name: string } }) => o.metadata.name);
  for (const n of ['exempt', 'catch-all', 'system', 'node-high', 'leader-election', 'workload-high', 'workload-low', 'global-default']) t.ok(pls.includes(n), `priority level ${n}`);
  const fss = (await s.get(`${FC}/flowschemas`)).json.items;
  t.equal(fss.length, 13);
  const exemptFs = fss.find((o: { metadata: { name: string } }) => o.metadata.name === 'exempt');
  t.equal(exemptFs.metadata.annotations['apf.kubernetes.io/autoupdate-spec'], 'true');
  t.same(exemptFs.spec.rules[0].subjects, [{ kind: 'Group', group: { name: 'system:masters' } }]);
  // A mandatory object is put back when changed or deleted.
  await s.request('PATCH', `${FC}/prioritylevelconfigurations/catch-all`, { body: { spec: { limited: { nominalConcurrencyShares: 99 } } }, headers: merge });
  const reset = await until(async () => (await s.get(`${FC}/prioritylevelconfigurations/catch-all`)).json, (o) => o.spec.limited.nominalConcurrencyShares === 5);
  t.equal(reset.spec.limited.nominalConcurrencyShares, 5, 'mandatory spec reset');
  await s.request('DELETE', `${FC}/flowschemas/catch-all`);
  t.equal((await until(() => s.get(`${FC}/flowschemas/catch-all`), (r) => r.status === 200)).status, 200, 'mandatory schema recreated');
  // A suggested one the operator took over (autoupdate off) keeps the operator's spec.
  await s.request('PATCH', `${FC}/flowschemas/service-accounts`, { body: { metadata: { annotations: { 'apf.kubernetes.io/autoupdate-spec': 'false' } }, spec: { matchingPrecedence: 8000 } }, headers: merge });
  await sleep(300);
  t.equal((await s.get(`${FC}/flowschemas/service-accounts`)).json.spec.matchingPrecedence, 8000, 'suggested, not auto-updated: kept');

  // The root CA ConfigMap everywhere, kept current.
  const ca = readFileSync(path.join(s.dataDir, 'pki/ca.crt'), 'utf8');
  for (const ns of ['default', 'kube-system', 'kube-public']) {
    const cm = await until(() => s.get(`/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`), (r) => r.status === 200);
    t.equal(cm.json.data['ca.crt'], ca, `${ns} has the CA`);
  }
  await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fresh' } } });
  t.equal((await until(() => s.get('/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt'), (r) => r.status === 200)).json.data['ca.crt'], ca, 'a new namespace gets it');
  await s.request('PATCH', '/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt', { body: { data: { 'ca.crt': 'tampered' } }, headers: merge });
  t.equal((await until(async () => (await s.get('/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt')).json, (o) => o.data['ca.crt'] === ca)).data['ca.crt'], ca, 'reset');
  await s.request('DELETE', '/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt');
  t.equal((await until(() => s.get('/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt'), (r) => r.status === 200)).status, 200, 'recreated');

  // Jobs: a generated selector and labels; manualSelector keeps the user's.
  const job = await s.request('POST', '/apis/batch/v1/namespaces/default/jobs', {
    body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } },
  });
  t.equal(job.status, 201, job.text);
  const uid = job.json.metadata.uid;
  t.same(job.json.spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
  t.same(job.json.spec.template.metadata.labels, { 'controller-uid': uid, 'batch.kubernetes.io/controller-uid': uid, 'job-name': 'j', 'batch.kubernetes.io/job-name': 'j' });
  t.equal(job.json.metadata.labels['job-name'], 'j');
  const manual = await s.request('POST', '/apis/batch/v1/namespaces/default/jobs', {
    body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'm' }, spec: { manualSelector: true, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } },
  });
  t.equal(manual.status, 201, manual.text);
  t.same(manual.json.spec.selector, { matchLabels: { a: 'b' } });
  t.same(manual.json.spec.template.metadata.labels, { a: 'b' });
});

t.test('cluster brand names', async (t) => {
  const s = await withServer(t);
  t.equal((await until(() => s.get('/api/v1/namespaces/default/configmaps/root-ca.crt'), (r) => r.status === 200)).status, 200);
  t.equal((await s.get('/apis/flowcontrol.apiserver.cluster.io/v1beta3/flowschemas/exempt')).json.metadata.annotations['apf.cluster.io/autoupdate-spec'], 'true');
});

t.test('flowcontrol v1 served beside v1beta3 (the same objects)', async (t) => {
  const s: TestServer = await withServer(t, { brand: 'kubernetes' });
  const g = (await s.get('/apis/flowcontrol.apiserver.k8s.io')).json;
  t.same(g.versions.map((v: { version: string }) => v.version), ['v1', 'v1beta3']);
  t.equal(g.preferredVersion.version, 'v1');
  const V1 = '/apis/flowcontrol.apiserver.k8s.io/v1';
  const B3 = '/apis/flowcontrol.apiserver.k8s.io/v1beta3';
  const ex = (await s.get(`${V1}/prioritylevelconfigurations/exempt`)).json;
  t.equal(ex.apiVersion, 'flowcontrol.apiserver.k8s.io/v1');
  t.equal(ex.spec.type, 'Exempt');
  t.equal((await s.get(`${V1}/flowschemas`)).json.items.length, 13, 'the same flow schemas');
  // Zero shares mean zero in v1; v1beta3 readers see the reference's preserve-zero annotation.
  const KEY = 'flowcontrol.apiserver.k8s.io/v1beta3-preserve-zero-concurrency-shares';
  const c = await s.request('POST', `${V1}/prioritylevelconfigurations`, { body: { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name: 'zero' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 0, lendablePercent: 0, limitResponse: { type: 'Reject' } } } } });
  t.equal(c.status, 201, c.text);
  t.equal(c.json.apiVersion, 'flowcontrol.apiserver.k8s.io/v1');
  t.equal(c.json.metadata.annotations, undefined, 'no annotation in v1');
  const b3 = (await s.get(`${B3}/prioritylevelconfigurations/zero`)).json;
  t.equal(b3.metadata.annotations[KEY], '');
  t.equal(b3.spec.limited.nominalConcurrencyShares, 0);
  const v1 = (await s.get(`${V1}/prioritylevelconfigurations/zero`)).json;
  t.equal(v1.metadata.annotations, undefined);
  // Defaults of each version: v1 keeps an explicit zero and fills an unset one; v1beta3 reads a zero as unset.
  const plc = (v: string, name: string, limited: Record<string, unknown>) => s.request('POST', `/apis/flowcontrol.apiserver.k8s.io/${v}/prioritylevelconfigurations`, { body: { apiVersion: `flowcontrol.apiserver.k8s.io/${v}`, kind: 'PriorityLevelConfiguration', metadata: { name }, spec: { type: 'Limited', limited } } });
  const d1 = await plc('v1', 'd1', { limitResponse: { type: 'Queue', queuing: {} } });
  t.equal(d1.status, 201, d1.text);
  t.same(d1.json.spec.limited, { limitResponse: { type: 'Queue', queuing: { handSize: 8, queues: 64, queueLengthLimit: 50 } }, nominalConcurrencyShares: 30, lendablePercent: 0 });
  const d3 = await plc('v1beta3', 'd3', { nominalConcurrencyShares: 0, limitResponse: { type: 'Reject' } });
  t.equal(d3.json.spec.limited.nominalConcurrencyShares, 30, 'v1beta3: a zero means the default');
  const fsd = await s.request('POST', `${V1}/flowschemas`, { body: { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'FlowSchema', metadata: { name: 'fsd' }, spec: { priorityLevelConfiguration: { name: 'd1' } } } });
  t.equal(fsd.json.spec.matchingPrecedence, 1000);
  // Watches of both versions see an update, each in its own version.
  const seen: Record<string, string[]> = { v1: [], v1beta3: [] };
  const w1 = s.stream(`${V1}/prioritylevelconfigurations?watch=1&fieldSelector=metadata.name%3Dzero`, (ev) => seen.v1.push(`${ev.type} ${ev.object.apiVersion}`));
  const w3 = s.stream(`${B3}/prioritylevelconfigurations?watch=1&fieldSelector=metadata.name%3Dzero`, (ev) => seen.v1beta3.push(`${ev.type} ${ev.object.apiVersion}`));
  await sleep(200);
  await s.request('PATCH', `${B3}/prioritylevelconfigurations/zero`, { body: { metadata: { labels: { a: 'b' } } }, headers: merge });
  await until(async () => seen, (x) => x.v1.length >= 2 && x.v1beta3.length >= 2);
  w1.close(); w3.close();
  t.same(seen.v1, ['ADDED flowcontrol.apiserver.k8s.io/v1', 'MODIFIED flowcontrol.apiserver.k8s.io/v1']);
  t.same(seen.v1beta3, ['ADDED flowcontrol.apiserver.k8s.io/v1beta3', 'MODIFIED flowcontrol.apiserver.k8s.io/v1beta3']);
  // Stock kubectl of a release that prefers v1.
  const bin = kubectlRelease('1.33') ?? kubectlRelease('1.29');
  if (bin) {
    const r = await kubectl(s, ['get', 'prioritylevelconfigurations', 'zero', '-o', 'jsonpath={.apiVersion} {.spec.limited.nominalConcurrencyShares}'], { bin });
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, 'flowcontrol.apiserver.k8s.io/v1 0');
    const fs = await kubectl(s, ['get', 'flowschemas'], { bin });
    t.match(fs.stdout.split('\n')[0], /^NAME\s+PRIORITYLEVEL\s+MATCHINGPRECEDENCE\s+DISTINGUISHERMETHOD\s+AGE\s+MISSINGPL$/);
  }
});

t.test('componentstatuses: read-only, computed, with the reference deprecation warning', async (t) => {
  const s: TestServer = await withServer(t, { brand: 'kubernetes' });
  const r = await s.get('/api/v1/componentstatuses');
  t.equal(r.status, 200, r.text);
  t.equal(r.headers.warning, '299 - "v1 ComponentStatus is deprecated in v1.19+"');
  t.equal(r.json.kind, 'ComponentStatusList');
  t.same(r.json.items.map((o: { metadata: { name: string } }) => o.metadata.name), ['scheduler', 'controller-manager', 'etcd-0']);
  const store = r.json.items[2];
  t.same(store.conditions, [{ type: 'Healthy', status: 'True', message: 'ok' }], 'the embedded store is healthy (named etcd-0 under the kubernetes brand, as its health check is etcd: tools look for it)');
  // No scheduler runs here: the reference shows the dial error as the message.
  const sched = (await s.get('/api/v1/componentstatuses/scheduler')).json;
  t.same(sched.conditions, [{ type: 'Healthy', status: 'False', message: 'Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect: connection refused' }]);
  t.equal((await s.get('/api/v1/componentstatuses/nope')).status, 404);
  const one = await s.get('/api/v1/componentstatuses?fieldSelector=metadata.name%3Detcd-0');
  t.same(one.json.items.map((o: { metadata: { name: string } }) => o.metadata.name), ['etcd-0'], 'field selector');
  // Read-only: writes and watches are refused.
  for (const [m, p] of [['POST', '/api/v1/componentstatuses'], ['DELETE', '/api/v1/componentstatuses/etcd-0'], ['PUT', '/api/v1/componentstatuses/etcd-0'], ['GET', '/api/v1/componentstatuses?watch=1']] as const) {
    const w = await s.request(m, p, { body: { apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name: 'etcd-0' } } });
    t.equal(w.status, 405, `${m} ${p}: ${w.text}`);
    t.equal(w.json.reason, 'MethodNotAllowed');
  }
  const metrics = (await s.get('/metrics')).text;
  t.match(metrics, /apiserver_requested_deprecated_apis\{[^}]*resource="componentstatuses"[^}]*\} 1/, 'counted as a deprecated API');
  const cs = (await s.get('/api/v1')).json.resources.find((x: { name: string }) => x.name === 'componentstatuses');
  t.same([cs.verbs, cs.shortNames, cs.namespaced], [['get', 'list'], ['cs'], false]);
  const pb = await s.request('GET', '/api/v1/componentstatuses/etcd-0', { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
  t.match(String(pb.headers['content-type']), /protobuf/, 'Protobuf');
  for (const v of ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33']) {
    const bin = kubectlRelease(v);
    if (!bin) continue;
    const k = await kubectl(s, ['get', 'cs'], { bin });
    t.equal(k.code, 0, k.stderr);
    t.match(k.stderr, /Warning: v1 ComponentStatus is deprecated in v1\.19\+/, `${v}: the deprecation warning`);
    const lines = k.stdout.trim().split('\n');
    t.match(lines[0], /^NAME\s+STATUS\s+MESSAGE\s+ERROR$/, `${v}: columns`);
    t.match(lines.find((l) => l.startsWith('etcd-0')) ?? '', /^etcd-0\s+Healthy\s+ok\s*$/);
    t.match(lines.find((l) => l.startsWith('scheduler')) ?? '', /^scheduler\s+Unhealthy\s+Get "https:\/\/127\.0\.0\.1:10259\/healthz": dial tcp/);
  }
});

t.test('componentstatuses name the etcd3 backend etcd-0', { skip: etcdMissing }, async (t) => {
  const etcd = await startEtcd();
  t.teardown(() => etcd.stop());
  const s = await withServer(t, { args: ['--storage-backend=etcd3', `--etcd-servers=${etcd.servers}`] });
  const items = (await s.get('/api/v1/componentstatuses')).json.items;
  t.same(items.find((o: { metadata: { name: string } }) => o.metadata.name === 'etcd-0')?.conditions, [{ type: 'Healthy', status: 'True', message: 'ok' }]);
});
