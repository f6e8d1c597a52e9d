// The garbage-collector controller over real HTTPS: background, foreground and orphan cascades,
// dependents with several owners, and references to owners that never existed.
import t from 'tap';
import { sleep, withServer, type TestServer } from '../lib/server.js';
import { eventually } from '../lib/poll.js';

const CM = '/api/v1/namespaces/default/configmaps';
const DEPLOY = '/apis/apps/v1/namespaces/default/deployments';
const RS = '/apis/apps/v1/namespaces/default/replicasets';

interface Ref { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }

const cm = (name: string, ownerReferences?: Ref[]) => ({
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(ownerReferences ? { ownerReferences } : {}) }, data: { a: '1' },
});

const podTemplate = (app: string) => ({ metadata: { labels: { app } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
const deployment = (name: string) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: { selector: { matchLabels: { app: name } }, template: podTemplate(name) },
});
const replicaSet = (name: string, app: string, ownerReferences: Ref[]) => ({
  apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name, labels: { app }, ownerReferences },
  spec: { replicas: 0, selector: { matchLabels: { app } }, template: podTemplate(app) },
});

const refTo = (o: any, extra: Partial<Ref> = {}): Ref => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid, ...extra });

t.test('garbage collector', async (t) => {
  const s: TestServer = await withServer(t);
  const create = async (path: string, body: unknown) => {
    const r = await s.request('POST', path, { body });
    if (r.status !== 201) throw new Error(`create ${path}: ${r.status} ${r.text}`);
    return r.json;
  };
  const gone = (path: string) => eventually(async () => (await s.get(path)).status === 404);

  await t.test('background: the dependent goes with its owner', async (t) => {
    const owner = await create(CM, cm('bg-owner'));
    const dep = await create(CM, cm('bg-dep', [refTo(owner, { controller: true })]));
    await sleep(200);
    t.equal((await s.get(`${CM}/bg-dep`)).status, 200, 'dependent stays while its owner exists');
    const d = await s.request('DELETE', `${CM}/bg-owner`);
    t.equal(d.status, 200, d.text);
    t.equal((await s.get(`${CM}/bg-owner`)).status, 404, 'background deletion removes the owner at once');
    t.ok(await gone(`${CM}/bg-dep`), 'dependent collected');
    t.ok(dep.metadata.uid);

    const deploy = await create(DEPLOY, deployment('bg-web'));
    await create(RS, replicaSet('bg-web-1', 'bg-web', [refTo(deploy, { controller: true, blockOwnerDeletion: true })]));
    t.equal((await s.request('DELETE', `${DEPLOY}/bg-web`)).status, 200);
    t.ok(await gone(`${RS}/bg-web-1`), 'replica set collected after its deployment');
  });

  await t.test('a dependent with two owners lives while either does', async (t) => {
    const a = await create(CM, cm('two-a'));
    const b = await create(CM, cm('two-b'));
    await create(CM, cm('two-dep', [refTo(a), refTo(b)]));
    t.equal((await s.request('DELETE', `${CM}/two-a`)).status, 200);
    const dropped = await eventually(async () => {
      const r = await s.get(`${CM}/two-dep`);
      return r.status === 200 && r.json.metadata.ownerReferences?.length === 1;
    });
    t.ok(dropped, 'dangling reference removed');
    const r = await s.get(`${CM}/two-dep`);
    t.equal(r.status, 200, 'dependent survives one owner');
    t.same(r.json.metadata.ownerReferences.map((x: Ref) => x.uid), [b.metadata.uid], 'only the live owner is left');
    await sleep(200);
    t.equal((await s.get(`${CM}/two-dep`)).status, 200, 'and stays');
    t.equal((await s.request('DELETE', `${CM}/two-b`)).status, 200);
    t.ok(await gone(`${CM}/two-dep`), 'collected when the last owner goes');
  });

  await t.test('foreground: the owner waits for its blocking dependents', async (t) => {
    const deploy = await create(DEPLOY, deployment('fg-web'));
    const rs = await create(RS, replicaSet('fg-web-1', 'fg-web', [refTo(deploy, { controller: true, blockOwnerDeletion: true })]));
    // The replica set has a dependent of its own holding it back, with a finalizer the test controls.
    const leafBody = cm('fg-leaf', [refTo(rs, { blockOwnerDeletion: true })]);
    await create(CM, { ...leafBody, metadata: { ...leafBody.metadata, finalizers: ['test.cluster.io/hold'] } });

    const d = await s.request('DELETE', `${DEPLOY}/fg-web`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' } });
    t.equal(d.status, 200, d.text);
    t.ok(d.json.metadata.deletionTimestamp, 'owner marked for deletion');
    t.same(d.json.metadata.finalizers, ['foregroundDeletion']);

    // The cascade reaches the leaf, which is held by its finalizer.
    t.ok(await eventually(async () => !!(await s.get(`${CM}/fg-leaf`)).json?.metadata?.deletionTimestamp), 'leaf being deleted');
    const held = await s.get(`${DEPLOY}/fg-web`);
    t.equal(held.status, 200, 'owner still present while a blocking dependent exists');
    t.ok(held.json.metadata.deletionTimestamp);
    t.ok(held.json.metadata.finalizers.includes('foregroundDeletion'));
    const mid = await s.get(`${RS}/fg-web-1`);
    t.equal(mid.status, 200, 'replica set waits for the leaf');
    t.ok(mid.json.metadata.deletionTimestamp, 'replica set deleted in foreground too');
    t.ok(mid.json.metadata.finalizers.includes('foregroundDeletion'));

    // Release the leaf: everything goes, bottom up.
    const u = await s.request('PATCH', `${CM}/fg-leaf`, { body: { metadata: { finalizers: null } }, headers: { 'content-type': 'application/merge-patch+json' } });
    t.equal(u.status, 200, u.text);
    t.ok(await gone(`${CM}/fg-leaf`), 'leaf gone');
    t.ok(await gone(`${RS}/fg-web-1`), 'replica set gone');
    t.ok(await gone(`${DEPLOY}/fg-web`), 'owner gone after its dependents');
  });

  await t.test('foreground with no dependents: the owner goes', async (t) => {
    await create(CM, cm('fg-alone'));
    const d = await s.request('DELETE', `${CM}/fg-alone?propagationPolicy=Foreground`);
    t.equal(d.status, 200, d.text);
    t.ok(await gone(`${CM}/fg-alone`));
  });

  await t.test('orphan: the owner goes, the dependent stays without the reference', async (t) => {
    const owner = await create(CM, cm('or-owner'));
    const other = await create(CM, cm('or-other'));
    await create(CM, cm('or-dep', [refTo(owner, { controller: true, blockOwnerDeletion: true }), refTo(other)]));
    await create(CM, cm('or-dep2', [refTo(owner)]));
    const d = await s.request('DELETE', `${CM}/or-owner`, { body: { propagationPolicy: 'Orphan' } });
    t.equal(d.status, 200, d.text);
    t.ok(await gone(`${CM}/or-owner`), 'owner gone');
    const dep = await s.get(`${CM}/or-dep`);
    t.equal(dep.status, 200, 'dependent remains');
    t.same(dep.json.metadata.ownerReferences.map((x: Ref) => x.uid), [other.metadata.uid], 'reference to the orphaning owner removed');
    const dep2 = await s.get(`${CM}/or-dep2`);
    t.equal(dep2.status, 200, 'sole-owner dependent remains');
    t.equal(dep2.json.metadata.ownerReferences, undefined, 'no owner references left');
    await sleep(300);
    t.equal((await s.get(`${CM}/or-dep2`)).status, 200, 'and is not collected later');
  });

  await t.test('another writer of the owner (a second garbage collector) makes us retry quietly', async (t) => {
    const owner = await create(CM, cm('busy-owner'));
    await create(CM, cm('busy-dep', [refTo(owner)]));
    // Unconditional writes of the owner (the orphan finalizer kept) as fast as they go, before and
    // after its deletion: the collector's conditional writes keep losing until they stop.
    const { resourceVersion: _rv, ...metadata } = owner.metadata;
    let writing = true;
    let n = 0;
    const writer = async () => {
      while (writing) {
        const r = await s.request('PUT', `${CM}/busy-owner`, { body: { ...owner, metadata: { ...metadata, finalizers: ['orphan'], labels: { n: String(n++) } } } });
        if (r.status !== 200) break;
      }
    };
    const writers = Array.from({ length: 16 }, writer);
    await sleep(200);
    const d = await s.request('DELETE', `${CM}/busy-owner`, { body: { propagationPolicy: 'Orphan' } });
    t.equal(d.status, 200, d.text);
    await sleep(500); // fewer rounds of retries than are quiet
    writing = false;
    await Promise.all(writers);
    t.ok(await gone(`${CM}/busy-owner`), 'owner goes once the other writer stops');
    t.same(s.logs.filter((l) => l.includes('garbage collector: will retry') && l.includes('Operation cannot be fulfilled')), [], 'lost races are not warnings');
  });

  await t.test('a reference to an owner that never existed is collected', async (t) => {
    await create(CM, cm('ghost-dep', [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: '00000000-0000-4000-8000-000000000001' }]));
    t.ok(await gone(`${CM}/ghost-dep`), 'collected');
    // An owner of that name whose uid differs is not the owner either.
    const real = await create(CM, cm('ghost'));
    t.ok(real.metadata.uid);
    await create(CM, cm('ghost-dep2', [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: '00000000-0000-4000-8000-000000000002' }]));
    t.ok(await gone(`${CM}/ghost-dep2`), 'uid mismatch collected');
    t.equal((await s.get(`${CM}/ghost`)).status, 200, 'the unrelated object stays');
  });

  await t.test('an owner of a kind not served leaves the dependent alone', async (t) => {
    await create(CM, cm('alien-dep', [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: '00000000-0000-4000-8000-000000000003' }]));
    await sleep(300);
    t.equal((await s.get(`${CM}/alien-dep`)).status, 200);
  });
});

t.test('the types whose deletion orphans by default: v1 ReplicationControllers and batch/v1 Jobs', async (t) => {
  const s: TestServer = await withServer(t);
  const NS = '/api/v1/namespaces/default';
  const create = async (path: string, body: unknown) => {
    const r = await s.request('POST', path, { body });
    if (r.status !== 201) throw new Error(`create ${path}: ${r.status} ${r.text}`);
    return r.json;
  };
  const gone = (path: string) => eventually(async () => (await s.get(path)).status === 404);
  const pod = (name: string, owner: any) => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: owner.metadata.name }, ownerReferences: [refTo(owner, { controller: true, blockOwnerDeletion: true })] },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  });
  const template = (app: string, restartPolicy = 'Always') => ({ metadata: { labels: { app } }, spec: { restartPolicy, containers: [{ name: 'c', image: 'nginx' }] } });
  const JOBS = '/apis/batch/v1/namespaces/default/jobs';
  const JOB_WARNING = 'child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning';

  /** Deletes the owner with `opts` (none: no body, no query) and says whether its pod outlived it. */
  const podOutlives = async (ownerPath: string, podName: string, opts?: object) => {
    const d = await s.request('DELETE', ownerPath, opts ? { body: opts } : {});
    t.equal(d.status, 200, d.text);
    t.ok(await gone(ownerPath), `${ownerPath} is deleted`);
    const kept = await eventually(async () => {
      const p = await s.get(`${NS}/pods/${podName}`);
      return p.status === 404 || (p.status === 200 && !p.json.metadata.ownerReferences && !p.json.metadata.deletionTimestamp);
    });
    t.ok(kept, 'the pod went, or stayed without its owner reference');
    return { outlived: (await s.get(`${NS}/pods/${podName}`)).status === 200, warning: d.headers.warning };
  };

  const rc = await create(`${NS}/replicationcontrollers`, { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'rc-1' }, spec: { replicas: 0, selector: { app: 'rc-1' }, template: template('rc-1') } });
  await create(`${NS}/pods`, pod('rc-1-pod', rc));
  t.match(await podOutlives(`${NS}/replicationcontrollers/rc-1`, 'rc-1-pod'), { outlived: true, warning: undefined }, 'a ReplicationController: its pod is orphaned');

  const rc2 = await create(`${NS}/replicationcontrollers`, { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'rc-2' }, spec: { replicas: 0, selector: { app: 'rc-2' }, template: template('rc-2') } });
  await create(`${NS}/pods`, pod('rc-2-pod', rc2));
  t.match(await podOutlives(`${NS}/replicationcontrollers/rc-2`, 'rc-2-pod', { propagationPolicy: 'Background' }), { outlived: false }, 'asked for Background: its pod goes');

  const job = await create(JOBS, { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'job-1' }, spec: { template: template('job-1', 'Never') } });
  await create(`${NS}/pods`, pod('job-1-pod', job));
  const j = await podOutlives(`${JOBS}/job-1`, 'job-1-pod');
  t.equal(j.outlived, true, 'a Job: its pod is orphaned');
  t.match(j.warning, `299 - "${JOB_WARNING}"`, 'with the reference\'s warning');

  const job2 = await create(JOBS, { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'job-2' }, spec: { template: template('job-2', 'Never') } });
  await create(`${NS}/pods`, pod('job-2-pod', job2));
  t.match(await podOutlives(`${JOBS}/job-2`, 'job-2-pod', { orphanDependents: false }), { outlived: false, warning: undefined }, 'orphanDependents=false: its pod goes, no warning');

  const rs = await create(RS, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'rs-1' }, spec: { replicas: 0, selector: { matchLabels: { app: 'rs-1' } }, template: podTemplate('rs-1') } });
  await create(`${NS}/pods`, pod('rs-1-pod', rs));
  t.match(await podOutlives(`${RS}/rs-1`, 'rs-1-pod'), { outlived: false }, 'an apps/v1 ReplicaSet: its pod goes (Background)');
});
