// Write guards on roles, cluster roles and their bindings: defaulting and validation of the RBAC
// fields, the immutable roleRef, and escalation prevention. A caller may write a role only with
// rules it already holds at that scope (or with verb "escalate" on the role resource), and a binding
// only to a role whose rules it holds (or with verb "bind" on that role). system:masters may do both.
import type { AuthorizationAttributes, FieldCause, KObject, PluginHost, UserInfo, WriteGuard } from '../../../kernel/contracts/index.js';
import { errors, StatusError } from '../../../kernel/contracts/status.js';
import type { PolicyIndex } from './policy-index.js';
import { roleRefOf } from './policy-index.js';
import { covers, describeMissing, goQuoteList, rulesOf, type PolicyRule } from './rules.js';

export const PRIVILEGED_GROUP = 'system:masters';

const FULL_AUTHORITY: PolicyRule[] = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, { verbs: ['*'], nonResourceURLs: ['*'] }];

/** Go's %#v of a string slice: []string{"a", "b"}. */
const goSlice = (l: unknown) => `[]string{${(Array.isArray(l) ? l : []).map((s) => JSON.stringify(String(s))).join(', ')}}`;
const goStr = (s: unknown) => JSON.stringify(typeof s === 'string' ? s : '');
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const len = (v: unknown) => arr(v).length;

/** Field errors of the rules of a role (the reference's ValidatePolicyRule). */
export function validateRules(obj: KObject, namespaced: boolean): FieldCause[] {
  const causes: FieldCause[] = [];
  arr(obj.rules).forEach((raw, i) => {
    const r = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    const at = `rules[${i}]`;
    if (!len(r.verbs)) causes.push({ reason: 'FieldValueRequired', field: `${at}.verbs`, message: 'Required value: verbs must contain at least one value' });
    if (len(r.nonResourceURLs)) {
      if (namespaced) causes.push({ reason: 'FieldValueInvalid', field: `${at}.nonResourceURLs`, message: `Invalid value: ${goSlice(r.nonResourceURLs)}: namespaced rules cannot apply to non-resource URLs` });
      if (len(r.apiGroups) || len(r.resources) || len(r.resourceNames)) {
        causes.push({ reason: 'FieldValueInvalid', field: `${at}.nonResourceURLs`, message: `Invalid value: ${goSlice(r.nonResourceURLs)}: rules cannot apply to both regular resources and non-resource URLs` });
      }
      return;
    }
    if (!len(r.apiGroups)) causes.push({ reason: 'FieldValueRequired', field: `${at}.apiGroups`, message: 'Required value: resource rules must supply at least one api group' });
    if (!len(r.resources)) causes.push({ reason: 'FieldValueRequired', field: `${at}.resources`, message: 'Required value: resource rules must supply at least one resource' });
  });
  return causes;
}

/** Subjects of User and Group kinds default to the RBAC group; a roleRef without a group gets it too. */
export function defaultBinding(obj: KObject, group: string): void {
  const ref = obj.roleRef as Record<string, unknown> | undefined;
  if (ref && typeof ref === 'object' && !ref.apiGroup) ref.apiGroup = group;
  for (const s of arr(obj.subjects) as Record<string, unknown>[]) {
    if (s && typeof s === 'object' && !s.apiGroup && (s.kind === 'User' || s.kind === 'Group')) s.apiGroup = group;
  }
}

/** Field errors of a binding's roleRef and subjects (the reference's ValidateRoleBinding). */
export function validateBinding(obj: KObject, namespaced: boolean, group: string): FieldCause[] {
  const causes: FieldCause[] = [];
  const ref = (obj.roleRef && typeof obj.roleRef === 'object' ? obj.roleRef : {}) as Record<string, unknown>;
  if (ref.apiGroup !== group) causes.push({ reason: 'FieldValueNotSupported', field: 'roleRef.apiGroup', message: `Unsupported value: ${goStr(ref.apiGroup)}: supported values: "${group}"` });
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref.kind as string)) causes.push({ reason: 'FieldValueNotSupported', field: 'roleRef.kind', message: `Unsupported value: ${goStr(ref.kind)}: supported values: ${kinds.map((k) => `"${k}"`).join(', ')}` });
  if (!ref.name) causes.push({ reason: 'FieldValueRequired', field: 'roleRef.name', message: 'Required value' });
  arr(obj.subjects).forEach((raw, i) => {
    const s = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    const at = `subjects[${i}]`;
    if (!s.name) causes.push({ reason: 'FieldValueRequired', field: `${at}.name`, message: 'Required value' });
    switch (s.kind) {
      case 'ServiceAccount':
        if (s.apiGroup) causes.push({ reason: 'FieldValueNotSupported', field: `${at}.apiGroup`, message: `Unsupported value: ${goStr(s.apiGroup)}: supported values: ""` });
        if (!namespaced && !s.namespace) causes.push({ reason: 'FieldValueRequired', field: `${at}.namespace`, message: 'Required value' });
        break;
      case 'User': case 'Group':
        if (s.apiGroup !== group) causes.push({ reason: 'FieldValueNotSupported', field: `${at}.apiGroup`, message: `Unsupported value: ${goStr(s.apiGroup)}: supported values: "${group}"` });
        break;
      default:
        causes.push({ reason: 'FieldValueNotSupported', field: `${at}.kind`, message: `Unsupported value: ${goStr(s.kind)}: supported values: "ServiceAccount", "User", "Group"` });
    }
  });
  return causes;
}

/** The roleRef the way Go prints the internal struct: rbac.RoleRef{APIGroup:"…", Kind:"…", Name:"…"}. */
function goRoleRef(r: unknown): string {
  const o = (r && typeof r === 'object' ? r : {}) as Record<string, unknown>;
  return `rbac.RoleRef{APIGroup:${goStr(o.apiGroup)}, Kind:${goStr(o.kind)}, Name:${goStr(o.name)}}`;
}

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
    const kind = namespaced ? 'Role' : 'ClusterRole';
    const name = obj.metadata?.name ?? '';
    const causes = validateRules(obj, namespaced);
    if (causes.length) throw errors.invalid(group, kind, name, causes);
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
    const kind = namespaced ? 'RoleBinding' : 'ClusterRoleBinding';
    const name = obj.metadata?.name ?? '';
    defaultBinding(obj, group);
    const causes = validateBinding(obj, namespaced, group);
    if (op === 'UPDATE' && old && JSON.stringify(obj.roleRef) !== JSON.stringify(old.roleRef)) {
      causes.push({ reason: 'FieldValueInvalid', field: 'roleRef', message: `Invalid value: ${goRoleRef(obj.roleRef)}: cannot change roleRef` });
    }
    if (causes.length) throw errors.invalid(group, kind, name, causes);
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
