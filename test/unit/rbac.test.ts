// RBAC rule semantics, the subject index, escalation cover checks, aggregation, default policy
// reconciliation, and the ABAC / Node / Webhook authorizers' pure parts; plus a microbenchmark of
// authorizations per second with 10,000 bindings.
import t from 'tap';
import { getBrand } from '../../kernel/contracts/brand.js';
import type { AuthorizationAttributes, KObject, UserInfo } from '../../kernel/contracts/index.js';
import { aggregatedRules } from '../../plugins/authorizers/rbac/aggregation.js';
import { defaultPolicy, reconcileBinding, reconcileRole, rbacNames } from '../../plugins/authorizers/rbac/defaults.js';
import { escalationMessage } from '../../plugins/authorizers/rbac/escalation.js';
import * as rbacTypes from '../../plugins/types/builtin/validation/rbac.js';
import type { Brand } from '../../kernel/contracts/brand.js';
import type { FieldCause } from '../../kernel/contracts/index.js';
import { PolicyIndex } from '../../plugins/authorizers/rbac/policy-index.js';
import { compactString, covers, describeMissing, ruleAllows, rulesOf, type PolicyRule } from '../../plugins/authorizers/rbac/rules.js';
import { parsePolicy, parsePolicyFile, policyMatches } from '../../plugins/authorizers/abac/index.js';
import { NodeGraph, nodeDecision, podReferences } from '../../plugins/authorizers/node/index.js';
import { reviewFor } from '../../plugins/authorizers/webhook/index.js';

const G = 'rbac.authorization.cluster.io';
const alice: UserInfo = { username: 'alice', groups: ['devs', 'system:authenticated'] };

/** A resource request; `res` may be "pods/log". */
function req(verb: string, res: string, o: { ns?: string; name?: string; group?: string; user?: UserInfo } = {}): AuthorizationAttributes {
  const [resource, subresource = ''] = res.split('/');
  return {
    user: o.user ?? alice, isResourceRequest: true, path: '', verb, apiPrefix: o.group ? 'apis' : 'api', apiGroup: o.group ?? '', apiVersion: 'v1',
    namespace: o.ns ?? '', resource, subresource, name: o.name ?? '',
  };
}
function nonRes(verb: string, path: string, user: UserInfo = alice): AuthorizationAttributes {
  return { user, isResourceRequest: false, path, verb, apiPrefix: '', apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '' };
}

t.test('rule matching table', async (t) => {
  const cases: [string, PolicyRule, AuthorizationAttributes, boolean][] = [
    ['exact verb, core group, resource', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, req('get', 'pods', { name: 'p' }), true],
    ['other verb', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, req('list', 'pods'), false],
    ['"*" verb', { verbs: ['*'], apiGroups: [''], resources: ['pods'] }, req('deletecollection', 'pods'), true],
    ['core group does not match a named group', { verbs: ['get'], apiGroups: [''], resources: ['deployments'] }, req('get', 'deployments', { group: 'apps' }), false],
    ['named group', { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] }, req('get', 'deployments', { group: 'apps' }), true],
    ['"*" group', { verbs: ['get'], apiGroups: ['*'], resources: ['deployments'] }, req('get', 'deployments', { group: 'apps' }), true],
    ['"*" resource matches sub-resources too', { verbs: ['get'], apiGroups: [''], resources: ['*'] }, req('get', 'pods/log', { name: 'p' }), true],
    ['resource does not match its sub-resource', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, req('get', 'pods/log', { name: 'p' }), false],
    ['"resource/sub" matches that sub-resource', { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }, req('get', 'pods/log', { name: 'p' }), true],
    ['"resource/sub" does not match the resource', { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }, req('get', 'pods', { name: 'p' }), false],
    ['"*/sub" matches the sub-resource of any resource', { verbs: ['update'], apiGroups: ['*'], resources: ['*/status'] }, req('update', 'deployments/status', { group: 'apps', name: 'd' }), true],
    ['"*/sub" does not match another sub-resource', { verbs: ['update'], apiGroups: ['*'], resources: ['*/status'] }, req('update', 'deployments/scale', { group: 'apps', name: 'd' }), false],
    ['"*/sub" does not match the main resource', { verbs: ['update'], apiGroups: ['*'], resources: ['*/status'] }, req('update', 'deployments', { group: 'apps', name: 'd' }), false],
    ['"resource/*" is no wildcard in the reference', { verbs: ['get'], apiGroups: [''], resources: ['pods/*'] }, req('get', 'pods/log', { name: 'p' }), false],
    ['resourceNames: listed name', { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, req('get', 'configmaps', { name: 'a' }), true],
    ['resourceNames: other name', { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, req('get', 'configmaps', { name: 'b' }), false],
    ['resourceNames never restrict create (no name → no match)', { verbs: ['create'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, req('create', 'configmaps'), false],
    ['resourceNames never restrict deletecollection', { verbs: ['deletecollection'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, req('deletecollection', 'configmaps'), false],
    ['resourceNames and a field-selector list by name', { verbs: ['list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, req('list', 'configmaps', { name: 'a' }), true],
    ['non-resource exact', { verbs: ['get'], nonResourceURLs: ['/healthz'] }, nonRes('get', '/healthz'), true],
    ['non-resource exact, other path', { verbs: ['get'], nonResourceURLs: ['/healthz'] }, nonRes('get', '/healthz/ping'), false],
    ['non-resource "*" suffix prefix', { verbs: ['get'], nonResourceURLs: ['/healthz/*'] }, nonRes('get', '/healthz/etcd'), true],
    ['non-resource "*" suffix needs the prefix', { verbs: ['get'], nonResourceURLs: ['/healthz/*'] }, nonRes('get', '/healthz'), false],
    ['non-resource "*"', { verbs: ['get'], nonResourceURLs: ['*'] }, nonRes('get', '/anything'), true],
    ['non-resource verb', { verbs: ['get'], nonResourceURLs: ['*'] }, nonRes('post', '/anything'), false],
    ['a resource rule never matches a non-resource request', { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, nonRes('get', '/api'), false],
    ['a non-resource rule never matches a resource request', { verbs: ['*'], nonResourceURLs: ['*'] }, req('get', 'pods'), false],
  ];
  for (const [name, rule, attrs, want] of cases) t.equal(ruleAllows(attrs, rule), want, name);
});

/** Fixtures: objects as the server stores them. */
const role = (ns: string, name: string, rules: PolicyRule[]): KObject => ({ kind: 'Role', metadata: { namespace: ns, name }, rules });
const clusterRole = (name: string, rules: PolicyRule[], labels?: Record<string, string>, aggregationRule?: unknown): KObject => ({ kind: 'ClusterRole', metadata: { name, labels }, rules, ...(aggregationRule ? { aggregationRule } : {}) });
const subj = (s: string) => {
  const [kind, ...rest] = s.split(':');
  if (kind === 'SA') {
    const [namespace, name] = rest.length === 2 ? rest : ['', rest[0]];
    return namespace ? { kind: 'ServiceAccount', name, namespace } : { kind: 'ServiceAccount', name };
  }
  return { kind, name: rest.join(':'), apiGroup: G };
};
const binding = (ns: string, name: string, roleKind: string, roleName: string, subjects: string[]): KObject => ({
  kind: 'RoleBinding', metadata: { namespace: ns, name }, roleRef: { apiGroup: G, kind: roleKind, name: roleName }, subjects: subjects.map(subj),
});
const crb = (name: string, roleName: string, subjects: string[]): KObject => ({
  kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: roleName }, subjects: subjects.map(subj),
});

function policy(): PolicyIndex {
  const ix = new PolicyIndex(G);
  ix.apply('Role', 'ADDED', role('team', 'pod-reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }]));
  ix.apply('ClusterRole', 'ADDED', clusterRole('secret-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]));
  ix.apply('ClusterRole', 'ADDED', clusterRole('node-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['nodes'] }, { verbs: ['get'], nonResourceURLs: ['/metrics'] }]));
  ix.apply('RoleBinding', 'ADDED', binding('team', 'read-pods', 'Role', 'pod-reader', ['User:alice']));
  ix.apply('RoleBinding', 'ADDED', binding('team', 'read-secrets', 'ClusterRole', 'secret-reader', ['Group:devs']));
  ix.apply('RoleBinding', 'ADDED', binding('team', 'metrics-via-rb', 'ClusterRole', 'node-reader', ['User:alice']));
  ix.apply('ClusterRoleBinding', 'ADDED', crb('bob-nodes', 'node-reader', ['User:bob']));
  ix.apply('RoleBinding', 'ADDED', binding('team', 'sa', 'Role', 'pod-reader', ['SA:builder', 'SA:other:deployer']));
  return ix;
}

t.test('bindings: scope, subjects and reasons', async (t) => {
  const ix = policy();
  const allow = (a: AuthorizationAttributes) => ix.authorize(a).decision === 'allow';
  t.ok(allow(req('get', 'pods', { ns: 'team', name: 'p' })), 'Role via RoleBinding in its namespace');
  t.notOk(allow(req('get', 'pods', { ns: 'other', name: 'p' })), 'not in another namespace');
  t.notOk(allow(req('list', 'pods')), 'not cluster-wide');
  t.ok(allow(req('get', 'secrets', { ns: 'team', name: 's' })), 'ClusterRole via RoleBinding, group subject');
  t.notOk(allow(req('get', 'secrets', { ns: 'other', name: 's' })), 'ClusterRole via RoleBinding is limited to the binding namespace');
  t.notOk(allow(req('get', 'nodes', { name: 'n1' })), 'cluster-scoped resources only via ClusterRoleBinding');
  t.notOk(allow(nonRes('get', '/metrics')), 'non-resource URLs only via ClusterRoleBinding');
  const bob: UserInfo = { username: 'bob', groups: ['system:authenticated'] };
  t.ok(allow(req('get', 'nodes', { name: 'n1', user: bob })), 'ClusterRoleBinding grants cluster-wide');
  t.ok(allow(nonRes('get', '/metrics', bob)), 'non-resource URL via ClusterRoleBinding');
  t.ok(allow(req('get', 'nodes', { name: 'n1', ns: 'any', user: bob })), 'and in every namespace');

  const sa = (ns: string, name: string): UserInfo => ({ username: `system:serviceaccount:${ns}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`] });
  t.ok(allow(req('get', 'pods', { ns: 'team', name: 'p', user: sa('team', 'builder') })), 'service account, namespace defaults to the binding');
  t.ok(allow(req('get', 'pods', { ns: 'team', name: 'p', user: sa('other', 'deployer') })), 'service account of another namespace');
  t.notOk(allow(req('get', 'pods', { ns: 'team', name: 'p', user: sa('other', 'builder') })), 'same name, other namespace');

  t.same(ix.authorize(req('get', 'pods', { ns: 'team', name: 'p' })), { decision: 'allow', reason: 'RBAC: allowed by RoleBinding "read-pods/team" of Role "pod-reader" to User "alice"' });
  t.same(ix.authorize(req('get', 'nodes', { name: 'n', user: bob })), { decision: 'allow', reason: 'RBAC: allowed by ClusterRoleBinding "bob-nodes" of ClusterRole "node-reader" to User "bob"' });
  t.same(ix.authorize(req('get', 'pods', { ns: 'team', name: 'p', user: sa('team', 'builder') })).reason, 'RBAC: allowed by RoleBinding "sa/team" of Role "pod-reader" to ServiceAccount "builder/team"');
  t.same(ix.authorize(req('delete', 'pods', { ns: 'team', name: 'p' })), { decision: 'no-opinion' }, 'RBAC never denies');

  // A binding to a missing role: no opinion, with the reason the reference gives.
  ix.apply('ClusterRoleBinding', 'ADDED', crb('dangling', 'nope', ['User:carol']));
  const carol: UserInfo = { username: 'carol', groups: [] };
  t.same(ix.authorize(req('get', 'pods', { user: carol })), { decision: 'no-opinion', reason: `RBAC: clusterrole.${G} "nope" not found` });

  // Updates and deletes are reflected.
  ix.apply('RoleBinding', 'DELETED', binding('team', 'read-pods', 'Role', 'pod-reader', ['User:alice']));
  t.notOk(allow(req('get', 'pods', { ns: 'team', name: 'p' })), 'deleted binding no longer grants');
  // Remembered decisions: the same answer again, dropped by any change of policy.
  const sec = req('get', 'secrets', { ns: 'team', name: 's' });
  t.equal(ix.authorize(sec), ix.authorize({ ...sec }), 'the same attributes get the remembered decision');
  t.notOk(allow({ ...sec, user: { username: 'alice', groups: ['system:authenticated'] } }), 'other groups, other decision');
  t.notOk(allow({ ...sec, user: { username: 'alice\u0000devs', groups: ['system:authenticated'] } }), 'a name that ends with another user\'s group is another user');
  ix.apply('ClusterRole', 'MODIFIED', clusterRole('secret-reader', [{ verbs: ['list'], apiGroups: [''], resources: ['secrets'] }]));
  t.notOk(allow(sec), 'a narrowed rule denies the next request');
  ix.apply('ClusterRoleBinding', 'MODIFIED', crb('bob-nodes', 'node-reader', ['User:alice']));
  t.notOk(allow(req('get', 'nodes', { name: 'n1', user: bob })), 'subject removed');
  t.ok(allow(req('get', 'nodes', { name: 'n1' })), 'subject added');
  ix.apply('ClusterRole', 'MODIFIED', clusterRole('node-reader', [{ verbs: ['list'], apiGroups: [''], resources: ['nodes'] }]));
  t.notOk(allow(req('get', 'nodes', { name: 'n1' })), 'role rules changed');
  t.ok(allow(req('list', 'nodes')));

  const { rules } = ix.rulesFor(alice, 'team');
  t.same(rules.map((r) => r.resources ?? r.nonResourceURLs), [['nodes'], ['nodes'], ['secrets']], 'rulesFor: cluster bindings first, then the namespace (user, then groups)');
});

t.test('escalation: cover check and the refusal text', async (t) => {
  const owner: PolicyRule[] = [
    { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', '*/status'] },
    { verbs: ['*'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web'] },
    { verbs: ['get'], nonResourceURLs: ['/logs/*'] },
  ];
  t.ok(covers(owner, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]).ok, 'subset');
  t.ok(covers(owner, [{ verbs: ['list'], apiGroups: [''], resources: ['services/status'] }]).ok, '"*/status" covers services/status');
  t.ok(covers(owner, [{ verbs: ['delete'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web'] }]).ok, 'named');
  t.notOk(covers(owner, [{ verbs: ['delete'], apiGroups: ['apps'], resources: ['deployments'] }]).ok, 'a named grant does not cover all names');
  t.ok(covers(owner, [{ verbs: ['get'], nonResourceURLs: ['/logs/a', '/logs/*'] }]).ok, 'prefix covers');
  t.ok(covers([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], [{ verbs: ['get'], apiGroups: ['x'], resources: ['y/z'] }]).ok, 'everything');
  const { ok, missing } = covers(owner, [{ verbs: ['get', 'watch', 'delete'], apiGroups: [''], resources: ['pods', 'secrets'] }]);
  t.notOk(ok);
  t.same(missing.map(compactString), [
    '{APIGroups:[""], Resources:["pods"], Verbs:["watch"]}', '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
    '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}', '{APIGroups:[""], Resources:["secrets"], Verbs:["watch"]}', '{APIGroups:[""], Resources:["secrets"], Verbs:["delete"]}',
  ]);
  t.equal(describeMissing(missing), '{APIGroups:[""], Resources:["pods"], Verbs:["watch" "delete"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "watch" "delete"]}', 'compacted per resource, sorted');
  t.equal(compactString({ verbs: ['get'], nonResourceURLs: ['/x'] }), '{NonResourceURLs:["/x"], Verbs:["get"]}');
  t.equal(compactString({ verbs: ['get'], apiGroups: [''], resources: ['cm'], resourceNames: ['a'] }), '{APIGroups:[""], Resources:["cm"], ResourceNames:["a"], Verbs:["get"]}');
  t.equal(
    escalationMessage(alice, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], []),
    'user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["get"]}',
  );
});

t.test('validation of roles and bindings', async (t) => {
  // The type's validators (plugins/types/builtin/validation/rbac.ts) in the brand whose group G is.
  const brand = { domain: G.replace(/^rbac\.authorization\./, ''), keyDomain: '' } as Brand;
  const show = (c: FieldCause) => `${c.field}: ${c.message}`;
  const { role: roleV, clusterRole: clusterRoleV, roleBinding: roleBindingV, clusterRoleBinding: clusterRoleBindingV } = rbacTypes;
  t.same(roleV({ rules: [{ verbs: [], apiGroups: [''], resources: ['pods'] }] }, undefined, brand).map(show), ['rules[0].verbs: Required value: verbs must contain at least one value']);
  t.same(roleV({ rules: [{ verbs: ['get'], nonResourceURLs: ['/x'] }] }, undefined, brand).map(show), ['rules[0].nonResourceURLs: Invalid value: []string{"/x"}: namespaced rules cannot apply to non-resource URLs']);
  t.same(clusterRoleV({ rules: [{ verbs: ['get'], nonResourceURLs: ['/x'] }] }, undefined, brand), []);
  t.same(clusterRoleV({ rules: [{ verbs: ['get'] }] }, undefined, brand).map((c) => c.field), ['rules[0].apiGroups', 'rules[0].resources']);
  t.same(clusterRoleBindingV({ roleRef: { apiGroup: G, kind: 'Role', name: 'x' }, subjects: [] }, undefined, brand).map(show), ['roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"']);
  t.same(roleBindingV({ roleRef: { apiGroup: G, kind: 'Role', name: 'x' }, subjects: [{ kind: 'ServiceAccount', name: 'a' }] }, undefined, brand), []);
  t.same(clusterRoleBindingV({ roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'x' }, subjects: [{ kind: 'ServiceAccount', name: 'a' }] }, undefined, brand).map((c) => c.field), ['subjects[0].namespace']);
  t.same(clusterRoleBindingV({ roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'x' }, subjects: [{ kind: 'Robot', name: 'a' }] }, undefined, brand).map((c) => c.message), ['Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"']);
});

t.test('aggregation', async (t) => {
  const ix = new PolicyIndex(G);
  const sel = (to: string) => ({ clusterRoleSelectors: [{ matchLabels: { [`${G}/aggregate-to-${to}`]: 'true' } }] });
  const lbl = (to: string) => ({ [`${G}/aggregate-to-${to}`]: 'true' });
  ix.apply('ClusterRole', 'ADDED', clusterRole('view', [], lbl('edit'), sel('view')));
  ix.apply('ClusterRole', 'ADDED', clusterRole('b-view-extra', [{ verbs: ['get'], apiGroups: ['x'], resources: ['widgets'] }], lbl('view')));
  ix.apply('ClusterRole', 'ADDED', clusterRole('a-view-base', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, { verbs: ['get'], apiGroups: ['x'], resources: ['widgets'] }], lbl('view')));
  ix.apply('ClusterRole', 'ADDED', clusterRole('unrelated', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]));
  const rules = aggregatedRules('view', sel('view').clusterRoleSelectors, ix.clusterRoles);
  t.same(rules, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, { verbs: ['get'], apiGroups: ['x'], resources: ['widgets'] }], 'name order, duplicates once, unmatched roles left out');
  t.same(aggregatedRules('view', [{ matchExpressions: [{ key: `${G}/aggregate-to-view`, operator: 'Exists' }] }], ix.clusterRoles).length, 2, 'match expressions');
  t.same(aggregatedRules('x', [], ix.clusterRoles), [], 'no selectors, no rules');
});

t.test('default policy and reconciliation', async (t) => {
  const kube = getBrand('kubernetes');
  const n = rbacNames(kube);
  t.equal(n.bootstrapLabel, 'kubernetes.io/bootstrapping');
  t.equal(n.autoupdate, 'rbac.authorization.kubernetes.io/autoupdate');
  const { clusterRoles, clusterRoleBindings } = defaultPolicy(kube);
  const byName = (l: KObject[], name: string) => l.find((o) => o.metadata?.name === name)!;
  for (const o of [...clusterRoles, ...clusterRoleBindings]) t.equal(o.metadata?.labels?.['kubernetes.io/bootstrapping'], 'rbac-defaults', `${o.metadata?.name} labelled`);
  for (const name of ['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user', 'system:public-info-viewer', 'system:node', 'system:node-proxier',
    'system:kube-scheduler', 'system:kube-controller-manager', 'system:monitoring', 'system:controller:namespace-controller', 'system:controller:generic-garbage-collector',
    'system:controller:clusterrole-aggregation-controller']) t.ok(byName(clusterRoles, name), name);
  t.same(byName(clusterRoles, 'system:public-info-viewer').rules, [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] }]);
  t.same(byName(clusterRoles, 'system:basic-user').rules, [
    { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] },
    { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
  ]);
  t.same(byName(clusterRoles, 'edit').aggregationRule, { clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } }] });
  t.equal(byName(clusterRoles, 'edit').metadata?.labels?.['rbac.authorization.k8s.io/aggregate-to-admin'], 'true');
  t.same(byName(clusterRoleBindings, 'system:public-info-viewer').subjects, [
    { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:authenticated' }, { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:unauthenticated' },
  ]);
  t.same(byName(clusterRoleBindings, 'system:controller:generic-garbage-collector').subjects, [{ kind: 'ServiceAccount', name: 'generic-garbage-collector', namespace: 'kube-system' }]);
  t.same(byName(clusterRoleBindings, 'cluster-admin').roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' });
  t.equal(defaultPolicy(getBrand('cluster')).clusterRoles[0].metadata?.labels?.['cluster.io/bootstrapping'], 'rbac-defaults');

  const expected = byName(clusterRoles, 'system:discovery');
  const trimmed = { ...expected, rules: [{ verbs: ['get'], nonResourceURLs: ['/api', '/apis'] }] };
  const fixed = reconcileRole(trimmed, expected, n.autoupdate)!;
  t.ok(fixed, 'a role missing rules is updated');
  t.ok(covers((fixed.rules as PolicyRule[]), expected.rules as PolicyRule[]).ok, 'and then covers the default');
  t.equal(reconcileRole(fixed, expected, n.autoupdate), undefined, 'idempotent');
  t.equal(reconcileRole({ ...trimmed, metadata: { ...trimmed.metadata, annotations: { [n.autoupdate]: 'false' } } }, expected, n.autoupdate), undefined, 'autoupdate=false is left alone');
  const extra = { ...expected, rules: [...(expected.rules as PolicyRule[]), { verbs: ['get'], nonResourceURLs: ['/extra'] }] };
  t.equal(reconcileRole(extra, expected, n.autoupdate), undefined, 'extra rules are kept');

  const b = byName(clusterRoleBindings, 'system:basic-user');
  t.same((reconcileBinding({ ...b, subjects: [] }, b, n.autoupdate) as KObject).subjects, b.subjects, 'missing subjects added');
  t.equal(reconcileBinding({ ...b, roleRef: { ...(b.roleRef as object), name: 'other' } }, b, n.autoupdate), 'recreate', 'changed roleRef: recreated');
  t.equal(reconcileBinding(b, b, n.autoupdate), undefined);
});

t.test('ABAC policies', async (t) => {
  const line = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec });
  const ps = parsePolicyFile([
    line({ user: 'alice', namespace: '*', resource: '*', apiGroup: '*' }),
    line({ user: 'bob', namespace: 'projectCaribou', resource: 'pods', apiGroup: '', readonly: true }),
    line({ group: 'system:authenticated', readonly: true, nonResourcePath: '*' }),
    line({ user: '*', readonly: true, namespace: '*', resource: 'configmaps', apiGroup: '*' }),
    '# a comment', '',
  ].join('\n'), 'policy.jsonl');
  const any = (a: AuthorizationAttributes) => ps.some((p) => policyMatches(p, a));
  const bob: UserInfo = { username: 'bob', groups: ['system:authenticated'] };
  const anon: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
  t.ok(any(req('delete', 'deployments', { group: 'apps', ns: 'x', name: 'd' })), 'alice may do anything');
  t.ok(any(req('get', 'pods', { ns: 'projectCaribou', name: 'p', user: bob })), 'bob reads pods in his namespace');
  t.notOk(any(req('create', 'pods', { ns: 'projectCaribou', user: bob })), 'readonly');
  t.notOk(any(req('get', 'pods', { ns: 'other', name: 'p', user: bob })), 'other namespace');
  t.ok(any(nonRes('get', '/version', bob)), 'non-resource path "*"');
  t.notOk(any(nonRes('post', '/version', bob)), 'readonly non-resource');
  t.ok(any(req('get', 'configmaps', { ns: 'x', name: 'c', user: bob })), 'user "*" is every authenticated user');
  t.notOk(any(req('get', 'configmaps', { ns: 'x', name: 'c', user: anon })), 'but not anonymous');
  t.same(parsePolicy('{"user":"carol"}'), { user: 'carol', group: '', readonly: false, apiGroup: '*', resource: '*', namespace: '*', nonResourcePath: '*' }, 'v0 line');
  t.throws(() => parsePolicyFile('{"apiVersion":"x/v1","kind":"Policy"}', 'p.jsonl'), /error reading policy file p\.jsonl, line 1/);
});

t.test('node authorizer graph', async (t) => {
  const g = new NodeGraph();
  const pod: KObject = {
    metadata: { namespace: 'ns', name: 'web' },
    spec: {
      nodeName: 'n1', serviceAccountName: 'runner', imagePullSecrets: [{ name: 'pull' }],
      containers: [{ name: 'c', env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'k' } } }], envFrom: [{ configMapRef: { name: 'env-cm' } }] }],
      volumes: [{ name: 'v1', secret: { secretName: 'vol-secret' } }, { name: 'v2', configMap: { name: 'vol-cm' } }, { name: 'v3', persistentVolumeClaim: { claimName: 'data' } },
        { name: 'v4', projected: { sources: [{ secret: { name: 'proj-secret' } }, { configMap: { name: 'proj-cm' } }] } }],
    },
  };
  t.same(podReferences(pod).sort(), ['configmaps/env-cm', 'configmaps/proj-cm', 'configmaps/vol-cm', 'persistentvolumeclaims/data', 'secrets/env-secret', 'secrets/proj-secret', 'secrets/pull', 'secrets/vol-secret', 'serviceaccounts/runner']);
  g.setPod('ADDED', pod);
  g.setClaim('ADDED', { metadata: { namespace: 'ns', name: 'data' }, spec: { volumeName: 'pv-1' } });
  const node = (n: string): UserInfo => ({ username: `system:node:${n}`, groups: ['system:nodes', 'system:authenticated'] });
  const kube = getBrand('kubernetes');
  const nodeRules = rulesOf(defaultPolicy(kube).clusterRoles.find((r) => r.metadata?.name === 'system:node'));
  const groups = { coordination: 'coordination.k8s.io', storage: 'storage.k8s.io', resource: 'resource.k8s.io', leaseNamespace: 'kube-node-lease' };
  const decide = (a: AuthorizationAttributes) => nodeDecision(g, a, nodeRules, groups);
  const d = (a: AuthorizationAttributes) => decide(a).decision;
  t.equal(d(req('get', 'secrets', { ns: 'ns', name: 'vol-secret', user: node('n1') })), 'allow');
  t.equal(d(req('get', 'configmaps', { ns: 'ns', name: 'env-cm', user: node('n1') })), 'allow');
  t.equal(d(req('get', 'persistentvolumes', { name: 'pv-1', user: node('n1') })), 'allow', 'volume of a referenced claim');
  t.same(decide(req('get', 'serviceaccounts', { ns: 'ns', name: 'runner', user: node('n1') })), { decision: 'no-opinion', reason: 'can only create tokens for individual service accounts' }, 'as the reference: tokens only');
  t.equal(d(req('create', 'serviceaccounts/token', { ns: 'ns', name: 'runner', user: node('n1') })), 'allow', 'a token of its pod\'s service account');
  t.equal(d(req('get', 'secrets', { ns: 'ns', name: 'vol-secret', user: node('n2') })), 'no-opinion', 'other node');
  t.same(decide(req('get', 'secrets', { ns: 'ns', name: 'unrelated', user: node('n1') })), { decision: 'no-opinion', reason: "no relationship found between node 'n1' and this object" });
  t.equal(d(req('update', 'secrets', { ns: 'ns', name: 'vol-secret', user: node('n1') })), 'no-opinion', 'read only');
  t.same(decide(req('list', 'secrets', { ns: 'ns', user: node('n1') })), { decision: 'no-opinion', reason: 'No Object name found' }, 'individual objects only');
  t.equal(d(req('get', 'secrets', { ns: 'ns', name: 'vol-secret', user: { username: 'system:node:n1', groups: [] } })), 'no-opinion', 'needs the nodes group');
  t.equal(d(req('patch', 'nodes/status', { name: 'n1', user: node('n1') })), 'allow', 'own node status');
  // As the reference: the rest by the system:node role's rules; NodeRestriction admission keeps a
  // node's writes to its own Node and pods.
  t.equal(d(req('update', 'nodes', { name: 'n2', user: node('n1') })), 'allow', 'other node object: the role allows, admission refuses');
  t.equal(d(req('create', 'nodes', { user: node('n1') })), 'allow', 'registers its Node');
  t.equal(d(req('list', 'nodes', { user: node('n1') })), 'allow');
  t.equal(d(req('list', 'services', { user: node('n1') })), 'allow');
  t.equal(d(req('update', 'pods/status', { ns: 'ns', name: 'web', user: node('n1') })), 'allow', 'status of its pod');
  t.equal(d(req('delete', 'deployments', { group: 'apps', ns: 'ns', name: 'x', user: node('n1') })), 'no-opinion', 'nothing the role does not give');
  t.equal(d(req('get', 'leases', { group: 'coordination.k8s.io', ns: 'kube-node-lease', name: 'n1', user: node('n1') })), 'allow', 'its own Lease');
  t.same(decide(req('get', 'leases', { group: 'coordination.k8s.io', ns: 'kube-node-lease', name: 'n2', user: node('n1') })), { decision: 'no-opinion', reason: 'can only access node lease with the same name as the requesting node' });
  t.same(decide(req('get', 'leases', { group: 'coordination.k8s.io', ns: 'default', name: 'n1', user: node('n1') })), { decision: 'no-opinion', reason: 'can only access leases in the "kube-node-lease" system namespace' });
  t.same(decide(req('list', 'leases', { group: 'coordination.k8s.io', ns: 'kube-node-lease', user: node('n1') })), { decision: 'no-opinion', reason: 'can only get, create, update, patch, or delete a node lease' });
  t.equal(d(req('create', 'leases', { group: 'coordination.k8s.io', ns: 'kube-node-lease', user: node('n1') })), 'allow', 'create: the name is checked by admission');
  t.equal(d(req('patch', 'csinodes', { group: 'storage.k8s.io', name: 'n1', user: node('n1') })), 'allow', 'its own CSINode');
  t.same(decide(req('get', 'csinodes', { group: 'storage.k8s.io', name: 'n2', user: node('n1') })), { decision: 'no-opinion', reason: 'can only access CSINode with the same name as the requesting node' });
  t.same(decide(req('get', 'secrets', { ns: 'ns', name: 'x', user: { username: 'system:node:', groups: ['system:nodes'] } })), { decision: 'no-opinion', reason: 'unknown node for user "system:node:"' });
  g.setPod('MODIFIED', { ...pod, spec: { ...(pod.spec as object), nodeName: 'n2' } });
  t.equal(d(req('get', 'secrets', { ns: 'ns', name: 'vol-secret', user: node('n1') })), 'no-opinion', 'moved: edges follow');
  t.equal(d(req('get', 'secrets', { ns: 'ns', name: 'vol-secret', user: node('n2') })), 'allow');
  g.setPod('DELETED', pod);
  t.equal(d(req('get', 'secrets', { ns: 'ns', name: 'vol-secret', user: node('n2') })), 'no-opinion', 'deleted: edges gone');
  t.equal(g.size, 0);
});

t.test('webhook review body', async (t) => {
  const a = req('get', 'pods/log', { ns: 'ns', name: 'p' });
  t.same(reviewFor(a, 'authorization.k8s.io', 'v1'), {
    apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
    spec: { resourceAttributes: { namespace: 'ns', verb: 'get', version: 'v1', resource: 'pods', subresource: 'log', name: 'p' }, user: 'alice', groups: ['devs', 'system:authenticated'] },
  });
  t.same(reviewFor(nonRes('get', '/healthz'), 'authorization.k8s.io', 'v1beta1').spec, { nonResourceAttributes: { path: '/healthz', verb: 'get' }, user: 'alice', group: ['devs', 'system:authenticated'] }, 'v1beta1 says "group"');
});

t.test('microbenchmark: authorizations per second with 10,000 bindings', async (t) => {
  const ix = new PolicyIndex(G);
  const NS = 200;
  const USERS = 5000;
  ix.apply('ClusterRole', 'ADDED', clusterRole('edit', [
    { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['configmaps', 'endpoints', 'persistentvolumeclaims', 'pods', 'services'] },
    { verbs: ['create', 'delete', 'patch', 'update'], apiGroups: ['apps'], resources: ['deployments', 'replicasets', 'statefulsets'] },
    { verbs: ['get'], apiGroups: [''], resources: ['secrets'] },
  ]));
  ix.apply('ClusterRole', 'ADDED', clusterRole('discovery', [{ verbs: ['get'], nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/version'] }]));
  ix.apply('ClusterRoleBinding', 'ADDED', crb('discovery', 'discovery', ['Group:system:authenticated']));
  let bindings = 1;
  // 10,000 bindings: each user bound in two namespaces, half of them via a team group.
  for (let i = 0; bindings < 10_000; i++) {
    const u = `user-${i % USERS}`;
    const ns = `ns-${(i * 7) % NS}`;
    ix.apply('RoleBinding', 'ADDED', binding(ns, `b-${i}`, 'ClusterRole', 'edit', i % 2 ? [`User:${u}`] : [`Group:team-${i % USERS}`]));
    bindings++;
  }
  t.equal(ix.bindingCount, 10_000);
  const requests: AuthorizationAttributes[] = [];
  for (let i = 0; i < 1000; i++) {
    const user: UserInfo = { username: `user-${i}`, groups: [`team-${i}`, 'system:authenticated'] };
    requests.push(req('get', 'pods', { ns: `ns-${(i * 7) % NS}`, name: 'p', user })); // allowed
    requests.push(req('delete', 'secrets', { ns: `ns-${(i * 7) % NS}`, name: 's', user })); // no opinion: visits every rule
    requests.push(req('get', 'pods', { ns: 'elsewhere', name: 'p', user })); // no binding in that namespace
    requests.push(nonRes('get', '/apis/apps', user));
  }
  let allowed = 0;
  for (const r of requests) if (ix.authorize(r).decision === 'allow') allowed++;
  t.equal(allowed, 2000, 'half the sample is allowed');
  const N = 400_000;
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) ix.authorize(requests[i % requests.length]);
  const secs = Number(process.hrtime.bigint() - start) / 1e9;
  const rate = Math.round(N / secs);
  t.comment(`RBAC: ${rate.toLocaleString('en-US')} authorizations/s with ${ix.bindingCount.toLocaleString('en-US')} bindings (${(secs * 1e9 / N).toFixed(0)} ns each)`);
  console.log(`# RBAC microbenchmark: ${rate} authorizations/s with ${ix.bindingCount} bindings`);
  t.ok(rate > 50_000, 'index lookups, not scans');
});
