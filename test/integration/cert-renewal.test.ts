// Certificates made at first start (serving, admin client, front-proxy client) last 365 days; a
// start within 90 days of their end makes them again from the same CA and says so in the log, so a
// server left running for a year keeps working with the clients that trust its CA.
import t from 'tap';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import YAML from 'yaml';
import { signCert } from '../../kernel/ops/pki.js';
import { withServer } from '../lib/server.js';

const DAY = 86_400_000;
const daysLeft = (pem: string | Buffer) => (Date.parse(new X509Certificate(pem).validTo) - Date.now()) / DAY;

t.test('leaf certificates near their end are renewed at start; the CA stays', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const pki = (f: string) => path.join(s.dataDir, 'pki', f);
  const ca = readFileSync(pki('ca.crt'));
  const caKey = readFileSync(pki('ca.key'), 'utf8');
  const fpCa = readFileSync(pki('front-proxy-ca.crt'), 'utf8');
  const fpKey = readFileSync(pki('front-proxy-ca.key'), 'utf8');
  await s.stop();

  // As if the server had run for 300 days: every leaf has 30 days left (the serving one expired).
  const leaves: [string, Promise<{ certPem: string; keyPem: string }>][] = [
    ['apiserver', signCert({ caCertPem: ca.toString(), caKeyPem: caKey, subject: { CN: 'kube-apiserver' }, dnsNames: ['localhost'], ips: ['127.0.0.1'], usages: ['serverAuth'], days: 30 })],
    ['admin-client', signCert({ caCertPem: ca.toString(), caKeyPem: caKey, subject: { CN: 'admin', O: ['system:masters'] }, usages: ['clientAuth'], days: 30 })],
    ['front-proxy-client', signCert({ caCertPem: fpCa, caKeyPem: fpKey, subject: { CN: 'front-proxy-client' }, usages: ['clientAuth'], days: 30 })],
  ];
  for (const [name, made] of leaves) {
    const c = await made;
    writeFileSync(pki(`${name}.crt`), c.certPem);
    writeFileSync(pki(`${name}.key`), c.keyPem);
  }
  await s.restart();

  const renewed = s.logs.filter((l) => l.includes('renewed a certificate made at first start'));
  t.equal(renewed.length, 3, `each renewal is logged:\n${renewed.join('\n')}`);
  for (const name of ['apiserver', 'admin-client', 'front-proxy-client']) t.ok(daysLeft(readFileSync(pki(`${name}.crt`))) > 360, `${name}: a new year`);
  t.same(readFileSync(pki('ca.crt')), ca, 'the CA is unchanged');

  // The served certificate is the new one, trusted through the same CA.
  const served = await new Promise<string>((resolve, reject) => {
    const sock = tls.connect({ port: s.port, host: '127.0.0.1', ca, servername: 'localhost' }, () => { resolve(sock.getPeerX509Certificate()!.validTo); sock.destroy(); });
    sock.on('error', reject);
  });
  t.ok((Date.parse(served) - Date.now()) / DAY > 360, `the server presents the renewed certificate (until ${served})`);

  // The admin-cert kubeconfig carries the renewed client certificate, and it authenticates.
  const kc = YAML.parse(readFileSync(path.join(s.dataDir, 'admin-cert.kubeconfig'), 'utf8'));
  const user = kc.users[0].user;
  const cert = Buffer.from(user['client-certificate-data'], 'base64');
  t.ok(daysLeft(cert) > 360, 'admin-cert.kubeconfig holds the renewed certificate');
  const status = await new Promise<number>((resolve, reject) => {
    https.get({ host: '127.0.0.1', port: s.port, path: '/api/v1/namespaces/default', ca, cert, key: Buffer.from(user['client-key-data'], 'base64') }, (res) => { res.resume(); resolve(res.statusCode!); }).on('error', reject);
  });
  t.equal(status, 200, 'the renewed admin client certificate authenticates');

  // A second start with good certificates renews nothing.
  const before = s.logs.length;
  await s.restart();
  t.notOk(s.logs.slice(before).some((l) => l.includes('renewed a certificate')), 'nothing renewed when nothing is due');
});
