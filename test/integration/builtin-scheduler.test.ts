// The built-in scheduler plugin (controllers: scheduler), enabled by a configuration file, against a
// real server: pods bound through pods/binding to nodes that fit (node selector, required node
// affinity, taints and tolerations, requests against allocatable less bound pods, unschedulable and
// not-ready nodes), spread over equal nodes; a pod that fits nowhere gets the reference's
// FailedScheduling event and PodScheduled=False, and is bound once a node changes so that it fits;
// pods for another scheduler are left alone; nothing is bound while another scheduler holds a fresh
// kube-scheduler Lease.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { defaultConfig } from '../../kernel/ops/config.js';
import { eventually, until } from '../lib/poll.js';
import { sleep, withServer, type TestServer } from '../lib/server.js';
import { badLines, componentKubeconfig, startComponent } from '../lib/ref-component.js';

const NS = 'sched';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const EVENTS = `/apis/events.k8s.io/v1/namespaces/${NS}/events`;

function configWithScheduler(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-cfg-'));
  const file = path.join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ controllers: [...defaultConfig().controllers, { plugin: 'scheduler' }] }));
  return file;
}

interface NodeOpts { labels?: Record<string, string>; cpu?: string; pods?: string; taints?: unknown[]; unschedulable?: boolean; ready?: 'True' | 'False' }

/** A Node created with its status (capacity, allocatable, Ready), then without the not-ready taint admission gave it. */
async function addNode(t: Test, s: TestServer, name: string, o: NodeOpts = {}) {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const res = { cpu: o.cpu ?? '2', memory: '4Gi', pods: o.pods ?? '110' };
  const created = await s.request('POST', '/api/v1/nodes', {
    body: {
      metadata: { name, labels: { 'kubernetes.io/hostname': name, ...o.labels } },
      spec: { unschedulable: o.unschedulable, taints: o.taints },
      status: { capacity: res, allocatable: res, conditions: [{ type: 'Ready', status: o.ready ?? 'True', reason: 'KubeletReady', message: 'm', lastHeartbeatTime: now, lastTransitionTime: now }] },
    },
  });
  t.equal(created.status, 201, `node ${name}`, { body: created.text });
  const node = created.json;
  node.spec.taints = (node.spec.taints ?? []).filter((x: any) => x.key !== 'node.kubernetes.io/not-ready');
  t.equal((await s.request('PUT', `/api/v1/nodes/${name}`, { body: node })).status, 200, `${name} untainted`);
}

const pod = (name: string, spec: Record<string, unknown> = {}, cpu?: string) => ({
  metadata: { name }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1', ...(cpu ? { resources: { requests: { cpu } } } : {}) }], ...spec },
});

async function create(t: Test, s: TestServer, body: any) {
  const r = await s.request('POST', PODS, { body });
  t.equal(r.status, 201, `create pod ${body.metadata.name}`, { body: r.text });
}

const getPod = async (s: TestServer, name: string) => (await s.get(`${PODS}/${name}`)).json;
const boundTo = async (s: TestServer, name: string) => (await until(() => getPod(s, name), (p) => !!p.spec?.nodeName)).spec.nodeName as string | undefined;
const eventsOf = async (s: TestServer, name: string) => ((await s.get(EVENTS)).json.items as any[]).filter((e) => e.regarding?.name === name);
const schedCond = (p: any) => (p.status?.conditions ?? []).find((c: any) => c.type === 'PodScheduled');

/** The PodScheduled condition once it is False with a message satisfying `ok`. */
async function unschedulable(s: TestServer, name: string, ok: (msg: string) => boolean) {
  const p = await until(() => getPod(s, name), (x) => schedCond(x)?.status === 'False' && ok(schedCond(x).message));
  return schedCond(p);
}

t.test('the built-in scheduler', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--config', configWithScheduler()] });
  t.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status, 201);
  t.ok(await eventually(async () => (await s.get(`/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200), 'default ServiceAccount');
  await addNode(t, s, 'n1', { labels: { disk: 'ssd', rank: '3' } });
  await addNode(t, s, 'n2', { labels: { zone: 'b', rank: '7' } });
  await addNode(t, s, 'n3', { labels: { zone: 'c' }, taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] });

  await t.test('pods without requests are bound, spread over the equal nodes, with a Scheduled event', async (t) => {
    for (let i = 0; i < 4; i++) await create(t, s, pod(`spread-${i}`));
    const nodes: string[] = [];
    for (let i = 0; i < 4; i++) nodes.push((await boundTo(s, `spread-${i}`))!);
    t.same(nodes.filter((n) => n === 'n1').length, 2, `two on n1 (${nodes})`);
    t.same(nodes.filter((n) => n === 'n2').length, 2, 'two on n2; none on the tainted n3');
    const p = await getPod(s, 'spread-0');
    t.match(schedCond(p), { status: 'True' }, 'PodScheduled=True');
    const ev = (await until(() => eventsOf(s, 'spread-0'), (l) => l.length > 0))[0];
    t.match(ev, {
      type: 'Normal', reason: 'Scheduled', action: 'Binding', reportingController: 'default-scheduler', reportingInstance: /^default-scheduler-/,
      note: `Successfully assigned ${NS}/spread-0 to ${p.spec.nodeName}`, regarding: { kind: 'Pod', name: 'spread-0', namespace: NS, uid: p.metadata.uid },
    }, 'the reference scheduler\'s Scheduled event');
    t.match(ev.metadata.name, /^spread-0\.[0-9a-f]+$/, 'named <pod>.<hex time>');
  });

  await t.test('node selector, required node affinity, tolerations', async (t) => {
    await create(t, s, pod('want-ssd', { nodeSelector: { disk: 'ssd' } }));
    const term = (key: string, operator: string, values: string[]) => ({ nodeSelectorTerms: [{ matchExpressions: [{ key, operator, values }] }] });
    await create(t, s, pod('want-zone-b', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: term('zone', 'In', ['b']) } } }));
    await create(t, s, pod('want-rank', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: term('rank', 'Gt', ['5']) } } }));
    await create(t, s, pod('want-gpu', { nodeSelector: { zone: 'c' }, tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] }));
    await create(t, s, pod('want-c-untolerated', { nodeSelector: { zone: 'c' } }));
    t.equal(await boundTo(s, 'want-ssd'), 'n1');
    t.equal(await boundTo(s, 'want-zone-b'), 'n2');
    t.equal(await boundTo(s, 'want-rank'), 'n2', 'Gt on a label');
    t.equal(await boundTo(s, 'want-gpu'), 'n3', 'a tolerated taint');
    const c = await unschedulable(s, 'want-c-untolerated', () => true);
    t.equal(c.message, "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..");
  });

  await t.test('requests against allocatable less bound pods; FailedScheduling; bound once a node fits', async (t) => {
    await create(t, s, pod('big-1', {}, '1500m'));
    const first = await boundTo(s, 'big-1');
    await create(t, s, pod('big-2', {}, '1500m'));
    const second = await boundTo(s, 'big-2');
    t.same([first, second].sort(), ['n1', 'n2'], 'one on each untainted node');
    await create(t, s, pod('big-3', {}, '1500m'));
    const msg = '0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..';
    const c = await unschedulable(s, 'big-3', () => true);
    t.match(c, { status: 'False', reason: 'Unschedulable', message: msg }, 'PodScheduled=False, Unschedulable, the FitError message');
    const ev = (await until(() => eventsOf(s, 'big-3'), (l) => l.some((e) => e.reason === 'FailedScheduling'))).find((e) => e.reason === 'FailedScheduling');
    t.match(ev, { type: 'Warning', action: 'Scheduling', reportingController: 'default-scheduler', note: msg }, 'FailedScheduling event');
    t.notOk((await getPod(s, 'big-3')).spec.nodeName, 'not bound');

    // A roomy node that is cordoned: tried again on its arrival, still no fit.
    await addNode(t, s, 'n4', { cpu: '4', unschedulable: true });
    const c4 = await unschedulable(s, 'big-3', (m) => m.startsWith('0/4'));
    t.equal(c4.message, '0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable, 2 Insufficient cpu. preemption: 0/4 nodes are available: 2 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling..');
    // Uncordoned: bound there.
    const n4 = (await s.get('/api/v1/nodes/n4')).json;
    n4.spec.unschedulable = false;
    t.equal((await s.request('PUT', '/api/v1/nodes/n4', { body: n4 })).status, 200);
    t.equal(await boundTo(s, 'big-3'), 'n4', 'bound once the node fits');
    t.match(schedCond(await getPod(s, 'big-3')), { status: 'True' });
  });

  await t.test('a node that is not Ready takes nothing until it is', async (t) => {
    await addNode(t, s, 'n5', { labels: { only: 'n5' }, ready: 'False' });
    await create(t, s, pod('on-n5', { nodeSelector: { only: 'n5' } }));
    const c = await unschedulable(s, 'on-n5', () => true);
    // The taint filter runs before node affinity: each node gives the first filter's reason.
    t.equal(c.message, "0/5 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling..");
    const n5 = (await s.get('/api/v1/nodes/n5')).json;
    n5.status.conditions[0].status = 'True';
    t.equal((await s.request('PUT', '/api/v1/nodes/n5/status', { body: n5 })).status, 200);
    t.equal(await boundTo(s, 'on-n5'), 'n5');
  });

  await t.test('a repeated FailedScheduling is counted in its event\'s series', async (t) => {
    await create(t, s, pod('never-fits', { nodeSelector: { none: 'x' } }));
    await unschedulable(s, 'never-fits', () => true);
    // Relabelling a node is a change worth another try; the message stays the same.
    let series: any;
    for (let i = 0; i < 30 && !series; i++) {
      const r = await s.request('PATCH', '/api/v1/nodes/n1', { body: { metadata: { labels: { tick: String(i) } } }, headers: { 'content-type': 'application/merge-patch+json' } });
      t.equal(r.status, 200, `relabel ${i}`);
      await sleep(1000);
      series = (await eventsOf(s, 'never-fits')).find((e) => e.series)?.series;
    }
    if (!series) console.error(s.logs.filter((l) => l.includes('scheduler')).slice(-10).join('\n'), JSON.stringify(await eventsOf(s, 'never-fits'), null, 1).slice(0, 3000));
    t.match(series, { count: Number, lastObservedTime: /^\d{4}-.*\.\d{6}Z$/ }, 'a series');
    const evs = await eventsOf(s, 'never-fits');
    t.ok(evs.length <= 2, `at most one event per version of the pod (${evs.length})`);
    t.ok(evs.every((e) => e.reason === 'FailedScheduling' && e.note === evs[0].note), 'all FailedScheduling, one message');
  });

  await t.test('a pod for another scheduler is left alone', async (t) => {
    await create(t, s, pod('other', { schedulerName: 'my-scheduler' }));
    // Any pod created after it being bound shows the scheduler has been past it.
    await create(t, s, pod('after-other'));
    await boundTo(s, 'after-other');
    const p = await getPod(s, 'other');
    t.notOk(p.spec.nodeName, 'not bound');
    t.notOk(schedCond(p), 'no PodScheduled condition');
    t.same(await eventsOf(s, 'other'), [], 'no event');
  });

  await t.test('nothing is bound while another scheduler holds a fresh kube-scheduler Lease', async (t) => {
    const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';
    const micro = () => new Date().toISOString().replace(/Z$/, '000Z');
    const r = await s.request('POST', LEASES, { body: { metadata: { name: 'kube-scheduler' }, spec: { holderIdentity: 'elsewhere_1', leaseDurationSeconds: 3600, acquireTime: micro(), renewTime: micro() } } });
    t.equal(r.status, 201, 'Lease held elsewhere', { body: r.text });
    await create(t, s, pod('while-held'));
    t.ok(await eventually(() => s.logs.some((l) => /an external component runs.*-scheduler/.test(l))), 'logs that it steps aside');
    await sleep(2000);
    const p = await getPod(s, 'while-held');
    t.notOk(p.spec.nodeName, 'not bound while the Lease is held');
    t.same(await eventsOf(s, 'while-held'), [], 'no event');
    t.equal(s.logs.filter((l) => /an external component runs.*-scheduler/.test(l)).length, 1, 'logged once');
    // Released as the reference's leader election releases it: no holder.
    const lease = (await s.get(`${LEASES}/kube-scheduler`)).json;
    lease.spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: micro() };
    t.equal((await s.request('PUT', `${LEASES}/kube-scheduler`, { body: lease })).status, 200);
    t.ok(await boundTo(s, 'while-held'), 'bound once the Lease is released');
  });
});

t.test('brand cluster: its taint keys, events group and Lease name', async (t) => {
  const s = await withServer(t, { brand: 'cluster', args: ['--config', configWithScheduler()] });
  t.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status, 201);
  t.ok(await eventually(async () => (await s.get(`/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200), 'default ServiceAccount');
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const res = { cpu: '2', memory: '4Gi', pods: '10' };
  await create(t, s, pod('early'));
  t.equal((await unschedulable(s, 'early', () => true)).message, 'no nodes available to schedule pods', 'no node at all');
  const node = { metadata: { name: 'c1' }, status: { capacity: res, allocatable: res, conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: now, lastTransitionTime: now }] } };
  t.equal((await s.request('POST', '/api/v1/nodes', { body: node })).status, 201);
  await create(t, s, pod('p'));
  const c = await unschedulable(s, 'p', () => true);
  t.equal(c.message, '0/1 nodes are available: 1 node(s) had untolerated taint {node.cluster.io/not-ready: }. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling..', 'the admission plugin\'s not-ready taint');
  const events = async () => ((await s.get(`/apis/events.cluster.io/v1/namespaces/${NS}/events`)).json.items as any[]).map((e) => e.reason);
  t.ok(await eventually(async () => (await events()).filter((r) => r === 'FailedScheduling').length >= 2), 'through events.cluster.io');

  const LEASES = '/apis/coordination.cluster.io/v1/namespaces/cluster-system/leases';
  const micro = () => new Date().toISOString().replace(/Z$/, '000Z');
  t.equal((await s.request('POST', LEASES, { body: { metadata: { name: 'cluster-scheduler' }, spec: { holderIdentity: 'elsewhere', leaseDurationSeconds: 3600, renewTime: micro() } } })).status, 201);
  const c1 = (await s.get('/api/v1/nodes/c1')).json;
  c1.spec.taints = [];
  t.equal((await s.request('PUT', '/api/v1/nodes/c1', { body: c1 })).status, 200, 'untainted: the pod would fit now');
  t.ok(await eventually(() => s.logs.some((l) => /an external component runs.*-scheduler/.test(l))), 'steps aside for cluster-system/cluster-scheduler');
  await sleep(1000);
  t.notOk((await getPod(s, 'p')).spec.nodeName, 'not bound while held');
  t.equal((await s.request('DELETE', `${LEASES}/cluster-scheduler`)).status, 200);
  t.equal(await boundTo(s, 'p'), 'c1', 'bound once the Lease is gone');
  t.ok(await eventually(async () => (await events()).includes('Scheduled')), 'Scheduled event');
});

// With the reference kube-scheduler (KUBE_SCHEDULER names its binary) leader-elected, the built-in
// one steps aside: the reference binds every pod (its log says so for each), ours says it steps aside.
const SCHED = process.env.KUBE_SCHEDULER;
t.test('the reference kube-scheduler takes over', { skip: SCHED && existsSync(SCHED) ? false : 'KUBE_SCHEDULER does not name a kube-scheduler binary' }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--config', configWithScheduler()] });
  const kc = await componentKubeconfig(s, 'system:kube-scheduler');
  const sched = startComponent(t, SCHED!, ['--kubeconfig', kc, '--authentication-kubeconfig', kc, '--authorization-kubeconfig', kc,
    '--leader-elect=true', '--bind-address', '127.0.0.1', '--secure-port', '0', '-v=2']);
  t.ok(await eventually(async () => !!(await s.get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler')).json?.spec?.holderIdentity), 'the reference holds its Lease');
  t.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status, 201);
  t.ok(await eventually(async () => (await s.get(`/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200), 'default ServiceAccount');
  await addNode(t, s, 'r1');
  await addNode(t, s, 'r2');
  for (let i = 0; i < 4; i++) await create(t, s, pod(`ref-${i}`, {}, '100m'));
  for (let i = 0; i < 4; i++) t.ok(await boundTo(s, `ref-${i}`), `ref-${i} bound`);
  t.ok(await eventually(() => [0, 1, 2, 3].every((i) => sched.log.some((l) => l.includes('Successfully bound pod to node') && l.includes(`${NS}/ref-${i}`)))), 'each bound by the reference');
  t.ok(s.logs.some((l) => /an external component runs.*-scheduler/.test(l)), 'the built-in one stepped aside');
  t.same(badLines(sched.log), [], 'no error in the reference\'s log');
});
