// What the certificate API's pieces share: reading a CertificateSigningRequest's PKCS#10 request,
// the known key usages, and issuing a certificate for a request with a CA (the built-in signers).
import type { Pkcs10CertificateRequest, X509Certificate as PX509 } from '@peculiar/x509';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { KObject, PluginHost, UserInfo } from '../../kernel/contracts/index.js';
import { importSigningKey, serial, x509 } from '../../kernel/ops/pki.js';
import { isObj } from './json.js';

/** The reference's key usage names (certificates/v1 KeyUsage). */
export const KNOWN_USAGES = [
  'signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement', 'data encipherment',
  'cert sign', 'crl sign', 'encipher only', 'decipher only', 'any', 'server auth', 'client auth', 'code signing',
  'email protection', 's/mime', 'ipsec end system', 'ipsec tunnel', 'ipsec user', 'timestamping', 'ocsp signing',
  'microsoft sgc', 'netscape sgc',
] as const;

/** Largest spec.request accepted (PEM text after base64 decoding): generous for any real key. */
export const MAX_REQUEST_BYTES = 64 * 1024;

type J = Record<string, any>;
export const strList = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

export function specOf(csr: KObject): J { return isObj(csr.spec) ? csr.spec : {}; }
export function statusOf(csr: KObject): J { return isObj(csr.status) ? csr.status : {}; }
export function conditionsOf(csr: KObject): J[] { const c = statusOf(csr).conditions; return Array.isArray(c) ? c.filter(isObj) : []; }
export function hasCondition(csr: KObject, type: string): boolean { return conditionsOf(csr).some((c) => c.type === type && (c.status ?? 'True') === 'True'); }

/** The PEM text of spec.request (base64 in JSON), or why not. */
export function requestPem(csr: KObject): { pem: string } | { error: string } {
  const raw = specOf(csr).request;
  if (typeof raw !== 'string' || !raw) return { error: 'PEM block type must be CERTIFICATE REQUEST' };
  const bytes = Buffer.from(raw, 'base64');
  if (bytes.length > MAX_REQUEST_BYTES) return { error: `request is too large: ${bytes.length} bytes, at most ${MAX_REQUEST_BYTES}` };
  return { pem: bytes.toString('latin1') };
}

/** Parses the first PEM block, which must be a CERTIFICATE REQUEST (as the reference's ParseCSR). */
export function parseRequest(pem: string): { csr: Pkcs10CertificateRequest } | { error: string } {
  const m = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/.exec(pem);
  if (!m || m[1] !== 'CERTIFICATE REQUEST') return { error: 'PEM block type must be CERTIFICATE REQUEST' };
  if (/^[A-Za-z-]+:/m.test(m[2])) return { error: 'PEM block headers are not allowed' };
  try {
    return { csr: new x509.Pkcs10CertificateRequest(Buffer.from(m[2].replace(/\s+/g, ''), 'base64')) };
  } catch (e) {
    return { error: `asn1: structure error: ${(e as Error).message}` };
  }
}

/** Parsed, signature-checked request of a CSR object; the error text otherwise. */
export async function checkedRequest(obj: KObject): Promise<{ csr: Pkcs10CertificateRequest } | { error: string }> {
  const p = requestPem(obj);
  if ('error' in p) return p;
  const r = parseRequest(p.pem);
  if ('error' in r) return r;
  let ok = false;
  try { ok = await r.csr.verify(); } catch { ok = false; }
  return ok ? r : { error: 'x509: ECDSA verification failure' };
}

/** Subject common name and organizations of a request. */
export function subjectOf(csr: Pkcs10CertificateRequest): { CN: string; O: string[] } {
  const n = csr.subjectName;
  return { CN: n.getField('CN')[0] ?? '', O: n.getField('O') };
}

export interface Sans { dns: string[]; ip: string[]; email: string[]; uri: string[] }
export function sansOf(csr: Pkcs10CertificateRequest): Sans {
  const out: Sans = { dns: [], ip: [], email: [], uri: [] };
  for (const n of sanExtension(csr)?.names.items ?? []) {
    if (n.type === 'dns') out.dns.push(n.value);
    else if (n.type === 'ip') out.ip.push(n.value);
    else if (n.type === 'email') out.email.push(n.value);
    else if (n.type === 'url') out.uri.push(n.value);
  }
  return out;
}

function sanExtension(csr: Pkcs10CertificateRequest) {
  return csr.extensions.find((e): e is InstanceType<typeof x509.SubjectAlternativeNameExtension> => e instanceof x509.SubjectAlternativeNameExtension);
}

/** Whether the request asks for a CA certificate (basic constraints CA=true). */
export function requestsCA(csr: Pkcs10CertificateRequest): boolean {
  return csr.extensions.some((e) => e instanceof x509.BasicConstraintsExtension && e.ca);
}

/** The requester's identity, as the server stamps it on spec (username, uid, groups, extra). */
export function requester(csr: KObject): UserInfo {
  const s = specOf(csr);
  const extra: Record<string, string[]> = {};
  if (isObj(s.extra)) for (const [k, v] of Object.entries(s.extra)) extra[k] = strList(v);
  return { username: typeof s.username === 'string' ? s.username : '', uid: typeof s.uid === 'string' ? s.uid : undefined, groups: strList(s.groups), extra };
}

// ---------------------------------------------------------------- issuing

const KEY_USAGE_FLAGS: Record<string, number> = {
  'signing': x509.KeyUsageFlags.digitalSignature,
  'digital signature': x509.KeyUsageFlags.digitalSignature,
  'content commitment': x509.KeyUsageFlags.nonRepudiation,
  'key encipherment': x509.KeyUsageFlags.keyEncipherment,
  'key agreement': x509.KeyUsageFlags.keyAgreement,
  'data encipherment': x509.KeyUsageFlags.dataEncipherment,
  'cert sign': x509.KeyUsageFlags.keyCertSign,
  'crl sign': x509.KeyUsageFlags.cRLSign,
  'encipher only': x509.KeyUsageFlags.encipherOnly,
  'decipher only': x509.KeyUsageFlags.decipherOnly,
};
const EXT_USAGE_OIDS: Record<string, string> = {
  'any': '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  'timestamping': '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

export interface SigningCA {
  cert: PX509;
  certPem: string;
  key: CryptoKey;
  alg: Algorithm | EcdsaParams;
}

/** Reads the signing CA: --cluster-signing-cert-file / -key-file, by default the server's own CA. */
export async function loadSigningCA(dataDir: string, certFile?: string, keyFile?: string): Promise<SigningCA> {
  const cf = certFile ?? path.join(dataDir, 'pki', 'ca.crt');
  const kf = keyFile ?? path.join(dataDir, 'pki', 'ca.key');
  const certPem = await readFile(cf, 'utf8');
  const { key, alg } = await importSigningKey(await readFile(kf, 'utf8'));
  return { cert: new x509.X509Certificate(certPem), certPem, key, alg };
}

export interface IssueOptions {
  ca: SigningCA;
  csr: Pkcs10CertificateRequest;
  usages: string[];
  /** Lifetime: the signer's duration, capped by spec.expirationSeconds. */
  seconds: number;
  /** Copy the request's subject alternative names into the certificate. */
  keepSans: boolean;
}

/** Backdating, as the reference signer does, so a slightly slow clock still accepts a new certificate. */
const BACKDATE_MS = 5 * 60_000;

/** A leaf certificate (never a CA) for the request's subject and public key; PEM. */
export async function issue(o: IssueOptions): Promise<string> {
  const now = Date.now();
  let flags = 0;
  for (const u of o.usages) flags |= KEY_USAGE_FLAGS[u] ?? 0;
  const eku = [...new Set(o.usages.map((u) => EXT_USAGE_OIDS[u]).filter(Boolean))];
  const publicKey = await o.csr.publicKey.export();
  const extensions: InstanceType<typeof x509.Extension>[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    await x509.AuthorityKeyIdentifierExtension.create(o.ca.cert.publicKey),
  ];
  if (flags) extensions.push(new x509.KeyUsagesExtension(flags, true));
  if (eku.length) extensions.push(new x509.ExtendedKeyUsageExtension(eku));
  const san = sanExtension(o.csr);
  if (o.keepSans && san) extensions.push(new x509.SubjectAlternativeNameExtension(san.names.toJSON()));
  // The certificate never outlives the CA.
  const notAfter = Math.min(now + o.seconds * 1000, o.ca.cert.notAfter.getTime());
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: o.csr.subjectName,
    issuer: o.ca.cert.subjectName,
    publicKey,
    signingKey: o.ca.key,
    signingAlgorithm: o.ca.alg,
    notBefore: new Date(Math.max(now - BACKDATE_MS, o.ca.cert.notBefore.getTime())),
    notAfter: new Date(notAfter),
    extensions,
  });
  return cert.toString('pem');
}

// ---------------------------------------------------------------- authorization on signers

/**
 * Whether the user may `verb` (approve, sign) requests for a signer: verb on resource `signers` of
 * the certificates group, named either `<domain>/<path>` or `<domain>/*`.
 */
export async function mayUseSigner(host: PluginHost, user: UserInfo, verb: string, signerName: string): Promise<boolean> {
  const group = `certificates.${host.brand.domain}`;
  const names = [signerName];
  const slash = signerName.indexOf('/');
  if (slash > 0) names.push(`${signerName.slice(0, slash)}/*`);
  for (const name of names) {
    const d = await host.authorize({ user, isResourceRequest: true, path: '', verb, apiPrefix: 'apis', apiGroup: group, apiVersion: '*', namespace: '', resource: 'signers', subresource: '', name });
    if (d.decision === 'allow') return true;
  }
  return false;
}

/** Whether an admission request is a write to certificatesigningrequests (optionally one sub-resource). */
export function isCSRWrite(a: { resource: { group: string; resource: string }; subresource: string }, brandDomain: string, subresource?: string): boolean {
  // (asked on every write: the resource first, so no string is built for other resources)
  return a.resource.resource === 'certificatesigningrequests' && a.resource.group === `certificates.${brandDomain}` && (subresource === undefined || a.subresource === subresource);
}
