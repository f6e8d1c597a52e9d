// The built-in admission plugins over real HTTPS: the default-on set on one server (kubernetes brand),
// the optional ones enabled by flag on another (cluster brand, with an admission configuration file,
// a token file holding a node agent's identity and a test authorizer), and two small servers for
// NamespaceExists / DenyExecOnPrivileged and AlwaysDeny.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, withServer, type TestServer } from '../lib/server.js';
import { until } from '../lib/poll.js';

type J = Record<string, any>;

const pod = (name: string, spec: J = {}, metadata: J = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, ...metadata },
  spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], ...spec },
});
const ns = (name: string, annotations: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, annotations } });
const pvc = (name: string, storage = '1Gi', spec: J = {}) => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, ...spec },
});

// ------------------------------------------------------------------ default-on plugins

t.test('default-on admission plugins (kubernetes brand)', async (t) => {
  const s: TestServer = await withServer(t, { brand: 'kubernetes', args: ['--authorization-mode=AlwaysAllow', '--default-not-ready-toleration-seconds=120'] });
  const post = (p: string, body: unknown) => s.request('POST', p, { body });
  const patch = (p: string, body: unknown) => s.request('PATCH', p, { body, headers: { 'content-type': 'application/merge-patch+json' } });
  const SA_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

  await t.test('ServiceAccount: default account, projected token volume, mounts', async (t) => {
    const r = await post('/api/v1/namespaces/default/pods', pod('sa-pod', {
      initContainers: [{ name: 'init', image: 'busybox' }],
      containers: [{ name: 'a', image: 'busybox' }, { name: 'b', image: 'busybox', volumeMounts: [{ name: 'own', mountPath: SA_PATH }] }],
      volumes: [{ name: 'own', emptyDir: {} }],
    }));
    t.equal(r.status, 201, r.text);
    const spec = r.json.spec;
    t.equal(spec.serviceAccountName, 'default');
    const vol = spec.volumes.find((v: J) => v.name.startsWith('kube-api-access-'));
    t.match(vol.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    t.same(vol.projected, {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    });
    const mount = { name: vol.name, readOnly: true, mountPath: SA_PATH };
    t.same(spec.initContainers[0].volumeMounts, [mount], 'init container mounted');
    t.same(spec.containers[0].volumeMounts, [mount], 'container mounted');
    t.same(spec.containers[1].volumeMounts, [{ name: 'own', mountPath: SA_PATH }], 'a container with its own mount there is left alone');
  });

  await t.test('ServiceAccount: a missing account is refused', async (t) => {
    const r = await post('/api/v1/namespaces/default/pods', pod('ghostly', { serviceAccountName: 'ghost' }));
    t.equal(r.status, 403);
    t.equal(r.json.reason, 'Forbidden');
    t.equal(r.json.message, 'pods "ghostly" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found');
  });

  await t.test('ServiceAccount: automount false (pod or account) and image pull secrets', async (t) => {
    t.equal((await post('/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'quiet' }, automountServiceAccountToken: false, imagePullSecrets: [{ name: 'regcred' }] })).status, 201);
    const noPod = await post('/api/v1/namespaces/default/pods', pod('no-mount', { automountServiceAccountToken: false }));
    t.equal(noPod.status, 201, noPod.text);
    t.notOk((noPod.json.spec.volumes ?? []).some((v: J) => v.name.startsWith('kube-api-access-')), 'pod says no');
    t.notOk(noPod.json.spec.containers[0].volumeMounts, 'no mount');
    const noSa = await post('/api/v1/namespaces/default/pods', pod('quiet-pod', { serviceAccountName: 'quiet' }));
    t.equal(noSa.status, 201, noSa.text);
    t.notOk((noSa.json.spec.volumes ?? []).length, 'account says no');
    t.same(noSa.json.spec.imagePullSecrets, [{ name: 'regcred' }], 'pull secrets copied from the account');
    const override = await post('/api/v1/namespaces/default/pods', pod('loud-pod', { serviceAccountName: 'quiet', automountServiceAccountToken: true, imagePullSecrets: [{ name: 'mine' }] }));
    t.equal(override.status, 201);
    t.ok(override.json.spec.volumes.some((v: J) => v.name.startsWith('kube-api-access-')), 'pod preference wins');
    t.same(override.json.spec.imagePullSecrets, [{ name: 'mine' }], 'own pull secrets kept');
  });

  await t.test('DefaultTolerationSeconds: not-ready (flag: 120) and unreachable (300)', async (t) => {
    const r = await s.get('/api/v1/namespaces/default/pods/no-mount');
    t.same(r.json.spec.tolerations, [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
    const own = await post('/api/v1/namespaces/default/pods', pod('tolerant', { tolerations: [{ operator: 'Exists' }] }));
    t.same(own.json.spec.tolerations, [{ operator: 'Exists' }], 'an all-tolerating pod gets nothing more');
  });

  await t.test('Priority: classes, the global default, system classes', async (t) => {
    const pc = (name: string, value: number, more: J = {}) => post('/apis/scheduling.k8s.io/v1/priorityclasses', { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value, ...more });
    t.equal((await pc('high', 1000)).status, 201);
    const none = await post('/api/v1/namespaces/default/pods', pod('prio-none'));
    t.equal(none.json.spec.priority, 0, 'no class, no default: 0');
    const high = await post('/api/v1/namespaces/default/pods', pod('prio-high', { priorityClassName: 'high' }));
    t.equal(high.status, 201, high.text);
    t.equal(high.json.spec.priority, 1000);
    t.equal(high.json.spec.preemptionPolicy, 'PreemptLowerPriority');
    const unknown = await post('/api/v1/namespaces/default/pods', pod('prio-x', { priorityClassName: 'nope' }));
    t.equal(unknown.status, 403);
    t.equal(unknown.json.message, 'pods "prio-x" is forbidden: no PriorityClass with name nope was found');
    const wrong = await post('/api/v1/namespaces/default/pods', pod('prio-y', { priorityClassName: 'high', priority: 5 }));
    t.equal(wrong.status, 403);
    t.match(wrong.json.message, /the integer value of priority \(5\) must not be provided in pod spec; priority admission controller computed 1000/);
    t.equal((await pc('dflt', 7, { globalDefault: true })).status, 201);
    const second = await pc('dflt2', 8, { globalDefault: true });
    t.equal(second.status, 403);
    t.match(second.json.message, /PriorityClass dflt is already marked as default. Only one default can exist/);
    const byDefault = await post('/api/v1/namespaces/default/pods', pod('prio-d'));
    t.equal(byDefault.json.spec.priority, 7);
    t.equal(byDefault.json.spec.priorityClassName, 'dflt');
    t.equal((await s.request('DELETE', '/apis/scheduling.k8s.io/v1/priorityclasses/dflt')).status, 200);
    const sys = await post('/api/v1/namespaces/default/pods', pod('crit', { priorityClassName: 'system-node-critical' }));
    t.equal(sys.status, 403);
    t.equal(sys.json.message, 'pods "crit" is forbidden: pods with system-node-critical priorityClass is not permitted in default namespace');
    const inSystem = await post('/api/v1/namespaces/kube-system/pods', pod('crit', { priorityClassName: 'system-node-critical' }));
    t.equal(inSystem.status, 201, inSystem.text);
    t.equal(inSystem.json.spec.priority, 2000001000);
    const cluster = await post('/api/v1/namespaces/kube-system/pods', pod('crit2', { priorityClassName: 'system-cluster-critical' }));
    t.equal(cluster.json.spec.priority, 2000000000);
  });

  await t.test('LimitRanger: defaults, container and pod maximum, claim maximum', async (t) => {
    t.equal((await post('/api/v1/namespaces', ns('limits'))).status, 201);
    const lr = await post('/api/v1/namespaces/limits/limitranges', {
      apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'lr' },
      spec: {
        limits: [
          { type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m' }, max: { cpu: '1' }, min: { memory: '64Mi' } },
          { type: 'Pod', max: { memory: '600Mi' } },
          { type: 'PersistentVolumeClaim', max: { storage: '2Gi' } },
        ],
      },
    });
    t.equal(lr.status, 201, lr.text);
    const r = await post('/api/v1/namespaces/limits/pods', pod('defaulted'));
    t.equal(r.status, 201, r.text);
    t.same(r.json.spec.containers[0].resources, { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '256Mi' } });
    t.equal(r.json.metadata.annotations['kubernetes.io/limit-ranger'], 'LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c');
    t.equal(r.json.status.qosClass, 'Burstable', 'QoS computed after the defaults');
    const big = await post('/api/v1/namespaces/limits/pods', pod('big', { containers: [{ name: 'c', image: 'busybox', resources: { limits: { cpu: '2' } } }] }));
    t.equal(big.status, 403);
    t.equal(big.json.message, 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
    const small = await post('/api/v1/namespaces/limits/pods', pod('small', { containers: [{ name: 'c', image: 'busybox', resources: { requests: { memory: '10Mi' }, limits: { memory: '100Mi' } } }] }));
    t.equal(small.status, 403);
    t.equal(small.json.message, 'pods "small" is forbidden: minimum memory usage per Container is 64Mi, but request is 10Mi');
    const three = await post('/api/v1/namespaces/limits/pods', pod('three', { containers: ['a', 'b', 'c'].map((n) => ({ name: n, image: 'busybox' })) }));
    t.equal(three.status, 403);
    t.equal(three.json.message, 'pods "three" is forbidden: maximum memory usage per Pod is 600Mi, but limit is 768Mi');
    const claim = await post('/api/v1/namespaces/limits/persistentvolumeclaims', pvc('huge', '5Gi', { storageClassName: '' }));
    t.equal(claim.status, 403);
    t.equal(claim.json.message, 'persistentvolumeclaims "huge" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi');
  });

  await t.test('ResourceQuota: 20 concurrent creates against pods: 5', async (t) => {
    t.equal((await post('/api/v1/namespaces', ns('quota'))).status, 201);
    const q = await post('/api/v1/namespaces/quota/resourcequotas', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'pods' }, spec: { hard: { pods: '5' } } });
    t.equal(q.status, 201, q.text);
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => post('/api/v1/namespaces/quota/pods', pod(`p${i}`))));
    const ok = replies.filter((r) => r.status === 201);
    t.equal(ok.length, 5, 'exactly five created');
    const refused = replies.filter((r) => r.status !== 201);
    t.ok(refused.every((r) => r.status === 403), 'the rest refused with 403');
    const one = refused[0].json;
    t.equal(one.message, `pods "${one.details.name}" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=5, limited: pods=5`);
    const status = (await s.get('/api/v1/namespaces/quota/resourcequotas/pods')).json.status;
    t.same(status, { hard: { pods: '5' }, used: { pods: '5' } });
    t.equal((await s.get('/api/v1/namespaces/quota/pods')).json.items.length, 5);
    t.equal((await s.request('DELETE', `/api/v1/namespaces/quota/pods/${ok[0].json.metadata.name}`)).status, 200);
    const after = await until(() => s.get('/api/v1/namespaces/quota/resourcequotas/pods'), (r) => r.json.status.used.pods === '4');
    t.equal(after.json.status.used.pods, '4', 'usage replenished after the delete');
    const dry = await post('/api/v1/namespaces/quota/pods?dryRun=All', pod('dry'));
    t.equal(dry.status, 201, 'dry run passes the quota check');
    t.equal((await s.get('/api/v1/namespaces/quota/resourcequotas/pods')).json.status.used.pods, '4', 'and charges nothing');
    t.equal((await post('/api/v1/namespaces/quota/pods', pod('fifth'))).status, 201);
    const sixth = await post('/api/v1/namespaces/quota/pods?dryRun=All', pod('sixth'));
    t.equal(sixth.status, 403, 'a dry run over the quota is refused too');
  });

  await t.test('ResourceQuota: compute resources need requests; counts of other kinds', async (t) => {
    t.equal((await post('/api/v1/namespaces', ns('quota2'))).status, 201);
    t.equal((await post('/api/v1/namespaces/quota2/resourcequotas', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'compute' }, spec: { hard: { 'requests.cpu': '1', 'requests.memory': '1Gi', services: '1' } } })).status, 201);
    const bare = await post('/api/v1/namespaces/quota2/pods', pod('bare'));
    t.equal(bare.status, 403);
    t.equal(bare.json.message, 'pods "bare" is forbidden: failed quota: compute: must specify requests.cpu for: c; requests.memory for: c');
    const res = (cpu: string) => ({ containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu, memory: '512Mi' } } }] });
    t.equal((await post('/api/v1/namespaces/quota2/pods', pod('half', res('600m')))).status, 201);
    const over = await post('/api/v1/namespaces/quota2/pods', pod('over', res('500m')));
    t.equal(over.status, 403);
    t.equal(over.json.message, 'pods "over" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1');
    const svc = (name: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }] } });
    t.equal((await post('/api/v1/namespaces/quota2/services', svc('one'))).status, 201);
    const two = await post('/api/v1/namespaces/quota2/services', svc('two'));
    t.equal(two.status, 403);
    t.equal(two.json.message, 'services "two" is forbidden: exceeded quota: compute, requested: services=1, used: services=1, limited: services=1');
    const used = (await s.get('/api/v1/namespaces/quota2/resourcequotas/compute')).json.status.used;
    t.same(used, { 'requests.cpu': '600m', 'requests.memory': '512Mi', services: '1' });
  });

  await t.test('ResourceQuota: another status writer (an external quota controller) is no error, and usage is recomputed after it', async (t) => {
    t.equal((await post('/api/v1/namespaces', ns('quota3'))).status, 201);
    const Q = '/api/v1/namespaces/quota3/resourcequotas';
    t.equal((await post(Q, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { configmaps: '100' } } })).status, 201);
    const CM = '/api/v1/namespaces/quota3/configmaps';
    for (let i = 0; i < 60; i++) t.equal((await post(CM, { metadata: { name: `cm${i}` } })).status, 201);
    // Unconditional status writes (no resourceVersion) as fast as they go, while deletions make the
    // plugin recompute: its conditional writes keep losing the race.
    let writing = true;
    const writer = async () => {
      while (writing) await s.request('PUT', `${Q}/q/status`, { body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { configmaps: '100' } }, status: { hard: { configmaps: '100' }, used: { configmaps: '77' } } } });
    };
    const writers = Array.from({ length: 32 }, writer);
    for (let i = 0; i < 50; i++) { await s.request('DELETE', `${CM}/cm${i}`); await new Promise((r) => setTimeout(r, 20)); }
    writing = false;
    await Promise.all(writers);
    const live = (await s.get(CM)).json.items.length;
    const q = await until(() => s.get(`${Q}/q`), (r) => r.json.status?.used?.configmaps === String(live), 60_000);
    t.equal(q.json.status?.used?.configmaps, String(live), 'usage recomputed once the other writer stops');
    t.same(s.logs.filter((l) => l.includes('resource quota recompute failed')), [], 'losing a write race is not logged as a failure');
  });

  await t.test('NamespaceLifecycle: creates follow a namespace through its life (absent, created, terminating, gone, created again)', async (t) => {
    const CMS = '/api/v1/namespaces/nl-life/configmaps';
    const cm = (name: string, metadata: J = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...metadata } });
    const absent = await post(CMS, cm('a'));
    t.equal(absent.status, 404);
    t.equal(absent.json.message, 'namespaces "nl-life" not found');
    t.equal((await post('/api/v1/namespaces', ns('nl-life'))).status, 201);
    // A finalizer on its content holds the namespace in Terminating until it is released.
    t.equal((await post(CMS, cm('held', { finalizers: ['example.com/hold'] }))).status, 201, 'a namespace just created takes content');
    t.equal((await s.request('DELETE', '/api/v1/namespaces/nl-life')).status, 200);
    const ending = await post(CMS, cm('b'));
    t.equal(ending.status, 403);
    t.equal(ending.json.reason, 'Forbidden');
    t.equal(ending.json.message, 'configmaps "b" is forbidden: unable to create new content in namespace nl-life because it is being terminated');
    t.same(ending.json.details, { name: 'b', kind: 'configmaps', causes: [{ reason: 'NamespaceTerminating', message: 'namespace nl-life is being terminated', field: 'metadata.namespace' }] });
    t.equal((await patch(`${CMS}/held`, { metadata: { finalizers: null } })).status, 200);
    await until(() => s.get('/api/v1/namespaces/nl-life'), (r) => r.status === 404);
    const gone = await post(CMS, cm('c'));
    t.equal(gone.status, 404);
    t.equal(gone.json.message, 'namespaces "nl-life" not found');
    t.equal((await post('/api/v1/namespaces', ns('nl-life'))).status, 201);
    t.equal((await post(CMS, cm('d'))).status, 201, 'the namespace created again takes content');
  });

  await t.test('DefaultStorageClass with 0, 1 and 2 defaults; claim protection', async (t) => {
    const sc = (name: string, annotation?: string) => post('/apis/storage.k8s.io/v1/storageclasses', {
      apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', provisioner: 'example.com/p',
      metadata: { name, annotations: annotation ? { [annotation]: 'true' } : {} },
    });
    const c0 = await post('/api/v1/namespaces/default/persistentvolumeclaims', pvc('c0'));
    t.equal(c0.status, 201, c0.text);
    t.equal(c0.json.spec.storageClassName, undefined, 'no default class: unset');
    t.same(c0.json.metadata.finalizers, ['kubernetes.io/pvc-protection'], 'StorageObjectInUseProtection');
    t.equal((await sc('gold', 'storageclass.kubernetes.io/is-default-class')).status, 201);
    const c1 = await post('/api/v1/namespaces/default/persistentvolumeclaims', pvc('c1'));
    t.equal(c1.json.spec.storageClassName, 'gold');
    const explicit = await post('/api/v1/namespaces/default/persistentvolumeclaims', pvc('c1b', '1Gi', { storageClassName: '' }));
    t.equal(explicit.json.spec.storageClassName, '', 'an explicit empty class is kept');
    t.equal((await sc('silver', 'storageclass.beta.kubernetes.io/is-default-class')).status, 201, 'the beta annotation counts too');
    const c2 = await post('/api/v1/namespaces/default/persistentvolumeclaims', pvc('c2'));
    t.equal(c2.status, 403);
    t.equal(c2.json.message, 'persistentvolumeclaims "c2" is forbidden: Internal error occurred: 2 default StorageClasses were found');
    const named = await post('/api/v1/namespaces/default/persistentvolumeclaims', pvc('c3', '1Gi', { storageClassName: 'gold' }));
    t.equal(named.status, 201, 'a claim naming its class is unaffected');
    const pv = await post('/api/v1/persistentvolumes', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv1' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' } } });
    t.same(pv.json.metadata.finalizers, ['kubernetes.io/pv-protection']);
  });

  await t.test('PersistentVolumeClaimResize', async (t) => {
    for (const [name, allow] of [['expandable', true], ['fixed', false]] as const) {
      t.equal((await post('/apis/storage.k8s.io/v1/storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner: 'example.com/p', allowVolumeExpansion: allow })).status, 201);
      t.equal((await post('/api/v1/namespaces/default/persistentvolumeclaims', pvc(`r-${name}`, '1Gi', { storageClassName: name }))).status, 201);
    }
    const grow = (name: string, storage: string) => patch(`/api/v1/namespaces/default/persistentvolumeclaims/${name}`, { spec: { resources: { requests: { storage } } } });
    // validation runs before validating admission: an unbound claim's spec is immutable (the reference's 422)
    const unbound = await grow('r-expandable', '2Gi');
    t.equal(unbound.status, 422);
    t.match(unbound.json.message, /spec: Forbidden: spec is immutable after creation except resources.requests for bound claims/);
    for (const name of ['r-expandable', 'r-fixed']) {
      t.equal((await patch(`/api/v1/namespaces/default/persistentvolumeclaims/${name}/status`, { status: { phase: 'Bound' } })).status, 200);
    }
    const ok = await grow('r-expandable', '2Gi');
    t.equal(ok.status, 200, ok.text);
    t.equal(ok.json.spec.resources.requests.storage, '2Gi');
    const fixed = await grow('r-fixed', '2Gi');
    t.equal(fixed.status, 403);
    t.equal(fixed.json.message, 'persistentvolumeclaims "r-fixed" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
    const shrink = await grow('r-expandable', '1Gi');
    t.equal(shrink.status, 422);
    t.match(shrink.json.message, /spec.resources.requests.storage: Forbidden: field can not be less than previous value/);
  });

  await t.test('DefaultIngressClass with 1 and 2 defaults', async (t) => {
    const ic = (name: string) => post('/apis/networking.k8s.io/v1/ingressclasses', { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name, annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } }, spec: { controller: 'example.com/ingress' } });
    const ing = (name: string) => post('/apis/networking.k8s.io/v1/namespaces/default/ingresses', { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name }, spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } } });
    const none = await ing('i0');
    t.equal(none.status, 201, none.text);
    t.equal(none.json.spec.ingressClassName, undefined);
    t.equal((await ic('nginx')).status, 201);
    t.equal((await ing('i1')).json.spec.ingressClassName, 'nginx');
    t.equal((await ic('traefik')).status, 201);
    const two = await ing('i2');
    t.equal(two.status, 403);
    t.equal(two.json.message, 'ingresses.networking.k8s.io "i2" is forbidden: Internal error occurred: 2 default IngressClasses were found, only 1 allowed');
  });

  await t.test('RuntimeClass: overhead and scheduling', async (t) => {
    t.equal((await post('/apis/node.k8s.io/v1/runtimeclasses', {
      apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'kata' }, handler: 'kata',
      overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
      scheduling: { nodeSelector: { sandbox: 'true' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] },
    })).status, 201);
    const r = await post('/api/v1/namespaces/default/pods', pod('kata-pod', { runtimeClassName: 'kata', nodeSelector: { disk: 'ssd' } }));
    t.equal(r.status, 201, r.text);
    t.same(r.json.spec.overhead, { cpu: '250m', memory: '120Mi' });
    t.same(r.json.spec.nodeSelector, { disk: 'ssd', sandbox: 'true' });
    t.ok(r.json.spec.tolerations.some((x: J) => x.key === 'sandbox' && x.operator === 'Exists'));
    const conflict = await post('/api/v1/namespaces/default/pods', pod('kata-2', { runtimeClassName: 'kata', nodeSelector: { sandbox: 'false' } }));
    t.equal(conflict.status, 403);
    t.equal(conflict.json.message, 'pods "kata-2" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = false');
    const missing = await post('/api/v1/namespaces/default/pods', pod('kata-3', { runtimeClassName: 'nope' }));
    t.equal(missing.status, 403);
    t.equal(missing.json.message, 'pods "kata-3" is forbidden: pod rejected: RuntimeClass "nope" not found');
    const stray = await post('/api/v1/namespaces/default/pods', pod('kata-4', { overhead: { cpu: '1' } }));
    t.equal(stray.status, 403);
    t.equal(stray.json.message, 'pods "kata-4" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
  });

  await t.test('TaintNodesByCondition; exec without DenyEscalatingExec gets past admission (to the pod\'s missing node)', async (t) => {
    const n = await post('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'worker' } });
    t.equal(n.status, 201, n.text);
    t.same(n.json.spec.taints, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
    const ex = await s.request('POST', '/api/v1/namespaces/default/pods/sa-pod/exec?command=ls&container=a');
    t.equal(ex.status, 400);
    t.equal(ex.json.message, 'pod sa-pod does not have a host assigned', 'admitted; the pod has no node agent to go to');
  });
});

// ------------------------------------------------------------------ plugins enabled by flag

t.test('optional admission plugins (cluster brand)', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-adm-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dataDir = path.join(dir, 'data');
  mkdirSync(path.join(dataDir, 'pki'), { recursive: true, mode: 0o700 });
  // the admin first (the harness uses the first line), node agent n1, and a user the test authorizer restricts
  writeFileSync(path.join(dataDir, 'pki/tokens.csv'), [
    'admin-token-for-admission-tests,admin,admin-uid,"system:masters"',
    'node-one-token,system:node:n1,n1-uid,"system:nodes"',
    'limited-token,limited,limited-uid',
  ].join('\n') + '\n');
  writeFileSync(path.join(dir, 'admission.yaml'), [
    'apiVersion: apiserver.config.cluster.io/v1',
    'kind: AdmissionConfiguration',
    'plugins:',
    '  - name: EventRateLimit',
    '    configuration:',
    '      apiVersion: eventratelimit.admission.cluster.io/v1alpha1',
    '      kind: Configuration',
    '      limits:',
    '        - type: Namespace',
    '          qps: 0.01',
    '          burst: 3',
    '  - name: PodNodeSelector',
    '    path: podnodeselector.yaml',
  ].join('\n'));
  writeFileSync(path.join(dir, 'podnodeselector.yaml'), 'podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=prod\n  restricted: env=prod,tier=web\n');
  // allows everything except, for user "limited", deleting config maps and updating their finalizers
  writeFileSync(path.join(dir, 'authz.mjs'), `export default { kind: 'authorizer', contract: 1, name: 'test-limits', create: () => ({
    authorize(a) {
      if (a.user.username === 'limited' && a.resource === 'configmaps' && (a.verb === 'delete' || a.subresource === 'finalizers')) return { decision: 'deny', reason: 'test says no' };
      return { decision: 'allow' };
    } }) };\n`);
  writeFileSync(path.join(dir, 'config.yaml'), `authorization:\n  - plugin: ${path.join(dir, 'authz.mjs')}\n`);
  const enabled = ['AlwaysPullImages', 'DenyServiceExternalIPs', 'ExtendedResourceToleration', 'LimitPodHardAntiAffinityTopology', 'NamespaceAutoProvision',
    'SecurityContextDeny', 'DenyEscalatingExec', 'PodNodeSelector', 'PodTolerationRestriction', 'EventRateLimit', 'NodeRestriction', 'OwnerReferencesPermissionEnforcement'];
  const s = await withServer(t, {
    brand: 'cluster', dataDir,
    args: ['--config', path.join(dir, 'config.yaml'), `--enable-admission-plugins=${enabled.join(',')}`, '--admission-control-config-file', path.join(dir, 'admission.yaml')],
  });
  const post = (p: string, body: unknown, token?: string) => s.request('POST', p, { body, token });
  const put = (p: string, body: unknown, token?: string) => s.request('PUT', p, { body, token });

  await t.test('ServiceAccount under the cluster brand', async (t) => {
    const r = await post('/api/v1/namespaces/default/pods', pod('sa-pod'));
    t.equal(r.status, 201, r.text);
    t.match(r.json.spec.volumes[0].name, /^cluster-api-access-[a-z0-9]{5}$/);
    t.equal(r.json.spec.volumes[0].projected.sources[1].configMap.name, 'root-ca.crt');
    t.equal(r.json.spec.containers[0].volumeMounts[0].mountPath, '/var/run/secrets/cluster.io/serviceaccount');
    t.equal(r.json.spec.containers[0].imagePullPolicy, 'Always', 'AlwaysPullImages');
    t.same(r.json.spec.nodeSelector, { env: 'prod' }, 'PodNodeSelector: cluster default selector');
  });

  await t.test('AlwaysPullImages leaves updates without new images alone', async (t) => {
    const cur = (await s.get('/api/v1/namespaces/default/pods/sa-pod')).json;
    cur.metadata.labels = { touched: 'yes' };
    const u = await put('/api/v1/namespaces/default/pods/sa-pod', cur);
    t.equal(u.status, 200, u.text);
    t.equal(u.json.spec.containers[0].imagePullPolicy, 'Always');
  });

  await t.test('DenyServiceExternalIPs', async (t) => {
    const r = await post('/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext' }, spec: { ports: [{ port: 80 }], externalIPs: ['1.2.3.4'] } });
    t.equal(r.status, 422);
    t.equal(r.json.message, 'Service "ext" is invalid: spec.externalIPs: Invalid value: []string{"1.2.3.4"}: Use of external IPs is denied by admission control');
    t.equal((await post('/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'plain' }, spec: { ports: [{ port: 80 }] } })).status, 201);
  });

  await t.test('ExtendedResourceToleration', async (t) => {
    const r = await post('/api/v1/namespaces/default/pods', pod('gpu', { containers: [{ name: 'c', image: 'cuda', resources: { requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '1' } } }] }));
    t.equal(r.status, 201, r.text);
    t.ok(r.json.spec.tolerations.some((x: J) => x.key === 'example.com/gpu' && x.operator === 'Exists' && x.effect === 'NoSchedule'));
  });

  await t.test('LimitPodHardAntiAffinityTopology', async (t) => {
    const term = (topologyKey: string) => ({ affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'x' } }, topologyKey }] } } });
    const r = await post('/api/v1/namespaces/default/pods', pod('zone-hog', term('topology.cluster.io/zone')));
    t.equal(r.status, 403);
    t.equal(r.json.message, 'pods "zone-hog" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.cluster.io/zone but only key cluster.io/hostname is allowed');
    t.equal((await post('/api/v1/namespaces/default/pods', pod('spread', term('cluster.io/hostname')))).status, 201);
  });

  await t.test('NamespaceAutoProvision', async (t) => {
    const r = await post('/api/v1/namespaces/made-on-demand/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
    t.equal(r.status, 201, r.text);
    t.equal((await s.get('/api/v1/namespaces/made-on-demand')).status, 200);
  });

  await t.test('SecurityContextDeny', async (t) => {
    const r = await post('/api/v1/namespaces/default/pods', pod('root', { securityContext: { runAsUser: 0 } }));
    t.equal(r.status, 403);
    t.equal(r.json.message, 'pods "root" is forbidden: pod.Spec.SecurityContext.RunAsUser is forbidden');
    const c = await post('/api/v1/namespaces/default/pods', pod('selinux', { containers: [{ name: 'c', image: 'busybox', securityContext: { seLinuxOptions: { level: 's0' } } }] }));
    t.equal(c.json.message, 'pods "selinux" is forbidden: SecurityContext.SELinuxOptions is forbidden');
  });

  await t.test('DenyEscalatingExec', async (t) => {
    t.equal((await post('/api/v1/namespaces/default/pods', pod('priv', { containers: [{ name: 'c', image: 'busybox', securityContext: { privileged: true } }] }))).status, 201);
    t.equal((await post('/api/v1/namespaces/default/pods', pod('hostnet', { hostNetwork: true }))).status, 201);
    const priv = await s.request('POST', '/api/v1/namespaces/default/pods/priv/exec?command=ls');
    t.equal(priv.status, 403);
    t.equal(priv.json.message, 'pods "priv" is forbidden: cannot exec into or attach to a privileged container');
    const attach = await s.request('POST', '/api/v1/namespaces/default/pods/hostnet/attach?stdin=true');
    t.equal(attach.status, 403);
    t.equal(attach.json.message, 'pods "hostnet" is forbidden: cannot exec into or attach to a container using host network');
    const plain = await s.request('POST', '/api/v1/namespaces/default/pods/sa-pod/exec?command=ls');
    t.equal(plain.json.message, 'pod sa-pod does not have a host assigned', 'plain pod: admitted, on to locating its node agent');
  });

  await t.test('PodNodeSelector: namespace selector, conflicts, whitelist', async (t) => {
    t.equal((await post('/api/v1/namespaces', ns('ssd', { 'scheduler.alpha.cluster.io/node-selector': 'disk=ssd' }))).status, 201);
    const r = await post('/api/v1/namespaces/ssd/pods', pod('fast', { nodeSelector: { zone: 'a' } }));
    t.equal(r.status, 201, r.text);
    t.same(r.json.spec.nodeSelector, { disk: 'ssd', zone: 'a' }, 'the namespace selector replaces the cluster default');
    const conflict = await post('/api/v1/namespaces/ssd/pods', pod('slow', { nodeSelector: { disk: 'hdd' } }));
    t.equal(conflict.status, 403);
    t.equal(conflict.json.message, 'pods "slow" is forbidden: pod node label selector conflicts with its namespace node label selector');
    t.equal((await post('/api/v1/namespaces', ns('restricted'))).status, 201);
    t.equal((await post('/api/v1/namespaces/restricted/pods', pod('web', { nodeSelector: { tier: 'web' } }))).status, 201);
    const outside = await post('/api/v1/namespaces/restricted/pods', pod('gpu', { nodeSelector: { gpu: 'yes' } }));
    t.equal(outside.status, 403);
    t.equal(outside.json.message, 'pods "gpu" is forbidden: pod node label selector labels conflict with its namespace whitelist');
  });

  await t.test('PodTolerationRestriction: namespace defaults and whitelist', async (t) => {
    const whitelist = [{ key: 'dedicated', operator: 'Exists' }, { key: 'node.cluster.io/not-ready', operator: 'Exists' }, { key: 'node.cluster.io/unreachable', operator: 'Exists' }];
    t.equal((await post('/api/v1/namespaces', ns('team-a', {
      'scheduler.alpha.cluster.io/defaultTolerations': JSON.stringify([{ key: 'dedicated', operator: 'Equal', value: 'team-a', effect: 'NoSchedule' }]),
      'scheduler.alpha.cluster.io/tolerationsWhitelist': JSON.stringify(whitelist),
    }))).status, 201);
    const r = await post('/api/v1/namespaces/team-a/pods', pod('member'));
    t.equal(r.status, 201, r.text);
    t.ok(r.json.spec.tolerations.some((x: J) => x.key === 'dedicated' && x.value === 'team-a'), 'default toleration merged');
    const stranger = await post('/api/v1/namespaces/team-a/pods', pod('stranger', { tolerations: [{ key: 'other', operator: 'Exists' }] }));
    t.equal(stranger.status, 403);
    t.equal(stranger.json.message, 'pods "stranger" is forbidden: pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist');
  });

  await t.test('EventRateLimit: 429 after the burst', async (t) => {
    // involvedObject.namespace is the event's own: the reference's validation refuses another
    const ev = (name: string, namespace = 'default') => ({ apiVersion: 'v1', kind: 'Event', metadata: { name }, involvedObject: { kind: 'Pod', name: 'p', namespace }, reason: 'Test', message: 'm', type: 'Normal' });
    for (let i = 0; i < 3; i++) t.equal((await post('/api/v1/namespaces/default/events', ev(`e${i}`))).status, 201, `event ${i} within the burst`);
    const r = await post('/api/v1/namespaces/default/events', ev('e3'));
    t.equal(r.status, 429);
    t.equal(r.json.reason, 'TooManyRequests');
    t.equal(r.json.message, 'Too many requests: limit reached on type Namespace for key default');
    t.equal((await post('/api/v1/namespaces/made-on-demand/events', ev('e0', 'made-on-demand'))).status, 201, 'another namespace has its own bucket');
  });

  await t.test('NodeRestriction: a node agent writes only its own Node and mirror pods', async (t) => {
    const tok = 'node-one-token';
    const node = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels } });
    const badLabel = await post('/api/v1/nodes', node('n1', { 'node-restriction.cluster.io/pool': 'a' }), tok);
    t.equal(badLabel.status, 403);
    t.equal(badLabel.json.message, 'nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-restriction.cluster.io/pool');
    const other = await post('/api/v1/nodes', node('n2'), tok);
    t.equal(other.status, 403);
    t.equal(other.json.message, 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
    const own = await post('/api/v1/nodes', node('n1', { 'cluster.io/hostname': 'n1', 'kubelet.cluster.io/x': 'y', 'node.cluster.io/pool': 'a' }), tok);
    t.equal(own.status, 201, own.text);
    t.equal((await post('/api/v1/nodes', node('n3'))).status, 201, 'the admin may create other nodes');

    const cur = own.json;
    const relabel = await put('/api/v1/nodes/n1', { ...cur, metadata: { ...cur.metadata, labels: { ...cur.metadata.labels, 'cluster.io/role': 'master' } } }, tok);
    t.equal(relabel.status, 403);
    t.equal(relabel.json.message, 'nodes "n1" is forbidden: is not allowed to modify labels: cluster.io/role');
    const retaint = await put('/api/v1/nodes/n1', { ...cur, spec: { taints: [] } }, tok);
    t.equal(retaint.status, 403);
    t.equal(retaint.json.message, 'nodes "n1" is forbidden: node "n1" is not allowed to modify taints');
    const fine = await put('/api/v1/nodes/n1', { ...cur, metadata: { ...cur.metadata, labels: { ...cur.metadata.labels, 'kubelet.cluster.io/y': 'z' } } }, tok);
    t.equal(fine.status, 200, fine.text);
    t.equal((await s.request('DELETE', '/api/v1/nodes/n1', { token: tok })).status, 403, 'may not remove its own Node');
    t.equal((await s.request('DELETE', '/api/v1/nodes/n3', { token: tok })).status, 403, 'nor another');

    const plain = await post('/api/v1/namespaces/default/pods', pod('np', { nodeName: 'n1' }), tok);
    t.equal(plain.status, 403);
    t.equal(plain.json.message, 'pods "np" is forbidden: pod does not have "cluster.io/config.mirror" annotation, node "n1" can only create mirror pods');
    const owner = [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: cur.metadata.uid, controller: true }];
    const mirror = (name: string, nodeName: string) => pod(name, { nodeName }, { annotations: { 'cluster.io/config.mirror': 'hash' }, ownerReferences: owner });
    const elsewhere = await post('/api/v1/namespaces/default/pods', mirror('mp2', 'n3'), tok);
    t.equal(elsewhere.status, 403);
    t.equal(elsewhere.json.message, 'pods "mp2" is forbidden: node "n1" can only create pods with spec.nodeName set to itself');
    const mp = await post('/api/v1/namespaces/default/pods', mirror('mp', 'n1'), tok);
    t.equal(mp.status, 201, mp.text);
    t.notOk(mp.json.spec.serviceAccountName, 'mirror pods get no service account');
    const upd = await put('/api/v1/namespaces/default/pods/mp', mp.json, tok);
    t.equal(upd.status, 403);
    t.equal(upd.json.message, 'pods "mp" is forbidden: unexpected operation "UPDATE", node "n1" can only create and delete mirror pods');
    const st = await s.request('PATCH', '/api/v1/namespaces/default/pods/mp/status', { body: { status: { phase: 'Running' } }, token: tok, headers: { 'content-type': 'application/merge-patch+json' } });
    t.equal(st.status, 200, st.text);
    const foreign = await s.request('PATCH', '/api/v1/namespaces/default/pods/sa-pod/status', { body: { status: { phase: 'Running' } }, token: tok, headers: { 'content-type': 'application/merge-patch+json' } });
    t.equal(foreign.status, 403);
    t.equal(foreign.json.message, 'pods "sa-pod" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself');
    const del = await s.request('DELETE', '/api/v1/namespaces/default/pods/sa-pod', { token: tok });
    t.equal(del.status, 403);
    t.equal(del.json.message, 'pods "sa-pod" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself');
    t.equal((await s.request('DELETE', '/api/v1/namespaces/default/pods/mp', { token: tok })).status, 200, 'its own mirror pod');
    t.equal((await post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'by-node' } }, tok)).status, 201, 'other kinds are not its business');
  });

  await t.test('OwnerReferencesPermissionEnforcement', async (t) => {
    const tok = 'limited-token';
    const owner = (await post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } })).json;
    const ref = (block?: boolean) => [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid, ...(block === undefined ? {} : { blockOwnerDeletion: block }) }];
    const created = await post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owned', ownerReferences: ref() } }, tok);
    t.equal(created.status, 201, 'creating with owners needs no delete permission');
    const plain = await post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' } }, tok);
    const change = await put('/api/v1/namespaces/default/configmaps/plain', { ...plain.json, metadata: { ...plain.json.metadata, ownerReferences: ref() } }, tok);
    t.equal(change.status, 403);
    t.equal(change.json.message, 'configmaps "plain" is forbidden: cannot set an ownerRef on a resource you can\'t delete: test says no, <nil>');
    const block = await post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'blocker', ownerReferences: ref(true) } }, tok);
    t.equal(block.status, 403);
    t.equal(block.json.message, 'configmaps "blocker" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can\'t set finalizers on: test says no, <nil>');
    const admin = await put('/api/v1/namespaces/default/configmaps/plain', { ...plain.json, metadata: { ...plain.json.metadata, ownerReferences: ref(true) } });
    t.equal(admin.status, 200, 'allowed for a user who may');
  });
});

// ------------------------------------------------------------------ small servers

t.test('NamespaceExists and DenyExecOnPrivileged', async (t) => {
  const s = await withServer(t, { args: ['--authorization-mode=AlwaysAllow', '--enable-admission-plugins=NamespaceExists,DenyExecOnPrivileged,AlwaysAdmit', '--disable-admission-plugins=NamespaceLifecycle'] });
  const r = await s.request('POST', '/api/v1/namespaces/nowhere/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } });
  t.equal(r.status, 404);
  t.equal(r.json.message, 'namespaces "nowhere" not found');
  t.equal((await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('priv', { containers: [{ name: 'c', image: 'busybox', securityContext: { privileged: true } }] }) })).status, 201);
  t.equal((await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('hostpid', { hostPID: true }) })).status, 201);
  const priv = await s.request('POST', '/api/v1/namespaces/default/pods/priv/exec?command=sh');
  t.equal(priv.status, 403);
  t.equal(priv.json.message, 'pods "priv" is forbidden: cannot exec into or attach to a privileged container');
  t.equal((await s.request('POST', '/api/v1/namespaces/default/pods/hostpid/exec?command=sh')).json.message, 'pod hostpid does not have a host assigned', 'host namespaces are not this plugin\'s concern');
});

t.test('AlwaysDeny', async (t) => {
  // AlwaysDeny also refuses the server's own first-start writes (the system namespaces), so the data
  // directory is prepared by a start without it.
  const first = await startServer({ args: ['--authorization-mode=AlwaysAllow'] });
  await first.stop();
  const s = await withServer(t, { dataDir: first.dataDir, args: ['--authorization-mode=AlwaysAllow', '--enable-admission-plugins=AlwaysDeny'] });
  const r = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } });
  t.equal(r.status, 403);
  t.equal(r.json.message, 'configmaps "x" is forbidden: admission control is denying all modifications');
  t.equal((await s.get('/api/v1/namespaces/default/configmaps')).status, 200, 'reads are not admission\'s business');
});

t.test('storage protection: a claim goes once no pod uses it', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes', args: ['--authorization-mode=AlwaysAllow'] });
  const pvc = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  const c = await s.request('POST', '/api/v1/namespaces/default/persistentvolumeclaims', { body: pvc });
  t.equal(c.status, 201, c.text);
  t.ok(c.json.metadata.finalizers.includes('kubernetes.io/pvc-protection'));
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'user' }, spec: { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] } };
  t.equal((await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod })).status, 201);
  t.equal((await s.request('DELETE', '/api/v1/namespaces/default/persistentvolumeclaims/data')).status, 200);
  await new Promise((r) => setTimeout(r, 300));
  t.equal((await s.get('/api/v1/namespaces/default/persistentvolumeclaims/data')).status, 200, 'kept while a pod uses it');
  t.equal((await s.request('DELETE', '/api/v1/namespaces/default/pods/user')).status, 200);
  let gone = false;
  for (let i = 0; i < 50 && !gone; i++) {
    gone = (await s.get('/api/v1/namespaces/default/persistentvolumeclaims/data')).status === 404;
    if (!gone) await new Promise((r) => setTimeout(r, 100));
  }
  t.ok(gone, 'removed once unused');
});
