// The identity controllers: serviceaccount (a `default` account in every namespace),
// serviceaccount-token (token Secrets filled and cleaned up), tokencleaner (expired bootstrap
// tokens deleted) and bootstrapsigner (cluster-info signed per signing token, verified with jose as
// a joining node does).
import t from 'tap';
import { compactVerify } from 'jose';
import { withServer, type TestServer } from '../lib/server.js';
import { untilDefined as waitFor } from '../lib/poll.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64').toString();

const gone = (s: TestServer, p: string, ms = 5000) => waitFor(async () => ((await s.get(p)).status === 404 ? true : undefined), ms);

const s = await withServer(t, { brand: 'kubernetes' });
const SECRETS = (ns: string) => `/api/v1/namespaces/${ns}/secrets`;

t.test('serviceaccount: a default account in every namespace, recreated when deleted', async (t) => {
  for (const ns of ['default', 'kube-system', 'kube-public']) t.equal((await waitFor(async () => ((await s.get(`/api/v1/namespaces/${ns}/serviceaccounts/default`)).status === 200 ? true : undefined)))!, true, `${ns}/default`);
  t.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'team-x' } } })).status, 201);
  t.ok(await waitFor(async () => ((await s.get('/api/v1/namespaces/team-x/serviceaccounts/default')).status === 200 ? true : undefined)), 'a new namespace gets one');
  const old = (await s.get('/api/v1/namespaces/team-x/serviceaccounts/default')).json.metadata.uid;
  t.equal((await s.request('DELETE', '/api/v1/namespaces/team-x/serviceaccounts/default')).status, 200);
  const again = await waitFor(async () => {
    const r = await s.get('/api/v1/namespaces/team-x/serviceaccounts/default');
    return r.status === 200 && r.json.metadata.uid !== old ? r.json : undefined;
  });
  t.ok(again, 'recreated after deletion');
});

t.test('serviceaccount-token: token Secrets are filled, authenticate, and go with their account', async (t) => {
  t.equal((await s.request('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { metadata: { name: 'robot' } } })).status, 201);
  const secret = { metadata: { name: 'robot-token', annotations: { 'kubernetes.io/service-account.name': 'robot' } }, type: 'kubernetes.io/service-account-token' };
  t.equal((await s.request('POST', SECRETS('default'), { body: secret })).status, 201);
  const filled = await waitFor(async () => {
    const r = (await s.get(`${SECRETS('default')}/robot-token`)).json;
    return r.data?.token ? r : undefined;
  });
  t.ok(filled, 'token, ca.crt and namespace filled in');
  t.equal(unb64(filled.data.namespace), 'default');
  t.equal(unb64(filled.data['ca.crt']), s.ca.toString());
  t.ok(filled.metadata.annotations['kubernetes.io/service-account.uid'], 'the account uid is recorded');
  const who = await s.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { token: unb64(filled.data.token), body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  t.equal(who.status, 201, who.text);
  t.equal(who.json.status.userInfo.username, 'system:serviceaccount:default:robot');

  // a token Secret for an account that does not exist is removed
  t.equal((await s.request('POST', SECRETS('default'), { body: { ...secret, metadata: { name: 'ghost-token', annotations: { 'kubernetes.io/service-account.name': 'ghost' } } } })).status, 201);
  t.ok(await gone(s, `${SECRETS('default')}/ghost-token`), 'a Secret for a missing account is deleted');

  t.equal((await s.request('DELETE', '/api/v1/namespaces/default/serviceaccounts/robot')).status, 200);
  t.ok(await gone(s, `${SECRETS('default')}/robot-token`), 'deleting the account deletes its token Secrets');
  const after = await s.request('GET', '/api/v1/namespaces', { token: unb64(filled.data.token) });
  t.equal(after.status, 401, 'the token no longer authenticates');
});

const bootstrapSecret = (id: string, secret: string, data: Record<string, string>) => ({
  metadata: { name: `bootstrap-token-${id}` }, type: 'bootstrap.kubernetes.io/token',
  data: Object.fromEntries(Object.entries({ 'token-id': id, 'token-secret': secret, ...data }).map(([k, v]) => [k, b64(v)])),
});

t.test('tokencleaner: expired bootstrap tokens are deleted', async (t) => {
  const soon = new Date(Date.now() + 1500).toISOString();
  t.equal((await s.request('POST', SECRETS('kube-system'), { body: bootstrapSecret('aaaaaa', '0123456789abcdef', { expiration: soon }) })).status, 201);
  t.equal((await s.request('POST', SECRETS('kube-system'), { body: bootstrapSecret('bbbbbb', '0123456789abcdef', {}) })).status, 201);
  t.equal((await s.request('POST', SECRETS('kube-system'), { body: bootstrapSecret('cccccc', '0123456789abcdef', { expiration: new Date(Date.now() - 1000).toISOString() }) })).status, 201);
  t.ok(await gone(s, `${SECRETS('kube-system')}/bootstrap-token-cccccc`, 3000), 'already expired: deleted at once');
  t.ok(await gone(s, `${SECRETS('kube-system')}/bootstrap-token-aaaaaa`, 5000), 'deleted when it expires');
  t.equal((await s.get(`${SECRETS('kube-system')}/bootstrap-token-bbbbbb`)).status, 200, 'no expiration: kept');
});

t.test('bootstrapsigner: cluster-info signed per signing token, as a joining node verifies it', async (t) => {
  const kubeconfig = `apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority-data: ${b64(s.ca.toString())}\n    server: https://127.0.0.1:${s.port}\n  name: ""\n`;
  const CM = '/api/v1/namespaces/kube-public/configmaps';
  t.equal((await s.request('POST', CM, { body: { metadata: { name: 'cluster-info' }, data: { kubeconfig } } })).status, 201);
  t.equal((await s.request('POST', SECRETS('kube-system'), { body: bootstrapSecret('abcdef', '0123456789abcdef', { 'usage-bootstrap-signing': 'true', 'usage-bootstrap-authentication': 'true' }) })).status, 201);
  t.equal((await s.request('POST', SECRETS('kube-system'), { body: bootstrapSecret('zzzzzz', '0123456789abcdef', { 'usage-bootstrap-signing': 'false' }) })).status, 201);
  const signed = await waitFor(async () => {
    const d = (await s.get(`${CM}/cluster-info`)).json.data;
    return d['jws-kubeconfig-abcdef'] ? d : undefined;
  });
  t.ok(signed, 'a signature for the signing token');
  t.notOk(signed['jws-kubeconfig-zzzzzz'], 'none for a token without the signing usage');
  t.notOk(signed['jws-kubeconfig-bbbbbb'], 'none for a token without usages');

  // what a joining node does: put the payload back into the detached JWS and verify with its token
  const verify = async (jws: string, token: string) => {
    const [h, , sig] = jws.split('.');
    const full = `${h}.${Buffer.from(signed.kubeconfig).toString('base64url')}.${sig}`;
    const r = await compactVerify(full, new TextEncoder().encode(token), { algorithms: ['HS256'] });
    return { kid: r.protectedHeader.kid, payload: new TextDecoder().decode(r.payload) };
  };
  const ok = await verify(signed['jws-kubeconfig-abcdef'], 'abcdef.0123456789abcdef');
  t.equal(ok.kid, 'abcdef');
  t.equal(ok.payload, kubeconfig, 'the signature covers exactly the kubeconfig');
  await t.rejects(verify(signed['jws-kubeconfig-abcdef'], 'abcdef.ffffffffffffffff'), 'another secret does not verify');

  // losing the signing usage removes the signature
  const sec = (await s.get(`${SECRETS('kube-system')}/bootstrap-token-abcdef`)).json;
  t.equal((await s.request('PUT', `${SECRETS('kube-system')}/bootstrap-token-abcdef`, { body: { ...sec, data: { ...sec.data, 'usage-bootstrap-signing': b64('false') } } })).status, 200);
  t.ok(await waitFor(async () => (!(await s.get(`${CM}/cluster-info`)).json.data['jws-kubeconfig-abcdef'] ? true : undefined)), 'removed when the token may no longer sign');

  // a signing token that expires: signed, then unsigned (and deleted by the cleaner)
  t.equal((await s.request('POST', SECRETS('kube-system'), { body: bootstrapSecret('eeeeee', '0123456789abcdef', { 'usage-bootstrap-signing': 'true', expiration: new Date(Date.now() + 2000).toISOString() }) })).status, 201);
  t.ok(await waitFor(async () => ((await s.get(`${CM}/cluster-info`)).json.data['jws-kubeconfig-eeeeee'] ? true : undefined)), 'signed while valid');
  t.ok(await waitFor(async () => (!(await s.get(`${CM}/cluster-info`)).json.data['jws-kubeconfig-eeeeee'] ? true : undefined), 6000), 'removed once expired');

  // a changed kubeconfig is signed again
  t.equal((await s.request('POST', SECRETS('kube-system'), { body: bootstrapSecret('gggggg', '0123456789abcdef', { 'usage-bootstrap-signing': 'true' }) })).status, 201);
  const changed = kubeconfig.replace('name: ""', 'name: "x"');
  // a merge patch: the controller writes the same object meanwhile
  t.equal((await s.request('PATCH', `${CM}/cluster-info`, { headers: { 'content-type': 'application/merge-patch+json' }, raw: JSON.stringify({ data: { kubeconfig: changed } }) })).status, 200);
  const resigned = await waitFor(async () => {
    const d = (await s.get(`${CM}/cluster-info`)).json.data;
    if (!d['jws-kubeconfig-gggggg']) return undefined;
    const [h, , sig] = d['jws-kubeconfig-gggggg'].split('.');
    try {
      await compactVerify(`${h}.${Buffer.from(d.kubeconfig).toString('base64url')}.${sig}`, new TextEncoder().encode('gggggg.0123456789abcdef'));
      return d.kubeconfig === changed ? true : undefined;
    } catch { return undefined; }
  });
  t.ok(resigned, 'the new content is signed');
});
