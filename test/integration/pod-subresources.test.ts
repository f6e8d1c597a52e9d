// pods/ephemeralcontainers and pods/resize over HTTP: each writes only its own part of the pod, with
// the reference's rules (ephemeral containers are only added, never changed or removed, and may not
// set ports, probes, lifecycle or resources; resize changes only container resources).
import t from 'tap';
import { withServer } from '../lib/server.js';

const POD = '/api/v1/namespaces/default/pods';
const SMP = { 'content-type': 'application/strategic-merge-patch+json' };

t.test('pods/ephemeralcontainers and pods/resize', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const made = await s.request('POST', POD, { body: { metadata: { name: 'web' }, spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '100m' } } }] } } });
  t.equal(made.status, 201, made.text);

  const onCreate = await s.request('POST', POD, { body: { metadata: { name: 'eph' }, spec: { containers: [{ name: 'a', image: 'x' }], ephemeralContainers: [{ name: 'e', image: 'x' }] } } });
  t.equal(onCreate.status, 422);
  t.equal(onCreate.json.message, 'Pod "eph" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create');

  const got = await s.get(`${POD}/web/ephemeralcontainers`);
  t.equal(got.status, 200);
  t.equal(got.json.kind, 'Pod');

  const add = await s.request('PATCH', `${POD}/web/ephemeralcontainers`, {
    body: { spec: { ephemeralContainers: [{ name: 'debugger', image: 'busybox', stdin: true, tty: true, targetContainerName: 'app' }], containers: [{ name: 'app', image: 'changed' }] }, metadata: { labels: { a: 'b' } } },
    headers: SMP,
  });
  t.equal(add.status, 200, add.text);
  t.same(add.json.spec.ephemeralContainers.map((c: { name: string }) => c.name), ['debugger']);
  t.equal(add.json.spec.ephemeralContainers[0].terminationMessagePolicy, 'File', 'defaulted like any container');
  t.equal(add.json.spec.containers[0].image, 'nginx', 'the rest of the spec is not written through this sub-resource');
  t.notOk(add.json.metadata.labels?.a, 'nor the metadata');

  const invalid = async (body: unknown, message: string) => {
    const r = await s.request('PATCH', `${POD}/web/ephemeralcontainers`, { body, headers: { 'content-type': 'application/merge-patch+json' } });
    t.equal(r.status, 422, r.text);
    t.equal(r.json.message, message);
  };
  const cur = (await s.get(`${POD}/web`)).json;
  const existing = cur.spec.ephemeralContainers;
  await invalid({ spec: { ephemeralContainers: [] } }, 'Pod "web" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be removed\n');
  await invalid({ spec: { ephemeralContainers: [{ ...existing[0], image: 'other' }] } }, 'Pod "web" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be changed\n');
  await invalid({ spec: { ephemeralContainers: [...existing, { name: 'app', image: 'x' }] } }, 'Pod "web" is invalid: spec.ephemeralContainers[1].name: Duplicate value: "app"');
  await invalid({ spec: { ephemeralContainers: [...existing, { name: 'p', image: 'x', ports: [{ containerPort: 80 }], readinessProbe: { tcpSocket: { port: 80 } } }] } },
    'Pod "web" is invalid: [spec.ephemeralContainers[1].ports: Forbidden: cannot be set for an Ephemeral Container, spec.ephemeralContainers[1].readinessProbe: Forbidden: cannot be set for an Ephemeral Container]');
  await invalid({ spec: { ephemeralContainers: [...existing, { name: 't', image: 'x', targetContainerName: 'nope' }] } }, 'Pod "web" is invalid: spec.ephemeralContainers[1].targetContainerName: Not found: "nope"');
  await invalid({ spec: { ephemeralContainers: [...existing, { name: 'n' }] } }, 'Pod "web" is invalid: spec.ephemeralContainers[1].image: Required value');
  t.same((await s.get(`${POD}/web`)).json.spec.ephemeralContainers.map((c: { name: string }) => c.name), ['debugger'], 'nothing half-written');

  // a pod update does not touch ephemeral containers
  const upd = await s.request('PATCH', `${POD}/web`, { body: { spec: { ephemeralContainers: [] } }, headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal(upd.status, 422);

  // concurrent additions: none is lost (unconditional writes are retried against the fresh pod)
  const n = 12;
  const all = await Promise.all(Array.from({ length: n }, (_, i) => s.request('PATCH', `${POD}/web/ephemeralcontainers`, { body: { spec: { ephemeralContainers: [{ name: `dbg-${i}`, image: 'busybox' }] } }, headers: SMP })));
  t.same(all.map((r) => r.status), Array(n).fill(200));
  const names = (await s.get(`${POD}/web`)).json.spec.ephemeralContainers.map((c: { name: string }) => c.name).sort();
  t.same(names, ['debugger', ...Array.from({ length: n }, (_, i) => `dbg-${i}`)].sort());

  // resize: container resources only
  const rs = await s.request('PATCH', `${POD}/web/resize`, { body: { spec: { containers: [{ name: 'app', resources: { requests: { cpu: '200m' } } }] } }, headers: SMP });
  t.equal(rs.status, 200, rs.text);
  t.equal(rs.json.spec.containers[0].resources.requests.cpu, '200m');
  t.equal(rs.json.spec.containers[0].image, 'nginx');
  const img = await s.request('PATCH', `${POD}/web/resize`, { body: { spec: { containers: [{ name: 'app', image: 'other' }] } }, headers: SMP });
  t.equal(img.status, 422);
  t.equal(img.json.message, 'Pod "web" is invalid: spec: Forbidden: only cpu and memory resources are mutable');
  const other = await s.request('PATCH', `${POD}/web/resize`, { body: { spec: { activeDeadlineSeconds: 5, containers: [{ name: 'app', resources: { requests: { cpu: '300m' } } }] } }, headers: SMP });
  t.equal(other.status, 200);
  t.notOk(other.json.spec.activeDeadlineSeconds, 'fields outside the containers are not written through resize');
  const resizes = await Promise.all(['1', '2', '3', '4'].map((c) => s.request('PATCH', `${POD}/web/resize`, { body: { spec: { containers: [{ name: 'app', resources: { limits: { cpu: c } } }] } }, headers: SMP })));
  t.same(resizes.map((r) => r.status), [200, 200, 200, 200], 'concurrent resizes all commit, one after another');

  const disc = (await s.get('/api/v1')).json.resources.filter((r: { name: string }) => r.name === 'pods/ephemeralcontainers' || r.name === 'pods/resize');
  t.same(disc.map((r: { name: string; kind: string; verbs: string[] }) => [r.name, r.kind, r.verbs]), [['pods/ephemeralcontainers', 'Pod', ['get', 'patch', 'update']], ['pods/resize', 'Pod', ['get', 'patch', 'update']]]);
});
