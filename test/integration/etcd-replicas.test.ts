// Two server replicas on one etcd (--storage-backend=etcd3): writes on either are seen by consistent
// reads and watches on both, paging tokens and resourceVersions work on both, optimistic concurrency
// holds across them, and the controllers run on one replica at a time through a Lease, moving to the
// other when the holder dies.
import t from 'tap';
import { cmPath, etcdMissing, etcdReplicas, TEST_LEASE } from '../lib/etcd.js';
import { sleep, type TestServer } from '../lib/server.js';

const LEASE = TEST_LEASE;

t.test('two replicas on one etcd', { skip: etcdMissing }, async (t) => {
  const { a, b } = await etcdReplicas(t);
  const both = [a, b];
  const cm = cmPath;
  const mkns = async (name: string) => t.equal((await a.request('POST', '/api/v1/namespaces', { body: { metadata: { name } } })).status, 201, `namespace ${name}`);

  await t.test('a write on one replica is read back on the other', async (t) => {
    await mkns('r1');
    const c = await a.request('POST', cm('r1'), { body: { metadata: { name: 'x' }, data: { v: '1' } } });
    t.equal(c.status, 201);
    const g = await b.get(cm('r1', 'x'));
    t.equal(g.status, 200, 'a consistent read on the other replica finds it');
    t.equal(g.json.metadata.resourceVersion, c.json.metadata.resourceVersion, 'with the same resourceVersion');
    const u = await b.request('PUT', cm('r1', 'x'), { body: { ...g.json, data: { v: '2' } } });
    t.equal(u.status, 200, 'updated on B with the resourceVersion A gave');
    t.ok(Number(u.json.metadata.resourceVersion) > Number(c.json.metadata.resourceVersion));
    const g2 = await a.get(cm('r1', 'x'));
    t.same([g2.json.data, g2.json.metadata.resourceVersion], [{ v: '2' }, u.json.metadata.resourceVersion], 'and A reads the update at once');
  });

  await t.test('watches on both replicas see every write of both, once, in order', async (t) => {
    await mkns('r2');
    const start = (await a.get(cm('r2'))).json.metadata.resourceVersion;
    const seen = both.map(() => [] as { type: string; name: string; rv: number }[]);
    const watches = both.map((s, i) => s.stream(`${cm('r2')}?watch=1&resourceVersion=${start}`, (ev) => {
      // only this test's objects (controllers add their own, such as the root CA ConfigMap)
      if (/^o\d+$/.test(ev.object.metadata.name)) seen[i].push({ type: ev.type, name: ev.object.metadata.name, rv: Number(ev.object.metadata.resourceVersion) });
    }));
    t.teardown(() => { for (const w of watches) w.close(); });
    const acked: number[] = [];
    // three writers at once on each replica: creates, then updates, then deletes
    const N = 30;
    const run = async (w: number) => {
      for (let i = w; i < N; i += 6) {
        const s = both[i % 2];
        const name = `o${i}`;
        const c = await s.request('POST', cm('r2'), { body: { metadata: { name }, data: { i: String(i) } } });
        const u = await both[(i + 1) % 2].request('PUT', cm('r2', name), { body: { ...c.json, data: { i: `${i}b` } } });
        const d = await s.request('DELETE', cm('r2', name));
        for (const r of [c, u]) if (r.status < 300) acked.push(Number(r.json.metadata.resourceVersion));
        t.same([c.status, u.status, d.status], [201, 200, 200], `${name}: create, update on the other replica, delete`);
      }
    };
    await Promise.all([0, 1, 2, 3, 4, 5].map(run));
    const deadline = Date.now() + 10_000;
    while (seen.some((s) => s.length < 3 * N) && Date.now() < deadline) await sleep(50);
    for (const [i, s] of seen.entries()) {
      t.equal(s.length, 3 * N, `replica ${'AB'[i]}: one event per write, none missed or repeated`);
      t.ok(s.every((e, j) => j === 0 || e.rv > s[j - 1].rv), `replica ${'AB'[i]}: resourceVersions strictly increase`);
    }
    t.same(seen[0], seen[1], 'both replicas send the same events');
    const rvs = new Set(seen[0].map((e) => e.rv));
    t.equal(acked.length, 2 * N);
    t.same(acked.filter((rv) => !rvs.has(rv)), [], 'every acknowledged create and update is in the stream at its resourceVersion');
  });

  await t.test('continue tokens and resourceVersions are valid on either replica', async (t) => {
    await mkns('r3');
    for (let i = 0; i < 12; i++) t.equal((await both[i % 2].request('POST', cm('r3'), { body: { metadata: { name: `p${String(i).padStart(2, '0')}` } } })).status, 201);
    const p1 = await a.get(`${cm('r3')}?limit=5`);
    const rv = p1.json.metadata.resourceVersion;
    // a write after the first page must not show in later pages (they are read at the first page's revision)
    t.equal((await b.request('POST', cm('r3'), { body: { metadata: { name: 'p05a' } } })).status, 201);
    const p2 = await b.get(`${cm('r3')}?limit=5&continue=${encodeURIComponent(p1.json.metadata.continue)}`);
    t.equal(p2.status, 200, 'the second page from the other replica');
    const p3 = await a.get(`${cm('r3')}?limit=5&continue=${encodeURIComponent(p2.json.metadata.continue)}`);
    const names = [p1, p2, p3].flatMap((p) => p.json.items.map((o: { metadata: { name: string } }) => o.metadata.name));
    t.same(names.filter((n) => n.startsWith('p')), Array.from({ length: 12 }, (_, i) => `p${String(i).padStart(2, '0')}`), 'the pages cover the list once, at the first page\'s revision');
    t.equal(p3.json.metadata.continue ?? '', '', 'and end');
    t.same([p2.json.metadata.resourceVersion, p3.json.metadata.resourceVersion], [rv, rv], 'every page reports that revision');
    const exact = await b.get(`${cm('r3')}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    t.equal(exact.status, 200, 'an exact list at A\'s revision on B');
    t.equal(exact.json.items.filter((o: { metadata: { name: string } }) => o.metadata.name.startsWith('p')).length, 12);
    const nol = await b.get(`${cm('r3', 'p00')}?resourceVersion=${rv}`);
    t.equal(nol.status, 200, 'a not-older-than read at A\'s revision on B');
  });

  await t.test('optimistic concurrency across replicas', async (t) => {
    await mkns('r4');
    const creates = await Promise.all(both.flatMap((s) => [0, 1, 2].map(() => s.request('POST', cm('r4'), { body: { metadata: { name: 'same' } } }))));
    t.equal(creates.filter((r) => r.status === 201).length, 1, 'one create of a name wins');
    t.ok(creates.filter((r) => r.status !== 201).every((r) => r.status === 409 && r.json.reason === 'AlreadyExists'), 'the others: 409 AlreadyExists');
    const cur = (await a.get(cm('r4', 'same'))).json;
    const updates = await Promise.all(Array.from({ length: 10 }, (_, i) => both[i % 2].request('PUT', cm('r4', 'same'), { body: { ...cur, data: { w: String(i) } } })));
    t.equal(updates.filter((r) => r.status === 200).length, 1, 'one update from a given resourceVersion wins');
    t.ok(updates.filter((r) => r.status !== 200).every((r) => r.status === 409 && r.json.reason === 'Conflict'), 'the others: 409 Conflict');
    const many = await Promise.all(Array.from({ length: 40 }, (_, i) => both[i % 2].request('POST', cm('r4'), { body: { metadata: { name: `m${i}` } } })));
    t.ok(many.every((r) => r.status === 201), 'concurrent creates of different objects on both replicas all succeed');
    const rvs = many.map((r) => Number(r.json.metadata.resourceVersion));
    t.equal(new Set(rvs).size, 40, 'each with its own revision');
    t.equal((await b.get(cm('r4'))).json.items.filter((o: { metadata: { name: string } }) => /^(m\d+|same)$/.test(o.metadata.name)).length, 41);
  });

  await t.test('the server\'s own Service lists every replica (one Lease each)', async (t) => {
    const want = [a.port, b.port].sort((x, y) => x - y);
    let subsets: { addresses: { ip: string }[]; ports: { port: number }[] }[] = [];
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      subsets = (await b.get('/api/v1/namespaces/default/endpoints/cluster')).json?.subsets ?? [];
      if (subsets.length === 2) break;
      await sleep(200);
    }
    t.same(subsets.map((x) => x.ports[0].port), want, 'one subset per replica port (both on 127.0.0.1 here)');
    t.ok(subsets.every((x) => x.addresses.length === 1 && x.addresses[0].ip === '127.0.0.1'));
    t.equal((await a.get('/api/v1/namespaces/default/services/cluster')).json.spec.ports[0].targetPort, want[0], 'the Service targets the lowest port, the same on every replica');
  });

  await t.test('controllers run on the Lease holder and move when it dies', async (t) => {
    const leasePath = '/apis/coordination.cluster.io/v1/namespaces/cluster-system/leases/cluster-controller-manager';
    let lease = (await a.get(leasePath)).json;
    const deadline = Date.now() + 10_000;
    while (!lease?.spec?.holderIdentity && Date.now() < deadline) { await sleep(200); lease = (await a.get(leasePath)).json; }
    const holder = lease.spec.holderIdentity as string;
    t.ok(holder, `the Lease is held: ${holder}`);
    const holds = (s: TestServer, id: string) => s.logs.some((l) => l.includes('leader election: acquired') && l.includes(id));
    const leader = both.find((s) => holds(s, holder));
    const other = both.find((s) => s !== leader)!;
    t.ok(leader, 'by one of the replicas');
    t.notOk(holds(other, holder), 'and only one');
    t.equal(lease.spec.leaseDurationSeconds, LEASE.duration);

    // the namespace controller (on the leader) finishes a namespace deletion
    const gone = async (s: TestServer, ns: string) => {
      await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
      await s.request('POST', cm(ns), { body: { metadata: { name: 'c' } } });
      t.equal((await s.request('DELETE', `/api/v1/namespaces/${ns}`)).status, 200);
      const until = Date.now() + 15_000;
      while (Date.now() < until) {
        if ((await s.get(`/api/v1/namespaces/${ns}`)).status === 404) return true;
        await sleep(100);
      }
      return false;
    };
    t.ok(await gone(other, 'doomed1'), 'a namespace deleted through the follower is finalized (by the leader)');

    const killedAt = Date.now();
    await leader!.stop('SIGKILL');
    let next = '';
    while (Date.now() - killedAt < 15_000) {
      const l = (await other.get(leasePath)).json;
      if (l?.spec?.holderIdentity && l.spec.holderIdentity !== holder) { next = l.spec.holderIdentity; break; }
      await sleep(100);
    }
    const took = (Date.now() - killedAt) / 1000;
    t.ok(next && holds(other, next), `the other replica took the Lease (${took.toFixed(1)}s after the kill)`);
    t.ok(await gone(other, 'doomed2'), 'and its controllers run: a namespace deletion completes');
  });
});
