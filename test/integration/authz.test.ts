// Authorization end to end against the real server: RBAC (with the Node authorizer in front of it),
// escalation prevention, default roles and their reconciliation across a restart, the access review
// APIs, impersonation, ABAC with a policy file and a webhook authorizer served by this test.
import t from 'tap';
import https from 'node:https';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { generateCA, signCert } from '../../kernel/ops/pki.js';
import { startServer, type TestServer } from '../lib/server.js';
import { untilDefined as until } from '../lib/poll.js';

const D = 'cluster.io';
const RBAC = `rbac.authorization.${D}`;
const AUTHZ = `authorization.${D}`;
const AUTHN = `authentication.${D}`;

/** Tokens of the users this test writes into its token file. */
const TOK = {
  admin: 'admin-token-0123456789',
  alice: 'alice-token-0123456789',
  bob: 'bob-token-0123456789',
  node1: 'node1-token-0123456789',
  mallory: 'mallory-token-0123456789',
};

/**
 * A data directory whose first-start token file already holds our admin token (ensurePki keeps it),
 * and a separate --token-auth-file with the admin and the test users.
 */
function prepare(extraArgs: string[] = []): { dataDir: string; args: string[] } {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'capi-authz-'));
  mkdirSync(path.join(dataDir, 'pki'), { recursive: true, mode: 0o700 });
  const admin = `${TOK.admin},admin,admin-uid,"system:masters"\n`;
  writeFileSync(path.join(dataDir, 'pki', 'tokens.csv'), admin, { mode: 0o600 });
  const users = path.join(dataDir, 'users.csv');
  writeFileSync(users, [
    admin.trim(),
    `${TOK.alice},alice,alice-uid,"devs"`,
    `${TOK.bob},bob,bob-uid`,
    `${TOK.node1},system:node:n1,node1-uid,"system:nodes"`,
    `${TOK.mallory},mallory,mallory-uid,"devs"`,
  ].join('\n') + '\n');
  return { dataDir, args: ['--token-auth-file', users, ...extraArgs] };
}

async function serve(t: { teardown(fn: () => unknown): void }, extraArgs: string[], brand: 'cluster' | 'kubernetes' = 'cluster'): Promise<TestServer> {
  const { dataDir, args } = prepare(extraArgs);
  const s = await startServer({ brand, dataDir, args });
  t.teardown(async () => {
    await s.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return s;
}

const as = (s: TestServer, token: string | null) => ({
  get: (p: string, headers?: Record<string, string>) => s.request('GET', p, { token, headers }),
  post: (p: string, body: unknown, headers?: Record<string, string>) => s.request('POST', p, { token, body, headers }),
  put: (p: string, body: unknown) => s.request('PUT', p, { token, body }),
  request: (method: string, p: string, o: { body?: unknown } = {}) => s.request(method, p, { token, ...o }),
});

const rules = (...r: Record<string, string[]>[]) => r;
const rule = (verbs: string, resources: string, apiGroups = '', resourceNames?: string) => ({
  verbs: verbs.split(','), apiGroups: apiGroups.split(','), resources: resources.split(','), ...(resourceNames ? { resourceNames: resourceNames.split(',') } : {}),
});
const roleObj = (ns: string, name: string, r: unknown[]) => ({ apiVersion: `${RBAC}/v1`, kind: 'Role', metadata: { name, namespace: ns }, rules: r });
const clusterRoleObj = (name: string, r: unknown[]) => ({ apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata: { name }, rules: r });
const subject = (s: string) => (s.startsWith('Group:') ? { kind: 'Group', apiGroup: RBAC, name: s.slice(6) } : { kind: 'User', apiGroup: RBAC, name: s });
const rbObj = (ns: string, name: string, kind: string, role: string, subjects: string[]) => ({
  apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', metadata: { name, namespace: ns }, roleRef: { apiGroup: RBAC, kind, name: role }, subjects: subjects.map(subject),
});
const crbObj = (name: string, role: string, subjects: string[]) => ({
  apiVersion: `${RBAC}/v1`, kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: role }, subjects: subjects.map(subject),
});
const P = {
  roles: (ns: string) => `/apis/${RBAC}/v1/namespaces/${ns}/roles`,
  rolebindings: (ns: string) => `/apis/${RBAC}/v1/namespaces/${ns}/rolebindings`,
  clusterroles: `/apis/${RBAC}/v1/clusterroles`,
  clusterrolebindings: `/apis/${RBAC}/v1/clusterrolebindings`,
};

t.test('RBAC with the Node authorizer (cluster brand)', async (t) => {
  const s = await serve(t, ['--authorization-mode=Node,RBAC']);
  const admin = as(s, TOK.admin);
  const alice = as(s, TOK.alice);
  const bob = as(s, TOK.bob);
  const anon = as(s, null);
  const ok = async (p: Promise<{ status: number; text: string }>, code: number, what: string) => {
    const r = await p;
    t.equal(r.status, code, `${what}: ${r.text.slice(0, 300)}`);
    return r;
  };
  await ok(admin.post('/api/v1/namespaces', { metadata: { name: 'team' } }), 201, 'namespace team');

  await t.test('default roles and bindings', async (t) => {
    const crs = await admin.get(P.clusterroles);
    t.equal(crs.status, 200);
    const byName = new Map<string, any>(crs.json.items.map((o: any) => [o.metadata.name, o]));
    for (const n of ['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user', 'system:public-info-viewer', 'system:node', 'system:node-proxier',
      'system:kube-scheduler', 'system:kube-controller-manager', 'system:monitoring', 'system:controller:namespace-controller', 'system:controller:generic-garbage-collector',
      'system:controller:clusterrole-aggregation-controller']) {
      t.equal(byName.get(n)?.metadata.labels?.[`${D}/bootstrapping`], 'rbac-defaults', `${n} labelled`);
    }
    t.equal(byName.get('cluster-admin').metadata.annotations[`rbac.authorization.${D}/autoupdate`], 'true');
    const view = byName.get('view');
    t.ok(view.rules.length > 5, 'view is filled by aggregation');
    t.ok(view.rules.some((r: any) => r.resources?.includes('pods') && r.verbs.includes('list')), 'view lists pods');
    const edit = byName.get('edit');
    t.ok(edit.rules.some((r: any) => r.resources?.includes('pods') && r.verbs.includes('list')), 'edit aggregates view');
    t.ok(byName.get('admin').rules.some((r: any) => r.resources?.includes('rolebindings')), 'admin has its own aggregated rules');
    const crb = await admin.get(`${P.clusterrolebindings}/cluster-admin`);
    t.same(crb.json.subjects, [{ kind: 'Group', apiGroup: RBAC, name: 'system:masters' }]);
    t.same(crb.json.roleRef, { apiGroup: RBAC, kind: 'ClusterRole', name: 'cluster-admin' });
  });

  await t.test('403 messages, discovery and public info', async (t) => {
    const r = await bob.get('/api/v1/namespaces/default/pods');
    t.equal(r.status, 403);
    t.same(r.json, {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"', reason: 'Forbidden', details: { kind: 'pods' }, code: 403,
    });
    const named = await bob.get(`/apis/apps/v1/namespaces/team/deployments/web`);
    t.equal(named.json.message, 'deployments.apps "web" is forbidden: User "bob" cannot get resource "deployments" in API group "apps" in the namespace "team"');
    const nodes = await bob.get('/api/v1/nodes');
    t.equal(nodes.json.message, 'nodes is forbidden: User "bob" cannot list resource "nodes" in API group "" at the cluster scope');
    await ok(bob.get('/api'), 200, 'authenticated users discover (system:discovery)');
    await ok(bob.get(`/apis/${RBAC}/v1`), 200, 'group discovery');
    await ok(anon.get('/healthz'), 200, 'anonymous /healthz (system:public-info-viewer)');
    await ok(anon.get('/version'), 200, 'anonymous /version');
    const api = await anon.get('/api');
    t.equal(api.status, 403, 'anonymous users do not discover');
    t.equal(api.json.message, 'forbidden: User "system:anonymous" cannot get path "/api"');
  });

  await t.test('Role and RoleBinding grant in their namespace', async (t) => {
    await ok(admin.post(P.roles('team'), roleObj('team', 'pod-reader', rules(rule('get,list', 'pods')))), 201, 'role');
    await ok(admin.post(P.rolebindings('team'), rbObj('team', 'alice-reads-pods', 'Role', 'pod-reader', ['alice'])), 201, 'binding');
    await ok(alice.get('/api/v1/namespaces/team/pods'), 200, 'alice lists pods in team');
    await ok(alice.get('/api/v1/namespaces/default/pods'), 403, 'but not in default');
    await ok(alice.get('/api/v1/pods'), 403, 'nor across namespaces');
    await ok(alice.post('/api/v1/namespaces/team/pods', { metadata: { name: 'x' }, spec: { containers: [{ name: 'c', image: 'i' }] } }), 403, 'nor create');
  });

  await t.test('ClusterRole through a RoleBinding is limited to the binding namespace', async (t) => {
    await ok(admin.post('/api/v1/namespaces/team/secrets', { metadata: { name: 's1' }, data: {} }), 201, 'secret in team');
    await ok(admin.post('/api/v1/namespaces/default/secrets', { metadata: { name: 's1' }, data: {} }), 201, 'secret in default');
    await ok(admin.post(P.clusterroles, clusterRoleObj('secret-reader', rules(rule('get', 'secrets')))), 201, 'cluster role');
    await ok(admin.post(P.rolebindings('team'), rbObj('team', 'devs-read-secrets', 'ClusterRole', 'secret-reader', ['Group:devs'])), 201, 'binding to a group');
    await ok(alice.get('/api/v1/namespaces/team/secrets/s1'), 200, 'alice (group devs) reads the secret in team');
    await ok(alice.get('/api/v1/namespaces/default/secrets/s1'), 403, 'not in default');
  });

  await t.test('a remembered decision never outlives its binding or rule', async (t) => {
    // Each allow below is asked twice first, so the second answer comes from RBAC's remembered decisions.
    await ok(admin.post('/api/v1/namespaces/team/configmaps', { metadata: { name: 'revoked' }, data: {} }), 201, 'configmap');
    await ok(admin.post(P.roles('team'), roleObj('team', 'cm-reader', rules(rule('get', 'configmaps')))), 201, 'role');
    await ok(admin.post(P.rolebindings('team'), rbObj('team', 'bob-reads-cms', 'Role', 'cm-reader', ['bob'])), 201, 'binding');
    for (let i = 0; i < 2; i++) await ok(bob.get('/api/v1/namespaces/team/configmaps/revoked'), 200, `allowed (${i})`);
    await ok(admin.request('DELETE', `${P.rolebindings('team')}/bob-reads-cms`), 200, 'binding revoked');
    await ok(bob.get('/api/v1/namespaces/team/configmaps/revoked'), 403, 'the next request is denied');
    await ok(admin.post(P.rolebindings('team'), rbObj('team', 'bob-reads-cms', 'Role', 'cm-reader', ['bob'])), 201, 'bound again');
    for (let i = 0; i < 2; i++) await ok(bob.get('/api/v1/namespaces/team/configmaps/revoked'), 200, `allowed again (${i})`);
    await ok(admin.request('PUT', `${P.roles('team')}/cm-reader`, { body: roleObj('team', 'cm-reader', rules(rule('list', 'configmaps'))) }), 200, 'the rule narrowed');
    await ok(bob.get('/api/v1/namespaces/team/configmaps/revoked'), 403, 'denied at once');
    await ok(admin.request('DELETE', `${P.rolebindings('team')}/bob-reads-cms`), 200, 'binding deleted');
    await ok(admin.request('DELETE', `${P.roles('team')}/cm-reader`), 200, 'role deleted');
  });

  await t.test('resourceNames and sub-resources', async (t) => {
    for (const n of ['open', 'closed']) await ok(admin.post('/api/v1/namespaces/team/configmaps', { metadata: { name: n }, data: {} }), 201, `configmap ${n}`);
    await ok(admin.post(P.roles('team'), roleObj('team', 'one-cm', rules(rule('get,update,create,delete,deletecollection', 'configmaps', '', 'open'), rule('get', 'pods/status')))), 201, 'role');
    await ok(admin.post(P.rolebindings('team'), rbObj('team', 'bob-one-cm', 'Role', 'one-cm', ['bob'])), 201, 'binding');
    await ok(bob.get('/api/v1/namespaces/team/configmaps/open'), 200, 'named');
    await ok(bob.get('/api/v1/namespaces/team/configmaps/closed'), 403, 'other name');
    await ok(bob.get('/api/v1/namespaces/team/configmaps'), 403, 'list (no name)');
    await ok(bob.get('/api/v1/namespaces/team/configmaps?fieldSelector=metadata.name%3Dopen'), 403, 'list verb not granted even with the name');
    await ok(bob.post('/api/v1/namespaces/team/configmaps', { metadata: { name: 'open2' } }), 403, 'resourceNames cannot restrict create');
    await ok(bob.request('DELETE', '/api/v1/namespaces/team/configmaps'), 403, 'nor deletecollection');
    await ok(admin.post('/api/v1/namespaces/team/pods', { metadata: { name: 'p1' }, spec: { containers: [{ name: 'c', image: 'i' }] } }), 201, 'pod');
    await ok(bob.get('/api/v1/namespaces/team/pods/p1/status'), 200, 'pods/status');
    const main = await ok(bob.get('/api/v1/namespaces/team/pods/p1'), 403, 'the pod itself');
    t.equal((await bob.get('/api/v1/namespaces/team/pods/p1/status')).json.kind, 'Pod');
    t.match(main.text, /cannot get resource \\"pods\\"/);
    const sub = await bob.request('PUT', '/api/v1/namespaces/team/pods/p1/status', { body: {} });
    t.equal(sub.json.message, 'pods "p1" is forbidden: User "bob" cannot update resource "pods/status" in API group "" in the namespace "team"');
  });

  await t.test('non-resource URLs only through ClusterRoleBindings', async (t) => {
    await ok(admin.post(P.clusterroles, clusterRoleObj('openapi-reader', [{ verbs: ['get'], nonResourceURLs: ['/openapi/*'] }])), 201, 'cluster role');
    await ok(anon.get('/openapi/v2'), 403, 'anonymous cannot read /openapi/v2');
    await ok(admin.post(P.rolebindings('default'), rbObj('default', 'anon-openapi', 'ClusterRole', 'openapi-reader', ['Group:system:unauthenticated'])), 201, 'role binding');
    await ok(anon.get('/openapi/v2'), 403, 'a RoleBinding grants no non-resource URL');
    await ok(admin.post(P.clusterrolebindings, crbObj('anon-openapi', 'openapi-reader', ['Group:system:unauthenticated'])), 201, 'cluster role binding');
    await ok(anon.get('/openapi/v2'), 200, '"/openapi/*" via a ClusterRoleBinding');
    await ok(anon.get('/openapi/v3'), 200, 'prefix match');
    await ok(anon.get('/api'), 403, 'other paths still refused');
  });

  await t.test('roleRef is immutable', async (t) => {
    const cur = (await admin.get(`${P.rolebindings('team')}/alice-reads-pods`)).json;
    const r = await admin.put(`${P.rolebindings('team')}/alice-reads-pods`, { ...cur, roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'view' } });
    t.equal(r.status, 422);
    t.equal(r.json.reason, 'Invalid');
    t.equal(r.json.message, `RoleBinding.${RBAC} "alice-reads-pods" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"${RBAC}", Kind:"ClusterRole", Name:"view"}: cannot change roleRef`);
    t.same(r.json.details.causes, [{ reason: 'FieldValueInvalid', message: `Invalid value: rbac.RoleRef{APIGroup:"${RBAC}", Kind:"ClusterRole", Name:"view"}: cannot change roleRef`, field: 'roleRef' }]);
    await ok(admin.put(`${P.rolebindings('team')}/alice-reads-pods`, { ...cur, subjects: [...cur.subjects, subject('carol')] }), 200, 'subjects may change');
    const bad = await admin.post(P.rolebindings('team'), { ...rbObj('team', 'bad', 'Role', 'x', ['alice']), roleRef: { apiGroup: RBAC, kind: 'Robot', name: 'x' } });
    t.equal(bad.status, 422);
    t.equal(bad.json.message, `RoleBinding.${RBAC} "bad" is invalid: roleRef.kind: Unsupported value: "Robot": supported values: "Role", "ClusterRole"`);
  });

  await t.test('escalation prevention', async (t) => {
    // alice may manage roles and bindings in team, and holds get/list pods there (pod-reader) and get secrets (secret-reader).
    await ok(admin.post(P.roles('team'), roleObj('team', 'rbac-manager', rules(rule('create,update,get,list,delete', 'roles,rolebindings', RBAC)))), 201, 'manager role');
    await ok(admin.post(P.rolebindings('team'), rbObj('team', 'alice-manages', 'Role', 'rbac-manager', ['alice'])), 201, 'manager binding');
    await ok(alice.post(P.roles('team'), roleObj('team', 'subset', rules(rule('get', 'pods')))), 201, 'a role with rules she holds');
    const r = await alice.post(P.roles('team'), roleObj('team', 'too-much', rules(rule('get', 'pods'), rule('delete,get', 'pods,services'))));
    t.equal(r.status, 403);
    t.equal(r.json.reason, 'Forbidden');
    t.equal(r.json.message, `roles.${RBAC} "too-much" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n`
      + '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n{APIGroups:[""], Resources:["services"], Verbs:["delete" "get"]}');
    t.same(r.json.details, { name: 'too-much', group: RBAC, kind: 'roles' });
    const cr = await alice.post(P.roles('team'), roleObj('team', 'urls', [{ verbs: ['get'], nonResourceURLs: ['/x'] }]));
    // The reference's RBAC storage confirms no escalation before it validates: alice does not hold
    // the non-resource URL, so this is a 403 before the 422 a privileged writer gets (below).
    t.equal(cr.status, 403, 'escalation is checked before validation');
    const crAdmin = await admin.post(P.roles('team'), roleObj('team', 'urls', [{ verbs: ['get'], nonResourceURLs: ['/x'] }]));
    t.equal(crAdmin.status, 422, 'roles cannot hold non-resource URLs');

    const b = await alice.post(P.rolebindings('team'), rbObj('team', 'bob-admin', 'ClusterRole', 'admin', ['bob']));
    t.equal(b.status, 403, 'binding a role she does not hold');
    t.match(b.json.message, new RegExp(`^rolebindings\\.${RBAC.replace(/\./g, '\\.')} "bob-admin" is forbidden: user "alice" \\(groups=\\["devs" "system:authenticated"\\]\\) is attempting to grant RBAC permissions not currently held:\n\\{APIGroups:`));
    await ok(alice.post(P.rolebindings('team'), rbObj('team', 'bob-reads', 'Role', 'pod-reader', ['bob'])), 201, 'binding a role she holds');
    const missing = await alice.post(P.rolebindings('team'), rbObj('team', 'ghost', 'ClusterRole', 'no-such-role', ['bob']));
    t.equal(missing.json.message, `rolebindings.${RBAC} "ghost" is forbidden: clusterroles.${RBAC} "no-such-role" not found`);

    // With bind on the admin cluster role (by name) the binding is allowed; with escalate any role is.
    await ok(admin.post(P.roles('team'), roleObj('team', 'binder', rules(rule('bind', 'clusterroles', RBAC, 'admin'), rule('escalate', 'roles', RBAC)))), 201, 'bind+escalate role');
    await ok(admin.post(P.rolebindings('team'), rbObj('team', 'alice-binds', 'Role', 'binder', ['alice'])), 201, 'binding');
    await ok(alice.post(P.rolebindings('team'), rbObj('team', 'bob-admin', 'ClusterRole', 'admin', ['bob'])), 201, 'bind allows binding admin');
    await ok(alice.post(P.rolebindings('team'), rbObj('team', 'bob-edit', 'ClusterRole', 'edit', ['bob'])), 403, 'but not edit');
    await ok(alice.post(P.roles('team'), roleObj('team', 'too-much', rules(rule('delete,get', 'pods,services')))), 201, 'escalate allows any rules');

    // Cluster roles: alice holds nothing cluster-wide.
    await ok(admin.post(P.clusterroles, clusterRoleObj('cr-manager', rules(rule('create', 'clusterroles', RBAC)))), 201, 'cluster role manager');
    await ok(admin.post(P.clusterrolebindings, crbObj('alice-cr-manager', 'cr-manager', ['alice'])), 201, 'binding');
    const c = await alice.post(P.clusterroles, clusterRoleObj('alice-cr', rules(rule('get', 'pods'))));
    t.equal(c.json.message, `clusterroles.${RBAC} "alice-cr" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`, 'cluster scope checks cluster-wide rules only');
    const agg = await alice.post(P.clusterroles, { ...clusterRoleObj('alice-agg', []), aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: 'y' } }] } });
    t.equal(agg.json.message, `clusterroles.${RBAC} "alice-agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`);
  });

  await t.test('access reviews', async (t) => {
    const ssar = (token: string, spec: unknown) => as(s, token).post(`/apis/${AUTHZ}/v1/selfsubjectaccessreviews`, { apiVersion: `${AUTHZ}/v1`, kind: 'SelfSubjectAccessReview', spec });
    const yes = await ssar(TOK.alice, { resourceAttributes: { namespace: 'team', verb: 'list', resource: 'pods' } });
    t.equal(yes.status, 201, yes.text);
    t.same(yes.json, {
      kind: 'SelfSubjectAccessReview', apiVersion: `${AUTHZ}/v1`, metadata: { creationTimestamp: null },
      spec: { resourceAttributes: { namespace: 'team', verb: 'list', resource: 'pods' } },
      status: { allowed: true, reason: 'RBAC: allowed by RoleBinding "alice-reads-pods/team" of Role "pod-reader" to User "alice"' },
    });
    const no = await ssar(TOK.alice, { resourceAttributes: { namespace: 'default', verb: 'list', resource: 'pods' } });
    t.same(no.json.status, { allowed: false });
    const url = await ssar(TOK.alice, { nonResourceAttributes: { path: '/api', verb: 'get' } });
    t.equal(url.json.status.allowed, true, 'non-resource attributes');
    const neither = await ssar(TOK.alice, {});
    t.equal(neither.status, 422);
    t.equal(neither.json.message, `SelfSubjectAccessReview.${AUTHZ} "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified`);
    const anonReview = await anon.post(`/apis/${AUTHZ}/v1/selfsubjectaccessreviews`, { spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } });
    t.equal(anonReview.status, 403, 'anonymous users may not review (system:basic-user is for authenticated users)');

    const sar = (body: unknown, token = TOK.admin) => as(s, token).post(`/apis/${AUTHZ}/v1/subjectaccessreviews`, body);
    const other = await sar({ spec: { user: 'bob', groups: ['system:authenticated'], resourceAttributes: { namespace: 'team', verb: 'get', resource: 'configmaps', name: 'open' } } });
    t.equal(other.status, 201);
    t.same(other.json.status, { allowed: true, reason: 'RBAC: allowed by RoleBinding "bob-one-cm/team" of Role "one-cm" to User "bob"' });
    const otherNo = await sar({ spec: { user: 'bob', resourceAttributes: { namespace: 'default', verb: 'get', resource: 'configmaps', name: 'closed' } } });
    t.same(otherNo.json.status, { allowed: false });
    const nobody = await sar({ spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } });
    t.equal(nobody.status, 422);
    t.equal(nobody.json.message, `SubjectAccessReview.${AUTHZ} "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified`);
    await ok(sar({ spec: { user: 'bob', resourceAttributes: { verb: 'get', resource: 'pods' } } }, TOK.alice), 403, 'alice may not review others');

    const lsar = (ns: string, body: any) => admin.post(`/apis/${AUTHZ}/v1/namespaces/${ns}/localsubjectaccessreviews`, body);
    const local = await lsar('team', { spec: { user: 'alice', groups: ['devs'], resourceAttributes: { namespace: 'team', verb: 'get', resource: 'secrets', name: 's1' } } });
    t.equal(local.status, 201, local.text);
    t.equal(local.json.metadata.namespace, 'team');
    t.equal(local.json.status.allowed, true);
    const mismatch = await lsar('team', { spec: { user: 'alice', resourceAttributes: { namespace: 'default', verb: 'get', resource: 'secrets' } } });
    t.equal(mismatch.status, 422);
    t.equal(mismatch.json.message, `LocalSubjectAccessReview.${AUTHZ} "" is invalid: spec.resourceAttributes.namespace: Invalid value: "default": must match metadata.namespace`);
    const metaMismatch = await lsar('team', { metadata: { namespace: 'default' }, spec: { user: 'alice', resourceAttributes: { namespace: 'team', verb: 'get', resource: 'secrets' } } });
    t.equal(metaMismatch.status, 400);
    t.equal(metaMismatch.json.message, 'the namespace of the provided object does not match the namespace sent on the request');

    const ssrr = await alice.post(`/apis/${AUTHZ}/v1/selfsubjectrulesreviews`, { spec: { namespace: 'team' } });
    t.equal(ssrr.status, 201, ssrr.text);
    t.same(ssrr.json.spec, {});
    t.equal(ssrr.json.status.incomplete, false);
    t.ok(ssrr.json.status.resourceRules.some((r: any) => r.resources.includes('pods') && r.verbs.includes('list')), 'pod-reader rule');
    t.ok(ssrr.json.status.resourceRules.some((r: any) => r.resources.includes('selfsubjectaccessreviews')), 'basic-user rule');
    t.ok(ssrr.json.status.nonResourceRules.some((r: any) => r.nonResourceURLs.includes('/api')), 'discovery rule');
    const noNs = await alice.post(`/apis/${AUTHZ}/v1/selfsubjectrulesreviews`, { spec: {} });
    t.equal(noNs.status, 400);
    t.equal(noNs.json.message, 'no namespace on request');
    const nodeRules = await as(s, TOK.node1).post(`/apis/${AUTHZ}/v1/selfsubjectrulesreviews`, { spec: { namespace: 'team' } });
    t.equal(nodeRules.json.status.incomplete, true, 'a node: the Node authorizer cannot list its rules');
    t.equal(nodeRules.json.status.evaluationError, 'node authorizer does not support user rule resolution');

    const tr = await admin.post(`/apis/${AUTHN}/v1/tokenreviews`, { apiVersion: `${AUTHN}/v1`, kind: 'TokenReview', spec: { token: TOK.alice } });
    t.equal(tr.status, 201, tr.text);
    t.same(tr.json.spec, {});
    t.equal(tr.json.status.authenticated, true);
    t.same(tr.json.status.user, { username: 'alice', uid: 'alice-uid', groups: ['devs', 'system:authenticated'] });
    const trAdmin = await admin.post(`/apis/${AUTHN}/v1/tokenreviews`, { spec: { token: s.token } });
    t.same(trAdmin.json.status.user.groups, ['system:masters', 'system:authenticated'], 'the admin token');
    const trBad = await admin.post(`/apis/${AUTHN}/v1/tokenreviews`, { spec: { token: 'nope' } });
    t.same(trBad.json.status, { user: {} });
    const trEmpty = await admin.post(`/apis/${AUTHN}/v1/tokenreviews`, { spec: {} });
    t.equal(trEmpty.status, 400);
    await ok(alice.post(`/apis/${AUTHN}/v1/tokenreviews`, { spec: { token: TOK.bob } }), 403, 'token reviews need system:auth-delegator or more');

    const ssr = await alice.post(`/apis/${AUTHN}/v1/selfsubjectreviews`, { apiVersion: `${AUTHN}/v1`, kind: 'SelfSubjectReview' });
    t.equal(ssr.status, 201, ssr.text);
    t.same(ssr.json.status, { userInfo: { username: 'alice', uid: 'alice-uid', groups: ['devs', 'system:authenticated'] } });
    t.match(ssr.json.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    await ok(admin.get(`/apis/${AUTHN}/v1/selfsubjectreviews`), 405, 'create only');
  });

  await t.test('impersonation', async (t) => {
    const imp = (user: string, more: Record<string, string> = {}) => ({ 'Impersonate-User': user, ...more });
    const r = await alice.get('/api/v1/namespaces/team/pods', imp('bob'));
    t.equal(r.status, 403);
    t.equal(r.json.message, 'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope');
    await ok(admin.post(P.clusterroles, clusterRoleObj('impersonate-bob', rules(rule('impersonate', 'users', '', 'bob')))), 201, 'impersonator role');
    await ok(admin.post(P.clusterrolebindings, crbObj('alice-impersonates', 'impersonate-bob', ['alice'])), 201, 'binding');
    const asBob = await alice.get('/api/v1/namespaces/team/configmaps/open', imp('bob'));
    t.equal(asBob.status, 200, 'acts as bob');
    const asBobDenied = await alice.get('/api/v1/namespaces/default/pods', imp('bob'));
    t.equal(asBobDenied.json.message, 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"');
    const who = await alice.post(`/apis/${AUTHN}/v1/selfsubjectreviews`, {}, imp('bob'));
    t.same(who.json.status.userInfo, { username: 'bob', groups: ['system:authenticated'] });
    await ok(alice.get('/api/v1/namespaces/team/pods', imp('carol')), 403, 'only the named user');
    const grp = await alice.get('/api/v1/namespaces/team/pods', imp('bob', { 'Impersonate-Group': 'devs' }));
    t.equal(grp.json.message, 'groups "devs" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope');
    const noUser = await alice.get('/api/v1/namespaces/team/pods', { 'Impersonate-Group': 'devs' });
    t.equal(noUser.status, 400);
  });

  await t.test('node authorizer: objects of pods bound to the node', async (t) => {
    const node1 = as(s, TOK.node1);
    for (const n of ['n1', 'n2']) await ok(admin.post('/api/v1/nodes', { metadata: { name: n } }), 201, `node ${n}`);
    for (const n of ['pod-secret', 'other-secret']) await ok(admin.post('/api/v1/namespaces/team/secrets', { metadata: { name: n }, data: {} }), 201, n);
    await ok(admin.post('/api/v1/namespaces/team/configmaps', { metadata: { name: 'pod-cm' }, data: {} }), 201, 'configmap');
    const pod = {
      metadata: { name: 'on-n1' },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i', envFrom: [{ configMapRef: { name: 'pod-cm' } }] }], volumes: [{ name: 'v', secret: { secretName: 'pod-secret' } }] },
    };
    await ok(admin.post('/api/v1/namespaces/team/pods', pod), 201, 'pod on n1');
    await ok(node1.get('/api/v1/namespaces/team/secrets/pod-secret'), 200, 'secret of its pod');
    await ok(node1.get('/api/v1/namespaces/team/configmaps/pod-cm'), 200, 'configmap of its pod');
    const other = await node1.get('/api/v1/namespaces/team/secrets/other-secret');
    t.equal(other.status, 403);
    t.equal(other.json.message, 'secrets "other-secret" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "team": no relationship found between node \'n1\' and this object');
    await ok(node1.get('/api/v1/namespaces/team/secrets'), 403, 'no listing');
    await ok(node1.get('/api/v1/nodes/n1'), 200, 'its own node');
    // as the reference: the system:node role lets a node read every Node (and not nodes/status);
    // NodeRestriction keeps its writes to its own
    await ok(node1.get('/api/v1/nodes/n2'), 200, 'another node is readable');
    await ok(node1.get('/api/v1/nodes/n1/status'), 403, 'nodes/status is not readable');
    const n1 = (await node1.get('/api/v1/nodes/n1')).json;
    await ok(node1.put('/api/v1/nodes/n1/status', { ...n1, status: { ...n1.status, capacity: { pods: '10' } } }), 200, 'its node status');
    const p = (await admin.get('/api/v1/namespaces/team/pods/on-n1')).json;
    await ok(node1.put('/api/v1/namespaces/team/pods/on-n1/status', { ...p, status: { phase: 'Running' } }), 200, 'status of its pod');
    const p1 = (await admin.get('/api/v1/namespaces/team/pods/p1')).json;
    await ok(node1.put('/api/v1/namespaces/team/pods/p1/status', { ...p1, status: { phase: 'Running' } }), 403, 'not of another pod (NodeRestriction)');
    // Moving to another node (delete, recreate elsewhere) takes the access away.
    await ok(admin.request('DELETE', '/api/v1/namespaces/team/pods/on-n1?gracePeriodSeconds=0'), 200, 'delete pod');
    const gone = await until(async () => ((await node1.get('/api/v1/namespaces/team/secrets/pod-secret')).status === 403 ? true : undefined));
    t.ok(gone, 'secret no longer readable');
  });

  await t.test('reconciliation at restart and aggregation', async (t) => {
    // Aggregation refills a role whose rules were emptied.
    const view = (await admin.get(`${P.clusterroles}/view`)).json;
    const count = view.rules.length;
    await ok(admin.put(`${P.clusterroles}/view`, { ...view, rules: [] }), 200, 'empty view');
    const refilled = await until(async () => {
      const v = (await admin.get(`${P.clusterroles}/view`)).json;
      return v.rules?.length === count ? v : undefined;
    });
    t.ok(refilled, 'aggregation refilled view');
    // A new role labelled aggregate-to-view reaches view, edit and admin.
    await ok(admin.post(P.clusterroles, { ...clusterRoleObj('widgets-view', rules(rule('get,list', 'widgets', 'example.com'))), metadata: { name: 'widgets-view', labels: { [`${RBAC}/aggregate-to-view`]: 'true' } } }), 201, 'labelled role');
    for (const n of ['view', 'edit', 'admin']) {
      const has = await until(async () => ((await admin.get(`${P.clusterroles}/${n}`)).json.rules.some((r: any) => r.resources?.includes('widgets')) ? true : undefined));
      t.ok(has, `${n} aggregates the new rule`);
    }

    // Damage defaults: a rule removed, an autoupdate=false one changed, a binding deleted.
    const basic = (await admin.get(`${P.clusterroles}/system:basic-user`)).json;
    await ok(admin.put(`${P.clusterroles}/system:basic-user`, { ...basic, rules: basic.rules.slice(0, 1) }), 200, 'drop a rule of system:basic-user');
    const mon = (await admin.get(`${P.clusterroles}/system:monitoring`)).json;
    const kept = { ...mon, metadata: { ...mon.metadata, annotations: { [`rbac.authorization.${D}/autoupdate`]: 'false' } }, rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }] };
    await ok(admin.put(`${P.clusterroles}/system:monitoring`, kept), 200, 'monitoring: autoupdate=false');
    await ok(admin.request('DELETE', `${P.clusterrolebindings}/system:discovery`), 200, 'delete a default binding');
    await ok(bob.get('/api'), 403, 'bob lost discovery');

    await s.restart();
    const basic2 = (await admin.get(`${P.clusterroles}/system:basic-user`)).json;
    t.same(basic2.rules.flatMap((r: any) => r.resources).sort(), ['selfsubjectaccessreviews', 'selfsubjectreviews', 'selfsubjectrulesreviews'], 'missing rule added back');
    const mon2 = (await admin.get(`${P.clusterroles}/system:monitoring`)).json;
    t.same(mon2.rules, [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }], 'autoupdate=false kept as changed');
    await ok(admin.get(`${P.clusterrolebindings}/system:discovery`), 200, 'binding recreated');
    await ok(bob.get('/api'), 200, 'bob discovers again');
    await ok(alice.get('/api/v1/namespaces/team/pods'), 200, 'user grants survive the restart');
  });
});

t.test('ABAC with a policy file', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-abac-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const policy = path.join(dir, 'policy.jsonl');
  const line = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec });
  writeFileSync(policy, [
    line({ user: 'admin', namespace: '*', resource: '*', apiGroup: '*', nonResourcePath: '*' }),
    line({ user: 'alice', namespace: 'default', resource: 'configmaps', apiGroup: '' }),
    line({ group: 'devs', readonly: true, namespace: '*', resource: 'pods', apiGroup: '' }),
    line({ user: '*', readonly: true, nonResourcePath: '/version' }),
    line({ user: '*', namespace: '*', resource: 'selfsubjectrulesreviews', apiGroup: AUTHZ }),
  ].join('\n') + '\n');
  const s = await serve(t, ['--authorization-mode=ABAC', `--authorization-policy-file=${policy}`]);
  const alice = as(s, TOK.alice);
  const bob = as(s, TOK.bob);
  t.equal((await as(s, TOK.admin).get('/api/v1/namespaces')).status, 200, 'admin: everything');
  t.equal((await alice.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'a' } })).status, 201, 'alice writes configmaps in default');
  t.equal((await alice.get('/api/v1/namespaces/kube-system/configmaps')).status, 403, 'not in another namespace');
  t.equal((await alice.get('/api/v1/namespaces/kube-system/pods')).status, 200, 'group devs reads pods anywhere');
  t.equal((await alice.request('DELETE', '/api/v1/namespaces/default/pods/x')).status, 403, 'readonly');
  t.equal((await bob.get('/version')).status, 200, 'user "*": any authenticated user');
  t.equal((await as(s, null).get('/version')).status, 403, 'not anonymous');
  const r = await bob.get('/api/v1/namespaces/default/pods');
  t.equal(r.json.message, 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default": No policy matched.');
  const rules = await alice.post(`/apis/${AUTHZ}/v1/selfsubjectrulesreviews`, { spec: { namespace: 'default' } });
  t.equal(rules.status, 201, rules.text);
  t.same(rules.json.status, {
    resourceRules: [
      { verbs: ['*'], apiGroups: [''], resources: ['configmaps'] },
      { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['*'], apiGroups: [AUTHZ], resources: ['selfsubjectrulesreviews'] },
    ],
    // as in the reference, a policy without a namespace (the /version one) is not listed for a namespace
    nonResourceRules: [],
    incomplete: false,
  }, 'ABAC lists its rules');
});

t.test('ABAC needs its policy file', async (t) => {
  const { dataDir, args } = prepare(['--authorization-mode=ABAC']);
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  await t.rejects(startServer({ dataDir, args }), /authorization mode ABAC needs a policy file/);
});

t.test('webhook authorizer', async (t) => {
  const ca = await generateCA({ CN: 'authz-webhook-ca' });
  const serving = await signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: '127.0.0.1' }, ips: ['127.0.0.1'], usages: ['serverAuth'], days: 1 });
  const seen: any[] = [];
  const hook = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const review = JSON.parse(body);
      seen.push({ review, auth: req.headers.authorization });
      const spec = review.spec;
      const ra = spec.resourceAttributes ?? {};
      let status: Record<string, unknown> = {};
      if (spec.user === 'alice' && ra.verb === 'get') status = { allowed: true, reason: 'alice may read' };
      else if (spec.user === 'mallory') status = { allowed: false, denied: true, reason: 'mallory is banned' };
      else if (spec.user === 'bob' && ra.resource === 'boom') { res.writeHead(500); res.end('broken'); return; }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'SubjectAccessReview', status }));
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  t.teardown(() => hook.close());
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-authz-hook-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const cfg = path.join(dir, 'hook.kubeconfig');
  writeFileSync(cfg, [
    'apiVersion: v1', 'kind: Config',
    'clusters:', '- name: hook', '  cluster:', `    server: https://127.0.0.1:${(hook.address() as AddressInfo).port}/authorize`, `    certificate-authority-data: ${Buffer.from(ca.certPem).toString('base64')}`,
    'users:', '- name: apiserver', '  user:', '    token: hook-secret',
    'contexts:', '- name: default', '  context: { cluster: hook, user: apiserver }', 'current-context: default', '',
  ].join('\n'));
  const s = await serve(t, ['--authorization-mode=Webhook,RBAC', `--authorization-webhook-config-file=${cfg}`, '--authorization-webhook-version=v1']);
  const alice = as(s, TOK.alice);

  const r = await alice.get('/api/v1/namespaces/default/configmaps/x');
  t.equal(r.status, 404, 'allowed by the webhook (then not found)');
  const sent = seen.find((x) => x.review.spec.user === 'alice');
  t.same(sent.review, {
    apiVersion: `${AUTHZ}/v1`, kind: 'SubjectAccessReview',
    spec: { resourceAttributes: { namespace: 'default', verb: 'get', version: 'v1', resource: 'configmaps', name: 'x' }, user: 'alice', groups: ['devs', 'system:authenticated'], uid: 'alice-uid' },
  });
  t.equal(sent.auth, 'Bearer hook-secret', 'credentials from the kubeconfig');
  const before = seen.length;
  await alice.get('/api/v1/namespaces/default/configmaps/x');
  t.equal(seen.length, before, 'the answer is cached');
  t.equal((await alice.get('/api/v1/namespaces/default/configmaps')).status, 403, 'list: no opinion from the webhook, RBAC has none either');

  // mallory gets cluster-admin from RBAC, but the webhook comes first and denies.
  const admin = as(s, TOK.admin);
  t.equal((await admin.post(P.clusterrolebindings, crbObj('mallory-admin', 'cluster-admin', ['mallory']))).status, 201, 'admin: webhook has no opinion, RBAC allows');
  const m = await as(s, TOK.mallory).get('/api/v1/namespaces');
  t.equal(m.status, 403);
  t.equal(m.json.message, 'namespaces is forbidden: User "mallory" cannot list resource "namespaces" in API group "" at the cluster scope: mallory is banned');
  const review = await as(s, TOK.mallory).post(`/apis/${AUTHZ}/v1/selfsubjectaccessreviews`, { spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } });
  t.equal(review.status, 403, 'mallory may not even review');
  const sar = await admin.post(`/apis/${AUTHZ}/v1/subjectaccessreviews`, { spec: { user: 'mallory', resourceAttributes: { verb: 'get', resource: 'pods' } } });
  t.same(sar.json.status, { allowed: false, denied: true, reason: 'mallory is banned' }, 'denied in a review');
  const boom = await as(s, TOK.bob).get('/api/v1/namespaces/default/boom');
  t.equal(boom.status, 403, 'a failing webhook has no opinion');
  const rules = await alice.post(`/apis/${AUTHZ}/v1/selfsubjectrulesreviews`, { spec: { namespace: 'default' } });
  t.equal(rules.status, 201);
  t.equal(rules.json.status.incomplete, true, 'the webhook cannot list rules');
});
