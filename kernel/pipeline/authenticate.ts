// Authentication: the configured authenticators in order; the first user wins.
import type { AuthenticationResult, Authenticator, AuthRequest, UserInfo } from '../contracts/index.js';
import { isPromise } from '../http/types.js';
import { errors } from '../contracts/status.js';

export interface NamedAuthenticator { name: string; plugin: Authenticator }

/**
 * Authenticators in order; the first user wins; a refused credential is 401, never anonymous. At
 * once while the plugins answer at once; from the first that has to wait, a promise.
 */
export function authenticate(authenticators: readonly NamedAuthenticator[], req: AuthRequest, from = 0, rejected?: string): UserInfo | Promise<UserInfo> {
  for (let i = from; i < authenticators.length; i++) {
    let r: AuthenticationResult | Promise<AuthenticationResult>;
    try { r = authenticators[i].plugin.authenticate(req); } catch (e) { r = refused(e); }
    if (isPromise(r)) {
      return r.then((x) => x, refused).then((x) => {
        const u = judged(x, rejected);
        return typeof u === 'object' ? u : authenticate(authenticators, req, u === 'stop' ? authenticators.length : i + 1, x && 'rejected' in x ? rejected ?? x.rejected : rejected);
      });
    }
    const u = judged(r, rejected);
    if (typeof u === 'object') return u;
    if (u === 'stop') break;
    if (r && 'rejected' in r) rejected ??= r.rejected;
  }
  throw errors.unauthorized();
}

const refused = (e: unknown): AuthenticationResult => ({ rejected: (e as Error).message });

/** One authenticator's answer: the user, the next authenticator, or 'stop' (anonymous after a refused credential). */
function judged(r: AuthenticationResult, rejected: string | undefined): UserInfo | 'next' | 'stop' {
  if (!r || 'rejected' in r) return 'next';
  const u = r.user;
  if (rejected !== undefined && u.username === 'system:anonymous') return 'stop';
  // Every authenticated user is in system:authenticated; the anonymous user is not.
  if (u.username !== 'system:anonymous' && !u.groups.includes('system:authenticated')) u.groups = [...u.groups, 'system:authenticated'];
  return u;
}

/** TokenReview: the token through the configured authenticators, as a request carrying it would go. */
export async function authenticateToken(authenticators: readonly NamedAuthenticator[], token: string): Promise<UserInfo | undefined> {
  const req: AuthRequest = {
    method: 'GET', path: '/', remoteAddress: '',
    header: (n) => (n.toLowerCase() === 'authorization' ? `Bearer ${token}` : undefined),
    headerValues: (n) => (n.toLowerCase() === 'authorization' ? [`Bearer ${token}`] : []),
    headerNames: () => ['authorization'],
  };
  try {
    const u = await authenticate(authenticators, req);
    return u.username === 'system:anonymous' ? undefined : u;
  } catch {
    return undefined;
  }
}
