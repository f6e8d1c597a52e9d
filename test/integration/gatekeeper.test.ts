// What every decoder of the cluster relies on (issue 30): a malformed quantity is a 400 with the
// reference's decode message and nothing is stored; quantities are stored in canonical form; a Node
// registered with its status keeps it (the scheduler reads capacity and allocatable from there).
import t from 'tap';
import { withServer } from '../lib/server.js';

const QUANTITY_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const pod = (name: string, resources: unknown, volumes?: unknown) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: { containers: [{ name: 'c', image: 'busybox', resources }], ...(volumes ? { volumes } : {}) },
});

t.test('quantities and node status (kubernetes brand)', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });

  await t.test('a malformed quantity is refused at decoding, with the reference message, and nothing is stored', async (t) => {
    const probes: [string, unknown, string][] = [
      ['str', pod('q1', { requests: { cpu: 'str' } }), QUANTITY_ERROR],
      ['1Zi', pod('q2', { limits: { memory: '1Zi' } }), QUANTITY_ERROR],
      ['bad suffix', pod('q3', { requests: { cpu: '1KK' } }), "unable to parse quantity's suffix"],
      ['an object', pod('q4', { requests: { cpu: { a: 1 } } }), QUANTITY_ERROR],
      ['emptyDir sizeLimit', pod('q5', {}, [{ name: 'v', emptyDir: { sizeLimit: 'abc' } }]), QUANTITY_ERROR],
    ];
    for (const [what, body, msg] of probes) {
      const r = await s.request('POST', '/api/v1/namespaces/default/pods', { body });
      t.equal(r.status, 400, `${what}: ${r.text}`);
      t.equal(r.json?.reason, 'BadRequest', what);
      t.equal(r.json?.message, `Pod in version "v1" cannot be handled as a Pod: ${msg}`, what);
    }
    const dep = {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: pod('x', { requests: { cpu: 'str' } }).spec } },
    };
    const d = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: dep });
    t.equal(d.status, 400, 'inside a Deployment template too');
    t.equal(d.json?.message, `Deployment in version "v1" cannot be handled as a Deployment: ${QUANTITY_ERROR}`);
    const list = await s.get('/api/v1/namespaces/default/pods');
    t.same(list.json.items, [], 'nothing stored');
    // A patch that makes a quantity malformed changes nothing either.
    t.equal((await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('ok', { requests: { cpu: '100m' } }) })).status, 201);
    const p = await s.request('PATCH', '/api/v1/namespaces/default/pods/ok', {
      body: { metadata: { labels: { x: 'y' } }, spec: { overhead: { cpu: 'str' } } }, headers: { 'content-type': 'application/merge-patch+json' },
    });
    t.not(p.status, 200, `a patch to a malformed quantity is refused: ${p.status}`);
    t.notOk((await s.get('/api/v1/namespaces/default/pods/ok')).json.metadata.labels?.x, 'and not applied');
  });

  await t.test('quantities are stored in the canonical form the reference prints', async (t) => {
    const r = await s.request('POST', '/api/v1/namespaces/default/pods', {
      body: pod('canon', { requests: { cpu: '1000m', memory: '1024Mi', 'ephemeral-storage': 0.5 }, limits: { cpu: '1.5', memory: '1.5Gi', 'ephemeral-storage': '2000' } }),
    });
    t.equal(r.status, 201, r.text);
    const res = (await s.get('/api/v1/namespaces/default/pods/canon')).json.spec.containers[0].resources;
    t.same(res, { requests: { cpu: '1', memory: '1Gi', 'ephemeral-storage': '500m' }, limits: { cpu: '1500m', memory: '1536Mi', 'ephemeral-storage': '2k' } });
  });

  await t.test('a Node created with its status keeps it', async (t) => {
    const status = {
      capacity: { cpu: '4', memory: '8Gi', pods: '110' },
      allocatable: { cpu: '3900m', memory: '7Gi', pods: '110' },
      addresses: [{ type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'n1' }],
      nodeInfo: { machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: '6.1', osImage: 'Debian', containerRuntimeVersion: 'containerd://1.7', kubeletVersion: 'v1.28.7', kubeProxyVersion: 'v1.28.7', operatingSystem: 'linux', architecture: 'amd64' },
    };
    const r = await s.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, status } });
    t.equal(r.status, 201, r.text);
    const got = (await s.get('/api/v1/nodes/n1')).json.status;
    t.same(got.capacity, status.capacity, 'capacity kept');
    t.same(got.allocatable, { cpu: '3900m', memory: '7Gi', pods: '110' }, 'allocatable kept');
    t.same(got.addresses, status.addresses, 'addresses kept');
    t.equal(got.nodeInfo?.kubeletVersion, 'v1.28.7', 'nodeInfo kept');
    // Other types still start from a fresh status.
    const svc = await s.request('POST', '/api/v1/namespaces/default/services', {
      body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 80 }] }, status: { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } } },
    });
    t.equal(svc.status, 201, svc.text);
    t.notOk(svc.json.status?.loadBalancer?.ingress, 'a Service drops the status it was created with');
  });
});

// The attack: with a quota of cpu=2, a pod requesting -3 was admitted and let four more in.
t.test('a negative request is refused before quota sees it; the quota then holds', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const ns = 'quota-ns';
  t.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status, 201);
  t.equal((await s.request('POST', `/api/v1/namespaces/${ns}/resourcequotas`, { body: { metadata: { name: 'q' }, spec: { hard: { cpu: '2' } } } })).status, 201);
  const podIn = (name: string, cpu: string) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu }, limits: { cpu } } }] } });
  // the quota controller must have observed the quota (status.hard) before admission charges it
  for (let i = 0; i < 100 && !(await s.get(`/api/v1/namespaces/${ns}/resourcequotas/q`)).json.status?.hard; i++) await new Promise((r) => setTimeout(r, 100));
  const neg = await s.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podIn('neg', '-3') });
  t.equal(neg.status, 422, `a negative request is invalid: ${neg.text.slice(0, 200)}`);
  t.ok(neg.json.details.causes.some((c: any) => c.field === 'spec.containers[0].resources.requests[cpu]' && c.reason === 'FieldValueInvalid'), 'the request is named');
  const codes: number[] = [];
  for (let i = 0; i < 4; i++) codes.push((await s.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podIn(`p${i}`, '1') })).status);
  t.same(codes, [201, 201, 403, 403], 'two pods of one cpu fit a quota of two, the next two are refused');
  const used = (await s.get(`/api/v1/namespaces/${ns}/resourcequotas/q`)).json.status?.used;
  t.equal(used?.cpu, '2', 'the quota counts two');
});
