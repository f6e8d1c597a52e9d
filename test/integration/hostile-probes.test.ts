// Hostile requests against one server in the default configuration (Node,RBAC; x509 + token-file +
// service-account + bootstrap-token + anonymous), plus a service account key this test owns so it can
// sign tokens with the right key, the wrong key and the wrong algorithm.
//
// Every probe is written as raw HTTP/1.1 over TLS, so the test controls the bytes exactly (duplicate
// headers, control characters, oversize header blocks). Each probe names the status it must get; any
// answer that is not a 2xx on the table's say-so must also be a Status JSON body whose code equals the
// HTTP status. A 2xx that the table does not allow is a bypass. After every probe the server must
// still be ready and the admin token must still work.
import t from 'tap';
import tls from 'node:tls';
import path from 'node:path';
import os from 'node:os';
import { generateKeyPairSync, createPrivateKey, webcrypto, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { SignJWT } from 'jose';
import { startServer, type TestServer } from '../lib/server.js';
import { generateCA, signCert, x509, type CertAndKey } from '../../kernel/ops/pki.js';
import { issueToken, keyId } from '../../plugins/authenticators/service-account/index.js';
import { brands } from '../../kernel/contracts/brand.js';

const D = 'cluster.io';
const RBAC = `rbac.authorization.${D}`;
const ISSUER = 'https://cluster.default.svc.cluster.local';
const TOK = { admin: 'hostile-admin-token-0123456789', alice: 'hostile-alice-token-0123456789' };

// ---------------------------------------------------------------- the server

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'capi-hostile-'));
mkdirSync(path.join(dataDir, 'pki'), { recursive: true, mode: 0o700 });
const adminLine = `${TOK.admin},admin,admin-uid,"system:masters"`;
writeFileSync(path.join(dataDir, 'pki', 'tokens.csv'), adminLine + '\n', { mode: 0o600 });
const usersFile = path.join(dataDir, 'users.csv');
writeFileSync(usersFile, `${adminLine}\n${TOK.alice},alice,alice-uid,"devs"\n`);

const saKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
const saPrivPem = saKey.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const saPubPem = saKey.publicKey.export({ type: 'spki', format: 'pem' }) as string;
const saKeyFile = path.join(dataDir, 'sa.key');
writeFileSync(saKeyFile, saPrivPem, { mode: 0o600 });
const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 });

const s: TestServer = await startServer({ dataDir, args: ['--token-auth-file', usersFile, '--service-account-key-file', saKeyFile, '--mtls-port', '0'] });
t.teardown(async () => {
  await s.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

// ---------------------------------------------------------------- raw HTTP over TLS

interface Raw { status: number; headers: Record<string, string>; body: string; json: any; error?: string }

/** One request, written byte for byte, on a fresh TLS connection (Connection: close). */
function rawRequest(port: number, o: { method: string; path: string; headers: [string, string][]; body?: Buffer; cert?: CertAndKey; headBytes?: Buffer }): Promise<Raw> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(parseResponse(Buffer.concat(chunks), error));
    };
    const sock = tls.connect({ host: '127.0.0.1', port, ca: s.ca, servername: 'localhost', cert: o.cert?.certPem, key: o.cert?.keyPem }, () => {
      const lines = [`${o.method} ${o.path} HTTP/1.1`, `host: 127.0.0.1:${port}`, 'connection: close'];
      for (const [k, v] of o.headers) lines.push(`${k}: ${v}`);
      if (o.body) lines.push(`content-length: ${o.body.length}`);
      const head = Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n', 'utf8'), o.headBytes ?? Buffer.alloc(0), Buffer.from('\r\n')]);
      sock.write(o.body ? Buffer.concat([head, o.body]) : head);
    });
    const timer = setTimeout(() => finish('no answer within 5 s'), 5_000);
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('end', () => finish());
    sock.on('close', () => finish());
    sock.on('error', (e) => finish(String(e)));
  });
}

function parseResponse(buf: Buffer, error?: string): Raw {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, headers: {}, body: buf.toString('utf8'), json: undefined, error: error ?? 'no response' };
  const [statusLine, ...hl] = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const l of hl) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let body = buf.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const out: Buffer[] = [];
    let p = 0;
    for (;;) {
      const nl = body.indexOf('\r\n', p);
      if (nl < 0) break;
      const n = parseInt(body.subarray(p, nl).toString('latin1'), 16);
      if (!n) break;
      out.push(body.subarray(nl + 2, nl + 2 + n));
      p = nl + 2 + n + 2;
    }
    body = Buffer.concat(out);
  } else if (headers['content-length'] !== undefined) {
    body = body.subarray(0, Number(headers['content-length']));
  }
  const text = body.toString('utf8');
  let json: any;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status, headers, body: text, json, error };
}

// ---------------------------------------------------------------- fixtures through the API

const admin = (method: string, p: string, body?: unknown) => s.request(method, p, { token: TOK.admin, body });
const must = async (what: string, r: Promise<{ status: number; text: string; json: any }>, code = 201) => {
  const out = await r.catch((e) => { throw new Error(`${what}: ${e}\n${s.logs.slice(-5).join('\n')}`); });
  if (out.status !== code) throw new Error(`${what}: ${out.status} ${out.text}`);
  return out;
};

const robot = await must('robot', admin('POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } }));
const robotUid: string = robot.json.metadata.uid;
const doomed = await must('doomed', admin('POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'doomed' } }));
const doomedUid: string = doomed.json.metadata.uid;
await must('configmap', admin('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm1' }, data: { a: 'b' } }));
await must('secret', admin('POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, stringData: { password: 'hunter2' } }));
// The genuine identities behind the forged credentials may read configmaps in default: a forged
// credential that were accepted would answer 200 there, so a bypass cannot hide behind a 403.
await must('role', admin('POST', `/apis/${RBAC}/v1/namespaces/default/roles`, {
  apiVersion: `${RBAC}/v1`, kind: 'Role', metadata: { name: 'cm-reader', namespace: 'default' }, rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'] }],
}));
await must('rolebinding', admin('POST', `/apis/${RBAC}/v1/namespaces/default/rolebindings`, {
  apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', metadata: { name: 'cm-reader', namespace: 'default' }, roleRef: { apiGroup: RBAC, kind: 'Role', name: 'cm-reader' },
  subjects: ['alice', 'system:serviceaccount:default:robot', 'system:serviceaccount:default:doomed', 'system:bootstrap:abcdef', 'system:bootstrap:expird', 'system:bootstrap:nouse1']
    .map((name) => ({ kind: 'User', apiGroup: RBAC, name })),
}));

const b64 = (v: string) => Buffer.from(v).toString('base64');
const bootstrapSecret = (id: string, data: Record<string, string>) => admin('POST', '/api/v1/namespaces/cluster-system/secrets', {
  apiVersion: 'v1', kind: 'Secret', type: `bootstrap.${D}/token`, metadata: { name: `bootstrap-token-${id}`, namespace: 'cluster-system' },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
});
const BT_SECRET = '0123456789abcdef';
await must('bootstrap abcdef', bootstrapSecret('abcdef', { 'token-id': 'abcdef', 'token-secret': BT_SECRET, 'usage-bootstrap-authentication': 'true', expiration: new Date(Date.now() + 3_600_000).toISOString() }));
await must('bootstrap expird', bootstrapSecret('expird', { 'token-id': 'expird', 'token-secret': BT_SECRET, 'usage-bootstrap-authentication': 'true', expiration: '2020-01-01T00:00:00Z' }));
await must('bootstrap nouse1', bootstrapSecret('nouse1', { 'token-id': 'nouse1', 'token-secret': BT_SECRET }));

// ---------------------------------------------------------------- tokens

const sa = (o: Partial<Parameters<typeof issueToken>[0]> = {}) => issueToken({
  key: saKey.privateKey, issuer: ISSUER, audiences: [ISSUER], expirationSeconds: 600, namespace: 'default', serviceAccount: { name: 'robot', uid: robotUid }, brand: brands.cluster, ...o,
});
const robotToken = await sa();
const doomedToken = await sa({ serviceAccount: { name: 'doomed', uid: doomedUid } });
await must('delete doomed', admin('DELETE', '/api/v1/namespaces/default/serviceaccounts/doomed'), 200);

const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);
const robotClaims = (over: Record<string, unknown> = {}) => ({
  iss: ISSUER, aud: [ISSUER], sub: 'system:serviceaccount:default:robot', iat: now(), nbf: now(), exp: now() + 600,
  [D]: { namespace: 'default', serviceaccount: { name: 'robot', uid: robotUid } }, ...over,
});
/** A token signed with the real key and algorithm, over any claims. */
const signed = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: keyId(saKey.publicKey) }).sign(saKey.privateKey);
const [rh, rp, rs] = robotToken.split('.');

const algNone = `${enc({ alg: 'none', typ: 'JWT' })}.${enc(robotClaims())}.`;
const hsConfusion = await new SignJWT(robotClaims()).setProtectedHeader({ alg: 'HS256', kid: keyId(saKey.publicKey) }).sign(new TextEncoder().encode(saPubPem));
const wrongKey = await sa({ key: otherKey.privateKey, keyId: keyId(saKey.publicKey) });
const expired = await sa({ now: Date.now() - 2 * 3_600_000 });
const notYet = await sa({ now: Date.now() + 3_600_000 });
const wrongIssuer = await sa({ issuer: 'https://evil.example.com' });
const wrongAudience = await sa({ audiences: ['https://evil.example.com'] });
const subAdmin = await signed(robotClaims({ sub: 'admin' }));
const subMasters = await signed(robotClaims({ sub: 'system:masters' }));
const mastersSA = await signed(robotClaims({ sub: 'system:serviceaccount:system:masters:admin', [D]: { namespace: 'system:masters', serviceaccount: { name: 'admin', uid: 'x' } } }));
const wrongUid = await signed(robotClaims({ [D]: { namespace: 'default', serviceaccount: { name: 'robot', uid: 'not-the-uid' } } }));
const unicodeName = 'r\u043Ebot\u202e\u0000';
const unicodeSA = await signed(robotClaims({ sub: `system:serviceaccount:default:${unicodeName}`, [D]: { namespace: 'default', serviceaccount: { name: unicodeName, uid: robotUid } } }));
const hugeName = 'robot' + 'x'.repeat(2000);
const hugeSA = await signed(robotClaims({ sub: `system:serviceaccount:default:${hugeName}`, [D]: { namespace: 'default', serviceaccount: { name: hugeName, uid: robotUid } } }));
const claimNotObject = await signed(robotClaims({ [D]: 'default:robot' }));

// ---------------------------------------------------------------- client certificates

const caCertPem = readFileSync(path.join(dataDir, 'pki/ca.crt'), 'utf8');
const caKeyPem = readFileSync(path.join(dataDir, 'pki/ca.key'), 'utf8');
const ECDSA = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

/** A client certificate with any validity window, usages and issuer (self-signed without one). */
async function makeCert(o: { CN: string; O?: string[]; notBefore: Date; notAfter: Date; usages: ('clientAuth' | 'serverAuth')[]; issuer?: { certPem: string; keyPem: string } }): Promise<CertAndKey> {
  const subtle = webcrypto.subtle;
  const keys = (await subtle.generateKey(ECDSA, true, ['sign', 'verify'])) as CryptoKeyPair;
  const name = [...(o.O ?? []).map((v) => ({ O: [v] })), { CN: [o.CN] }];
  const extensions = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension(o.usages.map((u) => x509.ExtendedKeyUsage[u])),
  ];
  const serialNumber = randomBytes(16).toString('hex').replace(/^[89a-f]/, '1');
  let cert;
  if (o.issuer) {
    const der = createPrivateKey(o.issuer.keyPem).export({ type: 'pkcs8', format: 'der' });
    const signingKey = await subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
    cert = await x509.X509CertificateGenerator.create({
      serialNumber, subject: name, issuer: new x509.X509Certificate(o.issuer.certPem).subjectName, publicKey: keys.publicKey, signingKey,
      signingAlgorithm: ECDSA, notBefore: o.notBefore, notAfter: o.notAfter, extensions,
    });
  } else {
    cert = await x509.X509CertificateGenerator.createSelfSigned({ serialNumber, name, keys, signingAlgorithm: ECDSA, notBefore: o.notBefore, notAfter: o.notAfter, extensions });
  }
  const keyPem = x509.PemConverter.encode(await subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  return { certPem: cert.toString('pem'), keyPem };
}

const HOUR = 3_600_000;
const clusterCA = { certPem: caCertPem, keyPem: caKeyPem };
const masters = { CN: 'admin', O: ['system:masters'] };
const strangerCA = await generateCA({ CN: 'stranger-ca' });
const unknownCACert = await signCert({ caCertPem: strangerCA.certPem, caKeyPem: strangerCA.keyPem, subject: masters, usages: ['clientAuth'], days: 1 });
const expiredCert = await makeCert({ ...masters, notBefore: new Date(Date.now() - 48 * HOUR), notAfter: new Date(Date.now() - 24 * HOUR), usages: ['clientAuth'], issuer: clusterCA });
const futureCert = await makeCert({ ...masters, notBefore: new Date(Date.now() + 24 * HOUR), notAfter: new Date(Date.now() + 48 * HOUR), usages: ['clientAuth'], issuer: clusterCA });
const selfSigned = await makeCert({ ...masters, notBefore: new Date(Date.now() - HOUR), notAfter: new Date(Date.now() + 24 * HOUR), usages: ['clientAuth'] });
const serverOnly = await makeCert({ ...masters, notBefore: new Date(Date.now() - HOUR), notAfter: new Date(Date.now() + 24 * HOUR), usages: ['serverAuth'], issuer: clusterCA });
const goodCert = await signCert({ caCertPem, caKeyPem, subject: { CN: 'cert-admin', O: ['system:masters'] }, usages: ['clientAuth'], days: 1 });

// ---------------------------------------------------------------- the table

interface Probe {
  name: string;
  /** Status(es) the probe must get. */
  expect: number | number[];
  method?: string;
  /** Default: the secrets of namespace default (only system:masters may read them). */
  path?: string;
  /** Bearer token (Authorization: Bearer <token>). */
  token?: string;
  headers?: [string, string][];
  /** Raw header bytes appended after the header lines. */
  headBytes?: Buffer;
  body?: Buffer;
  mtls?: boolean;
  cert?: CertAndKey;
  /** Refused by the HTTP layer as Go's server refuses it: this plain-text status line and body, not a Status. */
  goText?: string;
  /** Positive controls: a 2xx is the expected answer and its body is not a Status. */
  positive?: boolean;
  /**
   * A known deviation of the HTTP layer (not of authentication or authorization): the probe's
   * assertions are reported as TODO with this reason instead of failing the suite. A 2xx still
   * counts as a bypass.
   */
  known?: string;
}

const NODE_400 = 'node:http answers with its own bare "400 Bad Request" (no body) before the server sees the request';
const NODE_431 = 'node:http answers with its own bare "431 Request Header Fields Too Large" (no body)';

const SECRETS = '/api/v1/namespaces/default/secrets';
const CM = '/api/v1/namespaces/default/configmaps/cm1';
const A = (v: string): [string, string] => ['authorization', v];

const probes: Probe[] = [
  // positive controls
  { name: 'control: anonymous GET /version', path: '/version', expect: 200, positive: true },
  { name: 'control: anonymous GET /readyz', path: '/readyz', expect: 200, positive: true },
  { name: 'control: anonymous GET /healthz', path: '/healthz', expect: 200, positive: true },
  { name: 'control: anonymous GET /livez', path: '/livez', expect: 200, positive: true },
  { name: 'control: admin token reads secrets', token: TOK.admin, expect: 200, positive: true },
  { name: 'control: alice reads the configmap', token: TOK.alice, path: CM, expect: 200, positive: true },
  { name: 'control: the robot token reads the configmap', token: robotToken, path: CM, expect: 200, positive: true },
  { name: 'control: the bootstrap token reads the configmap', token: `abcdef.${BT_SECRET}`, path: CM, expect: 200, positive: true },
  { name: 'control: a cluster-CA client certificate in system:masters reads secrets', mtls: true, cert: goodCert, expect: 200, positive: true },
  { name: 'control: alice cannot read secrets', token: TOK.alice, expect: 403 },

  // anonymous on protected resources
  { name: 'anonymous GET secrets', expect: 403 },
  { name: 'anonymous GET cluster-wide secrets', path: '/api/v1/secrets', expect: 403 },
  { name: 'anonymous GET bootstrap secrets', path: '/api/v1/namespaces/cluster-system/secrets', expect: 403 },
  { name: 'anonymous GET /metrics', path: '/metrics', expect: 403 },
  { name: 'anonymous GET /openapi/v2', path: '/openapi/v2', expect: 403 },
  { name: 'anonymous GET /openapi/v3', path: '/openapi/v3', expect: 403 },
  { name: 'anonymous GET /apis (discovery is for authenticated users)', path: '/apis', expect: 403 },
  { name: 'anonymous POST a configmap', method: 'POST', path: '/api/v1/namespaces/default/configmaps', headers: [['content-type', 'application/json']], body: Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'anon' } })), expect: 403 },
  { name: 'anonymous DELETE a secret', method: 'DELETE', path: `${SECRETS}/s1`, expect: 403 },
  { name: 'anonymous GET secrets on the mTLS port', mtls: true, expect: 403 },

  // malformed Authorization headers
  { name: 'Authorization: (empty)', headers: [A('')], expect: 401 },
  { name: 'Authorization: Bearer', headers: [A('Bearer')], expect: 401 },
  { name: 'Authorization: "Bearer   " (spaces only)', headers: [A('Bearer   ')], expect: 401 },
  { name: 'Authorization: Basic admin:admin', headers: [A(`Basic ${b64('admin:admin')}`)], expect: 401 },
  { name: 'Authorization: Basic with the admin token as password', headers: [A(`Basic ${b64(`admin:${TOK.admin}`)}`)], expect: 401 },
  { name: 'Authorization: bearer x (lower case, bad token)', headers: [A('bearer x')], expect: 401 },
  { name: 'Authorization: Bearer x y (extra field)', headers: [A('Bearer garbage admin')], expect: 401 },
  { name: 'Authorization: Bearer <admin token with trailing garbage>', headers: [A(`Bearer ${TOK.admin}x`)], expect: 401 },
  { name: 'Authorization: Bearer <admin token prefix>', headers: [A(`Bearer ${TOK.admin.slice(0, -1)}`)], expect: 401 },
  { name: 'two Authorization headers: bad then admin', headers: [A('Bearer garbage'), A(`Bearer ${TOK.admin}`)], expect: 401 },
  { name: 'two Authorization headers: alice then admin', headers: [A(`Bearer ${TOK.alice}`), A(`Bearer ${TOK.admin}`)], expect: 403 },
  { name: 'two Authorization headers on the mTLS port: bad then admin', mtls: true, headers: [A('Bearer garbage'), A(`Bearer ${TOK.admin}`)], expect: 401 },
  { name: 'non-ASCII token (UTF-8 bytes)', headers: [A('Bearer t\u00f6k\u20acn\u{1F600}')], expect: 401 },
  { name: 'token with a control character (\\x01)', headBytes: Buffer.from('authorization: Bearer ab\x01cd\r\n', 'latin1'), expect: 400, goText: '400 Bad Request' },
  { name: 'token with a NUL byte', headBytes: Buffer.from(`authorization: Bearer ${TOK.admin}\x00\r\n`, 'latin1'), expect: 400, goText: '400 Bad Request' },
  { name: 'token with a bare CR smuggling a second header', headBytes: Buffer.from(`authorization: Bearer x\rauthorization: Bearer ${TOK.admin}\r\n`, 'latin1'), expect: 400, goText: '400 Bad Request' },
  { name: 'token with a control character on the mTLS port', mtls: true, headBytes: Buffer.from('authorization: Bearer ab\x01cd\r\n', 'latin1'), expect: 400, goText: '400 Bad Request', known: NODE_400 },
  // Go's limit is MaxHeaderBytes (1 MiB in kube-apiserver) plus 4 KiB: a 64 KiB token is read and refused by authentication
  { name: '64 KiB bearer token', headers: [A(`Bearer ${'a'.repeat(64 * 1024)}`)], expect: 401 },
  { name: '64 KiB bearer token on the mTLS port', mtls: true, headers: [A(`Bearer ${'a'.repeat(64 * 1024)}`)], expect: 401, known: NODE_431 },
  { name: '1 MiB header block (over 1 MiB + 4 KiB)', headers: Array.from({ length: 260 }, (_, i): [string, string] => [`x-pad-${i}`, 'p'.repeat(4096)]), expect: 431, goText: '431 Request Header Fields Too Large' },
  { name: '800 KiB header block in 200 lines', headers: Array.from({ length: 200 }, (_, i): [string, string] => [`x-pad-${i}`, 'p'.repeat(4096)]), expect: 403 },
  { name: '1 MiB header block on the mTLS port', mtls: true, headers: Array.from({ length: 260 }, (_, i): [string, string] => [`x-pad-${i}`, 'p'.repeat(4096)]), expect: 431, goText: '431 Request Header Fields Too Large', known: NODE_431 },
  { name: '8 KiB bearer token (under the limits)', headers: [A(`Bearer ${'a'.repeat(8 * 1024)}`)], expect: 401 },

  // JWTs
  { name: 'JWT truncated (signature cut short)', token: robotToken.slice(0, -12), path: CM, expect: 401 },
  { name: 'JWT with two parts', token: `${rh}.${rp}`, path: CM, expect: 401 },
  { name: 'JWT with four parts', token: `${robotToken}.${rs}`, path: CM, expect: 401 },
  { name: 'JWT with bad base64', token: `${rh}.${rp.slice(0, 10)}!!${rp.slice(12)}.${rs}`, path: CM, expect: 401 },
  { name: 'JWT whose header is not JSON', token: `${Buffer.from('{not json').toString('base64url')}.${rp}.${rs}`, path: CM, expect: 401 },
  { name: 'JWT with the payload of another token (signature mismatch)', token: `${rh}.${enc(robotClaims({ sub: 'system:serviceaccount:default:robot', x: 1 }))}.${rs}`, path: CM, expect: 401 },
  { name: 'JWT alg none, empty signature', token: algNone, path: CM, expect: 401 },
  { name: 'JWT HS256 keyed with the public key PEM (key confusion)', token: hsConfusion, path: CM, expect: 401 },
  { name: 'JWT RS256 by another key, real kid', token: wrongKey, path: CM, expect: 401 },
  { name: 'JWT expired', token: expired, path: CM, expect: 401 },
  { name: 'JWT not yet valid (nbf in the future)', token: notYet, path: CM, expect: 401 },
  { name: 'JWT wrong issuer', token: wrongIssuer, path: CM, expect: 401 },
  { name: 'JWT wrong audience', token: wrongAudience, path: CM, expect: 401 },
  { name: 'JWT of a deleted service account', token: doomedToken, path: CM, expect: 401 },
  { name: 'JWT with a wrong service account uid', token: wrongUid, path: CM, expect: 401 },
  { name: 'JWT sub "admin" over robot\'s claim', token: subAdmin, expect: 401 },
  { name: 'JWT sub "system:masters" over robot\'s claim', token: subMasters, expect: 401 },
  { name: 'JWT for service account "admin" in namespace "system:masters"', token: mastersSA, expect: 401 },
  { name: 'JWT with unicode, RTL override and NUL in the service account name', token: unicodeSA, path: CM, expect: 401 },
  { name: 'JWT with a 2000-character service account name', token: hugeSA, path: CM, expect: 401 },
  { name: 'JWT whose private claim is a string', token: claimNotObject, path: CM, expect: 401 },

  // bootstrap tokens
  { name: 'bootstrap: wrong secret for a real id', token: 'abcdef.0123456789abcdee', path: CM, expect: 401 },
  { name: 'bootstrap: expired secret', token: `expird.${BT_SECRET}`, path: CM, expect: 401 },
  { name: 'bootstrap: secret without usage-bootstrap-authentication', token: `nouse1.${BT_SECRET}`, path: CM, expect: 401 },
  { name: 'bootstrap: id in upper case', token: `ABCDEF.${BT_SECRET}`, path: CM, expect: 401 },
  { name: 'bootstrap: secret in upper case', token: `abcdef.${BT_SECRET.toUpperCase()}`, path: CM, expect: 401 },
  { name: 'bootstrap: well-formed token of a non-existent secret', token: `zzzzzz.${BT_SECRET}`, path: CM, expect: 401 },
  { name: 'bootstrap: secret one character short', token: `abcdef.${BT_SECRET.slice(0, -1)}`, path: CM, expect: 401 },

  // client certificates on the mTLS port (the TLS layer ignores a certificate that does not verify
  // against the cluster CA, for a client purpose, now: the request is anonymous, so 403)
  { name: 'cert: system:masters signed by an unknown CA', mtls: true, cert: unknownCACert, expect: 403 },
  { name: 'cert: expired, signed by the cluster CA', mtls: true, cert: expiredCert, expect: 403 },
  { name: 'cert: not yet valid, signed by the cluster CA', mtls: true, cert: futureCert, expect: 403 },
  { name: 'cert: self-signed CN=admin O=system:masters', mtls: true, cert: selfSigned, expect: 403 },
  { name: 'cert: serverAuth-only, signed by the cluster CA', mtls: true, cert: serverOnly, expect: 403 },
  { name: 'cert: unknown CA plus X-Remote-User admin', mtls: true, cert: unknownCACert, headers: [['x-remote-user', 'admin'], ['x-remote-group', 'system:masters']], expect: 403 },
  { name: 'cert: expired cert plus a bad token', mtls: true, cert: expiredCert, token: 'garbage', expect: 401 },

  // impersonation without the right to it
  { name: 'alice impersonates admin', token: TOK.alice, headers: [['impersonate-user', 'admin']], expect: 403 },
  { name: 'alice impersonates herself in system:masters', token: TOK.alice, headers: [['impersonate-user', 'alice'], ['impersonate-group', 'system:masters']], expect: 403 },
  { name: 'alice impersonates a uid', token: TOK.alice, headers: [['impersonate-user', 'alice'], ['impersonate-uid', 'admin-uid']], expect: 403 },
  { name: 'alice impersonates an extra', token: TOK.alice, headers: [['impersonate-user', 'alice'], ['impersonate-extra-scopes', 'all']], expect: 403 },
  { name: 'alice impersonates a service account', token: TOK.alice, headers: [['impersonate-user', 'system:serviceaccount:cluster-system:default']], expect: 403 },
  { name: 'alice impersonates system:apiserver', token: TOK.alice, headers: [['impersonate-user', 'system:apiserver']], expect: 403 },
  { name: 'alice: Impersonate-Group without Impersonate-User', token: TOK.alice, headers: [['impersonate-group', 'system:masters']], expect: 400 },
  { name: 'alice: Impersonate-Uid without Impersonate-User', token: TOK.alice, headers: [['impersonate-uid', 'admin-uid']], expect: 400 },
  { name: 'alice: Impersonate-Extra with a broken escape', token: TOK.alice, headers: [['impersonate-user', 'alice'], ['impersonate-extra-%zz', 'v']], expect: 400 },
  { name: 'alice: Impersonate-Extra with an escaped key', token: TOK.alice, headers: [['impersonate-user', 'alice'], ['impersonate-extra-acme.com%2Fproject', 'p1']], expect: 403 },
  { name: 'alice: Impersonate-Extra with a broken escape, mTLS port', mtls: true, token: TOK.alice, headers: [['impersonate-user', 'alice'], ['impersonate-extra-%zz', 'v']], expect: 400 },
  { name: 'alice: Impersonate-Extra with an escaped key, mTLS port', mtls: true, token: TOK.alice, headers: [['impersonate-user', 'alice'], ['impersonate-extra-acme.com%2Fproject', 'p1']], expect: 403 },
  { name: 'anonymous impersonates admin', headers: [['impersonate-user', 'admin']], expect: 403 },
  { name: 'anonymous: Impersonate-Group without Impersonate-User', headers: [['impersonate-group', 'system:masters']], expect: 400 },
  { name: 'robot impersonates admin', token: robotToken, headers: [['impersonate-user', 'admin']], expect: 403 },
  { name: 'bootstrap token impersonates system:masters group', token: `abcdef.${BT_SECRET}`, headers: [['impersonate-user', 'system:bootstrap:abcdef'], ['impersonate-group', 'system:masters']], expect: 403 },

  // front-proxy headers from a plain client
  { name: 'X-Remote-User admin / X-Remote-Group system:masters, uWS port', headers: [['x-remote-user', 'admin'], ['x-remote-group', 'system:masters']], expect: 403 },
  { name: 'X-Remote-User admin / X-Remote-Group system:masters, mTLS port', mtls: true, headers: [['x-remote-user', 'admin'], ['x-remote-group', 'system:masters']], expect: 403 },
  { name: 'X-Remote-User with alice\'s token: stays alice', token: TOK.alice, headers: [['x-remote-user', 'admin'], ['x-remote-group', 'system:masters']], expect: 403 },

  // path tricks
  { name: 'path /api/v1/namespaces/../../apis, anonymous', path: '/api/v1/namespaces/../../apis', expect: 403 },
  { name: 'path /version/../api/v1/namespaces/default/secrets, anonymous', path: '/version/../api/v1/namespaces/default/secrets', expect: 403 },
  { name: 'path /readyz/%2e%2e/api/v1/namespaces/default/secrets, anonymous', path: '/readyz/%2e%2e/api/v1/namespaces/default/secrets', expect: 403 },
  { name: 'path /healthz%2F..%2Fapi%2Fv1%2Fsecrets, anonymous', path: '/healthz%2F..%2Fapi%2Fv1%2Fsecrets', expect: 403 },
  { name: 'path /version%2F..%2Fmetrics, anonymous', path: '/version%2F..%2Fmetrics', expect: 403 },
  { name: 'path /version/ with a NUL escape, anonymous', path: '/version%00/../metrics', expect: 403 },
  { name: 'path //api/v1/namespaces/default/secrets, anonymous', path: '//api/v1/namespaces/default/secrets', expect: 403 },
  { name: 'path /api//v1/namespaces/default/secrets, anonymous', path: '/api//v1/namespaces/default/secrets', expect: 403 },
  { name: 'alice: configmaps/../secrets', token: TOK.alice, path: '/api/v1/namespaces/default/configmaps/../secrets', expect: 403 },
  { name: 'alice: configmaps/cm1/../../secrets/s1', token: TOK.alice, path: '/api/v1/namespaces/default/configmaps/cm1/../../secrets/s1', expect: 403 },
  { name: 'alice: configmaps%2F..%2Fsecrets', token: TOK.alice, path: '/api/v1/namespaces/default/configmaps%2F..%2Fsecrets', expect: 403 },
  { name: 'alice: %2e%2e from configmaps to secrets', token: TOK.alice, path: '/api/v1/namespaces/default/configmaps/%2e%2e/secrets/s1', expect: 403 },
  { name: 'alice: secrets spelled with escapes', token: TOK.alice, path: '/api/v1/namespaces/default/%73ecrets', expect: 403 },
  { name: 'alice: secrets as a subresource path of her configmap', token: TOK.alice, path: '/api/v1/namespaces/default/configmaps/cm1/secrets', expect: 403 },
  { name: 'alice: double slashes around configmaps//../secrets', token: TOK.alice, path: '/api/v1/namespaces/default//configmaps//..//secrets', expect: 403 },
  { name: 'very long path (16 KiB), anonymous', path: `${SECRETS}/${'a'.repeat(16 * 1024)}`, expect: 403 },
  { name: 'very long path (16 KiB), admin', token: TOK.admin, path: `${SECRETS}/${'a'.repeat(16 * 1024)}`, expect: 404 },
  { name: 'admin: unknown resource', token: TOK.admin, path: '/api/v1/namespaces/default/nosuchthings', expect: 404 },
  { name: 'admin: encoded slash in a name', token: TOK.admin, path: `${SECRETS}/s1%2Fx`, expect: 404 },

  // methods
  { name: 'PROPFIND secrets, anonymous', method: 'PROPFIND', expect: 403 },
  { name: 'PROPFIND secrets, admin', method: 'PROPFIND', token: TOK.admin, expect: 405 },
  { name: 'BREW secrets, admin', method: 'BREW', token: TOK.admin, expect: 405 },
  { name: 'PROPFIND secrets, anonymous, mTLS port', mtls: true, method: 'PROPFIND', expect: 403 },
  { name: 'PROPFIND secrets, admin, mTLS port', mtls: true, method: 'PROPFIND', token: TOK.admin, expect: 405 },
  { name: 'HEAD secrets, anonymous', method: 'HEAD', expect: 403 },
  { name: 'OPTIONS secrets, anonymous', method: 'OPTIONS', expect: 403 },
  { name: 'HEAD /metrics, anonymous', method: 'HEAD', path: '/metrics', expect: 403 },
  { name: 'TRACE /version, anonymous', method: 'TRACE', path: '/version', expect: 403 },
  { name: 'PUT /version, admin', method: 'PUT', path: '/version', token: TOK.admin, expect: 405 },

  // bodies
  { name: 'admin: body over 3 MiB', method: 'POST', path: '/api/v1/namespaces/default/configmaps', token: TOK.admin, headers: [['content-type', 'application/json']], body: Buffer.alloc(3 * 1024 * 1024 + 512 * 1024, 0x20), expect: 413 },
  { name: 'anonymous: body over 3 MiB', method: 'POST', path: '/api/v1/namespaces/default/configmaps', headers: [['content-type', 'application/json']], body: Buffer.alloc(3 * 1024 * 1024 + 512 * 1024, 0x20), expect: 403 },
  { name: 'admin: malformed JSON body', method: 'POST', path: '/api/v1/namespaces/default/configmaps', token: TOK.admin, headers: [['content-type', 'application/json']], body: Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{'), expect: 400 },
];

// Client certificates work the same on the secure port (node:tls front before uWS).
for (const p of probes.filter((x) => x.mtls && x.cert)) probes.push({ ...p, name: `${p.name} (secure port)`, mtls: false });

// ---------------------------------------------------------------- run

const fmtHead = (p: Probe) => `${p.method ?? 'GET'} ${(p.path ?? SECRETS).slice(0, 100)}${p.mtls ? ' [mTLS]' : ''}`;

t.test('hostile probes', async (t) => {
  t.equal(s.token, TOK.admin, 'the admin token is the one this test wrote');
  t.ok(s.mtlsPort > 0, 'the separate node:tls listener runs (--mtls-port)');
  let bypasses = 0;
  const deviations: string[] = [];
  for (const p of probes) {
    const headers: [string, string][] = [['accept', 'application/json'], ...(p.token !== undefined ? [A(`Bearer ${p.token}`)] : []), ...(p.headers ?? [])];
    const r = await rawRequest(p.mtls ? s.mtlsPort : s.port, { method: p.method ?? 'GET', path: p.path ?? SECRETS, headers, body: p.body, cert: p.cert, headBytes: p.headBytes });
    const allowed = Array.isArray(p.expect) ? p.expect : [p.expect];
    const is2xx = r.status >= 200 && r.status < 300;
    if (is2xx && !p.positive) bypasses++;
    const statusOk = allowed.includes(r.status);
    const bodyless = p.method === 'HEAD' || p.positive;
    const statusBody = p.goText ? r.body === p.goText && r.headers['content-type'] === 'text/plain; charset=utf-8' : bodyless || (r.json?.kind === 'Status' && r.json?.code === r.status);
    const detail = `${fmtHead(p)} → ${r.status}${r.error ? ` (${r.error})` : ''} ${r.body.slice(0, 200)}`;
    const extra = p.known ? { actual: detail, todo: p.known } : { actual: detail };
    t.ok(statusOk, `${p.name}: expected ${allowed.join('|')}`, extra);
    t.ok(statusBody, p.goText ? `${p.name}: Go's answer "${p.goText}"` : `${p.name}: the answer is a Status with code ${r.status}`, extra);
    if (!statusOk || !statusBody) deviations.push(`${p.known ? '[known] ' : ''}${p.name}: expected ${allowed.join('|')} as a Status; got ${detail}`);
    if (s.proc.exitCode !== null) {
      t.fail(`server exited (${s.proc.exitCode}) after probe: ${p.name}`);
      break;
    }
  }
  const ready = await rawRequest(s.port, { method: 'GET', path: '/readyz', headers: [] });
  t.equal(ready.status, 200, 'GET /readyz is still 200 after every probe');
  const still = await rawRequest(s.port, { method: 'GET', path: SECRETS, headers: [A(`Bearer ${TOK.admin}`), ['accept', 'application/json']] });
  t.equal(still.status, 200, 'the admin token still works');
  t.equal(s.proc.exitCode, null, 'the server is still running');
  t.notOk(s.logs.some((l) => l.includes('"internal error"')), 'no probe caused an internal error');
  for (const d of deviations) t.comment(`deviation: ${d}`);
  t.comment(`hostile probes: ${probes.length} cases, ${bypasses} bypasses`);
  console.log(`hostile probes: ${probes.length} cases, ${bypasses} bypasses`);
  t.equal(bypasses, 0, 'no probe got a 2xx it must not get');
  t.ok(probes.length >= 60, `at least 60 probes (${probes.length})`);
});
