// The core resource API over real HTTPS against a started server, under both brands.
import t from 'tap';
import { brands, withServer, type TestServer } from '../lib/server.js';

const cm = (name: string, ns = 'default', extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, ...extra }, data: { a: '1' } });

for (const brand of brands) {
  t.test(`core API (${brand} brand)`, async (t) => {
    const s: TestServer = await withServer(t, { brand });
    const domain = brand === 'kubernetes' ? 'k8s.io' : 'cluster.io';
    const sys = brand === 'kubernetes' ? 'kube-system' : 'cluster-system';
    const pub = brand === 'kubernetes' ? 'kube-public' : 'cluster-public';
    const lease = brand === 'kubernetes' ? 'kube-node-lease' : 'cluster-node-lease';

    await t.test('system namespaces exist from the first start', async (t) => {
      const r = await s.get('/api/v1/namespaces');
      t.equal(r.status, 200);
      t.equal(r.json.kind, 'NamespaceList');
      const names = r.json.items.map((n: any) => n.metadata.name);
      for (const n of ['default', sys, pub, lease]) t.ok(names.includes(n), n);
      t.equal(r.json.metadata.continue, undefined === r.json.metadata.continue ? undefined : '', 'continue present and empty');
      const ns = r.json.items.find((n: any) => n.metadata.name === 'default');
      t.equal(ns.status.phase, 'Active');
      t.same(ns.spec.finalizers, [brand === 'kubernetes' ? 'kubernetes' : 'cluster']);
    });

    await t.test('create, get, update with optimistic concurrency, delete', async (t) => {
      const c = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('one') });
      t.equal(c.status, 201, c.text);
      const md = c.json.metadata;
      t.match(md.uid, /^[0-9a-f-]{36}$/);
      t.match(md.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      t.match(md.resourceVersion, /^\d+$/);
      const g = await s.get('/api/v1/namespaces/default/configmaps/one');
      t.equal(g.status, 200);
      t.same(g.json, c.json, 'get returns what create stored');
      const dup = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('one') });
      t.equal(dup.status, 409);
      t.equal(dup.json.reason, 'AlreadyExists');
      t.equal(dup.json.message, 'configmaps "one" already exists');
      t.same(dup.json.details, { name: 'one', kind: 'configmaps' });

      const upd = { ...g.json, data: { a: '2' } };
      const u = await s.request('PUT', '/api/v1/namespaces/default/configmaps/one', { body: upd });
      t.equal(u.status, 200, u.text);
      t.ok(Number(u.json.metadata.resourceVersion) > Number(md.resourceVersion), 'revision moves up');
      const stale = await s.request('PUT', '/api/v1/namespaces/default/configmaps/one', { body: { ...upd, data: { a: '3' } } });
      t.equal(stale.status, 409, 'stale resourceVersion conflicts');
      t.equal(stale.json.reason, 'Conflict');
      t.match(stale.json.message, /the object has been modified; please apply your changes to the latest version and try again/);
      const { resourceVersion: _rv, ...noRv } = u.json.metadata;
      const uncond = await s.request('PUT', '/api/v1/namespaces/default/configmaps/one', { body: { ...u.json, metadata: noRv, data: { a: '4' } } });
      t.equal(uncond.status, 200, 'update without resourceVersion is unconditional');
      t.equal(uncond.json.data.a, '4');
      t.equal(uncond.json.metadata.uid, md.uid, 'uid kept');
      t.equal(uncond.json.metadata.creationTimestamp, md.creationTimestamp, 'creationTimestamp kept');

      const head = await s.request('HEAD', '/api/v1/namespaces/default/configmaps/one');
      t.equal(head.status, 200);
      t.equal(head.text, '');

      const d = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/one');
      t.equal(d.status, 200, d.text);
      t.equal(d.json.kind, 'Status');
      t.equal(d.json.status, 'Success');
      t.equal(d.json.details.uid, md.uid);
      const gone = await s.get('/api/v1/namespaces/default/configmaps/one');
      t.equal(gone.status, 404);
      t.same(gone.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'configmaps "one" not found', reason: 'NotFound', details: { name: 'one', kind: 'configmaps' }, code: 404 });
    });

    await t.test('named group, cluster-scoped and status sub-resource', async (t) => {
      const dep = {
        apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
        spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
        status: { replicas: 7 },
      };
      const c = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: dep });
      t.equal(c.status, 201, c.text);
      t.equal(c.json.spec.replicas, 1, 'apps/v1 default replicas');
      t.equal(c.json.spec.revisionHistoryLimit, 10);
      t.equal(c.json.spec.progressDeadlineSeconds, 600);
      t.same(c.json.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } });
      t.equal(c.json.spec.template.spec.containers[0].imagePullPolicy, 'Always', 'untagged image pulls Always');
      t.equal(c.json.metadata.generation, 1);
      t.notOk(c.json.status?.replicas, 'status is not written on create');

      const st = await s.request('PUT', '/apis/apps/v1/namespaces/default/deployments/web/status', { body: { ...c.json, spec: { ...c.json.spec, replicas: 5 }, status: { replicas: 3 } } });
      t.equal(st.status, 200, st.text);
      t.equal(st.json.status.replicas, 3, 'status written through /status');
      t.equal(st.json.spec.replicas, 1, '/status does not write spec');
      t.equal(st.json.metadata.generation, 1, 'status does not bump generation');

      const main = await s.request('PUT', '/apis/apps/v1/namespaces/default/deployments/web', { body: { ...st.json, spec: { ...st.json.spec, replicas: 2 }, status: { replicas: 99 } } });
      t.equal(main.status, 200, main.text);
      t.equal(main.json.spec.replicas, 2);
      t.equal(main.json.status.replicas, 3, 'main resource ignores status');
      t.equal(main.json.metadata.generation, 2, 'spec change bumps generation');

      const pc = await s.request('POST', `/apis/scheduling.${domain}/v1/priorityclasses`, { body: { apiVersion: `scheduling.${domain}/v1`, kind: 'PriorityClass', metadata: { name: 'high' }, value: 1000 } });
      t.equal(pc.status, 201, pc.text);
      t.notOk(pc.json.metadata.namespace, 'cluster-scoped objects have no namespace');
      t.equal((await s.get(`/apis/scheduling.${domain}/v1/priorityclasses/high`)).status, 200);
      t.equal((await s.get(`/apis/scheduling.${domain}/v1/namespaces/default/priorityclasses/high`)).status, 404, 'cluster-scoped type under a namespace path');
    });

    await t.test('generateName, validation and bad input', async (t) => {
      const g = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } } });
      t.equal(g.status, 201, g.text);
      t.match(g.json.metadata.name, /^gen-[a-z0-9]{5}$/);

      const bad = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('Bad_Name', 'default', { labels: { 'bad key!': 'v' } }) });
      t.equal(bad.status, 422, bad.text);
      t.equal(bad.json.reason, 'Invalid');
      const fields = bad.json.details.causes.map((c: any) => c.field);
      t.ok(fields.includes('metadata.name'), 'name cause');
      t.ok(fields.some((f: string) => f.startsWith('metadata.labels')), 'label cause');
      t.equal((await s.get('/api/v1/namespaces/default/configmaps/Bad_Name')).status, 404, 'nothing stored');

      const malformed = await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: '{"apiVersion":', headers: { 'content-type': 'application/json' } });
      t.equal(malformed.status, 400);
      t.equal(malformed.json.kind, 'Status');
      t.equal(malformed.json.reason, 'BadRequest');

      const big = await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: JSON.stringify(cm('big', 'default')).replace('"1"', JSON.stringify('x'.repeat(4 * 1024 * 1024))), headers: { 'content-type': 'application/json' } });
      t.equal(big.status, 413, 'over the 3 MiB limit');
      t.equal(big.json.reason, 'RequestEntityTooLarge');

      t.equal((await s.get('/api/v1/nosuchthings')).status, 404);
      t.equal((await s.get('/nowhere')).status, 404);
      const m = await s.request('POST', '/api/v1/namespaces/default/configmaps/x', { body: cm('x') });
      t.equal(m.status, 405);
      t.equal(m.json.reason, 'MethodNotAllowed');

      const wrongNs = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('w', 'other') });
      t.equal(wrongNs.status, 400);
      const wrongKind = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { ...cm('w'), kind: 'Secret' } });
      t.equal(wrongKind.status, 400);
      const noNs = await s.request('POST', '/api/v1/namespaces/nope/configmaps', { body: cm('w', 'nope') });
      t.equal(noNs.status, 404, 'namespace must exist');
      t.match(noNs.json.message, /namespaces "nope" not found/);
    });

    await t.test('dry run stores nothing', async (t) => {
      const d = await s.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { body: cm('dry') });
      t.equal(d.status, 201);
      t.equal(d.json.metadata.name, 'dry');
      t.equal((await s.get('/api/v1/namespaces/default/configmaps/dry')).status, 404);
      // The reference refuses it as invalid CreateOptions (422), not as a bad request.
      t.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=Some', { body: cm('dry') })).status, 422, 'unknown dryRun value');
      await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('keep') });
      t.equal((await s.request('DELETE', '/api/v1/namespaces/default/configmaps/keep?dryRun=All')).status, 200);
      t.equal((await s.get('/api/v1/namespaces/default/configmaps/keep')).status, 200, 'dry-run delete keeps it');
      const cur = (await s.get('/api/v1/namespaces/default/configmaps/keep')).json;
      const u = await s.request('PUT', '/api/v1/namespaces/default/configmaps/keep?dryRun=All', { body: { ...cur, data: { a: 'dry' } } });
      t.equal(u.status, 200);
      t.equal(u.json.data.a, 'dry');
      t.equal((await s.get('/api/v1/namespaces/default/configmaps/keep')).json.data.a, '1', 'dry-run update keeps it');
    });

    await t.test('finalizers and the deletion lifecycle', async (t) => {
      const c = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('fin', 'default', { finalizers: [`example.${domain}/a`, `example.${domain}/b`] }) });
      t.equal(c.status, 201, c.text);
      const d = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/fin');
      t.equal(d.status, 200);
      t.ok(d.json.metadata.deletionTimestamp, 'first delete sets deletionTimestamp');
      const cur = (await s.get('/api/v1/namespaces/default/configmaps/fin')).json;
      t.ok(cur.metadata.deletionTimestamp, 'still there while finalizers remain');
      const one = await s.request('PUT', '/api/v1/namespaces/default/configmaps/fin', { body: { ...cur, metadata: { ...cur.metadata, finalizers: [`example.${domain}/b`] } } });
      t.equal(one.status, 200);
      t.equal((await s.get('/api/v1/namespaces/default/configmaps/fin')).status, 200, 'one finalizer left');
      const last = await s.request('PUT', '/api/v1/namespaces/default/configmaps/fin', { body: { ...one.json, metadata: { ...one.json.metadata, finalizers: [] } } });
      t.equal(last.status, 200);
      t.equal((await s.get('/api/v1/namespaces/default/configmaps/fin')).status, 404, 'removing the last finalizer removes it');

      const p = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('pre') });
      const badUid = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/pre', { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'nope' } } });
      t.equal(badUid.status, 409, 'uid precondition');
      const badRv = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/pre', { body: { preconditions: { resourceVersion: '1' } } });
      t.equal(badRv.status, 409, 'resourceVersion precondition');
      const ok = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/pre', { body: { preconditions: { uid: p.json.metadata.uid, resourceVersion: p.json.metadata.resourceVersion } } });
      t.equal(ok.status, 200);
    });

    await t.test('deletecollection with a label selector', async (t) => {
      for (const [n, team] of [['dc1', 'a'], ['dc2', 'a'], ['dc3', 'b']]) {
        t.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm(n, 'default', { labels: { team } }) })).status, 201);
      }
      const d = await s.request('DELETE', '/api/v1/namespaces/default/configmaps?labelSelector=team%3Da');
      t.equal(d.status, 200, d.text);
      t.equal(d.json.items.length, 2);
      const left = (await s.get('/api/v1/namespaces/default/configmaps?labelSelector=team')).json.items.map((i: any) => i.metadata.name);
      t.same(left, ['dc3']);
      t.equal((await s.get('/api/v1/namespaces/default/configmaps?labelSelector=team%20in%20(a')).status, 400, 'bad selector');
    });

    await t.test('discovery', async (t) => {
      const api = await s.get('/api');
      t.equal(api.json.kind, 'APIVersions');
      t.same(api.json.versions, ['v1']);
      const v1 = await s.get('/api/v1');
      const pods = v1.json.resources.find((r: any) => r.name === 'pods');
      t.same(pods.shortNames, ['po']);
      t.equal(pods.namespaced, true);
      t.equal(pods.kind, 'Pod');
      t.equal(pods.singularName, 'pod');
      t.ok(pods.verbs.includes('watch'));
      t.ok(v1.json.resources.some((r: any) => r.name === 'pods/status'));
      const apis = await s.get('/apis');
      t.equal(apis.json.kind, 'APIGroupList');
      const names = apis.json.groups.map((g: any) => g.name);
      for (const g of ['apps', 'batch', `networking.${domain}`, `events.${domain}`]) t.ok(names.includes(g), g);
      const apps = await s.get('/apis/apps');
      t.equal(apps.json.preferredVersion.groupVersion, 'apps/v1');
      const appsv1 = await s.get('/apis/apps/v1');
      t.ok(appsv1.json.resources.find((r: any) => r.name === 'deployments').shortNames.includes('deploy'));
      t.equal((await s.get('/apis/nope.example.com')).status, 404);
    });

    await t.test('tables and content negotiation', async (t) => {
      const accept = `application/json;as=Table;v=v1;g=meta.${domain}, application/json`;
      const tab = await s.get('/api/v1/namespaces/default/configmaps', { accept });
      t.equal(tab.status, 200);
      t.equal(tab.json.kind, 'Table');
      t.equal(tab.json.apiVersion, `meta.${domain}/v1`);
      t.equal(tab.json.columnDefinitions[0].name, 'Name');
      const one = await s.get('/api/v1/namespaces/default/configmaps/keep', { accept: `application/json;as=Table;v=v1beta1;g=meta.${domain}` });
      t.equal(one.json.apiVersion, `meta.${domain}/v1beta1`);
      t.equal(one.json.rows[0].cells[0], 'keep');
      t.equal(one.json.rows[0].object.kind, 'PartialObjectMetadata');
      const pc = await s.get(`/apis/scheduling.${domain}/v1/priorityclasses`, { accept });
      t.ok(pc.json.columnDefinitions.length >= 2);
      const no = await s.get('/api/v1/namespaces/default/configmaps', { accept: 'application/vnd.nothing' });
      t.equal(no.status, 406);
      t.equal(no.json.reason, 'NotAcceptable');
      const pb = await s.get('/api/v1/namespaces/default/configmaps', { accept: `application/vnd.${brand}.protobuf, application/json` });
      t.equal(pb.status, 200, 'Protobuf first: served (test/integration/protobuf.test.ts reads it)');
      t.equal(pb.headers['content-type'], `application/vnd.${brand}.protobuf`);
      const fallback = await s.get('/api/v1/namespaces/default/configmaps', { accept: 'application/vnd.other.protobuf, application/json' });
      t.equal(fallback.status, 200, 'falls back to JSON');
      t.equal(fallback.headers['content-type'], 'application/json');
    });

    await t.test('namespace deletion: Terminating, contents removed, then gone', async (t) => {
      t.equal((await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } } })).status, 201);
      t.equal((await s.request('POST', '/api/v1/namespaces/doomed/configmaps', { body: cm('x', 'doomed') })).status, 201);
      const d = await s.request('DELETE', '/api/v1/namespaces/doomed');
      t.equal(d.status, 200, d.text);
      t.equal(d.json.status.phase, 'Terminating');
      let gone = false;
      for (let i = 0; i < 100 && !gone; i++) {
        const r = await s.get('/api/v1/namespaces/doomed');
        if (r.status === 404) gone = true;
        else {
          if (r.json.status.phase === 'Terminating') {
            const c = await s.request('POST', '/api/v1/namespaces/doomed/configmaps', { body: cm('late', 'doomed') });
            if (c.status !== 404) t.equal(c.status, 403, 'no new content in a terminating namespace');
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      t.ok(gone, 'namespace removed after its contents');
      t.equal((await s.get('/api/v1/namespaces/doomed/configmaps/x')).status, 404);
      const sysDel = await s.request('DELETE', `/api/v1/namespaces/${sys}`);
      t.equal(sysDel.status, 403, 'system namespace cannot be deleted');
      t.match(sysDel.json.message, /this namespace may not be deleted/);
    });

    await t.test('health and version', async (t) => {
      const v = await s.get('/version');
      t.equal(v.json.major, '1');
      t.match(v.json.gitVersion, /^v1\.\d+\.\d+/);
      const r = await s.get('/readyz?verbose');
      t.equal(r.status, 200);
      t.match(r.text, /\[\+\]ping ok/);
      // The storage check is `etcd` under the ecosystem's names, whatever the backend: tools look for it.
      const store = brand === 'kubernetes' ? 'etcd' : 'storage';
      t.match(r.text, `[+]${store} ok\n`);
      t.match(r.text, /readyz check passed\n$/);
      const ex = await s.get(`/livez?verbose&exclude=${store}`);
      t.match(ex.text, `[+]${store} excluded: ok`);
      // Every check the upstream e2e suite (apimachinery/health_handlers.go) requires of each endpoint.
      const required = ['ping', 'log', store, 'autoregister-completion', ...['start-kube-apiserver-admission-initializer', 'generic-apiserver-start-informers',
        'start-apiextensions-informers', 'start-apiextensions-controllers', 'crd-informer-synced', 'bootstrap-controller', 'start-system-namespaces-controller',
        'start-service-ip-repair-controllers', 'scheduling/bootstrap-system-priority-classes', 'start-cluster-authentication-info-controller',
        'start-kube-aggregator-informers', 'apiservice-registration-controller', 'apiservice-status-available-controller', 'kube-apiserver-autoregistration',
        'apiservice-openapi-controller'].map((h) => `poststarthook/${h}`)];
      for (const endpoint of ['healthz', 'livez', 'readyz']) {
        const lines = new Set((await s.get(`/${endpoint}?verbose=1`)).text.split('\n'));
        const missing = [...required, ...(endpoint === 'readyz' ? ['informer-sync'] : [])].filter((c) => !lines.has(`[+]${c} ok`));
        t.same(missing, [], `${endpoint}: every check the upstream suite requires`);
      }
      t.equal((await s.get('/livez/ping')).text, 'ok');
      t.equal((await s.get('/readyz/nope')).status, 404);
      t.equal((await s.get('/healthz')).text, 'ok');
    });

    await t.test('authentication: bad token is 401, never anonymous', async (t) => {
      const r = await s.request('GET', '/api/v1/namespaces', { token: 'nope' });
      t.equal(r.status, 401);
      t.equal(r.json.reason, 'Unauthorized');
    });
  });
}

t.test('Protobuf request bodies', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  // The envelope (magic, Unknown{typeMeta, raw}) around a RoleBinding message, encoded by hand.
  const str = (field: number, v: string) => { const b = Buffer.from(v); return Buffer.concat([Buffer.from([(field << 3) | 2, b.length]), b]); };
  const msg = (field: number, parts: Buffer[]) => { const b = Buffer.concat(parts); return Buffer.concat([Buffer.from([(field << 3) | 2, b.length]), b]); };
  const rb = Buffer.concat([
    msg(1, [str(1, 'pb-binding'), str(3, 'default')]),
    msg(2, [str(1, 'User'), str(2, 'rbac.authorization.k8s.io'), str(3, 'bob')]),
    msg(3, [str(1, 'rbac.authorization.k8s.io'), str(2, 'ClusterRole'), str(3, 'view')]),
  ]);
  const body = Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), msg(1, [str(1, 'rbac.authorization.k8s.io/v1'), str(2, 'RoleBinding')]), msg(2, [rb])]);
  const r = await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', { raw: body, headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } });
  t.equal(r.status, 201, r.text);
  t.same(r.json.subjects, [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bob' }]);
  t.same(r.json.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' });
  const bad = await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', { raw: Buffer.from('nope'), headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } });
  t.equal(bad.status, 400, 'no magic bytes');
  const cm = await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: body, headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } });
  t.equal(cm.status, 400, 'a RoleBinding body sent to configmaps');
  t.match(cm.json.message, /API version in the data \(rbac.authorization.k8s.io\/v1\) does not match/);
});
