// Authorization: the authorizer chain decides; a request it does not allow is 403 Forbidden.
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer, RequestInfo, UserInfo } from '../contracts/index.js';
import { errors, StatusError } from '../contracts/status.js';
import type { AuditContext } from '../ops/audit.js';

export interface NamedAuthorizer { name: string; plugin: Authorizer }

/** What the authorization stage needs: the chain's decision. */
export interface AuthorizeContext { decide(attrs: AuthorizationAttributes): Promise<AuthorizationDecision> }

/** The authorizer chain's decision: the first allow or deny decides; no opinion from all is a deny. */
export async function decide(authorizers: readonly NamedAuthorizer[], log: { warn(msg: string, fields?: Record<string, unknown>): void }, attrs: AuthorizationAttributes): Promise<AuthorizationDecision> {
  const reasons: string[] = [];
  for (const a of authorizers) {
    let d;
    try { d = await a.plugin.authorize(attrs); } catch (e) {
      // A failing authorizer has no opinion; the next one (or the default deny) decides.
      log.warn('authorizer failed', { authorizer: a.name, error: String(e) });
      continue;
    }
    if (d.decision !== 'no-opinion') return d;
    if (d.reason) reasons.push(d.reason);
  }
  // As the reference does, the reasons of every authorizer that had no opinion explain the deny.
  return { decision: 'no-opinion', reason: reasons.length ? reasons.join(', ') : undefined };
}

export async function authorize(ctx: AuthorizeContext, user: UserInfo, info: RequestInfo, audit?: AuditContext): Promise<void> {
  // the fields one by one: a spread of the request info was 3 % of a GET's CPU in the profile
  const d = await ctx.decide({
    isResourceRequest: info.isResourceRequest, path: info.path, verb: info.verb, apiPrefix: info.apiPrefix, apiGroup: info.apiGroup,
    apiVersion: info.apiVersion, namespace: info.namespace, resource: info.resource, subresource: info.subresource, name: info.name, user,
  });
  audit?.authorized(d);
  if (d.decision !== 'allow') throw forbidden(user, info, d.reason);
}

function forbidden(user: UserInfo, info: RequestInfo, reason: string | undefined): StatusError {
  if (!info.isResourceRequest) {
    return new StatusError(403, 'Forbidden', `forbidden: User "${user.username}" cannot ${info.verb} path "${info.path}"${reason ? `: ${reason}` : ''}`, {});
  }
  return errors.forbiddenRequest(user.username, info.verb, info.apiGroup, info.resource, info.subresource, info.namespace, info.name, reason);
}
