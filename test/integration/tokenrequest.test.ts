// TokenRequest (serviceaccounts/token), the issuer's discovery document and JWKS, and kubectl create token.
import t from 'tap';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

t.test('NodeRestriction: a node gets tokens only bound to a pod scheduled on itself', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'capi-nodetok-'));
  mkdirSync(path.join(dataDir, 'pki'), { recursive: true, mode: 0o700 });
  const admin = 'nodetok-admin-0123456789,admin,admin-uid,"system:masters"';
  writeFileSync(path.join(dataDir, 'pki', 'tokens.csv'), `${admin}\n`, { mode: 0o600 });
  const users = path.join(dataDir, 'users.csv');
  const NODE = 'nodetok-n1-0123456789';
  writeFileSync(users, `${admin}\n${NODE},system:node:n1,n1-uid,"system:nodes"\n`);
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const s = await withServer(t, { brand: 'kubernetes', dataDir, keepDataDir: true, args: ['--token-auth-file', users, '--enable-admission-plugins=NodeRestriction', '--authorization-mode=AlwaysAllow'] });
  const ns = '/api/v1/namespaces/default';
  t.equal((await s.request('POST', `${ns}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } } })).status, 201);
  const mkPod = async (name: string, nodeName: string) => {
    const r = await s.request('POST', `${ns}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName, serviceAccountName: 'robot', containers: [{ name: 'c', image: 'busybox' }] } } });
    t.equal(r.status, 201, r.text);
    return r.json.metadata.uid as string;
  };
  const mine = await mkPod('on-n1', 'n1');
  const theirs = await mkPod('on-n2', 'n2');
  const secret = await s.request('POST', `${ns}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sec' } } });
  const asNode = (boundObjectRef?: Record<string, string>) =>
    s.request('POST', `${ns}/serviceaccounts/robot/token`, { token: NODE, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: boundObjectRef ? { boundObjectRef } : {} } });
  const forbidden = async (boundObjectRef: Record<string, string> | undefined, message: string, what: string) => {
    const r = await asNode(boundObjectRef);
    t.equal(r.status, 403, `${what}: ${r.text.slice(0, 300)}`);
    t.same({ reason: r.json?.reason, message: r.json?.message, details: r.json?.details }, { reason: 'Forbidden', message: `serviceaccounts "robot" is forbidden: ${message}`, details: { name: 'robot', kind: 'serviceaccounts' } }, what);
  };
  await forbidden(undefined, 'node requested token not bound to a pod', 'no bound object');
  await forbidden({ kind: 'Secret', apiVersion: 'v1', name: 'sec', uid: secret.json.metadata.uid }, 'node requested token not bound to a pod', 'bound to a Secret');
  await forbidden({ kind: 'Pod', apiVersion: 'v1', name: 'on-n1' }, 'node requested token with a pod binding without a uid', 'a pod binding without a uid');
  await forbidden({ kind: 'Pod', apiVersion: 'v1', name: 'on-n2', uid: theirs }, 'node requested token bound to a pod scheduled on a different node', 'bound to a pod on another node');
  await forbidden({ kind: 'Pod', apiVersion: 'v1', name: 'on-n1', uid: theirs }, `the UID in the bound object reference (${theirs}) does not match the UID in record. The object might have been deleted and then recreated`, 'a stale uid');
  const gone = await asNode({ kind: 'Pod', apiVersion: 'v1', name: 'ghost', uid: theirs });
  t.same({ code: gone.status, reason: gone.json?.reason, message: gone.json?.message }, { code: 404, reason: 'NotFound', message: 'pod "ghost" not found' }, 'a pod that does not exist: the pod cache\'s NotFound');
  const ok = await asNode({ kind: 'Pod', apiVersion: 'v1', name: 'on-n1', uid: mine });
  t.equal(ok.status, 201, `bound to its own pod: ${ok.text.slice(0, 300)}`);
  t.equal((await s.request('POST', `${ns}/serviceaccounts/robot/token`, { body: { spec: {} } })).status, 201, 'the admin is not restricted');
  // Sub-resource creates go through admission like any create: a node evicts only its own pods.
  const evict = (pod: string) => s.request('POST', `${ns}/pods/${pod}/eviction`, { token: NODE, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod } } });
  const other = await evict('on-n2');
  t.same({ code: other.status, message: other.json?.message }, { code: 403, message: 'pods "on-n2" is forbidden: node n1 can only evict pods with spec.nodeName set to itself' }, 'evicting a pod of another node');
  t.equal((await evict('on-n1')).status, 201, 'evicting its own pod');
});
