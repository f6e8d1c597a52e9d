// The built-in signers (Part B, Signers): each is this one plugin shape with its own restrictions.
// Options: certFile / keyFile (--cluster-signing-cert-file / --cluster-signing-key-file; default the
// server's CA) and durationSeconds (--cluster-signing-duration; default one year), capped by the
// request's expirationSeconds.
import type { Pkcs10CertificateRequest } from '@peculiar/x509';
import type { Brand } from '../../kernel/contracts/brand.js';
import { CONTRACT_VERSION, type PluginModule, type SignRequest, type Signer } from '../../kernel/contracts/index.js';
import { issue, loadSigningCA, parseRequest, requestsCA, sansOf, subjectOf, type SigningCA } from './certificates.js';

export const DEFAULT_SIGNING_SECONDS = 365 * 24 * 3600;

/** Returns why the request may not be signed, or undefined. */
export type Restriction = (csr: Pkcs10CertificateRequest, usages: string[]) => string | undefined;

const sameSet = (a: string[], b: string[]) => a.length === b.length && b.every((x) => a.includes(x));

/** Node-agent certificates: organization exactly system:nodes, user name system:node:<name>. */
export function nodeSubject(csr: Pkcs10CertificateRequest): string | undefined {
  const s = subjectOf(csr);
  if (s.O.length !== 1 || s.O[0] !== 'system:nodes') return 'subject organization is not system:nodes';
  if (!s.CN.startsWith('system:node:')) return 'subject common name does not begin with "system:node:"';
  return undefined;
}

export function exactUsages(want: string[]): (usages: string[]) => string | undefined {
  return (usages) => (sameSet(usages, want) ? undefined : `usages must be exactly ${JSON.stringify(want)}, got ${JSON.stringify(usages)}`);
}

export function builtinSigner(o: { name: string; signer: (b: Brand) => string; restrict: Restriction; keepSans: boolean }): PluginModule<'signer'> {
  return {
    kind: 'signer',
    contract: CONTRACT_VERSION,
    name: o.name,
    create(options, host): Signer {
      const seconds = typeof options.durationSeconds === 'number' && options.durationSeconds > 0 ? options.durationSeconds : DEFAULT_SIGNING_SECONDS;
      const certFile = typeof options.certFile === 'string' ? options.certFile : undefined;
      const keyFile = typeof options.keyFile === 'string' ? options.keyFile : undefined;
      let ca: Promise<SigningCA> | undefined;
      return {
        signerName: o.signer(host.brand),
        async sign(req: SignRequest): Promise<string> {
          const parsed = parseRequest(req.request);
          if ('error' in parsed) throw new Error(parsed.error);
          if (requestsCA(parsed.csr)) throw new Error('the request asks for a CA certificate, which this signer never issues');
          const why = o.restrict(parsed.csr, req.usages);
          if (why) throw new Error(why);
          ca ??= loadSigningCA(host.dataDir, certFile, keyFile);
          const lifetime = req.expirationSeconds ? Math.min(seconds, req.expirationSeconds) : seconds;
          return issue({ ca: await ca, csr: parsed.csr, usages: req.usages, seconds: lifetime, keepSans: o.keepSans });
        },
      };
    },
  };
}

export { sansOf };
