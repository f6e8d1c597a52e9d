// Authenticating front proxy (--requestheader-*): the user comes from request headers, but only on a
// connection whose TLS client certificate verifies against the proxy CA (and, with allowed names,
// carries one of those common names). On any other connection the headers are ignored entirely:
// a plain client that writes X-Remote-User itself changes nothing.
import type { X509Certificate } from 'node:crypto';
import { CONTRACT_VERSION, type Authenticator, type AuthRequest, type PluginModule, type UserInfo } from '../../../kernel/contracts/index.js';
import { fileList, readCABundle, verifyPeer } from '../x509/index.js';

export interface RequestHeaderOptions {
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeadersPrefixes: string[];
  allowedNames: string[];
}

function stringList(v: unknown, what: string): string[] {
  if (v === undefined || v === null) return [];
  const list = typeof v === 'string' ? v.split(',') : Array.isArray(v) ? v : undefined;
  if (!list || list.some((x) => typeof x !== 'string')) throw new Error(`${what} must be a list of strings`);
  return (list as string[]).map((x) => x.trim()).filter(Boolean);
}

/** Percent-decoding that leaves malformed escapes as they are. */
function percentDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** User from the headers of an already-trusted request; null when no username header has a value. */
export function userFromHeaders(req: AuthRequest, o: RequestHeaderOptions): UserInfo | null {
  let username: string | undefined;
  for (const h of o.usernameHeaders) {
    const v = req.header(h);
    if (v) {
      username = v;
      break;
    }
  }
  if (!username) return null;
  const groups: string[] = [];
  for (const h of o.groupHeaders) for (const v of req.headerValues(h.toLowerCase())) if (v) groups.push(v);
  const user: UserInfo = { username, groups };
  if (o.extraHeadersPrefixes.length) {
    const extra: Record<string, string[]> = {};
    const prefixes = o.extraHeadersPrefixes.map((p) => p.toLowerCase());
    for (const name of req.headerNames().map((n) => n.toLowerCase())) {
      const prefix = prefixes.find((p) => name.startsWith(p) && name.length > p.length);
      if (!prefix) continue;
      const key = percentDecode(name.slice(prefix.length)).toLowerCase();
      const values = req.headerValues(name).filter((v) => v !== '');
      if (values.length) extra[key] = [...(extra[key] ?? []), ...values];
    }
    if (Object.keys(extra).length) user.extra = extra;
  }
  return user;
}

const plugin: PluginModule<'authenticator'> = {
  kind: 'authenticator',
  contract: CONTRACT_VERSION,
  name: 'request-header',
  create(options): Authenticator {
    const roots: X509Certificate[] = fileList(options.clientCAFile, 'options.clientCAFile (--requestheader-client-ca-file)').flatMap(readCABundle);
    const o: RequestHeaderOptions = {
      usernameHeaders: stringList(options.usernameHeaders, 'options.usernameHeaders'),
      groupHeaders: stringList(options.groupHeaders, 'options.groupHeaders'),
      extraHeadersPrefixes: stringList(options.extraHeadersPrefixes, 'options.extraHeadersPrefixes'),
      allowedNames: stringList(options.allowedNames, 'options.allowedNames'),
    };
    if (!o.usernameHeaders.length) throw new Error('options.usernameHeaders (--requestheader-username-headers) needs at least one header name');
    return {
      authenticate(req) {
        // Not the proxy (no certificate, another CA, expired, or a name not allowed): headers are not looked at.
        const peer = verifyPeer(req, roots);
        if (!peer || 'rejected' in peer) return null;
        if (o.allowedNames.length && !o.allowedNames.includes(peer.CN)) return null;
        const user = userFromHeaders(req, o);
        return user ? { user } : null;
      },
    };
  },
};

export default plugin;
