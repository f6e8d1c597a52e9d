// All the workload controllers together while a namespace is deleted: the namespace empties and
// goes (the job-tracking finalizers of Job pods included), and the controllers, refused when they
// create in it meanwhile, log no warnings for it.
import t from 'tap';
import { eventually } from '../lib/poll.js';
import { createOk, podsWith, podTemplate, waitFor, withWorkloadControllers } from '../lib/workloads.js';

t.test('deleting a namespace with running workloads', async (t) => {
  const s = await withWorkloadControllers(t, ['replicaset', 'deployment', 'job', 'statefulset', 'daemonset', 'endpointslice'], { brand: 'kubernetes' });
  await createOk(s, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
  const apps = '/apis/apps/v1/namespaces/doomed';
  await createOk(s, `${apps}/deployments`, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: podTemplate({ app: 'web' }) } });
  await createOk(s, '/apis/batch/v1/namespaces/doomed/jobs', { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'batch' }, spec: { parallelism: 2, completions: 4, template: podTemplate({ app: 'batch' }, 'busybox', { restartPolicy: 'Never' }) } });
  await createOk(s, `${apps}/statefulsets`, { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' }, spec: { replicas: 2, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: podTemplate({ app: 'db' }) } });
  await createOk(s, '/api/v1/namespaces/doomed/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } });
  t.ok(await eventually(async () => (await podsWith(s, { app: 'web' }, 'doomed')).length === 3 && (await podsWith(s, { app: 'batch' }, 'doomed')).length === 2), 'workloads running');
  await waitFor(s, '/apis/batch/v1/namespaces/doomed/jobs/batch', (j) => j.status?.active === 2);

  t.equal((await s.request('DELETE', '/api/v1/namespaces/doomed')).status, 200);
  t.ok(await eventually(async () => (await s.get('/api/v1/namespaces/doomed')).status === 404), 'the namespace empties and goes');
  const warnings = s.logs.filter((l) => / controller"/.test(l) && /^W/.test(l));
  t.same(warnings, [], 'no controller warnings');
});
