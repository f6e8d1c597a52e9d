// First-start credentials: a CA, a serving certificate, an admin token and an admin kubeconfig,
// created under <dataDir>/pki once and reused afterwards. Keys are ECDSA P-256, PKCS#8 PEM.
import { createPrivateKey, randomBytes, webcrypto, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import type * as X509 from '@peculiar/x509';
import YAML from 'yaml';
import type { Brand } from '../contracts/brand.js';
import { firstAddress } from './ipnet.js';

// @peculiar/x509 loads tsyringe, which insists on a Reflect metadata API at import time. It only uses
// define/get(Own)Metadata, so a few lines stand in for a polyfill package. Installed only if absent,
// and before the library is imported (hence the dynamic import below).
{
  type Slot = Map<unknown, unknown>;
  const R = Reflect as unknown as Record<string, unknown>;
  if (typeof R.getMetadata !== 'function') {
    const store = new WeakMap<object, Map<PropertyKey | undefined, Slot>>();
    const slot = (t: object, p: PropertyKey | undefined, make: boolean): Slot | undefined => {
      let byProp = store.get(t);
      if (!byProp && make) store.set(t, (byProp = new Map()));
      let s = byProp?.get(p);
      if (!s && make && byProp) byProp.set(p, (s = new Map()));
      return s;
    };
    R.defineMetadata = (k: unknown, v: unknown, t: object, p?: PropertyKey) => void slot(t, p, true)!.set(k, v);
    R.getOwnMetadata = (k: unknown, t: object, p?: PropertyKey) => slot(t, p, false)?.get(k);
    R.hasOwnMetadata = (k: unknown, t: object, p?: PropertyKey) => slot(t, p, false)?.has(k) ?? false;
    R.getMetadata = (k: unknown, t: object, p?: PropertyKey) => {
      for (let o: object | null = t; o; o = Object.getPrototypeOf(o)) {
        const s = slot(o, p, false);
        if (s?.has(k)) return s.get(k);
      }
      return undefined;
    };
  }
}

/** The @peculiar/x509 module, loaded after the Reflect shim; import it from here rather than directly. */
export const x509: typeof X509 = await import('@peculiar/x509');
x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const subtle = webcrypto.subtle;
const EC: EcKeyGenParams & EcdsaParams = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY_MS = 86_400_000;

export interface CertAndKey {
  certPem: string;
  keyPem: string;
}

// ---------------------------------------------------------------- keys

async function newKeyPair(): Promise<CryptoKeyPair> {
  return (await subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

/** Import a PEM private key (PKCS#8, SEC1 or PKCS#1; EC or RSA) for signing, with its signature algorithm. */
export async function importSigningKey(pem: string): Promise<{ key: CryptoKey; alg: Algorithm | EcdsaParams }> {
  const ko = createPrivateKey(pem);
  const der = ko.export({ type: 'pkcs8', format: 'der' });
  if (ko.asymmetricKeyType === 'ec') {
    const curve = ({ prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' } as Record<string, string>)[ko.asymmetricKeyDetails?.namedCurve ?? ''];
    if (!curve) throw new Error(`unsupported EC curve ${ko.asymmetricKeyDetails?.namedCurve}`);
    const hash = curve === 'P-256' ? 'SHA-256' : curve === 'P-384' ? 'SHA-384' : 'SHA-512';
    const key = await subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: curve }, false, ['sign']);
    return { key, alg: { name: 'ECDSA', hash } as EcdsaParams };
  }
  if (ko.asymmetricKeyType === 'rsa') {
    const alg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    return { key: await subtle.importKey('pkcs8', der, alg, false, ['sign']), alg };
  }
  throw new Error(`unsupported CA key type ${ko.asymmetricKeyType}`);
}

/** A positive random 128-bit serial number, in hex. */
export function serial(): string {
  const b = randomBytes(16);
  b[0] &= 0x7f;
  return b.toString('hex');
}

// skew tolerance: certificates are valid from a few minutes before now
const notBefore = () => new Date(Date.now() - 5 * 60_000);

// ---------------------------------------------------------------- certificates

/** A self-signed CA certificate (ECDSA P-256) and its key. */
export async function generateCA(opts: { CN: string; O?: string[]; days?: number }): Promise<CertAndKey> {
  const keys = await newKeyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: subjectName(opts.CN, opts.O),
    keys,
    signingAlgorithm: EC,
    notBefore: notBefore(),
    notAfter: new Date(Date.now() + (opts.days ?? 3650) * DAY_MS),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await privateKeyPem(keys.privateKey) };
}

export interface SignCertOptions {
  caCertPem: string;
  caKeyPem: string;
  /** CN becomes the user name of a client certificate, each O a group. */
  subject: { CN: string; O?: string[] };
  dnsNames?: string[];
  ips?: string[];
  usages: ('serverAuth' | 'clientAuth')[];
  /** Validity in days (fractions allowed). */
  days: number;
  /** Certify this public key (e.g. from a CSR) instead of generating a key pair; keyPem is then ''. */
  publicKey?: CryptoKey | X509.PublicKey;
}

/** A leaf certificate signed by the CA, with a new ECDSA P-256 key unless `publicKey` is given. */
export async function signCert(o: SignCertOptions): Promise<CertAndKey> {
  const ca = new x509.X509Certificate(o.caCertPem);
  const { key: caKey, alg } = await importSigningKey(o.caKeyPem);
  const pair = o.publicKey ? undefined : await newKeyPair();
  const publicKey = o.publicKey ?? pair!.publicKey;
  const sans = [...(o.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })), ...(o.ips ?? []).map((value) => ({ type: 'ip' as const, value }))];
  const extensions: X509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension(o.usages.map((u) => x509.ExtendedKeyUsage[u])),
    await x509.AuthorityKeyIdentifierExtension.create(ca.publicKey),
    await x509.SubjectKeyIdentifierExtension.create(publicKey),
  ];
  if (sans.length) extensions.push(new x509.SubjectAlternativeNameExtension(sans));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: subjectName(o.subject.CN, o.subject.O),
    issuer: ca.subjectName,
    publicKey,
    signingKey: caKey,
    signingAlgorithm: alg,
    notBefore: notBefore(),
    notAfter: new Date(Date.now() + o.days * DAY_MS),
    extensions,
  });
  return { certPem: cert.toString('pem'), keyPem: pair ? await privateKeyPem(pair.privateKey) : '' };
}

/** O before CN, one RDN per value: what common tooling writes and every parser reads back as a list. */
function subjectName(CN: string, O: string[] = []): X509.JsonName {
  return [...O.map((o) => ({ O: [o] })), { CN: [CN] }];
}

// ---------------------------------------------------------------- files

/** Write via a temporary file and rename, so a crash never leaves half a key behind. */
async function writeAtomic(file: string, data: string, mode: number): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, data, { mode });
  await chmod(tmp, mode); // in case the file pre-existed with wider permissions
  await rename(tmp, file);
}

const readText = (file: string) => readFile(file, 'utf8');

/** Write a client configuration for the admin user (mode 0600: it holds the token). */
export async function writeKubeconfig(file: string, o: { server: string; caPem: string; token?: string; cert?: CertAndKey }): Promise<void> {
  const cluster = 'cluster-apiserver';
  const user = o.cert
    ? { 'client-certificate-data': Buffer.from(o.cert.certPem).toString('base64'), 'client-key-data': Buffer.from(o.cert.keyPem).toString('base64') }
    : { token: o.token };
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: o.server, 'certificate-authority-data': Buffer.from(o.caPem).toString('base64') } }],
    users: [{ name: 'admin', user }],
    contexts: [{ name: `admin@${cluster}`, context: { cluster, user: 'admin' } }],
    'current-context': `admin@${cluster}`,
    preferences: {},
  };
  await mkdir(path.dirname(file), { recursive: true });
  await writeAtomic(file, YAML.stringify(doc), 0o600);
}

export interface Pki {
  caCertPem: string;
  caKeyPem: string;
  certFile: string;
  keyFile: string;
  caFile: string;
  adminToken: string;
  tokenFile: string;
  kubeconfigPath: string;
}

/** Leaf certificates made here last 365 days and are made again at a start within this many days of their end (the CA stays). */
export const RENEW_BEFORE_DAYS = 90;

/** Says a leaf certificate was made again (what, why, until when). */
export type RenewLog = (msg: string, fields: Record<string, unknown>) => void;

/** Why a leaf certificate made here must be made again: missing, unreadable, or near its end; undefined when it is good. */
function renewalReason(certFile: string, keyFile: string): string | undefined {
  if (!existsSync(certFile) || !existsSync(keyFile)) return 'missing';
  let end: number;
  try { end = Date.parse(new X509Certificate(readFileSync(certFile)).validTo); } catch { return 'unreadable'; }
  if (end - Date.now() < RENEW_BEFORE_DAYS * DAY_MS) return `${end < Date.now() ? 'expired' : 'expires'} ${new Date(end).toISOString()}`;
  return undefined;
}

/** Makes a leaf certificate again when renewalReason says so, logging a renewal (not a first creation). */
async function ensureLeaf(what: string, certFile: string, keyFile: string, make: () => Promise<CertAndKey>, log?: RenewLog): Promise<void> {
  const why = renewalReason(certFile, keyFile);
  if (!why) return;
  const c = await make();
  await writeAtomic(keyFile, c.keyPem, 0o600);
  await writeAtomic(certFile, c.certPem, 0o600); // public, but the data directory is private throughout
  if (why !== 'missing') log?.('renewed a certificate made at first start', { certificate: what, file: certFile, was: why, notAfter: new Date(Date.parse(new X509Certificate(c.certPem).validTo)).toISOString() });
}

/**
 * The admin's client certificate (CN admin, O system:masters) signed by the first-start CA, made once:
 * the credential of admin-cert.kubeconfig, for the client-certificate listener.
 */
export async function ensureAdminClientCert(dataDir: string, caCertPem: string, caKeyPem: string, log?: RenewLog): Promise<CertAndKey> {
  const certFile = path.join(dataDir, 'pki', 'admin-client.crt');
  const keyFile = path.join(dataDir, 'pki', 'admin-client.key');
  await ensureLeaf('admin client', certFile, keyFile, () => signCert({ caCertPem, caKeyPem, subject: { CN: 'admin', O: ['system:masters'] }, usages: ['clientAuth'], days: 365 }), log);
  return { certPem: await readFile(certFile, 'utf8'), keyPem: await readFile(keyFile, 'utf8') };
}

/** The admin line's token in a tokens.csv, if there is one (user column "admin"). */
function findAdminToken(csv: string): string | undefined {
  for (const line of csv.split(/\r?\n/)) {
    const cols = line.split(',');
    if (!line.startsWith('#') && cols.length >= 3 && cols[1].trim() === 'admin' && cols[0].trim()) return cols[0].trim();
  }
  return undefined;
}

/**
 * Create what is missing under <dataDir>/pki and reuse what exists: the CA is never regenerated,
 * the serving certificate only when its files are gone or it is within RENEW_BEFORE_DAYS of its end. `port` only seeds the kubeconfig written on
 * first start; the server rewrites it with writeKubeconfig once it knows the real port.
 */
export async function ensurePki(dataDir: string, opts: { hosts: string[]; brand: Brand | string; port?: number; log?: RenewLog }): Promise<Pki> {
  const brandName = typeof opts.brand === 'string' ? opts.brand : opts.brand.name;
  const dir = path.join(dataDir, 'pki');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const caFile = path.join(dir, 'ca.crt');
  const caKeyFile = path.join(dir, 'ca.key');
  const certFile = path.join(dir, 'apiserver.crt');
  const keyFile = path.join(dir, 'apiserver.key');
  const tokenFile = path.join(dir, 'tokens.csv');
  const kubeconfigPath = path.join(dataDir, 'admin.kubeconfig');

  let ca: CertAndKey;
  if (existsSync(caFile) && existsSync(caKeyFile)) {
    ca = { certPem: await readText(caFile), keyPem: await readText(caKeyFile) };
  } else if (existsSync(caFile) || existsSync(caKeyFile)) {
    // half a CA: refuse rather than replace a CA that clients may already trust
    throw new Error(`${dir}: found only one of ca.crt and ca.key; restore the other or remove both to create a new CA`);
  } else {
    ca = await generateCA({ CN: `${brandName}-ca` });
    await writeAtomic(caKeyFile, ca.keyPem, 0o600);
    await writeAtomic(caFile, ca.certPem, 0o600); // public, but the data directory is private throughout
  }

  await ensureLeaf('serving', certFile, keyFile, () => signCert({
    caCertPem: ca.certPem,
    caKeyPem: ca.keyPem,
    subject: { CN: brandName === 'kubernetes' ? 'kube-apiserver' : `${brandName}-apiserver` },
    dnsNames: opts.hosts.filter((h) => !isIP(h)),
    ips: opts.hosts.filter((h) => isIP(h)),
    usages: ['serverAuth'],
    days: 365,
  }), opts.log);

  const existing = existsSync(tokenFile) ? await readText(tokenFile) : undefined;
  let adminToken = existing === undefined ? undefined : findAdminToken(existing);
  if (!adminToken) {
    adminToken = randomBytes(32).toString('base64url');
    const line = `${adminToken},admin,admin-uid,"system:masters"\n`;
    const prefix = existing === undefined || existing === '' || existing.endsWith('\n') ? existing ?? '' : existing + '\n';
    await writeAtomic(tokenFile, prefix + line, 0o600);
  }

  if (!existsSync(kubeconfigPath)) {
    await writeKubeconfig(kubeconfigPath, { server: `https://127.0.0.1:${opts.port ?? 6443}`, caPem: ca.certPem, token: adminToken });
  }
  return { caCertPem: ca.certPem, caKeyPem: ca.keyPem, certFile, keyFile, caFile, adminToken, tokenFile, kubeconfigPath };
}

/**
 * The client certificate the server presents to extension API servers it proxies to: the given
 * files (--proxy-client-cert-file/--proxy-client-key-file), or else one made at first start under
 * <dataDir>/pki (CN front-proxy-client) signed by a front-proxy CA of its own, as cluster installers
 * set it up; the CA is returned then, for the extension-apiserver-authentication ConfigMap.
 */
export async function ensureFrontProxyClient(dataDir: string, files?: { certFile?: string; keyFile?: string }, log?: RenewLog): Promise<{ certPem: string; keyPem: string; caPem?: string }> {
  if (files?.certFile || files?.keyFile) {
    if (!files.certFile || !files.keyFile) throw new Error('--proxy-client-cert-file and --proxy-client-key-file go together');
    return { certPem: await readText(files.certFile), keyPem: await readText(files.keyFile) };
  }
  const dir = path.join(dataDir, 'pki');
  const caFile = path.join(dir, 'front-proxy-ca.crt');
  const caKeyFile = path.join(dir, 'front-proxy-ca.key');
  const certFile = path.join(dir, 'front-proxy-client.crt');
  const keyFile = path.join(dir, 'front-proxy-client.key');
  let ca: CertAndKey;
  if (existsSync(caFile) && existsSync(caKeyFile)) {
    ca = { certPem: await readText(caFile), keyPem: await readText(caKeyFile) };
  } else {
    ca = await generateCA({ CN: 'front-proxy-ca' });
    await writeAtomic(caKeyFile, ca.keyPem, 0o600);
    await writeAtomic(caFile, ca.certPem, 0o600);
  }
  await ensureLeaf('front-proxy client', certFile, keyFile, () => signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: 'front-proxy-client' }, usages: ['clientAuth'], days: 365 }), log);
  return { certPem: await readText(certFile), keyPem: await readText(keyFile), caPem: ca.certPem };
}

/**
 * The names the serving certificate is for: loopback, the bind address, the server's own Service
 * (its DNS names and first service IP) and the advertised addresses.
 */
export function servingHosts(serviceName: string, o: { bindAddress: string; serviceClusterIPRange: string; advertiseAddresses?: string[] }): string[] {
  const svc = serviceName;
  const serviceNames = [svc, `${svc}.default`, `${svc}.default.svc`, `${svc}.default.svc.cluster.local`];
  const hosts = ['127.0.0.1', 'localhost', '::1', ...(o.bindAddress !== '127.0.0.1' && o.bindAddress !== '0.0.0.0' ? [o.bindAddress] : []), ...serviceNames, firstAddress(o.serviceClusterIPRange), ...(o.advertiseAddresses ?? [])];
  return [...new Set(hosts)];
}

/** The admin's kubeconfig (by token) and, given a server that takes client certificates, admin-cert.kubeconfig (the same admin by certificate). */
export async function writeAdminKubeconfigs(dataDir: string, pki: Pki, server: string, certServer: string | undefined, log?: RenewLog): Promise<void> {
  await Promise.all([
    writeKubeconfig(pki.kubeconfigPath, { server, caPem: pki.caCertPem, token: pki.adminToken }),
    certServer
      ? ensureAdminClientCert(dataDir, pki.caCertPem, pki.caKeyPem, log).then((cert) => writeKubeconfig(path.join(dataDir, 'admin-cert.kubeconfig'), { server: certServer, caPem: pki.caCertPem, cert }))
      : undefined,
  ]);
}

/**
 * The client CAs a port that takes client certificates verifies them against: the first-start CA
 * plus each authenticator's `clientCAFile` option (--client-ca-file, --requestheader-client-ca-file).
 * Authenticators re-verify against their own CA.
 */
export function clientCAs(caFile: string, authentication: readonly { options?: Record<string, unknown> }[]): string[] {
  const files = [caFile];
  for (const r of authentication) {
    const f = r.options?.clientCAFile;
    for (const file of typeof f === 'string' ? [f] : Array.isArray(f) ? f : []) if (typeof file === 'string' && !files.includes(file)) files.push(file);
  }
  return files;
}
