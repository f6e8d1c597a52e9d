// Authentication end to end: the real server with real TLS. Identity is read back from GET /whoami,
// which the echo-user authorizer fixture denies with "user=<name> groups=<g1,g2> ..." in the reason.
//
// One server runs every authenticator at once (client certificates on --mtls-port, bootstrap tokens,
// service account JWTs, OIDC against the test's own HTTPS issuer, a token webhook with mutual TLS,
// and a front proxy), which also shows they do not get in each other's way.
import t from 'tap';
import https from 'node:https';
import path from 'node:path';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { readFileSync, writeFileSync } from 'node:fs';
import { SignJWT } from 'jose';
import { repoRoot, sleep, withServer, type TestServer } from '../lib/server.js';
import { generateCA, signCert, type CertAndKey } from '../../kernel/ops/pki.js';
import { issueToken } from '../../plugins/authenticators/service-account/index.js';
import { brands } from '../../kernel/contracts/brand.js';

interface Who { status: number; user?: string; groups?: string[]; uid?: string; extra?: Record<string, string[]>; body: string }

/** GET /whoami on a port, with any of a bearer token, a client certificate and extra headers. */
function whoami(port: number, ca: Buffer, o: { token?: string; cert?: CertAndKey; headers?: Record<string, string | string[]> } = {}): Promise<Who> {
  const headers: Record<string, string | string[]> = { accept: 'application/json', ...(o.headers ?? {}) };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: '/whoami', ca, cert: o.cert?.certPem, key: o.cert?.keyPem, headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => {
        const who: Who = { status: res.statusCode!, body };
        const m = / user=(\S*) groups=(\S*) uid=(\S*) extra=(.*)$/.exec(JSON.parse(body).message ?? '');
        if (res.statusCode === 403 && m) Object.assign(who, { user: m[1], groups: m[2] ? m[2].split(',') : [], uid: m[3], extra: JSON.parse(m[4]) });
        resolve(who);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** An HTTPS server on 127.0.0.1 with a certificate from its own CA. */
async function httpsServer(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void, tlsExtra: https.ServerOptions = {}) {
  const ca = await generateCA({ CN: 'test-service-ca' });
  const serving = await signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: '127.0.0.1' }, ips: ['127.0.0.1'], usages: ['serverAuth'], days: 1 });
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem, ...tlsExtra }, (req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => handler(req, res, body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, ca, url: `https://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const json = (res: ServerResponse, code: number, body: unknown) => {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

const dir = t.testdir({});
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

// ---------------------------------------------------------------- fixtures outside the server

// client certificates (--client-ca-file) and the front proxy's CA (--requestheader-client-ca-file)
const clientCA = await generateCA({ CN: 'users-ca' });
const proxyCA = await generateCA({ CN: 'front-proxy-ca' });
const strangerCA = await generateCA({ CN: 'stranger-ca' });
const carol = await signCert({ caCertPem: clientCA.certPem, caKeyPem: clientCA.keyPem, subject: { CN: 'carol', O: ['team-a', 'team-b'] }, usages: ['clientAuth'], days: 1 });
const proxy = await signCert({ caCertPem: proxyCA.certPem, caKeyPem: proxyCA.keyPem, subject: { CN: 'front-proxy' }, usages: ['clientAuth'], days: 1 });
const sneakyProxy = await signCert({ caCertPem: proxyCA.certPem, caKeyPem: proxyCA.keyPem, subject: { CN: 'not-the-proxy' }, usages: ['clientAuth'], days: 1 });
const stranger = await signCert({ caCertPem: strangerCA.certPem, caKeyPem: strangerCA.keyPem, subject: { CN: 'mallory', O: ['system:masters'] }, usages: ['clientAuth'], days: 1 });

// service account signing key: the server gets only the public half
const saKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
const saPubFile = file('sa.pub', saKey.publicKey.export({ type: 'spki', format: 'pem' }) as string);

// OIDC issuer with discovery and a JWKS
const oidcKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
const oidcHits: string[] = [];
let oidcIssuer = '';
const oidc = await httpsServer((req, res) => {
  oidcHits.push(req.url!);
  if (req.url === '/.well-known/openid-configuration') return json(res, 200, { issuer: oidcIssuer, jwks_uri: `${oidcIssuer}/jwks`, id_token_signing_alg_values_supported: ['RS256'] });
  if (req.url === '/jwks') return json(res, 200, { keys: [{ ...oidcKey.publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'RS256' }] });
  json(res, 404, {});
});
oidcIssuer = oidc.url;
t.teardown(() => oidc.server.close());
const oidcCAFile = file('oidc-ca.crt', oidc.ca.certPem);
const idToken = (claims: Record<string, unknown>, key: KeyObject = oidcKey.privateKey) =>
  new SignJWT({ iss: oidcIssuer, aud: 'cluster-client', sub: 'u-123', ...claims }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuedAt().setExpirationTime('10m').sign(key);

// token webhook: mutual TLS, the apiserver's client certificate comes from the kubeconfig
const hookClientCA = await generateCA({ CN: 'webhook-clients-ca' });
const hookClient = await signCert({ caCertPem: hookClientCA.certPem, caKeyPem: hookClientCA.keyPem, subject: { CN: 'apiserver-webhook-client' }, usages: ['clientAuth'], days: 1 });
const hookCalls: { token: string; apiVersion: string; kind: string; clientCN: string }[] = [];
const hook = await httpsServer((req, res, body) => {
  const review = JSON.parse(body);
  const peer = (req.socket as TLSSocket).getPeerCertificate();
  hookCalls.push({ token: review.spec?.token, apiVersion: review.apiVersion, kind: review.kind, clientCN: String(peer.subject?.CN) });
  if (review.spec?.token === 'hook-alice') {
    return json(res, 200, { apiVersion: review.apiVersion, kind: 'TokenReview', status: { authenticated: true, user: { username: 'alice@hook', uid: 'hook-uid-1', groups: ['hook-users'], extra: { scopes: ['read'] } } } });
  }
  if (review.spec?.token === 'hook-broken') return json(res, 500, { message: 'backend down' });
  json(res, 200, { apiVersion: review.apiVersion, kind: 'TokenReview', status: { authenticated: false, error: 'unknown token' } });
}, { ca: hookClientCA.certPem, requestCert: true, rejectUnauthorized: true });
t.teardown(() => hook.server.close());
file('hook-ca.crt', hook.ca.certPem);
const hookConfig = file('webhook.kubeconfig', [
  'apiVersion: v1',
  'kind: Config',
  'clusters:',
  '  - name: authn',
  '    cluster:',
  `      server: ${hook.url}/authenticate`,
  '      certificate-authority: hook-ca.crt',
  'users:',
  '  - name: apiserver',
  '    user:',
  `      client-certificate-data: ${Buffer.from(hookClient.certPem).toString('base64')}`,
  `      client-key-data: ${Buffer.from(hookClient.keyPem).toString('base64')}`,
  'contexts:',
  '  - name: webhook',
  '    context: {cluster: authn, user: apiserver}',
  'current-context: webhook',
  '',
].join('\n'));
const callsFor = (token: string) => hookCalls.filter((c) => c.token === token).length;

// the echo authorizer first, then allow everything else
const fixture = path.join(repoRoot, 'test/fixtures/echo-user-authorizer/index.js');
const config = file('config.yaml', `authorization:\n  - plugin: ${fixture}\n  - plugin: always-allow\n`);

const s: TestServer = await withServer(t, {
  args: [
    '--config', config, '--mtls-port', '0',
    '--client-ca-file', file('client-ca.crt', clientCA.certPem),
    '--enable-bootstrap-token-auth',
    '--service-account-key-file', saPubFile,
    '--oidc-issuer-url', oidcIssuer, '--oidc-client-id', 'cluster-client', '--oidc-ca-file', oidcCAFile,
    '--oidc-groups-claim', 'groups', '--oidc-groups-prefix', 'oidc:', '--oidc-required-claim', 'tenant=blue',
    '--authentication-token-webhook-config-file', hookConfig, '--authentication-token-webhook-cache-ttl', '2s',
    '--requestheader-client-ca-file', file('proxy-ca.crt', proxyCA.certPem), '--requestheader-allowed-names', 'front-proxy',
    '--requestheader-username-headers', 'X-Remote-User', '--requestheader-group-headers', 'X-Remote-Group', '--requestheader-extra-headers-prefix', 'X-Remote-Extra-',
  ],
});
/** Client certificates work on the secure port (node:tls front before uWS) and on the separate --mtls-port listener. */
const LISTENERS: [string, () => number][] = [['the secure port', () => s.port], ['the --mtls-port listener', () => s.mtlsPort]];
const ANON = { status: 403, user: 'system:anonymous', groups: ['system:unauthenticated'] };

t.test('the echo authorizer reports the caller', async (t) => {
  t.match(await whoami(s.port, s.ca, { token: s.token }), { status: 403, user: 'admin', groups: ['system:masters', 'system:authenticated'] });
  t.match(await whoami(s.port, s.ca), ANON);
  t.equal((await s.get('/api/v1/namespaces/default')).status, 200, 'other requests are allowed');
});

for (const [where, port] of LISTENERS) t.test(`x509 client certificates from --client-ca-file on ${where}`, async (t) => {
  t.match(await whoami(port(), s.ca, { cert: carol }), { status: 403, user: 'carol', groups: ['team-a', 'team-b', 'system:authenticated'] });
  t.match(await whoami(port(), s.ca, { cert: stranger }), ANON, 'a certificate no configured CA signed never reaches authenticators');
  // The listener trusts the union of client CAs; x509 re-verifies against --client-ca-file only and
  // refuses the others, and a refused credential is never served as anonymous.
  t.equal((await whoami(port(), s.ca, { cert: proxy })).status, 401, 'the front proxy\'s certificate is not a user certificate');
  const firstStart = await signCert({ caCertPem: readFileSync(path.join(s.dataDir, 'pki/ca.crt'), 'utf8'), caKeyPem: readFileSync(path.join(s.dataDir, 'pki/ca.key'), 'utf8'), subject: { CN: 'dave' }, usages: ['clientAuth'], days: 1 });
  t.equal((await whoami(port(), s.ca, { cert: firstStart })).status, 401, 'the first-start CA is not --client-ca-file: x509 re-verifies');
  t.match(await whoami(port(), s.ca, { cert: firstStart, token: s.token }), { user: 'admin' }, 'a refused certificate does not stop a valid token');
  t.match(await whoami(port(), s.ca, { cert: carol, token: s.token }), { user: 'carol' }, 'x509 comes before tokens');
});

t.test('bootstrap tokens backed by secrets created through the API', async (t) => {
  const b64 = (v: string) => Buffer.from(v).toString('base64');
  const secret = (id: string, data: Record<string, string>) => ({
    apiVersion: 'v1', kind: 'Secret', type: 'bootstrap.cluster.io/token', metadata: { name: `bootstrap-token-${id}`, namespace: 'cluster-system' },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  });
  const post = (body: object) => s.request('POST', '/api/v1/namespaces/cluster-system/secrets', { body });
  const created = await post(secret('abcdef', {
    'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true',
    'auth-extra-groups': 'system:bootstrappers:nodes,system:masters', expiration: new Date(Date.now() + 3_600_000).toISOString(),
  }));
  t.equal(created.status, 201, created.text);
  t.match(await whoami(s.port, s.ca, { token: 'abcdef.0123456789abcdef' }), {
    status: 403, user: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:nodes', 'system:authenticated'],
  }, 'authenticated; system:masters is not a valid extra group');
  t.equal((await whoami(s.port, s.ca, { token: 'abcdef.0123456789abcdee' })).status, 401, 'wrong secret');
  t.equal((await whoami(s.port, s.ca, { token: 'zzzzzz.0123456789abcdef' })).status, 401, 'no such token');
  t.equal((await post(secret('expird', { 'token-id': 'expird', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', expiration: '2020-01-01T00:00:00Z' }))).status, 201);
  t.equal((await whoami(s.port, s.ca, { token: 'expird.0123456789abcdef' })).status, 401, 'expired');
  t.equal((await post(secret('nouse1', { 'token-id': 'nouse1', 'token-secret': '0123456789abcdef' }))).status, 201);
  t.equal((await whoami(s.port, s.ca, { token: 'nouse1.0123456789abcdef' })).status, 401, 'not usable for authentication');
  const del = await s.request('DELETE', '/api/v1/namespaces/cluster-system/secrets/bootstrap-token-abcdef');
  t.equal(del.status, 200);
  t.equal((await whoami(s.port, s.ca, { token: 'abcdef.0123456789abcdef' })).status, 401, 'deleting the secret revokes the token');
});

t.test('service account tokens: signed here, checked against the live service account', async (t) => {
  const created = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } } });
  t.equal(created.status, 201, created.text);
  const uid: string = created.json.metadata.uid;
  const issuer = 'https://cluster.default.svc.cluster.local';
  const token = await issueToken({ key: saKey.privateKey, issuer, audiences: [issuer], expirationSeconds: 600, namespace: 'default', serviceAccount: { name: 'robot', uid }, brand: brands.cluster });
  t.match(await whoami(s.port, s.ca, { token }), {
    status: 403, user: 'system:serviceaccount:default:robot', uid, groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
  });
  t.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps', { token })).status, 200, 'the token works for API requests');
  const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const forged = await issueToken({ key: otherKey, issuer, audiences: [issuer], expirationSeconds: 600, namespace: 'default', serviceAccount: { name: 'robot', uid }, brand: brands.cluster });
  t.equal((await whoami(s.port, s.ca, { token: forged })).status, 401, 'signed by another key');
  const wrongAud = await issueToken({ key: saKey.privateKey, issuer, audiences: ['elsewhere'], expirationSeconds: 600, namespace: 'default', serviceAccount: { name: 'robot', uid }, brand: brands.cluster });
  t.equal((await whoami(s.port, s.ca, { token: wrongAud })).status, 401, 'wrong audience');

  t.equal((await s.request('DELETE', '/api/v1/namespaces/default/serviceaccounts/robot')).status, 200);
  t.equal((await whoami(s.port, s.ca, { token })).status, 401, 'service account deleted: 401 at once');
  t.equal((await s.request('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } } })).status, 201);
  t.equal((await whoami(s.port, s.ca, { token })).status, 401, 'a new service account of the same name does not revive old tokens');
});

t.test('OIDC ID tokens from the test\'s own HTTPS issuer', async (t) => {
  const good = await idToken({ groups: ['admins', 'devs'], tenant: 'blue' });
  t.match(await whoami(s.port, s.ca, { token: good }), { status: 403, user: `${oidcIssuer}#u-123`, groups: ['oidc:admins', 'oidc:devs', 'system:authenticated'] });
  for (let i = 0; i < 3; i++) t.match(await whoami(s.port, s.ca, { token: await idToken({ tenant: 'blue', sub: `u-${i}` }) }), { user: `${oidcIssuer}#u-${i}` });
  t.equal(oidcHits.filter((u) => u === '/jwks').length, 1, 'keys fetched once and cached');
  t.equal(oidcHits.filter((u) => u.includes('openid-configuration')).length, 1, 'discovery fetched once');
  t.equal((await whoami(s.port, s.ca, { token: await idToken({ tenant: 'blue', aud: 'someone-else' }) })).status, 401, 'wrong audience');
  t.equal((await whoami(s.port, s.ca, { token: await idToken({ tenant: 'red' }) })).status, 401, 'required claim tenant=blue');
  t.equal((await whoami(s.port, s.ca, { token: await idToken({ tenant: 'blue' }, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey) })).status, 401, 'bad signature');
  t.equal((await whoami(s.port, s.ca, { token: await idToken({ tenant: 'blue', iss: 'https://127.0.0.2:1' }) })).status, 401, 'another issuer');
});

t.test('token webhook over mutual TLS, answers cached for the TTL', async (t) => {
  t.match(await whoami(s.port, s.ca, { token: 'hook-alice' }), { status: 403, user: 'alice@hook', uid: 'hook-uid-1', groups: ['hook-users', 'system:authenticated'], extra: { scopes: ['read'] } });
  t.equal(callsFor('hook-alice'), 1);
  const call = hookCalls.find((c) => c.token === 'hook-alice')!;
  t.same({ apiVersion: call.apiVersion, kind: call.kind, clientCN: call.clientCN }, { apiVersion: 'authentication.cluster.io/v1beta1', kind: 'TokenReview', clientCN: 'apiserver-webhook-client' });
  t.match(await whoami(s.port, s.ca, { token: 'hook-alice' }), { user: 'alice@hook' });
  t.equal(callsFor('hook-alice'), 1, 'second request answered from the cache');
  t.equal((await whoami(s.port, s.ca, { token: 'hook-nobody' })).status, 401, 'not authenticated by the webhook');
  t.equal((await whoami(s.port, s.ca, { token: 'hook-nobody' })).status, 401);
  t.equal(callsFor('hook-nobody'), 1, 'negative answers are cached too');
  t.equal((await whoami(s.port, s.ca, { token: 'hook-broken' })).status, 401, 'a failing webhook rejects');
  t.equal((await whoami(s.port, s.ca, { token: 'hook-broken' })).status, 401);
  t.equal(callsFor('hook-broken'), 2, 'failures are not cached');
  await sleep(2300);
  t.match(await whoami(s.port, s.ca, { token: 'hook-alice' }), { user: 'alice@hook' });
  t.equal(callsFor('hook-alice'), 2, 'asked again after the TTL');
});

for (const [where, port] of LISTENERS) t.test(`front proxy on ${where}: headers count only with the proxy's certificate`, async (t) => {
  const headers = { 'X-Remote-User': 'bob', 'X-Remote-Group': ['g1', 'g2'], 'X-Remote-Extra-Scopes': 'all' };
  t.match(await whoami(port(), s.ca, { cert: proxy, headers }), { status: 403, user: 'bob', groups: ['g1', 'g2', 'system:authenticated'], extra: { scopes: ['all'] } });
  // header names with '.' and '%' (uWS refuses them; the secure port's front hands them over out of band)
  t.same((await whoami(port(), s.ca, { cert: proxy, headers: { 'X-Remote-User': 'bob', 'X-Remote-Extra-Acme.com%2Fproject': ['p1', 'p2'] } })).extra, { 'acme.com/project': ['p1', 'p2'] }, 'extra keys lower-cased and percent-decoded');
  t.match(await whoami(port(), s.ca, { headers }), ANON, 'forged headers from a plain client: anonymous');
  t.equal((await whoami(port(), s.ca, { cert: sneakyProxy, headers })).status, 401, 'a proxy CA certificate with a name not allowed: headers ignored, x509 refuses it');
  t.match(await whoami(port(), s.ca, { cert: stranger, headers }), ANON, 'a certificate from an unknown CA');
  t.match(await whoami(port(), s.ca, { cert: carol, headers }), { user: 'carol', groups: ['team-a', 'team-b', 'system:authenticated'] }, 'a user certificate cannot claim another user through headers');
  t.equal((await whoami(port(), s.ca, { cert: proxy })).status, 401, 'the proxy without a user header: only x509 looks, and refuses');
  t.equal((await whoami(port(), s.ca, { headers, token: 'not-a-valid-token' })).status, 401, 'forged headers plus a bad token: 401');
});

t.test('kubernetes brand: kube-system bootstrap secrets, the kubernetes.io claim and the default serving key', async (t) => {
  const k = await withServer(t, { brand: 'kubernetes', args: ['--config', config, '--enable-bootstrap-token-auth', '--service-account-lookup=true'] });
  const created = await k.request('POST', '/api/v1/namespaces/kube-system/secrets', {
    body: {
      apiVersion: 'v1', kind: 'Secret', type: 'bootstrap.kubernetes.io/token', metadata: { name: 'bootstrap-token-k8sabc', namespace: 'kube-system' },
      data: { 'token-id': 'azhzYWJj', 'token-secret': Buffer.from('0123456789abcdef').toString('base64'), 'usage-bootstrap-authentication': Buffer.from('true').toString('base64') },
    },
  });
  t.equal(created.status, 201, created.text);
  t.match(await whoami(k.port, k.ca, { token: 'k8sabc.0123456789abcdef' }), { user: 'system:bootstrap:k8sabc', groups: ['system:bootstrappers', 'system:authenticated'] });

  const sa = await k.request('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'builder' } } });
  t.equal(sa.status, 201);
  // no --service-account-key-file: the server's own serving key (ECDSA, first start) verifies
  const servingKey = readFileSync(path.join(k.dataDir, 'pki/apiserver.key'), 'utf8');
  const issuer = 'https://kubernetes.default.svc.cluster.local';
  const token = await issueToken({ key: servingKey, issuer, audiences: [issuer], expirationSeconds: 600, namespace: 'default', serviceAccount: { name: 'builder', uid: sa.json.metadata.uid }, brand: brands.kubernetes });
  t.equal(JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()).alg, 'ES256');
  t.match(await whoami(k.port, k.ca, { token }), { user: 'system:serviceaccount:default:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'] });
});
