// The reference kube-scheduler (KUBE_SCHEDULER names its binary) runs against this server as in every
// kubeadm cluster: its own client certificate (system:kube-scheduler, so the default policy's roles
// are what it gets), leader election on. It binds pods to fitting nodes, leaves one that fits nowhere
// Pending with the reason, honours a node selector, records its events through events.k8s.io (read
// back through the core API: one stored resource), holds its leader Lease — and its log shows no
// refusal, failed list or watch, or decode error.
import { existsSync } from 'node:fs';
import t from 'tap';
import { until } from '../lib/poll.js';
import path from 'node:path';
import { badLines, componentKubeconfig, controllerManagerArgs, startComponent } from '../lib/ref-component.js';
import { withServer } from '../lib/server.js';

const SCHED = process.env.KUBE_SCHEDULER;
const skip = SCHED && existsSync(SCHED) ? false : 'KUBE_SCHEDULER does not name a kube-scheduler binary (e.g. KUBE_SCHEDULER=/path/to/kube-scheduler v1.28)';
const WAIT = 60_000;
const NS = 'sched-work';

t.test('the reference scheduler against this server', { skip }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const kc = await componentKubeconfig(s, 'system:kube-scheduler');
  const sched = startComponent(t, SCHED!, ['--kubeconfig', kc, '--authentication-kubeconfig', kc, '--authorization-kubeconfig', kc,
    '--leader-elect=true', '--bind-address', '127.0.0.1', '--secure-port', '0', '-v=2'], process.env.SCHED_LOG_FILE);
  const created = async (p: string, body: unknown) => {
    const r = await s.request('POST', p, { body });
    t.equal(r.status, 201, `create ${p}: ${r.text.slice(0, 200)}`);
    return r.json;
  };
  const PODS = `/api/v1/namespaces/${NS}/pods`;

  // Two nodes as node agents register them: the object, then its status.
  for (const [name, zone] of [['node-a', 'a'], ['node-b', 'b']]) {
    await created('/api/v1/nodes', { metadata: { name, labels: { 'kubernetes.io/hostname': name, 'topology.kubernetes.io/zone': zone } } });
    const node = (await s.get(`/api/v1/nodes/${name}`)).json;
    node.status = {
      capacity: { cpu: '4', memory: '8Gi', pods: '110' }, allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready', lastHeartbeatTime: new Date().toISOString(), lastTransitionTime: new Date().toISOString() }],
    };
    t.equal((await s.request('PUT', `/api/v1/nodes/${name}/status`, { body: node })).status, 200, `${name} status`);
    // TaintNodesByCondition admission put the not-ready taint on the new node, as the reference's does;
    // the controller manager's node lifecycle controller takes it off a Ready node: here, the test
    const ready = (await s.get(`/api/v1/nodes/${name}`)).json;
    t.match(ready.spec.taints, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }], 'a new node is tainted not-ready');
    ready.spec.taints = ready.spec.taints.filter((x: any) => x.key !== 'node.kubernetes.io/not-ready');
    t.equal((await s.request('PUT', `/api/v1/nodes/${name}`, { body: ready })).status, 200, `${name} untainted`);
  }
  await created('/api/v1/namespaces', { metadata: { name: NS } });
  t.ok(await until(() => s.get(`/api/v1/namespaces/${NS}/serviceaccounts/default`), (r) => r.status === 200, WAIT), 'default ServiceAccount');
  const pod = (name: string, cpu: string, extra: Record<string, unknown> = {}) => ({
    metadata: { name }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1', resources: { requests: { cpu } } }], ...extra },
  });

  await t.test('pods are bound to nodes that fit', async (t) => {
    // A first pod bound shows the scheduler's cache holds the nodes: one scheduled before that fails,
    // and the scheduler's Unschedulable status patch may land after a later binding (its own race).
    await created(PODS, pod('warm-up', '1m'));
    t.ok(await until(async () => (await s.get(`${PODS}/warm-up`)).json.spec?.nodeName, Boolean, WAIT), 'a first pod is bound');
    for (let i = 0; i < 4; i++) await created(PODS, pod(`fit-${i}`, '1'));
    const bound = await until(async () => ((await s.get(PODS)).json.items as any[]).filter((p) => p.metadata.name.startsWith('fit-') && p.spec.nodeName), (l) => l.length === 4, WAIT);
    t.equal(bound.length, 4, 'all four bound');
    for (const p of bound) {
      t.ok(['node-a', 'node-b'].includes(p.spec.nodeName), `${p.metadata.name} on ${p.spec.nodeName}`);
      t.match(p.status?.conditions ?? [], [{ type: 'PodScheduled', status: 'True' }], 'PodScheduled condition');
    }
  });

  await t.test('a node selector is honoured', async (t) => {
    await created(PODS, pod('pinned', '100m', { nodeSelector: { 'topology.kubernetes.io/zone': 'b' } }));
    const p = await until(async () => (await s.get(`${PODS}/pinned`)).json, (o) => !!o.spec?.nodeName, WAIT);
    t.equal(p.spec.nodeName, 'node-b');
  });

  await t.test('a pod that fits nowhere stays Pending with the reason, and an event says why', async (t) => {
    await created(PODS, pod('too-big', '100'));
    const p = await until(async () => (await s.get(`${PODS}/too-big`)).json, (o) => (o.status?.conditions ?? []).some((c: any) => c.type === 'PodScheduled'), WAIT);
    t.notOk(p.spec.nodeName, 'not bound');
    t.match(p.status.conditions.find((c: any) => c.type === 'PodScheduled'), { status: 'False', reason: 'Unschedulable', message: /Insufficient cpu/ });
    // the scheduler records through events.k8s.io/v1; the core API reads the same events
    const ev = await until(async () => ((await s.get(`/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name%3Dtoo-big`)).json.items ?? []) as any[], (l) => l.some((e) => e.reason === 'FailedScheduling'), WAIT);
    t.ok(ev.some((e) => e.reason === 'FailedScheduling' && /Insufficient cpu/.test(e.message) && e.reportingComponent === 'default-scheduler'), 'FailedScheduling event, read through core/v1');
    const scheduled = ((await s.get(`/apis/events.k8s.io/v1/namespaces/${NS}/events?fieldSelector=regarding.name%3Dpinned`)).json.items ?? []) as any[];
    t.ok(scheduled.some((e) => e.reason === 'Scheduled' && /node-b/.test(e.note)), 'Scheduled event through events.k8s.io/v1');
  });

  await t.test('the scheduler holds its leader Lease', async (t) => {
    const lease = await until(async () => (await s.get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler')).json, (o) => !!o.spec?.holderIdentity, WAIT);
    t.ok(lease.spec.holderIdentity, `held by ${lease.spec.holderIdentity}`);
    const renewed = await until(async () => (await s.get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler')).json, (o) => o.spec?.renewTime !== lease.spec.renewTime, WAIT);
    t.not(renewed.spec.renewTime, lease.spec.renewTime, 'and renews it');
  });

  const bad = badLines(sched.log);
  t.same(bad, [], 'no refusal, failed list or watch, decode error or error loop in the scheduler\'s log');
  if (bad.length) t.comment(sched.log.slice(-40).join('\n'));
});

// Issue 30: a node agent registers its Node with its status in the create request; the reference
// scheduler must see that capacity (it once saw none: "0/2 nodes are available: 2 Too many pods").
// A Deployment's pods come from the reference controller manager when KUBE_CONTROLLER_MANAGER names
// it (this server runs no workload controllers); with the scheduler alone, six pods are created directly.
const KCM = process.env.KUBE_CONTROLLER_MANAGER;
const withKcm = !!KCM && existsSync(KCM);

t.test(`nodes registered with their status; ${withKcm ? "a Deployment's" : 'six'} pods all bound by the reference scheduler`, { skip }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const kc = await componentKubeconfig(s, 'system:kube-scheduler');
  const sched = startComponent(t, SCHED!, ['--kubeconfig', kc, '--authentication-kubeconfig', kc, '--authorization-kubeconfig', kc,
    '--leader-elect=false', '--bind-address', '127.0.0.1', '--secure-port', '0', '-v=2']);
  if (withKcm) startComponent(t, KCM!, controllerManagerArgs(s, path.join(s.dataDir, 'admin.kubeconfig')));
  const now = new Date().toISOString();
  for (const name of ['reg-a', 'reg-b']) {
    const r = await s.request('POST', '/api/v1/nodes', { body: {
      apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } },
      status: {
        capacity: { cpu: '4', memory: '8Gi', pods: '110' }, allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready', lastHeartbeatTime: now, lastTransitionTime: now }],
        addresses: [{ type: 'InternalIP', address: name === 'reg-a' ? '10.0.0.11' : '10.0.0.12' }, { type: 'Hostname', address: name }],
      },
    } });
    t.equal(r.status, 201, r.text.slice(0, 200));
    t.equal(r.json.status?.allocatable?.pods, '110', `${name}: the status sent with the create is kept`);
    // the not-ready taint admission adds is the node lifecycle controller's to lift; here, the test's
    const node = (await s.get(`/api/v1/nodes/${name}`)).json;
    node.spec.taints = (node.spec.taints ?? []).filter((x: any) => x.key !== 'node.kubernetes.io/not-ready');
    t.equal((await s.request('PUT', `/api/v1/nodes/${name}`, { body: node })).status, 200);
  }
  const spec = { containers: [{ name: 'c', image: 'registry.example/web:1', resources: { requests: { cpu: '500m' } } }] };
  if (withKcm) {
    const dep = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
      spec: { replicas: 6, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec } },
    } });
    t.equal(dep.status, 201, dep.text.slice(0, 200));
  } else {
    for (let i = 0; i < 6; i++) t.equal((await s.request('POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name: `web-${i}`, labels: { app: 'web' } }, spec } })).status, 201);
  }
  const bound = await until(async () => ((await s.get('/api/v1/namespaces/default/pods?labelSelector=app%3Dweb')).json.items as any[]).filter((p) => p.spec.nodeName), (l) => l.length === 6, WAIT * 2);
  t.equal(bound.length, 6, 'all six pods bound');
  t.ok(bound.every((p) => ['reg-a', 'reg-b'].includes(p.spec.nodeName)), 'to the registered nodes');
  t.same(badLines(sched.log), [], 'no error in the scheduler\'s log');
});
