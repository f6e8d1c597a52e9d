// The reference's exact answers (issue 10, "Exact answers"): each request below is answered with the
// reference server's status code, reason, message and details, over real HTTPS.
import t from 'tap';
import https from 'node:https';
import { withServer, type TestServer } from '../lib/server.js';

const CM = '/api/v1/namespaces/default/configmaps';
const cm = (name: string, data: Record<string, string> = { a: '1' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

/** A raw request with exactly the headers given (the harness always adds a few). */
function raw(s: TestServer, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const r = https.request({ host: '127.0.0.1', port: s.port, path, method, ca: s.ca, headers: { authorization: `Bearer ${s.token}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    r.on('error', reject);
    r.end(body);
  });
}

t.test('exact answers (kubernetes brand)', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const status = (code: number, reason: string, message: string, details?: unknown) => {
    const st: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason };
    if (details !== undefined) st.details = details;
    st.code = code;
    return st;
  };
  await s.request('POST', CM, { body: cm('base') });

  await t.test('server-side apply without fieldManager: 422 on PatchOptions', async (t) => {
    const r = await s.request('PATCH', `${CM}/base`, { raw: JSON.stringify(cm('base')), headers: { 'content-type': 'application/apply-patch+yaml' } });
    t.same(r.json, status(422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch', {
      group: 'meta.k8s.io', kind: 'PatchOptions', causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }],
    }));
  });

  await t.test('dryRun=bogus: 422 on the verb\'s options kind', async (t) => {
    const c = await s.request('POST', `${CM}?dryRun=bogus`, { body: cm('dr') });
    t.same(c.json, status(422, 'Invalid', 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"bogus"}: supported values: "All"', {
      group: 'meta.k8s.io', kind: 'CreateOptions', causes: [{ reason: 'FieldValueNotSupported', message: 'Unsupported value: []string{"bogus"}: supported values: "All"', field: 'dryRun' }],
    }));
    const u = await s.request('PUT', `${CM}/base?dryRun=bogus`, { body: cm('base') });
    t.equal(u.json.details.kind, 'UpdateOptions');
    const d = await s.request('DELETE', `${CM}/base?dryRun=bogus`);
    t.equal(d.status, 422);
    t.equal(d.json.details.kind, 'DeleteOptions');
    const pp = await s.request('DELETE', `${CM}/base`, { body: { propagationPolicy: 'Sometimes' } });
    t.equal(pp.json.message, 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sometimes": supported values: "Foreground", "Background", "Orphan", "nil"');
    t.equal((await s.get(`${CM}/dr`)).status, 404, 'nothing created');
  });

  await t.test('fieldValidation=Strict with an unknown field: 400 BadRequest', async (t) => {
    const r = await s.request('POST', `${CM}?fieldValidation=Strict`, { body: { ...cm('strict'), spec: { x: 1 } } });
    t.same(r.json, status(400, 'BadRequest', 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "spec"'));
  });

  await t.test('no User-Agent and no fieldManager: manager "unknown"', async (t) => {
    const r = await raw(s, 'POST', CM, { 'content-type': 'application/json' }, JSON.stringify(cm('noua')));
    t.equal(r.status, 201, r.text);
    t.same(JSON.parse(r.text).metadata.managedFields.map((e: { manager: string }) => e.manager), ['unknown']);
  });

  await t.test('managedFields: Apply entries first; an apply that changes nothing keeps its time', async (t) => {
    const apply = (body: unknown, manager: string) => s.request('PATCH', `${CM}/mf?fieldManager=${manager}`, { raw: JSON.stringify(body), headers: { 'content-type': 'application/apply-patch+yaml' } });
    await s.request('POST', `${CM}?fieldManager=creator`, { body: cm('mf', { c: '1' }) });
    const a1 = await apply(cm('mf', { a: '1' }), 'applier');
    t.same(a1.json.metadata.managedFields.map((e: { manager: string; operation: string }) => `${e.operation}/${e.manager}`), ['Apply/applier', 'Update/creator']);
    const time = a1.json.metadata.managedFields[0].time;
    await new Promise((r) => setTimeout(r, 1100));
    const a2 = await apply(cm('mf', { a: '1' }), 'applier');
    t.equal(a2.json.metadata.managedFields[0].time, time, 'no change: the entry keeps its time');
    t.equal(a2.json.metadata.resourceVersion, a1.json.metadata.resourceVersion, 'and nothing is written');
  });

  await t.test('delete preconditions name the Kind', async (t) => {
    const cur = (await s.get(`${CM}/base`)).json;
    const u = await s.request('DELETE', `${CM}/base`, { body: { preconditions: { uid: 'not-it' } } });
    t.same(u.json, status(409, 'Conflict', `Operation cannot be fulfilled on ConfigMap "base": the UID in the precondition (not-it) does not match the UID in record (${cur.metadata.uid}). The object might have been deleted and then recreated`, { name: 'base', kind: 'ConfigMap' }));
    const rv = await s.request('DELETE', `${CM}/base`, { body: { preconditions: { resourceVersion: '1' } } });
    t.equal(rv.json.message, `Operation cannot be fulfilled on ConfigMap "base": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${cur.metadata.resourceVersion}). The object might have been modified`);
    await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: {
      metadata: { name: 'pre' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
    } });
    const d = await s.request('DELETE', '/apis/apps/v1/namespaces/default/deployments/pre', { body: { preconditions: { uid: 'x' } } });
    t.match(d.json.message, /^Operation cannot be fulfilled on Deployment\.apps "pre": /);
    t.same(d.json.details, { name: 'pre', group: 'apps', kind: 'Deployment' });
  });

  await t.test('deleting a system namespace: forbidden with details', async (t) => {
    const r = await s.request('DELETE', '/api/v1/namespaces/kube-system');
    t.same(r.json, status(403, 'Forbidden', 'namespaces "kube-system" is forbidden: this namespace may not be deleted', { name: 'kube-system', kind: 'namespaces' }));
  });

  await t.test('404s: missing object, unknown resource or sub-resource, unknown path', async (t) => {
    const obj = await s.get(`${CM}/nope`);
    t.same(obj.json, status(404, 'NotFound', 'configmaps "nope" not found', { name: 'nope', kind: 'configmaps' }));
    for (const p of ['/api/v1/foos', '/api/v1/namespaces/default/pods/x/bogus', '/apis/apps/v1/namespaces/default/deployments/x/bogus']) {
      const r = await s.get(p);
      t.same(r.json, status(404, 'NotFound', 'the server could not find the requested resource', {}), `${p}: details present and empty`);
    }
    for (const p of ['/foo', '/apis/nope.example.com/v1/things', '/api/v2/pods']) {
      const r = await raw(s, 'GET', p, {});
      t.equal(r.status, 404, p);
      t.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
      t.equal(r.text, '404 page not found\n');
    }
  });

  await t.test('server-side dry-run create of an existing object: 409 AlreadyExists', async (t) => {
    const r = await s.request('POST', '/api/v1/namespaces?dryRun=All', { body: { metadata: { name: 'default' } } });
    t.same(r.json, status(409, 'AlreadyExists', 'namespaces "default" already exists', { name: 'default', kind: 'namespaces' }));
  });

  await t.test('apply with managedFields of the wrong type: 400', async (t) => {
    const body = { ...cm('base'), metadata: { name: 'base', managedFields: 'garbage' } };
    const r = await s.request('PATCH', `${CM}/base?fieldManager=x`, { raw: JSON.stringify(body), headers: { 'content-type': 'application/apply-patch+yaml' } });
    t.equal(r.status, 400, r.text);
    t.equal(r.json.reason, 'BadRequest');
    const list = await s.request('PATCH', `${CM}/base?fieldManager=x`, { raw: JSON.stringify({ ...body, metadata: { name: 'base', managedFields: [] } }), headers: { 'content-type': 'application/apply-patch+yaml' } });
    t.same(list.json, status(400, 'BadRequest', 'metadata.managedFields must be nil'));
  });

  await t.test('JSON null for an optional field means unset', async (t) => {
    await s.request('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { metadata: { name: 'tok' } } });
    const r = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts/tok/token', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: null, expirationSeconds: null } } });
    t.equal(r.status, 201, r.text);
    t.equal(r.json.spec.expirationSeconds, 3600, 'the default duration');
    const c = await s.request('POST', CM, { body: { ...cm('nulls'), binaryData: null, immutable: null } });
    t.equal(c.status, 201, c.text);
    t.notOk('binaryData' in c.json || 'immutable' in c.json, 'null fields are not stored');
  });

  await t.test('query parameters: integers as strconv.ParseInt, booleans as the reference\'s conversion', async (t) => {
    for (const [q, v] of [['limit', '0x10'], ['timeoutSeconds', 'abc'], ['limit', '']]) {
      const r = await s.get(`${CM}?${q}=${v}`);
      t.same(r.json, status(400, 'BadRequest', `strconv.ParseInt: parsing "${v}": invalid syntax`), `${q}=${v}`);
    }
    const big = await s.get(`${CM}?limit=99999999999999999999`);
    t.equal(big.json.message, 'strconv.ParseInt: parsing "99999999999999999999": value out of range');
    const grace = await s.request('DELETE', `${CM}/base?gracePeriodSeconds=soon`);
    t.equal(grace.json.message, 'strconv.ParseInt: parsing "soon": invalid syntax');
    // Only "0" and "false" (any case) are false: watch=True and watch=maybe both watch.
    for (const v of ['True', 'maybe', 't']) {
      const w = s.stream(`${CM}?watch=${v}&timeoutSeconds=1`, () => {});
      t.equal(await w.done, 200, `watch=${v} opens a watch`);
    }
    const list = await s.get(`${CM}?watch=FALSE`);
    t.equal(list.json.kind, 'ConfigMapList');
    // force=True is force (the Python client sends it capitalized).
    const own = (m: string, v: string, force = '') => s.request('PATCH', `${CM}/forced?fieldManager=${m}${force}`, { raw: JSON.stringify(cm('forced', { a: v })), headers: { 'content-type': 'application/apply-patch+yaml' } });
    t.equal((await own('one', '1')).status, 201);
    t.equal((await own('two', '2')).status, 409, 'a conflict without force');
    t.equal((await own('two', '2', '&force=True')).status, 200, 'force=True forces');
  });

  await t.test('numbers a Go client cannot decode into the field\'s type: 400', async (t) => {
    const deploy = (replicas: string) => `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"num"},"spec":{"replicas":${replicas},"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`;
    for (const n of ['1E+308', '2147483648', '1.5', '-2147483649']) {
      const r = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { raw: deploy(n), headers: { 'content-type': 'application/json' } });
      t.same(r.json, status(400, 'BadRequest', `Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number ${n} into Go struct field DeploymentSpec.spec.replicas of type int32`), `replicas: ${n}`);
    }
    t.equal((await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { raw: deploy('2147483647'), headers: { 'content-type': 'application/json' } })).status, 201, 'the largest int32 is fine');
    for (const n of ['1e300', '1e400']) {
      const r = await s.request('POST', CM, { raw: `{"metadata":{"name":"gen","generation":${n}}}`, headers: { 'content-type': 'application/json' } });
      t.equal(r.json.message, `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number ${n} into Go struct field ObjectMeta.metadata.generation of type int64`, `generation: ${n}`);
    }
    const port = await s.request('POST', '/api/v1/namespaces/default/pods', { raw: '{"metadata":{"name":"np"},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":99999999999}]}]}}', headers: { 'content-type': 'application/json' } });
    t.equal(port.json.message, 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number 99999999999 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32');
    const patched = await s.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/num', { raw: '{"spec":{"replicas":2147483648}}', headers: { 'content-type': 'application/merge-patch+json' } });
    // a patched object that does not decode is the reference's 422 on the field "patch"
    t.equal(patched.status, 422, 'a patch too');
    t.match(patched.json.message, /is invalid: patch: Invalid value: .*: json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32$/);
    t.equal((await s.get('/apis/apps/v1/namespaces/default/deployments/num')).json.spec.replicas, 2147483647, 'nothing stored');
  });

  await t.test('Table column types and formats are the reference\'s', async (t) => {
    const cols = async (path: string) => (await s.get(path, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' })).json.columnDefinitions
      .map((c: { name: string; type: string; format: string; priority: number }) => `${c.name}:${c.type}${c.format ? `:${c.format}` : ''}${c.priority ? ':wide' : ''}`);
    t.same(await cols(CM), ['Name:string:name', 'Data:string', 'Age:string']);
    t.same(await cols('/api/v1/namespaces/default/secrets'), ['Name:string:name', 'Type:string', 'Data:string', 'Age:string']);
    t.same(await cols('/api/v1/namespaces/default/serviceaccounts'), ['Name:string:name', 'Secrets:string', 'Age:string']);
    t.same(await cols('/apis/apps/v1/namespaces/default/deployments'), ['Name:string:name', 'Ready:string', 'Up-to-date:string', 'Available:string', 'Age:string', 'Containers:string:wide', 'Images:string:wide', 'Selector:string:wide']);
    t.same(await cols('/apis/apps/v1/namespaces/default/replicasets'), ['Name:string:name', 'Desired:integer', 'Current:integer', 'Ready:integer', 'Age:string', 'Containers:string:wide', 'Images:string:wide', 'Selector:string:wide']);
    t.same(await cols('/apis/apps/v1/namespaces/default/controllerrevisions'), ['Name:string:name', 'Controller:string', 'Revision:string', 'Age:string']);
    t.same(await cols('/apis/storage.k8s.io/v1/volumeattachments'), ['Name:string:name', 'Attacher:string:name', 'PV:string', 'Node:string', 'Attached:boolean', 'Age:string']);
    t.same(await cols('/apis/rbac.authorization.k8s.io/v1/clusterroles'), ['Name:string:name', 'Created At:date']);
    t.same(await cols('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings'), ['Name:string:name', 'Role:string', 'Age:string', 'Users:string:wide', 'Groups:string:wide', 'ServiceAccounts:string:wide']);
    t.same(await cols('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations'), ['Name:string:name', 'Webhooks:integer', 'Age:string']);
    t.same(await cols('/api/v1/namespaces/default/limitranges'), ['Name:string:name', 'Created At:date']);
    const crb = (await s.get('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/cluster-admin', { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' })).json.rows[0].cells;
    t.same([crb[1], crb[4]], ['ClusterRole/cluster-admin', 'system:masters']);
  });

  await t.test('a Table of a kind that has none (access reviews): 406', async (t) => {
    const body = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } };
    const r = await s.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { body, headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    t.equal(r.status, 406, r.text);
    t.equal(r.json.reason, 'NotAcceptable');
    t.match(r.json.message, /^only the following media types are accepted: /);
    const fallback = await s.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { body, headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io, application/json' } });
    t.equal(fallback.status, 201, 'with JSON as a fallback: JSON');
    t.equal(fallback.json.kind, 'SelfSubjectAccessReview');
  });
});
