// Client certificates (--client-ca-file): a TLS peer certificate that chains to one of the configured
// CAs authenticates as its subject — common name = user name, each organization = a group.
// The transport already checked the certificate against the union of every client CA the server
// knows; this plugin checks it again against its own CAs only, so a certificate from another
// authenticator's CA (the front proxy's, say) is never taken for an ordinary user.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { DetailedPeerCertificate, PeerCertificate } from 'node:tls';
import { CONTRACT_VERSION, type Authenticator, type AuthRequest, type PluginModule } from '../../../kernel/contracts/index.js';
import { x509 } from '../../../kernel/ops/pki.js';

const OID_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const OID_ANY_EKU = '2.5.29.37.0';
/** Longest chain walked from the leaf to a trusted CA. */
const MAX_DEPTH = 8;

/** Every CERTIFICATE block of a PEM text, parsed. Throws when there is none or one is broken. */
export function parsePemCertificates(pem: string, source: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (!blocks.length) throw new Error(`${source}: no PEM CERTIFICATE block found`);
  return blocks.map((b, i) => {
    try {
      return new X509Certificate(b);
    } catch (e) {
      throw new Error(`${source}: certificate ${i + 1}: ${(e as Error).message}`);
    }
  });
}

/** Reads a CA bundle file (one or more PEM certificates). */
export function readCABundle(file: string): X509Certificate[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`client CA file ${file}: ${(e as Error).message}`);
  }
  return parsePemCertificates(text, `client CA file ${file}`);
}

/** Options accept one path or several. */
export function fileList(v: unknown, what: string): string[] {
  const list = typeof v === 'string' ? [v] : Array.isArray(v) ? v : undefined;
  if (!list || !list.length || list.some((f) => typeof f !== 'string' || !f)) throw new Error(`${what} must be a file path (or a list of them)`);
  return list as string[];
}

function timeProblem(c: X509Certificate, now: number, what: string): string | undefined {
  const from = Date.parse(c.validFrom);
  const to = Date.parse(c.validTo);
  if (Number.isNaN(from) || Number.isNaN(to)) return `${what} has unreadable validity dates`;
  if (now < from) return `${what} is not yet valid (valid from ${new Date(from).toISOString()})`;
  if (now > to) return `${what} has expired (valid until ${new Date(to).toISOString()})`;
  return undefined;
}

/** An extended key usage list that exists and permits neither client auth nor any usage. */
function ekuProblem(c: X509Certificate, what: string): string | undefined {
  const eku = c.keyUsage as string[] | undefined; // Node 20 names the extended key usages `keyUsage`
  if (!eku || !eku.length) return undefined;
  return eku.includes(OID_CLIENT_AUTH) || eku.includes(OID_ANY_EKU) ? undefined : `${what} is not valid for client authentication`;
}

const signedBy = (child: X509Certificate, parent: X509Certificate): boolean => {
  try {
    return child.checkIssued(parent) && child.verify(parent.publicKey);
  } catch {
    return false;
  }
};

/** The DER certificates a TLS peer presented, leaf first (getPeerCertificate(true) links them by issuerCertificate). */
export function presentedChain(peer: PeerCertificate): Buffer[] {
  const out: Buffer[] = [];
  let cur: PeerCertificate | undefined = peer;
  const seen = new Set<PeerCertificate>();
  while (cur && cur.raw && !seen.has(cur) && out.length <= MAX_DEPTH) {
    seen.add(cur);
    out.push(cur.raw);
    const next: DetailedPeerCertificate | undefined = (cur as DetailedPeerCertificate).issuerCertificate;
    cur = next && next !== cur ? next : undefined;
  }
  return out;
}

export type ChainResult = { ok: true; leaf: X509Certificate } | { ok: false; reason: string };

/**
 * Verifies a presented chain (leaf first, then any intermediates in any order) against trusted roots:
 * each link's issuer name matches and its signature verifies with the issuer's key, every certificate
 * on the path is within its validity dates, intermediates are CAs, and extended key usages (where
 * present) allow client authentication.
 */
export function verifyChain(presented: Buffer[], roots: X509Certificate[], now = Date.now()): ChainResult {
  if (!presented.length) return { ok: false, reason: 'no client certificate' };
  let certs: X509Certificate[];
  try {
    certs = presented.map((d) => new X509Certificate(d));
  } catch (e) {
    return { ok: false, reason: `unreadable client certificate: ${(e as Error).message}` };
  }
  const leaf = certs[0];
  const intermediates = certs.slice(1);
  const leafEku = ekuProblem(leaf, 'client certificate');
  if (leafEku) return { ok: false, reason: leafEku };
  let cur = leaf;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const what = depth === 0 ? 'client certificate' : `intermediate certificate "${cur.subject.replace(/\n/g, ', ')}"`;
    const t = timeProblem(cur, now, what);
    if (t) return { ok: false, reason: t };
    let rootProblem: string | undefined;
    for (const root of roots) {
      if (!signedBy(cur, root)) continue;
      rootProblem = timeProblem(root, now, 'client CA certificate');
      if (!rootProblem) return { ok: true, leaf };
    }
    if (rootProblem) return { ok: false, reason: rootProblem };
    const next = intermediates.find((i) => i !== cur && i.ca && signedBy(cur, i));
    if (!next) return { ok: false, reason: 'client certificate signed by unknown authority' };
    const eku = ekuProblem(next, 'intermediate certificate');
    if (eku) return { ok: false, reason: eku };
    cur = next;
  }
  return { ok: false, reason: 'client certificate chain too long' };
}

/** Subject common name and organizations, read from the verified DER itself. */
export function subjectOf(cert: X509Certificate): { CN: string; O: string[] } {
  const name = new x509.X509Certificate(cert.raw).subjectName;
  return { CN: name.getField('CN')[0] ?? '', O: name.getField('O') };
}

/** The verified peer certificate's subject, or why it is not acceptable; null when there is no certificate. */
export function verifyPeer(req: AuthRequest, roots: X509Certificate[], now = Date.now()): { CN: string; O: string[] } | { rejected: string } | null {
  const peer = req.peerCertificate;
  if (!peer || !peer.raw) return null;
  const r = verifyChain(presentedChain(peer), roots, now);
  if (!r.ok) return { rejected: r.reason };
  return subjectOf(r.leaf);
}

/** How long verified chains and refusals are remembered, and how many. */
const MEMO_OK_MS = 10 * 60_000;
const MEMO_REFUSED_MS = 10_000;
const MEMO_SIZE = 4096;

/** The presented chain's identity: the SHA-256 fingerprints of the leaf and each issuer it carries. */
function chainFingerprints(peer: DetailedPeerCertificate | PeerCertificate): string {
  const parts: string[] = [];
  let c: DetailedPeerCertificate | PeerCertificate | undefined = peer;
  for (let i = 0; c && i < 10; i++) {
    parts.push(c.fingerprint256);
    const next: DetailedPeerCertificate | undefined = (c as DetailedPeerCertificate).issuerCertificate;
    if (!next || next === c) break;
    c = next;
  }
  return parts.join('/');
}

const plugin: PluginModule<'authenticator'> = {
  kind: 'authenticator',
  contract: CONTRACT_VERSION,
  name: 'x509',
  create(options): Authenticator {
    const files = fileList(options.clientCAFile, 'options.clientCAFile (--client-ca-file)');
    const roots = files.flatMap(readCABundle);
    // Verifying a chain costs about a millisecond; a client presents the same chain on every request.
    // Results are kept per chain (by fingerprints): a success until the leaf expires (at most
    // MEMO_OK_MS), a refusal briefly (a not-yet-valid certificate may become valid).
    const memo = new Map<string, { r: ReturnType<typeof verifyPeer>; until: number }>();
    return {
      authenticate(req) {
        const peer = req.peerCertificate;
        if (!peer || !peer.raw) return null;
        const now = Date.now();
        const key = chainFingerprints(peer);
        let hit = memo.get(key);
        if (!hit || hit.until <= now) {
          const r = verifyPeer(req, roots, now);
          const notAfter = Date.parse(peer.valid_to);
          hit = { r, until: r && !('rejected' in r) ? Math.min(now + MEMO_OK_MS, Number.isFinite(notAfter) ? notAfter : now) : now + MEMO_REFUSED_MS };
          if (memo.size >= MEMO_SIZE) memo.delete(memo.keys().next().value!);
          memo.set(key, hit);
        }
        const r = hit.r;
        if (!r || 'rejected' in r) return r;
        if (!r.CN) return { rejected: 'client certificate has no common name' };
        return { user: { username: r.CN, groups: [...r.O] } };
      },
    };
  },
};

export default plugin;
