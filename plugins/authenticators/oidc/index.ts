// OpenID Connect ID tokens (--oidc-*): the bearer token is an id_token signed by the one trusted
// issuer. The issuer's discovery document (<issuer>/.well-known/openid-configuration) names its
// JWKS; keys are fetched over HTTPS (optionally with --oidc-ca-file) and cached. A token whose key
// id is not cached triggers a refetch, at most once every 10 seconds, so per request there is no
// network traffic once the keys are known. Tokens that are not JWTs or name another issuer are left
// to the other authenticators (null); a token from this issuer that fails any check is rejected.
import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { CONTRACT_VERSION, type Authenticator, type AuthRequest, type AuthenticationResult, type PluginHost, type PluginModule, type UserInfo } from '../../../kernel/contracts/index.js';
import { bearerToken } from '../token-file/index.js';
import { JWT_SHAPE } from '../service-account/index.js';

export const REFRESH_INTERVAL_MS = 10_000;
const FETCH_TIMEOUT_MS = 10_000;
const MAX_DOCUMENT_BYTES = 1 << 20;
/** Asymmetric algorithms an issuer may use; HMAC and `none` are never accepted. */
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'];

export interface OidcOptions {
  issuerURL: string;
  clientID: string;
  usernameClaim: string;
  /** Resolved prefix ('' for none). */
  usernamePrefix: string;
  groupsClaim?: string;
  groupsPrefix: string;
  requiredClaims: Record<string, string>;
  signingAlgs: string[];
}

export type FetchJSON = (url: string) => Promise<unknown>;

/** Options as given (config file or flags) → checked options. */
export function resolveOptions(options: Record<string, unknown>): OidcOptions {
  const str = (k: string, required: boolean): string | undefined => {
    const v = options[k];
    if (v === undefined || v === null || v === '') {
      if (required) throw new Error(`options.${k} is required`);
      return undefined;
    }
    if (typeof v !== 'string') throw new Error(`options.${k} must be a string`);
    return v;
  };
  const issuerURL = str('issuerURL', true)!;
  let u: URL;
  try {
    u = new URL(issuerURL);
  } catch {
    throw new Error(`options.issuerURL (--oidc-issuer-url) "${issuerURL}" is not a URL`);
  }
  if (u.protocol !== 'https:') throw new Error(`options.issuerURL (--oidc-issuer-url) must be an https URL, got "${issuerURL}"`);
  const clientID = str('clientID', true)!;
  const usernameClaim = str('usernameClaim', false) ?? 'sub';
  const given = str('usernamePrefix', false);
  // '-' switches prefixing off; unset means "<issuer>#" except for the email claim
  const usernamePrefix = given === '-' ? '' : given ?? (usernameClaim === 'email' ? '' : `${issuerURL}#`);
  const rc = options.requiredClaims ?? {};
  if (typeof rc !== 'object' || Array.isArray(rc) || Object.values(rc as object).some((v) => typeof v !== 'string')) {
    throw new Error('options.requiredClaims must map claim names to string values');
  }
  const algs = options.signingAlgs ?? ['RS256'];
  if (!Array.isArray(algs) || !algs.length || algs.some((a) => !ASYMMETRIC.includes(a as string))) {
    throw new Error(`options.signingAlgs must be a non-empty list from ${ASYMMETRIC.join(', ')}`);
  }
  return {
    issuerURL, clientID, usernameClaim, usernamePrefix,
    groupsClaim: str('groupsClaim', false),
    groupsPrefix: str('groupsPrefix', false) ?? '',
    requiredClaims: rc as Record<string, string>,
    signingAlgs: algs as string[],
  };
}

/** GET a JSON document over HTTPS, trusting `ca` when given (else the host's roots). */
export function httpsFetchJSON(ca?: Buffer): FetchJSON {
  return (url) => new Promise((resolve, reject) => {
    const req = https.get(url, { ca, timeout: FETCH_TIMEOUT_MS, headers: { accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_DOCUMENT_BYTES) {
          req.destroy(new Error(`${url}: response larger than ${MAX_DOCUMENT_BYTES} bytes`));
          return;
        }
        chunks.push(c);
      });
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${url}: HTTP ${res.statusCode}`));
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (e) {
          reject(new Error(`${url}: not JSON: ${(e as Error).message}`));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: timed out after ${FETCH_TIMEOUT_MS / 1000}s`)));
    req.on('error', reject);
  });
}

interface IssuerKey {
  kid?: string;
  key: KeyObject;
  algorithms: string[];
}

const EC_ALG: Record<string, string> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' };

/** Usable signing keys of a JWKS document. */
function keysOf(doc: unknown): IssuerKey[] {
  const list = (doc as { keys?: unknown })?.keys;
  if (!Array.isArray(list)) throw new Error('JWKS document has no "keys" list');
  const out: IssuerKey[] = [];
  for (const jwk of list as (JsonWebKey & { kid?: string; use?: string; alg?: string })[]) {
    if (!jwk || typeof jwk !== 'object' || (jwk.use !== undefined && jwk.use !== 'sig')) continue;
    let algorithms: string[];
    if (jwk.kty === 'RSA') algorithms = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
    else if (jwk.kty === 'EC' && EC_ALG[jwk.crv ?? '']) algorithms = [EC_ALG[jwk.crv!]];
    else continue;
    if (jwk.alg) algorithms = algorithms.filter((a) => a === jwk.alg);
    try {
      const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = jwk; // never hold private parts
      out.push({ kid: typeof jwk.kid === 'string' ? jwk.kid : undefined, key: createPublicKey({ key: pub, format: 'jwk' }), algorithms });
    } catch {
      // an unreadable key is skipped, the others still serve
    }
  }
  return out;
}

export class OidcAuthenticator implements Authenticator {
  private keys: IssuerKey[] = [];
  private jwksUri: string | undefined;
  private lastFetch = -Infinity;
  private inflight: Promise<void> | undefined;
  private lastError = '';
  private readonly now: () => number;
  private readonly refreshMs: number;
  private readonly log: ((msg: string) => void) | undefined;
  /** Number of key set downloads, for tests and diagnostics. */
  fetches = 0;

  constructor(readonly o: OidcOptions, private readonly fetchJSON: FetchJSON, deps: { now?: () => number; refreshIntervalMs?: number; log?: (msg: string) => void } = {}) {
    this.now = deps.now ?? Date.now;
    this.refreshMs = deps.refreshIntervalMs ?? REFRESH_INTERVAL_MS;
    this.log = deps.log;
  }

  /** Fetch discovery (until it succeeds once) and the key set, unless one ran less than the interval ago. */
  refresh(): Promise<void> {
    if (this.inflight) return this.inflight;
    if (this.now() - this.lastFetch < this.refreshMs) return Promise.resolve();
    this.lastFetch = this.now();
    this.inflight = (async () => {
      try {
        if (!this.jwksUri) {
          const url = this.o.issuerURL.replace(/\/$/, '') + '/.well-known/openid-configuration';
          const doc = (await this.fetchJSON(url)) as { issuer?: unknown; jwks_uri?: unknown };
          if (doc?.issuer !== this.o.issuerURL) throw new Error(`discovery document names issuer "${String(doc?.issuer)}", expected "${this.o.issuerURL}"`);
          if (typeof doc.jwks_uri !== 'string' || !doc.jwks_uri.startsWith('https://')) throw new Error('discovery document has no https jwks_uri');
          this.jwksUri = doc.jwks_uri;
        }
        this.fetches++;
        const keys = keysOf(await this.fetchJSON(this.jwksUri));
        if (!keys.length) throw new Error('the issuer publishes no usable signing keys');
        this.keys = keys;
        this.lastError = '';
      } catch (e) {
        this.lastError = (e as Error).message;
        this.log?.(`oidc: fetching keys of ${this.o.issuerURL} failed: ${this.lastError}`);
      } finally {
        this.inflight = undefined;
      }
    })();
    return this.inflight;
  }

  async authenticate(req: AuthRequest): Promise<AuthenticationResult> {
    const token = bearerToken(req.header('authorization'));
    return token === undefined ? null : this.verify(token);
  }

  async verify(token: string): Promise<AuthenticationResult> {
    if (!JWT_SHAPE.test(token)) return null;
    let claims: JWTPayload;
    let alg: string | undefined;
    let kid: string | undefined;
    try {
      claims = decodeJwt(token);
      ({ alg, kid } = decodeProtectedHeader(token));
    } catch {
      return null; // not a JWT: someone else's token
    }
    if (claims.iss !== this.o.issuerURL) return null;
    const refuse = (why: string) => ({ rejected: `invalid OIDC token: ${why}` });
    if (!alg || !this.o.signingAlgs.includes(alg)) return refuse(`signing algorithm "${alg ?? ''}" is not accepted`);

    const candidates = () => this.keys.filter((k) => k.algorithms.includes(alg!) && (kid === undefined || k.kid === kid));
    let keys = candidates();
    if (!keys.length) {
      await this.refresh();
      keys = candidates();
      if (!keys.length) return refuse(this.lastError ? `no verification key: ${this.lastError}` : `no key${kid ? ` with id "${kid}"` : ''} for algorithm ${alg}`);
    }
    let payload: JWTPayload | undefined;
    let problem = 'signature does not verify';
    for (const k of keys) {
      try {
        ({ payload } = await jwtVerify(token, k.key, {
          algorithms: [alg], issuer: this.o.issuerURL, audience: this.o.clientID, requiredClaims: ['exp'], currentDate: new Date(this.now()),
        }));
        break;
      } catch (e) {
        problem = (e as Error).message;
        const code = (e as { code?: string }).code;
        if (code && code !== 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') break;
      }
    }
    if (!payload) return refuse(problem);
    const r = this.userFromClaims(payload);
    return 'rejected' in r ? refuse(r.rejected) : r;
  }

  /** Claim rules: required claims, username claim and prefix (email must be verified), groups and prefix. */
  userFromClaims(c: JWTPayload): { user: UserInfo } | { rejected: string } {
    for (const [k, v] of Object.entries(this.o.requiredClaims)) {
      if (!(k in c)) return { rejected: `required claim "${k}" not present` };
      if (c[k] !== v) return { rejected: `required claim "${k}" does not have the value "${v}"` };
    }
    const name = c[this.o.usernameClaim];
    if (typeof name !== 'string' || !name) return { rejected: `claim "${this.o.usernameClaim}" not present or not a string` };
    if (this.o.usernameClaim === 'email' && 'email_verified' in c && c.email_verified !== true) return { rejected: 'email not verified' };
    let groups: string[] = [];
    if (this.o.groupsClaim && c[this.o.groupsClaim] !== undefined) {
      const g = c[this.o.groupsClaim];
      if (typeof g === 'string') groups = [g];
      else if (Array.isArray(g) && g.every((x) => typeof x === 'string')) groups = g as string[];
      else return { rejected: `claim "${this.o.groupsClaim}" is not a string or a list of strings` };
    }
    return { user: { username: this.o.usernamePrefix + name, groups: groups.map((x) => this.o.groupsPrefix + x) } };
  }
}

const plugin: PluginModule<'authenticator'> = {
  kind: 'authenticator',
  contract: CONTRACT_VERSION,
  name: 'oidc',
  create(options, host: PluginHost): Authenticator {
    const o = resolveOptions(options);
    let ca: Buffer | undefined;
    if (options.caFile !== undefined) {
      if (typeof options.caFile !== 'string' || !options.caFile) throw new Error('options.caFile (--oidc-ca-file) must be a file path');
      try {
        ca = readFileSync(options.caFile);
      } catch (e) {
        throw new Error(`oidc CA file ${options.caFile}: ${(e as Error).message}`);
      }
    }
    const a = new OidcAuthenticator(o, httpsFetchJSON(ca), { log: (m) => host.log.warn(m) });
    void a.refresh(); // warm the key cache; failures are retried when a token needs the keys
    return a;
  },
};

export default plugin;
