// Bootstrap tokens (--enable-bootstrap-token-auth): `Authorization: Bearer <id>.<secret>` is checked
// against the secret `bootstrap-token-<id>` of type `bootstrap.<keyDomain>/token` in the system
// namespace. A token of that shape that does not check out is rejected (401); any other bearer
// token is left to the other authenticators.
import { timingSafeEqual } from 'node:crypto';
import { CONTRACT_VERSION, type Authenticator, type KObject, type PluginHost, type PluginModule, type UserInfo } from '../../../kernel/contracts/index.js';
import type { Brand } from '../../../kernel/contracts/brand.js';
import { bearerToken } from '../token-file/index.js';

export const TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
export const BOOTSTRAP_GROUP = 'system:bootstrappers';
const EXTRA_GROUP_PREFIX = 'system:bootstrappers:';
const GROUP_RE = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

export const secretName = (id: string) => `bootstrap-token-${id}`;
export const secretType = (brand: Brand) => `bootstrap.${brand.keyDomain}/token`;

/** `<id>.<secret>` split, or undefined when the text does not have the bootstrap token shape. */
export function parseToken(token: string): { id: string; secret: string } | undefined {
  const m = TOKEN_RE.exec(token);
  return m ? { id: m[1], secret: m[2] } : undefined;
}

/** One base64 field of a secret's data, decoded; undefined when absent or not a string. */
function field(secret: KObject, key: string): string | undefined {
  const data = secret.data as Record<string, unknown> | undefined;
  const v = data?.[key];
  return typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : undefined;
}

/** Extra groups from a comma-separated `auth-extra-groups` value; entries outside `system:bootstrappers:` are dropped. */
export function extraGroups(value: string | undefined): string[] {
  if (!value) return [];
  const out: string[] = [];
  for (const g of value.split(',').map((s) => s.trim())) {
    if (g.startsWith(EXTRA_GROUP_PREFIX) && GROUP_RE.test(g) && !out.includes(g)) out.push(g);
  }
  return out;
}

/** RFC 3339 with a time zone; anything else is unreadable. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Checks a presented token against its secret (already fetched; undefined when absent).
 * Returns the user, or the reason for refusing it.
 */
export function checkSecret(token: { id: string; secret: string }, secret: KObject | undefined, brand: Brand, now = Date.now()): { user: UserInfo } | { rejected: string } {
  const refuse = (why: string) => ({ rejected: `invalid bootstrap token: ${why}` });
  if (!secret) return refuse(`secret ${brand.systemNamespace}/${secretName(token.id)} not found`);
  if (secret.metadata?.deletionTimestamp) return refuse('secret is being deleted');
  if (secret.type !== secretType(brand)) return refuse(`secret type is not ${secretType(brand)}`);
  if (field(secret, 'token-id') !== token.id) return refuse('token-id does not match');
  const stored = Buffer.from(field(secret, 'token-secret') ?? '', 'utf8');
  const given = Buffer.from(token.secret, 'utf8');
  // compare in constant time (both sides of equal length; a length mismatch is a plain mismatch)
  const same = stored.length === given.length && timingSafeEqual(stored, given);
  if (!same) return refuse('token-secret does not match');
  const exp = field(secret, 'expiration');
  if (exp !== undefined && exp !== '') {
    const at = RFC3339.test(exp) ? Date.parse(exp) : NaN;
    if (Number.isNaN(at)) return refuse('unreadable expiration');
    if (at <= now) return refuse(`token expired at ${exp}`);
  }
  if (field(secret, 'usage-bootstrap-authentication') !== 'true') return refuse('not allowed for authentication (usage-bootstrap-authentication is not "true")');
  return { user: { username: `system:bootstrap:${token.id}`, groups: [BOOTSTRAP_GROUP, ...extraGroups(field(secret, 'auth-extra-groups'))] } };
}

const plugin: PluginModule<'authenticator'> = {
  kind: 'authenticator',
  contract: CONTRACT_VERSION,
  name: 'bootstrap-token',
  create(_options, host: PluginHost): Authenticator {
    return {
      async authenticate(req) {
        const raw = bearerToken(req.header('authorization'));
        if (raw === undefined) return null;
        const token = parseToken(raw);
        if (!token) return null;
        const type = host.type('', 'secrets');
        if (!type) return { rejected: 'invalid bootstrap token: secrets are not served' };
        const secret = await host.objects.get(type, host.brand.systemNamespace, secretName(token.id));
        return checkSecret(token, secret, host.brand);
      },
    };
  },
};

export default plugin;
