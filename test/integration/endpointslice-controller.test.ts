// The endpointslice controller over real HTTPS, the test playing the kubelet: a Service's slice
// lists its selected pods with IPs, ready as their pods are, named target ports resolved, pods that
// leave the selector removed, a placeholder slice for no pods, and slices gone with the Service.
import t from 'tap';
import { eventually, until } from '../lib/poll.js';
import type { TestServer } from '../lib/server.js';
import { createOk, getOk, setPodPhase, withWorkloadControllers } from '../lib/workloads.js';

const SVC = '/api/v1/namespaces/default/services';
const PODS = '/api/v1/namespaces/default/pods';
const SLICES = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';
const merge = { 'content-type': 'application/merge-patch+json' };

async function slices(s: TestServer, svc: string): Promise<any[]> {
  return (await getOk(s, `${SLICES}?labelSelector=${encodeURIComponent(`kubernetes.io/service-name=${svc}`)}`)).items;
}
const pod = (name: string, app: string) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app } },
  spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }] },
});

t.test('endpointslice controller', async (t) => {
  const s = await withWorkloadControllers(t, ['endpointslice'], { brand: 'kubernetes' });
  await createOk(s, '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': 'z1' } } });

  await t.test('a selected service gets a placeholder, then its ready pods', async (t) => {
    const svc = await createOk(s, SVC, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } });
    const [placeholder] = await until(() => slices(s, 'web'), (l) => l.length === 1);
    t.match(placeholder.metadata.name, /^web-[a-z0-9]{5}$/);
    t.equal(placeholder.metadata.labels['endpointslice.kubernetes.io/managed-by'], 'endpointslice-controller.k8s.io');
    t.same(placeholder.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: svc.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    t.equal(placeholder.addressType, 'IPv4');
    t.notOk(placeholder.endpoints?.length, 'no endpoints yet');

    const a = await createOk(s, PODS, pod('web-a', 'web'));
    await createOk(s, PODS, pod('web-b', 'web'));
    await setPodPhase(s, a, 'Running', true, { podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.1' }] });
    const [one] = await until(() => slices(s, 'web'), (l) => l[0]?.endpoints?.length === 1);
    t.same(one.endpoints[0], { addresses: ['10.0.0.1'], conditions: { ready: true, serving: true, terminating: false }, targetRef: { kind: 'Pod', namespace: 'default', name: 'web-a', uid: a.metadata.uid }, nodeName: 'n1', zone: 'z1' });
    t.same(one.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }], 'the named target port resolved');

    const b = (await s.get(`${PODS}/web-b`)).json;
    await setPodPhase(s, b, 'Running', false, { podIP: '10.0.0.2', podIPs: [{ ip: '10.0.0.2' }] });
    const [two] = await until(() => slices(s, 'web'), (l) => l[0]?.endpoints?.length === 2);
    const eb = two.endpoints.find((e: any) => e.addresses[0] === '10.0.0.2');
    t.same(eb.conditions, { ready: false, serving: false, terminating: false }, 'a pod not ready is listed, not ready');
  });

  await t.test('a pod that leaves the selector leaves the slice', async (t) => {
    t.equal((await s.request('PATCH', `${PODS}/web-b`, { body: { metadata: { labels: { app: 'other' } } }, headers: merge })).status, 200);
    const [left] = await until(() => slices(s, 'web'), (l) => l[0]?.endpoints?.length === 1);
    t.equal(left.endpoints[0].addresses[0], '10.0.0.1');
  });

  await t.test('the slices go with the service', async (t) => {
    t.equal((await s.request('DELETE', `${SVC}/web`)).status, 200);
    t.ok(await eventually(async () => (await slices(s, 'web')).length === 0));
    t.equal((await slices(s, 'kubernetes')).filter((x) => x.metadata.labels['endpointslice.kubernetes.io/managed-by']).length, 0, 'the selector-less kubernetes service is left to its own reconciler');
  });
});
