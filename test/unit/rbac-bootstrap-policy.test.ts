// Our default RBAC policy (bootstrap-policy.json translated to the kubernetes brand) against the
// reference's, rule by rule; the neutral brand's translation of the same data.
import t from 'tap';
import { getBrand } from '../../kernel/contracts/brand.js';
import { defaultNamespacePolicy, defaultPolicy } from '../../plugins/authorizers/rbac/defaults.js';
import { comparePolicy, readRefPolicy, refPolicyDir, refPolicySkip } from '../lib/ref-policy.js';

t.test('the kubernetes brand serves the reference bootstrap policy', { skip: refPolicySkip() }, async (t) => {
  const ref = readRefPolicy(refPolicyDir()!);
  const kube = getBrand('kubernetes');
  const { clusterRoles, clusterRoleBindings } = defaultPolicy(kube);
  const { roles, roleBindings } = defaultNamespacePolicy(kube);
  t.equal(clusterRoles.length, ref.clusterroles.length, 'as many cluster roles');
  t.equal(clusterRoleBindings.length, ref.clusterrolebindings.length, 'as many cluster role bindings');
  t.equal(roles.length, ref.roles.length, 'as many roles');
  t.equal(roleBindings.length, ref.rolebindings.length, 'as many role bindings');
  for (const [kind, theirs, ours] of [
    ['ClusterRole', ref.clusterroles, clusterRoles], ['ClusterRoleBinding', ref.clusterrolebindings, clusterRoleBindings],
    ['Role', ref.roles, roles], ['RoleBinding', ref.rolebindings, roleBindings],
  ] as const) {
    t.same(comparePolicy(kind, theirs, ours), [], `every ${kind} as the reference's`);
  }
});

t.test('the neutral brand names the same policy in its own words', async (t) => {
  const c = getBrand('cluster');
  const { clusterRoles, clusterRoleBindings } = defaultPolicy(c);
  const { roles, roleBindings } = defaultNamespacePolicy(c);
  const text = JSON.stringify([clusterRoles, clusterRoleBindings, roles, roleBindings]);
  t.notMatch(text, /k8s\.io|kubernetes\.io|kube-system|kube-public/, 'nothing of the kubernetes brand');
  const approver = clusterRoles.find((o) => o.metadata?.name === 'system:certificates.cluster.io:apiserver-client-approver');
  t.same(approver?.rules, [{ verbs: ['approve'], apiGroups: ['certificates.cluster.io'], resources: ['signers'], resourceNames: ['cluster.io/apiserver-client'] }], 'approver roles follow the brand\'s signers');
  t.same([...new Set(roles.map((r) => r.metadata?.namespace))].sort(), ['cluster-public', 'cluster-system']);
  const gc = clusterRoleBindings.find((o) => o.metadata?.name === 'system:controller:generic-garbage-collector');
  t.same(gc?.subjects, [{ kind: 'ServiceAccount', name: 'generic-garbage-collector', namespace: 'cluster-system' }]);
  const view = clusterRoles.find((o) => o.metadata?.name === 'view');
  t.same(view?.metadata?.labels, { 'cluster.io/bootstrapping': 'rbac-defaults', 'rbac.authorization.cluster.io/aggregate-to-edit': 'true' });
  t.same(view?.aggregationRule, { clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.cluster.io/aggregate-to-view': 'true' } }] });
  t.same(view?.metadata?.annotations, { 'rbac.authorization.cluster.io/autoupdate': 'true' });
});
