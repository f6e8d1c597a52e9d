// The default cluster roles and bindings, as data, and their reconciliation at every start:
// missing objects are created, missing rules, aggregation selectors, labels and subjects are added,
// a binding whose roleRef changed is recreated; objects annotated autoupdate=false are left alone.
import { brandGroup, type Brand } from '../../../kernel/brand.js';
import type { KObject, PluginHost, TypeDef } from '../../../kernel/contracts.js';
import { covers, rulesOf, ruleJson, type PolicyRule } from './rules.js';

const READ = 'get,list,watch';
const WRITE = 'create,delete,deletecollection,patch,update';
const RW = `${READ},${WRITE}`;

/** Rules in a compact notation: comma lists; groups are written with the spec's placeholder domain ("" is core). */
type RuleSpec = { v: string; g?: string; r?: string; n?: string; u?: string };
const R = (v: string, g: string, r: string, n?: string): RuleSpec => ({ v, g, r, n });
const U = (v: string, u: string): RuleSpec => ({ v, u });

const EVENTS = R('create,patch,update', ',events.cluster.io', 'events');

interface RoleSpec {
  rules: RuleSpec[];
  /** Label keys (under rbac.authorization.<domain>/) set to "true". */
  labels?: string[];
  /** aggregate-to-<x> selectors. */
  aggregate?: string;
}

const CLUSTER_ROLES: Record<string, RoleSpec> = {
  'cluster-admin': { rules: [R('*', '*', '*'), U('*', '*')] },
  'system:discovery': { rules: [U('get', '/api,/api/*,/apis,/apis/*,/healthz,/livez,/openapi,/openapi/*,/readyz,/version,/version/')] },
  'system:monitoring': { rules: [U('get', '/healthz,/healthz/*,/livez,/livez/*,/metrics,/metrics/slis,/readyz,/readyz/*')] },
  'system:basic-user': { rules: [R('create', 'authorization.cluster.io', 'selfsubjectaccessreviews,selfsubjectrulesreviews'), R('create', 'authentication.cluster.io', 'selfsubjectreviews')] },
  'system:public-info-viewer': { rules: [U('get', '/healthz,/livez,/readyz,/version,/version/')] },
  admin: { rules: [], aggregate: 'aggregate-to-admin' },
  edit: { rules: [], labels: ['aggregate-to-admin'], aggregate: 'aggregate-to-edit' },
  view: { rules: [], labels: ['aggregate-to-edit'], aggregate: 'aggregate-to-view' },
  'system:aggregate-to-admin': {
    labels: ['aggregate-to-admin'],
    rules: [R(RW, 'rbac.authorization.cluster.io', 'rolebindings,roles'), R('create', 'authorization.cluster.io', 'localsubjectaccessreviews')],
  },
  'system:aggregate-to-edit': {
    labels: ['aggregate-to-edit'],
    rules: [
      R('impersonate', '', 'serviceaccounts'),
      R('create,delete,deletecollection,patch,update', '', 'pods,pods/attach,pods/exec,pods/portforward,pods/proxy'),
      R('create', '', 'pods/eviction'),
      R(WRITE, '', 'configmaps,events,persistentvolumeclaims,replicationcontrollers,replicationcontrollers/scale,secrets,serviceaccounts,services,services/proxy'),
      R('create', '', 'serviceaccounts/token'),
      R(WRITE, 'apps', 'daemonsets,deployments,deployments/rollback,deployments/scale,replicasets,replicasets/scale,statefulsets,statefulsets/scale'),
      R(WRITE, 'autoscaling', 'horizontalpodautoscalers'),
      R(WRITE, 'batch', 'cronjobs,jobs'),
      R(WRITE, 'extensions', 'daemonsets,deployments,deployments/rollback,deployments/scale,ingresses,networkpolicies,replicasets,replicasets/scale,replicationcontrollers/scale'),
      R(WRITE, 'policy', 'poddisruptionbudgets'),
      R(WRITE, 'networking.cluster.io', 'ingresses,networkpolicies'),
      R(READ, '', 'pods/attach,pods/exec,pods/portforward,pods/proxy,secrets,services/proxy'),
    ],
  },
  'system:aggregate-to-view': {
    labels: ['aggregate-to-view'],
    rules: [
      R(READ, '', 'configmaps,endpoints,persistentvolumeclaims,persistentvolumeclaims/status,pods,replicationcontrollers,replicationcontrollers/scale,serviceaccounts,services,services/status'),
      R(READ, '', 'bindings,events,limitranges,namespaces/status,pods/log,pods/status,replicationcontrollers/status,resourcequotas,resourcequotas/status'),
      R(READ, '', 'namespaces'),
      R(READ, 'discovery.cluster.io', 'endpointslices'),
      R(READ, 'apps', 'controllerrevisions,daemonsets,daemonsets/status,deployments,deployments/scale,deployments/status,replicasets,replicasets/scale,replicasets/status,statefulsets,statefulsets/scale,statefulsets/status'),
      R(READ, 'autoscaling', 'horizontalpodautoscalers,horizontalpodautoscalers/status'),
      R(READ, 'batch', 'cronjobs,cronjobs/status,jobs,jobs/status'),
      R(READ, 'extensions', 'daemonsets,daemonsets/status,deployments,deployments/scale,deployments/status,ingresses,ingresses/status,networkpolicies,replicasets,replicasets/scale,replicasets/status,replicationcontrollers/scale'),
      R(READ, 'policy', 'poddisruptionbudgets,poddisruptionbudgets/status'),
      R(READ, 'networking.cluster.io', 'ingresses,ingresses/status,networkpolicies'),
    ],
  },
  'system:auth-delegator': { rules: [R('create', 'authentication.cluster.io', 'tokenreviews'), R('create', 'authorization.cluster.io', 'subjectaccessreviews')] },
  'system:node-bootstrapper': { rules: [R('create,get,list,watch', 'certificates.cluster.io', 'certificatesigningrequests')] },
  'system:node': {
    rules: [
      R('create', 'authentication.cluster.io', 'tokenreviews'),
      R('create', 'authorization.cluster.io', 'localsubjectaccessreviews,subjectaccessreviews'),
      R(READ, '', 'services'),
      R('create,get,list,watch', '', 'nodes'),
      R('patch,update', '', 'nodes/status'),
      R('patch,update', '', 'nodes'),
      EVENTS,
      R(READ, '', 'pods'),
      R('create,delete', '', 'pods'),
      R('patch,update', '', 'pods/status'),
      R('create', '', 'pods/eviction'),
      R('get', '', 'configmaps,secrets'),
      R('get', '', 'persistentvolumeclaims,persistentvolumes'),
      R('get', '', 'endpoints'),
      R('create,get,list,watch', 'certificates.cluster.io', 'certificatesigningrequests'),
      R('create,delete,get,patch,update', 'coordination.cluster.io', 'leases'),
      R('get', 'storage.cluster.io', 'volumeattachments'),
      R('patch,update', '', 'persistentvolumeclaims/status'),
      R('create', '', 'serviceaccounts/token'),
      R(READ, 'node.cluster.io', 'runtimeclasses'),
      R('create,delete,get,patch,update', 'storage.cluster.io', 'csinodes'),
      R(READ, 'storage.cluster.io', 'csidrivers'),
    ],
  },
  'system:node-proxier': {
    rules: [R('list,watch', '', 'endpoints,services'), R(READ, '', 'nodes'), EVENTS, R('list,watch', 'discovery.cluster.io', 'endpointslices')],
  },
  'system:kube-dns': { rules: [R('list,watch', '', 'endpoints,services')] },
  'system:kube-scheduler': {
    rules: [
      EVENTS,
      R('create', 'coordination.cluster.io', 'leases'),
      R('get,update', 'coordination.cluster.io', 'leases', 'kube-scheduler'),
      R('create', '', 'endpoints'),
      R('get,update', '', 'endpoints', 'kube-scheduler'),
      R('delete,get,list,watch', '', 'pods'),
      R('create', '', 'bindings,pods/binding'),
      R('patch,update', '', 'pods/status'),
      R(READ, '', 'replicationcontrollers,services'),
      R(READ, 'apps,extensions', 'replicasets'),
      R(READ, 'apps', 'statefulsets'),
      R(READ, 'policy', 'poddisruptionbudgets'),
      R(READ, '', 'nodes,persistentvolumeclaims,persistentvolumes,namespaces'),
      R('create', 'authentication.cluster.io', 'tokenreviews'),
      R('create', 'authorization.cluster.io', 'subjectaccessreviews'),
      R(READ, 'storage.cluster.io', 'csidrivers,csinodes,csistoragecapacities,storageclasses'),
    ],
  },
  'system:volume-scheduler': {
    rules: [R('get,list,patch,update,watch', '', 'persistentvolumes'), R(READ, 'storage.cluster.io', 'storageclasses'), R('get,list,patch,update,watch', '', 'persistentvolumeclaims')],
  },
  'system:kube-controller-manager': {
    rules: [
      EVENTS,
      R('create', 'coordination.cluster.io', 'leases'),
      R('get,update', 'coordination.cluster.io', 'leases', 'kube-controller-manager'),
      R('create', '', 'endpoints'),
      R('get,update', '', 'endpoints', 'kube-controller-manager'),
      R('create', '', 'secrets,serviceaccounts'),
      R('delete', '', 'secrets'),
      R('get', '', 'configmaps,namespaces,secrets,serviceaccounts'),
      R('update', '', 'secrets,serviceaccounts'),
      R('create', 'authentication.cluster.io', 'tokenreviews'),
      R('create', 'authorization.cluster.io', 'subjectaccessreviews'),
      R('list,watch', '*', '*'),
      R('create', '', 'serviceaccounts/token'),
    ],
  },
  'system:service-account-issuer-discovery': { rules: [U('get', '/.well-known/openid-configuration,/.well-known/openid-configuration/,/openid/v1/jwks,/openid/v1/jwks/')] },
  // One role per controller of this server (bound to its service account in the system namespace).
  'system:controller:namespace-controller': {
    rules: [R('delete,get,list,watch', '', 'namespaces'), R('update', '', 'namespaces/finalize,namespaces/status'), R('delete,deletecollection,get,list', '*', '*'), EVENTS],
  },
  'system:controller:garbage-collector': { rules: [R('delete,get,list,patch,update,watch', '*', '*'), EVENTS] },
  'system:controller:clusterrole-aggregation-controller': { rules: [R('escalate,get,list,patch,update,watch', 'rbac.authorization.cluster.io', 'clusterroles')] },
};

/** Subjects: "Group:name", "User:name", "SA:name" (a service account of the system namespace). */
const CLUSTER_ROLE_BINDINGS: Record<string, { role?: string; subjects: string[] }> = {
  'cluster-admin': { subjects: ['Group:system:masters'] },
  'system:monitoring': { subjects: ['Group:system:monitoring'] },
  'system:discovery': { subjects: ['Group:system:authenticated'] },
  'system:basic-user': { subjects: ['Group:system:authenticated'] },
  'system:public-info-viewer': { subjects: ['Group:system:authenticated', 'Group:system:unauthenticated'] },
  'system:node-proxier': { subjects: ['User:system:kube-proxy'] },
  'system:kube-controller-manager': { subjects: ['User:system:kube-controller-manager'] },
  'system:kube-dns': { subjects: ['SA:kube-dns'] },
  'system:kube-scheduler': { subjects: ['User:system:kube-scheduler'] },
  'system:volume-scheduler': { subjects: ['User:system:kube-scheduler'] },
  'system:node': { subjects: [] },
  'system:service-account-issuer-discovery': { subjects: ['Group:system:serviceaccounts'] },
  'system:controller:namespace-controller': { subjects: ['SA:namespace-controller'] },
  'system:controller:garbage-collector': { subjects: ['SA:garbage-collector'] },
  'system:controller:clusterrole-aggregation-controller': { subjects: ['SA:clusterrole-aggregation-controller'] },
};

const list = (s: string | undefined) => (s === undefined ? [] : s.split(','));
const sorted = (l: string[]) => [...l].sort();

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

function buildRule(brand: Brand, s: RuleSpec): PolicyRule {
  if (s.u !== undefined) return { verbs: sorted(list(s.v)), nonResourceURLs: sorted(list(s.u)) };
  const r: PolicyRule = { verbs: sorted(list(s.v)), apiGroups: sorted(list(s.g).map((g) => brandGroup(brand, g))), resources: sorted(list(s.r)) };
  if (s.n) r.resourceNames = sorted(list(s.n));
  return r;
}

/**
 * The certificate roles, named in the brand's certificates group: node client requests
 * (`...:certificatesigningrequests:nodeclient`, `...:selfnodeclient`, checked by the csrapproving
 * controller) and one approver role per built-in signer (`...:<signer path>-approver`).
 */
function certificateRoles(brand: Brand): Record<string, RoleSpec> {
  const prefix = `system:certificates.${brand.domain}:`;
  const G = 'certificates.cluster.io';
  const roles: Record<string, RoleSpec> = {
    [`${prefix}certificatesigningrequests:nodeclient`]: { rules: [R('create', G, 'certificatesigningrequests/nodeclient')] },
    [`${prefix}certificatesigningrequests:selfnodeclient`]: { rules: [R('create', G, 'certificatesigningrequests/selfnodeclient')] },
  };
  for (const signer of Object.values(brand.signers)) roles[`${prefix}${signer.slice(signer.indexOf('/') + 1)}-approver`] = { rules: [R('approve', G, 'signers', signer)] };
  return roles;
}

/** The default cluster roles and cluster role bindings of a brand, as API objects. */
export function defaultPolicy(brand: Brand): { clusterRoles: KObject[]; clusterRoleBindings: KObject[] } {
  const n = rbacNames(brand);
  const meta = (name: string, labels: Record<string, string> = {}) => ({
    name,
    labels: { [n.bootstrapLabel]: 'rbac-defaults', ...labels },
    annotations: { [n.autoupdate]: 'true' },
  });
  const clusterRoles = Object.entries({ ...CLUSTER_ROLES, ...certificateRoles(brand) }).map(([name, spec]) => {
    const labels = Object.fromEntries((spec.labels ?? []).map((l) => [n.aggregateLabel(l), 'true']));
    const o: KObject = { apiVersion: n.apiVersion, kind: 'ClusterRole', metadata: meta(name, labels) };
    if (spec.aggregate) o.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { [n.aggregateLabel(spec.aggregate)]: 'true' } }] };
    o.rules = spec.rules.map((r) => ruleJson(buildRule(brand, r)));
    return o;
  });
  const clusterRoleBindings = Object.entries(CLUSTER_ROLE_BINDINGS).map(([name, spec]) => {
    const subjects = spec.subjects.map((s) => {
      const i = s.indexOf(':');
      const kind = s.slice(0, i);
      const who = s.slice(i + 1);
      if (kind === 'SA') return { kind: 'ServiceAccount', name: who, namespace: brand.systemNamespace };
      return { kind, apiGroup: n.group, name: who };
    });
    return { apiVersion: n.apiVersion, kind: 'ClusterRoleBinding', metadata: meta(name), roleRef: { apiGroup: n.group, kind: 'ClusterRole', name: spec.role ?? name }, subjects };
  });
  return { clusterRoles, clusterRoleBindings };
}

/**
 * The reference's bootstrap Roles and RoleBindings in the system namespace that this server has a use
 * for: reading the extension-apiserver-authentication ConfigMap (what extension API servers are bound to).
 */
export function defaultNamespacePolicy(brand: Brand): { roles: KObject[]; roleBindings: KObject[] } {
  const n = rbacNames(brand);
  const ns = brand.systemNamespace;
  const meta = (name: string) => ({ name, namespace: ns, labels: { [n.bootstrapLabel]: 'rbac-defaults' }, annotations: { [n.autoupdate]: 'true' } });
  const reader = 'extension-apiserver-authentication-reader';
  const roles: KObject[] = [
    { apiVersion: n.apiVersion, kind: 'Role', metadata: meta(reader), rules: [ruleJson(buildRule(brand, R(READ, '', 'configmaps', 'extension-apiserver-authentication')))] },
  ];
  const roleBindings: KObject[] = [
    { apiVersion: n.apiVersion, kind: 'RoleBinding', metadata: meta(`system::${reader}`), roleRef: { apiGroup: n.group, kind: 'Role', name: reader },
      subjects: ['system:kube-controller-manager', 'system:kube-scheduler'].map((name) => ({ kind: 'User', apiGroup: n.group, name })) },
  ];
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
    // The system namespace is made here if missing, as the reference's bootstrap policy does.
    if (!(await host.objects.get(nsType, '', host.brand.systemNamespace))) {
      try { await host.objects.create(nsType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: host.brand.systemNamespace } }); } catch (e) { if ((e as { code?: number }).code !== 409) throw e; }
    }
    for (const r of roles) await one(nsTypes.role, r);
    for (const b of roleBindings) await one(nsTypes.binding, b);
  }
  return { created, updated };
}
