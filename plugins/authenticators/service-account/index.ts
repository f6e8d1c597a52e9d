// Service account tokens: signed JWTs (RSA or ECDSA) in the reference's bound-token format.
//
//   header  {alg: RS256|ES256|..., kid: base64url(sha256(SPKI DER))}
//   claims  {iss, sub: "system:serviceaccount:<ns>:<name>", aud: [...], exp, iat, nbf, jti,
//            "<keyDomain>": {namespace, serviceaccount: {name, uid}, pod?: {name, uid}, secret?: {name, uid}}}
//
// Verification keys come from --service-account-key-file (public or private PEM, repeatable; default
// the server's serving key). Only asymmetric algorithms the key's type supports are accepted, so
// `none` and HS256-with-the-public-key (key confusion) never verify. With lookup on (the default)
// the service account, and any pod or secret the token is bound to, must still exist with the same
// uid, so deleting one revokes its tokens at once.
//
// Also exported for the token endpoints: issueToken (signing), jwks and discoveryDocument.
import { createHash, createPrivateKey, createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SignJWT, decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { CONTRACT_VERSION, type Authenticator, type KObject, type PluginHost, type PluginModule, type UserInfo } from '../../../kernel/contracts/index.js';
import type { Brand } from '../../../kernel/contracts/brand.js';
import { bearerToken } from '../token-file/index.js';

/** Three dot-separated base64url parts: what a compact JWS looks like. */
export const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
/** Clock skew tolerated on exp/nbf/iat, as the reference allows. */
const LEEWAY_SECONDS = 60;

export const SA_PREFIX = 'system:serviceaccount:';
export const SA_GROUP = 'system:serviceaccounts';

export const defaultIssuer = (brand: Brand) => `https://${brand.name}.default.svc.cluster.local`;
export const defaultKeyFile = (dataDir: string) => path.join(dataDir, 'pki', 'apiserver.key');
export const serviceAccountUsername = (namespace: string, name: string) => `${SA_PREFIX}${namespace}:${name}`;

// ---------------------------------------------------------------- keys

export interface VerifyKey {
  key: KeyObject; // public
  kid: string;
  algorithms: string[];
}

/** The reference's key id: unpadded base64url of the SHA-256 of the public key's SPKI DER. */
export function keyId(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return createHash('sha256').update(pub.export({ type: 'spki', format: 'der' })).digest('base64url');
}

const EC_ALG: Record<string, string> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

/** Asymmetric JWS algorithms a key can verify (never `none`, never HMAC). */
export function algorithmsFor(key: KeyObject): string[] {
  switch (key.asymmetricKeyType) {
    case 'rsa': return ['RS256', 'RS384', 'RS512'];
    case 'ec': {
      const alg = EC_ALG[key.asymmetricKeyDetails?.namedCurve ?? ''];
      return alg ? [alg] : [];
    }
    default: return [];
  }
}

/** The algorithm tokens are signed with for a key: RS256 for RSA, ES256/384/512 by curve. */
export function signingAlgorithm(key: KeyObject): string {
  const alg = algorithmsFor(key)[0];
  if (!alg) throw new Error(`unsupported service account key type ${key.asymmetricKeyType}${key.asymmetricKeyDetails?.namedCurve ? ` (${key.asymmetricKeyDetails.namedCurve})` : ''}: use RSA or ECDSA P-256/P-384/P-521`);
  return alg;
}

/** Public keys from PEM text: PUBLIC KEY, RSA PUBLIC KEY and any private key form (its public half). */
export function parsePublicKeys(pem: string, source: string): KeyObject[] {
  const blocks = pem.match(/-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g) ?? [];
  const keys: KeyObject[] = [];
  for (const block of blocks) {
    const label = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(block)![1];
    if (label === 'EC PARAMETERS') continue;
    let k: KeyObject;
    try {
      k = label.includes('PRIVATE KEY') ? createPublicKey(createPrivateKey(block)) : createPublicKey(block);
    } catch (e) {
      throw new Error(`${source}: cannot read ${label} block: ${(e as Error).message}`);
    }
    signingAlgorithm(k); // refuses unsupported key types early
    keys.push(k);
  }
  if (!keys.length) throw new Error(`${source}: no PEM public or private key found`);
  return keys;
}

export function loadVerifyKeys(files: string[]): VerifyKey[] {
  return files.flatMap((f) => {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch (e) {
      throw new Error(`service account key file ${f}: ${(e as Error).message}`);
    }
    return parsePublicKeys(text, `service account key file ${f}`).map((key) => ({ key, kid: keyId(key), algorithms: algorithmsFor(key) }));
  });
}

// ---------------------------------------------------------------- issuing

export interface BoundObject {
  kind: 'Pod' | 'Secret';
  name: string;
  uid: string;
}

export interface IssueOptions {
  /** Private key: a KeyObject or PEM text. */
  key: KeyObject | string;
  /** Defaults to keyId(key). */
  keyId?: string;
  issuer: string;
  audiences: string[];
  expirationSeconds: number;
  namespace: string;
  serviceAccount: { name: string; uid: string };
  boundObject?: BoundObject;
  brand: Brand;
  /** Issue time in milliseconds (default now). */
  now?: number;
}

/** Signs a bound service account token. */
export async function issueToken(o: IssueOptions): Promise<string> {
  const key = typeof o.key === 'string' ? createPrivateKey(o.key) : o.key;
  if (key.type !== 'private') throw new Error('issueToken needs a private key');
  if (!o.audiences.length) throw new Error('issueToken needs at least one audience');
  const alg = signingAlgorithm(key);
  const iat = Math.floor((o.now ?? Date.now()) / 1000);
  const claim: Record<string, unknown> = { namespace: o.namespace, serviceaccount: { name: o.serviceAccount.name, uid: o.serviceAccount.uid } };
  if (o.boundObject) claim[o.boundObject.kind === 'Pod' ? 'pod' : 'secret'] = { name: o.boundObject.name, uid: o.boundObject.uid };
  return new SignJWT({ [o.brand.keyDomain]: claim })
    .setProtectedHeader({ alg, kid: o.keyId ?? keyId(key) })
    .setIssuer(o.issuer)
    .setSubject(serviceAccountUsername(o.namespace, o.serviceAccount.name))
    .setAudience(o.audiences)
    .setIssuedAt(iat)
    .setNotBefore(iat)
    .setExpirationTime(iat + o.expirationSeconds)
    .setJti(randomUUID())
    .sign(key);
}

/** The public JSON Web Key Set of the given keys (private keys contribute their public half only). */
export function jwks(keys: (KeyObject | string)[]): { keys: Record<string, unknown>[] } {
  return {
    keys: keys.map((k) => {
      const obj = typeof k === 'string' ? (k.includes('PRIVATE KEY') ? createPrivateKey(k) : createPublicKey(k)) : k;
      const pub = obj.type === 'private' ? createPublicKey(obj) : obj;
      return { use: 'sig', ...pub.export({ format: 'jwk' }), kid: keyId(pub), alg: signingAlgorithm(pub) };
    }),
  };
}

/** The OpenID discovery document served at /.well-known/openid-configuration. */
export function discoveryDocument(issuer: string, jwksUri: string, algorithms: string[] = ['RS256']) {
  return {
    issuer,
    jwks_uri: jwksUri,
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: algorithms,
  };
}

// ---------------------------------------------------------------- verifying

export interface VerifierOptions {
  keys: VerifyKey[];
  issuers: string[];
  audiences: string[];
  lookup: boolean;
  brand: Brand;
  /** Object access for lookups (host.objects + host.type). */
  get?: (resource: 'serviceaccounts' | 'pods' | 'secrets', namespace: string, name: string) => Promise<KObject | undefined>;
  now?: () => number;
}

interface Ref { name: string; uid: string }
const isRef = (v: unknown): v is Ref => !!v && typeof v === 'object' && typeof (v as Ref).name === 'string' && typeof (v as Ref).uid === 'string';

export type VerifyResult = { user: UserInfo } | { rejected: string } | null;

/** Verifies one bearer token; null when it does not look like a JWT at all. */
export async function verifyToken(token: string, o: VerifierOptions): Promise<VerifyResult> {
  if (!JWT_SHAPE.test(token)) return null;
  const refuse = (why: string) => ({ rejected: `invalid service account token: ${why}` });
  let alg: string | undefined;
  let kid: string | undefined;
  try {
    const h = decodeProtectedHeader(token);
    alg = h.alg;
    kid = h.kid;
    decodeJwt(token);
  } catch (e) {
    return refuse(`malformed token: ${(e as Error).message}`);
  }
  if (!alg || !o.keys.some((k) => k.algorithms.includes(alg!))) return refuse(`signing algorithm "${alg ?? ''}" is not accepted`);
  const usable = o.keys.filter((k) => k.algorithms.includes(alg!));
  // the key the header names first, then the others (tokens from older signers may carry no kid)
  const ordered = [...usable.filter((k) => k.kid === kid), ...usable.filter((k) => k.kid !== kid)];
  let payload: JWTPayload | undefined;
  let lastError = 'signature does not verify';
  const currentDate = o.now ? new Date(o.now()) : undefined;
  for (const k of ordered) {
    try {
      ({ payload } = await jwtVerify(token, k.key, {
        algorithms: [alg], issuer: o.issuers, audience: o.audiences, clockTolerance: LEEWAY_SECONDS, requiredClaims: ['sub'], currentDate,
      }));
      break;
    } catch (e) {
      const code = (e as { code?: string }).code;
      lastError = (e as Error).message;
      // a claim failure means the signature was good: other keys would fail the same way
      if (code && code !== 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') return refuse(lastError);
    }
  }
  if (!payload) return refuse(lastError);
  // jose checks nbf and exp; iat in the future is the reference's third check (a misconfigured or forging signer)
  const nowSeconds = (currentDate?.getTime() ?? Date.now()) / 1000;
  if (typeof payload.iat === 'number' && payload.iat > nowSeconds + LEEWAY_SECONDS) return refuse('service account token is issued in the future');

  const claim = payload[o.brand.keyDomain] as { namespace?: unknown; serviceaccount?: unknown; pod?: unknown; secret?: unknown } | undefined;
  if (!claim || typeof claim !== 'object') return refuse(`missing "${o.brand.keyDomain}" claim`);
  const ns = claim.namespace;
  const sa = claim.serviceaccount;
  if (typeof ns !== 'string' || !ns || !isRef(sa) || !sa.name) return refuse('namespace or service account missing from the token');
  const username = serviceAccountUsername(ns, sa.name);
  if (payload.sub !== username) return refuse('subject does not match the service account');
  if (claim.pod !== undefined && !isRef(claim.pod)) return refuse('malformed pod reference');
  if (claim.secret !== undefined && !isRef(claim.secret)) return refuse('malformed secret reference');
  const pod = claim.pod as Ref | undefined;
  const secret = claim.secret as Ref | undefined;

  if (o.lookup) {
    if (!o.get) return refuse('lookup is not available');
    const live = async (resource: 'serviceaccounts' | 'pods' | 'secrets', what: string, ref: Ref): Promise<string | undefined> => {
      const obj = await o.get!(resource, ns, ref.name);
      if (!obj) return `${what} ${ns}/${ref.name} has been deleted`;
      if (obj.metadata?.uid !== ref.uid) return `${what} ${ns}/${ref.name} uid does not match (the token is for an object since deleted)`;
      if (obj.metadata?.deletionTimestamp) return `${what} ${ns}/${ref.name} is being deleted`;
      return undefined;
    };
    const problem = (await live('serviceaccounts', 'service account', sa))
      ?? (pod ? await live('pods', 'pod', pod) : undefined)
      ?? (secret ? await live('secrets', 'secret', secret) : undefined);
    if (problem) return refuse(problem);
  }

  const user: UserInfo = { username, uid: sa.uid, groups: [SA_GROUP, `${SA_GROUP}:${ns}`] };
  if (pod) user.extra = { [`authentication.${o.brand.keyDomain}/pod-name`]: [pod.name], [`authentication.${o.brand.keyDomain}/pod-uid`]: [pod.uid] };
  return { user };
}

const strings = (v: unknown, what: string): string[] | undefined => {
  if (v === undefined || v === null) return undefined;
  const list = typeof v === 'string' ? [v] : Array.isArray(v) ? v : undefined;
  if (!list || list.some((x) => typeof x !== 'string' || !x)) throw new Error(`${what} must be a string or a list of strings`);
  return list.length ? (list as string[]) : undefined;
};

const plugin: PluginModule<'authenticator'> = {
  kind: 'authenticator',
  contract: CONTRACT_VERSION,
  name: 'service-account',
  create(options, host: PluginHost): Authenticator {
    const files = strings(options.keyFiles, 'options.keyFiles (--service-account-key-file)') ?? [defaultKeyFile(host.dataDir)];
    const issuers = strings(options.issuer, 'options.issuer (--service-account-issuer)') ?? [defaultIssuer(host.brand)];
    const audiences = strings(options.audiences, 'options.audiences (--api-audiences)') ?? issuers;
    if (options.lookup !== undefined && typeof options.lookup !== 'boolean') throw new Error('options.lookup (--service-account-lookup) must be true or false');
    const o: VerifierOptions = {
      keys: loadVerifyKeys(files),
      issuers,
      audiences,
      lookup: options.lookup !== false,
      brand: host.brand,
      get: async (resource, namespace, name) => {
        const type = host.type('', resource);
        return type ? host.objects.get(type, namespace, name) : undefined;
      },
    };
    serveIssuer(host, options, issuers[0], audiences, o.keys);
    return {
      authenticate(req) {
        const token = bearerToken(req.header('authorization'));
        return token === undefined ? null : verifyToken(token, o);
      },
    };
  },
};

/** Bounds of TokenRequest expirationSeconds, as the reference enforces them. */
const MIN_EXPIRATION = 600;
const MAX_EXPIRATION = 2 ** 32;
const DEFAULT_EXPIRATION = 3600;

/**
 * Issues tokens from the serviceaccounts/token sub-resource (TokenRequest) and publishes the
 * issuer's discovery document and JSON Web Key Set.
 */
function serveIssuer(host: PluginHost, options: Record<string, unknown>, issuer: string, apiAudiences: string[], keys: VerifyKey[]) {
  const keyFile = typeof options.signingKeyFile === 'string' ? options.signingKeyFile : defaultKeyFile(host.dataDir);
  let signingKey: KeyObject | undefined;
  try { signingKey = createPrivateKey(readFileSync(keyFile)); } catch { /* verify-only: no TokenRequest */ }
  const authGroup = `authentication.${host.brand.domain}`;
  const invalid = (name: string, field: string, message: string) => host.errors.invalid('TokenRequest', name, [{ reason: 'FieldValueInvalid', field, message }]);
  if (signingKey) {
    const key = signingKey;
    host.serve({ group: '', resource: 'serviceaccounts', subresource: 'token', kind: 'TokenRequest', subresourceGroup: authGroup, subresourceVersion: 'v1' }, async (req) => {
      const spec = (req.body.spec ?? {}) as { audiences?: unknown; expirationSeconds?: unknown; boundObjectRef?: { kind?: string; apiVersion?: string; name?: string; uid?: string } };
      const audiences = Array.isArray(spec.audiences) && spec.audiences.length ? spec.audiences.map(String) : apiAudiences;
      const exp = spec.expirationSeconds === undefined ? DEFAULT_EXPIRATION : Number(spec.expirationSeconds);
      if (!Number.isInteger(exp) || exp < MIN_EXPIRATION) throw invalid(req.name, 'spec.expirationSeconds', `Invalid value: ${JSON.stringify(spec.expirationSeconds)}: may not specify a duration less than 10 minutes`);
      if (exp > MAX_EXPIRATION) throw invalid(req.name, 'spec.expirationSeconds', `Invalid value: ${exp}: may not specify a duration larger than 2^32 seconds`);
      const saType = host.type('', 'serviceaccounts')!;
      const sa = await host.objects.get(saType, req.namespace, req.name);
      if (!sa) throw host.errors.notFound('', 'serviceaccounts', req.name);
      let bound: BoundObject | undefined;
      const ref = spec.boundObjectRef;
      if (ref) {
        if (ref.kind !== 'Pod' && ref.kind !== 'Secret') throw invalid(req.name, 'spec.boundObjectRef.kind', `Unsupported value: "${ref.kind}": supported values: "Pod", "Secret"`);
        const t = host.type('', ref.kind === 'Pod' ? 'pods' : 'secrets')!;
        const obj = ref.name ? await host.objects.get(t, req.namespace, ref.name) : undefined;
        if (!obj) throw host.errors.status(404, 'NotFound', `${t.resource} "${ref.name ?? ''}" not found`);
        if (ref.uid && ref.uid !== obj.metadata?.uid) throw host.errors.status(409, 'Conflict', `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
        bound = { kind: ref.kind, name: ref.name!, uid: obj.metadata!.uid! };
      }
      const now = Date.now();
      const token = await issueToken({ key, issuer, audiences, expirationSeconds: exp, namespace: req.namespace, serviceAccount: { name: req.name, uid: sa.metadata!.uid! }, boundObject: bound, brand: host.brand, now });
      const object: KObject = {
        kind: 'TokenRequest', apiVersion: `${authGroup}/v1`,
        metadata: { name: req.name, namespace: req.namespace, creationTimestamp: null as never },
        spec: { audiences, expirationSeconds: exp, boundObjectRef: ref ? { kind: ref.kind, apiVersion: 'v1', name: ref.name, uid: bound!.uid } : null },
        status: { token, expirationTimestamp: new Date(Math.floor(now / 1000) * 1000 + exp * 1000).toISOString().replace('.000Z', 'Z') },
      };
      return { code: 201, object };
    });
  }
  const publicKeys = keys.map((k) => k.key);
  host.servePath('/.well-known/openid-configuration', () => ({
    contentType: 'application/json',
    body: JSON.stringify(discoveryDocument(issuer, `${issuer.replace(/\/$/, '')}/openid/v1/jwks`, [...new Set(publicKeys.map((k) => signingAlgorithm(k)))])),
  }));
  host.servePath('/openid/v1/jwks', () => ({ contentType: 'application/jwk-set+json', body: JSON.stringify(jwks(publicKeys)) }));
}

export default plugin;
