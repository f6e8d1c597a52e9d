// The default roles and bindings (the reference's bootstrap policy, kept as data in
// bootstrap-policy.json in the neutral brand and translated to the chosen one here) and their
// reconciliation at every start:
// missing objects are created, missing rules, aggregation selectors, labels and subjects are added,
// a binding whose roleRef changed is recreated; objects annotated autoupdate=false are left alone.
import { brandGroup, brands, type Brand } from '../../../kernel/contracts/brand.js';
import type { KObject, PluginHost, TypeDef } from '../../../kernel/contracts/index.js';
import bootstrapData from './bootstrap-policy.json' with { type: 'json' };
import { covers, rulesOf, ruleJson, type PolicyRule } from './rules.js';

/** A rule in the data's compact notation: comma lists; groups written in the neutral brand ("" is core). */
export interface RuleData { v: string; g?: string; r?: string; n?: string; u?: string }
export interface RoleData {
  /** aggregate-to-<x> labels (under the RBAC group) set to "true". */
  labels?: string[];
  /** aggregate-to-<x> label selectors of the aggregation rule. */
  aggregate?: string[];
  rules?: RuleData[];
}
/** Subjects: "Group:<name>", "User:<name>", "SA:<namespace>:<name>". */
export interface BindingData { role?: string; roleKind?: string; subjects?: string[] }
export interface BootstrapPolicy {
  clusterRoles: Record<string, RoleData>;
  clusterRoleBindings: Record<string, BindingData>;
  roles: Record<string, Record<string, RoleData>>;
  roleBindings: Record<string, Record<string, BindingData>>;
}

/** The reference's bootstrap policy (written by gen-bootstrap-policy.ts, in the neutral brand). */
const DATA = bootstrapData as BootstrapPolicy;
const NEUTRAL = brands.cluster;

const list = (s: string | undefined) => (s === undefined ? undefined : s.split(','));

/** Label, annotation and group names of the RBAC defaults in a brand. */
export function rbacNames(brand: Brand) {
  const group = `rbac.authorization.${brand.domain}`;
  return {
    group,
    apiVersion: `${group}/v1`,
    bootstrapLabel: `${brand.keyDomain}/bootstrapping`,
    autoupdate: `rbac.authorization.${brand.keyDomain}/autoupdate`,
    aggregateLabel: (to: string) => `${group}/${to}`,
  };
}

/** Neutral names into a brand: API groups inside role names, signer names and their approver roles, system namespaces. */
function translator(brand: Brand) {
  const signers = Object.keys(NEUTRAL.signers) as (keyof Brand['signers'])[];
  const path = (s: string) => s.slice(s.indexOf('/') + 1);
  const groups = (s: string) => s.replace(/\b((?:[a-z0-9-]+\.)*)cluster\.io\b/g, (m) => brandGroup(brand, m));
  return {
    groups,
    name(name: string): string {
      const m = /^(system:certificates\.cluster\.io:)(.+)-approver$/.exec(name);
      const key = m && signers.find((k) => path(NEUTRAL.signers[k]) === m[2]);
      return key ? `${groups(m[1])}${path(brand.signers[key])}-approver` : groups(name);
    },
    resourceName(n: string): string {
      const key = signers.find((k) => NEUTRAL.signers[k] === n);
      return key ? brand.signers[key] : n;
    },
    namespace(ns: string): string {
      return ns === NEUTRAL.systemNamespace ? brand.systemNamespace : ns === NEUTRAL.publicNamespace ? brand.publicNamespace : ns;
    },
  };
}

/** The default policy of a brand as API objects, in the reference's order of rules and subjects. */
function buildPolicy(brand: Brand) {
  const n = rbacNames(brand);
  const t = translator(brand);
  const meta = (name: string, namespace: string | undefined, labels: string[] = []) => ({
    name: t.name(name),
    ...(namespace !== undefined ? { namespace: t.namespace(namespace) } : {}),
    labels: { [n.bootstrapLabel]: 'rbac-defaults', ...Object.fromEntries(labels.map((l) => [n.aggregateLabel(l), 'true'])) },
    annotations: { [n.autoupdate]: 'true' },
  });
  const rule = (r: RuleData): PolicyRule => {
    const out: PolicyRule = { verbs: list(r.v)! };
    if (r.g !== undefined) out.apiGroups = list(r.g)!.map((g) => brandGroup(brand, g));
    if (r.r !== undefined) out.resources = list(r.r);
    if (r.n !== undefined) out.resourceNames = list(r.n)!.map(t.resourceName);
    if (r.u !== undefined) out.nonResourceURLs = list(r.u);
    return out;
  };
  const role = (kind: string, name: string, spec: RoleData, namespace?: string): KObject => {
    const o: KObject = { apiVersion: n.apiVersion, kind, metadata: meta(name, namespace, spec.labels) };
    if (spec.aggregate) o.aggregationRule = { clusterRoleSelectors: spec.aggregate.map((l) => ({ matchLabels: { [n.aggregateLabel(l)]: 'true' } })) };
    o.rules = (spec.rules ?? []).map((r) => ruleJson(rule(r)));
    return o;
  };
  const binding = (kind: string, name: string, spec: BindingData, namespace?: string): KObject => {
    const o: KObject = { apiVersion: n.apiVersion, kind, metadata: meta(name, namespace) };
    if (spec.subjects?.length) {
      o.subjects = spec.subjects.map((s) => {
        const i = s.indexOf(':');
        const [kind, who] = [s.slice(0, i), s.slice(i + 1)];
        if (kind !== 'SA') return { kind, apiGroup: n.group, name: who };
        const j = who.indexOf(':');
        return { kind: 'ServiceAccount', name: who.slice(j + 1), namespace: t.namespace(who.slice(0, j)) };
      });
    }
    o.roleRef = { apiGroup: n.group, kind: spec.roleKind ?? (kind === 'RoleBinding' ? 'Role' : 'ClusterRole'), name: t.name(spec.role ?? name) };
    return o;
  };
  const namespaced = <T>(m: Record<string, Record<string, T>>, f: (name: string, spec: T, ns: string) => KObject) =>
    Object.entries(m).flatMap(([ns, objs]) => Object.entries(objs).map(([name, spec]) => f(name, spec, ns)));
  return {
    clusterRoles: Object.entries(DATA.clusterRoles).map(([name, spec]) => role('ClusterRole', name, spec)),
    clusterRoleBindings: Object.entries(DATA.clusterRoleBindings).map(([name, spec]) => binding('ClusterRoleBinding', name, spec)),
    roles: namespaced(DATA.roles, (name, spec, ns) => role('Role', name, spec, ns)),
    roleBindings: namespaced(DATA.roleBindings, (name, spec, ns) => binding('RoleBinding', name, spec, ns)),
  };
}

/** The default cluster roles and cluster role bindings of a brand, as API objects. */
export function defaultPolicy(brand: Brand): { clusterRoles: KObject[]; clusterRoleBindings: KObject[] } {
  const { clusterRoles, clusterRoleBindings } = buildPolicy(brand);
  return { clusterRoles, clusterRoleBindings };
}

/** The default Roles and RoleBindings (in the system and public namespaces) of a brand. */
export function defaultNamespacePolicy(brand: Brand): { roles: KObject[]; roleBindings: KObject[] } {
  const { roles, roleBindings } = buildPolicy(brand);
  return { roles, roleBindings };
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** Existing labels and annotations win; expected ones are added. */
function mergeMeta(existing: KObject, expected: KObject): boolean {
  let changed = false;
  for (const k of ['labels', 'annotations'] as const) {
    const want = (expected.metadata?.[k] ?? {}) as Record<string, string>;
    const have = (existing.metadata![k] ??= {}) as Record<string, string>;
    for (const [key, v] of Object.entries(want)) if (!(key in have)) { have[key] = v; changed = true; }
  }
  return changed;
}

type Selector = Record<string, unknown>;
const selectorsOf = (o: KObject): Selector[] => ((o.aggregationRule as { clusterRoleSelectors?: Selector[] } | undefined)?.clusterRoleSelectors ?? []);

/** The reconciled form of an existing cluster role, or undefined when nothing is missing. */
export function reconcileRole(existing: KObject, expected: KObject, autoupdateKey: string): KObject | undefined {
  if (existing.metadata?.annotations?.[autoupdateKey] === 'false') return undefined;
  const out = clone(existing);
  let changed = mergeMeta(out, expected);
  const wantSel = selectorsOf(expected);
  if (wantSel.length) {
    const have = selectorsOf(out);
    const missing = wantSel.filter((w) => !have.some((h) => JSON.stringify(h) === JSON.stringify(w)));
    if (missing.length) {
      out.aggregationRule = { ...(out.aggregationRule as object | undefined), clusterRoleSelectors: [...have, ...missing] };
      changed = true;
    }
  }
  const { missing } = covers(rulesOf(out), rulesOf(expected));
  if (missing.length) {
    out.rules = [...(Array.isArray(out.rules) ? out.rules : []), ...missing.map(ruleJson)];
    changed = true;
  }
  return changed ? out : undefined;
}

type Subj = { kind: string; name: string; namespace?: string; apiGroup?: string };
const sameSubject = (a: Subj, b: Subj) => a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');

/** 'recreate' when the roleRef differs, an updated binding when subjects or labels are missing, undefined otherwise. */
export function reconcileBinding(existing: KObject, expected: KObject, autoupdateKey: string): KObject | 'recreate' | undefined {
  if (existing.metadata?.annotations?.[autoupdateKey] === 'false') return undefined;
  if (JSON.stringify(existing.roleRef) !== JSON.stringify(expected.roleRef)) return 'recreate';
  const out = clone(existing);
  let changed = mergeMeta(out, expected);
  const have = (Array.isArray(out.subjects) ? out.subjects : []) as Subj[];
  const missing = ((expected.subjects ?? []) as Subj[]).filter((w) => !have.some((h) => sameSubject(h, w)));
  if (missing.length) {
    out.subjects = [...have, ...missing];
    changed = true;
  }
  return changed ? out : undefined;
}

/** Creates or repairs every default role and binding; failures are logged, not fatal. */
export async function reconcileDefaults(host: PluginHost, roleType: TypeDef, bindingType: TypeDef, nsTypes?: { role: TypeDef; binding: TypeDef }): Promise<{ created: number; updated: number }> {
  const n = rbacNames(host.brand);
  const { clusterRoles, clusterRoleBindings } = defaultPolicy(host.brand);
  let created = 0;
  let updated = 0;
  const one = async (type: TypeDef, expected: KObject) => {
    const name = expected.metadata!.name!;
    const namespace = expected.metadata!.namespace ?? '';
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const existing = await host.objects.get(type, namespace, name);
        if (!existing) {
          await host.objects.create(type, clone(expected));
          created++;
          return;
        }
        const next = type === roleType || type === nsTypes?.role ? reconcileRole(existing, expected, n.autoupdate) : reconcileBinding(existing, expected, n.autoupdate);
        if (!next) return;
        if (next === 'recreate') {
          await host.objects.delete(type, namespace, name);
          await host.objects.create(type, clone(expected));
        } else {
          await host.objects.update(type, next);
        }
        updated++;
        return;
      } catch (e) {
        const code = (e as { code?: number }).code;
        if ((code === 409) && attempt < 2) continue; // raced with another writer: read again
        host.log.warn('rbac: cannot reconcile default policy', { kind: type.kind, name, error: String((e as Error).message ?? e) });
        return;
      }
    }
  };
  for (const r of clusterRoles) await one(roleType, r);
  for (const b of clusterRoleBindings) await one(bindingType, b);
  const nsType = host.type('', 'namespaces');
  if (nsTypes && nsType) {
    const { roles, roleBindings } = defaultNamespacePolicy(host.brand);
    // The namespaces the policy names are made here if missing, as the reference's bootstrap policy does.
    for (const ns of new Set(roles.map((r) => r.metadata!.namespace!))) {
      if (await host.objects.get(nsType, '', ns)) continue;
      try { await host.objects.create(nsType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }); } catch (e) { if ((e as { code?: number }).code !== 409) throw e; }
    }
    for (const r of roles) await one(nsTypes.role, r);
    for (const b of roleBindings) await one(nsTypes.binding, b);
  }
  return { created, updated };
}
