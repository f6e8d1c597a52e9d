// The RBAC policy as an index: subject (user, group; service accounts are users) → the bindings that
// name it, split into cluster-wide grants (ClusterRoleBindings) and per-namespace grants
// (RoleBindings), plus roles and cluster roles by name. A decision visits only the bindings of the
// caller's name and groups that apply in the request's namespace, so its cost does not grow with
// the number of bindings in the cluster.
import type { AuthorizationDecision, KObject, RequestInfo, UserInfo } from '../../../kernel/contracts/index.js';
import { ruleAllows, rulesOf, type PolicyRule } from './rules.js';

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

export interface RoleRef {
  kind: string;
  name: string;
  apiGroup?: string;
}

interface Binding {
  kind: 'RoleBinding' | 'ClusterRoleBinding';
  namespace: string;
  name: string;
  roleRef: RoleRef;
  /** Subject index keys this binding is filed under. */
  keys: string[];
}

interface Grant {
  binding: Binding;
  subject: Subject;
  /** The allow reason, built on first use (a grant never changes: a changed binding gets new grants). */
  reason?: string;
}

interface SubjectEntry {
  cluster: Map<string, Grant>;
  byNamespace: Map<string, Map<string, Grant>>;
}

export interface StoredRole {
  obj: KObject;
  rules: PolicyRule[];
}

/** Visitor: a rule (or an error resolving one) and where it came from; return false to stop. */
export type RuleVisitor = (source: Grant, rule: PolicyRule | undefined, error: string | undefined) => boolean;

export const SA_PREFIX = 'system:serviceaccount:';

const userKey = (name: string) => `u\u0000${name}`;
const groupKey = (name: string) => `g\u0000${name}`;

/** The index key a binding subject is filed under ('' for kinds that match nobody). */
export function subjectKey(s: Subject, bindingNamespace: string): string {
  switch (s.kind) {
    case 'User': return userKey(s.name);
    case 'Group': return groupKey(s.name);
    case 'ServiceAccount': return userKey(`${SA_PREFIX}${s.namespace || bindingNamespace}:${s.name}`);
    default: return '';
  }
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

/** How the reference names the binding that allowed a request: `ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`. */
export function describeGrant(g: Grant): string {
  const b = g.binding;
  const name = b.kind === 'RoleBinding' ? `${b.name}/${b.namespace}` : b.name;
  return `${b.kind} ${JSON.stringify(name)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(g.subject, b.namespace)}`;
}

/** utilerrors.NewAggregate(...).Error(): one message alone, several in brackets, duplicates once. */
export function aggregateErrors(errs: string[]): string {
  const uniq = [...new Set(errs)];
  return uniq.length === 1 ? uniq[0] : `[${uniq.join(', ')}]`;
}

export function subjectsOf(obj: KObject): Subject[] {
  const list = Array.isArray(obj.subjects) ? (obj.subjects as Record<string, unknown>[]) : [];
  return list.filter((s) => s && typeof s === 'object' && typeof s.kind === 'string' && typeof s.name === 'string') as unknown as Subject[];
}

export function roleRefOf(obj: KObject): RoleRef | undefined {
  const r = obj.roleRef as Record<string, unknown> | undefined;
  if (!r || typeof r !== 'object' || typeof r.kind !== 'string' || typeof r.name !== 'string') return undefined;
  return r as unknown as RoleRef;
}

/** Remembered decisions at most (all are dropped at the bound: a burst of distinct requests). */
const DECISIONS_MAX = 4096;

type Attrs = RequestInfo & { user: UserInfo };

/** A decision and the attributes it was made for (RequestInfo's and the user's name and groups: all a rule can match). */
interface Remembered {
  resourceRequest: boolean; verb: string; path: string; apiGroup: string; resource: string; subresource: string;
  name: string; namespace: string; username: string; groups: string[]; decision: AuthorizationDecision;
}

/** FNV-1a over a string, then a separator, folded into h. */
function mix(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return Math.imul(h ^ 0x1f, 0x01000193);
}

/** A hash of the attributes a decision depends on: found without building a key (equal attributes are then compared one by one). */
function attrsHash(a: Attrs): number {
  let h = mix(mix(0x811c9dc5, a.verb), a.isResourceRequest ? '' : a.path);
  h = mix(mix(mix(mix(mix(mix(h, a.apiGroup), a.resource), a.subresource), a.name), a.namespace), a.user.username);
  const groups = a.user.groups ?? [];
  for (let i = 0; i < groups.length; i++) h = mix(h, groups[i]);
  return h >>> 0;
}

function sameAttrs(r: Remembered, a: Attrs): boolean {
  const groups = a.user.groups ?? [];
  if (r.resourceRequest !== a.isResourceRequest || r.verb !== a.verb || (!r.resourceRequest && r.path !== a.path) || r.apiGroup !== a.apiGroup
    || r.resource !== a.resource || r.subresource !== a.subresource || r.name !== a.name || r.namespace !== a.namespace
    || r.username !== a.user.username || r.groups.length !== groups.length) return false;
  for (let i = 0; i < groups.length; i++) if (r.groups[i] !== groups[i]) return false;
  return true;
}

export class PolicyIndex {
  readonly roles = new Map<string, StoredRole>();
  readonly clusterRoles = new Map<string, StoredRole>();
  private bindings = new Map<string, Binding>();
  private subjects = new Map<string, SubjectEntry>();
  /** Called after every change to a cluster role (the aggregation loop listens). */
  onClusterRoleChange?: (name: string) => void;

  /** @param group the RBAC API group, for "not found" messages. */
  constructor(readonly group: string) {}

  get bindingCount(): number {
    return this.bindings.size;
  }

  // ------------------------------------------------------------ updates

  /** Applies a watch event (or a listed object as ADDED) of one of the four kinds. */
  apply(kind: 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding', type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KObject): void {
    // any change of policy drops every remembered decision: none may outlive what allowed it
    this.forget();
    const ns = obj.metadata?.namespace ?? '';
    const name = obj.metadata?.name ?? '';
    if (!name) return;
    switch (kind) {
      case 'Role':
        if (type === 'DELETED') this.roles.delete(`${ns}/${name}`);
        else this.roles.set(`${ns}/${name}`, { obj, rules: rulesOf(obj) });
        return;
      case 'ClusterRole':
        if (type === 'DELETED') this.clusterRoles.delete(name);
        else this.clusterRoles.set(name, { obj, rules: rulesOf(obj) });
        this.onClusterRoleChange?.(name);
        return;
      default:
        this.removeBinding(kind, kind === 'RoleBinding' ? ns : '', name);
        if (type !== 'DELETED') this.addBinding(kind, obj);
    }
  }

  private bindingId(kind: string, ns: string, name: string) {
    return kind === 'RoleBinding' ? `rb\u0000${ns}\u0000${name}` : `crb\u0000${name}`;
  }

  private addBinding(kind: 'RoleBinding' | 'ClusterRoleBinding', obj: KObject) {
    const roleRef = roleRefOf(obj);
    if (!roleRef) return;
    const ns = kind === 'RoleBinding' ? obj.metadata?.namespace ?? '' : '';
    const b: Binding = { kind, namespace: ns, name: obj.metadata!.name!, roleRef: { kind: roleRef.kind, name: roleRef.name, apiGroup: roleRef.apiGroup }, keys: [] };
    const id = this.bindingId(kind, ns, b.name);
    this.bindings.set(id, b);
    for (const s of subjectsOf(obj)) {
      const key = subjectKey(s, ns);
      if (!key || b.keys.includes(key)) continue;
      b.keys.push(key);
      let e = this.subjects.get(key);
      if (!e) this.subjects.set(key, (e = { cluster: new Map(), byNamespace: new Map() }));
      const grant: Grant = { binding: b, subject: { kind: s.kind, name: s.name, namespace: s.namespace, apiGroup: s.apiGroup } };
      if (kind === 'ClusterRoleBinding') e.cluster.set(id, grant);
      else {
        let m = e.byNamespace.get(ns);
        if (!m) e.byNamespace.set(ns, (m = new Map()));
        m.set(id, grant);
      }
    }
  }

  private removeBinding(kind: string, ns: string, name: string) {
    const id = this.bindingId(kind, ns, name);
    const b = this.bindings.get(id);
    if (!b) return;
    this.bindings.delete(id);
    for (const key of b.keys) {
      const e = this.subjects.get(key);
      if (!e) continue;
      if (kind === 'ClusterRoleBinding') e.cluster.delete(id);
      else {
        const m = e.byNamespace.get(ns);
        m?.delete(id);
        if (m && !m.size) e.byNamespace.delete(ns);
      }
      if (!e.cluster.size && !e.byNamespace.size) this.subjects.delete(key);
    }
  }

  // ------------------------------------------------------------ queries

  /** The rules a role reference grants, for a binding in `namespace` ('' for cluster role bindings). */
  roleRules(ref: RoleRef, namespace: string): { rules?: PolicyRule[]; error?: string } {
    if (ref.kind === 'ClusterRole') {
      const r = this.clusterRoles.get(ref.name);
      return r ? { rules: r.rules } : { error: `clusterrole.${this.group} ${JSON.stringify(ref.name)} not found` };
    }
    if (ref.kind === 'Role' && namespace) {
      const r = this.roles.get(`${namespace}/${ref.name}`);
      return r ? { rules: r.rules } : { error: `role.${this.group} ${JSON.stringify(ref.name)} not found` };
    }
    return { error: `unknown role reference kind ${JSON.stringify(ref.kind)}` };
  }

  private stamp = 0;

  /**
   * The grants that apply to a user in a namespace: cluster role bindings first, then (for a
   * non-empty namespace) the role bindings of that namespace; each binding once.
   */
  grants(user: UserInfo, namespace: string): Grant[] {
    const out: Grant[] = [];
    const u = this.subjects.get(userKey(user.username));
    const groups = user.groups ?? [];
    const entries: SubjectEntry[] = u ? [u] : [];
    for (let i = 0; i < groups.length; i++) {
      const e = this.subjects.get(groupKey(groups[i]));
      if (e) entries.push(e);
    }
    if (!entries.length) return out;
    const stamp = ++this.stamp;
    const add = (g: Grant) => {
      const b = g.binding as Binding & { seen?: number };
      if (b.seen === stamp) return;
      b.seen = stamp;
      out.push(g);
    };
    for (const e of entries) for (const g of e.cluster.values()) add(g);
    if (namespace) {
      for (const e of entries) {
        const m = e.byNamespace.get(namespace);
        if (m) for (const g of m.values()) add(g);
      }
    }
    return out;
  }

  /** Every rule granted to a user in a namespace, in grant order; stops when the visitor returns false. */
  visit(user: UserInfo, namespace: string, visitor: RuleVisitor): void {
    for (const g of this.grants(user, namespace)) {
      const { rules, error } = this.roleRules(g.binding.roleRef, g.binding.namespace);
      if (error) {
        if (!visitor(g, undefined, error)) return;
        continue;
      }
      for (const r of rules!) if (!visitor(g, r, undefined)) return;
    }
  }

  /**
   * Decisions by their attributes (RequestInfo's and the user's name and groups: all a rule can
   * match), until the policy changes: clients repeat the same requests, and each decision would visit
   * the same bindings and rules again.
   */
  private decisions = new Map<number, Remembered[]>();
  private remembered = 0;

  /** Allow with the granting binding as the reason, or no opinion (RBAC never denies). */
  authorize(a: Attrs): AuthorizationDecision {
    const h = attrsHash(a);
    const same = this.decisions.get(h);
    if (same) for (let i = 0; i < same.length; i++) if (sameAttrs(same[i], a)) return same[i].decision;
    const decision = Object.freeze(this.decide(a));
    if (this.remembered >= DECISIONS_MAX) this.forget();
    const r: Remembered = {
      resourceRequest: a.isResourceRequest, verb: a.verb, path: a.path, apiGroup: a.apiGroup, resource: a.resource, subresource: a.subresource,
      name: a.name, namespace: a.namespace, username: a.user.username, groups: [...(a.user.groups ?? [])], decision,
    };
    if (same && this.decisions.get(h) === same) same.push(r);
    else this.decisions.set(h, [r]);
    this.remembered++;
    return decision;
  }

  private forget(): void {
    this.decisions.clear();
    this.remembered = 0;
  }

  private decide(a: RequestInfo & { user: UserInfo }): AuthorizationDecision {
    let errs: string[] | undefined;
    const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    for (const g of this.grants(a.user, a.namespace)) {
      const { rules, error } = this.roleRules(g.binding.roleRef, g.binding.namespace);
      if (error) {
        (errs ??= []).push(error);
        continue;
      }
      for (let i = 0; i < rules!.length; i++) {
        if (ruleAllows(a, rules![i], combined)) return { decision: 'allow', reason: (g.reason ??= `RBAC: allowed by ${describeGrant(g)}`) };
      }
    }
    return errs ? { decision: 'no-opinion', reason: `RBAC: ${aggregateErrors(errs)}` } : { decision: 'no-opinion' };
  }

  /** All rules a user holds in a namespace (cluster-wide ones included), and errors resolving them. */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    this.visit(user, namespace, (_g, rule, err) => {
      if (rule) rules.push(rule);
      if (err) errors.push(err);
      return true;
    });
    return { rules, errors };
  }
}
