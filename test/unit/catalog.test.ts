import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { brandGroup, getBrand } from '../../kernel/contracts/brand.js';
import { LATER_RELEASES, LATER_SUBRESOURCES } from '../../plugins/types/builtin/catalog.js';
import { CONTRACT_VERSION, type KObject, type TypeDef } from '../../kernel/contracts/index.js';
import plugin, { builtinTypes } from '../../plugins/types/builtin/index.js';
import { imagePullPolicy, qosClass } from '../../plugins/types/builtin/defaults.js';
import { age, humanDuration, podSummary, selectorString } from '../../plugins/types/builtin/columns.js';

const cluster = getBrand('cluster');
const kube = getBrand('kubernetes');

function find(types: TypeDef[], group: string, resource: string): TypeDef {
  const found = types.find((x) => x.group === group && x.resource === resource);
  if (!found) throw new Error(`missing ${resource}.${group}`);
  return found;
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

// [group with the placeholder domain, resource] of every type the catalog must serve.
const REQUIRED: [string, string][] = [
  ['', 'namespaces'], ['', 'pods'], ['', 'services'], ['', 'configmaps'], ['', 'secrets'], ['', 'serviceaccounts'], ['', 'nodes'],
  ['', 'events'], ['', 'endpoints'], ['', 'persistentvolumes'], ['', 'persistentvolumeclaims'], ['', 'limitranges'], ['', 'resourcequotas'],
  ['apps', 'deployments'], ['apps', 'replicasets'], ['apps', 'statefulsets'], ['apps', 'daemonsets'], ['apps', 'controllerrevisions'],
  ['batch', 'jobs'], ['batch', 'cronjobs'], ['coordination.cluster.io', 'leases'], ['networking.cluster.io', 'ingresses'],
  ['networking.cluster.io', 'ingressclasses'], ['networking.cluster.io', 'networkpolicies'], ['policy', 'poddisruptionbudgets'],
  ['scheduling.cluster.io', 'priorityclasses'], ['storage.cluster.io', 'storageclasses'], ['discovery.cluster.io', 'endpointslices'],
  ['node.cluster.io', 'runtimeclasses'], ['events.cluster.io', 'events'],
];

t.test('plugin module shape', async (t) => {
  t.equal(plugin.kind, 'types');
  t.equal(plugin.contract, CONTRACT_VERSION);
  t.equal(plugin.name, 'builtin');
  const inst = await plugin.create({}, {} as never);
  t.ok(inst.types(cluster).length >= REQUIRED.length);
});

t.test('required types under both brands', async (t) => {
  for (const brand of [cluster, kube]) {
    const types = builtinTypes(brand);
    for (const [g, r] of REQUIRED) {
      const group = g.replace(/cluster\.io$/, brand.domain);
      t.ok(types.some((x) => x.group === group && x.resource === r && x.version === 'v1'), `${brand.name}: ${r}.${group}`);
    }
  }
  t.ok(find(builtinTypes(kube), 'networking.k8s.io', 'ingresses'));
  t.ok(find(builtinTypes(cluster), 'networking.cluster.io', 'ingresses'));
  t.notOk(builtinTypes(kube).some((x) => x.group.endsWith('cluster.io')), 'no placeholder domain left in the kubernetes brand');
});

t.test('resources are unique per group/version; short names are unique', async (t) => {
  const types = builtinTypes(cluster);
  const keys = types.map((x) => `${x.group}/${x.version}/${x.resource}`);
  t.equal(new Set(keys).size, keys.length);
  // "ev" is shared by the two event types, as in the reference; every other short name names one
  // resource (served in one or more versions).
  const oneVersion = types.filter((x, i) => types.findIndex((y) => y.group === x.group && y.resource === x.resource) === i);
  const shorts = oneVersion.flatMap((x) => (x.shortNames ?? []).filter((s) => s !== 'ev'));
  t.equal(new Set(shorts).size, shorts.length);
  t.same(types.filter((x) => x.shortNames?.includes('ev')).map((x) => x.group), ['', 'events.cluster.io']);
});

t.test('short names, categories, scope, singular names', async (t) => {
  const types = builtinTypes(kube);
  const expectShort: [string, string, string[]][] = [
    ['', 'pods', ['po']], ['', 'services', ['svc']], ['', 'configmaps', ['cm']], ['', 'namespaces', ['ns']], ['', 'nodes', ['no']],
    ['', 'events', ['ev']], ['', 'endpoints', ['ep']], ['', 'persistentvolumes', ['pv']], ['', 'persistentvolumeclaims', ['pvc']],
    ['', 'limitranges', ['limits']], ['', 'resourcequotas', ['quota']], ['', 'serviceaccounts', ['sa']], ['', 'replicationcontrollers', ['rc']],
    ['apps', 'deployments', ['deploy']], ['apps', 'replicasets', ['rs']], ['apps', 'statefulsets', ['sts']], ['apps', 'daemonsets', ['ds']],
    ['batch', 'cronjobs', ['cj']], ['networking.k8s.io', 'ingresses', ['ing']], ['networking.k8s.io', 'networkpolicies', ['netpol']],
    ['policy', 'poddisruptionbudgets', ['pdb']], ['scheduling.k8s.io', 'priorityclasses', ['pc']], ['storage.k8s.io', 'storageclasses', ['sc']],
    ['events.k8s.io', 'events', ['ev']],
  ];
  for (const [g, r, s] of expectShort) t.same(find(types, g, r).shortNames, s, `${r} short names`);
  t.notOk(find(types, '', 'secrets').shortNames, 'secrets have no short name');
  t.notOk(find(types, 'batch', 'jobs').shortNames, 'jobs have no short name');

  const all = [...new Set(types.filter((x) => x.categories?.includes('all')).map((x) => x.resource))].sort();
  t.same(all, ['cronjobs', 'daemonsets', 'deployments', 'horizontalpodautoscalers', 'jobs', 'pods', 'replicasets', 'replicationcontrollers', 'services', 'statefulsets']);
  t.same(find(types, 'autoscaling', 'horizontalpodautoscalers').shortNames, ['hpa']);

  t.equal(find(types, '', 'namespaces').namespaced, false);
  t.equal(find(types, '', 'nodes').namespaced, false);
  t.equal(find(types, 'storage.k8s.io', 'storageclasses').namespaced, false);
  t.equal(find(types, 'apps', 'deployments').namespaced, true);
  t.equal(find(types, '', 'endpoints').singular, 'endpoints');
  t.equal(find(types, 'networking.k8s.io', 'networkpolicies').singular, 'networkpolicy');
  t.same(find(types, '', 'namespaces').subresources, ['status', 'finalize']);
  t.same(find(types, 'apps', 'deployments').subresources, ['status', 'scale']);
  t.equal(find(types, '', 'namespaces').nameRule, 'label');
  t.equal(find(types, '', 'services').nameRule, 'label');
  t.equal(find(types, '', 'pods').nameRule, 'subdomain');
  t.equal(find(types, '', 'pods').statusField, 'status');
  t.notOk(find(types, '', 'configmaps').statusField);
  t.equal(find(types, 'apps', 'deployments').hasSpec, true);
});

// ---------------------------------------------------------------- defaulting

const types = builtinTypes(cluster);
const podType = find(types, '', 'pods');
const deployType = find(types, 'apps', 'deployments');

function defaulted(type: TypeDef, obj: KObject, brand = cluster): KObject {
  const o = clone(obj);
  type.defaults?.(o, brand);
  return o;
}

const basicPod = (): KObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' },
  spec: { containers: [{ name: 'web', image: 'nginx', ports: [{ containerPort: 80 }] }] },
});

t.test('image pull policy rules', async (t) => {
  t.equal(imagePullPolicy('nginx'), 'Always');
  t.equal(imagePullPolicy('nginx:latest'), 'Always');
  t.equal(imagePullPolicy('nginx:1.25'), 'IfNotPresent');
  t.equal(imagePullPolicy('nginx@sha256:' + 'a'.repeat(64)), 'IfNotPresent');
  t.equal(imagePullPolicy('nginx:latest@sha256:' + 'a'.repeat(64)), 'Always');
  t.equal(imagePullPolicy('localhost:5000/team/app'), 'Always', 'a registry port is not a tag');
  t.equal(imagePullPolicy('localhost:5000/team/app:v2'), 'IfNotPresent');
  t.equal(imagePullPolicy(''), 'IfNotPresent');
});

t.test('pod defaults', async (t) => {
  const p = defaulted(podType, basicPod()) as any;
  t.equal(p.spec.restartPolicy, 'Always');
  t.equal(p.spec.dnsPolicy, 'ClusterFirst');
  t.equal(p.spec.schedulerName, 'default-scheduler');
  t.equal(p.spec.terminationGracePeriodSeconds, 30);
  t.same(p.spec.securityContext, {});
  t.equal(p.spec.enableServiceLinks, true);
  const c = p.spec.containers[0];
  t.equal(c.imagePullPolicy, 'Always');
  t.equal(c.terminationMessagePath, '/dev/termination-log');
  t.equal(c.terminationMessagePolicy, 'File');
  t.same(c.resources, {});
  t.equal(c.ports[0].protocol, 'TCP');
  t.same(p.status, { phase: 'Pending', qosClass: 'BestEffort' });

  t.same(defaulted(podType, p), p, 'idempotent');

  const user = basicPod() as any;
  Object.assign(user.spec, { restartPolicy: 'Never', terminationGracePeriodSeconds: 0, dnsPolicy: 'Default' });
  Object.assign(user.spec.containers[0], { imagePullPolicy: 'Never', ports: [{ containerPort: 53, protocol: 'UDP' }] });
  user.status = { phase: 'Running' };
  const u = defaulted(podType, user) as any;
  t.equal(u.spec.restartPolicy, 'Never');
  t.equal(u.spec.terminationGracePeriodSeconds, 0, 'zero is a value the user set');
  t.equal(u.spec.dnsPolicy, 'Default');
  t.equal(u.spec.containers[0].imagePullPolicy, 'Never');
  t.equal(u.spec.containers[0].ports[0].protocol, 'UDP');
  t.same(u.status, { phase: 'Running' });
});

t.test('pod QoS class', async (t) => {
  const res = (requests: object, limits: object) => ({ containers: [{ name: 'a', resources: { requests, limits } }] });
  t.equal(qosClass(res({}, {})), 'BestEffort');
  t.equal(qosClass(res({ cpu: '100m' }, {})), 'Burstable');
  t.equal(qosClass(res({ cpu: '1', memory: '1Gi' }, { cpu: '1000m', memory: '1024Mi' })), 'Guaranteed');
  const p = defaulted(podType, { metadata: { name: 'q' }, spec: { containers: [{ name: 'a', image: 'x', resources: { limits: { cpu: '1', memory: '1Gi' } } }] } }) as any;
  t.same(p.spec.containers[0].resources.requests, { cpu: '1', memory: '1Gi' }, 'requests default to limits');
  t.equal(p.status.qosClass, 'Guaranteed');
});

t.test('deployment and other workload defaults', async (t) => {
  const d = defaulted(deployType, {
    metadata: { name: 'd' },
    spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } } },
  }) as any;
  t.equal(d.spec.replicas, 1);
  t.same(d.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
  t.equal(d.spec.revisionHistoryLimit, 10);
  t.equal(d.spec.progressDeadlineSeconds, 600);
  t.equal(d.spec.template.spec.restartPolicy, 'Always');
  t.equal(d.spec.template.spec.containers[0].imagePullPolicy, 'IfNotPresent');
  t.notOk('enableServiceLinks' in d.spec.template.spec, 'pods only');
  t.same(defaulted(deployType, d), d, 'idempotent');

  const recreate = defaulted(deployType, { metadata: { name: 'r' }, spec: { replicas: 0, strategy: { type: 'Recreate' } } }) as any;
  t.equal(recreate.spec.replicas, 0);
  t.same(recreate.spec.strategy, { type: 'Recreate' });

  const sts = defaulted(find(types, 'apps', 'statefulsets'), { metadata: { name: 's' }, spec: {} }) as any;
  t.same(sts.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
  t.equal(sts.spec.podManagementPolicy, 'OrderedReady');
  t.same(sts.spec.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Retain', whenScaled: 'Retain' });

  const ds = defaulted(find(types, 'apps', 'daemonsets'), { metadata: { name: 'x' }, spec: {} }) as any;
  t.same(ds.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });

  const job = defaulted(find(types, 'batch', 'jobs'), { metadata: { name: 'j' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'x' }] } } } }) as any;
  t.same([job.spec.parallelism, job.spec.completions, job.spec.backoffLimit, job.spec.completionMode, job.spec.suspend], [1, 1, 6, 'NonIndexed', false]);
  const par = defaulted(find(types, 'batch', 'jobs'), { metadata: { name: 'j' }, spec: { parallelism: 3 } }) as any;
  t.notOk('completions' in par.spec, 'completions stay unset when parallelism is given');

  const cj = defaulted(find(types, 'batch', 'cronjobs'), { metadata: { name: 'c' }, spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'x' }] } } } } } }) as any;
  t.same([cj.spec.concurrencyPolicy, cj.spec.suspend, cj.spec.successfulJobsHistoryLimit, cj.spec.failedJobsHistoryLimit], ['Allow', false, 3, 1]);
  t.equal(cj.spec.jobTemplate.spec.template.spec.dnsPolicy, 'ClusterFirst');
  t.notOk('backoffLimit' in cj.spec.jobTemplate.spec, 'the job template spec itself is not defaulted');
});

t.test('service, namespace, secret and storage defaults', async (t) => {
  const svc = defaulted(find(types, '', 'services'), { metadata: { name: 's' }, spec: { selector: { app: 'a' }, ports: [{ port: 80 }, { port: 53, protocol: 'UDP', targetPort: 5353 }] } }) as any;
  t.equal(svc.spec.type, 'ClusterIP');
  t.equal(svc.spec.sessionAffinity, 'None');
  t.same(svc.spec.ports, [{ port: 80, protocol: 'TCP', targetPort: 80 }, { port: 53, protocol: 'UDP', targetPort: 5353 }]);
  t.equal(svc.spec.internalTrafficPolicy, 'Cluster');
  // Families depend on the cluster's ranges: the service strategy sets them with the allocation.
  t.equal(svc.spec.ipFamilyPolicy, undefined);
  t.equal(svc.spec.ipFamilies, undefined);

  for (const [brand, fin, label] of [[cluster, 'cluster', 'cluster.io/metadata.name'], [kube, 'kubernetes', 'kubernetes.io/metadata.name']] as const) {
    const ns = defaulted(find(builtinTypes(brand), '', 'namespaces'), { metadata: { name: 'team' } }, brand) as any;
    t.same(ns.spec.finalizers, [fin]);
    t.equal(ns.status.phase, 'Active');
    t.equal(ns.metadata.labels[label], 'team');
  }
  // An update (resourceVersion set) that dropped the finalizer must not get it back.
  const fin = defaulted(find(types, '', 'namespaces'), { metadata: { name: 'team', resourceVersion: '5' }, spec: {}, status: { phase: 'Terminating' } }) as any;
  t.same(fin.spec, {});

  t.equal((defaulted(find(types, '', 'secrets'), { metadata: { name: 's' } }) as any).type, 'Opaque');
  t.equal((defaulted(find(types, '', 'secrets'), { metadata: { name: 's' }, type: 'cluster.io/tls' }) as any).type, 'cluster.io/tls');
  const sc = defaulted(find(types, 'storage.cluster.io', 'storageclasses'), { metadata: { name: 'sc' }, provisioner: 'x' }) as any;
  t.same([sc.reclaimPolicy, sc.volumeBindingMode], ['Delete', 'Immediate']);
  const pc = defaulted(find(types, 'scheduling.cluster.io', 'priorityclasses'), { metadata: { name: 'pc' }, value: 5 }) as any;
  t.equal(pc.preemptionPolicy, 'PreemptLowerPriority');
  const pvc = defaulted(find(types, '', 'persistentvolumeclaims'), { metadata: { name: 'c' }, spec: {} }) as any;
  t.equal(pvc.spec.volumeMode, 'Filesystem');
});

// ---------------------------------------------------------------- validation

const causes = (type: TypeDef, obj: KObject, old?: KObject) => type.validate!(defaulted(type, obj), old, cluster);
const byField = (cs: { field: string; message: string }[]) => Object.fromEntries(cs.map((c) => [c.field, c.message]));

t.test('a bad pod', async (t) => {
  t.same(causes(podType, basicPod()), [], 'a good pod passes');
  const cs = causes(podType, {
    metadata: { name: 'bad' },
    spec: { restartPolicy: 'Sometimes', containers: [{ name: 'web', image: '' }, { name: 'web', image: 'x' }, { name: 'Bad_Name', image: 'x', ports: [{ containerPort: 70000 }] }] },
  });
  const f = byField(cs);
  t.equal(f['spec.containers[0].image'], 'Required value');
  t.equal(f['spec.containers[1].name'], 'Duplicate value: "web"');
  t.match(f['spec.containers[2].name'], /^Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of/);
  t.equal(f['spec.containers[2].ports[0].containerPort'], 'Invalid value: 70000: must be between 1 and 65535, inclusive');
  t.equal(f['spec.restartPolicy'], 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"');
  t.equal(cs.find((c) => c.field === 'spec.containers[0].image')!.reason, 'FieldValueRequired');
  t.equal(cs.find((c) => c.field === 'spec.restartPolicy')!.reason, 'FieldValueNotSupported');

  const none = causes(podType, { metadata: { name: 'empty' }, spec: {} });
  t.same(none.map((c) => [c.field, c.reason]), [['spec.containers', 'FieldValueRequired']]);
});

t.test('deployment whose selector does not match its template', async (t) => {
  const good = {
    metadata: { name: 'd' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web', tier: 'fe' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
  };
  t.same(causes(deployType, good), []);
  const bad = clone(good) as any;
  bad.spec.template.metadata.labels = { app: 'other' };
  bad.spec.replicas = -1;
  const f = byField(causes(deployType, bad));
  t.equal(f['spec.template.metadata.labels'], 'Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`');
  t.equal(f['spec.replicas'], 'Invalid value: -1: must be greater than or equal to 0');

  const noSel = clone(good) as any;
  delete noSel.spec.selector;
  t.equal(byField(causes(deployType, noSel))['spec.selector'], 'Required value');

  const expr = clone(good) as any;
  expr.spec.selector = { matchExpressions: [{ key: 'tier', operator: 'In', values: ['fe', 'be'] }] };
  t.same(causes(deployType, expr), [], 'matchExpressions select the template');

  const moved = clone(good) as any;
  moved.spec.selector = { matchLabels: { app: 'web', tier: 'fe' } };
  t.match(byField(causes(deployType, moved, defaulted(deployType, good)))['spec.selector'], /field is immutable$/);
});

t.test('job, service, config map and secret validation', async (t) => {
  const jobType = find(types, 'batch', 'jobs');
  // (a selector of its own: the generated one is the create strategy's, which this unit does not run)
  const job = { metadata: { name: 'j' }, spec: { manualSelector: true, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } };
  // the reference's verdict (test/corpus: job:create:spec.template.spec.restartPolicy:drop): a job's template is not defaulted to Always
  t.same(byField(causes(jobType, job)), { 'spec.template.spec.restartPolicy': 'Required value: valid values: "OnFailure", "Never"' });
  const ok = clone(job) as any;
  ok.spec.template.spec.restartPolicy = 'Never';
  t.same(causes(jobType, ok), []);

  const svcType = find(types, '', 'services');
  t.same(byField(causes(svcType, { metadata: { name: 's' }, spec: { selector: { a: 'b' } } })), { 'spec.ports': 'Required value' });
  t.same(causes(svcType, { metadata: { name: 's' }, spec: { clusterIP: 'None', selector: { a: 'b' } } }), [], 'headless services need no ports');
  const bad = byField(causes(svcType, { metadata: { name: '1st' }, spec: { type: 'Magic', ports: [{ port: 0, protocol: 'ICMP' }] } }));
  t.match(bad['metadata.name'], /a DNS-1035 label must consist of/);
  t.equal(bad['spec.type'], 'Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"');
  t.equal(bad['spec.ports[0].port'], 'Invalid value: 0: must be between 1 and 65535, inclusive');
  t.equal(bad['spec.ports[0].protocol'], 'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"');

  const cm = byField(causes(find(types, '', 'configmaps'), { metadata: { name: 'c' }, data: { 'ok.key': 'v', 'bad key': 'v' } }));
  t.same(Object.keys(cm), ['data[bad key]']);
  t.match(cm['data[bad key]'], /^Invalid value: "bad key": a valid config key must consist of alphanumeric characters/);

  const sec = find(types, '', 'secrets');
  t.same(causes(sec, { metadata: { name: 's' }, data: { a: 'aGVsbG8=' } }), []);
  const b64 = causes(sec, { metadata: { name: 's' }, data: { a: 'not base64!' } });
  t.equal(b64[0]!.field, 'data[a]');
  t.notMatch(b64[0]!.message, /not base64/, 'secret data is not echoed');
  t.same(byField(causes(sec, { metadata: { name: 's' }, type: 'cluster.io/tls', data: { 'tls.crt': 'eA==' } })), { 'data[tls.key]': 'Required value' });
});

// ---------------------------------------------------------------- table cells

const NOW = Date.parse('2024-01-10T00:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

t.test('human durations as the reference prints them', async (t) => {
  const cases: [number, string][] = [
    [0, '0s'], [-1500, '0s'], [-5 * S, '<invalid>'], [5 * S, '5s'], [119 * S, '119s'], [2 * M, '2m'], [5 * M + 30 * S, '5m30s'],
    [10 * M + 5 * S, '10m'], [179 * M, '179m'], [3 * H, '3h'], [3 * H + 20 * M, '3h20m'], [8 * H + 5 * M, '8h'], [47 * H, '47h'],
    [2 * D, '2d'], [2 * D + 5 * H, '2d5h'], [8 * D + 3 * H, '8d'], [400 * D, '400d'], [730 * D, '2y'], [(730 + 3) * D, '2y3d'], [9 * 365 * D, '9y'],
  ];
  for (const [ms, s] of cases) t.equal(humanDuration(ms), s, `${ms}ms`);
  t.equal(age(ago(10 * M), NOW), '10m');
  t.equal(age(undefined, NOW), '<unknown>');
});

t.test('pod Ready, Status and Restarts cells', async (t) => {
  const cols = podType.columns!;
  t.same(cols.map((c) => c.name), ['Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node', 'Nominated Node', 'Readiness Gates']);
  t.same(cols.filter((c) => c.priority === 1).map((c) => c.name), ['IP', 'Node', 'Nominated Node', 'Readiness Gates']);
  const cell = (name: string, o: KObject) => cols.find((c) => c.name === name)!.cell!(o, NOW);
  const spec = { containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'y' }] };
  const running = {
    metadata: { name: 'p', creationTimestamp: ago(3 * H) },
    spec,
    status: {
      phase: 'Running', podIPs: [{ ip: '10.0.0.7' }],
      containerStatuses: [
        { name: 'a', ready: true, restartCount: 2, state: { running: {} }, lastState: { terminated: { exitCode: 1, finishedAt: ago(5 * M) } } },
        { name: 'b', ready: false, restartCount: 0, state: { running: {} } },
      ],
    },
  };
  t.equal(cell('Ready', running), '1/2');
  t.equal(cell('Status', running), 'Running');
  t.equal(cell('Restarts', running), '2 (5m ago)');
  t.equal(cell('Age', running), '3h');
  t.equal(cell('IP', running), '10.0.0.7');
  t.equal(cell('Node', running), '<none>');

  const waiting = { ...running, status: { phase: 'Pending', containerStatuses: [{ name: 'a', state: { waiting: { reason: 'ImagePullBackOff' } } }, { name: 'b', state: { waiting: { reason: 'ContainerCreating' } } }] } };
  t.equal(cell('Status', waiting), 'ImagePullBackOff', 'the first container wins');
  t.equal(cell('Ready', waiting), '0/2');

  const init = { ...running, spec: { ...spec, initContainers: [{ name: 'i', image: 'z' }] }, status: { phase: 'Pending', initContainerStatuses: [{ name: 'i', state: { running: {} } }] } };
  t.equal(cell('Status', init), 'Init:0/1');

  const terminating = { ...running, metadata: { ...running.metadata, deletionTimestamp: ago(S) } };
  t.equal(cell('Status', terminating), 'Terminating');
  t.equal(podSummary({ spec, status: {} }, NOW).status, '');
  t.equal(cell('Status', { spec, status: { phase: 'Pending' } }), 'Pending');
});

t.test('other table cells', async (t) => {
  const cellsOf = (type: TypeDef, o: KObject) => Object.fromEntries(type.columns!.map((c) => [c.name, c.cell!(o, NOW)]));
  const svc = cellsOf(find(types, '', 'services'), {
    metadata: { name: 's', creationTimestamp: ago(2 * D) },
    spec: { type: 'NodePort', clusterIPs: ['10.96.0.10'], ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }], selector: { b: '2', a: '1' } },
  });
  t.same(svc, { Type: 'NodePort', 'Cluster-IP': '10.96.0.10', 'External-IP': '<none>', 'Port(s)': '80:30080/TCP,53/UDP', Age: '2d', Selector: 'a=1,b=2' });

  const dep = cellsOf(deployType, {
    metadata: { name: 'd', creationTimestamp: ago(90 * S) },
    spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: { spec: { containers: [{ name: 'c', image: 'nginx' }, { name: 's', image: 'envoy' }] } } },
    status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
  });
  t.same(dep, { Ready: '2/3', 'Up-to-date': 3, Available: 2, Age: '90s', Containers: 'c,s', Images: 'nginx,envoy', Selector: 'app=web' });
  t.equal(selectorString({ matchLabels: { b: 'x' }, matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['z', 'y'] }, { key: 'c', operator: 'DoesNotExist' }] }), 'a notin (y,z),b=x,!c');

  const node = cellsOf(find(types, '', 'nodes'), {
    metadata: { name: 'n', creationTimestamp: ago(D), labels: { 'node-role.cluster.io/control-plane': '' } },
    spec: { unschedulable: true },
    status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v1.28.0' } },
  });
  t.equal(node.Status, 'Ready,SchedulingDisabled');
  t.equal(node.Roles, 'control-plane');
  t.equal(node.Version, 'v1.28.0');

  const ev = cellsOf(find(types, '', 'events'), {
    metadata: { name: 'e.1' }, type: 'Warning', reason: 'BackOff', message: ' Back-off ', involvedObject: { kind: 'Pod', name: 'p' },
    source: { component: 'nodeagent', host: 'n1' }, firstTimestamp: ago(10 * M), lastTimestamp: ago(M), count: 4,
  });
  t.same(ev, { 'Last Seen': '60s', Type: 'Warning', Reason: 'BackOff', Object: 'pod/p', Subobject: '', Source: 'nodeagent, n1', Message: 'Back-off', 'First Seen': '10m', Count: 4, Name: 'e.1' });

  const job = cellsOf(find(types, 'batch', 'jobs'), { metadata: { creationTimestamp: ago(H) }, spec: { completions: 3 }, status: { succeeded: 1, startTime: ago(H), completionTime: ago(H - 90 * S) } });
  t.equal(job.Completions, '1/3');
  t.equal(job.Duration, '90s');
});

t.test('hooks survive odd input', async (t) => {
  // User input reaches these before any schema check: nothing may throw.
  const odd: KObject[] = [
    {},
    { metadata: { name: 'x' }, spec: 'garbage', status: 5, data: [1], subsets: 'x', ports: 7 },
    { metadata: { name: 'x' }, spec: { containers: ['a', null, { name: 3 }], template: 4, selector: 'a', ports: [null, 'x'] } },
    { metadata: { name: 'x' }, spec: { template: { spec: { containers: [{ ports: 'x', env: [null], volumes: 3 }], volumes: [{}, null] } } } },
  ];
  for (const type of builtinTypes(kube)) {
    for (const input of odd) {
      const o = clone(input);
      t.doesNotThrow(() => {
        type.defaults?.(o, kube);
        type.validate?.(o, undefined, kube);
        type.validate?.(o, clone(o), kube);
        for (const c of type.columns ?? []) c.cell?.(o, NOW);
        for (const f of Object.values(type.fieldSelectors ?? {})) f(o);
      }, `${type.resource}.${type.group}`);
    }
  }
});

// ---------------------------------------------------------------- against the reference's OpenAPI document

const swagger = [
  fileURLToPath(new URL('../../../../shared/reference/openapi/swagger.json', import.meta.url)), // from dist/test/unit
  '../shared/reference/openapi/swagger.json', // from the repository root
].find((f) => existsSync(f));

t.test('kinds, scope and sub-resources match the reference OpenAPI', {
  skip: swagger ? false : 'reference OpenAPI document ../shared/reference/openapi/swagger.json not found',
}, async (t) => {
  const file = swagger!;
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { paths: Record<string, Record<string, { 'x-kubernetes-group-version-kind'?: { kind: string } }>> };
  const paths = doc.paths;
  // Versions of a later release (catalog.ts LATER_RELEASES) are not in this release's document.
  const later = new Set(LATER_RELEASES.map((r) => `${brandGroup(kube, r.group)}/${r.version}/${r.resource}`));
  for (const x of builtinTypes(kube).filter((x) => !later.has(`${x.group}/${x.version}/${x.resource}`))) {
    const prefix = x.group ? `/apis/${x.group}/${x.version}` : `/api/${x.version}`;
    const nsPath = `${prefix}/namespaces/{namespace}/${x.resource}/{name}`;
    const clusterPath = `${prefix}/${x.resource}/{name}`;
    const item = x.namespaced ? nsPath : clusterPath;
    const id = `${x.resource}.${x.group || 'core'}`;
    t.ok(paths[item], `${id}: ${item} exists`);
    t.equal(!!paths[`${prefix}/namespaces/{namespace}/${x.resource}`], x.namespaced, `${id}: namespaced is ${x.namespaced}`);
    t.equal(paths[item]?.get?.['x-kubernetes-group-version-kind']?.kind, x.kind, `${id}: kind`);
    const refSubs = Object.keys(paths).filter((p) => p.startsWith(`${item}/`)).map((p) => p.slice(item.length + 1));
    // sub-resources of a later release (catalog.ts LATER_SUBRESOURCES; core types only) are not in it either
    const laterSubs = x.group ? [] : LATER_SUBRESOURCES[x.resource] ?? [];
    for (const s of (x.subresources ?? []).filter((s) => !laterSubs.includes(s))) t.ok(refSubs.includes(s), `${id}: sub-resource ${s} exists in the reference`);
    // The sub-resources that are plain object writes must all be served.
    for (const s of refSubs.filter((s) => ['status', 'scale', 'finalize'].includes(s))) t.ok(x.subresources?.includes(s), `${id}: serves ${s}`);
  }
});
