// The simulated-nodes controller, with the server started on examples/simulated-nodes.yaml: its
// nodes register with status and Ready, their Leases renew, and pods bound to them (by spec.nodeName
// or through pods/binding) go through what a node agent writes: Running with addresses and the
// reference's conditions, Ready after a readiness probe's initial delay, Succeeded or Failed when
// they run to completion, stopped and deleted at the end of a graceful deletion. Then, when
// KUBE_SCHEDULER and KUBE_CONTROLLER_MANAGER name the reference binaries, those run against the
// same cluster: a Deployment rolls out, a Job completes, a Service's EndpointSlice lists ready pods,
// a DaemonSet and a StatefulSet get ready. Also under the cluster brand, across a restart.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { kubectl, noKubectl } from '../lib/kubectl.js';
import { eventually, until } from '../lib/poll.js';
import { badLines, componentKubeconfig, controllerManagerArgs, startComponent } from '../lib/ref-component.js';
import { repoRoot, withServer, type TestServer } from '../lib/server.js';
import { defaultConfig } from '../../kernel/ops/config.js';

const CONFIG = path.join(repoRoot, 'examples/simulated-nodes.yaml');
const WAIT = 60_000;
const NODES = ['sim-node-0', 'sim-node-1', 'sim-node-2'];
const cond = (o: any, type: string) => (o?.status?.conditions ?? []).find((c: any) => c.type === type);
const inRange = (ip: string, prefix: string) => ip.startsWith(prefix) && !ip.endsWith('.0') && !ip.endsWith('.1');

async function setup(t: Test, ns: string): Promise<TestServer> {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--config', CONFIG] });
  await post(t, s, '/api/v1/namespaces', { metadata: { name: ns } });
  t.ok(await until(() => s.get(`/api/v1/namespaces/${ns}/serviceaccounts/default`), (r) => r.status === 200, WAIT), 'default ServiceAccount');
  return s;
}

/** POSTs `body`, expecting 201 (the answer in the message only when it is not). */
async function post(t: Test, s: TestServer, p: string, body: any): Promise<any> {
  const r = await s.request('POST', p, { body });
  t.equal(r.status, 201, `create ${body.metadata?.name}${r.status === 201 ? '' : `: ${r.text.slice(0, 300)}`}`);
  return r.json;
}

/** The server's warnings and errors about the simulated nodes: none expected. */
const simWarnings = (s: TestServer) => s.logs.filter((l) => /simulated/i.test(l) && /^[EW]\d{4}|level=(warn|error)|"level":"(warn|error)"/.test(l));

/** Collects a pod's watch events (from its creation on) until it is deleted or the test ends. */
function watchPods(t: Test, s: TestServer, ns: string) {
  const events: { type: string; object: any }[] = [];
  const w = s.stream(`/api/v1/namespaces/${ns}/pods?watch=true`, (e) => events.push(e));
  t.teardown(() => w.close());
  return { of: (name: string) => events.filter((e) => e.object?.metadata?.name === name) };
}

t.test('simulated nodes and the pods bound to them', async (t) => {
  const NS = 'sim';
  const s = await setup(t, NS);
  const PODS = `/api/v1/namespaces/${NS}/pods`;
  const get = async (p: string) => (await s.get(p)).json;
  const create = (body: any) => post(t, s, PODS, body);
  const pod = (name: string, spec: Record<string, unknown> = {}, annotations?: Record<string, string>) => ({
    metadata: { name, annotations }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }], ...spec },
  });
  const watch = watchPods(t, s, NS);

  await t.test('nodes register with status and Ready, untainted', async (t) => {
    const nodes = await until(async () => (await get('/api/v1/nodes')).items as any[], (l) => l.length === 3, WAIT);
    t.same(nodes.map((n) => n.metadata.name).sort(), NODES);
    const version = (await get('/version')).gitVersion;
    for (const [i, n] of nodes.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)).entries()) {
      t.match(n.metadata.labels, { 'kubernetes.io/hostname': n.metadata.name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' });
      t.same(n.spec.podCIDRs, [`10.244.${i}.0/24`], 'its own /24');
      t.equal(n.spec.podCIDR, `10.244.${i}.0/24`);
      t.notOk(n.spec.taints?.length, 'no taints (the not-ready one taken off)');
      t.match(n.status.capacity, { cpu: '8', memory: '32Gi', pods: '110' });
      t.match(n.status.allocatable, { cpu: '8', memory: '32Gi', pods: '110' });
      t.match(n.status.nodeInfo, { kubeletVersion: version, operatingSystem: 'linux', architecture: 'amd64', osImage: String, containerRuntimeVersion: String });
      t.same(n.status.addresses.map((a: any) => a.type), ['InternalIP', 'Hostname']);
      t.equal(n.status.daemonEndpoints.kubeletEndpoint.Port, 10250);
      t.match(cond(n, 'Ready'), { status: 'True', reason: 'KubeletReady' });
      for (const [type, reason] of [['MemoryPressure', 'KubeletHasSufficientMemory'], ['DiskPressure', 'KubeletHasNoDiskPressure'], ['PIDPressure', 'KubeletHasSufficientPID']]) {
        t.match(cond(n, type), { status: 'False', reason }, type);
      }
    }
  });

  // A renewal comes leaseRenewSeconds (10 s) after the first: it is awaited at the end, after the
  // pod tests (which leave sim-node-0's Lease alone), instead of idling here.
  let renewal: { first: any; later: Promise<any> } | undefined;
  await t.test('their Leases are renewed', async (t) => {
    const L = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/sim-node-0';
    const first = await until(() => get(L), (l) => Boolean(l?.spec?.renewTime), WAIT);
    t.match(first.spec, { holderIdentity: 'sim-node-0', leaseDurationSeconds: 40 });
    t.match(first.metadata.ownerReferences, [{ kind: 'Node', name: 'sim-node-0' }], 'owned by its Node');
    renewal = { first, later: until(() => get(L), (l) => l.spec.renewTime !== first.spec.renewTime, WAIT) };
  });

  await t.test('a pod with spec.nodeName goes Running and Ready, with addresses and conditions', async (t) => {
    await create(pod('web-a', { nodeName: 'sim-node-1', initContainers: [{ name: 'i1', image: 'registry.example/init:1' }, { name: 'i2', image: 'registry.example/init:1' }] }));
    await create(pod('web-b', { nodeName: 'sim-node-1' }));
    const a = await until(() => get(`${PODS}/web-a`), (p) => cond(p, 'Ready')?.status === 'True', WAIT);
    t.equal(a.status.phase, 'Running');
    t.equal(a.status.hostIP, '172.18.0.3', 'the node\'s InternalIP');
    t.ok(inRange(a.status.podIP, '10.244.1.'), `pod IP ${a.status.podIP} from the node's range`);
    t.same(a.status.podIPs, [{ ip: a.status.podIP }]);
    t.ok(a.status.startTime);
    t.equal(a.status.qosClass, 'BestEffort');
    t.match(a.status.containerStatuses, [{ name: 'c', image: 'registry.example/app:1', imageID: String, containerID: String, started: true, ready: true, restartCount: 0, state: { running: { startedAt: String } } }]);
    t.same(a.status.initContainerStatuses.map((c: any) => [c.name, c.state.terminated?.exitCode, c.state.terminated?.reason]), [['i1', 0, 'Completed'], ['i2', 0, 'Completed']], 'init containers completed, in order');
    for (const type of ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready']) t.match(cond(a, type), { status: 'True' }, type);
    const events = await until(async () => ((await get(`/api/v1/namespaces/${NS}/events`)).items as any[]).filter((e) => e.involvedObject.name === 'web-a'), (l) => l.length >= 9, WAIT);
    events.sort((x, y) => Number(x.metadata.resourceVersion) - Number(y.metadata.resourceVersion)); // in the order written
    t.same(events.map((e) => `${e.involvedObject.fieldPath} ${e.reason}`), [
      'spec.initContainers{i1} Pulled', 'spec.initContainers{i1} Created', 'spec.initContainers{i1} Started',
      'spec.initContainers{i2} Pulled', 'spec.initContainers{i2} Created', 'spec.initContainers{i2} Started',
      'spec.containers{c} Pulled', 'spec.containers{c} Created', 'spec.containers{c} Started',
    ], 'the node agent\'s events, in order');
    t.match(events[8], { type: 'Normal', message: 'Started container c', source: { component: 'kubelet', host: 'sim-node-1' }, involvedObject: { kind: 'Pod', uid: a.metadata.uid } });
    const b = await until(() => get(`${PODS}/web-b`), (p) => cond(p, 'Ready')?.status === 'True', WAIT);
    t.ok(inRange(b.status.podIP, '10.244.1.'), 'the second pod also from the node\'s range');
    t.not(b.status.podIP, a.status.podIP, 'addresses are unique on a node');
  });

  await t.test('a readiness probe\'s initial delay holds Ready back', async (t) => {
    await create(pod('probed', { nodeName: 'sim-node-0', containers: [{ name: 'c', image: 'registry.example/app:1', readinessProbe: { initialDelaySeconds: 3, tcpSocket: { port: 80 } } }] }));
    const ready = await until(() => get(`${PODS}/probed`), (p) => cond(p, 'Ready')?.status === 'True', WAIT);
    const running = watch.of('probed').map((e) => e.object).find((p) => p.status?.phase === 'Running');
    t.match(cond(running, 'Ready'), { status: 'False', reason: 'ContainersNotReady' }, 'Running but not Ready at first');
    t.match(cond(running, 'ContainersReady'), { status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [c]' });
    const started = Date.parse(ready.status.containerStatuses[0].state.running.startedAt);
    t.ok(Date.parse(cond(ready, 'Ready').lastTransitionTime) >= started + 3000, 'Ready no sooner than the initial delay after the start');
  });

  await t.test('a pod whose host port another pod on the node holds is rejected, as a node agent rejects it', async (t) => {
    const ports = [{ containerPort: 80, hostPort: 21017 }];
    await create(pod('port-holder', { nodeName: 'sim-node-0', containers: [{ name: 'c', image: 'registry.example/app:1', ports }] }));
    await until(() => get(`${PODS}/port-holder`), (p) => p.status?.phase === 'Running', WAIT);
    await create(pod('port-taker', { nodeName: 'sim-node-0', containers: [{ name: 'c', image: 'registry.example/app:1', ports }] }));
    const rejected = await until(() => get(`${PODS}/port-taker`), (p) => p.status?.phase === 'Failed', WAIT);
    t.match(rejected.status, { phase: 'Failed', reason: 'NodePorts', message: 'Pod was rejected: Predicate NodePorts failed' });
    await create(pod('port-elsewhere', { nodeName: 'sim-node-1', containers: [{ name: 'c', image: 'registry.example/app:1', ports }] }));
    t.equal((await until(() => get(`${PODS}/port-elsewhere`), (p) => p.status?.phase === 'Running', WAIT)).status.phase, 'Running', 'on another node it runs');
  });

  await t.test('a container\'s `exit N` command is its exit code', async (t) => {
    await create(pod('exits', { nodeName: 'sim-node-2', restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['/bin/sh', '-c', 'exit 4'] }] }));
    const done = await until(() => get(`${PODS}/exits`), (p) => p.status?.phase === 'Failed', WAIT);
    t.match(done.status.containerStatuses[0].state.terminated, { exitCode: 4, reason: 'Error' });
  });

  await t.test('a restartPolicy Never pod Succeeds, or Fails with the exit code of its annotation', async (t) => {
    await create(pod('once', { nodeName: 'sim-node-2', restartPolicy: 'Never' }));
    await create(pod('fails', { nodeName: 'sim-node-2', restartPolicy: 'Never' }, { 'kubernetes.io/sim-exit-code': '3' }));
    const ok = await until(() => get(`${PODS}/once`), (p) => p.status?.phase === 'Succeeded', WAIT);
    t.equal(ok.status.phase, 'Succeeded');
    t.match(ok.status.containerStatuses[0].state.terminated, { exitCode: 0, reason: 'Completed' });
    t.match(cond(ok, 'Ready'), { status: 'False', reason: 'PodCompleted' });
    t.ok(watch.of('once').some((e) => e.object.status?.phase === 'Running'), 'it ran first');
    const bad = await until(() => get(`${PODS}/fails`), (p) => p.status?.phase === 'Failed', WAIT);
    t.equal(bad.status.phase, 'Failed');
    t.match(bad.status.containerStatuses[0].state.terminated, { exitCode: 3, reason: 'Error' });
    t.match(cond(bad, 'ContainersReady'), { status: 'False', reason: 'PodFailed' });
  });

  await t.test('a graceful deletion stops the containers and removes the pod after its grace period', async (t) => {
    await create(pod('doomed', { nodeName: 'sim-node-0' }));
    const running = await until(() => get(`${PODS}/doomed`), (p) => cond(p, 'Ready')?.status === 'True', WAIT);
    const del = await s.request('DELETE', `${PODS}/doomed`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 2 } });
    t.equal(del.status, 200);
    t.ok(del.json.metadata.deletionTimestamp, 'graceful: the pod stays, marked for deletion');
    t.ok(await until(() => s.get(`${PODS}/doomed`), (r) => r.status === 404, WAIT), 'gone');
    const killing = ((await get(`/api/v1/namespaces/${NS}/events`)).items as any[]).filter((e) => e.involvedObject.name === 'doomed' && e.reason === 'Killing');
    t.match(killing, [{ message: 'Stopping container c', involvedObject: { fieldPath: 'spec.containers{c}' } }], 'one Killing event');
    const evs = watch.of('doomed');
    const stopped = evs.find((e) => e.type === 'MODIFIED' && e.object.metadata.deletionTimestamp && e.object.status.containerStatuses?.[0]?.state?.terminated);
    t.ok(stopped, 'the containers were marked stopped before the pod went');
    const last = evs[evs.length - 1];
    t.equal(last?.type, 'DELETED');
    t.equal(last?.object.metadata.uid, running.metadata.uid);
    t.ok(Date.parse(stopped?.object.status.containerStatuses[0].state.terminated.finishedAt) >= Date.parse(del.json.metadata.deletionTimestamp) - 1000, 'stopped at the end of the grace period');
  });

  await t.test('a pod bound through pods/binding is picked up', async (t) => {
    await create(pod('bound'));
    const b = await s.request('POST', `${PODS}/bound/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'bound' }, target: { apiVersion: 'v1', kind: 'Node', name: 'sim-node-2' } } });
    t.equal(b.status, 201, `bound: ${b.text}`);
    const p = await until(() => get(`${PODS}/bound`), (o) => cond(o, 'Ready')?.status === 'True', WAIT);
    t.equal(p.status.hostIP, '172.18.0.4', 'the node\'s address');
    t.ok(inRange(p.status.podIP, '10.244.2.'), `pod IP ${p.status.podIP} from the node's range`);
    t.match(cond(p, 'PodScheduled'), { status: 'True' }, 'PodScheduled');
  });

  await t.test('a pod on a node that does not exist is left alone', async (t) => {
    await create(pod('nowhere', { nodeName: 'no-such-node' }));
    // the pods above show the controller at work; this one, created after them, stays as created
    await create(pod('witness', { nodeName: 'sim-node-0' }));
    await until(() => get(`${PODS}/witness`), (o) => cond(o, 'Ready')?.status === 'True', WAIT);
    const p = await get(`${PODS}/nowhere`);
    t.equal(p.status.phase, 'Pending');
    t.notOk(p.status.podIP);
  });

  await t.test('a node marked Unknown by someone else reports Ready again at once', async (t) => {
    const n = await get('/api/v1/nodes/sim-node-1');
    const was = cond(n, 'Ready');
    const unknown = n.status.conditions.map((c: any) => ({ ...c, status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' }));
    t.equal((await s.request('PUT', '/api/v1/nodes/sim-node-1/status', { body: { ...n, status: { ...n.status, conditions: unknown } } })).status, 200);
    const back = await until(() => get('/api/v1/nodes/sim-node-1'), (o) => cond(o, 'Ready')?.status === 'True', WAIT);
    t.match(cond(back, 'Ready'), { status: 'True', reason: 'KubeletReady' });
    t.match(cond(back, 'MemoryPressure'), { status: 'False', reason: 'KubeletHasSufficientMemory' });
    t.ok(Date.parse(cond(back, 'Ready').lastHeartbeatTime) >= Date.parse(was.lastHeartbeatTime), 'with a fresh heartbeat');
  });

  await t.test('a deleted node registers again', async (t) => {
    const old = await get('/api/v1/nodes/sim-node-2');
    t.equal((await s.request('DELETE', '/api/v1/nodes/sim-node-2')).status, 200);
    const again = await until(() => s.get('/api/v1/nodes/sim-node-2'), (r) => r.status === 200 && r.json.metadata.uid !== old.metadata.uid, WAIT);
    t.equal(again.status, 200);
    t.match(cond(again.json, 'Ready'), { status: 'True' });
  });

  await t.test('their Leases are renewed: renewTime moves on', async (t) => {
    const later = await renewal!.later;
    t.ok(Date.parse(later.spec.renewTime) > Date.parse(renewal!.first.spec.renewTime), 'renewTime moved on');
  });

  t.same(simWarnings(s), [], 'no warnings from the simulated nodes');
});

t.test('under the cluster brand; a restart picks the pods up from their status; stopSeconds shortens a grace period', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-sim-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ controllers: [...defaultConfig().controllers, { plugin: 'simulated-nodes', options: { count: 1, stopSeconds: 1 } }] }));
  const s = await withServer(t, { brand: 'cluster', args: ['--config', config] });
  const NS = 'sim-restart';
  const node = await until(() => s.get('/api/v1/nodes/sim-node-0'), (r) => r.status === 200, WAIT);
  t.match(node.json.metadata.labels, { 'cluster.io/hostname': 'sim-node-0', 'cluster.io/os': 'linux' }, 'the brand\'s label keys');
  t.notOk(node.json.spec.taints?.length, 'the brand\'s not-ready taint taken off');
  const lease = await until(() => s.get('/apis/coordination.cluster.io/v1/namespaces/cluster-node-lease/leases/sim-node-0'), (r) => r.status === 200, WAIT);
  t.equal(lease.status, 200, 'the Lease in the brand\'s node-lease namespace');
  const PODS = `/api/v1/namespaces/${NS}/pods`;
  await post(t, s, '/api/v1/namespaces', { metadata: { name: NS } });
  await until(() => s.get(`/api/v1/namespaces/${NS}/serviceaccounts/default`), (r) => r.status === 200, WAIT);
  const get = async (p: string) => (await s.get(p)).json;
  const pod = (name: string, extra: Record<string, unknown> = {}, annotations?: Record<string, string>) => ({
    metadata: { name, annotations }, spec: { nodeName: 'sim-node-0', containers: [{ name: 'c', image: 'registry.example/app:1' }], ...extra },
  });

  await post(t, s, PODS, pod('steady'));
  await post(t, s, PODS, pod('job', { restartPolicy: 'Never' }, { 'cluster.io/sim-run-seconds': '3', 'cluster.io/sim-exit-code': '4' }));
  const steady = await until(() => get(`${PODS}/steady`), (p) => cond(p, 'Ready')?.status === 'True', WAIT);
  await until(() => get(`${PODS}/job`), (p) => p.status?.phase === 'Running', WAIT);
  await s.restart();
  const job = await until(() => get(`${PODS}/job`), (p) => p.status?.phase === 'Failed', WAIT);
  t.equal(job.status.phase, 'Failed', 'a run that was under way when the server stopped still ends');
  t.equal(job.status.containerStatuses[0].state.terminated?.exitCode, 4, 'with the exit code of the brand\'s annotation');
  await post(t, s, PODS, pod('after'));
  const after = await until(() => get(`${PODS}/after`), (p) => cond(p, 'Ready')?.status === 'True', WAIT);
  t.ok(after.status.podIP && after.status.podIP !== steady.status.podIP, `a new pod's address (${after.status.podIP}) is not one a running pod holds (${steady.status.podIP})`);
  t.equal((await get(`${PODS}/steady`)).status.podIP, steady.status.podIP, 'the running pod keeps its address');

  const del = await s.request('DELETE', `${PODS}/steady`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 600 } });
  t.equal(del.status, 200);
  t.ok(await until(() => s.get(`${PODS}/steady`), (r) => r.status === 404, WAIT), 'gone');
  t.ok(Date.now() < Date.parse(del.json.metadata.deletionTimestamp), 'long before its ten-minute grace period ends: the containers stopped after stopSeconds');
  t.same(simWarnings(s), [], 'no warnings from the simulated nodes');
});

const SCHED = process.env.KUBE_SCHEDULER;
const KCM = process.env.KUBE_CONTROLLER_MANAGER;
const refSkip = !(SCHED && existsSync(SCHED) && KCM && existsSync(KCM))
  ? 'KUBE_SCHEDULER and KUBE_CONTROLLER_MANAGER do not name the reference binaries (e.g. /work/ref/bin/kube-scheduler, /work/ref/bin/kube-controller-manager)'
  : noKubectl;

t.test('the reference scheduler and controller manager on simulated nodes', { skip: refSkip }, async (t) => {
  const NS = 'sim-ref';
  const s = await setup(t, NS);
  const kc = await componentKubeconfig(s, 'system:kube-scheduler');
  const sched = startComponent(t, SCHED!, ['--kubeconfig', kc, '--authentication-kubeconfig', kc, '--authorization-kubeconfig', kc,
    '--leader-elect=true', '--bind-address', '127.0.0.1', '--secure-port', '0'], process.env.SCHED_LOG_FILE);
  const kcm = startComponent(t, KCM!, controllerManagerArgs(s, path.join(s.dataDir, 'admin.kubeconfig')), process.env.KCM_LOG_FILE);
  // Both leader-elected, as by default: our scheduler and the controllers doing the manager's work step aside.
  for (const lease of ['kube-scheduler', 'kube-controller-manager']) {
    t.ok(await eventually(() => s.logs.some((l) => l.includes('an external component runs') && l.includes(`kube-system/${lease}`))), `ours step aside for ${lease}`);
  }
  const get = async (p: string) => (await s.get(p)).json;
  const labels = { app: 'web' };
  const template = { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1', ports: [{ containerPort: 80 }] }] } };

  await t.test('a 5-replica Deployment rolls out', async (t) => {
    await post(t, s, `/apis/apps/v1/namespaces/${NS}/deployments`, { metadata: { name: 'web' }, spec: { replicas: 5, selector: { matchLabels: labels }, template } });
    const out = await kubectl(s, ['-n', NS, 'rollout', 'status', 'deployment/web', '--timeout=120s'], { timeoutMs: 150_000 });
    t.equal(out.code, 0, `rollout status: ${out.stdout}${out.stderr}`);
    t.match(out.stdout, /successfully rolled out/);
    const pods = (await get(`/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dweb`)).items as any[];
    t.equal(pods.filter((p) => cond(p, 'Ready')?.status === 'True').length, 5, 'five Ready pods');
    t.ok(pods.every((p) => NODES.includes(p.spec.nodeName)), 'all on simulated nodes');
  });

  await t.test('a Service\'s EndpointSlice lists the ready addresses', async (t) => {
    await post(t, s, `/api/v1/namespaces/${NS}/services`, { metadata: { name: 'web' }, spec: { selector: labels, ports: [{ port: 80 }] } });
    const ready = (l: any[]) => l.flatMap((sl) => sl.endpoints ?? []).filter((e: any) => e.conditions?.ready);
    const slices = await until(async () => (await get(`/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices?labelSelector=kubernetes.io/service-name%3Dweb`)).items as any[], (l) => ready(l).length === 5, WAIT);
    const pods = (await get(`/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dweb`)).items as any[];
    t.same(ready(slices).map((e: any) => e.addresses[0]).sort(), pods.map((p) => p.status.podIP).sort(), 'the pods\' addresses, ready');
  });

  await t.test('a Job completes', async (t) => {
    await post(t, s, `/apis/batch/v1/namespaces/${NS}/jobs`, { metadata: { name: 'once' }, spec: { template: { spec: { ...template.spec, restartPolicy: 'Never' } } } });
    const job = await until(() => get(`/apis/batch/v1/namespaces/${NS}/jobs/once`), (j) => cond(j, 'Complete')?.status === 'True', 120_000);
    t.match(cond(job, 'Complete'), { status: 'True' });
    t.equal(job.status.succeeded, 1);
  });

  await t.test('a DaemonSet has a ready pod on every simulated node; a StatefulSet gets ready', async (t) => {
    const ds = { app: 'agent' };
    await post(t, s, `/apis/apps/v1/namespaces/${NS}/daemonsets`, { metadata: { name: 'agent' }, spec: { selector: { matchLabels: ds }, template: { ...template, metadata: { labels: ds } } } });
    const st = await until(() => get(`/apis/apps/v1/namespaces/${NS}/daemonsets/agent`), (o) => o.status?.numberReady === 3, WAIT);
    t.match(st.status, { desiredNumberScheduled: 3, numberReady: 3 });
    const pods = (await get(`/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dagent`)).items as any[];
    t.same(pods.map((p) => p.spec.nodeName).sort(), NODES, 'one per node');
    const ss = { app: 'db' };
    await post(t, s, `/apis/apps/v1/namespaces/${NS}/statefulsets`, { metadata: { name: 'db' }, spec: { serviceName: 'db', replicas: 2, selector: { matchLabels: ss }, template: { ...template, metadata: { labels: ss } } } });
    const sts = await until(() => get(`/apis/apps/v1/namespaces/${NS}/statefulsets/db`), (o) => o.status?.readyReplicas === 2, WAIT);
    t.equal(sts.status.readyReplicas, 2, 'two ready replicas, made one after the other');
  });

  await t.test('no refusals or failed watches in either component\'s log', async (t) => {
    const race = /Operation cannot be fulfilled|already exists|not found/;
    t.same(badLines(sched.log, { race }), [], 'scheduler log');
    t.same(badLines(kcm.log, { race, expected: /no cloud provider provided/ }), [], 'controller manager log');
    t.same(simWarnings(s), [], 'no warnings from the simulated nodes');
  });
});
