// Stock kubectl against the kubernetes brand with admission webhooks: the configurations are applied
// with kubectl, a pod is mutated by a JSON patch, and a denied pod shows the webhook's message in
// kubectl's error output.
import t from 'tap';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { withServer } from '../lib/server.js';
import { kubectl, noKubectl } from '../lib/kubectl.js';
import { generateCA, signCert } from '../../kernel/ops/pki.js';

t.test('admission webhooks through kubectl', { skip: noKubectl }, async (t) => {
  const ca = await generateCA({ CN: 'kubectl-webhook-ca' });
  const serving = await signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: 'webhook' }, ips: ['127.0.0.1'], usages: ['serverAuth'], days: 1 });
  const seen: string[] = [];
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const obj = review.request.object;
      seen.push(`${req.url?.split('?')[0]} ${review.apiVersion} ${obj?.metadata?.name}`);
      let response: Record<string, unknown> = { uid: review.request.uid, allowed: true };
      if (req.url?.startsWith('/mutate')) {
        const patch = obj.metadata.labels
          ? [{ op: 'add', path: '/metadata/labels/injected-by', value: 'webhook' }]
          : [{ op: 'add', path: '/metadata/labels', value: { 'injected-by': 'webhook' } }];
        response = { ...response, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') };
      } else if (obj?.spec?.containers?.some((c: { image: string }) => c.image.includes('latest'))) {
        response = { uid: review.request.uid, allowed: false, status: { code: 403, message: 'images must be pinned: the latest tag is not allowed' } };
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const caBundle = Buffer.from(ca.certPem).toString('base64');

  const s = await withServer(t, { brand: 'kubernetes' });
  const rules = `
    rules:
    - operations: ["CREATE"]
      apiGroups: [""]
      apiVersions: ["v1"]
      resources: ["pods"]
    namespaceSelector:
      matchLabels: { webhooks: enabled }`;
  const manifest = `
apiVersion: v1
kind: Namespace
metadata:
  name: guarded
  labels: { webhooks: enabled }
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: inject-label
webhooks:
  - name: inject.label.example.com
    clientConfig:
      url: ${url}/mutate
      caBundle: ${caBundle}
    sideEffects: None
    admissionReviewVersions: ["v1"]${rules}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: pinned-images
webhooks:
  - name: pinned.images.example.com
    clientConfig:
      url: ${url}/validate
      caBundle: ${caBundle}
    sideEffects: None
    admissionReviewVersions: ["v1", "v1beta1"]${rules}
`;
  const applied = await kubectl(s, ['apply', '-f', '-'], { input: manifest });
  t.equal(applied.code, 0, 'applied', { stderr: applied.stderr });
  t.match(applied.stdout, 'mutatingwebhookconfiguration.admissionregistration.k8s.io/inject-label created');
  t.match(applied.stdout, 'validatingwebhookconfiguration.admissionregistration.k8s.io/pinned-images created');

  const got = await kubectl(s, ['get', 'mutatingwebhookconfigurations', 'inject-label', '-o', 'jsonpath={.webhooks[0].failurePolicy} {.webhooks[0].matchPolicy} {.webhooks[0].timeoutSeconds}']);
  t.equal(got.stdout, 'Fail Equivalent 10', 'v1 defaults');

  const ok = await kubectl(s, ['run', 'pinned', '-n', 'guarded', '--image=nginx:1.25']);
  t.equal(ok.code, 0, 'the pinned pod is created', { stderr: ok.stderr });
  const labels = await kubectl(s, ['get', 'pod', 'pinned', '-n', 'guarded', '-o', 'jsonpath={.metadata.labels.injected-by}']);
  t.equal(labels.stdout, 'webhook', 'the mutating webhook added its label');

  const denied = await kubectl(s, ['run', 'floating', '-n', 'guarded', '--image=nginx:latest']);
  t.not(denied.code, 0, 'the unpinned pod is refused');
  t.match(denied.stderr, 'admission webhook "pinned.images.example.com" denied the request: images must be pinned: the latest tag is not allowed');
  const gone = await kubectl(s, ['get', 'pod', 'floating', '-n', 'guarded']);
  t.not(gone.code, 0, 'nothing was stored');

  const outside = await kubectl(s, ['run', 'free', '-n', 'default', '--image=nginx:latest']);
  t.equal(outside.code, 0, 'namespaces without the label are not guarded', { stderr: outside.stderr });
  t.ok(seen.some((l) => l.startsWith('/mutate admission.k8s.io/v1 pinned')), 'reviews in the kubernetes brand');

  const del = await kubectl(s, ['delete', 'validatingwebhookconfiguration', 'pinned-images']);
  t.equal(del.code, 0, { stderr: del.stderr });
  const after = await kubectl(s, ['run', 'floating', '-n', 'guarded', '--image=nginx:latest']);
  t.equal(after.code, 0, 'deleting the configuration lifts the check at once', { stderr: after.stderr });
});
