// Certificate signing requests for tests: a fresh key and its PKCS#10 request.
import { webcrypto } from 'node:crypto';
import { x509 } from '../../kernel/ops/pki.js';

export const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

export interface Req { pem: string; keyPem: string; keys: CryptoKeyPair }

/** A fresh P-256 key and a PKCS#10 request for `subject` ("CN=x, O=y"), with optional extensions. */
export async function makeRequest(subject: string, o: { dns?: string[]; ip?: string[]; ca?: boolean; keys?: CryptoKeyPair } = {}): Promise<Req> {
  const keys = o.keys ?? (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']) as CryptoKeyPair);
  const extensions: InstanceType<typeof x509.Extension>[] = [];
  const sans = [...(o.dns ?? []).map((value) => ({ type: 'dns' as const, value })), ...(o.ip ?? []).map((value) => ({ type: 'ip' as const, value }))];
  if (sans.length) extensions.push(new x509.SubjectAlternativeNameExtension(sans));
  if (o.ca) extensions.push(new x509.BasicConstraintsExtension(true, undefined, true));
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: subject, keys, signingAlgorithm: EC, extensions });
  const keyPem = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  return { pem: csr.toString('pem'), keyPem, keys };
}

