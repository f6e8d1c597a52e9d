// The reference kube-controller-manager (KUBE_CONTROLLER_MANAGER names its binary) runs against
// this server with the flags of every kubeadm cluster, one service account per controller: its
// controllers do their work on a scripted workload, none is refused by our default RBAC policy, and
// neither its log nor ours shows error loops where our own built-in controllers do the same work.
// Also, without the controller manager: the default policy served over HTTP is the reference's
// (REF_RBAC_POLICY or /work/ref/policy).
import { existsSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { until } from '../lib/poll.js';
import { makeRequest } from '../lib/csr.js';
import { comparePolicy, readRefPolicy, refPolicyDir, refPolicySkip } from '../lib/ref-policy.js';
import { withServer, type TestServer } from '../lib/server.js';
import { badLines, controllerManagerArgs, startComponent } from '../lib/ref-component.js';

const KCM = process.env.KUBE_CONTROLLER_MANAGER;
const kcmSkip = KCM && existsSync(KCM) ? false : 'KUBE_CONTROLLER_MANAGER does not name a kube-controller-manager binary (e.g. KUBE_CONTROLLER_MANAGER=/path/to/kube-controller-manager v1.28)';
const WAIT = 60_000;
const NS = 'kcm-work';

t.test('the default policy served over HTTP is the reference\'s', { skip: refPolicySkip() }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const ref = readRefPolicy(refPolicyDir()!);
  const R = '/apis/rbac.authorization.k8s.io/v1';
  const ours = async (p: string) => ((await s.get(`${R}/${p}?labelSelector=kubernetes.io/bootstrapping%3Drbac-defaults`)).json.items as Record<string, any>[]);
  t.same(comparePolicy('ClusterRole', ref.clusterroles, await ours('clusterroles')), []);
  t.same(comparePolicy('ClusterRoleBinding', ref.clusterrolebindings, await ours('clusterrolebindings')), []);
  t.same(comparePolicy('Role', ref.roles, await ours('roles')), []);
  t.same(comparePolicy('RoleBinding', ref.rolebindings, await ours('rolebindings')), []);
});

/** Without a cloud provider these controllers do not start, in every kubeadm cluster alike. */
const EXPECTED = /no cloud provider provided/;
/**
 * What the workload asks for: the over-quota ReplicationController's pods are refused by quota
 * admission (forbidden, but no authorization refusal), retried with back-off by its controller.
 */
const WANTED = /exceeded quota: one-pod/;
/**
 * Lost races, retried by the controller: two controllers (ours and the manager's) creating the same
 * object, an update with a stale resourceVersion, an object deleted under a sync, a namespace whose
 * contents the other namespace controller is deleting at the same moment.
 */
const RACE = /Operation cannot be fulfilled|already exists|not found|unexpected items still remain in namespace/;

function startKcm(t: { teardown(fn: () => unknown): void }, s: TestServer) {
  const args = [...controllerManagerArgs(s, path.join(s.dataDir, 'admin.kubeconfig')),
    // a short grace so that the node test below sees the lifecycle controller act within seconds
    '--node-monitor-grace-period=8s', '--node-monitor-period=2s'];
  // KCM_LOG_FILE keeps the whole log for a look after the run.
  return startComponent(t, KCM!, args, process.env.KCM_LOG_FILE);
}

t.test('the reference controller manager against this server', { skip: kcmSkip }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const kcm = startKcm(t, s);
  const req = (method: string, p: string, body?: unknown) => s.request(method, p, { body });
  const get = async (p: string) => (await s.get(p)).json;
  const items = async (p: string) => ((await s.get(p)).json?.items ?? []) as Record<string, any>[];
  const ownedBy = (o: Record<string, any>, uid: string) => (o.metadata.ownerReferences ?? []).some((r: any) => r.uid === uid);
  const created = async (p: string, body: unknown) => {
    const r = await req('POST', p, body);
    t.equal(r.status, 201, `create ${p}: ${r.text.slice(0, 200)}`);
    return r.json;
  };
  const labels = { app: 'web' };
  const podSpec = { containers: [{ name: 'c', image: 'registry.example/app:1' }] };
  const deployment = (name: string, replicas: number) => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
    spec: { replicas, selector: { matchLabels: { ...labels, d: name } }, template: { metadata: { labels: { ...labels, d: name } }, spec: podSpec } },
  });
  const D = `/apis/apps/v1/namespaces/${NS}/deployments`;
  const RS = `/apis/apps/v1/namespaces/${NS}/replicasets`;
  const PODS = `/api/v1/namespaces/${NS}/pods`;

  await created('/api/v1/namespaces', { metadata: { name: NS } });
  // Pods need the namespace's default ServiceAccount, made by our controller and the manager's alike.
  t.ok(await until(() => s.get(`/api/v1/namespaces/${NS}/serviceaccounts/default`), (r) => r.status === 200, WAIT), 'default ServiceAccount');

  await t.test('a Deployment rolls out a ReplicaSet and its Pods', async (t) => {
    const d = await created(D, deployment('web', 2));
    const rs = await until(async () => (await items(RS)).find((o) => ownedBy(o, d.metadata.uid)), Boolean, WAIT);
    t.ok(rs, 'ReplicaSet owned by the Deployment');
    const pods = await until(async () => (await items(PODS)).filter((o) => rs && ownedBy(o, rs.metadata.uid)), (l) => l.length === 2, WAIT);
    t.equal(pods.length, 2, 'two Pods owned by the ReplicaSet');
    const st = await until(() => get(`${D}/web`), (o) => o.status?.replicas === 2, WAIT);
    t.equal(st.status?.replicas, 2, 'Deployment status counts the replicas');
  });

  await t.test('a ReplicationController reaches its replicas', async (t) => {
    await created(`/api/v1/namespaces/${NS}/replicationcontrollers`, {
      metadata: { name: 'rc' }, spec: { replicas: 2, selector: { rc: 'rc' }, template: { metadata: { labels: { rc: 'rc' } }, spec: podSpec } },
    });
    const rc = await until(() => get(`/api/v1/namespaces/${NS}/replicationcontrollers/rc`), (o) => o.status?.replicas === 2, WAIT);
    t.equal(rc.status?.replicas, 2);
  });

  await t.test('a Job creates Pods', async (t) => {
    const job = await created(`/apis/batch/v1/namespaces/${NS}/jobs`, {
      metadata: { name: 'job' }, spec: { template: { spec: { ...podSpec, restartPolicy: 'Never' } } },
    });
    const pods = await until(async () => (await items(PODS)).filter((o) => ownedBy(o, job.metadata.uid)), (l) => l.length > 0, WAIT);
    t.equal(pods.length, 1, 'one Pod owned by the Job');
    const st = await until(() => get(`/apis/batch/v1/namespaces/${NS}/jobs/job`), (o) => o.status?.active === 1, WAIT);
    t.equal(st.status?.active, 1, 'Job status counts it active');
  });

  await t.test('a Service gets Endpoints and EndpointSlices', async (t) => {
    await created(`/api/v1/namespaces/${NS}/services`, { metadata: { name: 'svc' }, spec: { selector: labels, ports: [{ port: 80 }] } });
    const ep = await until(() => s.get(`/api/v1/namespaces/${NS}/endpoints/svc`), (r) => r.status === 200, WAIT);
    t.equal(ep.status, 200, 'Endpoints');
    const slices = await until(() => items(`/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices?labelSelector=kubernetes.io/service-name%3Dsvc`), (l) => l.length > 0, WAIT);
    t.equal(slices[0]?.metadata?.labels?.['endpointslice.kubernetes.io/managed-by'], 'endpointslice-controller.k8s.io', 'EndpointSlice of the slice controller');
  });

  await t.test('ResourceQuota status is computed', async (t) => {
    await created(`/api/v1/namespaces/${NS}/resourcequotas`, { metadata: { name: 'q' }, spec: { hard: { pods: '50', services: '5' } } });
    const q = await until(() => get(`/api/v1/namespaces/${NS}/resourcequotas/q`), (o) => o.status?.used?.services === '1', WAIT);
    t.same(q.status?.hard, { pods: '50', services: '5' });
    t.equal(q.status?.used?.services, '1', 'used services counted');
  });

  await t.test('a custom Endpoints of a Service without a selector is mirrored into an EndpointSlice', async (t) => {
    await created(`/api/v1/namespaces/${NS}/services`, { metadata: { name: 'ext' }, spec: { ports: [{ port: 5432 }] } });
    await created(`/api/v1/namespaces/${NS}/endpoints`, { metadata: { name: 'ext' }, subsets: [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ port: 5432 }] }] });
    const slices = await until(() => items(`/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices?labelSelector=kubernetes.io/service-name%3Dext`), (l) => l.length > 0, WAIT);
    t.equal(slices[0]?.metadata?.labels?.['endpointslice.kubernetes.io/managed-by'], 'endpointslicemirroring-controller.k8s.io', 'mirrored by the mirroring controller');
    t.same(slices[0]?.endpoints?.map((e: any) => e.addresses[0]), ['192.0.2.10'], 'with the custom address');
  });

  await t.test('a ReplicationController over its quota surfaces ReplicaFailure', async (t) => {
    const QNS = `${NS}-quota`;
    await created('/api/v1/namespaces', { metadata: { name: QNS } });
    await until(() => s.get(`/api/v1/namespaces/${QNS}/serviceaccounts/default`), (r) => r.status === 200, WAIT);
    await created(`/api/v1/namespaces/${QNS}/resourcequotas`, { metadata: { name: 'one-pod' }, spec: { hard: { pods: '1' } } });
    await until(() => get(`/api/v1/namespaces/${QNS}/resourcequotas/one-pod`), (o) => o.status?.hard?.pods === '1', WAIT);
    await created(`/api/v1/namespaces/${QNS}/replicationcontrollers`, {
      metadata: { name: 'big' }, spec: { replicas: 3, selector: { rc: 'big' }, template: { metadata: { labels: { rc: 'big' } }, spec: podSpec } },
    });
    const rc = await until(() => get(`/api/v1/namespaces/${QNS}/replicationcontrollers/big`), (o) => (o.status?.conditions ?? []).some((c: any) => c.type === 'ReplicaFailure'), WAIT);
    const cond = (rc.status?.conditions ?? []).find((c: any) => c.type === 'ReplicaFailure');
    t.match(cond, { status: 'True', reason: 'FailedCreate' }, 'ReplicaFailure, FailedCreate');
    t.match(cond?.message ?? '', /exceeded quota: one-pod/, 'the quota refusal as its message');
  });

  await t.test('a CronJob creates a Job on schedule', async (t) => {
    const cj = await created(`/apis/batch/v1/namespaces/${NS}/cronjobs`, {
      metadata: { name: 'every-minute' }, spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: { ...podSpec, restartPolicy: 'Never' } } } } },
    });
    // the next minute boundary, at most a minute away
    const jobs = await until(async () => (await items(`/apis/batch/v1/namespaces/${NS}/jobs`)).filter((o) => ownedBy(o, cj.metadata.uid)), (l) => l.length > 0, 90_000);
    t.ok(jobs.length > 0, 'a Job owned by the CronJob');
    const st = await until(() => get(`/apis/batch/v1/namespaces/${NS}/cronjobs/every-minute`), (o) => !!o.status?.lastScheduleTime, WAIT);
    t.ok(st.status?.lastScheduleTime, 'lastScheduleTime recorded');
  });

  await t.test('a node whose Lease is renewed stays Ready; one whose Lease is not goes Unknown', async (t) => {
    const stamp = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const micro = () => new Date().toISOString().replace(/Z$/, '000Z');
    const node = (name: string) => ({ metadata: { name }, status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready', lastHeartbeatTime: stamp(), lastTransitionTime: stamp() }] } });
    for (const name of ['alive', 'silent']) {
      const n = await created('/api/v1/nodes', node(name));
      await req('PUT', `/api/v1/nodes/${name}/status`, { ...n, status: node(name).status });
      await created('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', { metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: micro() } });
    }
    // the node agent's heartbeat: the alive node's Lease renewed every second
    let beating = true;
    const beat = (async () => {
      while (beating) {
        const l = await get('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/alive');
        await req('PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/alive', { ...l, spec: { ...l.spec, renewTime: micro() } });
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
    const ready = (o: any) => (o?.status?.conditions ?? []).find((c: any) => c.type === 'Ready')?.status;
    const silent = await until(() => get('/api/v1/nodes/silent'), (o) => ready(o) === 'Unknown', WAIT);
    t.equal(ready(silent), 'Unknown', 'the silent node: Ready Unknown (the controller is at work)');
    const alive = await get('/api/v1/nodes/alive');
    beating = false;
    await beat;
    t.equal(ready(alive), 'True', 'the node whose Lease is renewed is still Ready');
    t.notOk((alive.spec?.taints ?? []).some((x: any) => x.key === 'node.kubernetes.io/unreachable'), 'and not tainted unreachable');
  });

  await t.test('garbage collection with each propagation policy', async (t) => {
    for (const propagationPolicy of ['Background', 'Foreground', 'Orphan']) {
      const name = `gc-${propagationPolicy.toLowerCase()}`;
      const d = await created(D, deployment(name, 1));
      const rs = await until(async () => (await items(RS)).find((o) => ownedBy(o, d.metadata.uid)), Boolean, WAIT);
      t.ok(rs, `${propagationPolicy}: ReplicaSet rolled out`);
      if (!rs) continue;
      t.ok(await until(async () => (await items(PODS)).some((o) => ownedBy(o, rs.metadata.uid)), Boolean, WAIT), `${propagationPolicy}: Pod made`);
      const del = await s.request('DELETE', `${D}/${name}`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy } });
      t.ok(del.status === 200 || del.status === 202, `${propagationPolicy}: deleted (${del.status})`);
      t.ok(await until(() => s.get(`${D}/${name}`), (r) => r.status === 404, WAIT), `${propagationPolicy}: Deployment gone`);
      if (propagationPolicy === 'Orphan') {
        const left = await until(() => get(`${RS}/${rs.metadata.name}`), (o) => !o.metadata?.ownerReferences?.length, WAIT);
        t.equal(left.kind, 'ReplicaSet', 'Orphan: the ReplicaSet stays');
        t.notOk(left.metadata?.ownerReferences?.length, 'Orphan: without its owner reference');
      } else {
        t.ok(await until(() => s.get(`${RS}/${rs.metadata.name}`), (r) => r.status === 404, WAIT), `${propagationPolicy}: ReplicaSet collected`);
        t.ok(await until(async () => (await items(PODS)).filter((o) => ownedBy(o, rs.metadata.uid)), (l) => l.length === 0, WAIT), `${propagationPolicy}: Pods collected`);
      }
    }
  });

  await t.test('a kube-apiserver-client CSR approved by the test is signed', async (t) => {
    const csr = await makeRequest('CN=kcm-user, O=kcm-group');
    const C = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
    const c = await created(C, {
      apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'kcm-user' },
      spec: { request: Buffer.from(csr.pem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] },
    });
    const ap = await req('PUT', `${C}/kcm-user/approval`, { ...c, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'by the test' }] } });
    t.equal(ap.status, 200, `approved: ${ap.text.slice(0, 200)}`);
    const signed = await until(() => get(`${C}/kcm-user`), (o) => Boolean(o.status?.certificate), WAIT);
    t.ok(signed.status?.certificate, 'certificate issued');
  });

  await t.test('a namespace deletion completes', async (t) => {
    await created('/api/v1/namespaces', { metadata: { name: 'kcm-doomed' } });
    await created('/api/v1/namespaces/kcm-doomed/configmaps', { metadata: { name: 'cm' }, data: { a: 'b' } });
    // both root-CA publishers must have had their go at it: the namespace's kube-root-ca.crt exists
    t.ok(await until(() => s.get('/api/v1/namespaces/kcm-doomed/configmaps/kube-root-ca.crt'), (r) => r.status === 200, WAIT), 'kube-root-ca.crt published');
    const del = await req('DELETE', '/api/v1/namespaces/kcm-doomed');
    t.equal(del.status, 200);
    t.ok(await until(() => s.get('/api/v1/namespaces/kcm-doomed'), (r) => r.status === 404, WAIT), 'namespace gone');
  });

  await t.test('no refusals, failed watches, decode errors or error loops in either log', async (t) => {
    const kcmBad = badLines(kcm.log, { wanted: WANTED, expected: EXPECTED, race: RACE });
    t.same(kcmBad, [], `controller manager log (${kcm.log.length} lines):\n${kcmBad.slice(0, 40).join('\n')}`);
    const ours = s.logs.filter((l) => /^[EW]\d{4}|level=(warn|error)|"level":"(warn|error)"/.test(l));
    t.same(ours, [], `server log:\n${ours.slice(0, 40).join('\n')}`);
    t.equal(kcm.proc.exitCode, null, 'the controller manager is still running');
    // Ours stepped aside once its Lease was seen, so the two never raced over the same objects.
    t.ok(s.logs.some((l) => l.includes('an external component runs')), 'our controllers stepped aside');
    const raced = kcm.log.filter((l) => /kube-root-ca\.crt.*already exists|namespaces? "[^"]+" not found/.test(l));
    t.same(raced, [], 'no race with our root CA publisher or namespace controller');
  });
});
