// API aggregation: an extension API server written here (real HTTPS on loopback, checking our
// front-proxy client certificate against the extension-apiserver-authentication ConfigMap) is
// registered by an APIService + Service + Endpoints and used through this server: discovery, get,
// list, create, watch (with backpressure), the front-proxy headers, authorization before the proxy,
// the 503 when it is down, and the Available condition's transitions.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import t, { type Test } from 'tap';
import { sleep, withServer, type TestServer } from '../lib/server.js';
import { eventually } from '../lib/crd.js';
import { kubectl, noKubectl } from '../lib/kubectl.js';
import { GROUP, GV, OPENAPI_V3, startExtensionServer, VERSION, type ExtensionServer } from '../lib/extension-apiserver.js';

const APISVC = '/apis/apiregistration.k8s.io/v1/apiservices';
const NS = 'wardle';
const NAME = `${VERSION}.${GROUP}`;

async function trust(s: TestServer) {
  const cm = (await s.get('/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication')).json;
  return { requestheaderCA: cm.data['requestheader-client-ca-file'] as string, allowedNames: JSON.parse(cm.data['requestheader-allowed-names']) as string[], serviceName: 'api', namespace: NS };
}

async function register(t: Test, s: TestServer, ext: ExtensionServer, extra: Record<string, unknown> = {}) {
  await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
  t.equal((await s.request('POST', `/api/v1/namespaces/${NS}/services`, { body: { metadata: { name: 'api' }, spec: { ports: [{ name: 'https', port: 443, targetPort: ext.port }] } } })).status, 201);
  t.equal((await s.request('POST', `/api/v1/namespaces/${NS}/endpoints`, { body: { metadata: { name: 'api' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: ext.port }] }] } })).status, 201);
  const r = await s.request('POST', APISVC, { body: { metadata: { name: NAME }, spec: { group: GROUP, version: VERSION, groupPriorityMinimum: 1000, versionPriority: 15, caBundle: Buffer.from(ext.caPem).toString('base64'), service: { namespace: NS, name: 'api', port: 443 }, ...extra } } });
  t.equal(r.status, 201, 'APIService created');
}

const condition = async (s: TestServer) => ((await s.get(`${APISVC}/${NAME}`)).json.status?.conditions ?? []).find((c: any) => c.type === 'Available');
async function waitCondition(s: TestServer, want: { status: string; reason: string }, ms = 15_000) {
  let c: any;
  const ok = await eventually(async () => { c = await condition(s); return c?.status === want.status && c?.reason === want.reason; }, ms);
  return { ok, c };
}

t.test('the extension-apiserver-authentication ConfigMap and its reader Role', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const cm = (await s.get('/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication')).json;
  t.equal(cm.data['client-ca-file'], readFileSync(path.join(s.dataDir, 'pki/ca.crt'), 'utf8'), 'client-ca-file: the x509 authenticator\'s CA');
  t.equal(cm.data['requestheader-client-ca-file'], readFileSync(path.join(s.dataDir, 'pki/front-proxy-ca.crt'), 'utf8'), 'the front-proxy CA made at first start');
  t.same(JSON.parse(cm.data['requestheader-username-headers']), ['X-Remote-User']);
  t.same(JSON.parse(cm.data['requestheader-group-headers']), ['X-Remote-Group']);
  t.same(JSON.parse(cm.data['requestheader-extra-headers-prefix']), ['X-Remote-Extra-']);
  t.same(JSON.parse(cm.data['requestheader-allowed-names']), ['front-proxy-client']);
  // kept current: a change is reset, a deletion recreated
  const changed = await s.request('PUT', '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication', { body: { ...cm, data: { 'client-ca-file': 'x' } } });
  t.equal(changed.status, 200);
  t.ok(await eventually(async () => (await s.get('/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication')).json.data['client-ca-file'] === cm.data['client-ca-file'], 60_000), 'a changed ConfigMap is reset');
  t.equal((await s.request('DELETE', '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication')).status, 200);
  t.ok(await eventually(async () => (await s.get('/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication')).status === 200, 60_000), 'a deleted ConfigMap is recreated');

  const role = (await s.get('/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles/extension-apiserver-authentication-reader')).json;
  t.same(role.rules, [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['extension-apiserver-authentication'] }]);
  const rb = (await s.get('/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings/system::extension-apiserver-authentication-reader')).json;
  t.same(rb.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'extension-apiserver-authentication-reader' });
  t.same(rb.subjects.map((x: any) => x.name), ['system:kube-controller-manager', 'system:kube-scheduler']);
});

t.test('given front-proxy flags, the ConfigMap carries them', async (t) => {
  const probe = await withServer(t, { brand: 'kubernetes' });
  const caFile = path.join(probe.dataDir, 'pki/ca.crt');
  const s = await withServer(t, { brand: 'kubernetes', args: ['--requestheader-client-ca-file', caFile, '--requestheader-username-headers', 'X-User', '--requestheader-group-headers', 'X-Group', '--requestheader-extra-headers-prefix', 'X-Extra-', '--requestheader-allowed-names', 'aggregator',
    '--proxy-client-cert-file', path.join(probe.dataDir, 'pki/admin-client.crt'), '--proxy-client-key-file', path.join(probe.dataDir, 'pki/admin-client.key')] });
  const cm = (await s.get('/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication')).json;
  t.equal(cm.data['requestheader-client-ca-file'], readFileSync(caFile, 'utf8'), 'only the configured CA: the given client certificate is used, no front-proxy CA is made');
  t.same(JSON.parse(cm.data['requestheader-username-headers']), ['X-User']);
  t.same(JSON.parse(cm.data['requestheader-group-headers']), ['X-Group']);
  t.same(JSON.parse(cm.data['requestheader-extra-headers-prefix']), ['X-Extra-']);
  t.same(JSON.parse(cm.data['requestheader-allowed-names']), ['aggregator']);
});

t.test('an extension API server through this server', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--enable-aggregator-routing=true'], env: { CAPI_APISERVICE_PROBE_MS: '300' } });
  const ext = await startExtensionServer(await trust(s));
  t.teardown(() => ext.close());
  await register(t, s, ext);
  const up = await waitCondition(s, { status: 'True', reason: 'Passed' });
  t.ok(up.ok, `Available: ${JSON.stringify(up.c)}`);
  t.equal(up.c.message, 'all checks passed');
  const probeSeen = ext.seen.find((x) => x.user === 'system:kube-aggregator');
  t.ok(probeSeen, 'the discovery check ran as system:kube-aggregator');
  t.same(probeSeen?.groups, ['system:masters']);
  t.equal(probeSeen?.cn, 'front-proxy-client', 'with the front-proxy client certificate');

  // discovery: the group is listed here; the group-version's resources come from the extension server
  const apis = (await s.get('/apis')).json;
  const g = apis.groups.find((x: any) => x.name === GROUP);
  t.same(g, { name: GROUP, versions: [{ groupVersion: GV, version: VERSION }], preferredVersion: { groupVersion: GV, version: VERSION } });
  const group = (await s.get(`/apis/${GROUP}`)).json;
  t.equal(group.kind, 'APIGroup');
  t.equal(group.preferredVersion.groupVersion, GV);
  const rl = await s.get(`/apis/${GV}`);
  t.equal(rl.status, 200);
  t.equal(rl.json.resources[0].name, 'flunders');
  t.equal(rl.headers['x-wardle'], 'yes', 'the extension server\'s headers come back');

  // create, get, list as the admin; the client's own X-Remote-* headers never pass
  // what clients sent, without the availability checks that run meanwhile
  const fromClients = () => ext.seen.filter((x) => x.user !== 'system:kube-aggregator');
  const created = await s.request('POST', `/apis/${GV}/namespaces/${NS}/flunders`, { body: { apiVersion: GV, kind: 'Flunder', metadata: { name: 'one' } }, headers: { 'X-Remote-User': 'mallory', 'X-Remote-Group': 'system:masters' } });
  t.equal(created.status, 201);
  t.equal(created.json.metadata.annotations['created-by'], 'admin', 'the extension server saw the authenticated user');
  const seen = fromClients().at(-1)!;
  t.equal(seen.user, 'admin');
  t.same(seen.groups, ['system:masters', 'system:authenticated']);
  t.equal(seen.headers.authorization, undefined, 'the bearer token stays here');
  t.equal(seen.cn, 'front-proxy-client');
  t.equal((await s.get(`/apis/${GV}/namespaces/${NS}/flunders/one`)).json.metadata.name, 'one');
  t.equal((await s.get(`/apis/${GV}/namespaces/${NS}/flunders/nope`)).status, 404);
  t.same((await s.get(`/apis/${GV}/namespaces/${NS}/flunders`)).json.items.map((i: any) => i.metadata.name), ['one']);

  // impersonation is resolved here: the extension server sees the impersonated user, groups and extra
  const imp = await s.request('GET', `/apis/${GV}/namespaces/${NS}/flunders`, { headers: { 'Impersonate-User': 'jane', 'Impersonate-Group': 'system:masters', 'Impersonate-Extra-Scopes': 'read' } });
  t.equal(imp.status, 200);
  const last = fromClients().at(-1)!;
  t.equal(last.user, 'jane');
  t.same(last.groups, ['system:masters', 'system:authenticated']);
  t.same(last.extra, { scopes: ['read'] });
  t.notOk(Object.keys(last.headers).some((h) => h.startsWith('impersonate-')), 'no Impersonate-* header passes');

  // authentication and authorization happen here, before the proxy
  const before = fromClients().length;
  const denied = await s.request('GET', `/apis/${GV}/namespaces/${NS}/flunders`, { headers: { 'Impersonate-User': 'nobody' } });
  t.equal(denied.status, 403);
  t.equal(denied.json.message, `flunders.${GROUP} is forbidden: User "nobody" cannot list resource "flunders" in API group "${GROUP}" in the namespace "${NS}"`);
  t.equal((await s.request('GET', `/apis/${GV}/namespaces/${NS}/flunders`, { token: 'not-a-token' })).status, 401);
  t.equal(fromClients().length, before, 'refused requests never reached the extension server');

  // concurrent creates through the proxy: every one reaches the extension server once
  const many = await Promise.all(Array.from({ length: 20 }, (_, i) => s.request('POST', `/apis/${GV}/namespaces/${NS}/flunders`, { body: { apiVersion: GV, kind: 'Flunder', metadata: { name: i % 2 ? `c${i}` : 'same' } } })));
  t.equal(many.filter((r) => r.status === 201).length, 11, 'ten distinct names and one of the ten racing for "same"');
  t.equal(many.filter((r) => r.status === 409).length, 9);
  t.equal(many.find((r) => r.status === 409)!.json.reason, 'AlreadyExists', 'the extension server\'s Status comes back as it is');

  // a watch through the proxy: events as the extension server sends them
  const events: any[] = [];
  const w = s.stream(`/apis/${GV}/namespaces/${NS}/flunders?watch=1`, (e) => events.push(e));
  t.ok(await eventually(async () => ext.watching() === 1, 60_000), 'the watch reached the extension server');
  await s.request('POST', `/apis/${GV}/namespaces/${NS}/flunders`, { body: { apiVersion: GV, kind: 'Flunder', metadata: { name: 'watched' } } });
  t.ok(await eventually(async () => events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'watched'), 60_000), 'the watch event arrived');
  w.close();

  // the extension server goes away: 503 as the reference's proxy answers, and the condition follows
  await ext.close();
  const down = await waitCondition(s, { status: 'False', reason: 'FailedDiscoveryCheck' });
  t.ok(down.ok, `unavailable: ${JSON.stringify(down.c)}`);
  t.match(down.c.message, new RegExp(`^failing or missing response from https://127\\.0\\.0\\.1:${ext.port}/apis/${GV.replace('.', '\\.')}: `));
  const gone = await s.get(`/apis/${GV}/namespaces/${NS}/flunders`);
  t.equal(gone.status, 503);
  t.equal(gone.text, 'service unavailable\n');
  t.match(gone.headers['content-type'], /^text\/plain/);
  t.ok((await s.get('/apis')).json.groups.some((x: any) => x.name === GROUP), 'still listed while unavailable, as in the reference');

  const metrics = (await s.get('/metrics')).text;
  t.match(metrics, new RegExp(`aggregator_unavailable_apiservice\\{name="${NAME.replace(/\./g, '\\.')}"\\} 1`), 'unavailable gauge');
  t.match(metrics, new RegExp(`aggregator_unavailable_apiservice_total\\{name="${NAME.replace(/\./g, '\\.')}",reason="FailedDiscoveryCheck"\\} [1-9]`), 'unavailable counter by reason');
  t.match(metrics, /aggregator_unavailable_apiservice\{name="v1\.apps"\} 0/, 'local APIServices are available');

  // back on the same port: available again
  await ext.listen(ext.port);
  t.ok((await waitCondition(s, { status: 'True', reason: 'Passed' })).ok, 'available again');
  t.equal((await s.get(`/apis/${GV}/namespaces/${NS}/flunders`)).status, 200);
  t.match((await s.get('/metrics')).text, new RegExp(`aggregator_unavailable_apiservice\\{name="${NAME.replace(/\./g, '\\.')}"\\} 0`), 'gauge back to 0');

  // a Service that no longer has the APIService's port
  const patchSvc = (port: number) => s.request('PATCH', `/api/v1/namespaces/${NS}/services/api`, { body: { spec: { ports: [{ name: 'https', port, targetPort: ext.port }] } }, headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal((await patchSvc(8443)).status, 200);
  const noPort = await waitCondition(s, { status: 'False', reason: 'ServicePortError' });
  t.equal(noPort.c?.message, `service/api in "${NS}" is not listening on port 443`);
  t.equal((await patchSvc(443)).status, 200);
  t.ok((await waitCondition(s, { status: 'True', reason: 'Passed' })).ok, 'the port back: available');

  // the service's endpoints and the service itself
  t.equal((await s.request('PUT', `/api/v1/namespaces/${NS}/endpoints/api`, { body: { metadata: { name: 'api', namespace: NS }, subsets: [] } })).status, 200);
  const noEp = await waitCondition(s, { status: 'False', reason: 'MissingEndpoints' });
  t.ok(noEp.ok, JSON.stringify(noEp.c));
  t.equal(noEp.c.message, `endpoints for service/api in "${NS}" have no addresses with port name "https"`);
  t.equal((await s.request('DELETE', `/api/v1/namespaces/${NS}/endpoints/api`)).status, 200);
  const epGone = await waitCondition(s, { status: 'False', reason: 'EndpointsNotFound' });
  t.equal(epGone.c?.message, `cannot find endpoints for service/api in "${NS}"`);
  t.equal((await s.request('DELETE', `/api/v1/namespaces/${NS}/services/api`)).status, 200);
  const svcGone = await waitCondition(s, { status: 'False', reason: 'ServiceNotFound' });
  t.equal(svcGone.c?.message, `service/api in "${NS}" is not present`);

  // deleting the APIService stops the proxying
  t.equal((await s.request('DELETE', `${APISVC}/${NAME}`)).status, 200);
  t.ok(await eventually(async () => (await s.get(`/apis/${GV}/namespaces/${NS}/flunders`)).status === 404, 60_000), 'gone with its APIService');
  t.notOk((await s.get('/apis')).json.groups.some((x: any) => x.name === GROUP));
});

t.test('a watch through the proxy keeps backpressure: a client that stops reading holds the extension server back', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--enable-aggregator-routing=true'], env: { CAPI_APISERVICE_PROBE_MS: '300' } });
  const ext = await startExtensionServer(await trust(s));
  t.teardown(() => ext.close());
  await register(t, s, ext);
  t.ok((await waitCondition(s, { status: 'True', reason: 'Passed' })).ok);
  const TOTAL = 64 * 1024 * 1024;
  const line = `${JSON.stringify({ type: 'ADDED', object: { apiVersion: GV, kind: 'Flunder', metadata: { name: 'x'.repeat(200), namespace: NS }, spec: { pad: 'p'.repeat(8000) } } })}\n`;
  let written = 0;
  let finished = false;
  ext.onWatch = (res) => {
    const pump = () => {
      while (written < TOTAL) {
        written += line.length;
        if (!res.write(line)) return void res.once('drain', pump);
      }
      finished = true;
      res.end();
    };
    pump();
  };
  let received = 0;
  let paused = true;
  const done = new Promise<void>((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: s.port, path: `/apis/${GV}/namespaces/${NS}/flunders?watch=1`, headers: { authorization: `Bearer ${s.token}` }, ca: s.ca }, (res) => {
      res.pause();
      const go = () => { paused = false; res.resume(); };
      setTimeout(go, 2000);
      res.on('data', (c: Buffer) => { received += c.length; });
      res.on('end', () => resolve());
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  await sleep(1800);
  t.ok(paused, 'the client has not read yet');
  t.notOk(finished, 'the extension server could not write everything while the client did not read');
  t.ok(written < TOTAL / 2, `written while the client waited: ${(written / 1048576).toFixed(1)} MiB of ${TOTAL / 1048576}`);
  await done;
  t.ok(finished, 'all written once the client read');
  t.ok(received >= TOTAL, `the client received it all (${received} bytes)`);
});

t.test('a request body streams through the proxy with backpressure: an extension server that stops reading holds the client back', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--enable-aggregator-routing=true'], env: { CAPI_APISERVICE_PROBE_MS: '300' } });
  const ext = await startExtensionServer(await trust(s));
  t.teardown(() => ext.close());
  await register(t, s, ext);
  t.ok((await waitCondition(s, { status: 'True', reason: 'Passed' })).ok);
  const TOTAL = 64 * 1024 * 1024; // far past --max-request-bytes: a proxied body is the extension server's to limit
  let serverGot = 0;
  const hash = createHash('sha256');
  ext.intercept = (req, res) => {
    if (req.method !== 'PUT' || !req.url!.endsWith('/upload')) return false;
    req.pause();
    setTimeout(() => req.resume(), 2000);
    req.on('data', (c: Buffer) => { serverGot += c.length; hash.update(c); });
    req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify({ received: serverGot, user: req.headers['x-remote-user'] })); });
    return true;
  };
  const chunk = Buffer.alloc(64 * 1024, 7);
  const sent = createHash('sha256');
  let written = 0;
  const answer = new Promise<any>((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: s.port, method: 'PUT', path: `/apis/${GV}/namespaces/${NS}/flunders/one/upload`, headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/octet-stream', 'content-length': String(TOTAL) }, ca: s.ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    const pump = () => {
      while (written < TOTAL) {
        written += chunk.length;
        sent.update(chunk);
        const ok = req.write(chunk);
        if (written >= TOTAL) { req.end(); return; }
        if (!ok) return void req.once('drain', pump);
      }
    };
    pump();
  });
  await sleep(1800);
  t.equal(serverGot, 0, 'the extension server has not read yet');
  t.ok(written < TOTAL / 2, `the client could write only ${(written / 1048576).toFixed(1)} MiB of ${TOTAL / 1048576} meanwhile`);
  const r = await answer;
  t.equal(r.status, 200);
  t.same(r.json, { received: TOTAL, user: 'admin' });
  t.equal(hash.digest('hex'), sent.digest('hex'), 'every byte arrived, in order');
});

t.test('an extension server gone before the next check: 503 with the dial error, in plain text as the reference\'s proxy answers', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--enable-aggregator-routing=true'], env: { CAPI_APISERVICE_PROBE_MS: '600000' } });
  const ext = await startExtensionServer(await trust(s));
  await register(t, s, ext);
  t.ok((await waitCondition(s, { status: 'True', reason: 'Passed' })).ok);
  // the condition's own write is followed by one more check: let it finish before the server goes
  let n = -1;
  t.ok(await eventually(async () => { const seen = ext.seen.length; const still = seen === n; n = seen; await sleep(500); return still; }, 60_000), 'checks settled');
  await ext.close();
  const r = await s.get(`/apis/${GV}/namespaces/${NS}/flunders`);
  t.equal(r.status, 503);
  t.equal(r.text, `dial tcp 127.0.0.1:${ext.port}: connect: connection refused\n`);
  t.match(r.headers['content-type'], /^text\/plain/);
  t.equal((await condition(s)).status, 'True', 'the condition has not been checked again yet');
});

t.test('default routing: the service\'s cluster IP (ExternalName: its name), as the reference resolves', async (t) => {
  // Cluster IPs from a loopback range, so that the check of a cluster IP stays on this machine.
  const s = await withServer(t, { brand: 'kubernetes', args: ['--service-cluster-ip-range', '127.77.0.0/16'], env: { CAPI_APISERVICE_PROBE_MS: '300' } });
  const ext = await startExtensionServer({ ...(await trust(s)), serviceName: 'ext' });
  t.teardown(() => ext.close());
  await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
  // an ExternalName service naming the loopback host: requests go to localhost:<APIService port>
  t.equal((await s.request('POST', `/api/v1/namespaces/${NS}/services`, { body: { metadata: { name: 'ext' }, spec: { type: 'ExternalName', externalName: 'localhost' } } })).status, 201);
  t.equal((await s.request('POST', APISVC, { body: { metadata: { name: NAME }, spec: { group: GROUP, version: VERSION, groupPriorityMinimum: 1000, versionPriority: 15, insecureSkipTLSVerify: true, service: { namespace: NS, name: 'ext', port: ext.port } } } })).status, 201);
  const up = await waitCondition(s, { status: 'True', reason: 'Passed' });
  t.ok(up.ok, JSON.stringify(up.c));
  t.equal((await s.get(`/apis/${GV}/namespaces/${NS}/flunders`)).status, 200, 'proxied with insecureSkipTLSVerify');

  // a ClusterIP service: its cluster IP is where requests go (nothing listens there: no service proxy here)
  const svc = await s.request('POST', `/api/v1/namespaces/${NS}/services`, { body: { metadata: { name: 'api' }, spec: { ports: [{ name: 'https', port: 443, targetPort: ext.port }] } } });
  t.equal((await s.request('POST', `/api/v1/namespaces/${NS}/endpoints`, { body: { metadata: { name: 'api' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: ext.port }] }] } })).status, 201);
  const cur = (await s.get(`${APISVC}/${NAME}`)).json;
  t.equal((await s.request('PUT', `${APISVC}/${NAME}`, { body: { ...cur, spec: { ...cur.spec, service: { namespace: NS, name: 'api', port: 443 } } } })).status, 200);
  const failed = await waitCondition(s, { status: 'False', reason: 'FailedDiscoveryCheck' }, 20_000);
  t.ok(failed.ok, JSON.stringify(failed.c));
  t.match(failed.c?.message, `failing or missing response from https://${svc.json.spec.clusterIP}:443/apis/${GV}`, 'the cluster IP, not the endpoint');
});

t.test('kubectl uses the extension server\'s resources', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--enable-aggregator-routing=true'], env: { CAPI_APISERVICE_PROBE_MS: '300' } });
  const ext = await startExtensionServer(await trust(s));
  t.teardown(() => ext.close());
  await register(t, s, ext);
  t.ok((await waitCondition(s, { status: 'True', reason: 'Passed' })).ok);
  const doc = JSON.stringify({ apiVersion: GV, kind: 'Flunder', metadata: { name: 'from-kubectl', namespace: NS } });
  const c = await kubectl(s, ['create', '-f', '-'], { input: doc });
  t.equal(c.code, 0, c.stderr);
  t.match(c.stdout, /flunder\.wardle\.example\.io\/from-kubectl created/);
  const g = await kubectl(s, ['get', 'flunders', '-n', NS]);
  t.equal(g.code, 0, g.stderr);
  t.match(g.stdout, /from-kubectl/);
  const short = await kubectl(s, ['get', 'fl', '-n', NS, '-o', 'name']);
  t.equal(short.stdout.trim(), 'flunder.wardle.example.io/from-kubectl', 'the short name from the extension server\'s discovery');
  const raw = await kubectl(s, ['get', '--raw', `/apis/${GV}/namespaces/${NS}/flunders/from-kubectl`]);
  t.equal(raw.code, 0, raw.stderr);
  t.equal(JSON.parse(raw.stdout).metadata.annotations['created-by'], 'admin');
  // the extension server's OpenAPI v3 document is listed and served here: kubectl explain reads it
  const index = (await s.get('/openapi/v3')).json;
  const address = index.paths[`apis/${GV}`]?.serverRelativeURL;
  t.match(address, new RegExp(`^/openapi/v3/apis/${GV.replace('.', '\\.')}\\?hash=[0-9A-F]+$`), 'listed in /openapi/v3 with its hash');
  t.same((await s.get(address)).json, OPENAPI_V3, 'served as the extension server published it');
  t.ok(index.paths['apis/apps/v1'], 'beside the built-in group-versions');
  const explain = await kubectl(s, ['explain', 'flunders.spec']);
  t.equal(explain.code, 0, explain.stderr);
  t.match(explain.stdout, /FlunderSpec holds what the flunder should be/);
  t.match(explain.stdout, /reference\s+<string>/);
  const api = await kubectl(s, ['api-resources', '--api-group', GROUP]);
  t.match(api.stdout, /flunders\s+fl\s+wardle\.example\.io\/v1alpha1\s+true\s+Flunder/);
  await ext.close();
  t.ok((await waitCondition(s, { status: 'False', reason: 'FailedDiscoveryCheck' })).ok);
  const down = await kubectl(s, ['get', '--raw', `/apis/${GV}/namespaces/${NS}/flunders`]);
  t.not(down.code, 0);
  t.match(down.stderr, /ServiceUnavailable|service unavailable/);
});
