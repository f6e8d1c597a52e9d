// Stock kubectl's write commands against the kubernetes brand, all with kubectl's default (strict)
// validation: client-side apply, server-side apply by two field managers (conflict, then
// --force-conflicts), the move from client-side to server-side apply, label, annotate, patch of
// every type, scale, explain and diff.
import t from 'tap';
import { withServer } from '../lib/server.js';
import { kubectl, noKubectl } from '../lib/kubectl.js';

const configMap = (data: Record<string, string>, name = 'settings') =>
  ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', `  name: ${name}`, '  namespace: default', 'data:', ...Object.entries(data).map(([k, v]) => `  ${k}: ${v}`), ''].join('\n');

const deployment = (image: string, replicas = 1) => `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: ${replicas}
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
      - name: nginx
        image: ${image}
        ports:
        - containerPort: 80
`;

t.test('kubectl apply, patch, label, annotate, scale, explain and diff', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const getJson = async (args: string[]) => {
    const r = await kubectl(s, [...args, '-o', 'json', '--show-managed-fields']);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  };

  await t.test('apply -f (client-side) twice with a change', async (t) => {
    const first = await kubectl(s, ['apply', '-f', '-'], { input: `${configMap({ color: 'blue', size: 'large' })}---${deployment('nginx:1.25')}` });
    t.equal(first.code, 0, first.stderr);
    t.match(first.stdout, /configmap\/settings created/);
    t.match(first.stdout, /deployment.apps\/web created/);
    const cm = await getJson(['get', 'configmap', 'settings']);
    t.ok(cm.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'], 'the last-applied annotation is stored');

    const second = await kubectl(s, ['apply', '-f', '-'], { input: `${configMap({ color: 'green' })}---${deployment('nginx:1.25')}` });
    t.equal(second.code, 0, second.stderr);
    t.match(second.stdout, /configmap\/settings configured/);
    t.match(second.stdout, /deployment.apps\/web unchanged/);
    const after = await getJson(['get', 'configmap', 'settings']);
    t.same(after.data, { color: 'green' }, 'changed key updated, dropped key removed');
    const last = JSON.parse(after.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
    t.same(last.data, { color: 'green' }, 'the annotation follows');
  });

  await t.test('apply -f with an unknown field is refused by the default strict validation', async (t) => {
    const bad = await kubectl(s, ['apply', '-f', '-'], { input: `${configMap({ color: 'green' })}datta:\n  x: y\n` });
    t.not(bad.code, 0, `an existing object patched with an unknown field: ${bad.stdout}`);
    t.match(bad.stderr, /unknown field "datta"/);
    const cm = await getJson(['get', 'configmap', 'settings']);
    t.notOk('datta' in cm, 'the unknown field is not stored');
  });

  await t.test('apply --server-side by two field managers: conflict, then --force-conflicts', async (t) => {
    const a = await kubectl(s, ['apply', '--server-side', '--field-manager=a', '-f', '-'], { input: configMap({ owner: 'a' }, 'shared') });
    t.equal(a.code, 0, a.stderr);
    t.match(a.stdout, /configmap\/shared serverside-applied/);
    const b = await kubectl(s, ['apply', '--server-side', '--field-manager=b', '-f', '-'], { input: configMap({ owner: 'b' }, 'shared') });
    t.not(b.code, 0, 'a conflicting apply fails');
    t.match(b.stderr, /Apply failed with 1 conflict: conflict with "a": \.data\.owner/);
    t.match(b.stderr, /--force-conflicts/, 'kubectl explains how to resolve it');
    t.equal((await getJson(['get', 'configmap', 'shared'])).data.owner, 'a', 'nothing changed');
    const forced = await kubectl(s, ['apply', '--server-side', '--field-manager=b', '--force-conflicts', '-f', '-'], { input: configMap({ owner: 'b' }, 'shared') });
    t.equal(forced.code, 0, forced.stderr);
    const cm = await getJson(['get', 'configmap', 'shared']);
    t.equal(cm.data.owner, 'b');
    t.same(cm.metadata.managedFields.map((e: { manager: string }) => e.manager), ['b'], 'b took the field; a owned nothing else and is gone');
    const shared = await kubectl(s, ['apply', '--server-side', '--field-manager=a', '-f', '-'], { input: configMap({ owner: 'b' }, 'shared') });
    t.equal(shared.code, 0, `applying the live value shares ownership: ${shared.stderr}`);
  });

  await t.test('client-side apply, then apply --server-side with the default manager: no conflict', async (t) => {
    const csa = await kubectl(s, ['apply', '-f', '-'], { input: configMap({ level: 'one', mode: 'x' }, 'migrate') });
    t.equal(csa.code, 0, csa.stderr);
    const ssa = await kubectl(s, ['apply', '--server-side', '-f', '-'], { input: configMap({ level: 'two', mode: 'x' }, 'migrate') });
    t.equal(ssa.code, 0, ssa.stderr);
    const cm = await getJson(['get', 'configmap', 'migrate']);
    t.equal(cm.data.level, 'two');
    t.ok(cm.metadata.managedFields.some((e: { manager: string; operation: string }) => e.manager === 'kubectl' && e.operation === 'Apply'), 'kubectl is now an applier');
    const back = await kubectl(s, ['apply', '-f', '-'], { input: configMap({ level: 'three' }, 'migrate') });
    t.equal(back.code, 0, `back to client-side apply: ${back.stderr}`);
    t.same((await getJson(['get', 'configmap', 'migrate'])).data, { level: 'three' }, 'the annotation was kept current, so mode is removed');
  });

  await t.test('label and annotate', async (t) => {
    const l = await kubectl(s, ['label', 'configmap', 'settings', 'tier=web']);
    t.equal(l.code, 0, l.stderr);
    t.match(l.stdout, /configmap\/settings labeled/);
    const a = await kubectl(s, ['annotate', 'configmap', 'settings', 'note=hello world']);
    t.equal(a.code, 0, a.stderr);
    t.match(a.stdout, /configmap\/settings annotated/);
    const cm = await getJson(['get', 'configmap', 'settings']);
    t.equal(cm.metadata.labels.tier, 'web');
    t.equal(cm.metadata.annotations.note, 'hello world');
    const over = await kubectl(s, ['label', 'configmap', 'settings', 'tier=db']);
    t.not(over.code, 0, 'changing a label needs --overwrite');
    const ok = await kubectl(s, ['label', 'configmap', 'settings', 'tier=db', '--overwrite']);
    t.equal(ok.code, 0, ok.stderr);
    const rm = await kubectl(s, ['label', 'configmap', 'settings', 'tier-']);
    t.equal(rm.code, 0, rm.stderr);
    t.notOk((await getJson(['get', 'configmap', 'settings'])).metadata.labels?.tier, 'label removed');
  });

  await t.test('patch --type=merge, json and strategic', async (t) => {
    const m = await kubectl(s, ['patch', 'configmap', 'settings', '--type=merge', '-p', '{"data":{"merged":"1"}}']);
    t.equal(m.code, 0, m.stderr);
    t.match(m.stdout, /configmap\/settings patched/);
    const j = await kubectl(s, ['patch', 'configmap', 'settings', '--type=json', '-p', '[{"op":"add","path":"/data/json","value":"2"},{"op":"remove","path":"/data/merged"}]']);
    t.equal(j.code, 0, j.stderr);
    const cm = await getJson(['get', 'configmap', 'settings']);
    t.equal(cm.data.json, '2');
    t.notOk(cm.data.merged);
    const failed = await kubectl(s, ['patch', 'configmap', 'settings', '--type=json', '-p', '[{"op":"test","path":"/data/json","value":"nope"}]']);
    t.not(failed.code, 0, 'a failed test operation fails the command');
    const sm = await kubectl(s, ['patch', 'deployment', 'web', '--type=strategic', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.36"}]}}}}']);
    t.equal(sm.code, 0, sm.stderr);
    const d = await getJson(['get', 'deployment', 'web']);
    t.same(d.spec.template.spec.containers.map((c: { name: string }) => c.name).sort(), ['nginx', 'sidecar'], 'containers merged by name');
    const noop = await kubectl(s, ['patch', 'deployment', 'web', '--type=strategic', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.36"}]}}}}']);
    t.equal(noop.code, 0, noop.stderr);
    t.match(noop.stdout, /no change/);
  });

  await t.test('scale deployment --replicas=3', async (t) => {
    const r = await kubectl(s, ['scale', 'deployment', 'web', '--replicas=3']);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /deployment.apps\/web scaled/);
    t.equal((await getJson(['get', 'deployment', 'web'])).spec.replicas, 3);
    const guarded = await kubectl(s, ['scale', 'deployment', 'web', '--current-replicas=2', '--replicas=4']);
    t.not(guarded.code, 0, 'the --current-replicas precondition is checked');
    t.equal((await getJson(['get', 'deployment', 'web'])).spec.replicas, 3);
  });

  await t.test('explain pod.spec.containers', async (t) => {
    const r = await kubectl(s, ['explain', 'pod.spec.containers']);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /KIND:\s+Pod/);
    t.match(r.stdout, /FIELD:\s+containers\s+<\[\]Container>/);
    for (const f of ['image', 'ports', 'env', 'volumeMounts']) t.match(r.stdout, new RegExp(`^\\s+${f}\\s+<`, 'm'), f);
  });

  await t.test('diff -f: exit 1 when there is a difference, 0 when none', async (t) => {
    const current = await getJson(['get', 'configmap', 'migrate']);
    const same = configMap(current.data, 'migrate');
    const none = await kubectl(s, ['diff', '-f', '-'], { input: same });
    t.equal(none.code, 0, `no difference: ${none.stdout}${none.stderr}`);
    t.equal(none.stdout, '');
    const diff = await kubectl(s, ['diff', '-f', '-'], { input: configMap({ level: 'four' }, 'migrate') });
    t.equal(diff.code, 1, `a difference: ${diff.stderr}`);
    t.match(diff.stdout, /^-\s+level: three$/m);
    t.match(diff.stdout, /^\+\s+level: four$/m);
    t.equal((await getJson(['get', 'configmap', 'migrate'])).data.level, 'three', 'diff changes nothing');
    const fresh = await kubectl(s, ['diff', '-f', '-'], { input: configMap({ a: 'b' }, 'not-yet') });
    t.equal(fresh.code, 1, 'an object that does not exist yet is a difference');
    t.match(fresh.stdout, /^\+\s+a: b$/m);
    t.equal((await kubectl(s, ['get', 'configmap', 'not-yet'])).code, 1, 'and is not created');
    const ssaDiff = await kubectl(s, ['diff', '--server-side', '--field-manager=kubectl', '-f', '-'], { input: configMap({ level: 'five' }, 'migrate') });
    t.equal(ssaDiff.code, 1, `server-side diff: ${ssaDiff.stderr}`);
    t.match(ssaDiff.stdout, /^\+\s+level: five$/m);
  });
});
