// PodSecurity admission over HTTP and with kubectl: namespace labels enforce / warn / audit, the
// reference's messages, workload templates warned about, exemptions from the admission
// configuration, warnings when a namespace's enforce level is raised.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withServer } from '../lib/server.js';
import { kubectl, noKubectl } from '../lib/kubectl.js';

const ns = (name: string, labels: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
const privileged = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox', securityContext: { privileged: true } }] } });
const good = (name: string) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: { securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } }, containers: [{ name: 'c', image: 'busybox', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }] },
});
const RESTRICTED_PRIVILEGED = 'privileged (container "c" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

t.test('enforce, warn, templates, namespace changes', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  await s.request('POST', '/api/v1/namespaces', { body: ns('locked', { 'pod-security.kubernetes.io/enforce': 'restricted' }) });
  const r = await s.request('POST', '/api/v1/namespaces/locked/pods', { body: privileged('p') });
  t.equal(r.status, 403);
  t.equal(r.json.message, `pods "p" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED_PRIVILEGED}`);
  t.equal((await s.request('POST', '/api/v1/namespaces/locked/pods', { body: good('ok') })).status, 201, 'a compliant pod is admitted');

  await s.request('POST', '/api/v1/namespaces', { body: ns('base', { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.28', 'pod-security.kubernetes.io/warn': 'restricted' }) });
  const b = await s.request('POST', '/api/v1/namespaces/base/pods', { body: { ...privileged('h'), spec: { hostNetwork: true, containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80, hostPort: 80 }] }] } } });
  t.equal(b.status, 403);
  t.equal(b.json.message, 'pods "h" is forbidden: violates PodSecurity "baseline:v1.28": host namespaces (hostNetwork=true), hostPort (container "c" uses hostPort 80)');
  const w = await s.request('POST', '/api/v1/namespaces/base/pods', { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'plain' }, spec: { containers: [{ name: 'c', image: 'x' }] } } });
  t.equal(w.status, 201, 'baseline admits a plain pod');
  t.match(String(w.headers.warning), '299 - "would violate PodSecurity \\"restricted:latest\\": allowPrivilegeEscalation != false');

  // A Deployment whose pods would be refused is admitted with a warning.
  const d = await s.request('POST', '/apis/apps/v1/namespaces/locked/deployments', {
    body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: privileged('x').spec } } },
  });
  t.equal(d.status, 201, d.text);
  t.match(String(d.headers.warning), 'would violate PodSecurity \\"restricted:latest\\": privileged');

  // Raising a namespace's enforce level warns about the pods already there.
  await s.request('POST', '/api/v1/namespaces', { body: ns('open', {}) });
  await s.request('POST', '/api/v1/namespaces/open/pods', { body: privileged('old') });
  const up = await s.request('PATCH', '/api/v1/namespaces/open', { body: { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } } }, headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal(up.status, 200);
  t.match(String(up.headers.warning), 'existing pods in namespace \\"open\\" violate the new PodSecurity enforce level \\"baseline:latest\\"');
  t.match(String(up.headers.warning), 'old: privileged');
});

t.test('exemptions and defaults from the admission configuration', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-psa-'));
  const file = path.join(dir, 'admission.yaml');
  writeFileSync(file, [
    'apiVersion: apiserver.config.k8s.io/v1', 'kind: AdmissionConfiguration', 'plugins:', '- name: PodSecurity', '  configuration:',
    '    apiVersion: pod-security.admission.config.k8s.io/v1', '    kind: PodSecurityConfiguration',
    '    defaults: { enforce: baseline }', '    exemptions: { namespaces: [free], runtimeClasses: [trusted], usernames: [] }', '',
  ].join('\n'));
  const s = await withServer(t, { brand: 'kubernetes', args: ['--admission-control-config-file', file] });
  const r = await s.request('POST', '/api/v1/namespaces/default/pods', { body: privileged('p') });
  t.equal(r.status, 403, 'the default level is baseline');
  t.match(r.json.message, 'violates PodSecurity "baseline:latest": privileged');
  await s.request('POST', '/api/v1/namespaces', { body: ns('free', {}) });
  t.equal((await s.request('POST', '/api/v1/namespaces/free/pods', { body: privileged('p') })).status, 201, 'exempt namespace');
  const rc = privileged('q') as any;
  rc.spec.runtimeClassName = 'trusted';
  await s.request('POST', '/apis/node.k8s.io/v1/runtimeclasses', { body: { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'trusted' }, handler: 'runc' } });
  t.equal((await s.request('POST', '/api/v1/namespaces/default/pods', { body: rc })).status, 201, 'exempt runtime class');
});

t.test('kubectl: a privileged pod in a restricted namespace', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  t.equal((await kubectl(s, ['create', 'namespace', 'secure'])).code, 0);
  t.equal((await kubectl(s, ['label', 'namespace', 'secure', 'pod-security.kubernetes.io/enforce=restricted'])).code, 0);
  const r = await kubectl(s, ['apply', '-n', 'secure', '-f', '-'], { input: JSON.stringify(privileged('priv')) });
  t.not(r.code, 0);
  t.match(r.stderr, `pods "priv" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED_PRIVILEGED}`);
});
