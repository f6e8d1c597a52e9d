// Bootstrap token Secrets (Part B, Bootstrap token secret): bootstrap-token-<id> in the system
// namespace, type bootstrap.<keyDomain>/token; what the token controllers read from them.
import type { KObject, PluginHost } from '../../kernel/contracts/index.js';

export const TOKEN_ID = /^[a-z0-9]{6}$/;
export const TOKEN_SECRET = /^[a-z0-9]{16}$/;

export interface BootstrapToken {
  id: string;
  secret: string;
  /** Milliseconds since the epoch; undefined when the token does not expire. */
  expires?: number;
  usages: Set<string>;
}

const text = (data: Record<string, string>, k: string) => (typeof data[k] === 'string' ? Buffer.from(data[k], 'base64').toString() : undefined);

export function bootstrapSecretType(host: PluginHost): string { return `bootstrap.${host.brand.keyDomain}/token`; }

/** The token a Secret holds, or undefined when it is not a well-formed bootstrap token Secret. */
export function readBootstrapToken(host: PluginHost, s: KObject): BootstrapToken | undefined {
  if (s.type !== bootstrapSecretType(host) || s.metadata?.namespace !== host.brand.systemNamespace) return undefined;
  const data = (s.data ?? {}) as Record<string, string>;
  const id = text(data, 'token-id');
  const secret = text(data, 'token-secret');
  if (!id || !secret || !TOKEN_ID.test(id) || !TOKEN_SECRET.test(secret) || s.metadata?.name !== `bootstrap-token-${id}`) return undefined;
  const exp = text(data, 'expiration');
  const expires = exp ? Date.parse(exp) : undefined;
  const usages = new Set<string>();
  for (const k of Object.keys(data)) if (k.startsWith('usage-bootstrap-') && text(data, k) === 'true') usages.add(k.slice('usage-bootstrap-'.length));
  return { id, secret, expires: Number.isNaN(expires) ? 0 : expires, usages };
}
