// Authentication: the configured authenticators in order; the first user wins.
import type { Authenticator, AuthRequest, UserInfo } from '../contracts/index.js';
import { errors } from '../contracts/status.js';

export interface NamedAuthenticator { name: string; plugin: Authenticator }

/** Authenticators in order; the first user wins; a refused credential is 401, never anonymous. */
export async function authenticate(authenticators: readonly NamedAuthenticator[], req: AuthRequest): Promise<UserInfo> {
  let rejected: string | undefined;
  for (const a of authenticators) {
    let r;
    try { r = await a.plugin.authenticate(req); } catch (e) { r = { rejected: (e as Error).message }; }
    if (!r) continue;
    if ('rejected' in r) { rejected ??= r.rejected; continue; }
    const u = r.user;
    if (rejected !== undefined && u.username === 'system:anonymous') break;
    // Every authenticated user is in system:authenticated; the anonymous user is not.
    if (u.username !== 'system:anonymous' && !u.groups.includes('system:authenticated')) u.groups = [...u.groups, 'system:authenticated'];
    return u;
  }
  throw errors.unauthorized();
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
