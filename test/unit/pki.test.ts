import t from 'tap';
import { X509Certificate, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { ensurePki, generateCA, signCert, writeKubeconfig, x509 } from '../../kernel/ops/pki.js';

const hosts = ['127.0.0.1', 'localhost', '::1'];
const mode = async (f: string) => (await stat(f)).mode & 0o777;

t.test('first start creates everything; later starts reuse it', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'pki-test-'));
  const p = await ensurePki(dataDir, { hosts, brand: 'cluster' });
  t.equal(p.caFile, path.join(dataDir, 'pki', 'ca.crt'));
  t.equal(p.tokenFile, path.join(dataDir, 'pki', 'tokens.csv'));
  t.equal(p.kubeconfigPath, path.join(dataDir, 'admin.kubeconfig'));

  const ca = new X509Certificate(p.caCertPem);
  t.ok(ca.ca, 'CA certificate is a CA');
  t.ok(ca.verify(ca.publicKey), 'self-signed');
  t.equal(ca.publicKey.asymmetricKeyType, 'ec');
  const caX = new x509.X509Certificate(p.caCertPem);
  const ku = caX.getExtension(x509.KeyUsagesExtension)!;
  t.ok(ku.usages & x509.KeyUsageFlags.keyCertSign && ku.usages & x509.KeyUsageFlags.cRLSign, 'keyCertSign, cRLSign');
  const years = (caX.notAfter.getTime() - Date.now()) / (365 * 86_400_000);
  t.ok(years > 9.9 && years < 10.1, `CA valid ~10 years (${years.toFixed(2)})`);

  const certPem = await readFile(p.certFile, 'utf8');
  const cert = new X509Certificate(certPem);
  t.ok(cert.verify(ca.publicKey), 'serving certificate signed by the CA');
  t.ok(cert.checkIssued(ca), 'issuer matches');
  t.notOk(cert.ca);
  t.equal(cert.subjectAltName, 'DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
  t.same(cert.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'serverAuth');
  t.ok(cert.checkHost('localhost') && cert.checkIP('127.0.0.1'));
  // @peculiar/x509's own chain builder agrees
  const chain = await new x509.X509ChainBuilder({ certificates: [caX] }).build(new x509.X509Certificate(certPem));
  t.equal(chain.length, 2);

  // the key is PKCS#8 PEM, owner-only, and matches the certificate
  const keyPem = await readFile(p.keyFile, 'utf8');
  t.match(keyPem, /^-----BEGIN PRIVATE KEY-----/);
  const sig = sign('sha256', Buffer.from('x'), createPrivateKey(keyPem));
  t.ok(verify('sha256', Buffer.from('x'), createPublicKey(certPem), sig), 'key matches certificate');
  for (const f of [p.keyFile, path.join(dataDir, 'pki', 'ca.key'), p.tokenFile, p.kubeconfigPath]) t.equal(await mode(f), 0o600, `${path.basename(f)} is 0600`);

  t.match(p.adminToken, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
  t.equal(await readFile(p.tokenFile, 'utf8'), `${p.adminToken},admin,admin-uid,"system:masters"\n`);

  const kc = YAML.parse(await readFile(p.kubeconfigPath, 'utf8'));
  t.equal(kc['current-context'], 'admin@cluster-apiserver');
  t.same(kc.contexts, [{ name: 'admin@cluster-apiserver', context: { cluster: 'cluster-apiserver', user: 'admin' } }]);
  t.equal(kc.clusters[0].name, 'cluster-apiserver');
  t.match(kc.clusters[0].cluster.server, /^https:\/\/127\.0\.0\.1:\d+$/);
  t.equal(Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), p.caCertPem);
  t.same(kc.users, [{ name: 'admin', user: { token: p.adminToken } }]);

  // second start: everything reused
  const again = await ensurePki(dataDir, { hosts: ['other.example'], brand: 'cluster' });
  t.equal(again.caCertPem, p.caCertPem);
  t.equal(again.adminToken, p.adminToken);
  t.equal(await readFile(p.certFile, 'utf8'), certPem, 'serving certificate kept');

  // a lost serving certificate is recreated under the same CA
  await rm(p.certFile);
  const third = await ensurePki(dataDir, { hosts: ['other.example'], brand: 'cluster' });
  t.equal(third.caCertPem, p.caCertPem, 'CA never regenerated');
  const renewed = new X509Certificate(await readFile(p.certFile, 'utf8'));
  t.ok(renewed.verify(ca.publicKey));
  t.equal(renewed.subjectAltName, 'DNS:other.example');

  // half a CA is an error, not a new CA
  await rm(path.join(dataDir, 'pki', 'ca.key'));
  await t.rejects(ensurePki(dataDir, { hosts, brand: 'cluster' }), /found only one of ca\.crt and ca\.key/);
});

t.test('writeKubeconfig rewrites the server address', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'pki-test-'));
  const file = path.join(dir, 'admin.kubeconfig');
  await writeKubeconfig(file, { server: 'https://127.0.0.1:1', caPem: 'x', token: 't' });
  await writeKubeconfig(file, { server: 'https://127.0.0.1:34567', caPem: 'x', token: 't' });
  t.equal(YAML.parse(await readFile(file, 'utf8')).clusters[0].cluster.server, 'https://127.0.0.1:34567');
  t.equal(await mode(file), 0o600);
});

t.test('signCert: client certificates with groups', async (t) => {
  const ca = await generateCA({ CN: 'test-ca', days: 1 });
  const leaf = await signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: 'jane', O: ['dev', 'ops'] }, usages: ['clientAuth'], days: 0.5 });
  const cert = new X509Certificate(leaf.certPem);
  t.ok(cert.verify(new X509Certificate(ca.certPem).publicKey));
  t.equal(cert.subject, 'O=dev\nO=ops\nCN=jane');
  t.same(cert.keyUsage, ['1.3.6.1.5.5.7.3.2'], 'clientAuth');
  t.equal(cert.subjectAltName, undefined);
  t.ok(new Date(cert.validTo).getTime() - Date.now() < 13 * 3600_000, 'fractional days');
  t.match(leaf.keyPem, /BEGIN PRIVATE KEY/);

  // certify a given public key (as a CSR signer does): no private key comes back
  const csrKeys = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const fromCsr = await signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: 'node' }, usages: ['clientAuth', 'serverAuth'], days: 1, publicKey: csrKeys.publicKey });
  t.equal(fromCsr.keyPem, '');
  t.same(new X509Certificate(fromCsr.certPem).keyUsage?.sort(), ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
});
