// Cost of the certificate API's crypto: `node dist/bench/certs.js [runs]`. Checks a PKCS#10
// request (parse + signature) and issues a certificate with a P-256 CA, `runs` times each, and
// prints wall time and process CPU (main thread plus libuv's pool, where WebCrypto works) per call.
import { webcrypto } from 'node:crypto';
import { mkdtempSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { generateCA, x509 } from '../kernel/ops/pki.js';
import { checkedRequest, issue, loadSigningCA, parseRequest } from '../plugins/lib/certificates.js';

const runs = Number(process.argv[2] ?? 300);
const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-certs-'));
mkdirSync(path.join(dir, 'pki'));
const ca = await generateCA({ CN: 'bench CA' });
writeFileSync(path.join(dir, 'pki', 'ca.crt'), ca.certPem);
writeFileSync(path.join(dir, 'pki', 'ca.key'), ca.keyPem);
const signing = await loadSigningCA(dir);
const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
const pem = (await x509.Pkcs10CertificateRequestGenerator.create({ name: 'CN=bench, O=group', keys, signingAlgorithm: EC })).toString('pem');
const csr = { spec: { request: Buffer.from(pem).toString('base64') } };
const parsed = parseRequest(pem);
if ('error' in parsed) throw new Error(parsed.error);

async function measure(label: string, fn: () => Promise<unknown>) {
  for (let i = 0; i < 20; i++) await fn();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) await fn();
  const wall = (performance.now() - t0) / runs;
  const cpu = process.cpuUsage(cpu0);
  console.log(`${label.padEnd(40)} ${wall.toFixed(2)} ms wall, ${((cpu.user + cpu.system) / 1000 / runs).toFixed(2)} ms CPU per call`);
}
await measure('check request (parse + signature)', () => checkedRequest(csr));
await measure('issue certificate (P-256 CA)', () => issue({ ca: signing, csr: parsed.csr, usages: ['digital signature', 'client auth'], seconds: 3600, keepSans: true }));
rmSync(dir, { recursive: true, force: true });
