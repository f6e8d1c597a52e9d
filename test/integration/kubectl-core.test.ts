// Stock kubectl against the kubernetes brand: create, get (table, yaml, json), api-resources, delete.
import t from 'tap';
import { withServer } from '../lib/server.js';
import { kubectl, noKubectl, startKubectl } from '../lib/kubectl.js';
import { eventually as until } from '../lib/poll.js';

const manifest = `
apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  color: blue
  size: large
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: shop
type: Opaque
stringData:
  password: hunter2
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: { app: web }
spec:
  replicas: 2
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  selector: { app: web }
  ports:
  - port: 80
    targetPort: 80
`;

t.test('kubectl against the kubernetes brand', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });

  const created = await kubectl(s, ['create', '-f', '-'], { input: manifest });
  t.equal(created.code, 0, created.stderr);
  t.match(created.stdout, /namespace\/shop created/);
  t.match(created.stdout, /configmap\/settings created/);
  t.match(created.stdout, /secret\/creds created/);
  t.match(created.stdout, /deployment.apps\/web created/);
  t.match(created.stdout, /service\/web created/);

  const ns = await kubectl(s, ['get', 'namespaces']);
  t.equal(ns.code, 0, ns.stderr);
  t.match(ns.stdout, /^NAME\s+STATUS\s+AGE/m);
  t.match(ns.stdout, /^kube-system\s+Active/m);
  t.match(ns.stdout, /^shop\s+Active/m);

  const cms = await kubectl(s, ['get', 'cm', '-n', 'shop']);
  t.equal(cms.code, 0, cms.stderr);
  t.match(cms.stdout, /^NAME\s+DATA\s+AGE/m);
  t.match(cms.stdout, /^settings\s+2\s+/m);

  const deploy = await kubectl(s, ['get', 'deploy', '-n', 'shop']);
  t.equal(deploy.code, 0, deploy.stderr);
  t.match(deploy.stdout, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE/m);
  t.match(deploy.stdout, /^web\s+0\/2/m);

  const yaml = await kubectl(s, ['get', 'deployment', 'web', '-n', 'shop', '-o', 'yaml']);
  t.equal(yaml.code, 0, yaml.stderr);
  t.match(yaml.stdout, /kind: Deployment/);
  t.match(yaml.stdout, /revisionHistoryLimit: 10/);

  const json = await kubectl(s, ['get', 'secret', 'creds', '-n', 'shop', '-o', 'json']);
  t.equal(json.code, 0, json.stderr);
  const secret = JSON.parse(json.stdout);
  t.equal(Buffer.from(secret.data.password, 'base64').toString(), 'hunter2', 'stringData is folded into data');

  const all = await kubectl(s, ['get', 'all', '-n', 'shop']);
  t.equal(all.code, 0, all.stderr);
  t.match(all.stdout, /service\/web/);
  t.match(all.stdout, /deployment.apps\/web/);

  const res = await kubectl(s, ['api-resources']);
  t.equal(res.code, 0, res.stderr);
  t.match(res.stdout, /^pods\s+po\s+v1\s+true\s+Pod/m);
  t.match(res.stdout, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment/m);
  t.match(res.stdout, /^namespaces\s+ns\s+v1\s+false\s+Namespace/m);

  const strict = await kubectl(s, ['create', '-f', '-'], { input: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typo\n  namespace: shop\ndatta:\n  a: b\n' });
  t.not(strict.code, 0, 'default (strict) validation refuses an unknown field');
  t.match(strict.stderr, /unknown field "datta"/);

  // By name across all namespaces: the selector's name is no path name (a 404 before).
  const byName = await kubectl(s, ['get', 'cm', '-A', '--field-selector', 'metadata.name=settings', '-o', 'name']);
  t.equal(byName.code, 0, byName.stderr);
  t.equal(byName.stdout.trim(), 'configmap/settings');
  const byNameWatch = startKubectl(s, ['get', 'secrets', '-A', '--field-selector', 'metadata.name=creds', '--watch']);
  t.teardown(() => { byNameWatch.child.kill('SIGKILL'); });
  t.ok(await until(() => /^shop\s+creds\s+Opaque/m.test(byNameWatch.out.stdout), 60_000), `watch by name across all namespaces printed the row: ${byNameWatch.out.stderr}`);
  t.notOk(byNameWatch.out.exited, `still watching (${byNameWatch.out.stderr})`);
  byNameWatch.child.kill('SIGTERM');

  const explain = await kubectl(s, ['explain', 'pod.spec.containers']);
  t.equal(explain.code, 0, explain.stderr);
  t.match(explain.stdout, /FIELDS:/);
  t.match(explain.stdout, /image\s+<string>/);

  const del = await kubectl(s, ['delete', 'configmap', 'settings', '-n', 'shop']);
  t.equal(del.code, 0, del.stderr);
  t.match(del.stdout, /configmap "settings" deleted/);
  t.equal((await kubectl(s, ['get', 'cm', 'settings', '-n', 'shop'])).code, 1, 'gone');

  const delNs = await kubectl(s, ['delete', 'namespace', 'shop', '--timeout=60s']);
  t.equal(delNs.code, 0, delNs.stderr);
  t.match(delNs.stdout, /namespace "shop" deleted/);
  const after = await kubectl(s, ['get', 'namespace', 'shop']);
  t.equal(after.code, 1, 'the namespace is gone when kubectl returns');
  t.match(after.stderr, /NotFound|not found/);
  t.equal((await s.get('/apis/apps/v1/namespaces/shop/deployments/web')).status, 404, 'its contents are gone');
});
