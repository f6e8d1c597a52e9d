// The workload and batch rules as the reference v1.28 applies them (issue 30; the differential corpus
// in test/corpus holds the reference's verdicts these values come from): updates of the kinds whose
// strategies validate twice report each spec cause twice, StatefulSets leave their pod spec
// unchecked but fix most of their spec, a running Job's template is immutable, Go's zero values
// count as unset for defaulting, and pod updates change only what the reference lets them.
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';

type Cause = { reason: string; field: string; message?: string };
const NS = '/apis/apps/v1/namespaces/default';
const BATCH = '/apis/batch/v1/namespaces/default';
const labels = { app: 'web' };
const template = (spec: Record<string, unknown> = {}) => ({ metadata: { labels }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } });
const pairs = (causes: Cause[] | undefined) => (causes ?? []).map((c) => `${c.field} ${c.reason}`).sort();

async function create(s: TestServer, path: string, body: Record<string, unknown>) {
  const r = await s.request('POST', path, { body });
  if (r.status !== 201) throw new Error(`${path}: ${r.status} ${r.text}`);
  return r.json;
}

/** PUT the stored object changed by `change`; the answer. */
async function update(s: TestServer, item: string, change: (o: any) => void) {
  const stored = (await s.get(item)).json;
  change(stored);
  return s.request('PUT', item, { body: stored });
}

t.test('workload and batch rules over HTTP', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });

  await t.test('DaemonSet, ReplicaSet and ReplicationController updates report each template cause twice; a Deployment once', async (t) => {
    const badEnv = (o: any) => { o.spec.template.spec.containers[0].env = [{ name: '1=bad', value: 'x' }]; };
    const ds = await create(s, `${NS}/daemonsets`, { metadata: { name: 'ds' }, spec: { selector: { matchLabels: labels }, template: template() } });
    const d = await create(s, `${NS}/deployments`, { metadata: { name: 'd' }, spec: { selector: { matchLabels: labels }, template: template() } });
    const rc = await create(s, '/api/v1/namespaces/default/replicationcontrollers', { metadata: { name: 'rc' }, spec: { selector: labels, template: template() } });
    for (const [item, n] of [[`${NS}/daemonsets/${ds.metadata.name}`, 2], [`${NS}/deployments/${d.metadata.name}`, 1], [`/api/v1/namespaces/default/replicationcontrollers/${rc.metadata.name}`, 2]] as const) {
      const r = await update(s, item, badEnv);
      t.equal(r.status, 422, item);
      t.same(pairs(r.json.details.causes), Array(n).fill('spec.template.spec.containers[0].env[0].name FieldValueInvalid'), item);
    }
    // A bad label on update: twice for every type, and again once per metadata check of the kind's own.
    const r = await update(s, `${NS}/deployments/d`, (o) => { o.metadata.labels = { app: 'Bad Value!' }; });
    t.same(pairs(r.json.details.causes), Array(3).fill('metadata.labels FieldValueInvalid'));
  });

  await t.test('a DaemonSet with an empty selector is refused with the reference wording', async (t) => {
    const r = await s.request('POST', `${NS}/daemonsets`, { body: { metadata: { name: 'ds-empty' }, spec: { selector: {}, template: template() } } });
    t.equal(r.status, 422);
    t.same(r.json.details.causes, [{ reason: 'FieldValueInvalid', field: 'spec.selector', message: 'Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset' }]);
  });

  await t.test('a StatefulSet leaves its pod spec unchecked, and fixes its spec but for a few fields', async (t) => {
    const ctr = { name: 'c', image: 'busybox', volumeMounts: [{ name: 'www', mountPath: '/www' }] };
    const claim = { metadata: { name: 'www' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    const spec = { serviceName: 'web', selector: { matchLabels: labels }, template: template({ containers: [ctr] }), volumeClaimTemplates: [claim] };
    await create(s, `${NS}/statefulsets`, { metadata: { name: 'ss' }, spec });
    const item = `${NS}/statefulsets/ss`;
    t.equal((await update(s, item, (o) => { o.spec.replicas = 3; })).status, 200, 'replicas may change');
    const r = await update(s, item, (o) => { o.spec.serviceName = 'other'; });
    t.equal(r.status, 422);
    t.same(r.json.details.causes, [{ reason: 'FieldValueForbidden', field: 'spec', message: "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden" }]);
    const never = await s.request('POST', `${NS}/statefulsets`, { body: { metadata: { name: 'ss-never' }, spec: { ...spec, template: template({ restartPolicy: 'Never' }) } } });
    t.same(pairs(never.json.details.causes), ['spec.template.spec.restartPolicy FieldValueNotSupported']);
  });

  await t.test('a running Job keeps its template; a suspended one that never ran may move its pods', async (t) => {
    const job = (name: string, suspend: boolean) => ({ metadata: { name }, spec: { suspend, template: template({ restartPolicy: 'Never' }) } });
    await create(s, `${BATCH}/jobs`, job('running', false));
    const r = await update(s, `${BATCH}/jobs/running`, (o) => { o.spec.template.spec.nodeSelector = { zone: 'a' }; });
    t.equal(r.status, 422);
    t.same(pairs(r.json.details.causes), ['spec.template FieldValueInvalid']);
    await create(s, `${BATCH}/jobs`, job('waiting', true));
    const moved = await update(s, `${BATCH}/jobs/waiting`, (o) => { o.spec.template.spec.nodeSelector = { zone: 'a' }; });
    t.equal(moved.status, 200, moved.text);
  });

  await t.test('a CronJob without a spec is told what its job template lacks', async (t) => {
    const r = await s.request('POST', `${BATCH}/cronjobs`, { body: { metadata: { name: 'cj' } } });
    t.equal(r.status, 422);
    t.same(pairs(r.json.details.causes), ['spec.jobTemplate.spec.template.spec.containers FieldValueRequired', 'spec.jobTemplate.spec.template.spec.restartPolicy FieldValueRequired', 'spec.schedule FieldValueRequired']);
    const tz = await s.request('POST', `${BATCH}/cronjobs`, { body: { metadata: { name: 'cj-tz' }, spec: { schedule: '* * * * *', timeZone: 'Bad Value!', jobTemplate: { spec: { template: template({ restartPolicy: 'OnFailure' }) } } } } });
    t.same(tz.json.details?.causes, [{ reason: 'FieldValueInvalid', field: 'spec.timeZone', message: 'Invalid value: "Bad Value!": unknown time zone Bad Value!' }]);
  });

  await t.test('an empty string or a zero is unset for the reference defaults of plain fields', async (t) => {
    const c = { name: 'c', image: 'busybox', ports: [{ containerPort: 80, protocol: '' }], imagePullPolicy: '', livenessProbe: { httpGet: { port: 80, path: '', scheme: '' }, successThreshold: 0 } };
    const d = await create(s, `${NS}/deployments`, { metadata: { name: 'zero' }, spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [c], dnsPolicy: '', restartPolicy: '' } } } });
    const got = d.spec.template.spec;
    t.equal(got.containers[0].ports[0].protocol, 'TCP');
    t.equal(got.containers[0].imagePullPolicy, 'Always');
    t.same(got.containers[0].livenessProbe.httpGet, { port: 80, path: '/', scheme: 'HTTP' });
    t.equal(got.containers[0].livenessProbe.successThreshold, 1);
    t.equal(got.dnsPolicy, 'ClusterFirst');
    t.equal(got.restartPolicy, 'Always');
  });

  await t.test('what Go cannot decode into an int-or-string or a resource list is a 400', async (t) => {
    const body = (c: Record<string, unknown>) => ({ metadata: { name: 'bad' }, spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'busybox', ...c }] } } } });
    const frac = await s.request('POST', `${NS}/deployments`, { body: body({ livenessProbe: { httpGet: { port: 1.5 } } }) });
    t.equal(frac.status, 400);
    t.match(frac.json.message, 'json: cannot unmarshal number 1.5 into Go struct field HTTPGetAction.spec.template.spec.containers.livenessProbe.httpGet.port of type int32');
    const res = await s.request('POST', `${NS}/deployments`, { body: body({ resources: { limits: 'str' } }) });
    t.equal(res.status, 400);
    t.match(res.json.message, 'of type v1.ResourceList');
    const strategy = await s.request('POST', `${NS}/deployments`, { body: { ...body({}), spec: { ...body({}).spec, strategy: 'str' } } });
    t.equal(strategy.status, 400);
    t.match(strategy.json.message, 'of type v1.DeploymentStrategy');
  });

  await t.test('a pod update keeps its containers, tolerations and deadline', async (t) => {
    await create(s, '/api/v1/namespaces/default/pods', { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }], activeDeadlineSeconds: 60, tolerations: [{ key: 'k', operator: 'Exists' }] } });
    const item = '/api/v1/namespaces/default/pods/p';
    const gone = await update(s, item, (o) => { delete o.spec.tolerations; });
    t.same(pairs(gone.json.details.causes), ['spec.tolerations FieldValueForbidden']);
    const unset = await update(s, item, (o) => { delete o.spec.activeDeadlineSeconds; });
    t.same(pairs(unset.json.details.causes), ['spec.activeDeadlineSeconds FieldValueInvalid']);
    const removed = await update(s, item, (o) => { o.spec.containers = []; });
    t.same(pairs(removed.json.details.causes), ['spec.containers FieldValueForbidden', 'spec.containers FieldValueRequired']);
    t.equal((await update(s, item, (o) => { o.spec.activeDeadlineSeconds = 30; })).status, 200, 'the deadline may be lowered');
  });

  await t.test('an update whose body has no name is a 400', async (t) => {
    const r = await update(s, `${NS}/deployments/d`, (o) => { delete o.metadata.name; });
    t.equal(r.status, 400);
    t.equal(r.json.message, 'the name of the object (d based on URL) was undeterminable: name must be provided');
  });
});
