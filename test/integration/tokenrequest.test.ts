// TokenRequest (serviceaccounts/token), the issuer's discovery document and JWKS, and kubectl create token.
import t from 'tap';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { withServer } from '../lib/server.js';
import { kubectl, noKubectl } from '../lib/kubectl.js';

t.test('serviceaccounts/token issues tokens the server accepts until their account or pod goes', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--service-account-lookup=true', '--authorization-mode=AlwaysAllow'] });
  t.equal((await s.request('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } } })).status, 201);
  const v1 = await s.get('/api/v1');
  const sub = v1.json.resources.find((r: any) => r.name === 'serviceaccounts/token');
  t.same({ kind: sub.kind, group: sub.group, verbs: sub.verbs }, { kind: 'TokenRequest', group: 'authentication.k8s.io', verbs: ['create'] }, 'discovered');

  const r = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts/robot/token', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } } });
  t.equal(r.status, 201, r.text);
  t.equal(r.json.kind, 'TokenRequest');
  const token = r.json.status.token;
  const claims = decodeJwt(token);
  t.equal(claims.sub, 'system:serviceaccount:default:robot');
  t.ok(Math.abs(Number(claims.exp) - Number(claims.iat) - 3600) <= 1, 'expiry as asked');
  t.equal(new Date(r.json.status.expirationTimestamp).getTime() / 1000, Number(claims.exp));
  t.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps', { token })).status, 200, 'the token authenticates');

  const short = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts/robot/token', { body: { spec: { expirationSeconds: 60 } } });
  t.equal(short.status, 422, 'under 10 minutes is invalid');
  t.equal((await s.request('POST', '/api/v1/namespaces/default/serviceaccounts/ghost/token', { body: { spec: {} } })).status, 404);

  // Bound to a pod: the token dies with the pod.
  const pod = await s.request('POST', '/api/v1/namespaces/default/pods', { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { serviceAccountName: 'robot', containers: [{ name: 'c', image: 'busybox' }] } } });
  t.equal(pod.status, 201, pod.text);
  const bound = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts/robot/token', { body: { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p' } } } });
  t.equal(bound.status, 201, bound.text);
  const boundToken = bound.json.status.token;
  t.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps', { token: boundToken })).status, 200);
  t.equal((await s.request('DELETE', '/api/v1/namespaces/default/pods/p')).status, 200);
  t.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps', { token: boundToken })).status, 401, 'pod deleted: token refused');

  // The issuer's documents, and the key id in the token.
  const oidc = await s.get('/.well-known/openid-configuration');
  t.equal(oidc.status, 200);
  t.match(oidc.json.jwks_uri, /\/openid\/v1\/jwks$/);
  t.equal(oidc.json.issuer, claims.iss);
  const keys = await s.get('/openid/v1/jwks');
  t.equal(keys.status, 200);
  t.ok(keys.json.keys.some((k: any) => k.kid === decodeProtectedHeader(token).kid), 'JWKS publishes the signing key');

  t.equal((await s.request('DELETE', '/api/v1/namespaces/default/serviceaccounts/robot')).status, 200);
  t.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps', { token })).status, 401, 'account deleted: token refused at once');
});

t.test('kubectl create token', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--service-account-lookup=true', '--authorization-mode=AlwaysAllow'] });
  t.equal((await kubectl(s, ['create', 'serviceaccount', 'bot'])).code, 0);
  const tok = await kubectl(s, ['create', 'token', 'bot', '--duration=20m']);
  t.equal(tok.code, 0, tok.stderr);
  const token = tok.stdout.trim();
  t.equal(decodeJwt(token).sub, 'system:serviceaccount:default:bot');
  t.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps', { token })).status, 200, 'a request with that token');
});
