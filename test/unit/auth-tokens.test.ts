// Token authenticators without a server: bootstrap tokens, service account JWTs, OIDC claim rules
// against a local key set, and the certificate checks the x509 and front-proxy plugins share.
import t from 'tap';
import { X509Certificate, createPublicKey, generateKeyPairSync, webcrypto, type KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SignJWT, base64url } from 'jose';
import { brands } from '../../kernel/contracts/brand.js';
import type { AuthRequest, KObject, PluginHost, TypeDef } from '../../kernel/contracts/index.js';
import { generateCA, signCert, x509 } from '../../kernel/ops/pki.js';
import bootstrapPlugin, { checkSecret, extraGroups, parseToken } from '../../plugins/authenticators/bootstrap-token/index.js';
import saPlugin, { discoveryDocument, issueToken, jwks, keyId, verifyToken, type VerifierOptions } from '../../plugins/authenticators/service-account/index.js';
import { OidcAuthenticator, resolveOptions, type OidcOptions } from '../../plugins/authenticators/oidc/index.js';
import { verifyChain } from '../../plugins/authenticators/x509/index.js';
import { userFromHeaders } from '../../plugins/authenticators/request-header/index.js';

const cluster = brands.cluster;
const kube = brands.kubernetes;
const b64 = (s: string) => Buffer.from(s).toString('base64');

function bearer(token: string | undefined, extra: Record<string, string[]> = {}): AuthRequest {
  const headers: Record<string, string[]> = { ...extra };
  if (token !== undefined) headers.authorization = [`Bearer ${token}`];
  return {
    method: 'GET', path: '/', remoteAddress: '127.0.0.1',
    header: (n) => headers[n.toLowerCase()]?.[0],
    headerValues: (n) => headers[n.toLowerCase()] ?? [],
    headerNames: () => Object.keys(headers),
  };
}

/** A plugin host whose objects are a map "resource/namespace/name" → object. */
function fakeHost(brand = cluster, objects = new Map<string, KObject>(), dataDir = '/nonexistent'): PluginHost {
  const log = { info() {}, v() {}, warn() {}, error() {} };
  // only what authenticators use; the cast keeps this fake independent of host additions
  const host: Partial<PluginHost> = {
    brand, dataDir, log, featureGates: {},
    type: (group, resource) => ({ group, version: 'v1', kind: resource, resource, singular: resource, namespaced: true } as TypeDef),
    allTypes: () => [],
    objects: {
      get: async (type, ns, name) => objects.get(`${type.resource}/${ns}/${name}`),
      list: async () => [], create: async (_t, o) => o, update: async (_t, o) => o, delete: async () => undefined, watch: () => () => {},
    },
    // the service-account plugin registers its token endpoint and issuer documents
    serve: () => {}, servePath: () => {},
  };
  return host as PluginHost;
}

// ---------------------------------------------------------------- bootstrap tokens

t.test('bootstrap tokens: shape, secret checks, expiry and extra groups', async (t) => {
  t.same(parseToken('abcdef.0123456789abcdef'), { id: 'abcdef', secret: '0123456789abcdef' });
  for (const bad of ['ABCDEF.0123456789abcdef', 'abcde.0123456789abcdef', 'abcdef.0123456789abcde', 'abcdef0123456789abcdef', 'abcdef.0123456789abcdefg', ' abcdef.0123456789abcdef']) {
    t.equal(parseToken(bad), undefined, `not a bootstrap token: "${bad}"`);
  }
  const tok = { id: 'abcdef', secret: '0123456789abcdef' };
  const secret = (data: Record<string, string>, type = 'bootstrap.cluster.io/token', meta: Record<string, unknown> = {}): KObject => ({
    apiVersion: 'v1', kind: 'Secret', type, metadata: { name: 'bootstrap-token-abcdef', namespace: 'cluster-system', ...meta },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  });
  const base = { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' };
  t.same(checkSecret(tok, secret(base), cluster), { user: { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'] } });
  const withGroups = checkSecret(tok, secret({ ...base, 'auth-extra-groups': 'system:bootstrappers:nodes, system:masters,system:bootstrappers:,system:bootstrappers:Bad,system:bootstrappers:a:b-c,system:bootstrappers:nodes' }), cluster);
  t.same(withGroups, { user: { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:nodes', 'system:bootstrappers:a:b-c'] } }, 'invalid extra groups are dropped');
  t.same(extraGroups(undefined), []);

  const rejected = (r: unknown, re: RegExp, msg: string) => t.match(r, { rejected: re }, msg);
  rejected(checkSecret({ ...tok, secret: '0123456789abcdeX' }, secret(base), cluster), /token-secret does not match/, 'wrong secret');
  rejected(checkSecret(tok, secret({ ...base, 'token-secret': 'short' }), cluster), /token-secret does not match/, 'stored secret of another length');
  rejected(checkSecret(tok, undefined, cluster), /not found/, 'no secret');
  rejected(checkSecret(tok, secret(base, 'Opaque'), cluster), /secret type/, 'wrong type');
  rejected(checkSecret(tok, secret(base, 'bootstrap.kubernetes.io/token'), cluster), /secret type/, 'another brand\'s type');
  rejected(checkSecret(tok, secret({ ...base, 'token-id': 'zzzzzz' }), cluster), /token-id/, 'token-id mismatch');
  rejected(checkSecret(tok, secret({ ...base, 'usage-bootstrap-authentication': 'false' }), cluster), /usage-bootstrap-authentication/, 'not for authentication');
  rejected(checkSecret(tok, secret({ 'token-id': 'abcdef', 'token-secret': '0123456789abcdef' }), cluster), /usage-bootstrap-authentication/, 'usage absent');
  rejected(checkSecret(tok, secret(base, undefined, { deletionTimestamp: '2020-01-01T00:00:00Z' }), cluster), /being deleted/, 'being deleted');
  const past = new Date(Date.now() - 60_000).toISOString();
  const future = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  rejected(checkSecret(tok, secret({ ...base, expiration: past }), cluster), /expired/, 'expired');
  t.ok('user' in checkSecret(tok, secret({ ...base, expiration: future }), cluster), 'expiration in the future');
  t.ok('user' in checkSecret(tok, secret({ ...base, expiration: '2099-01-01T00:00:00+02:00' }), cluster), 'offset time zone');
  rejected(checkSecret(tok, secret({ ...base, expiration: 'tomorrow' }), cluster), /unreadable expiration/, 'garbage expiration');
  rejected(checkSecret(tok, secret({ ...base, expiration: '2099-01-01' }), cluster), /unreadable expiration/, 'a date is not RFC 3339');

  // through the plugin, for the kubernetes brand (kube-system, bootstrap.kubernetes.io/token)
  const objects = new Map<string, KObject>();
  objects.set('secrets/kube-system/bootstrap-token-abcdef', { ...secret(base, 'bootstrap.kubernetes.io/token'), metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system' } });
  const a = await bootstrapPlugin.create({}, fakeHost(kube, objects));
  t.same(await a.authenticate(bearer('abcdef.0123456789abcdef')), { user: { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'] } });
  t.match(await a.authenticate(bearer('abcdef.0123456789abcdee')), { rejected: /token-secret/ });
  t.match(await a.authenticate(bearer('zzzzzz.0123456789abcdef')), { rejected: /not found/ });
  t.equal(await a.authenticate(bearer('some-other-token')), null, 'other bearer tokens are not ours');
  t.equal(await a.authenticate(bearer(undefined)), null, 'no header');
});

// ---------------------------------------------------------------- service account tokens

t.test('service account tokens', async (t) => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const issuer = 'https://cluster.default.svc.cluster.local';
  const objects = new Map<string, KObject>();
  objects.set('serviceaccounts/team/robot', { metadata: { name: 'robot', namespace: 'team', uid: 'sa-uid' } });
  objects.set('pods/team/web', { metadata: { name: 'web', namespace: 'team', uid: 'pod-uid' } });
  objects.set('secrets/team/tok', { metadata: { name: 'tok', namespace: 'team', uid: 'secret-uid' } });
  const keysOf = (...ks: KeyObject[]) => ks.map((k) => ({ key: k.type === 'public' ? k : createPublicKey(k), kid: keyId(k), algorithms: k.asymmetricKeyType === 'rsa' ? ['RS256', 'RS384', 'RS512'] : ['ES256'] }));
  const opts = (over: Partial<VerifierOptions> = {}): VerifierOptions => ({
    keys: keysOf(rsa.publicKey, ec.publicKey), issuers: [issuer], audiences: [issuer], lookup: true, brand: cluster,
    get: async (resource, ns, name) => objects.get(`${resource}/${ns}/${name}`), ...over,
  });
  const issue = (over: Partial<Parameters<typeof issueToken>[0]> = {}) => issueToken({
    key: rsa.privateKey, issuer, audiences: [issuer], expirationSeconds: 3600, namespace: 'team', serviceAccount: { name: 'robot', uid: 'sa-uid' }, brand: cluster, ...over,
  });

  const good = await issue();
  const r = await verifyToken(good, opts());
  t.same(r, { user: { username: 'system:serviceaccount:team:robot', uid: 'sa-uid', groups: ['system:serviceaccounts', 'system:serviceaccounts:team'] } });
  const [h, p] = good.split('.').map((x, i) => (i < 2 ? JSON.parse(Buffer.from(x, 'base64url').toString()) : x));
  t.equal(h.alg, 'RS256');
  t.equal(h.kid, keyId(rsa.publicKey), 'kid is the public key\'s id');
  t.equal(p.sub, 'system:serviceaccount:team:robot');
  t.same(p['cluster.io'], { namespace: 'team', serviceaccount: { name: 'robot', uid: 'sa-uid' } });
  t.ok(p.exp - p.iat === 3600 && p.jti, 'exp, iat, jti');

  t.ok('user' in (await verifyToken(await issue({ key: ec.privateKey }), opts()))!, 'ECDSA P-256 keys sign ES256');
  t.equal(await verifyToken('not-a-jwt', opts()), null, 'not JWT-shaped: someone else\'s token');
  t.equal(await verifyToken('abcdef.0123456789abcdef', opts()), null, 'a bootstrap token is not ours');

  // algorithm attacks
  const [eh, ep] = good.split('.');
  const header = (o: object) => base64url.encode(JSON.stringify(o));
  t.match(await verifyToken(`${header({ alg: 'none', typ: 'JWT' })}.${ep}.`, opts()), { rejected: /algorithm "none"/ }, 'alg none');
  const pubPem = rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string;
  const confused = await new SignJWT(p).setProtectedHeader({ alg: 'HS256', kid: h.kid }).sign(new TextEncoder().encode(pubPem));
  t.match(await verifyToken(confused, opts()), { rejected: /algorithm "HS256"/ }, 'HS256 with the public key as the HMAC secret');
  const ecOnly = opts({ keys: keysOf(ec.publicKey) });
  t.match(await verifyToken(good, ecOnly), { rejected: /algorithm "RS256"/ }, 'RS256 against ECDSA keys only');
  const psToken = await new SignJWT(p).setProtectedHeader({ alg: 'PS256' }).sign(rsa.privateKey);
  t.match(await verifyToken(psToken, opts()), { rejected: /algorithm "PS256"/ });

  // tampering and foreign keys
  const forged = Buffer.from(JSON.stringify({ ...p, sub: 'system:serviceaccount:team:admin' })).toString('base64url');
  t.match(await verifyToken(`${eh}.${forged}.${good.split('.')[2]}`, opts()), { rejected: /signature/ }, 'tampered claims');
  t.match(await verifyToken(good.slice(0, -4) + (good.endsWith('AAAA') ? 'BBBB' : 'AAAA'), opts()), { rejected: /signature/ }, 'tampered signature');
  t.match(await verifyToken(await issue({ key: other.privateKey }), opts()), { rejected: /signature/ }, 'signed by an unknown key');
  t.match(await verifyToken(`${eh}.bm90IGpzb24.${good.split('.')[2]}`, opts()), { rejected: /malformed/ }, 'payload not JSON');

  // claims
  t.match(await verifyToken(await issue({ issuer: 'https://elsewhere' }), opts()), { rejected: /iss/ }, 'wrong issuer');
  t.match(await verifyToken(await issue({ audiences: ['someone-else'] }), opts()), { rejected: /aud/ }, 'wrong audience');
  t.ok('user' in (await verifyToken(await issue({ audiences: ['x', 'api'] }), opts({ audiences: ['api'] })))!, 'one matching audience is enough');
  t.match(await verifyToken(await issue({ now: Date.now() - 7200_000, expirationSeconds: 600 }), opts()), { rejected: /exp/ }, 'expired');
  t.match(await verifyToken(await issue({ now: Date.now() + 3600_000 }), opts()), { rejected: /nbf|iat/ }, 'not yet valid');
  t.ok('user' in (await verifyToken(await issue({ issuer: 'https://second' }), opts({ issuers: [issuer, 'https://second'], audiences: [issuer] })))!, 'any configured issuer');
  const wrongSub = await new SignJWT({ ...p, sub: 'system:serviceaccount:team:other' }).setProtectedHeader({ alg: 'RS256' }).sign(rsa.privateKey);
  t.match(await verifyToken(wrongSub, opts()), { rejected: /subject/ }, 'sub must match the claim');
  const kubeClaim = await issue({ brand: kube });
  t.match(await verifyToken(kubeClaim, opts()), { rejected: /missing "cluster.io" claim/ }, 'claim named by the brand');
  t.ok('user' in (await verifyToken(kubeClaim, opts({ brand: kube })))!, 'kubernetes brand reads the kubernetes.io claim');

  // lookups
  t.match(await verifyToken(await issue({ serviceAccount: { name: 'ghost', uid: 'x' } }), opts()), { rejected: /ghost has been deleted/ }, 'missing service account');
  t.match(await verifyToken(await issue({ serviceAccount: { name: 'robot', uid: 'old-uid' } }), opts()), { rejected: /uid does not match/ }, 'recreated service account');
  t.ok('user' in (await verifyToken(await issue({ serviceAccount: { name: 'ghost', uid: 'x' } }), opts({ lookup: false })))!, 'no lookup: existence not checked');
  const podBound = await issue({ boundObject: { kind: 'Pod', name: 'web', uid: 'pod-uid' } });
  t.same(await verifyToken(podBound, opts()), {
    user: {
      username: 'system:serviceaccount:team:robot', uid: 'sa-uid', groups: ['system:serviceaccounts', 'system:serviceaccounts:team'],
      extra: { 'authentication.cluster.io/pod-name': ['web'], 'authentication.cluster.io/pod-uid': ['pod-uid'] },
    },
  }, 'pod-bound token carries pod extras');
  t.match(await verifyToken(await issue({ boundObject: { kind: 'Pod', name: 'web', uid: 'other' } }), opts()), { rejected: /pod team\/web uid/ });
  t.match(await verifyToken(await issue({ boundObject: { kind: 'Pod', name: 'gone', uid: 'x' } }), opts()), { rejected: /pod team\/gone has been deleted/ });
  t.ok('user' in (await verifyToken(await issue({ boundObject: { kind: 'Secret', name: 'tok', uid: 'secret-uid' } }), opts()))!);
  t.match(await verifyToken(await issue({ boundObject: { kind: 'Secret', name: 'tok', uid: 'zzz' } }), opts()), { rejected: /secret team\/tok uid/ });

  // key set documents
  const set = jwks([rsa.privateKey, ec.publicKey]);
  t.equal(set.keys.length, 2);
  t.match(set.keys[0], { kty: 'RSA', use: 'sig', alg: 'RS256', kid: keyId(rsa.publicKey) });
  t.notOk('d' in set.keys[0], 'no private parts');
  t.match(set.keys[1], { kty: 'EC', crv: 'P-256', alg: 'ES256' });
  t.same(discoveryDocument(issuer, `${issuer}/openid/v1/jwks`), {
    issuer, jwks_uri: `${issuer}/openid/v1/jwks`, response_types_supported: ['id_token'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'],
  });

  // the plugin: key files (a private key file works), defaults for issuer and audiences
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sa-keys-'));
  writeFileSync(path.join(dir, 'sa.key'), rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string);
  writeFileSync(path.join(dir, 'ec.pub'), ec.publicKey.export({ type: 'spki', format: 'pem' }) as string);
  const a = await saPlugin.create({ keyFiles: [path.join(dir, 'sa.key'), path.join(dir, 'ec.pub')] }, fakeHost(cluster, objects));
  t.match(await a.authenticate(bearer(good)), { user: { username: 'system:serviceaccount:team:robot' } });
  t.match(await a.authenticate(bearer(await issue({ key: ec.privateKey }))), { user: { username: 'system:serviceaccount:team:robot' } });
  t.equal(await a.authenticate(bearer('opaque-token')), null);
  t.throws(() => saPlugin.create({ keyFiles: [path.join(dir, 'missing')] }, fakeHost()), /service account key file/);
  writeFileSync(path.join(dir, 'ed.key'), generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
  t.throws(() => saPlugin.create({ keyFiles: [path.join(dir, 'ed.key')] }, fakeHost()), /unsupported service account key type/);
});

// ---------------------------------------------------------------- OIDC

t.test('oidc: options and prefixes', async (t) => {
  const iss = 'https://issuer.example';
  t.equal(resolveOptions({ issuerURL: iss, clientID: 'c' }).usernamePrefix, `${iss}#`, 'default claim sub: issuer prefix');
  t.equal(resolveOptions({ issuerURL: iss, clientID: 'c', usernameClaim: 'name' }).usernamePrefix, `${iss}#`);
  t.equal(resolveOptions({ issuerURL: iss, clientID: 'c', usernameClaim: 'email' }).usernamePrefix, '', 'email: no prefix');
  t.equal(resolveOptions({ issuerURL: iss, clientID: 'c', usernamePrefix: '-' }).usernamePrefix, '', '"-" disables');
  t.equal(resolveOptions({ issuerURL: iss, clientID: 'c', usernameClaim: 'email', usernamePrefix: 'oidc:' }).usernamePrefix, 'oidc:');
  t.throws(() => resolveOptions({ issuerURL: 'http://issuer.example', clientID: 'c' }), /https/);
  t.throws(() => resolveOptions({ issuerURL: iss }), /clientID is required/);
  t.throws(() => resolveOptions({ issuerURL: iss, clientID: 'c', signingAlgs: ['HS256'] }), /signingAlgs/);
});

t.test('oidc: tokens against a local key set', async (t) => {
  const iss = 'https://issuer.example/realm';
  const k1 = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const k2 = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = (k: KeyObject, kid: string) => ({ ...k.export({ format: 'jwk' }), kid, use: 'sig', alg: 'RS256' });
  let published = [jwk(k1.publicKey, 'k1')];
  const fetched: string[] = [];
  const fetchJSON = async (url: string) => {
    fetched.push(url);
    if (url === `${iss}/.well-known/openid-configuration`) return { issuer: iss, jwks_uri: `${iss}/keys` };
    if (url === `${iss}/keys`) return { keys: published };
    throw new Error(`unexpected ${url}`);
  };
  let now = Date.now();
  const make = (o: Record<string, unknown> = {}) => new OidcAuthenticator(resolveOptions({ issuerURL: iss, clientID: 'kube', ...o }) as OidcOptions, fetchJSON, { now: () => now });
  const sign = (claims: Record<string, unknown>, o: { key?: KeyObject; kid?: string; alg?: string; exp?: number } = {}) =>
    new SignJWT({ iss, aud: 'kube', sub: 'alice-id', ...claims })
      .setProtectedHeader({ alg: o.alg ?? 'RS256', kid: o.kid ?? 'k1' })
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(o.exp ?? Math.floor(now / 1000) + 600)
      .sign(o.key ?? k1.privateKey);

  const a = make({ groupsClaim: 'groups', groupsPrefix: 'oidc:', requiredClaims: { tenant: 'blue' } });
  t.same(await a.verify(await sign({ groups: ['dev', 'ops'], tenant: 'blue' })), { user: { username: `${iss}#alice-id`, groups: ['oidc:dev', 'oidc:ops'] } });
  t.same(fetched, [`${iss}/.well-known/openid-configuration`, `${iss}/keys`], 'discovery, then the key set');
  for (let i = 0; i < 5; i++) await a.verify(await sign({ tenant: 'blue' }));
  t.equal(fetched.length, 2, 'cached keys: no fetch per request');
  t.same(await a.verify(await sign({ groups: 'single', tenant: 'blue' })), { user: { username: `${iss}#alice-id`, groups: ['oidc:single'] } }, 'a string groups claim');
  t.match(await a.verify(await sign({ groups: [1, 2], tenant: 'blue' })), { rejected: /groups/ });
  t.match(await a.verify(await sign({})), { rejected: /required claim "tenant" not present/ });
  t.match(await a.verify(await sign({ tenant: 'red' })), { rejected: /required claim "tenant" does not have/ });
  t.match(await a.verify(await sign({ tenant: 'blue', aud: 'other-client' })), { rejected: /aud/ }, 'audience must contain the client id');
  t.same(await a.verify(await sign({ tenant: 'blue', aud: ['other', 'kube'] })), { user: { username: `${iss}#alice-id`, groups: [] } }, 'audience list containing the client id');
  t.match(await a.verify(await sign({ tenant: 'blue' }, { exp: Math.floor(now / 1000) - 10 })), { rejected: /exp/ }, 'expired');
  t.match(await a.verify(await sign({ tenant: 'blue', nbf: Math.floor(now / 1000) + 600 })), { rejected: /nbf/ }, 'not yet valid');
  t.match(await a.verify(await sign({ tenant: 'blue' }, { key: k2.privateKey })), { rejected: /signature/ }, 'signed by another key under a known kid');
  t.equal(await a.verify(await sign({ iss: 'https://other-issuer' })), null, 'another issuer: not ours');
  t.equal(await a.verify('opaque'), null, 'not a JWT');
  const hs = await new SignJWT({ iss, aud: 'kube', sub: 'x', exp: Math.floor(now / 1000) + 60 }).setProtectedHeader({ alg: 'HS256', kid: 'k1' }).sign(new TextEncoder().encode('secret'));
  t.match(await a.verify(hs), { rejected: /algorithm "HS256"/ });
  const noneTok = `${base64url.encode(JSON.stringify({ alg: 'none' }))}.${base64url.encode(JSON.stringify({ iss, aud: 'kube', sub: 'x' }))}.`;
  t.match(await a.verify(noneTok), { rejected: /algorithm "none"/ });

  // email claim: no prefix, email_verified must not be false
  const e = make({ usernameClaim: 'email' });
  t.same(await e.verify(await sign({ email: 'a@example.com', email_verified: true })), { user: { username: 'a@example.com', groups: [] } });
  t.same(await e.verify(await sign({ email: 'a@example.com' })), { user: { username: 'a@example.com', groups: [] } }, 'email_verified absent (as the reference allows)');
  t.match(await e.verify(await sign({ email: 'a@example.com', email_verified: false })), { rejected: /email not verified/ });
  t.match(await e.verify(await sign({ email: 'a@example.com', email_verified: 'true' })), { rejected: /email not verified/ });
  t.match(await e.verify(await sign({})), { rejected: /claim "email" not present/ });
  t.same(await make({ usernamePrefix: '-' }).verify(await sign({})), { user: { username: 'alice-id', groups: [] } });

  // key rotation: an unknown kid refetches, at most every 10 seconds
  fetched.length = 0;
  const r = make();
  t.ok('user' in (await r.verify(await sign({})))!);
  t.equal(r.fetches, 1);
  published = [jwk(k1.publicKey, 'k1'), jwk(k2.publicKey, 'k2')];
  now += 2_000;
  t.match(await r.verify(await sign({}, { key: k2.privateKey, kid: 'k2' })), { rejected: /no key with id "k2"/ }, 'too soon to refetch');
  t.equal(r.fetches, 1);
  now += 9_000;
  t.same(await r.verify(await sign({}, { key: k2.privateKey, kid: 'k2' })), { user: { username: `${iss}#alice-id`, groups: [] } }, 'refetched after 10 s');
  t.equal(r.fetches, 2);
  t.equal(fetched.filter((u) => u.endsWith('openid-configuration')).length, 1, 'discovery is not repeated');

  // an issuer whose discovery names another issuer is not trusted
  const liar = new OidcAuthenticator(resolveOptions({ issuerURL: iss, clientID: 'kube' }), async () => ({ issuer: 'https://evil', jwks_uri: 'https://evil/keys' }));
  t.match(await liar.verify(await sign({})), { rejected: /discovery document names issuer/ });
});

// ---------------------------------------------------------------- client certificates

t.test('client certificate chains', async (t) => {
  const ca = await generateCA({ CN: 'test-ca' });
  const other = await generateCA({ CN: 'other-ca' });
  const roots = [new X509Certificate(ca.certPem)];
  const der = (pem: string) => new X509Certificate(pem).raw;
  const client = await signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: 'carol', O: ['a', 'b'] }, usages: ['clientAuth'], days: 1 });
  t.match(verifyChain([der(client.certPem)], roots), { ok: true });
  t.match(verifyChain([der(client.certPem), der(ca.certPem)], roots), { ok: true }, 'the root sent along is fine');
  t.match(verifyChain([der(client.certPem)], [new X509Certificate(other.certPem)]), { ok: false, reason: /unknown authority/ });
  t.match(verifyChain([der(client.certPem)], roots, Date.now() - 3_600_000), { ok: false, reason: /not yet valid/ });
  t.match(verifyChain([der(client.certPem)], roots, Date.now() + 2 * 86_400_000), { ok: false, reason: /expired/ });
  const expired = await signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: 'old' }, usages: ['clientAuth'], days: -0.001 });
  t.match(verifyChain([der(expired.certPem)], roots), { ok: false, reason: /expired/ });
  const serving = await signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: 'srv' }, usages: ['serverAuth'], days: 1 });
  t.match(verifyChain([der(serving.certPem)], roots), { ok: false, reason: /not valid for client authentication/ });
  const forged = await signCert({ caCertPem: ca.certPem, caKeyPem: other.keyPem, subject: { CN: 'mallory' }, usages: ['clientAuth'], days: 1 });
  t.match(verifyChain([der(forged.certPem)], roots), { ok: false, reason: /unknown authority/ }, 'issuer name matches but the signature does not');
  t.match(verifyChain([], roots), { ok: false });

  // root → intermediate → leaf: the client sends the intermediate along
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const interKeys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const rootKey = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decode(ca.keyPem)[0], alg, false, ['sign']);
  const interCert = await x509.X509CertificateGenerator.create({
    serialNumber: '0a1b', subject: 'CN=intermediate-ca', issuer: new x509.X509Certificate(ca.certPem).subject, publicKey: interKeys.publicKey,
    signingKey: rootKey, signingAlgorithm: alg, notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 86_400_000),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(interKeys.publicKey),
    ],
  });
  const interKeyPem = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', interKeys.privateKey), 'PRIVATE KEY');
  const viaInter = await signCert({ caCertPem: interCert.toString('pem'), caKeyPem: interKeyPem, subject: { CN: 'erin' }, usages: ['clientAuth'], days: 1 });
  t.match(verifyChain([der(viaInter.certPem), der(interCert.toString('pem'))], roots), { ok: true }, 'chain through an intermediate');
  t.match(verifyChain([der(viaInter.certPem)], roots), { ok: false, reason: /unknown authority/ }, 'without the intermediate');
  t.match(verifyChain([der(viaInter.certPem), der(interCert.toString('pem'))], [new X509Certificate(other.certPem)]), { ok: false, reason: /unknown authority/ });
  const leafAsInter = await signCert({ caCertPem: client.certPem, caKeyPem: client.keyPem, subject: { CN: 'eve' }, usages: ['clientAuth'], days: 1 });
  t.match(verifyChain([der(leafAsInter.certPem), der(client.certPem)], roots), { ok: false }, 'a leaf certificate cannot act as an intermediate');
});

t.test('front-proxy headers', async (t) => {
  const o = { usernameHeaders: ['X-Remote-User', 'X-Other-User'], groupHeaders: ['X-Remote-Group'], extraHeadersPrefixes: ['X-Remote-Extra-'], allowedNames: [] };
  const headers = {
    'x-other-user': ['second'], 'x-remote-group': ['g1', 'g2'], 'x-remote-extra-scopes': ['read', 'write'], 'x-remote-extra-acme.com%2fproject': ['p1'],
  };
  t.same(userFromHeaders(bearer(undefined, headers), o), {
    username: 'second', groups: ['g1', 'g2'], extra: { scopes: ['read', 'write'], 'acme.com/project': ['p1'] },
  }, 'first username header with a value; extras percent-decoded');
  t.same(userFromHeaders(bearer(undefined, { 'x-remote-user': ['first'], 'x-other-user': ['second'] }), o), { username: 'first', groups: [] }, 'header order decides');
  t.equal(userFromHeaders(bearer(undefined, { 'x-remote-group': ['g'] }), o), null, 'no user name: no opinion');
});

// ---------------------------------------------------------------- flags → authenticator list

t.test('authentication flags map onto ordered authenticator entries', async (t) => {
  const { applyFlags, parseFlags } = await import('../../kernel/ops/flags.js');
  const { defaultConfig, loadConfig } = await import('../../kernel/ops/config.js');
  const apply = (...argv: string[]) => applyFlags(defaultConfig('/d'), parseFlags(argv)).authentication;
  const all = apply(
    '--authentication-token-webhook-config-file=/w.yaml', '--oidc-issuer-url=https://idp', '--oidc-client-id=c', '--enable-bootstrap-token-auth',
    '--service-account-key-file=/a.pem', '--service-account-key-file', '/b,c.pem', '--client-ca-file=/ca.crt',
    '--requestheader-client-ca-file=/proxy.crt', '--requestheader-username-headers=X-Remote-User,X-User',
  );
  t.same(all.map((r) => r.plugin), ['request-header', 'x509', 'token-file', 'service-account', 'bootstrap-token', 'oidc', 'webhook', 'anonymous'], 'the reference order, anonymous last');
  t.same(all[0].options, { usernameHeaders: ['X-Remote-User', 'X-User'], clientCAFile: '/proxy.crt' });
  t.same(all[3].options, { keyFiles: ['/a.pem', '/b,c.pem'] }, 'key files repeat and are not split on commas');
  t.same(all[4], { plugin: 'bootstrap-token' });

  const oidc = apply('--oidc-issuer-url=https://idp', '--oidc-required-claim=tenant=blue,green', '--oidc-required-claim', 'hd=example.com', '--oidc-username-prefix=-', '--oidc-ca-file=/idp.crt');
  t.same(oidc.find((r) => r.plugin === 'oidc')!.options, { issuerURL: 'https://idp', usernamePrefix: '-', requiredClaims: { tenant: 'blue,green', hd: 'example.com' }, caFile: '/idp.crt' });
  t.throws(() => parseFlags(['--oidc-required-claim=novalue']), /expected key=value/);
  t.throws(() => parseFlags(['--oidc-issuer-url=http://idp']), /must be an https URL/);

  t.same(apply('--authentication-token-webhook-cache-ttl=30s', '--authentication-token-webhook-version=v1').find((r) => r.plugin === 'webhook')!.options, { cacheTTLSeconds: 30, version: 'v1' });
  t.throws(() => parseFlags(['--authentication-token-webhook-version=v2']), /v1beta1 or v1/);
  t.same(apply('--service-account-issuer=https://a', '--service-account-issuer=https://b', '--api-audiences=x,y', '--service-account-lookup=false').find((r) => r.plugin === 'service-account')!.options,
    { issuer: ['https://a', 'https://b'], lookup: false, audiences: ['x', 'y'] });
  t.same(apply('--service-account-issuer=https://a').find((r) => r.plugin === 'service-account')!.options, { issuer: 'https://a' });

  // entries from a config file keep their place and options; flags merge into them
  const base = { ...defaultConfig('/d'), authentication: [{ plugin: '/my/authn.js' }, { plugin: 'oidc', options: { issuerURL: 'https://idp', requiredClaims: { a: '1' } } }, { plugin: 'anonymous' }] };
  const merged = applyFlags(base, parseFlags(['--oidc-client-id=c', '--oidc-required-claim=b=2', '--enable-bootstrap-token-auth', '--client-ca-file=/ca']));
  t.same(merged.authentication, [
    { plugin: '/my/authn.js' }, { plugin: 'x509', options: { clientCAFile: '/ca' } }, { plugin: 'bootstrap-token' },
    { plugin: 'oidc', options: { issuerURL: 'https://idp', requiredClaims: { a: '1', b: '2' }, clientID: 'c' } }, { plugin: 'anonymous' },
  ]);
  t.same(applyFlags(merged, parseFlags(['--enable-bootstrap-token-auth=false'])).authentication.map((r) => r.plugin), ['/my/authn.js', 'x509', 'oidc', 'anonymous']);

  // with --tls-private-key-file the serving key (not the first-start one) verifies service account tokens
  const c = await loadConfig(['--tls-private-key-file=/srv/tls.key', '--service-account-lookup'], {});
  t.same(c.authentication.find((r) => r.plugin === 'service-account')!.options, { lookup: true, keyFiles: ['/srv/tls.key'] });
  const d = await loadConfig(['--tls-private-key-file=/srv/tls.key', '--service-account-key-file=/sa.pub'], {});
  t.same(d.authentication.find((r) => r.plugin === 'service-account')!.options, { keyFiles: ['/sa.pub'] });
});
