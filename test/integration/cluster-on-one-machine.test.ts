// A whole cluster on one machine (issue 32's "done means"): with examples/simulated-nodes.yaml and no
// other process, what a user does with kubectl finishes as on a real cluster — a Deployment rolls
// out, a Job completes, a StatefulSet becomes ready in order, a DaemonSet has a ready pod on every
// node, a Service's EndpointSlice lists the ready addresses, a drained node's pods go elsewhere, and a
// namespace deletion removes everything. Then the same with the reference kube-scheduler and
// kube-controller-manager attached instead of our own (when KUBE_SCHEDULER and
// KUBE_CONTROLLER_MANAGER name their binaries): ours step aside for them.
import { existsSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { kubectl, noKubectl } from '../lib/kubectl.js';
import { eventually, until } from '../lib/poll.js';
import { badLines, componentKubeconfig, controllerManagerArgs, startComponent } from '../lib/ref-component.js';
import { repoRoot, withServer, type TestServer } from '../lib/server.js';

const EXAMPLE = path.join(repoRoot, 'examples/simulated-nodes.yaml');
const WAIT = 180_000;
const NODES = ['sim-node-0', 'sim-node-1', 'sim-node-2'];

async function run(t: Test, s: TestServer, args: string[], timeoutMs = WAIT): Promise<string> {
  const r = await kubectl(s, args, { timeoutMs: timeoutMs + 30_000 });
  t.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}

const items = async (s: TestServer, p: string) => ((await s.get(p)).json?.items ?? []) as any[];
const ready = (p: any) => (p.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');

/** Everything the issue lists, in namespace `ns`. */
async function scenario(t: Test, s: TestServer, ns: string) {
  await run(t, s, ['create', 'namespace', ns]);
  const n = ['-n', ns];

  await t.test('kubectl create deployment --replicas=5, then rollout status succeeds', async (t) => {
    await run(t, s, [...n, 'create', 'deployment', 'web', '--image=nginx', '--replicas=5']);
    const out = await run(t, s, [...n, 'rollout', 'status', 'deployment/web', '--timeout=150s']);
    t.match(out, /successfully rolled out/);
    const pods = (await items(s, `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`)).filter((p) => !p.metadata.deletionTimestamp);
    t.equal(pods.filter((p) => p.status?.phase === 'Running' && ready(p)).length, 5, 'five pods Running and Ready');
    t.ok(pods.every((p) => NODES.includes(p.spec.nodeName) && p.status.podIP), 'each bound to a simulated node, with an address');
  });

  await t.test('a Job completes', async (t) => {
    await run(t, s, [...n, 'create', 'job', 'once', '--image=busybox', '--', 'sh', '-c', 'exit 0']);
    await run(t, s, [...n, 'wait', '--for=condition=complete', 'job/once', '--timeout=150s']);
    const job = (await s.get(`/apis/batch/v1/namespaces/${ns}/jobs/once`)).json;
    t.equal(job.status.succeeded, 1);
  });

  await t.test('a StatefulSet reaches ready, its pods in order', async (t) => {
    const sts = {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' },
      spec: { serviceName: 'db', replicas: 3, selector: { matchLabels: { app: 'db' } }, template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'postgres' }] } } },
    };
    t.equal((await s.request('POST', `/apis/apps/v1/namespaces/${ns}/statefulsets`, { body: sts })).status, 201);
    await run(t, s, [...n, 'rollout', 'status', 'statefulset/db', '--timeout=150s']);
    const pods = await items(s, `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Ddb`);
    const byName = new Map(pods.map((p) => [p.metadata.name, p]));
    t.same([...byName.keys()].sort(), ['db-0', 'db-1', 'db-2']);
    // OrderedReady: each pod is made only once the one before it is Ready.
    for (const [prev, next] of [['db-0', 'db-1'], ['db-1', 'db-2']]) {
      const readyAt = Date.parse(byName.get(prev).status.conditions.find((c: any) => c.type === 'Ready').lastTransitionTime);
      t.ok(Date.parse(byName.get(next).metadata.creationTimestamp) >= readyAt, `${next} made after ${prev} was Ready`);
    }
  });

  await t.test('a DaemonSet has a ready pod on each simulated node', async (t) => {
    const ds = {
      apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent' },
      spec: { selector: { matchLabels: { app: 'agent' } }, template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'agent', image: 'fluentd' }] } } },
    };
    t.equal((await s.request('POST', `/apis/apps/v1/namespaces/${ns}/daemonsets`, { body: ds })).status, 201);
    await run(t, s, [...n, 'rollout', 'status', 'daemonset/agent', '--timeout=150s']);
    const pods = (await items(s, `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dagent`)).filter(ready);
    t.same(pods.map((p) => p.spec.nodeName).sort(), NODES, 'one ready pod per node');
  });

  await t.test('a Service\'s EndpointSlice lists the ready addresses', async (t) => {
    await run(t, s, [...n, 'expose', 'deployment', 'web', '--port=80']);
    const want = (await items(s, `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`)).filter(ready).map((p) => p.status.podIP).sort();
    const slices = await until(() => items(s, `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb`),
      (l) => l.flatMap((x) => x.endpoints ?? []).filter((e: any) => e.conditions?.ready).length === 5, WAIT);
    const got = slices.flatMap((x) => x.endpoints ?? []).filter((e: any) => e.conditions?.ready).flatMap((e: any) => e.addresses).sort();
    t.same(got, want, 'the ready pods\' addresses');
  });

  await t.test('kubectl drain evicts a node\'s pods, and they are made again elsewhere', async (t) => {
    const node = 'sim-node-0';
    await run(t, s, ['drain', node, '--ignore-daemonsets', '--delete-emptydir-data', '--grace-period=1', '--timeout=150s']);
    const webOn = async (nodeName: string) => (await items(s, `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`)).filter((p) => p.spec.nodeName === nodeName && !p.metadata.deletionTimestamp);
    t.ok(await eventually(async () => (await webOn(node)).length === 0, WAIT), 'no web pod left on the drained node');
    await run(t, s, [...n, 'rollout', 'status', 'deployment/web', '--timeout=150s']);
    const all = (await items(s, `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`)).filter((p) => !p.metadata.deletionTimestamp && ready(p));
    t.equal(all.length, 5, 'five ready again');
    t.notOk(all.some((p) => p.spec.nodeName === node), 'none on the cordoned node');
    await run(t, s, ['uncordon', node]);
  });

  await t.test('deleting the namespace removes everything in it', async (t) => {
    await run(t, s, ['delete', 'namespace', ns, '--wait=false']);
    t.ok(await eventually(async () => (await s.get(`/api/v1/namespaces/${ns}`)).status === 404, WAIT), 'the namespace is gone');
    t.same(await items(s, `/api/v1/namespaces/${ns}/pods`), [], 'no pod left');
  });
}

t.test('examples/simulated-nodes.yaml and no other process', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--config', EXAMPLE] });
  t.ok(await eventually(async () => (await items(s, '/api/v1/nodes')).filter((x) => (x.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True')).length === 3), 'three simulated nodes Ready');
  await scenario(t, s, 'alone');
  // Retried races the reference's components log as well: a pod made before its namespace's default
  // service account (the reference's ServiceAccount admission refuses it the same way), a binding in a
  // namespace being deleted.
  const warnings = s.logs.filter((l) => /^[EW]\d{4}/.test(l) && !/being terminated|error looking up service account/.test(l));
  t.same(warnings, [], 'no other warning or error in the server log');
});

const SCHED = process.env.KUBE_SCHEDULER;
const KCM = process.env.KUBE_CONTROLLER_MANAGER;
const refSkip = !(SCHED && existsSync(SCHED) && KCM && existsSync(KCM))
  ? 'KUBE_SCHEDULER and KUBE_CONTROLLER_MANAGER do not name the reference binaries (e.g. /work/ref/bin/kube-scheduler, /work/ref/bin/kube-controller-manager)'
  : noKubectl;

t.test('the same with the reference kube-scheduler and kube-controller-manager instead of ours', { skip: refSkip }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--config', EXAMPLE] });
  const kc = await componentKubeconfig(s, 'system:kube-scheduler');
  const sched = startComponent(t, SCHED!, ['--kubeconfig', kc, '--authentication-kubeconfig', kc, '--authorization-kubeconfig', kc, '--bind-address', '127.0.0.1', '--secure-port', '0']);
  const kcm = startComponent(t, KCM!, controllerManagerArgs(s, path.join(s.dataDir, 'admin.kubeconfig')));
  for (const lease of ['kube-scheduler', 'kube-controller-manager']) {
    t.ok(await eventually(() => s.logs.some((l) => l.includes('an external component runs') && l.includes(`kube-system/${lease}`))), `ours step aside for ${lease}`);
  }
  await scenario(t, s, 'reference');
  t.same(badLines(sched.log), [], 'scheduler log');
  // While the namespace goes, its DaemonSet's revision is deleted before the DaemonSet and the manager's
  // controller asks to make it again until the DaemonSet goes too: refused as in every cluster.
  t.same(badLines(kcm.log, { expected: /no cloud provider provided|is being terminated/, race: /Operation cannot be fulfilled|not found|already exists/ }), [], 'controller manager log');
});
