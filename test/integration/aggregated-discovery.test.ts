// Aggregated discovery (apidiscovery.k8s.io v2beta1 and v2) on /api and /apis: the reference's shape,
// Vary and ETag, built-in, custom resource and extension-server groups, and the stock kubectl
// releases asking for it and using it instead of one request per group-version.
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';
import { establish, eventually, widgetCRD } from '../lib/crd.js';
import { kubectl, kubectlRelease } from '../lib/kubectl.js';
import { GROUP, GV, startExtensionServer, VERSION } from '../lib/extension-apiserver.js';

const V2B1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
const V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const NS = 'wardle';

async function withExtension(t: { teardown(fn: () => unknown): void }, s: TestServer) {
  const cm = (await s.get('/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication')).json;
  const ext = await startExtensionServer({ requestheaderCA: cm.data['requestheader-client-ca-file'], allowedNames: JSON.parse(cm.data['requestheader-allowed-names']), serviceName: 'api', namespace: NS });
  t.teardown(() => ext.close());
  await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
  await s.request('POST', `/api/v1/namespaces/${NS}/services`, { body: { metadata: { name: 'api' }, spec: { ports: [{ name: 'https', port: 443, targetPort: ext.port }] } } });
  await s.request('POST', `/api/v1/namespaces/${NS}/endpoints`, { body: { metadata: { name: 'api' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: ext.port }] }] } });
  await s.request('POST', '/apis/apiregistration.k8s.io/v1/apiservices', { body: { metadata: { name: `${VERSION}.${GROUP}` }, spec: { group: GROUP, version: VERSION, groupPriorityMinimum: 1000, versionPriority: 15, caBundle: Buffer.from(ext.caPem).toString('base64'), service: { namespace: NS, name: 'api', port: 443 } } } });
  const ok = await eventually(async () => ((await s.get(`/apis/apiregistration.k8s.io/v1/apiservices/${VERSION}.${GROUP}`)).json.status?.conditions ?? []).some((c: any) => c.type === 'Available' && c.status === 'True'), 60_000);
  if (!ok) throw new Error('extension APIService not available');
  return ext;
}

function kubernetesCRD() {
  const crd: any = widgetCRD();
  crd.apiVersion = 'apiextensions.k8s.io/v1';
  return crd;
}

t.test('aggregated discovery documents', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--enable-aggregator-routing=true'], env: { CAPI_APISERVICE_PROBE_MS: '300' } });
  await establish(s, kubernetesCRD());
  const ext = await withExtension(t, s);

  const apis = await s.get('/apis', { accept: `${V2B1},application/json` });
  t.equal(apis.status, 200);
  t.equal(apis.headers['content-type'], V2B1);
  t.equal(apis.headers.vary, 'Accept');
  t.match(apis.headers.etag, /^"[0-9A-F]+"$/);
  t.equal(apis.json.kind, 'APIGroupDiscoveryList');
  t.equal(apis.json.apiVersion, 'apidiscovery.k8s.io/v2beta1');
  const group = (name: string) => apis.json.items.find((i: any) => i.metadata.name === name);
  const apps = group('apps');
  t.same(apps.metadata, { name: 'apps', creationTimestamp: null });
  const v1 = apps.versions.find((v: any) => v.version === 'v1');
  t.equal(v1.freshness, 'Current');
  const deploy = v1.resources.find((r: any) => r.resource === 'deployments');
  t.same(deploy.responseKind, { group: '', version: '', kind: 'Deployment' });
  t.equal(deploy.scope, 'Namespaced');
  t.equal(deploy.singularResource, 'deployment');
  t.same(deploy.shortNames, ['deploy']);
  t.same(deploy.categories, ['all']);
  t.same(deploy.subresources.find((x: any) => x.subresource === 'scale'), { subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] });
  t.ok(deploy.subresources.some((x: any) => x.subresource === 'status'));
  t.notOk(v1.resources.some((r: any) => r.resource.includes('/')), 'sub-resources only nested');
  t.equal(apis.json.items.find((i: any) => i.metadata.name === ''), undefined, 'the core group is on /api only');

  const widgets = group('example.com').versions[0].resources.find((r: any) => r.resource === 'widgets');
  t.same(widgets.shortNames, ['wd'], 'a custom resource, with its short names');
  t.ok(widgets.subresources.some((x: any) => x.subresource === 'scale'));
  const wardle = group(GROUP);
  t.same(wardle.versions.map((v: any) => [v.version, v.freshness]), [[VERSION, 'Current']], 'an extension server\'s group');
  t.same(wardle.versions[0].resources[0], { resource: 'flunders', responseKind: { group: '', version: '', kind: 'Flunder' }, scope: 'Namespaced', singularResource: 'flunder', verbs: ['create', 'get', 'list', 'watch'], shortNames: ['fl'] });
  t.same(apis.json.items.map((i: any) => i.metadata.name), (await s.get('/apis')).json.groups.map((g: any) => g.name), 'the groups in the order /apis lists them');

  // ETag: unchanged discovery is a 304; a new type changes it
  const same = await s.get('/apis', { accept: V2B1, 'if-none-match': apis.headers.etag as string });
  t.equal(same.status, 304);
  t.equal(same.headers.etag, apis.headers.etag);
  t.equal(same.headers.vary, 'Accept');
  const crd2: any = kubernetesCRD();
  crd2.metadata.name = 'gadgets.example.com';
  crd2.spec.names = { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' };
  await establish(s, crd2);
  const changed = await s.get('/apis', { accept: V2B1, 'if-none-match': apis.headers.etag as string });
  t.equal(changed.status, 200, 'a new resource changes the ETag');
  t.not(changed.headers.etag, apis.headers.etag);

  // v2 when asked first (kubectl 1.30+), v2beta1 when it is the only one; legacy JSON otherwise
  const v2 = await s.get('/apis', { accept: `${V2},${V2B1},application/json` });
  t.equal(v2.headers['content-type'], V2);
  t.equal(v2.json.apiVersion, 'apidiscovery.k8s.io/v2');
  const legacy = await s.get('/apis', { accept: 'application/json' });
  t.equal(legacy.json.kind, 'APIGroupList');
  t.equal(legacy.headers.vary, 'Accept');
  t.equal((await s.get('/apis', { accept: `application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,${V2B1}` })).headers['content-type'], V2B1, 'a Protobuf variant is passed over for the JSON one after it');

  const api = await s.get('/api', { accept: V2 });
  t.equal(api.headers['content-type'], V2);
  t.equal(api.json.items.length, 1);
  t.same(api.json.items[0].metadata, { creationTimestamp: null });
  const core = api.json.items[0].versions[0];
  t.equal(core.version, 'v1');
  const pods = core.resources.find((r: any) => r.resource === 'pods');
  t.same(pods.responseKind, { group: '', version: '', kind: 'Pod' });
  t.ok(pods.subresources.some((x: any) => x.subresource === 'eviction' && x.responseKind.group === 'policy'), 'eviction with its kind from the policy group');
  t.equal(core.resources.find((r: any) => r.resource === 'namespaces').scope, 'Cluster');
  t.equal((await s.get('/api', { accept: 'application/json' })).json.kind, 'APIVersions');

  // the extension server goes away: its last known resources stay, marked Stale
  await ext.close();
  t.ok(await eventually(async () => {
    const d = (await s.get('/apis', { accept: V2B1 })).json;
    return d.items.find((i: any) => i.metadata.name === GROUP)?.versions[0]?.freshness === 'Stale';
  }, 15_000), 'Stale while the extension server is down');
});

t.test('stock kubectl releases ask for aggregated discovery and use it', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--enable-aggregator-routing=true'], env: { CAPI_APISERVICE_PROBE_MS: '300' } });
  await establish(s, kubernetesCRD());
  await withExtension(t, s);
  let ran = 0;
  for (const v of ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33']) {
    const bin = kubectlRelease(v);
    if (!bin) { t.comment(`kubectl ${v} not installed`); continue; }
    ran++;
    const r = await kubectl(s, ['api-resources', '-v=8'], { bin });
    t.equal(r.code, 0, `${v}: ${r.stderr.slice(-500)}`);
    const want = Number(v.split('.')[1]) >= 30 ? 'v2' : 'v2beta1';
    t.match(r.stderr, new RegExp(`Content-Type: application/json;g=apidiscovery\\.k8s\\.io;v=${want};as=APIGroupDiscoveryList`), `${v} got ${want}`);
    // request lines: `GET https://…` up to 1.32, `"Request" verb="GET" url="https://…"` from 1.33
    t.match(r.stderr, /(?:GET |url=")https:\/\/[^\s"]+\/apis\?timeout=/, `${v} asked for /apis`);
    t.notMatch(r.stderr, /(?:GET |url=")https:\/\/[^\s"]+\/apis\/apps\/v1\b/, `${v} did not fetch group-versions one by one`);
    t.match(r.stdout, /flunders\s+fl\s+wardle\.example\.io\/v1alpha1\s+true\s+Flunder/, `${v} lists the extension server's resource`);
    t.match(r.stdout, /widgets\s+wd\s+example\.com\/v1\s+true\s+Widget/, `${v} lists the custom resource`);
    t.match(r.stdout, /deployments\s+deploy\s+apps\/v1\s+true\s+Deployment/);
    const g = await kubectl(s, ['get', 'fl', '-n', NS], { bin });
    t.equal(g.code, 0, `${v}: ${g.stderr}`);
  }
  if (!ran) t.comment('no kubectl release installed under /usr/lib/google-cloud-sdk/bin');
});
