// Write guards on roles, cluster roles and their bindings: escalation prevention (their defaulting
// and validation belong to the types, plugins/types/builtin/validation/rbac.ts, whatever authorizes). A caller may write a role only with
// rules it already holds at that scope (or with verb "escalate" on the role resource), and a binding
// only to a role whose rules it holds (or with verb "bind" on that role). system:masters may do both.
import type { AuthorizationAttributes, KObject, PluginHost, UserInfo, WriteGuard } from '../../../kernel/contracts/index.js';
import { StatusError } from '../../../kernel/contracts/status.js';
import type { PolicyIndex } from './policy-index.js';
import { roleRefOf } from './policy-index.js';
import { covers, describeMissing, goQuoteList, rulesOf, type PolicyRule } from './rules.js';

export const PRIVILEGED_GROUP = 'system:masters';

const FULL_AUTHORITY: PolicyRule[] = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, { verbs: ['*'], nonResourceURLs: ['*'] }];


/** Whether an update changes only what the garbage collector writes (owner references, finalizers). */
function onlyGCFields(obj: KObject, old: KObject): boolean {
  const strip = (o: KObject) => {
    const { metadata = {}, ...rest } = o;
    const { ownerReferences: _o, finalizers: _f, resourceVersion: _r, managedFields: _m, generation: _g, ...md } = metadata;
    return JSON.stringify({ ...rest, metadata: md });
  };
  return strip(obj) === strip(old);
}

export interface GuardContext {
  host: PluginHost;
  index: PolicyIndex;
  group: string;
}

export function escalationMessage(user: UserInfo, missing: PolicyRule[], resolutionErrors: string[]): string {
  let msg = `user ${JSON.stringify(user.username)} (groups=${goQuoteList(user.groups ?? [])}) is attempting to grant RBAC permissions not currently held:\n${describeMissing(missing)}`;
  if (resolutionErrors.length) msg += `; resolution errors: [${resolutionErrors.join(' ')}]`;
  return msg;
}

const forbidden = (resource: string, group: string, name: string, msg: string) =>
  new StatusError(403, 'Forbidden', `${resource}.${group} ${JSON.stringify(name)} is forbidden: ${msg}`, { name, group, kind: resource });

/** The four guards, keyed by resource. */
export function rbacGuards(ctx: GuardContext): Record<'roles' | 'clusterroles' | 'rolebindings' | 'clusterrolebindings', WriteGuard> {
  const { host, index, group } = ctx;
  const isPrivileged = (u: UserInfo) => (u.groups ?? []).includes(PRIVILEGED_GROUP);
  const allowed = async (user: UserInfo, verb: string, resource: string, namespace: string, name: string) => {
    const attrs: AuthorizationAttributes = {
      user, isResourceRequest: true, path: '', verb, apiPrefix: 'apis', apiGroup: group, apiVersion: '*', namespace, resource, subresource: '', name,
    };
    return (await host.authorize(attrs)).decision === 'allow';
  };
  const noEscalation = (user: UserInfo, namespace: string, rules: PolicyRule[]): string | undefined => {
    const owner = index.rulesFor(user, namespace);
    const { ok, missing } = covers(owner.rules, rules);
    return ok ? undefined : escalationMessage(user, missing, owner.errors);
  };

  const roleGuard = (resource: 'roles' | 'clusterroles'): WriteGuard => async (op, obj, old, user) => {
    const namespaced = resource === 'roles';
    const name = obj.metadata?.name ?? '';
    if (isPrivileged(user)) return;
    if (op === 'UPDATE' && old && onlyGCFields(obj, old)) return;
    const namespace = namespaced ? obj.metadata?.namespace ?? '' : '';
    if (await allowed(user, 'escalate', resource, namespace, op === 'UPDATE' ? name : '')) return;
    const msg = noEscalation(user, namespace, rulesOf(obj));
    if (msg) throw forbidden(resource, group, name, msg);
    // An aggregation rule can gather anything: only holders of every permission may set or change one.
    if (!namespaced && (obj.aggregationRule || old?.aggregationRule) && noEscalation(user, '', FULL_AUTHORITY)) {
      throw forbidden(resource, group, name, 'must have cluster-admin privileges to use the aggregationRule');
    }
  };

  const bindingGuard = (resource: 'rolebindings' | 'clusterrolebindings'): WriteGuard => async (op, obj, old, user) => {
    const namespaced = resource === 'rolebindings';
    const name = obj.metadata?.name ?? '';
    if (isPrivileged(user)) return;
    if (op === 'UPDATE' && old && onlyGCFields(obj, old)) return;
    const namespace = namespaced ? obj.metadata?.namespace ?? '' : '';
    const ref = roleRefOf(obj)!;
    const refResource = ref.kind === 'Role' ? 'roles' : 'clusterroles';
    if (await allowed(user, 'bind', refResource, namespace, ref.name)) return;
    const { rules, error } = index.roleRules(ref, namespace);
    if (error) throw forbidden(resource, group, name, error.replace(/^(cluster)?role\./, (m) => (m === 'role.' ? 'roles.' : 'clusterroles.')));
    const msg = noEscalation(user, namespace, rules!);
    if (msg) throw forbidden(resource, group, name, msg);
  };

  return {
    roles: roleGuard('roles'),
    clusterroles: roleGuard('clusterroles'),
    rolebindings: bindingGuard('rolebindings'),
    clusterrolebindings: bindingGuard('clusterrolebindings'),
  };
}
