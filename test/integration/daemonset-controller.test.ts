// The daemonset controller over real HTTPS, the test playing scheduler and kubelet: a pod per
// qualifying node (nodeSelector-free template, a tainted node skipped), pinned by node affinity,
// status counts, nodes that come and go or gain a NoExecute taint, a rolling update within maxUnavailable.
import t from 'tap';
import { eventually, until } from '../lib/poll.js';
import type { TestServer } from '../lib/server.js';
import { createOk, getOk, podTemplate, setPodPhase, waitFor, withWorkloadControllers } from '../lib/workloads.js';

const DS = '/apis/apps/v1/namespaces/default/daemonsets';
const PODS = '/api/v1/namespaces/default/pods';
const NODES = '/api/v1/nodes';
const merge = { 'content-type': 'application/merge-patch+json' };

const node = (name: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } } });
const target = (p: any) => p.spec.nodeName ?? p.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.[0]?.matchFields?.[0]?.values?.[0];
const isReady = (p: any) => p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');

async function pods(s: TestServer): Promise<any[]> {
  return (await getOk(s, `${PODS}?labelSelector=app%3Dagent`)).items.filter((p: any) => !p.metadata.deletionTimestamp);
}

/** The scheduler's and the kubelet's part: bind each pod to its node, then report it running and ready. */
async function runAll(s: TestServer): Promise<void> {
  for (const p of await pods(s)) {
    if (!p.spec.nodeName) {
      const r = await s.request('POST', `${PODS}/${p.metadata.name}/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: p.metadata.name }, target: { kind: 'Node', name: target(p) } } });
      if (r.status !== 201 && r.status !== 409 && r.status !== 404) throw new Error(`bind: ${r.status} ${r.text}`);
      if (r.status !== 201) continue;
    }
    if (!isReady(p)) await setPodPhase(s, (await s.get(`${PODS}/${p.metadata.name}`)).json, 'Running').catch(() => undefined);
  }
}

/**
 * A node as a node agent and the node lifecycle controller leave it: Ready, and without the
 * not-ready taint admission put on it at creation (only the given taints).
 */
async function readyNode(s: TestServer, name: string, taints: unknown[] = []): Promise<void> {
  await createOk(s, NODES, node(name));
  const r = await s.request('PATCH', `${NODES}/${name}`, { body: { spec: { taints } }, headers: merge });
  if (r.status !== 200) throw new Error(`node ${name}: ${r.status} ${r.text}`);
  const st = await s.request('PATCH', `${NODES}/${name}/status`, { body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready', lastHeartbeatTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] } }, headers: merge });
  if (st.status !== 200) throw new Error(`node ${name} status: ${st.status} ${st.text}`);
}

t.test('daemonset controller', async (t) => {
  const s = await withWorkloadControllers(t, ['daemonset'], { brand: 'kubernetes' });
  for (const n of ['n1', 'n2', 'n3']) await readyNode(s, n);
  await readyNode(s, 'tainted', [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }]);

  await t.test('one pod per qualifying node', async (t) => {
    const ds = await createOk(s, DS, { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent' }, spec: { selector: { matchLabels: { app: 'agent' } }, template: podTemplate({ app: 'agent' }) } });
    const got = await until(() => pods(s), (l) => l.length === 3);
    t.same(got.map(target).sort(), ['n1', 'n2', 'n3'], 'not on the tainted node');
    const p = got[0];
    t.same(p.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: ds.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    t.ok(p.metadata.labels['controller-revision-hash'], 'revision hash label');
    t.equal(p.metadata.labels['pod-template-generation'], '1');
    t.ok(p.spec.tolerations.some((x: any) => x.key === 'node.kubernetes.io/not-ready' && x.effect === 'NoExecute'), 'the daemon tolerations');
    const before = await waitFor(s, `${DS}/agent`, (o) => o.status?.currentNumberScheduled === 3);
    t.match(before.status, { desiredNumberScheduled: 3, currentNumberScheduled: 3, numberMisscheduled: 0, numberReady: 0, numberUnavailable: 3, updatedNumberScheduled: 3 });
    await runAll(s);
    const after = await waitFor(s, `${DS}/agent`, (o) => o.status?.numberReady === 3 && o.status?.numberAvailable === 3);
    t.notOk(after.status.numberUnavailable);
    t.equal(after.status.observedGeneration, 1);
  });

  await t.test('nodes that come, go, or gain a NoExecute taint', async (t) => {
    await readyNode(s, 'n4');
    t.ok(await eventually(async () => (await pods(s)).some((p) => target(p) === 'n4')), 'a pod for the new node');
    t.equal((await s.request('PATCH', `${NODES}/n1`, { body: { spec: { taints: [{ key: 'evict', effect: 'NoExecute' }] } }, headers: merge })).status, 200);
    t.ok(await eventually(async () => !(await pods(s)).some((p) => target(p) === 'n1')), 'the pod leaves the NoExecute-tainted node');
    await waitFor(s, `${DS}/agent`, (o) => o.status?.desiredNumberScheduled === 3);
  });

  await t.test('a rolling update stays within maxUnavailable', async (t) => {
    await runAll(s);
    await waitFor(s, `${DS}/agent`, (o) => o.status?.numberAvailable === 3);
    t.equal((await s.request('PATCH', `${DS}/agent`, { body: { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } }, headers: merge })).status, 200);
    let worst = 0;
    const done = await until(async () => {
      const ready = (await pods(s)).filter(isReady).length;
      worst = Math.max(worst, 3 - ready);
      await runAll(s);
      return getOk(s, `${DS}/agent`);
    }, (o) => o.status?.observedGeneration === 2 && o.status?.updatedNumberScheduled === 3 && o.status?.numberAvailable === 3);
    t.equal(done.status.updatedNumberScheduled, 3);
    t.ok(worst <= 1, `at most one node without a ready pod (saw ${worst})`);
    t.ok((await pods(s)).every((p) => p.spec.containers[0].image === 'nginx:2'));
  });
});
