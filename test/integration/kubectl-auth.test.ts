// Stock kubectl against RBAC (kubernetes brand): auth can-i (yes/no, --as, --list), auth whoami,
// create role / rolebinding / clusterrole, and an escalation attempt refused with the reference's text.
import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer } from '../lib/server.js';
import { kubectl, noKubectl } from '../lib/kubectl.js';

const ALICE = 'alice-token-kubectl-0123456789';

t.test('kubectl auth against RBAC', { skip: noKubectl }, async (t) => {
  // The first-start token file gets the users; the server appends its admin line to it.
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'capi-kauth-'));
  mkdirSync(path.join(dataDir, 'pki'), { recursive: true, mode: 0o700 });
  writeFileSync(path.join(dataDir, 'pki', 'tokens.csv'), `${ALICE},alice,alice-uid,"devs"\n`, { mode: 0o600 });
  const s = await startServer({ brand: 'kubernetes', dataDir, args: ['--authorization-mode=RBAC'] });
  t.teardown(async () => {
    await s.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // A kubeconfig for alice: the admin one with her token instead of the admin's.
  const adminCfg = readFileSync(path.join(dataDir, 'admin.kubeconfig'), 'utf8');
  const aliceCfg = path.join(dataDir, 'alice.kubeconfig');
  writeFileSync(aliceCfg, adminCfg.replace(/token: .*/, `token: ${ALICE}`));
  t.not(readFileSync(aliceCfg, 'utf8'), adminCfg, 'alice kubeconfig written');
  const admin = (...args: string[]) => kubectl(s, args);
  const alice = (...args: string[]) => kubectl(s, ['--kubeconfig', aliceCfg, ...args]);
  // `kubectl create rolebinding` sends its body as Protobuf.
  const binding = async (who: 'admin' | 'alice', ...args: string[]) => {
    const cfg = who === 'alice' ? ['--kubeconfig', aliceCfg] : [];
    return kubectl(s, [...cfg, 'create', 'rolebinding', ...args]);
  };

  t.equal((await admin('create', 'namespace', 'team')).code, 0);

  await t.test('create role, rolebinding and clusterrole', async (t) => {
    const r = await admin('create', 'role', 'pod-reader', '--verb=get,list,watch', '--resource=pods', '-n', 'team');
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout.trim(), 'role.rbac.authorization.k8s.io/pod-reader created');
    const b = await binding('admin', 'alice-pods', '--role=pod-reader', '--user=alice', '-n', 'team');
    t.equal(b.stdout.trim(), 'rolebinding.rbac.authorization.k8s.io/alice-pods created', b.stderr);
    const viaJson = await kubectl(s, ['create', '-f', '-'], { input: (await admin('create', 'rolebinding', 'as-json', '--role=pod-reader', '--user=bob', '-n', 'team', '--dry-run=client', '-o', 'json')).stdout });
    t.equal(viaJson.code, 0, 'the same binding as JSON');
    const crb = await admin('create', 'clusterrolebinding', 'bob-view', '--clusterrole=view', '--user=bob');
    t.equal(crb.stdout.trim(), 'clusterrolebinding.rbac.authorization.k8s.io/bob-view created', crb.stderr);
    const c = await admin('create', 'clusterrole', 'node-reader', '--verb=get,list', '--resource=nodes');
    t.equal(c.stdout.trim(), 'clusterrole.rbac.authorization.k8s.io/node-reader created', c.stderr);
    const m = await admin('create', 'role', 'rbac-manager', '--verb=create,get,list', '--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io', '-n', 'team');
    t.equal(m.code, 0, m.stderr);
    t.equal((await binding('admin', 'alice-manages', '--role=rbac-manager', '--user=alice', '-n', 'team')).code, 0);
    const y = await admin('get', 'role', 'pod-reader', '-n', 'team', '-o', 'json');
    t.same(JSON.parse(y.stdout).rules, [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] }]);
    const defaults = await admin('get', 'clusterroles', '-l', 'kubernetes.io/bootstrapping=rbac-defaults', '-o', 'name');
    for (const n of ['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user']) t.match(defaults.stdout, `clusterrole.rbac.authorization.k8s.io/${n}\n`);
  });

  await t.test('auth can-i', async (t) => {
    const yes = await admin('auth', 'can-i', 'delete', 'nodes');
    t.equal(yes.stdout.trim(), 'yes', 'admin');
    t.equal(yes.code, 0);
    const ay = await alice('auth', 'can-i', 'list', 'pods', '-n', 'team');
    t.equal(ay.stdout.trim(), 'yes', ay.stderr);
    const an = await alice('auth', 'can-i', 'delete', 'pods', '-n', 'team');
    t.equal(an.stdout.trim(), 'no');
    t.equal(an.code, 1, 'no → exit 1');
    t.equal((await alice('auth', 'can-i', 'list', 'pods', '-n', 'default')).stdout.trim(), 'no');
    t.equal((await admin('auth', 'can-i', 'list', 'pods', '-n', 'team', '--as', 'alice')).stdout.trim(), 'yes', '--as alice');
    t.equal((await admin('auth', 'can-i', 'list', 'pods', '-n', 'default', '--as', 'alice')).stdout.trim(), 'no', '--as alice elsewhere');
    t.equal((await admin('auth', 'can-i', 'get', '/api', '--as', 'alice')).stdout.trim(), 'yes', 'non-resource URL (impersonated users are in system:authenticated)');
    const anon = await admin('auth', 'can-i', 'get', '/healthz', '--as', 'system:anonymous');
    t.match(anon.stderr, /User "system:anonymous" cannot create resource "selfsubjectaccessreviews" in API group "authorization\.k8s\.io" at the cluster scope/, 'anonymous users may not even ask');
    const noPerm = await alice('auth', 'can-i', 'list', 'pods', '-n', 'team', '--as', 'bob');
    t.not(noPerm.code, 0, 'alice may not impersonate');
    t.match(noPerm.stderr, /users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope/);

    const list = await alice('auth', 'can-i', '--list', '-n', 'team');
    t.equal(list.code, 0, list.stderr);
    const lines = list.stdout.split('\n');
    t.match(lines[0], /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs/);
    t.ok(lines.some((l) => /^pods\s+\[\]\s+\[\]\s+\[get list watch\]/.test(l)), 'pod-reader rule listed');
    t.ok(lines.some((l) => /^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/.test(l)), 'basic-user rule listed');
    t.ok(lines.some((l) => /^\s+\[\/api\]\s+\[\]\s+\[get\]/.test(l)), 'discovery URL listed');
  });

  await t.test('auth whoami', async (t) => {
    const w = await alice('auth', 'whoami');
    t.equal(w.code, 0, w.stderr);
    t.match(w.stdout, /ATTRIBUTE\s+VALUE\nUsername\s+alice\nUID\s+alice-uid\nGroups\s+\[devs system:authenticated\]/);
    const j = await admin('auth', 'whoami', '-o', 'json');
    const o = JSON.parse(j.stdout);
    t.equal(o.kind, 'SelfSubjectReview');
    t.equal(o.apiVersion, 'authentication.k8s.io/v1');
    t.same(o.status.userInfo, { username: 'admin', uid: 'admin-uid', groups: ['system:masters', 'system:authenticated'] });
  });

  await t.test('escalation refused with the reference message', async (t) => {
    const ok = await alice('create', 'role', 'subset', '--verb=get', '--resource=pods', '-n', 'team');
    t.equal(ok.code, 0, `a role with rules alice holds: ${ok.stderr}`);
    const r = await alice('create', 'role', 'too-much', '--verb=get,delete', '--resource=pods,secrets', '-n', 'team');
    t.not(r.code, 0);
    t.equal(r.stderr.trim(), 'Error from server (Forbidden): roles.rbac.authorization.k8s.io "too-much" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
      + '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}');
    const b = await binding('alice', 'alice-admin', '--clusterrole=admin', '--user=alice', '-n', 'team');
    t.not(b.code, 0);
    t.match(b.stderr, /(?:Error from server \(Forbidden\): (?:error when creating "STDIN": )?|error: failed to create rolebinding: )rolebindings\.rbac\.authorization\.k8s\.io "alice-admin" is forbidden: user "alice" \(groups=\["devs" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:/);
    // With escalate and bind granted, both go through.
    t.equal((await admin('create', 'role', 'escalator', '--verb=escalate', '--resource=roles.rbac.authorization.k8s.io', '-n', 'team')).code, 0);
    t.equal((await admin('create', 'clusterrole', 'admin-binder', '--verb=bind', '--resource=clusterroles.rbac.authorization.k8s.io', '--resource-name=admin')).code, 0);
    t.equal((await binding('admin', 'alice-escalates', '--role=escalator', '--user=alice', '-n', 'team')).code, 0);
    t.equal((await binding('admin', 'alice-binds', '--clusterrole=admin-binder', '--user=alice', '-n', 'team')).code, 0);
    const r2 = await alice('create', 'role', 'too-much', '--verb=get,delete', '--resource=pods,secrets', '-n', 'team');
    t.equal(r2.code, 0, r2.stderr);
    const b2 = await binding('alice', 'alice-admin', '--clusterrole=admin', '--user=alice', '-n', 'team');
    t.equal(b2.code, 0, b2.stderr);
    t.equal((await alice('auth', 'can-i', 'delete', 'deployments.apps', '-n', 'team')).stdout.trim(), 'yes', 'now admin in team');
  });
});
