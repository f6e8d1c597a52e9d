// Pods over HTTP: pods/binding and the legacy bindings resource, graceful deletion, pods/eviction
// against PodDisruptionBudgets kept current by the disruption controller; kubectl drain.
import t from 'tap';
import { withServer, sleep, type TestServer } from '../lib/server.js';
import { kubectl, kubectlRelease, noKubectl } from '../lib/kubectl.js';
import { until } from '../lib/poll.js';

const NS = '/api/v1/namespaces/default';
const pod = (name: string, labels: Record<string, string> = {}, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
});
const binding = (name: string, node: string) => ({ apiVersion: 'v1', kind: 'Binding', metadata: { name }, target: { kind: 'Node', name: node } });
const eviction = (name: string, more: Record<string, unknown> = {}) => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' }, ...more });

async function node(s: TestServer, name: string) {
  return s.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name } } });
}

/** A pod bound to a node and running Ready (or not), as its node agent would report it. */
async function runningPod(s: TestServer, name: string, labels: Record<string, string>, nodeName: string, ready = true) {
  const r = await s.request('POST', `${NS}/pods`, { body: pod(name, labels, { nodeName }) });
  if (r.status !== 201) throw new Error(r.text);
  const st = await s.request('PATCH', `${NS}/pods/${name}/status`, {
    body: { status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } },
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  if (st.status !== 200) throw new Error(st.text);
}

t.test('binding sets spec.nodeName once', async (t) => {
  const s = await withServer(t);
  await s.request('POST', `${NS}/pods`, { body: pod('a') });
  const b = await s.request('POST', `${NS}/pods/a/binding`, { body: binding('a', 'n1') });
  t.equal(b.status, 201, b.text);
  t.same(b.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
  const got = (await s.get(`${NS}/pods/a`)).json;
  t.equal(got.spec.nodeName, 'n1');
  t.ok(got.status.conditions.some((c: { type: string; status: string }) => c.type === 'PodScheduled' && c.status === 'True'), 'PodScheduled');
  const again = await s.request('POST', `${NS}/pods/a/binding`, { body: binding('a', 'n2') });
  t.equal(again.status, 409);
  t.equal(again.json.message, 'Operation cannot be fulfilled on pods/binding "a": pod a is already assigned to node "n1"');
  t.equal((await s.get(`${NS}/pods/a`)).json.spec.nodeName, 'n1');

  t.equal((await s.request('POST', `${NS}/pods/a/binding`, { body: binding('other', 'n1') })).status, 400, 'name mismatch');
  t.equal((await s.request('POST', `${NS}/pods/missing/binding`, { body: binding('missing', 'n1') })).status, 404);
  const bad = await s.request('POST', `${NS}/pods/a/binding`, { body: { metadata: { name: 'a' }, target: { kind: 'Pod' } } });
  t.equal(bad.status, 422);

  // The legacy resource: POST bindings with the pod's name.
  await s.request('POST', `${NS}/pods`, { body: pod('b') });
  const legacy = await s.request('POST', `${NS}/bindings`, { body: { ...binding('b', 'n3'), metadata: { name: 'b', annotations: { 'example.com/by': 'scheduler-x' } } } });
  t.equal(legacy.status, 201, legacy.text);
  const lb = (await s.get(`${NS}/pods/b`)).json;
  t.equal(lb.spec.nodeName, 'n3');
  t.equal(lb.metadata.annotations['example.com/by'], 'scheduler-x', 'the binding\'s annotations are merged');
  t.equal((await s.request('POST', `${NS}/bindings`, { body: binding('b', 'n4') })).status, 409);

  // Discovery lists the sub-resources.
  const res = (await s.get('/api/v1')).json.resources.map((r: { name: string }) => r.name);
  for (const n of ['pods/binding', 'pods/eviction', 'bindings']) t.ok(res.includes(n), n);

  // Ten schedulers bind one pod at once: exactly one wins.
  await s.request('POST', `${NS}/pods`, { body: pod('race') });
  const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => s.request('POST', `${NS}/pods/race/binding`, { body: binding('race', `node-${i}`) })));
  t.equal(rs.filter((r) => r.status === 201).length, 1);
  t.equal(rs.filter((r) => r.status === 409).length, 9);
});

t.test('a binding is one write: watchers never see a bound pod without PodScheduled', async (t) => {
  const s = await withServer(t);
  const created = (await s.request('POST', `${NS}/pods`, { body: pod('w') })).json;
  // the scheduler's earlier verdict: PodScheduled=False, replaced in place by the binding (UpdatePodCondition)
  const st = await s.request('PATCH', `${NS}/pods/w/status`, {
    body: { status: { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: 'no fit' }, { type: 'Ready', status: 'False' }] } },
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  t.equal(st.status, 200, 'PodScheduled=False set');
  const events: any[] = [];
  const w = s.stream(`${NS}/pods?watch=true&fieldSelector=metadata.name%3Dw&resourceVersion=${st.json.metadata.resourceVersion}`, (e) => events.push(e));
  t.teardown(() => w.close());
  const b = await s.request('POST', `${NS}/pods/w/binding`, { body: { ...binding('w', 'n1'), metadata: { name: 'w', annotations: { 'example.com/by': 'x' } } } });
  t.equal(b.status, 201, b.text);
  await until(async () => events, (l) => l.length >= 1);
  await sleep(300);
  t.equal(events.length, 1, `one event for the binding (${events.map((e) => e.type).join(', ')})`);
  const o = events[0]?.object;
  t.equal(o?.spec.nodeName, 'n1');
  t.equal(o?.metadata.annotations?.['example.com/by'], 'x', 'its annotations in the same write');
  t.same(o?.status.conditions.map((c: any) => [c.type, c.status]), [['PodScheduled', 'True'], ['Ready', 'False']], 'PodScheduled True where the False one was');
  t.notOk('reason' in (o?.status.conditions[0] ?? {}), 'the reason and message of the False condition are gone');
  t.not(created.metadata.resourceVersion, o?.metadata.resourceVersion);

  // a pod with scheduling gates is not bound (the reference's binding refuses it)
  await s.request('POST', `${NS}/pods`, { body: pod('gated', {}, { schedulingGates: [{ name: 'example.com/wait' }] }) });
  const g = await s.request('POST', `${NS}/pods/gated/binding`, { body: binding('gated', 'n1') });
  t.equal(g.status, 409);
  t.equal(g.json.message, 'Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates');
  t.notOk((await s.get(`${NS}/pods/gated`)).json.spec.nodeName, 'not bound');
});

t.test('graceful deletion', async (t) => {
  const s = await withServer(t);
  await node(s, 'n1');
  await s.request('POST', `${NS}/pods`, { body: pod('bound', {}, { nodeName: 'n1' }) });
  const d = await s.request('DELETE', `${NS}/pods/bound`);
  t.equal(d.status, 200);
  t.equal(d.json.metadata.deletionGracePeriodSeconds, 30, 'the default grace');
  t.ok(d.json.metadata.deletionTimestamp);
  t.ok(Date.parse(d.json.metadata.deletionTimestamp) > Date.now() + 20_000, 'deletionTimestamp is now + grace');
  t.equal((await s.get(`${NS}/pods/bound`)).status, 200, 'still there for its node agent');
  const shorter = await s.request('DELETE', `${NS}/pods/bound?gracePeriodSeconds=5`);
  t.equal(shorter.json.metadata.deletionGracePeriodSeconds, 5, 'a shorter grace shortens it');
  const longer = await s.request('DELETE', `${NS}/pods/bound?gracePeriodSeconds=60`);
  t.equal(longer.json.metadata.deletionGracePeriodSeconds, 5, 'a longer grace does not lengthen it');
  // The node agent reports the stopped containers during the grace period: the pod stays, with that status.
  const stopped = await s.request('PATCH', `${NS}/pods/bound/status`, { body: { status: { phase: 'Succeeded' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal(stopped.status, 200, 'a status write during the grace period');
  const after = await s.get(`${NS}/pods/bound`);
  t.equal(after.status, 200, 'does not delete the pod');
  t.equal(after.json.status?.phase, 'Succeeded', 'and is kept');
  const zero = await s.request('DELETE', `${NS}/pods/bound`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 } });
  t.equal(zero.status, 200);
  t.equal((await s.get(`${NS}/pods/bound`)).status, 404, 'gone after the node agent deletes with grace 0');

  await s.request('POST', `${NS}/pods`, { body: pod('own', {}, { nodeName: 'n1', terminationGracePeriodSeconds: 7 }) });
  t.equal((await s.request('DELETE', `${NS}/pods/own`)).json.metadata.deletionGracePeriodSeconds, 7, 'terminationGracePeriodSeconds');

  await s.request('POST', `${NS}/pods`, { body: pod('unscheduled') });
  await s.request('DELETE', `${NS}/pods/unscheduled`);
  t.equal((await s.get(`${NS}/pods/unscheduled`)).status, 404, 'never scheduled: gone at once');

  await s.request('POST', `${NS}/pods`, { body: pod('orphan', {}, { nodeName: 'no-such-node' }) });
  await s.request('DELETE', `${NS}/pods/orphan`);
  t.equal((await s.get(`${NS}/pods/orphan`)).status, 404, 'a pod of a node that does not exist goes at once');

  await s.request('POST', `${NS}/pods`, { body: pod('done', {}, { nodeName: 'n1' }) });
  await s.request('PATCH', `${NS}/pods/done/status`, { body: { status: { phase: 'Succeeded' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  await s.request('DELETE', `${NS}/pods/done`);
  t.equal((await s.get(`${NS}/pods/done`)).status, 404, 'a finished pod goes at once');

  // A lingering pod with a finalizer: grace 0 leaves it to the finalizer.
  await s.request('POST', `${NS}/pods`, { body: { ...pod('fin', {}, { nodeName: 'n1' }), metadata: { name: 'fin', finalizers: ['example.com/keep'] } } });
  await s.request('DELETE', `${NS}/pods/fin`);
  const f0 = await s.request('DELETE', `${NS}/pods/fin?gracePeriodSeconds=0`);
  t.equal(f0.json.metadata.deletionGracePeriodSeconds, 0);
  t.equal((await s.get(`${NS}/pods/fin`)).status, 200, 'kept by its finalizer');
  await s.request('PATCH', `${NS}/pods/fin`, { body: { metadata: { finalizers: null } }, headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal((await s.get(`${NS}/pods/fin`)).status, 404);

  // Concurrent deletes of one lingering pod and of many pods.
  await Promise.all(Array.from({ length: 10 }, (_, i) => s.request('POST', `${NS}/pods`, { body: pod(`c${i}`, {}, { nodeName: 'n1' }) })));
  const ds = await Promise.all(Array.from({ length: 10 }, (_, i) => s.request('DELETE', `${NS}/pods/c${i % 2}?gracePeriodSeconds=${10 + i}`)));
  t.ok(ds.every((r) => r.status === 200));
  t.equal((await s.get(`${NS}/pods/c0`)).json.metadata.deletionGracePeriodSeconds, 10, 'the shortest grace wins');
});

t.test('eviction honours PodDisruptionBudgets', async (t) => {
  const s = await withServer(t);
  await node(s, 'n1');
  for (const n of ['a1', 'a2', 'a3']) await runningPod(s, n, { app: 'a' }, 'n1');
  await runningPod(s, 'sick', { app: 'a' }, 'n1', false);
  const pdb = await s.request('POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', {
    body: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'budget' }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'a' } } } },
  });
  t.equal(pdb.status, 201, pdb.text);
  const status = await until(async () => (await s.get('/apis/policy/v1/namespaces/default/poddisruptionbudgets/budget')).json.status, (st) => st?.observedGeneration === 1);
  t.match(status, { currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1, expectedPods: 4, observedGeneration: 1 });
  t.match(status.conditions, [{ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods' }]);

  // Dry run: allowed, nothing changes.
  t.equal((await s.request('POST', `${NS}/pods/a1/eviction?dryRun=All`, { body: eviction('a1') })).status, 201);
  t.equal((await s.get(`${NS}/pods/a1`)).json.metadata.deletionTimestamp, undefined);

  // Two evictions at once with one disruption allowed: one goes, one is refused with 429.
  const both = await Promise.all(['a1', 'a2'].map((n) => s.request('POST', `${NS}/pods/${n}/eviction`, { body: eviction(n) })));
  t.same(both.map((r) => r.status).sort(), [201, 429]);
  const refused = both.find((r) => r.status === 429)!;
  t.equal(refused.json.reason, 'TooManyRequests');
  t.equal(refused.json.message, "Cannot evict pod as it would violate the pod's disruption budget.");
  t.match(refused.json.details.causes, [{ reason: 'DisruptionBudget', message: /^The disruption budget budget (needs 2 healthy pods and has \d currently|is still being processed by the server\.)$/ }]);
  const after = await until(async () => (await s.get('/apis/policy/v1/namespaces/default/poddisruptionbudgets/budget')).json.status, (st) => st?.disruptionsAllowed === 0 && st?.currentHealthy === 2);
  t.match(after, { currentHealthy: 2, desiredHealthy: 2, disruptionsAllowed: 0 });
  const no = await s.request('POST', `${NS}/pods/a3/eviction`, { body: eviction('a3') });
  t.equal(no.status, 429);
  t.equal(no.json.details.causes[0].message, 'The disruption budget budget needs 2 healthy pods and has 2 currently');

  // An unready pod may go while the budget is met (IfHealthyBudget), without using a disruption.
  t.equal((await s.request('POST', `${NS}/pods/sick/eviction`, { body: eviction('sick') })).status, 201);

  // A pod without a budget is evicted (graceful: bound to a live node).
  await runningPod(s, 'free', { app: 'free' }, 'n1');
  const fe = await s.request('POST', `${NS}/pods/free/eviction`, { body: eviction('free') });
  t.equal(fe.status, 201);
  t.ok((await s.get(`${NS}/pods/free`)).json.metadata.deletionTimestamp, 'terminating');

  t.equal((await s.request('POST', `${NS}/pods/a3/eviction`, { body: eviction('other') })).status, 400, 'name mismatch');
  t.equal((await s.request('POST', `${NS}/pods/nope/eviction`, { body: eviction('nope') })).status, 404);

  // AlwaysAllow lets unready pods go even when the budget is not met; two budgets refuse.
  await runningPod(s, 'b1', { app: 'b' }, 'n1', false);
  await s.request('POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', {
    body: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'strict' }, spec: { minAvailable: 5, selector: { matchLabels: { app: 'b' } } } },
  });
  await until(async () => (await s.get('/apis/policy/v1/namespaces/default/poddisruptionbudgets/strict')).json.status, (st) => st?.observedGeneration === 1);
  t.equal((await s.request('POST', `${NS}/pods/b1/eviction`, { body: eviction('b1') })).status, 429, 'IfHealthyBudget: unready pod kept while the budget is not met');
  await s.request('PATCH', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/strict', { body: { spec: { unhealthyPodEvictionPolicy: 'AlwaysAllow' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  await until(async () => (await s.get('/apis/policy/v1/namespaces/default/poddisruptionbudgets/strict')).json.status, (st) => st?.observedGeneration === 2);
  t.equal((await s.request('POST', `${NS}/pods/b1/eviction`, { body: eviction('b1') })).status, 201, 'AlwaysAllow');
  await runningPod(s, 'c1', { app: 'b', tier: 'x' }, 'n1');
  await s.request('POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', {
    body: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'second' }, spec: { maxUnavailable: 1, selector: { matchLabels: { tier: 'x' } } } },
  });
  const two = await s.request('POST', `${NS}/pods/c1/eviction`, { body: eviction('c1') });
  t.equal(two.status, 500);
  t.equal(two.json.message, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
});

t.test('kubectl drain evicts what it may and stops at a budget, with every release', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  // The node agent's part: pods it is asked to stop are deleted with grace 0.
  let stop = false;
  const agent = (async () => {
    while (!stop) {
      for (const p of (await s.get(`${NS}/pods`)).json.items) {
        if (p.metadata.deletionTimestamp) await s.request('DELETE', `${NS}/pods/${p.metadata.name}?gracePeriodSeconds=0`);
      }
      await sleep(200);
    }
  })();
  const releases = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33'].map((v) => [v, kubectlRelease(v)] as const).filter(([, b]) => b);
  // Each release drains its own node, pods and budget, so the releases run at once: each drain's
  // --timeout is spent waiting, and one after another they would add up.
  await Promise.all((releases.length ? releases : [['default', undefined] as const]).map(async ([v, bin]) => {
    const n = v.replace('.', '-');
    const nodeName = `n-${n}`;
    await node(s, nodeName);
    await runningPod(s, `guarded-${n}`, { app: `db-${n}` }, nodeName);
    await runningPod(s, `web1-${n}`, { app: 'web' }, nodeName);
    await runningPod(s, `web2-${n}`, { app: 'web' }, nodeName);
    await s.request('POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', {
      body: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: `db-${n}` }, spec: { minAvailable: 1, selector: { matchLabels: { app: `db-${n}` } } } },
    });
    await until(async () => (await s.get(`/apis/policy/v1/namespaces/default/poddisruptionbudgets/db-${n}`)).json.status, (st) => st?.observedGeneration === 1);
    const r = await kubectl(s, ['drain', nodeName, '--force', '--timeout=4s'], { bin });
    t.not(r.code, 0, `${v}: drain does not finish while the budget protects a pod`);
    t.match(r.stderr + r.stdout, "Cannot evict pod as it would violate the pod's disruption budget.", `${v}: the reference's refusal`);
    const left = await until(async () => (await s.get(`${NS}/pods?fieldSelector=spec.nodeName%3D${nodeName}`)).json.items.map((p: { metadata: { name: string } }) => p.metadata.name), (l) => l.length === 1);
    t.same(left, [`guarded-${n}`], `${v}: the others were evicted`);
    t.equal((await s.get(`/api/v1/nodes/${nodeName}`)).json.spec.unschedulable, true, `${v}: cordoned`);
  }));
  stop = true;
  await agent;
});
