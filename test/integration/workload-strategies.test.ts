// The status/spec strategies of the workload types (Deployment, ReplicaSet, StatefulSet, DaemonSet,
// CronJob, Job): a status write changes only status (spec, and the generation, stay), a main-resource
// write never changes status, a spec change bumps metadata.generation and nothing else does, and the
// controller's status.observedGeneration is kept as written. Concurrent spec and status writers of
// one object lose nothing and see no conflict without a resourceVersion.
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';

const merge = { 'content-type': 'application/merge-patch+json' };
const template = (app: string, restartPolicy?: string) => ({ metadata: { labels: { app } }, spec: { ...(restartPolicy ? { restartPolicy } : {}), containers: [{ name: 'c', image: 'busybox:1' }] } });

interface Kind { path: string; kind: string; apiVersion: string; body: (name: string) => Record<string, unknown>; status: Record<string, unknown>; specPatch: (i: number) => Record<string, unknown> }
const apps = (resource: string, kind: string, extra: Record<string, unknown> = {}): Kind => ({
  path: `/apis/apps/v1/namespaces/default/${resource}`, kind, apiVersion: 'apps/v1',
  body: (name) => ({ spec: { selector: { matchLabels: { app: name } }, template: template(name), ...extra } }),
  status: { replicas: 3, observedGeneration: 1 },
  specPatch: (i) => ({ spec: { template: { metadata: { annotations: { [`k${i}`]: 'v' } } } } }),
});
const KINDS: Kind[] = [
  apps('deployments', 'Deployment'),
  apps('replicasets', 'ReplicaSet'),
  apps('statefulsets', 'StatefulSet', { serviceName: 'svc' }),
  { ...apps('daemonsets', 'DaemonSet'), status: { currentNumberScheduled: 2, desiredNumberScheduled: 2, numberMisscheduled: 0, numberReady: 1, observedGeneration: 1 } },
  {
    path: '/apis/batch/v1/namespaces/default/cronjobs', kind: 'CronJob', apiVersion: 'batch/v1',
    body: (name) => ({ spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: template(name, 'OnFailure') } } } }),
    status: { lastScheduleTime: '2024-01-01T00:00:00Z', lastSuccessfulTime: '2024-01-01T00:00:05Z' },
    specPatch: (i) => ({ spec: { jobTemplate: { spec: { template: { metadata: { annotations: { [`k${i}`]: 'v' } } } } } } }),
  },
  {
    path: '/apis/batch/v1/namespaces/default/jobs', kind: 'Job', apiVersion: 'batch/v1',
    body: (name) => ({ spec: { template: template(name, 'Never') } }),
    status: { active: 1, startTime: '2024-01-01T00:00:00Z' },
    // A Job's template is immutable: its changeable spec is parallelism / activeDeadlineSeconds.
    specPatch: (i) => ({ spec: { activeDeadlineSeconds: 1000 + i } }),
  },
];

t.test('workload status and spec strategies', async (t) => {
  const s: TestServer = await withServer(t, { brand: 'kubernetes' });
  for (const k of KINDS) {
    await t.test(k.kind, async (t) => {
      const name = k.kind.toLowerCase();
      const c = await s.request('POST', k.path, { body: { apiVersion: k.apiVersion, kind: k.kind, metadata: { name }, ...k.body(name), status: k.status } });
      t.equal(c.status, 201, c.text);
      t.equal(c.json.metadata.generation, 1, 'generation starts at 1');
      // (what is there is Go's zero value of a field without omitempty: replicas 0, as the reference writes it)
      t.notOk(c.json.status && Object.keys(k.status).some((f) => c.json.status[f] !== undefined && c.json.status[f] !== 0 && f !== 'active'), 'status is not written on create');
      const spec0 = JSON.stringify(c.json.spec);

      // Status through /status: spec changes in the same body are ignored; generation stays.
      const st = await s.request('PUT', `${k.path}/${name}/status`, { body: { ...c.json, ...k.specPatch(1), status: k.status } });
      t.equal(st.status, 200, st.text);
      for (const [f, v] of Object.entries(k.status)) t.same(st.json.status[f], v, `status.${f} written`);
      t.equal(JSON.stringify(st.json.spec), spec0, '/status does not write spec');
      t.equal(st.json.metadata.generation, 1, 'a status write does not bump generation');
      const sp = await s.request('PATCH', `${k.path}/${name}/status`, { body: { ...k.specPatch(2), status: { observedGeneration: 1 } }, headers: merge });
      t.equal(sp.status, 200, sp.text);
      t.equal(JSON.stringify(sp.json.spec), spec0, 'a status PATCH does not write spec');

      // The main resource: status in the body is ignored; a spec change bumps generation.
      const m = await s.request('PATCH', `${k.path}/${name}`, { body: { ...k.specPatch(3), status: { observedGeneration: 99 } }, headers: merge });
      t.equal(m.status, 200, m.text);
      t.equal(m.json.metadata.generation, 2, 'spec change bumps generation');
      t.not(JSON.stringify(m.json.spec), spec0, 'spec written');
      t.same(m.json.status, sp.json.status, 'main resource ignores status');
      const l = await s.request('PATCH', `${k.path}/${name}`, { body: { metadata: { labels: { touched: 'yes' } } }, headers: merge });
      t.equal(l.json.metadata.generation, 2, 'a metadata-only change does not bump generation');
      const same = await s.request('PUT', `${k.path}/${name}`, { body: l.json });
      t.equal(same.json.metadata.generation, 2, 'an unchanged PUT does not bump generation');
      t.equal(same.json.metadata.resourceVersion, l.json.metadata.resourceVersion, 'nor writes');
    });
  }
});

t.test('concurrent spec and status writers of one object', async (t) => {
  const s: TestServer = await withServer(t, { brand: 'kubernetes' });
  for (const k of KINDS.filter((x) => x.kind !== 'Job')) {
    const name = `busy-${k.kind.toLowerCase()}`;
    const c = await s.request('POST', k.path, { body: { apiVersion: k.apiVersion, kind: k.kind, metadata: { name }, ...k.body(name) } });
    t.equal(c.status, 201, c.text);
    const N = 12;
    const writes = Array.from({ length: N }, (_, i) => [
      s.request('PATCH', `${k.path}/${name}`, { body: k.specPatch(i), headers: merge }),
      // CronJob status has no observedGeneration: its controller records times.
      s.request('PATCH', `${k.path}/${name}/status`, { body: { status: k.kind === 'CronJob' ? { lastScheduleTime: `2024-01-01T00:00:${String(i).padStart(2, '0')}Z` } : { observedGeneration: i + 1 } }, headers: merge }),
    ]).flat();
    const codes = (await Promise.all(writes)).map((r) => r.status);
    t.same(codes, Array(2 * N).fill(200), `${k.kind}: every write 200, no conflict`);
    const o = (await s.get(`${k.path}/${name}`)).json;
    const ann = (k.kind === 'CronJob' ? o.spec.jobTemplate.spec.template : o.spec.template).metadata.annotations ?? {};
    t.equal(Object.keys(ann).length, N, `${k.kind}: no spec write lost`);
    t.equal(o.metadata.generation, 1 + N, `${k.kind}: one generation per spec change`);
    if (k.kind === 'CronJob') t.match(o.status.lastScheduleTime, /^2024-01-01T00:00:\d\dZ$/, 'CronJob: status kept');
    else t.ok(o.status.observedGeneration >= 1 && o.status.observedGeneration <= N, `${k.kind}: status kept (${o.status.observedGeneration})`);
  }
});
