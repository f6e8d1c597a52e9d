// APIServices (apiregistration): a local one per served group-version, kept as custom resource groups
// come and go, their Available condition, and the reference's validation.
import t from 'tap';
import { withServer } from '../lib/server.js';
import { establish, eventually, widgetCRD } from '../lib/crd.js';

const API = '/apis/apiregistration.cluster.io/v1/apiservices';

t.test('apiservices', async (t) => {
  const s = await withServer(t);
  const list = (await s.get(API)).json;
  const names = list.items.map((i: any) => i.metadata.name);
  for (const n of ['v1.', 'v1.apps', 'v1.apiextensions.cluster.io', 'v1.apiregistration.cluster.io']) t.ok(names.includes(n), n);
  const apps = (await s.get(`${API}/v1.apps`)).json;
  t.same(apps.spec, { group: 'apps', version: 'v1', groupPriorityMinimum: 17000, versionPriority: 15 });
  t.match(apps.status.conditions[0], { type: 'Available', status: 'True', reason: 'Local', message: 'Local APIServices are always available' });
  t.equal(apps.metadata.labels['kube-aggregator.cluster.io/automanaged'], 'onstart');

  await establish(s, widgetCRD());
  t.ok(await eventually(async () => (await s.get(`${API}/v1.example.com`)).status === 200), 'a custom resource group gets its APIService');
  t.equal((await s.get(`${API}/v1.example.com`)).json.metadata.labels['kube-aggregator.cluster.io/automanaged'], 'true');
  t.equal((await s.request('DELETE', '/apis/apiextensions.cluster.io/v1/customresourcedefinitions/widgets.example.com')).status, 200);
  t.ok(await eventually(async () => (await s.get(`${API}/v1.example.com`)).status === 404), 'and loses it with the group');

  const bad = await s.request('POST', API, { body: { metadata: { name: 'v1.wrong' }, spec: { group: 'metrics.example.io', version: 'v1beta1', groupPriorityMinimum: 0, versionPriority: 100, service: { namespace: 'kube-system', name: '' } } } });
  t.equal(bad.status, 422);
  const causes = bad.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
  t.ok(causes.includes('metadata.name: Invalid value: "v1.wrong": must be `spec.version+"."+spec.group`: "v1beta1.metrics.example.io"'), causes.join('\n'));
  t.ok(causes.includes('spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000'));
  t.ok(causes.includes('spec.service.name: Required value'));

  const remote = await s.request('POST', API, { body: { metadata: { name: 'v1beta1.metrics.example.io' }, spec: { group: 'metrics.example.io', version: 'v1beta1', groupPriorityMinimum: 100, versionPriority: 100, insecureSkipTLSVerify: true, service: { namespace: 'kube-system', name: 'metrics' } } } });
  t.equal(remote.status, 201, 'a remote APIService is accepted');
  t.equal(remote.json.spec.service.port, 443, 'port defaulted');
  let got: any;
  t.ok(await eventually(async () => { got = (await s.get(`${API}/v1beta1.metrics.example.io`)).json; return !!got.status?.conditions?.length; }));
  t.match(got.status.conditions[0], { type: 'Available', status: 'False', reason: 'ServiceNotFound', message: 'service/metrics in "kube-system" is not present' });
});
