// A whole cluster of reference components on this server: kube-controller-manager, kube-scheduler and
// two kubemark hollow nodes (the real kubelet over a fake container runtime), each with the identity
// kubeadm gives it (client certificates for system:kube-controller-manager, system:kube-scheduler and
// system:node:<name> in system:nodes, so the Node authorizer and NodeRestriction apply to the
// kubelets). Nodes register and turn Ready, a Deployment's pods are scheduled and reported Running
// by their kubelets, scaling down and deleting end with the kubelets confirming each pod gone, and no
// component's log shows a refusal, failed list or watch, or decode error.
// Runs when KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER and KUBEMARK name the binaries (v1.28).
import { existsSync } from 'node:fs';
import net from 'node:net';
import t from 'tap';
import { until } from '../lib/poll.js';
import { badLines, componentKubeconfig, controllerManagerArgs, startComponent } from '../lib/ref-component.js';
import { withServer } from '../lib/server.js';

const BIN = { kcm: process.env.KUBE_CONTROLLER_MANAGER, scheduler: process.env.KUBE_SCHEDULER, kubemark: process.env.KUBEMARK };
const missing = Object.entries(BIN).filter(([, b]) => !b || !existsSync(b)).map(([k]) => k);
const skip = missing.length ? `set KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER and KUBEMARK to the reference's binaries (missing: ${missing.join(', ')})` : false;
const WAIT = 90_000;
const NS = 'cluster-work';
const NODES = ['hollow-1', 'hollow-2'];

/** A free TCP port on loopback (the hollow kubelets each serve one). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => { const p = (srv.address() as net.AddressInfo).port; srv.close(() => resolve(p)); });
    srv.on('error', reject);
  });
}

/** Races the components retry by design (two writers of one object, stale updates, objects gone under a sync). */
const RACE = /Operation cannot be fulfilled|already exists|not found|the object has been modified/;
/**
 * Every such cluster shows these at start: without a cloud provider some controllers do not start; a
 * hollow node has no iptables, image filesystem or first PLEG relist yet, its Lease controller may look
 * for the Node a moment before the Node is registered, and its first status update finds a Node
 * without a Ready condition (it adds it).
 */
const EXPECTED = /no cloud provider provided|iptables hint chain|PLEG is not healthy|Image garbage collection failed|set owner ref to the node lease|Node does not have NodeReady condition/;

t.test('controller manager, scheduler and two kubelets run a Deployment on this server', { skip }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const logs: Record<string, string[]> = {};
  const kcmKc = await componentKubeconfig(s, 'system:kube-controller-manager');
  logs.kcm = startComponent(t, BIN.kcm!, [...controllerManagerArgs(s, kcmKc), '--node-monitor-grace-period=16s', '--node-monitor-period=2s']).log;
  const schedKc = await componentKubeconfig(s, 'system:kube-scheduler');
  logs.scheduler = startComponent(t, BIN.scheduler!, ['--kubeconfig', schedKc, '--authentication-kubeconfig', schedKc, '--authorization-kubeconfig', schedKc,
    '--leader-elect=true', '--bind-address', '127.0.0.1', '--secure-port', '0']).log;
  for (const name of NODES) {
    const kc = await componentKubeconfig(s, `system:node:${name}`, ['system:nodes']);
    logs[name] = startComponent(t, BIN.kubemark!, ['--morph=kubelet', `--name=${name}`, `--kubeconfig=${kc}`, `--kubelet-port=${await freePort()}`,
      `--kubelet-read-only-port=0`, '--use-host-image-service=false', '--max-pods=20', '--node-labels=cluster.example/hollow=true'],
    process.env.KUBEMARK_LOG_DIR ? `${process.env.KUBEMARK_LOG_DIR}/${name}.log` : undefined).log;
  }
  const items = async (p: string) => ((await s.get(p)).json?.items ?? []) as any[];

  await t.test('the nodes register, turn Ready and lose the not-ready taint; their Leases are renewed', async (t) => {
    for (const name of NODES) {
      const node = await until(async () => (await s.get(`/api/v1/nodes/${name}`)).json, (n) => (n.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True') && !(n.spec?.taints ?? []).some((x: any) => x.key === 'node.kubernetes.io/not-ready'), WAIT);
      t.ok((node.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True'), `${name} Ready`);
      t.notOk((node.spec?.taints ?? []).some((x: any) => x.key === 'node.kubernetes.io/not-ready'), `${name} untainted by the node lifecycle controller`);
      const lease = await until(async () => (await s.get(`/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`)).json, (l) => !!l.spec?.renewTime, WAIT);
      const renewed = await until(async () => (await s.get(`/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`)).json, (l) => l.spec?.renewTime !== lease.spec.renewTime, WAIT);
      t.not(renewed.spec.renewTime, lease.spec.renewTime, `${name} renews its Lease`);
    }
  });

  t.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status, 201);
  t.ok(await until(() => s.get(`/api/v1/namespaces/${NS}/serviceaccounts/default`), (r) => r.status === 200, WAIT), 'default ServiceAccount');
  const D = `/apis/apps/v1/namespaces/${NS}/deployments`;
  const PODS = `/api/v1/namespaces/${NS}/pods`;

  await t.test('a Deployment\'s pods are scheduled onto the nodes and reported Running', async (t) => {
    const r = await s.request('POST', D, { body: {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
      spec: { replicas: 4, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1', resources: { requests: { cpu: '10m' } } }] } } },
    } });
    t.equal(r.status, 201);
    const pods = await until(() => items(PODS), (l) => l.length === 4 && l.every((p) => p.status?.phase === 'Running'), WAIT);
    t.equal(pods.filter((p) => p.status?.phase === 'Running').length, 4, 'four pods Running');
    t.ok(pods.every((p) => NODES.includes(p.spec.nodeName)), 'each on a hollow node');
    const d = await until(async () => (await s.get(`${D}/web`)).json, (o) => o.status?.availableReplicas === 4, WAIT);
    t.equal(d.status?.availableReplicas, 4, 'the Deployment counts four available');
  });

  await t.test('scaling down: the kubelets stop the pods and confirm them gone', async (t) => {
    const r = await s.request('PATCH', `${D}/web`, { body: { spec: { replicas: 1 } }, headers: { 'content-type': 'application/merge-patch+json' } });
    t.equal(r.status, 200);
    const pods = await until(() => items(PODS), (l) => l.length === 1, WAIT);
    t.equal(pods.length, 1, 'one pod left: the three others were deleted gracefully and removed by their kubelets');
  });

  await t.test('deleting the Deployment removes its ReplicaSet and last pod', async (t) => {
    t.equal((await s.request('DELETE', `${D}/web`)).status, 200);
    const left = await until(async () => [...await items(PODS), ...await items(`/apis/apps/v1/namespaces/${NS}/replicasets`)], (l) => l.length === 0, WAIT);
    t.same(left.map((o) => o.metadata.name), []);
  });

  // our own log: no error line (warnings are allowed: a lost race is retried)
  t.same(s.logs.filter((l) => /^E\d{4}/.test(l)), [], 'this server logged no error');
  for (const [who, log] of Object.entries(logs)) {
    const bad = badLines(log, { race: RACE, expected: EXPECTED });
    t.same(bad, [], `${who}: no refusal, failed list or watch, decode error or error loop`);
  }
});
