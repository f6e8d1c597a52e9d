// Per-type rules of the reference's registry strategies (issue 16), each held to the reference's
// status code, reason, message and details over real HTTPS.
import t from 'tap';
import { withServer } from '../lib/server.js';

const MERGE = { 'content-type': 'application/merge-patch+json' };
const JSONP = { 'content-type': 'application/json-patch+json' };
const tpl = { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };

t.test('per-type rules (kubernetes brand)', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const mk = async (path: string, body: unknown) => {
    const r = await s.request('POST', path, { body });
    if (r.status !== 201) throw new Error(`${path}: ${r.status} ${r.text}`);
    return r.json;
  };

  await t.test('status patches apply metadata label and annotation changes (as the status strategies do)', async (t) => {
    await mk('/api/v1/namespaces', { metadata: { name: 'st' } });
    const objects: [string, unknown][] = [
      ['/api/v1/namespaces/st', undefined],
      ['/api/v1/namespaces/default/services/svc', { metadata: { name: 'svc' }, spec: { ports: [{ port: 80 }] } }],
      ['/apis/batch/v1/namespaces/default/cronjobs/cj', { metadata: { name: 'cj' }, spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { ...tpl, spec: { ...tpl.spec, restartPolicy: 'Never' } } } } } }],
      ['/apis/networking.k8s.io/v1/namespaces/default/ingresses/ing', { metadata: { name: 'ing' }, spec: { defaultBackend: { service: { name: 'svc', port: { number: 80 } } } } }],
    ];
    for (const [path, body] of objects) {
      if (body) await mk(path.slice(0, path.lastIndexOf('/')), body);
      const m = await s.request('PATCH', `${path}/status`, { body: { metadata: { annotations: { 'example.com/a': '1' }, labels: { l: 'v' } } }, headers: MERGE });
      t.equal(m.status, 200, `${path}: ${m.text}`);
      t.equal(m.json.metadata.annotations?.['example.com/a'], '1', `${path}: merge patch to status sets the annotation`);
      t.equal(m.json.metadata.labels?.l, 'v', `${path}: and the label`);
      const j = await s.request('PATCH', `${path}/status`, { body: [{ op: 'add', path: '/metadata/annotations/example.com~1b', value: '2' }], headers: JSONP });
      t.equal(j.json.metadata.annotations?.['example.com/b'], '2', `${path}: JSON patch to status too`);
      t.equal((await s.get(path)).json.metadata.annotations?.['example.com/b'], '2', `${path}: stored`);
    }
    // A status write still cannot change the spec.
    const spec = await s.request('PATCH', '/api/v1/namespaces/default/services/svc/status', { body: { spec: { ports: [{ port: 81 }] } }, headers: MERGE });
    t.equal(spec.json.spec.ports[0].port, 80, 'spec unchanged through status');
  });

  await t.test('a Deployment\'s status strategy keeps its labels (the reference resets them)', async (t) => {
    await mk('/apis/apps/v1/namespaces/default/deployments', { metadata: { name: 'd', labels: { keep: 'me' } }, spec: { selector: { matchLabels: { app: 'x' } }, template: tpl } });
    const r = await s.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/d/status', { body: { metadata: { labels: { keep: 'changed' }, annotations: { a: 'b' } } }, headers: MERGE });
    t.equal(r.status, 200, r.text);
    t.same(r.json.metadata.labels, { keep: 'me' }, 'labels reset from the stored object');
    t.equal(r.json.metadata.annotations?.a, 'b', 'annotations do change');
  });

  await t.test('update without resourceVersion: allowed exactly where the reference allows it', async (t) => {
    const q = await mk('/api/v1/namespaces/default/resourcequotas', { metadata: { name: 'q' }, spec: { hard: { pods: '10' } } });
    const { resourceVersion: _rv, ...md } = q.metadata;
    // Concurrent unconditional writers on the same object all succeed (each retried on conflict).
    const puts = await Promise.all(Array.from({ length: 8 }, (_, i) => s.request('PUT', '/api/v1/namespaces/default/resourcequotas/q', { body: { ...q, metadata: md, spec: { hard: { pods: String(11 + i) } } } })));
    t.same(puts.map((p) => p.status), Array(8).fill(200), `ResourceQuota allows unconditional updates: ${puts.map((p) => p.status === 200 ? '' : p.text).join('')}`);

    await mk('/apis/coordination.k8s.io/v1/namespaces/default/leases', { metadata: { name: 'l' }, spec: {} });
    const l = await s.request('PUT', '/apis/coordination.k8s.io/v1/namespaces/default/leases/l', { body: { metadata: { name: 'l' }, spec: { holderIdentity: 'x' } } });
    t.same(l.json, {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'leases.coordination.k8s.io "l" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
      reason: 'Invalid',
      details: { name: 'l', group: 'coordination.k8s.io', kind: 'leases', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update', field: 'metadata.resourceVersion' }] },
      code: 422,
    }, 'Lease does not');
    const missing = await s.request('PUT', '/apis/coordination.k8s.io/v1/namespaces/default/leases/none', { body: { metadata: { name: 'none' }, spec: {} } });
    t.equal(missing.status, 404, 'a missing object is still a 404');
    const cur = (await s.get('/apis/coordination.k8s.io/v1/namespaces/default/leases/l')).json;
    t.equal((await s.request('PUT', '/apis/coordination.k8s.io/v1/namespaces/default/leases/l', { body: { ...cur, spec: { holderIdentity: 'y' } } })).status, 200, 'with its resourceVersion it updates');
    const pdb = await mk('/apis/policy/v1/namespaces/default/poddisruptionbudgets', { metadata: { name: 'p' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'x' } } } });
    const { resourceVersion: _p, ...pmd } = pdb.metadata;
    t.equal((await s.request('PUT', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/p', { body: { ...pdb, metadata: pmd } })).status, 422, 'PodDisruptionBudget does not either');
  });

  const invalid = (kind: string, name: string, causes: { reason: string; message: string; field: string }[], group?: string) => ({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: `${group ? `${kind}.${group}` : kind} "${name}" is invalid: ${causes.length === 1 ? `${causes[0].field}: ${causes[0].message}` : `[${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}]`}`,
    reason: 'Invalid', details: { name, ...(group ? { group } : {}), kind, causes }, code: 422,
  });
  const SYSCTL = 'must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$';

  await t.test('pod sysctl names are validated', async (t) => {
    const r = await s.request('POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name: 'sys' }, spec: { ...tpl.spec, securityContext: { sysctls: [{ name: 'foo-', value: '1' }, { name: 'bar..', value: '1' }, { name: 'kernel.shm_rmid_forced', value: '0' }, { name: 'kernel.shm_rmid_forced', value: '1' }] } } } });
    t.same(r.json, invalid('Pod', 'sys', [
      { reason: 'FieldValueInvalid', message: `Invalid value: "foo-": ${SYSCTL}`, field: 'spec.securityContext.sysctls[0].name' },
      { reason: 'FieldValueInvalid', message: `Invalid value: "bar..": ${SYSCTL}`, field: 'spec.securityContext.sysctls[1].name' },
      { reason: 'FieldValueDuplicate', message: 'Duplicate value: "kernel.shm_rmid_forced"', field: 'spec.securityContext.sysctls[3].name' },
    ]));
    const ok = await s.request('POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name: 'sys' }, spec: { ...tpl.spec, securityContext: { sysctls: [{ name: 'net.ipv4.ip_local_port_range', value: '1024 65535' }, { name: 'net/ipv4/conf/eth0.1/forwarding', value: '1' }] } } } });
    t.equal(ok.status, 201, ok.text);
    const d = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: { metadata: { name: 'sysd' }, spec: { selector: { matchLabels: { app: 'x' } }, template: { ...tpl, spec: { ...tpl.spec, securityContext: { sysctls: [{ name: 'foo-' }] } } } } } });
    t.equal(d.status, 422, 'templates too');
    t.equal(d.json.details.causes[0].field, 'spec.template.spec.securityContext.sysctls[0].name');
  });

  await t.test('pod updates change only what the reference allows; resources are immutable', async (t) => {
    const made = await mk('/api/v1/namespaces/default/pods', { metadata: { name: 'upd' }, spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m' } } }] } });
    const img = await s.request('PATCH', '/api/v1/namespaces/default/pods/upd', { body: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } }, headers: { 'content-type': 'application/strategic-merge-patch+json' } });
    t.equal(img.status, 200, `image may change: ${img.text}`);
    const lbl = await s.request('PATCH', '/api/v1/namespaces/default/pods/upd', { body: { metadata: { labels: { a: 'b' } }, spec: { activeDeadlineSeconds: 30 } }, headers: MERGE });
    t.equal(lbl.status, 200, 'labels and activeDeadlineSeconds may change');
    const res = await s.request('PATCH', '/api/v1/namespaces/default/pods/upd', { body: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '200m' } } }] } }, headers: { 'content-type': 'application/strategic-merge-patch+json' } });
    t.equal(res.status, 422, res.text);
    t.equal(res.json.reason, 'Invalid');
    t.same(res.json.details.causes, [{ reason: 'FieldValueForbidden', field: 'spec', message: 'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)' }]);
    t.match(res.json.message, /^Pod "upd" is invalid: spec: Forbidden: pod updates may not change fields other than /);
    const restart = await s.request('PATCH', '/api/v1/namespaces/default/pods/upd', { body: { spec: { restartPolicy: 'Never' } }, headers: MERGE });
    t.equal(restart.status, 422, 'nor any other spec field');
    const stored = (await s.get('/api/v1/namespaces/default/pods/upd')).json;
    t.same(stored.spec.containers[0].resources, made.spec.containers[0].resources, 'resources unchanged');
    t.equal(stored.spec.containers[0].image, 'busybox:2');
  });

  await t.test('PriorityClass value and preemptionPolicy are immutable', async (t) => {
    const pc = '/apis/scheduling.k8s.io/v1/priorityclasses';
    await mk(pc, { metadata: { name: 'high' }, value: 1000 });
    const v = await s.request('PATCH', `${pc}/high`, { body: { value: 2000 }, headers: MERGE });
    t.same(v.json, invalid('PriorityClass', 'high', [{ reason: 'FieldValueForbidden', message: 'Forbidden: may not be changed in an update.', field: 'value' }], 'scheduling.k8s.io'));
    const p = await s.request('PATCH', `${pc}/high`, { body: { preemptionPolicy: 'Never' }, headers: MERGE });
    t.same(p.json.details.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: "Never": field is immutable', field: 'preemptionPolicy' }]);
    t.equal((await s.request('PATCH', `${pc}/high`, { body: { description: 'ok' }, headers: MERGE })).status, 200, 'other fields may change');
    const big = await s.request('POST', pc, { body: { metadata: { name: 'too-high' }, value: 2000000000 } });
    t.same(big.json.details.causes, [{ reason: 'FieldValueForbidden', message: 'Forbidden: maximum allowed value of a user defined priority is 1000000000', field: 'value' }]);
  });

  await t.test('core/v1 Event field selectors', async (t) => {
    const ev = (name: string, more: Record<string, unknown>) => mk('/api/v1/namespaces/default/events', { metadata: { name }, involvedObject: { kind: 'Pod', namespace: 'default', name: 'p1', uid: 'u1', apiVersion: 'v1', fieldPath: 'spec.containers{c}' }, reason: 'Started', type: 'Normal', message: 'm', ...more });
    await ev('e1', { source: { component: 'test-controller' } });
    await ev('e2', { reportingComponent: 'reporter', reason: 'Killing', type: 'Warning', involvedObject: { kind: 'Node', name: 'n1' } });
    const names = async (sel: string) => (await s.get(`/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(sel)}`)).json.items.map((e: { metadata: { name: string } }) => e.metadata.name).sort();
    t.same(await names('source=test-controller'), ['e1']);
    t.same(await names('source=reporter'), ['e2'], 'source falls back to the reporting component');
    t.same(await names('reportingComponent=reporter'), ['e2']);
    t.same(await names('reason=Killing'), ['e2']);
    t.same(await names('type=Normal'), ['e1']);
    t.same(await names('involvedObject.kind=Pod,involvedObject.name=p1'), ['e1']);
    t.same(await names('involvedObject.uid=u1,involvedObject.fieldPath=spec.containers{c}'), ['e1']);
    t.same(await names('involvedObject.kind!=Pod'), ['e2']);
    const bad = await s.get('/api/v1/namespaces/default/events?fieldSelector=bogus%3Dx');
    t.equal(bad.status, 400);
  });

  await t.test('RBAC roleRef, RuntimeClass handler and ControllerRevision rules', async (t) => {
    const rb = '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings';
    await mk(rb, { metadata: { name: 'rb' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'u' }] });
    const ref = await s.request('PATCH', `${rb}/rb`, { body: { roleRef: { name: 'edit' } }, headers: MERGE });
    t.same(ref.json, invalid('RoleBinding', 'rb', [{ reason: 'FieldValueInvalid', message: 'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef', field: 'roleRef' }], 'rbac.authorization.k8s.io'));
    t.equal((await s.request('PATCH', `${rb}/rb`, { body: { subjects: [{ kind: 'User', name: 'v' }] }, headers: MERGE })).status, 200, 'subjects may change');
    const rc = '/apis/node.k8s.io/v1/runtimeclasses';
    const bad = await s.request('POST', rc, { body: { metadata: { name: 'rc' }, handler: 'Not_A_Label' } });
    t.equal(bad.status, 422);
    t.equal(bad.json.details.causes[0].field, 'handler');
    await mk(rc, { metadata: { name: 'rc' }, handler: 'runc' });
    const h = await s.request('PATCH', `${rc}/rc`, { body: { handler: 'crun' }, headers: MERGE });
    t.same(h.json.details.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: "crun": field is immutable', field: 'handler' }]);
    const cr = await s.request('POST', '/apis/apps/v1/namespaces/default/controllerrevisions', { body: { metadata: { name: 'cr' }, revision: -1 } });
    t.same(cr.json.details.causes, [
      { reason: 'FieldValueRequired', message: 'Required value: data is mandatory', field: 'data' },
      { reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be greater than or equal to 0', field: 'revision' },
    ]);
  });

  await t.test('storage.k8s.io/v1 CSIStorageCapacity is served', async (t) => {
    const base = '/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities';
    const disc = (await s.get('/apis/storage.k8s.io/v1')).json.resources.find((r: { name: string }) => r.name === 'csistoragecapacities');
    t.match(disc, { name: 'csistoragecapacities', namespaced: true, kind: 'CSIStorageCapacity' });
    const c = await mk(base, { metadata: { name: 'cap' }, storageClassName: 'fast', capacity: '10Gi', nodeTopology: { matchLabels: { zone: 'a' } } });
    t.equal(c.capacity, '10Gi');
    t.equal((await s.get(base)).json.items.length, 1);
    const tbl = await s.get(`${base}/cap`, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    // the reference has no printer for it: the default Name and Created At columns
    t.same(tbl.json.columnDefinitions.map((d: { name: string; type: string }) => `${d.name}:${d.type}`), ['Name:string', 'Created At:date']);
    t.match(tbl.json.rows[0].cells, ['cap', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/]);
    const bad = await s.request('POST', base, { body: { metadata: { name: 'bad' }, storageClassName: '' } });
    t.equal(bad.status, 422);
    t.equal(bad.json.details.causes[0].field, 'storageClassName');
    const { resourceVersion: _r, ...md } = c.metadata;
    t.equal((await s.request('PUT', `${base}/cap`, { body: { ...c, metadata: md } })).status, 422, 'no unconditional updates');
    const imm = await s.request('PUT', `${base}/cap`, { body: { ...c, storageClassName: 'slow' } });
    t.same(imm.json.details.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: "slow": field is immutable', field: 'storageClassName' }]);
  });
});
