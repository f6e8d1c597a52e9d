// API Priority and Fairness, the pure parts: which flow schema a request matches under the
// reference's bootstrap configuration, its seats, and the fair queue set.
import t from 'tap';
import { getBrand } from '../../kernel/brand.js';
import type { FlowRequest, RequestInfo } from '../../kernel/contracts.js';
import { classify, orderSchemas, seatsFor } from '../../plugins/flowcontrol/apf/classify.js';
import { defaultFlowSchemas } from '../../plugins/flowcontrol/apf/defaults.js';
import { flowHash, QueueSet } from '../../plugins/flowcontrol/apf/queueset.js';

const brand = getBrand('kubernetes');
const schemas = orderSchemas(defaultFlowSchemas(brand));

function req(user: string, groups: string[], info: Partial<RequestInfo>): FlowRequest {
  const full: RequestInfo = { isResourceRequest: true, path: '/api/v1/pods', verb: 'get', apiPrefix: 'api', apiGroup: '', apiVersion: 'v1', namespace: '', resource: 'pods', subresource: '', name: '', ...info };
  return { info: full, user: { username: user, groups }, longRunning: false, aborted: () => false };
}
const auth = ['system:authenticated'];

t.test('classification under the bootstrap configuration', async (t) => {
  const cases: [string, FlowRequest, string, string][] = [
    ['system:masters', req('admin', ['system:masters', ...auth], { verb: 'delete' }), 'exempt', ''],
    ['anonymous probe', req('system:anonymous', ['system:unauthenticated'], { isResourceRequest: false, path: '/readyz', verb: 'get' }), 'probes', ''],
    ['probe with a POST is not a probe', req('system:anonymous', ['system:unauthenticated'], { isResourceRequest: false, path: '/readyz', verb: 'post' }), 'global-default', 'system:anonymous'],
    ['node reading its node', req('system:node:n1', ['system:nodes', ...auth], { resource: 'nodes', subresource: 'status', verb: 'patch' }), 'system-node-high', 'system:node:n1'],
    ['node reading pods', req('system:node:n1', ['system:nodes', ...auth], { resource: 'pods', namespace: 'ns1', verb: 'list' }), 'system-nodes', 'system:node:n1'],
    ['scheduler lease', req('system:kube-scheduler', auth, { apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-system', verb: 'update' }), 'system-leader-election', 'system:kube-scheduler'],
    ['controller manager by namespace', req('system:kube-controller-manager', auth, { resource: 'pods', namespace: 'ns2', verb: 'delete' }), 'kube-controller-manager', 'ns2'],
    ['kube-system service account', req('system:serviceaccount:kube-system:foo', ['system:serviceaccounts', 'system:serviceaccounts:kube-system', ...auth], { resource: 'secrets', namespace: 'x' }), 'kube-system-service-accounts', 'x'],
    ['other service account', req('system:serviceaccount:app:foo', ['system:serviceaccounts', ...auth], { resource: 'secrets', namespace: 'app' }), 'service-accounts', 'system:serviceaccount:app:foo'],
    ['ordinary user', req('alice', auth, { resource: 'configmaps', namespace: 'a', verb: 'create' }), 'global-default', 'alice'],
  ];
  for (const [what, r, schema, distinguisher] of cases) {
    const c = classify(schemas, r);
    t.equal(c?.schema.name, schema, `${what}: ${schema}`);
    t.equal(c?.distinguisher, distinguisher, `${what}: distinguisher "${distinguisher}"`);
  }
  t.equal(classify(schemas, req('bob', [], { verb: 'get' })), undefined, 'a user in no group the schemas name matches nothing (the plugin sends it to catch-all)');
});

t.test('seats: lists by the objects they may read, 1 to 10', async (t) => {
  const list = (listSize: number, limit?: number) => ({ ...req('alice', auth, { verb: 'list' }), listSize, limit });
  t.equal(seatsFor(req('alice', auth, { verb: 'get' })), 1);
  t.equal(seatsFor(list(0)), 1);
  t.equal(seatsFor(list(250)), 3);
  t.equal(seatsFor(list(100_000)), 10);
  t.equal(seatsFor(list(100_000, 500)), 5, 'a page costs what it may read');
});

t.test('queue set: seats, fair turns between flows, full queues, Reject, time-out', async (t) => {
  const qs = new QueueSet({ seats: 1, queues: 8, handSize: 2, queueLengthLimit: 10 });
  t.same(qs.admit(flowHash('a'), 1, 10_000), { now: true }, 'a free seat runs at once');
  const order: string[] = [];
  const heavy = Array.from({ length: 10 }, (_, i) => qs.admit(flowHash('heavy'), 1, 10_000));
  const light = qs.admit(flowHash('light'), 1, 10_000);
  for (const [i, a] of heavy.entries()) if ('wait' in a) void a.wait.then((ok) => ok && order.push(`heavy${i}`));
  if ('wait' in light) void light.wait.then((ok) => ok && order.push('light'));
  t.equal(qs.queued, 11);
  for (let i = 0; i < 4; i++) { qs.release(1); await Promise.resolve(); await Promise.resolve(); }
  t.ok(order.indexOf('light') >= 0 && order.indexOf('light') <= 2, `the light flow is served among the first turns, not after the heavy backlog (${order.join(' ')})`);

  const full = new QueueSet({ seats: 1, queues: 1, handSize: 1, queueLengthLimit: 2 });
  full.admit(1, 1, 10_000);
  t.ok('wait' in full.admit(1, 1, 10_000));
  t.ok('wait' in full.admit(1, 1, 10_000));
  t.same(full.admit(1, 1, 10_000), { rejected: true }, 'a full queue rejects');

  const reject = new QueueSet({ seats: 2, queues: 0, handSize: 0, queueLengthLimit: 0 });
  t.same(reject.admit(1, 1, 1000), { now: true });
  t.same(reject.admit(1, 1, 1000), { now: true });
  t.same(reject.admit(1, 1, 1000), { rejected: true }, 'a Reject level refuses once its seats are taken');

  const slow = new QueueSet({ seats: 1, queues: 4, handSize: 2, queueLengthLimit: 5 });
  slow.admit(1, 1, 10_000);
  const waiting = slow.admit(2, 1, 30);
  t.ok('wait' in waiting);
  const alive = setTimeout(() => {}, 1000); // the queue's timers do not keep a process alive by themselves
  if ('wait' in waiting) t.equal(await waiting.wait, false, 'a request that waits past its limit is turned away');
  clearTimeout(alive);
  t.equal(slow.queued, 0);

  const wide = new QueueSet({ seats: 4, queues: 4, handSize: 2, queueLengthLimit: 5 });
  t.same(wide.admit(1, 10, 1000), { now: true }, 'a request wider than the level runs alone');
  t.equal(wide.executing, 4);
});
