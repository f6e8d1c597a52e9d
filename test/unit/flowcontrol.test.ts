// API Priority and Fairness, the pure parts: which flow schema a request matches under the
// reference's bootstrap configuration, its seats, and the fair queue set.
import t from 'tap';
import { getBrand } from '../../kernel/contracts/brand.js';
import type { FlowRequest, RequestInfo } from '../../kernel/contracts/index.js';
import { classify, orderSchemas, seatsFor } from '../../plugins/flowcontrol/apf/classify.js';
import { defaultFlowSchemas } from '../../plugins/flowcontrol/apf/defaults.js';
import { flowHash, QueueSet } from '../../plugins/flowcontrol/apf/queueset.js';
import { allocate, boundsOf, dealSeats } from '../../plugins/flowcontrol/apf/borrowing.js';

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
  t.same(qs.admit(flowHash('a'), 1, 10_000), { now: true, width: 1 }, 'a free seat runs at once');
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
  t.same(reject.admit(1, 1, 1000), { now: true, width: 1 });
  t.same(reject.admit(1, 1, 1000), { now: true, width: 1 });
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
  t.same(wide.admit(1, 10, 1000), { now: true, width: 4 }, 'a request wider than the level runs alone');
  t.equal(wide.executing, 4);
  wide.setSeats(20);
  wide.release(4);
  t.equal(wide.executing, 0, 'it gives back the seats it took, whatever the limit is by then');
});

t.test('borrowing: bounds from lendablePercent and borrowingLimitPercent', async (t) => {
  t.same(boundsOf(49, 50), { nominal: 49, min: 24, max: Infinity }, 'half lendable (rounded), no borrowing limit when unset');
  t.same(boundsOf(10, 0, 100), { nominal: 10, min: 10, max: 20 });
  t.same(boundsOf(245, 90, 0), { nominal: 245, min: 24, max: 245 }, 'a borrowing limit of 0 never grows');
});

t.test('borrowing: one fair fraction of every target, within the bounds, keeping the total', async (t) => {
  t.same(allocate(10, [{ lower: 2, upper: Infinity, target: 8 }, { lower: 1, upper: 5, target: 1 }, { lower: 1, upper: Infinity, target: 1 }]).shares.map(Math.round), [8, 1, 1]);
  const capped = allocate(20, [{ lower: 2, upper: 6, target: 30 }, { lower: 1, upper: Infinity, target: 2 }]).shares;
  t.same(capped.map((x) => Math.round(x * 1000) / 1000), [6, 14], 'a level stops at its upper bound; the other takes the rest');
  t.same(allocate(3, [{ lower: 2, upper: 9, target: 8 }, { lower: 2, upper: 9, target: 1 }]).shares, [2, 2], 'lower bounds hold even past the total');
  t.same(allocate(30, [{ lower: 2, upper: 5, target: 8 }, { lower: 1, upper: 1, target: 0 }]).shares, [5, 1], 'no fraction reaches the total: each gets all it may use');
});

t.test('borrowing: a busy level borrows what idle levels may lend, and only that', async (t) => {
  const idle = { avg: 0, stdDev: 0, high: 0 };
  const busy = { avg: 8, stdDev: 0, high: 8 };
  const lending = [{ bounds: boundsOf(2, 0), smoothed: 0 }, { bounds: boundsOf(10, 90), smoothed: 0 }];
  t.same(dealSeats(lending, [busy, idle]).seats, [11, 1], 'the busy level gets nine seats of the idle one');
  const keeping = [{ bounds: boundsOf(2, 0), smoothed: 0 }, { bounds: boundsOf(10, 0), smoothed: 0 }];
  t.same(dealSeats(keeping, [busy, idle]).seats, [2, 10], 'nothing lendable: each keeps its nominal seats');
  const limited = [{ bounds: boundsOf(2, 0, 100), smoothed: 0 }, { bounds: boundsOf(10, 90), smoothed: 0 }];
  t.same(dealSeats(limited, [busy, idle]).seats, [4, 8], 'borrowingLimitPercent 100: at most double');
  // the demand is smoothed over many periods: one quiet period later the seats are still lent
  const after = dealSeats(lending, [idle, idle]);
  t.equal(after.seats[0], 11, 'one quiet period later the busy level keeps what it borrowed');
  t.equal(after.seats[0] + after.seats[1], 12, 'the total stays the nominal total');
});

t.test('queue set: seat demand over a period (executing plus queued), and a new limit lets waiting requests run', async (t) => {
  let now = 0;
  const qs = new QueueSet({ seats: 2, queues: 4, handSize: 2, queueLengthLimit: 10 }, () => now);
  qs.admit(1, 1, 60_000);
  qs.admit(2, 1, 60_000);
  const waiting = [qs.admit(3, 1, 60_000), qs.admit(4, 1, 60_000)];
  now = 1000;
  qs.release(1);
  qs.release(1);
  now = 2000;
  const d = qs.takeDemandStats();
  t.equal(d.high, 4, 'the peak: two running, two queued');
  t.equal(Math.round(d.avg * 100) / 100, 3, 'four seats for a second, then two for a second');
  t.equal(Math.round(d.stdDev * 100) / 100, 1);
  t.equal(qs.takeDemandStats().high, 2, 'a new period starts from the demand of now');
  const qs2 = new QueueSet({ seats: 1, queues: 4, handSize: 2, queueLengthLimit: 10 }, () => now);
  qs2.admit(1, 1, 60_000);
  const w = [qs2.admit(2, 1, 60_000), qs2.admit(3, 1, 60_000)];
  t.equal(qs2.queued, 2);
  qs2.setSeats(3);
  t.equal(qs2.queued, 0, 'borrowed seats go to the waiting requests at once');
  t.equal(qs2.executing, 3);
  for (const a of [...waiting, ...w]) if ('wait' in a) t.equal(await a.wait, true);
});
