// What a cluster's standard objects look like to kubectl and controllers: FlowSchemas carry the
// Dangling condition the reference's APF configuration controller keeps; the events table has the
// reference's columns (no leading NAME; NAME last and wide); health checks carry the reference's
// names; discovery has storage version hashes; kubectl delete -k finds a bundle's objects.
import t from 'tap';
import { withServer } from '../lib/server.js';
import { until } from '../lib/poll.js';
import { kubectl, noKubectl } from '../lib/kubectl.js';
import { establish, widgetCRD } from '../lib/crd.js';
import { createHash } from 'node:crypto';

const FC = '/apis/flowcontrol.apiserver.k8s.io/v1beta3';
const dangling = (o: any): any => o?.status?.conditions?.find((c: any) => c.type === 'Dangling');

t.test('FlowSchema Dangling condition follows its priority level', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const builtIn: any = await until(async () => dangling((await s.get(`${FC}/flowschemas/service-accounts`)).json), Boolean, 60_000);
  t.match(builtIn, { status: 'False', reason: 'Found', message: 'This FlowSchema references the PriorityLevelConfiguration object named "workload-low" and it exists' });
  t.match(builtIn.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

  const fs = { metadata: { name: 'mine' }, spec: { priorityLevelConfiguration: { name: 'later' }, matchingPrecedence: 500, rules: [{ subjects: [{ kind: 'User', user: { name: 'x' } }], resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], namespaces: ['*'] }] }] } };
  t.equal((await s.request('POST', `${FC}/flowschemas`, { body: fs })).status, 201);
  const missing: any = await until(async () => dangling((await s.get(`${FC}/flowschemas/mine`)).json), Boolean, 60_000);
  t.match(missing, { status: 'True', reason: 'NotFound', message: 'This FlowSchema references the PriorityLevelConfiguration object named "later" but there is no such object' });

  const pl = { metadata: { name: 'later' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' } } } };
  t.equal((await s.request('POST', `${FC}/prioritylevelconfigurations`, { body: pl })).status, 201);
  const found: any = await until(async () => dangling((await s.get(`${FC}/flowschemas/mine`)).json), (c) => c?.status === 'False', 60_000);
  t.match(found, { status: 'False', reason: 'Found' }, 'the priority level now exists');

  if (!noKubectl) {
    const r = await kubectl(s, ['get', 'flowschemas', 'mine', 'service-accounts']);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /^NAME\s+PRIORITYLEVEL\s+MATCHINGPRECEDENCE\s+DISTINGUISHERMETHOD\s+AGE\s+MISSINGPL\n/);
    t.match(r.stdout, /\nmine\s+later\s+500\s+<none>\s+\S+\s+False\n/);
  }
});

t.test('kubectl get events: the reference event columns', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const ev = { metadata: { name: 'p.1' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'Pulled', message: 'pulled', type: 'Normal', source: { component: 'kubelet', host: 'n1' }, firstTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), count: 2 };
  t.equal((await s.request('POST', '/api/v1/namespaces/default/events', { body: ev })).status, 201);
  const plain = await kubectl(s, ['get', 'events']);
  t.equal(plain.code, 0, plain.stderr);
  t.match(plain.stdout, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n/, 'no NAME column first');
  t.match(plain.stdout, /\nNormal|\s+Normal\s+Pulled\s+pod\/p\s+pulled\n/);
  const wide = await kubectl(s, ['get', 'events', '-o', 'wide']);
  t.match(wide.stdout, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+SUBOBJECT\s+SOURCE\s+MESSAGE\s+FIRST SEEN\s+COUNT\s+NAME\n/);
  t.match(wide.stdout, /\s+p\.1\n/, 'NAME last, in wide output');
});

t.test('kubectl delete -k of a bundle that holds its own Namespace', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  // kubectl deletes the Namespace first, then each object in it: they must still be there, as the
  // reference's namespace controller waits 5 s before deleting a namespace's contents.
  const dir = t.testdir({
    'kustomization.yaml': 'resources:\n- namespace.yaml\n- config.yaml\n- secret.yaml\n',
    'namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: bundle\n',
    'config.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: bundle\ndata:\n  a: "1"\n',
    'secret.yaml': 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: bundle\nstringData:\n  p: x\n',
  });
  const applied = await kubectl(s, ['apply', '-k', dir]);
  t.equal(applied.code, 0, applied.stderr);
  const deleted = await kubectl(s, ['delete', '-k', dir]);
  t.equal(deleted.code, 0, deleted.stderr);
  t.match(deleted.stdout, /namespace "bundle" deleted\nsecret "creds" deleted\nconfigmap "settings" deleted|namespace "bundle" deleted/);
  const gone = await until(() => s.get('/api/v1/namespaces/bundle'), (r) => r.status === 404, 60_000);
  t.equal(gone.status, 404, 'the namespace goes once its contents are gone');
});

t.test('health endpoints list the reference check names, each checkable alone', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  for (const ep of ['healthz', 'livez', 'readyz']) {
    const r = await s.get(`/${ep}?verbose`);
    t.equal(r.status, 200);
    for (const name of ['ping', 'poststarthook/rbac/bootstrap-roles', 'poststarthook/start-system-namespaces-controller', 'poststarthook/priority-and-fairness-config-producer', 'poststarthook/bootstrap-controller']) {
      t.match(r.text, `[+]${name} ok\n`, `${ep} lists ${name}`);
    }
    t.match(r.text, new RegExp(`${ep} check passed\\n$`));
  }
  t.match((await s.get('/readyz?verbose')).text, '[+]informer-sync ok\n', 'readyz: informer-sync');
  for (const name of ['ping', 'poststarthook/rbac/bootstrap-roles', 'poststarthook/crd-informer-synced']) {
    const one = await s.get(`/livez/${name}`);
    t.equal(one.status, 200, `/livez/${name}`);
    t.equal(one.text, 'ok');
  }
  t.equal((await s.get('/livez/no-such-check')).status, 404);
});

t.test('discovery: storageVersionHash of stored resources, custom resources included', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  await establish(s, { ...widgetCRD(), apiVersion: 'apiextensions.k8s.io/v1' });
  const hashOf = async (gv: string, name: string) => (await s.get(gv)).json.resources.find((r: any) => r.name === name);
  // Values the reference v1.28.7 answers.
  t.equal((await hashOf('/api/v1', 'pods')).storageVersionHash, 'xPOwRZ+Yhw8=');
  t.equal((await hashOf('/apis/apps/v1', 'controllerrevisions')).storageVersionHash, '85nkx63pcBU=');
  t.equal((await hashOf('/apis/autoscaling/v1', 'horizontalpodautoscalers')).storageVersionHash, 'qwQve8ut294=', 'HPA v1: the stored v2');
  t.equal((await hashOf('/apis/autoscaling/v2', 'horizontalpodautoscalers')).storageVersionHash, 'qwQve8ut294=');
  t.equal((await hashOf('/apis/example.com/v1', 'widgets')).storageVersionHash, createHash('sha256').update('example.com/v1/Widget').digest().subarray(0, 8).toString('base64'), 'a custom resource');
  t.notOk('storageVersionHash' in (await hashOf('/apis/authentication.k8s.io/v1', 'tokenreviews')), 'none for a type that is not stored');
  t.notOk('storageVersionHash' in (await hashOf('/api/v1', 'pods/status')), 'none for a sub-resource');
});
