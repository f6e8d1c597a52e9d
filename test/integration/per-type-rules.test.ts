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
});
