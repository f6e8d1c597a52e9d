// Our controllers that do the reference controller manager's work step aside while it runs: it is
// seen by its leader Lease (kube-system/kube-controller-manager) held and renewed; once the Lease
// lapses, they run again. `--step-aside kube-controller-manager=false` keeps them running whatever
// the Lease says, `=true` keeps them out without one. The external component here is this test
// renewing the Lease as the controller manager's elector would.
import t, { type Test } from 'tap';
import { withServer, sleep, type TestServer } from '../lib/server.js';
import { eventually } from '../lib/poll.js';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';
const microTime = () => new Date().toISOString().replace(/Z$/, '000Z');

/** Holds the Lease as an external controller manager: renewed every second until the returned function is called. */
async function holdLease(t: Test, s: TestServer, durationSeconds: number): Promise<() => void> {
  const spec = () => ({ holderIdentity: 'ext-host_1234', leaseDurationSeconds: durationSeconds, acquireTime: microTime(), renewTime: microTime() });
  const made = await s.request('POST', LEASES, { body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'kube-controller-manager' }, spec: spec() } });
  t.equal(made.status, 201, made.text);
  let stopped = false;
  const renew = async () => {
    while (!stopped) {
      await sleep(1000);
      if (stopped) break;
      const cur = await s.get(`${LEASES}/kube-controller-manager`);
      await s.request('PUT', `${LEASES}/kube-controller-manager`, { body: { ...cur.json, spec: { ...cur.json.spec, renewTime: microTime() } } });
    }
  };
  const loop = renew();
  t.teardown(async () => { stopped = true; await loop; });
  return () => { stopped = true; };
}

const hasRootCA = async (s: TestServer, ns: string) => (await s.get(`/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`)).status === 200;
const makeNamespace = async (t: Test, s: TestServer, name: string) => t.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name } } })).status, 201);

t.test('while the controller manager holds its Lease, ours step aside; when it lapses, they run again', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  await makeNamespace(t, s, 'before');
  t.ok(await eventually(() => hasRootCA(s, 'before')), 'ours run while no controller manager is seen');

  const release = await holdLease(t, s, 4);
  t.ok(await eventually(() => s.logs.some((l) => l.includes('an external component runs'))), 'the server says its controllers step aside');
  await makeNamespace(t, s, 'during');
  await sleep(2000);
  // (the default service account is no witness: the ServiceAccount admission plugin makes one too)
  t.notOk(await hasRootCA(s, 'during'), 'no root CA ConfigMap from ours meanwhile');
  // The server's own controllers (not the controller manager's work) keep running: a CRD still gets established, say;
  // here, the APIService controller's health check stays.
  t.equal((await s.get('/readyz/autoregister-completion')).status, 200);

  release();
  t.ok(await eventually(() => hasRootCA(s, 'during')), 'once the Lease lapses, fresh controllers catch up');
  t.ok(s.logs.some((l) => l.includes('lease lapsed')), 'the server says so');
});

t.test('--step-aside kube-controller-manager=false: ours run whatever the Lease says', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--step-aside', 'kube-controller-manager=false'] });
  await holdLease(t, s, 30);
  await makeNamespace(t, s, 'held');
  t.ok(await eventually(() => hasRootCA(s, 'held')));
});

t.test('--step-aside kube-controller-manager=true: ours stay out with no Lease at all', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--step-aside', 'kube-controller-manager=true'] });
  await makeNamespace(t, s, 'none');
  await sleep(2000);
  t.notOk(await hasRootCA(s, 'none'));
  // the server's own work goes on: the system namespaces exist, the readiness checks pass
  t.equal((await s.get('/readyz')).status, 200);
});
