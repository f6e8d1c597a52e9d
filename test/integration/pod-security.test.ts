// PodSecurity admission over HTTP and with kubectl: namespace labels enforce / warn / audit, the
// reference's messages, workload templates warned about, exemptions from the admission
// configuration, warnings when a namespace's enforce level is raised.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withServer } from '../lib/server.js';
import { kubectl, kubectlRelease, noKubectl } from '../lib/kubectl.js';

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

t.test('kubectl: a privileged pod in a restricted namespace, with every release', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  t.equal((await kubectl(s, ['create', 'namespace', 'secure'])).code, 0);
  t.equal((await kubectl(s, ['label', 'namespace', 'secure', 'pod-security.kubernetes.io/enforce=restricted'])).code, 0);
  const releases = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33'].map((v) => [v, kubectlRelease(v)] as const).filter(([, b]) => b);
  for (const [v, bin] of releases.length ? releases : [['default', undefined] as const]) {
    for (const verb of ['apply', 'create']) {
      const r = await kubectl(s, [verb, '-n', 'secure', '-f', '-'], { input: JSON.stringify(privileged('priv')), bin });
      t.not(r.code, 0, `${v} ${verb} refused`);
      t.match(r.stderr, `pods "priv" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED_PRIVILEGED}`, `${v} ${verb}: the reference's message`);
    }
  }
});

t.test('version labels pin the standards of a release', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const L = 'pod-security.kubernetes.io/';
  const make = async (name: string, labels: Record<string, string>) => t.equal((await s.request('POST', '/api/v1/namespaces', { body: ns(name, labels) })).status, 201);
  const pod = (name: string, spec: Record<string, unknown>, annotations?: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, ...(annotations ? { annotations } : {}) }, spec });
  const create = (nsName: string, body: unknown) => s.request('POST', `/api/v1/namespaces/${nsName}/pods`, { body });
  const refused = async (nsName: string, body: any, message: string, what: string) => {
    const r = await create(nsName, body);
    t.equal(r.status, 403, `${what}: ${r.text}`);
    t.equal(r.json.message, `pods "${body.metadata.name}" is forbidden: ${message}`, what);
  };
  const admitted = async (nsName: string, body: any, what: string) => t.equal((await create(nsName, body)).status, 201, what);
  const plain = { containers: [{ name: 'c', image: 'x' }] };

  // restricted before v1.19 has no seccomp check, before v1.22 no capabilities drop, before v1.23 no runAsUser.
  await make('r118', { [`${L}enforce`]: 'restricted', [`${L}enforce-version`]: 'v1.18' });
  await refused('r118', pod('a', plain), 'violates PodSecurity "restricted:v1.18": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)', 'v1.18: two checks');
  const nonRoot = { securityContext: { runAsNonRoot: true, runAsUser: 0 }, containers: [{ name: 'c', image: 'x', securityContext: { allowPrivilegeEscalation: false } }] };
  await admitted('r118', pod('b', nonRoot), 'v1.18 admits without seccomp, capabilities drop, or a non-zero runAsUser');
  // Before v1.22 the baseline capabilities check still applies at restricted.
  await refused('r118', pod('c', { ...nonRoot, containers: [{ name: 'c', image: 'x', securityContext: { allowPrivilegeEscalation: false, capabilities: { add: ['NET_RAW', 'CHOWN'] } } }] }), 'violates PodSecurity "restricted:v1.18": non-default capabilities (container "c" must not include "NET_RAW" in securityContext.capabilities.add)', 'v1.18: baseline capabilities');
  // The seccomp alpha annotations are what baseline checks before v1.19.
  await refused('r118', pod('d', nonRoot, { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined', 'container.seccomp.security.alpha.kubernetes.io/c': 'runtime/default' }), 'violates PodSecurity "restricted:v1.18": seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")', 'v1.18: seccomp annotation');

  await make('r122', { [`${L}enforce`]: 'restricted', [`${L}enforce-version`]: 'v1.22' });
  const seccomp = { ...nonRoot, securityContext: { ...nonRoot.securityContext, seccompProfile: { type: 'RuntimeDefault' } }, containers: [{ name: 'c', image: 'x', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }] };
  await admitted('r122', pod('e', seccomp), 'v1.22: runAsUser=0 not checked yet');
  await make('r123', { [`${L}enforce`]: 'restricted', [`${L}enforce-version`]: 'v1.23' });
  await refused('r123', pod('e', { ...seccomp, containers: [{ ...seccomp.containers[0], securityContext: { ...seccomp.containers[0].securityContext, runAsUser: 0 } }] }), 'violates PodSecurity "restricted:v1.23": runAsUser=0 (pod and container "c" must not set runAsUser=0)', 'v1.23: runAsUser');

  // Windows pods skip the Linux-only checks from v1.25.
  const windows = { os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [{ name: 'c', image: 'x' }] };
  await make('r124', { [`${L}enforce`]: 'restricted', [`${L}enforce-version`]: 'v1.24' });
  await refused('r124', pod('w', windows), 'violates PodSecurity "restricted:v1.24": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")', 'v1.24: windows checked');
  await make('r125', { [`${L}enforce`]: 'restricted', [`${L}enforce-version`]: 'v1.25' });
  await admitted('r125', pod('w', windows), 'v1.25: windows pod let through');

  // sysctls: ip_local_reserved_ports from v1.27; the keepalive ones are a later release's (not in latest).
  const sysctl = (name: string) => ({ securityContext: { sysctls: [{ name, value: '1' }] }, containers: [{ name: 'c', image: 'x' }] });
  await make('b126', { [`${L}enforce`]: 'baseline', [`${L}enforce-version`]: 'v1.26' });
  await refused('b126', pod('s', sysctl('net.ipv4.ip_local_reserved_ports')), 'violates PodSecurity "baseline:v1.26": forbidden sysctls (net.ipv4.ip_local_reserved_ports)', 'v1.26 sysctl');
  await make('b127', { [`${L}enforce`]: 'baseline', [`${L}enforce-version`]: 'v1.27' });
  await admitted('b127', pod('s', sysctl('net.ipv4.ip_local_reserved_ports')), 'v1.27 sysctl');
  await make('blatest', { [`${L}enforce`]: 'baseline' });
  await refused('blatest', pod('s', sysctl('net.ipv4.tcp_keepalive_time')), 'violates PodSecurity "baseline:latest": forbidden sysctls (net.ipv4.tcp_keepalive_time)', 'latest is v1.28');
  // baseline from v1.19: the field, any value but RuntimeDefault/Localhost.
  await refused('blatest', pod('u', { securityContext: { seccompProfile: { type: 'Unconfined' } }, containers: [{ name: 'c', image: 'x', securityContext: { seccompProfile: { type: 'Unconfined' } } }] }), 'violates PodSecurity "baseline:latest": seccompProfile (pod and container "c" must not set securityContext.seccompProfile.type to "Unconfined")', 'baseline seccomp field');

  // Labels that are not a level or a version are refused on create, and on an update that changes them.
  const bad = await s.request('POST', '/api/v1/namespaces', { body: ns('bad', { [`${L}enforce`]: 'strict', [`${L}warn-version`]: 'one-point-five' }) });
  t.equal(bad.status, 422, bad.text);
  t.equal(bad.json.message, `Namespace "bad" is invalid: [metadata.labels[${L}enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted, metadata.labels[${L}warn-version]: Invalid value: "one-point-five": must be "latest" or "v1.x"]`);
  t.same(bad.json.details.causes.map((c: { field: string }) => c.field), [`metadata.labels[${L}enforce]`, `metadata.labels[${L}warn-version]`]);
  const upd = await s.request('PATCH', '/api/v1/namespaces/r118', { body: { metadata: { labels: { [`${L}enforce-version`]: 'v1' } } }, headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal(upd.status, 422, upd.text);
  t.equal(upd.json.message, `Namespace "r118" is invalid: metadata.labels[${L}enforce-version]: Invalid value: "v1": must be "latest" or "v1.x"`);
  // A future version is a version: evaluated at latest, shown as written.
  await make('future', { [`${L}enforce`]: 'restricted', [`${L}enforce-version`]: 'v1.99' });
  t.match((await create('future', pod('x', plain))).json.message, 'violates PodSecurity "restricted:v1.99": allowPrivilegeEscalation', 'future version');
  // warn and audit honour their own versions.
  await make('warn122', { [`${L}warn`]: 'restricted', [`${L}warn-version`]: 'v1.22' });
  const w = await create('warn122', pod('y', seccomp));
  t.equal(w.status, 201);
  t.equal(w.headers.warning, undefined, 'nothing to warn about at v1.22');
  const w2 = await create('warn122', pod('z', plain));
  t.match(String(w2.headers.warning), 'would violate PodSecurity \\"restricted:v1.22\\"');
});
