// Stock kubectl releases 1.27 to 1.33, each in its default form, against the
// kubernetes brand. 1.32 and later send Protobuf bodies for built-in types (create, token, auth
// can-i, auth whoami, DeleteOptions); every release must create, read, watch, apply and delete.
// Each release works in its own namespace of one server, so the whole file stays within a minute.
import t from 'tap';
import { withServer } from '../lib/server.js';
import { kubectl, kubectlRelease, startKubectl } from '../lib/kubectl.js';
import { eventually as until } from '../lib/poll.js';

const RELEASES = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33'];

const missing = RELEASES.filter((v) => !kubectlRelease(v));
t.test('stock kubectl releases create, read, watch, apply and delete', { skip: missing.length ? `kubectl ${missing.join(', ')} not installed under /usr/lib/google-cloud-sdk/bin (.ci/run installs them)` : false }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  for (const v of RELEASES) {
    const bin = kubectlRelease(v)!;
    const ns = `v${v.replace('.', '-')}`;
    const k = (...args: string[]) => kubectl(s, args, { bin });
    await t.test(`kubectl ${v}`, async (t) => {
      const ok = async (args: string[], out?: RegExp) => {
        const r = await k(...args);
        t.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
        if (out) t.match(r.stdout, out, args.join(' '));
        return r;
      };
      await ok(['create', 'ns', ns], /created/);
      await ok(['create', 'deployment', 'web', '--image=nginx', '-n', ns], /deployment.apps\/web created/);
      await ok(['create', 'configmap', 'cfg', '--from-literal=color=blue', '-n', ns], /configmap\/cfg created/);
      await ok(['create', 'secret', 'generic', 'creds', '--from-literal=password=hunter2', '-n', ns], /secret\/creds created/);
      await ok(['create', 'role', 'reader', '--verb=get,list', '--resource=pods', '-n', ns], /role.rbac.authorization.k8s.io\/reader created/);
      await ok(['create', 'job', 'once', '--image=busybox', '-n', ns], /job.batch\/once created/);
      await ok(['create', 'serviceaccount', 'robot', '-n', ns]);
      // Before 1.32 the TokenRequest goes as JSON with "expirationSeconds": null, which means unset.
      const token = await k('create', 'token', 'robot', '-n', ns);
      t.equal(token.code, 0, `create token: ${token.stderr}`);
      t.match(token.stdout.trim(), /^[\w-]+\.[\w-]+\.[\w-]+$/, 'a JWT');
      await ok(['auth', 'can-i', 'create', 'pods', '-n', ns], /^yes/);
      await ok(['auth', 'whoami'], /admin/);

      const yaml = await ok(['get', 'deployment', 'web', '-n', ns, '-o', 'yaml']);
      t.match(yaml.stdout, /replicas: 1/);
      t.match(yaml.stdout, /image: nginx/);
      t.match(yaml.stdout, /imagePullPolicy: Always/, 'defaults applied to a Protobuf body');
      const secret = await ok(['get', 'secret', 'creds', '-n', ns, '-o', 'jsonpath={.data.password}']);
      t.equal(Buffer.from(secret.stdout, 'base64').toString(), 'hunter2', 'bytes survive the Protobuf body');

      const watch = startKubectl(s, ['get', 'configmaps', '-n', ns, '-w'], bin);
      t.ok(await until(() => /^cfg\s/m.test(watch.out.stdout), 60_000), `get -w lists first:\n${watch.out.stdout}${watch.out.stderr}`);
      await ok(['create', 'configmap', 'later', '-n', ns]);
      t.ok(await until(() => /^later\s/m.test(watch.out.stdout), 60_000), `get -w sees a new object:\n${watch.out.stdout}${watch.out.stderr}`);
      watch.child.kill();
      await watch.exit;

      const applied = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: ${ns}\ndata:\n  k: v\n`;
      const ap = await kubectl(s, ['apply', '--server-side', '-f', '-'], { bin, input: applied });
      t.equal(ap.code, 0, ap.stderr);
      t.match(ap.stdout, /configmap\/applied serverside-applied/);
      const again = await kubectl(s, ['apply', '--server-side', '-f', '-'], { bin, input: applied.replace('k: v', 'k: w') });
      t.equal(again.code, 0, again.stderr);
      t.equal((await k('get', 'cm', 'applied', '-n', ns, '-o', 'jsonpath={.data.k}')).stdout, 'w');

      await ok(['delete', 'configmap', 'cfg', '-n', ns], /deleted/);
      await ok(['delete', 'deployment', 'web', '-n', ns], /deleted/);
      const gone = await k('get', 'configmap', 'cfg', '-n', ns);
      t.not(gone.code, 0);
      t.match(gone.stderr, /NotFound|not found/);
    });
  }
});
