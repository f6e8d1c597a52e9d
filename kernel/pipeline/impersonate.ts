// Impersonation: Impersonate-User / -Group / -Uid / -Extra-<key>, each allowed to the caller first.
import type { AuthorizationAttributes, UserInfo } from '../contracts/index.js';
import { errors, StatusError } from '../contracts/status.js';
import type { KRequest } from '../http/types.js';
import type { AuthorizeContext } from './authorize.js';

/** What impersonation needs: the authorizer chain, and the brand's domain (its authentication group). */
export interface ImpersonateContext extends AuthorizeContext { readonly brand: { readonly domain: string } }

/**
 * Each requested attribute must be allowed to the caller with verb "impersonate" (users, groups,
 * serviceaccounts, uids, userextras/<key> in the authentication group); then the request runs as the
 * impersonated user. Without Impersonate-User the caller is returned as it is.
 */
export function impersonate(ctx: ImpersonateContext, req: KRequest, caller: UserInfo): UserInfo | Promise<UserInfo> {
  const names = req.headerNames();
  let asked = false;
  for (let i = 0; i < names.length && !asked; i++) asked = names[i].startsWith('impersonate-');
  if (!asked) return caller;
  const name = req.header('impersonate-user');
  const groups = req.headerValues('impersonate-group');
  const uid = req.header('impersonate-uid');
  const extra: Record<string, string[]> = {};
  for (const h of names) {
    if (!h.startsWith('impersonate-extra-')) continue;
    let key = h.slice('impersonate-extra-'.length);
    try { key = decodeURIComponent(key); } catch { throw errors.badRequest(`invalid Impersonate-Extra header: ${h}`); }
    extra[key.toLowerCase()] = req.headerValues(h);
  }
  if (name === undefined) {
    if (groups.length || uid !== undefined || Object.keys(extra).length) throw errors.badRequest('requested impersonation of groups, extra or uid without impersonating a user');
    return caller;
  }
  return impersonateAs(ctx, caller, name, groups, uid, extra);
}

/** Each impersonated attribute authorized in turn, then the impersonated user. */
async function impersonateAs(ctx: ImpersonateContext, caller: UserInfo, name: string, groups: string[], uid: string | undefined, extra: Record<string, string[]>): Promise<UserInfo> {
  const authGroup = `authentication.${ctx.brand.domain}`;
  const check = async (resource: string, resourceName: string, group = '', namespace = '', subresource = '') => {
    const attrs: AuthorizationAttributes = { user: caller, isResourceRequest: true, path: '', verb: 'impersonate', apiPrefix: 'api', apiGroup: group, apiVersion: '', namespace, resource, subresource, name: resourceName };
    const d = await ctx.decide(attrs);
    if (d.decision !== 'allow') {
      const what = subresource ? `${resource}/${subresource}` : resource;
      throw new StatusError(403, 'Forbidden', `${group ? `${resource}.${group}` : resource} "${resourceName}" is forbidden: User "${caller.username}" cannot impersonate resource "${what}" in API group "${group}"${namespace ? ` in the namespace "${namespace}"` : ' at the cluster scope'}`, { name: resourceName, group: group || undefined, kind: resource });
    }
  };
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(name);
  if (sa) await check('serviceaccounts', sa[2], '', sa[1]);
  else await check('users', name);
  for (const g of groups) await check('groups', g);
  if (uid !== undefined) await check('uids', uid, authGroup);
  for (const [k, vs] of Object.entries(extra)) for (const v of vs) await check('userextras', v, authGroup, '', k);
  const user: UserInfo = { username: name, groups: [...groups], extra };
  if (uid !== undefined) user.uid = uid;
  if (sa) user.groups.push('system:serviceaccounts', `system:serviceaccounts:${sa[1]}`);
  if (name !== 'system:anonymous' && !user.groups.includes('system:authenticated')) user.groups.push('system:authenticated');
  if (name === 'system:anonymous' && !user.groups.includes('system:unauthenticated')) user.groups.push('system:unauthenticated');
  return user;
}
