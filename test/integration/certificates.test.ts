// Certificate signing requests over HTTP and with stock kubectl: creation rules, approval and
// signing authorization, the built-in signers and their restrictions, the approver and the cleaner,
// and a certificate issued by the API-server client signer authenticating at once on the secure port.
import t from 'tap';
import { webcrypto, X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { x509 } from '../../kernel/ops/pki.js';
import { EC, makeRequest } from '../lib/csr.js';
import { kubectl, noKubectl } from '../lib/kubectl.js';
import { withServer, type TestServer } from '../lib/server.js';
import { untilDefined as waitFor } from '../lib/poll.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

function csrBody(name: string, pem: string, signerName: string, usages: string[], extra: Record<string, unknown> = {}) {
  return { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name }, spec: { request: b64(pem), signerName, usages, ...extra } };
}

async function certificateOf(s: TestServer, name: string, ms = 5000): Promise<string | undefined> {
  return waitFor(async () => {
    const r = await s.get(`${CSRS}/${name}`);
    return r.json?.status?.certificate ? Buffer.from(r.json.status.certificate, 'base64').toString() : undefined;
  }, ms);
}

const approve = (s: TestServer, obj: any, type = 'Approved', token?: string) =>
  s.request('PUT', `${CSRS}/${obj.metadata.name}/approval`, { token, body: { ...obj, status: { ...obj.status, conditions: [...(obj.status?.conditions ?? []), { type, status: 'True', reason: 'Test', message: 'by the test' }] } } });

const CLIENT = 'kubernetes.io/kube-apiserver-client';
const CLIENT_USAGES = ['digital signature', 'client auth'];

t.test('creation rules, approval, signing and the x509 round trip over HTTP', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const alice = await makeRequest('CN=alice, O=team-a, O=team-b');

  // spec.username/groups come from the requester, whatever the body says
  const c = await s.request('POST', CSRS, { body: csrBody('alice', alice.pem, CLIENT, CLIENT_USAGES, { username: 'mallory', groups: ['system:masters'] }) });
  t.equal(c.status, 201, c.text);
  t.equal(c.json.spec.username, 'admin', 'spec.username is the requester');
  t.same(c.json.spec.groups, ['system:masters', 'system:authenticated'], 'spec.groups are the requester\'s');
  t.notOk(c.json.status?.certificate, 'nothing issued before approval');

  // the main resource cannot change the spec or add approval
  const upd = await s.request('PUT', `${CSRS}/alice`, { body: { ...c.json, spec: { ...c.json.spec, username: 'mallory', signerName: 'example.com/x' } } });
  t.equal(upd.status, 200, upd.text);
  t.equal(upd.json.spec.username, 'admin', 'spec is immutable: the old spec stays');
  t.equal(upd.json.spec.signerName, CLIENT);
  // later writes start from the current object (the update above may have changed its metadata)
  const cur = (await s.get(`${CSRS}/alice`)).json;
  const viaStatus = await s.request('PUT', `${CSRS}/alice/status`, { body: { ...cur, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'x' }] } } });
  t.equal(viaStatus.status, 422, 'Approved cannot be added through status');
  t.match(viaStatus.json.message, /updates may not add a condition of type "Approved"/);

  // approval: Approved + Denied together and duplicates are invalid
  const both = await s.request('PUT', `${CSRS}/alice/approval`, { body: { ...cur, status: { conditions: [{ type: 'Approved', status: 'True' }, { type: 'Denied', status: 'True' }] } } });
  t.equal(both.status, 422);
  t.match(both.json.message, /Approved and Denied conditions are mutually exclusive/);
  const dup = await s.request('PUT', `${CSRS}/alice/approval`, { body: { ...cur, status: { conditions: [{ type: 'Approved', status: 'True' }, { type: 'Approved', status: 'True' }] } } });
  t.equal(dup.status, 422);
  t.match(dup.json.message, /Duplicate value: "Approved"/);

  const ok = await approve(s, cur);
  t.equal(ok.status, 200, ok.text);
  t.ok(ok.json.status.conditions[0].lastUpdateTime, 'condition timestamps filled in');
  const pem = await certificateOf(s, 'alice');
  t.ok(pem, 'the certificate appears within 5 s');
  const cert = new X509Certificate(pem!);
  t.match(cert.subject, /CN=alice/);
  t.notOk(cert.ca, 'never a CA');
  t.ok(cert.verify(new X509Certificate(s.ca).publicKey), 'signed by the server CA (the default signing CA)');
  const days = (Date.parse(cert.validTo) - Date.now()) / 86400_000;
  t.ok(days > 364 && days < 366, `one year by default (${days.toFixed(1)} days)`);

  // removing the approval is refused; the certificate cannot be replaced
  const after = (await s.get(`${CSRS}/alice`)).json;
  const unapprove = await s.request('PUT', `${CSRS}/alice/approval`, { body: { ...after, status: { ...after.status, conditions: [] } } });
  t.equal(unapprove.status, 422);
  t.match(unapprove.json.message, /updates may not remove a condition of type "Approved"/);
  const replace = await s.request('PUT', `${CSRS}/alice/status`, { body: { ...after, status: { ...after.status, certificate: b64(s.ca.toString()) } } });
  t.equal(replace.status, 422);
  t.match(replace.json.message, /updates may not modify existing certificate content/);

  // the issued certificate authenticates at once on the secure port
  const who = await whoamiWithCert(s, pem!, alice.keyPem);
  t.equal(who.status?.userInfo?.username, 'alice');
  t.same(who.status?.userInfo?.groups, ['team-a', 'team-b', 'system:authenticated']);
});

/** POST a SelfSubjectReview with a client certificate on the secure port. */
async function whoamiWithCert(s: TestServer, certPem: string, keyPem: string): Promise<any> {
  const https = await import('node:https');
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    const req = https.request({ host: '127.0.0.1', port: s.port, method: 'POST', path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', ca: s.ca, cert: certPem, key: keyPem, servername: 'localhost', headers: { 'content-type': 'application/json' } }, (res) => {
      let out = '';
      res.on('data', (d) => (out += d));
      res.on('end', () => resolve(JSON.parse(out)));
    });
    req.on('error', reject);
    req.end(body);
  });
}

t.test('validation, authorization and admission', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const r = await makeRequest('CN=bob');
  const post = (name: string, extra: Record<string, unknown> = {}, pem = r.pem, signer = CLIENT, usages = CLIENT_USAGES) => s.request('POST', CSRS, { body: csrBody(name, pem, signer, usages, extra) });

  let x = await post('no-usages', {}, r.pem, CLIENT, []);
  t.equal(x.status, 422);
  t.match(x.json.message, /spec.usages: Required value/);
  x = await post('bad-usage', {}, r.pem, CLIENT, ['client auth', 'flying']);
  t.match(x.json.message, /spec.usages\[1\]: Unsupported value: "flying"/);
  x = await post('dup-usage', {}, r.pem, CLIENT, ['client auth', 'client auth']);
  t.match(x.json.message, /spec.usages\[1\]: Duplicate value: "client auth"/);
  x = await post('no-signer', {}, r.pem, '');
  t.match(x.json.message, /spec.signerName: Required value/);
  x = await post('bad-signer', {}, r.pem, 'not a signer');
  t.match(x.json.message, /spec.signerName: Invalid value/);
  x = await post('legacy', {}, r.pem, 'kubernetes.io/legacy-unknown');
  t.match(x.json.message, /the legacy signerName is not allowed via this API version/);
  x = await post('short', { expirationSeconds: 599 });
  t.match(x.json.message, /may not specify a duration less than 600 seconds/);
  t.equal(x.json.details.kind, 'CertificateSigningRequest');
  t.equal(x.json.details.group, 'certificates.k8s.io');

  // expirationSeconds caps the signer's duration
  const short = await post('short-lived', { expirationSeconds: 3600 });
  t.equal(short.status, 201, short.text);
  await approve(s, short.json);
  const pem = await certificateOf(s, 'short-lived');
  const hours = (Date.parse(new X509Certificate(pem!).validTo) - Date.now()) / 3600_000;
  t.ok(hours > 0.9 && hours <= 1.01, `expirationSeconds caps the lifetime (${hours.toFixed(2)} h)`);

  // approve and sign need the verbs on signers: a user with update on the sub-resources only
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  t.equal((await s.request('POST', `${rbac}/clusterroles`, { body: { metadata: { name: 'csr-writer' }, rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests', 'certificatesigningrequests/approval', 'certificatesigningrequests/status'], verbs: ['get', 'list', 'watch', 'create', 'update'] }] } })).status, 201);
  t.equal((await s.request('POST', `${rbac}/clusterrolebindings`, { body: { metadata: { name: 'csr-writer' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'csr-writer' }, subjects: [{ kind: 'User', name: 'carol', apiGroup: 'rbac.authorization.k8s.io' }] } })).status, 201);
  const carol = { 'Impersonate-User': 'carol' };
  const mine = await s.request('POST', CSRS, { headers: carol, body: csrBody('carols', r.pem, CLIENT, CLIENT_USAGES) });
  t.equal(mine.status, 201, mine.text);
  t.equal(mine.json.spec.username, 'carol');
  const denied = await s.request('PUT', `${CSRS}/carols/approval`, { headers: carol, body: { ...mine.json, status: { conditions: [{ type: 'Approved', status: 'True' }] } } });
  t.equal(denied.status, 403);
  t.equal(denied.json.message, `certificatesigningrequests.certificates.k8s.io "carols" is forbidden: user not permitted to approve requests with signerName "${CLIENT}"`);
  const sign = await s.request('PUT', `${CSRS}/carols/status`, { headers: carol, body: { ...mine.json, status: { certificate: b64(s.ca.toString()) } } });
  t.equal(sign.status, 403);
  t.match(sign.json.message, /user not permitted to sign requests with signerName/);
  // the brand's approver role grants approve on that signer; a wildcard name works too
  t.equal((await s.request('POST', `${rbac}/clusterrolebindings`, { body: { metadata: { name: 'carol-approver' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:certificates.k8s.io:kube-apiserver-client-approver' }, subjects: [{ kind: 'User', name: 'carol', apiGroup: 'rbac.authorization.k8s.io' }] } })).status, 201);
  const approved = await s.request('PUT', `${CSRS}/carols/approval`, { headers: carol, body: { ...mine.json, status: { conditions: [{ type: 'Approved', status: 'True' }] } } });
  t.equal(approved.status, 200, approved.text);
  t.equal((await s.request('POST', `${rbac}/clusterroles`, { body: { metadata: { name: 'signer-star' }, rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['example.com/*'], verbs: ['sign'] }] } })).status, 201);
  t.equal((await s.request('POST', `${rbac}/clusterrolebindings`, { body: { metadata: { name: 'carol-signer' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'signer-star' }, subjects: [{ kind: 'User', name: 'carol', apiGroup: 'rbac.authorization.k8s.io' }] } })).status, 201);
  const ext = await s.request('POST', CSRS, { headers: carol, body: csrBody('external', r.pem, 'example.com/custom', CLIENT_USAGES) });
  t.equal(ext.status, 201, ext.text);
  const signed = await s.request('PUT', `${CSRS}/external/status`, { headers: carol, body: { ...ext.json, status: { certificate: b64(s.ca.toString()) } } });
  t.equal(signed.status, 200, `sign on <domain>/* allows an external signer's status write: ${signed.text}`);
  const ext2 = await s.request('POST', CSRS, { body: csrBody('external-2', r.pem, 'example.com/custom', CLIENT_USAGES) });
  const notCert = await s.request('PUT', `${CSRS}/external-2/status`, { body: { ...ext2.json, status: { certificate: b64('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n') } } });
  t.equal(notCert.status, 422);
  t.match(notCert.json.message, /only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"/);
});

t.test('hostile requests: a clear Status each, nothing signed', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const good = await makeRequest('CN=eve');
  const other = await makeRequest('CN=eve');
  // a request whose signature was made by another key: swap the public key of one into the other
  const forged = forgeSignature(good.pem, other.pem);
  const cases: [string, string, string[], RegExp, number][] = [
    ['malformed', '-----BEGIN CERTIFICATE REQUEST-----\nnot base64 at all!!\n-----END CERTIFICATE REQUEST-----\n', CLIENT_USAGES, /spec.request: Invalid value/, 422],
    ['not-pem', 'hello', CLIENT_USAGES, /PEM block type must be CERTIFICATE REQUEST/, 422],
    ['wrong-block', s.ca.toString(), CLIENT_USAGES, /PEM block type must be CERTIFICATE REQUEST/, 422],
    ['forged', forged, CLIENT_USAGES, /spec.request: Invalid value.*verification/, 422],
    ['huge', `-----BEGIN CERTIFICATE REQUEST-----\n${'A'.repeat(100_000)}\n-----END CERTIFICATE REQUEST-----\n`, CLIENT_USAGES, /request is too large/, 422],
  ];
  for (const [name, pem, usages, msg, code] of cases) {
    const r = await s.request('POST', CSRS, { body: csrBody(name, pem, CLIENT, usages) });
    t.equal(r.status, code, `${name}: ${r.text.slice(0, 200)}`);
    t.equal(r.json?.kind, 'Status', `${name}: a Status`);
    t.match(r.json?.message, msg, name);
  }
  const masters = await makeRequest('CN=eve, O=system:masters');
  const m = await s.request('POST', CSRS, { body: csrBody('masters', masters.pem, CLIENT, CLIENT_USAGES) });
  t.equal(m.status, 403);
  t.equal(m.json.message, `certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of ${CLIENT} signer with system:masters group is not allowed`);
  const oversized = await s.request('POST', CSRS, { raw: JSON.stringify(csrBody('big', 'x'.repeat(4 * 1024 * 1024), CLIENT, CLIENT_USAGES)), headers: { 'content-type': 'application/json' } });
  t.equal(oversized.status, 413, 'a body over the request limit');

  // accepted but refused by the signer: a CA request, wrong usages → Failed, no certificate
  const ca = await makeRequest('CN=eve-ca', { ca: true });
  const caCsr = await s.request('POST', CSRS, { body: csrBody('ca-request', ca.pem, CLIENT, CLIENT_USAGES) });
  t.equal(caCsr.status, 201);
  await approve(s, caCsr.json);
  const usage = await s.request('POST', CSRS, { body: csrBody('server-usage', good.pem, CLIENT, ['digital signature', 'server auth']) });
  await approve(s, usage.json);
  for (const [name, why] of [['ca-request', /CA certificate/], ['server-usage', /usages must include "client auth"/]] as const) {
    const failed = await waitFor(async () => {
      const o = (await s.get(`${CSRS}/${name}`)).json;
      return o.status?.conditions?.find((c: any) => c.type === 'Failed') ? o : undefined;
    });
    t.ok(failed, `${name}: a Failed condition`);
    t.equal(failed?.status?.conditions?.find((c: any) => c.type === 'Failed')?.reason, 'SignerValidationFailure');
    t.match(failed?.status?.conditions?.find((c: any) => c.type === 'Failed')?.message, why);
    t.notOk(failed?.status?.certificate, `${name}: nothing signed`);
  }
  t.ok(s.logs.some((l) => l.includes('csrsigning: signing failed')), 'signing failures are logged');
  const all = (await s.get(CSRS)).json.items;
  t.notOk(all.some((o: any) => o.status?.certificate), 'no request got a certificate');
});

/** Request `a` with the public key of `b` put in: its signature was made by another key than the one it names. */
function forgeSignature(a: string, b: string): string {
  const der = Buffer.from(new x509.Pkcs10CertificateRequest(a).rawData);
  const keyA = Buffer.from(new x509.Pkcs10CertificateRequest(a).publicKey.rawData);
  const keyB = Buffer.from(new x509.Pkcs10CertificateRequest(b).publicKey.rawData);
  const i = der.indexOf(keyA);
  if (i < 0 || keyA.length !== keyB.length) throw new Error('cannot forge: unexpected layout');
  return x509.PemConverter.encode(Buffer.concat([der.subarray(0, i), keyB, der.subarray(i + keyA.length)]), 'CERTIFICATE REQUEST');
}

t.test('node agents: auto-approval after a SubjectAccessReview; the node signers\' restrictions', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const KUBELET_CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';
  const NODE_USAGES = ['key encipherment', 'digital signature', 'client auth'];
  const node = await makeRequest('CN=system:node:n1, O=system:nodes');
  // a bootstrapper without the nodeclient permission: pending
  const pending = await s.request('POST', CSRS, { headers: { 'Impersonate-User': 'system:bootstrap:abcdef', 'Impersonate-Group': 'system:bootstrappers' }, body: csrBody('node-csr-1', node.pem, KUBELET_CLIENT, NODE_USAGES) });
  t.equal(pending.status, 403, 'the bootstrapper may not even create without a binding');
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  for (const role of ['system:node-bootstrapper', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient']) {
    t.equal((await s.request('POST', `${rbac}/clusterrolebindings`, { body: { metadata: { name: role.replace(/:/g, '-') }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ kind: 'Group', name: 'system:bootstrappers', apiGroup: 'rbac.authorization.k8s.io' }] } })).status, 201);
  }
  const c = await s.request('POST', CSRS, { headers: { 'Impersonate-User': 'system:bootstrap:abcdef', 'Impersonate-Group': 'system:bootstrappers' }, body: csrBody('node-csr-1', node.pem, KUBELET_CLIENT, NODE_USAGES) });
  t.equal(c.status, 201, c.text);
  const pem = await certificateOf(s, 'node-csr-1');
  t.ok(pem, 'auto-approved and issued');
  const o = (await s.get(`${CSRS}/node-csr-1`)).json;
  t.match(o.status.conditions[0], { type: 'Approved', reason: 'AutoApproved', message: 'Auto approving kubelet client certificate after SubjectAccessReview.' });
  t.notOk(new X509Certificate(pem!).subjectAltName, 'no alternative names');

  // a node subject with the wrong usages is not auto-approved
  const wrong = await s.request('POST', CSRS, { body: csrBody('node-csr-2', node.pem, KUBELET_CLIENT, ['digital signature', 'client auth']) });
  t.equal(wrong.status, 201);
  await new Promise((r) => setTimeout(r, 300));
  t.notOk((await s.get(`${CSRS}/node-csr-2`)).json.status?.conditions, 'left pending');
  // approved by hand, the signer refuses it
  await approve(s, wrong.json);
  const failed = await waitFor(async () => ((await s.get(`${CSRS}/node-csr-2`)).json.status?.conditions?.find((x: any) => x.type === 'Failed')));
  t.match(failed?.message, /usages must be exactly/);

  // serving: needs a DNS or IP name; the names are kept
  const SERVING = 'kubernetes.io/kubelet-serving';
  const SERVING_USAGES = ['key encipherment', 'digital signature', 'server auth'];
  const noSan = await s.request('POST', CSRS, { body: csrBody('serving-1', node.pem, SERVING, SERVING_USAGES) });
  await approve(s, noSan.json);
  t.match((await waitFor(async () => ((await s.get(`${CSRS}/serving-1`)).json.status?.conditions?.find((x: any) => x.type === 'Failed'))))?.message, /at least one DNS or IP/);
  const withSan = await makeRequest('CN=system:node:n1, O=system:nodes', { dns: ['n1.example'], ip: ['10.0.0.1'] });
  const sv = await s.request('POST', CSRS, { body: csrBody('serving-2', withSan.pem, SERVING, SERVING_USAGES) });
  await approve(s, sv.json);
  const spem = await certificateOf(s, 'serving-2');
  t.match(new X509Certificate(spem!).subjectAltName, /DNS:n1.example/);
  const notNode = await makeRequest('CN=someone, O=system:nodes', { dns: ['x.example'] });
  const nn = await s.request('POST', CSRS, { body: csrBody('serving-3', notNode.pem, SERVING, SERVING_USAGES) });
  await approve(s, nn.json);
  t.match((await waitFor(async () => ((await s.get(`${CSRS}/serving-3`)).json.status?.conditions?.find((x: any) => x.type === 'Failed'))))?.message, /system:node:/);
});

t.test('the cleaner deletes requests an hour after approval or denial', async (t) => {
  const dir = t.testdir({});
  const config = path.join(dir, 'config.yaml');
  writeFileSync(config, 'controllers:\n  - plugin: csrsigning\n  - plugin: csrcleaner\n    options: {intervalSeconds: 0.5}\n');
  const s = await withServer(t, { brand: 'kubernetes', args: ['--config', config] });
  const r = await makeRequest('CN=old');
  const hourAgo = new Date(Date.now() - 3700_000).toISOString().replace(/\.\d+Z$/, 'Z');
  for (const [name, type] of [['old-denied', 'Denied'], ['fresh-denied', 'Denied']] as const) {
    const c = await s.request('POST', CSRS, { body: csrBody(name, r.pem, 'example.com/none', CLIENT_USAGES) });
    const cond: Record<string, string> = { type, status: 'True', reason: 'Test' };
    if (name.startsWith('old')) cond.lastUpdateTime = hourAgo;
    t.equal((await s.request('PUT', `${CSRS}/${name}/approval`, { body: { ...c.json, status: { conditions: [cond] } } })).status, 200);
  }
  const gone = await waitFor(async () => ((await s.get(`${CSRS}/old-denied`)).status === 404 ? true : undefined), 5000);
  t.ok(gone, 'denied more than an hour ago: deleted');
  t.equal((await s.get(`${CSRS}/fresh-denied`)).status, 200, 'denied just now: kept');
});

t.test('kubectl: create, approve, the certificate, whoami on the secure port; deny', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const dave = await makeRequest('CN=dave, O=devs');
  const manifest = JSON.stringify(csrBody('dave', dave.pem, CLIENT, CLIENT_USAGES));
  const created = await kubectl(s, ['create', '-f', '-'], { input: manifest });
  t.equal(created.code, 0, created.stderr);
  const listed = await kubectl(s, ['get', 'csr']);
  t.match(listed.stdout, /dave\s+\S+\s+kubernetes.io\/kube-apiserver-client\s+admin\s+<none>\s+Pending/);
  const appr = await kubectl(s, ['certificate', 'approve', 'dave']);
  t.equal(appr.code, 0, appr.stderr);
  t.match(appr.stdout, /certificatesigningrequest.certificates.k8s.io\/dave approved/);
  const started = Date.now();
  const pem = await certificateOf(s, 'dave', 5000);
  t.ok(pem, `issued (${Date.now() - started} ms)`);
  const dir = t.testdir({ 'dave.crt': pem!, 'dave.key': dave.keyPem, 'ca.crt': s.ca.toString() });
  const who = await kubectl(s, ['--kubeconfig', '/dev/null', '--server', `https://127.0.0.1:${s.port}`, '--certificate-authority', path.join(dir, 'ca.crt'),
    '--client-certificate', path.join(dir, 'dave.crt'), '--client-key', path.join(dir, 'dave.key'), 'auth', 'whoami', '-o', 'json']);
  t.equal(who.code, 0, who.stderr);
  t.same(JSON.parse(who.stdout).status.userInfo, { username: 'dave', groups: ['devs', 'system:authenticated'] });

  const erin = await makeRequest('CN=erin');
  t.equal((await kubectl(s, ['create', '-f', '-'], { input: JSON.stringify(csrBody('erin', erin.pem, CLIENT, CLIENT_USAGES)) })).code, 0);
  const deny = await kubectl(s, ['certificate', 'deny', 'erin']);
  t.equal(deny.code, 0, deny.stderr);
  await new Promise((r) => setTimeout(r, 500));
  const o = (await s.get(`${CSRS}/erin`)).json;
  t.equal(o.status.conditions[0].type, 'Denied');
  t.notOk(o.status.certificate, 'a denied request gets no certificate');
  t.match((await kubectl(s, ['get', 'csr', 'erin'])).stdout, /Denied/);
});

t.test('--cluster-signing-cert-file, --cluster-signing-key-file and --cluster-signing-duration', async (t) => {
  const { generateCA } = await import('../../kernel/ops/pki.js');
  const ca = await generateCA({ CN: 'other signing CA', days: 30 });
  const dir = t.testdir({ 'ca.crt': ca.certPem, 'ca.key': ca.keyPem });
  const s = await withServer(t, { brand: 'kubernetes', args: ['--cluster-signing-cert-file', path.join(dir, 'ca.crt'), '--cluster-signing-key-file', path.join(dir, 'ca.key'), '--cluster-signing-duration', '2h'] });
  const r = await makeRequest('CN=frank');
  const c = await s.request('POST', CSRS, { body: csrBody('frank', r.pem, CLIENT, CLIENT_USAGES) });
  await approve(s, c.json);
  const cert = new X509Certificate((await certificateOf(s, 'frank'))!);
  t.ok(cert.verify(new X509Certificate(ca.certPem).publicKey), 'issued by the configured CA');
  t.match(cert.issuer, /other signing CA/);
  const hours = (Date.parse(cert.validTo) - Date.now()) / 3600_000;
  t.ok(hours > 1.9 && hours <= 2.01, `the configured duration (${hours.toFixed(2)} h)`);
  // not a client CA of this server: the certificate does not authenticate
  const who = await whoamiWithCert(s, cert.toString(), r.keyPem);
  t.not(who.status?.userInfo?.username, 'frank', 'a certificate from a CA the server does not trust is not a user');
});

t.test('concurrent writers: creates of many requests, approvals and signatures of one', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const r = await makeRequest('CN=grace');
  const creates = await Promise.all(Array.from({ length: 20 }, (_, i) => s.request('POST', CSRS, { body: csrBody(`many-${i}`, r.pem, 'example.com/external', CLIENT_USAGES) })));
  t.same(creates.map((c) => c.status), creates.map(() => 201), 'twenty concurrent creates');
  t.ok(creates.every((c) => c.json.spec.username === 'admin'), 'each stamped with its requester');
  t.equal((await s.get(CSRS)).json.items.length, 20);

  const one = creates[0].json;
  // with the same resourceVersion exactly one approval wins, the others conflict
  const approvals = await Promise.all(Array.from({ length: 8 }, () => approve(s, one)));
  t.equal(approvals.filter((a) => a.status === 200).length, 1, 'one approval with that resourceVersion succeeds');
  t.ok(approvals.filter((a) => a.status !== 200).every((a) => a.status === 409 && a.json.reason === 'Conflict'), 'the rest are 409 Conflict');
  // unconditional approvals of another request: all succeed, one Approved condition results
  const two = creates[1].json;
  const body = { ...two, metadata: { ...two.metadata, resourceVersion: undefined }, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test' }] } };
  const uncond = await Promise.all(Array.from({ length: 8 }, () => s.request('PUT', `${CSRS}/${two.metadata.name}/approval`, { body })));
  t.ok(uncond.every((a) => a.status === 200), uncond.map((a) => a.status).join(','));
  t.equal((await s.get(`${CSRS}/${two.metadata.name}`)).json.status.conditions.filter((c: any) => c.type === 'Approved').length, 1, 'exactly one Approved condition');

  // two external signers racing to set the certificate without a resourceVersion: the first wins,
  // the other may not replace it
  const cur = (await s.get(`${CSRS}/${two.metadata.name}`)).json;
  const { generateCA, signCert } = await import('../../kernel/ops/pki.js');
  const ca = await generateCA({ CN: 'external' });
  const certs = await Promise.all([0, 1].map(() => signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: 'grace' }, usages: ['clientAuth'], days: 1 })));
  const signs = await Promise.all(certs.map((c) => s.request('PUT', `${CSRS}/${two.metadata.name}/status`, { body: { ...cur, metadata: { ...cur.metadata, resourceVersion: undefined }, status: { ...cur.status, certificate: b64(c.certPem) } } })));
  t.same(signs.map((x) => x.status).sort(), [200, 422], 'one signature stored, the other refused');
  t.match(signs.find((x) => x.status === 422)!.json.message, /updates may not modify existing certificate content/);
});

t.test('approval keeps the metadata a write carries, and only the conditions of spec and status', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', withoutControllers: ['csrsigning', 'csrapproving'] });
  const bob = await makeRequest('CN=bob');
  t.equal((await s.request('POST', CSRS, { body: csrBody('bob', bob.pem, CLIENT, CLIENT_USAGES) })).status, 201);
  const patch = await s.request('PATCH', `${CSRS}/bob/approval`, {
    headers: { 'content-type': 'application/merge-patch+json' },
    body: {
      metadata: { annotations: { 'example.com/approved-by': 'ticket-42' }, labels: { team: 'a' } },
      spec: { signerName: 'example.com/other' },
      status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Ticket', message: 'ticket 42' }], certificate: b64('not a certificate') },
    },
  });
  t.equal(patch.status, 200, patch.text);
  t.match(patch.json.status.conditions, [{ type: 'Approved', status: 'True', reason: 'Ticket' }], 'the condition');
  t.equal(patch.json.metadata.annotations?.['example.com/approved-by'], 'ticket-42', 'the annotation');
  t.equal(patch.json.metadata.labels?.team, 'a', 'the label');
  t.equal(patch.json.spec.signerName, CLIENT, 'not the spec');
  t.notOk(patch.json.status.certificate, 'nor the certificate');
  const stored = (await s.get(`${CSRS}/bob`)).json;
  t.same(stored.metadata.annotations, { 'example.com/approved-by': 'ticket-42' }, 'stored');
  t.same(stored.metadata.labels, { team: 'a' });

  // an update through approval may drop the annotation again; the uid is still the server's
  const put = await s.request('PUT', `${CSRS}/bob/approval`, { body: { ...stored, metadata: { ...stored.metadata, annotations: {}, uid: 'not-the-uid' } } });
  t.equal(put.status, 409, 'a uid that is not the object\'s is a precondition failure');
  const put2 = await s.request('PUT', `${CSRS}/bob/approval`, { body: { ...stored, metadata: { ...stored.metadata, annotations: {} } } });
  t.equal(put2.status, 200, put2.text);
  t.notOk(put2.json.metadata.annotations?.['example.com/approved-by'], 'the annotation removed');
  t.equal(put2.json.metadata.uid, stored.metadata.uid);
  t.equal(put2.json.metadata.creationTimestamp, stored.metadata.creationTimestamp);
});
