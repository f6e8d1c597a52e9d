// Valid objects of every built-in type the reference serves, in the kubernetes brand's names: the
// seeds the differential corpus mutates field by field (generate.ts). Each is meant to be accepted
// by the reference as it is, and to set as many of its type's fields as a valid object can, so that
// the mutations reach as many of the reference's rules as possible.
//
// A seed's `name` is its id in the recorded verdicts: renaming one, or changing its object, changes
// the probes, and the replay then asks for the verdicts to be recorded again.

export interface Seed {
  /** Id of the seed in the corpus ("pod", "deployment"). */
  name: string;
  /** Collection path, with {ns} for the probe namespace: "/api/v1/namespaces/{ns}/pods". */
  path: string;
  /** The object; metadata.name is set by the runner (probes of one seed share it). */
  object: Record<string, any>;
  /** The object's name when its type dictates it (an APIService is named version.group); else the runner names it. */
  fixedName?: string;
  /** Values to try at a path beyond the generic mutations (probes "v0", "v1", ...): rules no generic mutation reaches. */
  values?: { path: (string | number)[]; try: unknown[] }[];
}

const NS = '/api/v1/namespaces/{ns}';
const container = (name: string, more: Record<string, any> = {}) => ({
  name, image: 'registry.example/app:1.0', imagePullPolicy: 'IfNotPresent',
  command: ['/bin/app'], args: ['--port=8080'], workingDir: '/work',
  ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }, { containerPort: 9090, hostPort: 9090, protocol: 'UDP' }],
  env: [
    { name: 'MODE', value: 'prod' },
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'CPU_LIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } },
    { name: 'FROM_CM', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k', optional: true } } },
  ],
  envFrom: [{ prefix: 'CFG_', configMapRef: { name: 'cm', optional: true } }],
  resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '500m', memory: '128Mi' } },
  volumeMounts: [{ name: 'data', mountPath: '/data' }, { name: 'cfg', mountPath: '/etc/cfg', readOnly: true, subPath: 'sub' }],
  livenessProbe: { httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' }, initialDelaySeconds: 5, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
  readinessProbe: { tcpSocket: { port: 'http' }, periodSeconds: 5 },
  startupProbe: { exec: { command: ['cat', '/ready'] }, failureThreshold: 30 },
  lifecycle: { preStop: { exec: { command: ['sleep', '1'] } } },
  terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File',
  securityContext: { runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] }, seccompProfile: { type: 'RuntimeDefault' } },
  ...more,
});

/** A pod spec that sets most of what a pod spec can. */
const podSpec = (restartPolicy = 'Always', deadline = true) => ({
  initContainers: [{ name: 'init', image: 'registry.example/init:1.0', command: ['/bin/init'], resources: { requests: { cpu: '50m' } } }],
  containers: [container('app')],
  volumes: [
    { name: 'data', emptyDir: { sizeLimit: '1Gi' } },
    { name: 'cfg', configMap: { name: 'cm', items: [{ key: 'k', path: 'sub/k' }], defaultMode: 420, optional: true } },
    { name: 'sec', secret: { secretName: 'sec', defaultMode: 256, optional: true } },
    { name: 'host', hostPath: { path: '/var/log', type: 'Directory' } },
    { name: 'claim', persistentVolumeClaim: { claimName: 'pvc', readOnly: true } },
    { name: 'proj', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600, audience: 'api' } }, { downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } }] } },
  ],
  restartPolicy, terminationGracePeriodSeconds: 30, ...(deadline ? { activeDeadlineSeconds: 3600 } : {}), dnsPolicy: 'ClusterFirst',
  dnsConfig: { nameservers: ['10.96.0.10'], searches: ['svc.cluster.local'], options: [{ name: 'ndots', value: '2' }] },
  nodeSelector: { 'kubernetes.io/os': 'linux' },
  serviceAccountName: 'default', automountServiceAccountToken: false,
  hostname: 'host-a', subdomain: 'sub',
  securityContext: { runAsUser: 1000, runAsGroup: 1000, fsGroup: 2000, supplementalGroups: [3000], fsGroupChangePolicy: 'OnRootMismatch', sysctls: [{ name: 'net.ipv4.ip_local_port_range', value: '1024 65535' }] },
  affinity: {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }] },
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, preference: { matchExpressions: [{ key: 'disk', operator: 'Exists' }] } }],
    },
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' } }],
    },
  },
  tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
  hostAliases: [{ ip: '10.0.0.1', hostnames: ['db.local'] }],
  topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } }],
  readinessGates: [{ conditionType: 'example.com/ready' }],
  enableServiceLinks: false, preemptionPolicy: 'PreemptLowerPriority',
  os: { name: 'linux' },
});

/** A pod template; controllers of long-running pods refuse activeDeadlineSeconds in theirs. */
const template = (restartPolicy = 'Always', deadline = false) => ({ metadata: { labels: { app: 'web' }, annotations: { 'example.com/a': 'b' } }, spec: podSpec(restartPolicy, deadline) });
const GCE_PD_TEMPLATE = { metadata: { labels: { app: 'pd' } }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1.0' }], volumes: [{ name: 'pd', gcePersistentDisk: { pdName: 'disk-1', fsType: 'ext4', partition: 1, readOnly: true } }] } };
const selector = { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] };

const webhookClient = { service: { namespace: 'default', name: 'hook', path: '/validate', port: 443 }, caBundle: 'Y2E=' };
const webhookRules = [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }];
const webhook = (name: string, more: Record<string, any> = {}) => ({
  name, clientConfig: webhookClient, rules: webhookRules, failurePolicy: 'Fail', matchPolicy: 'Equivalent',
  namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] }, objectSelector: { matchLabels: { hook: 'on' } },
  sideEffects: 'None', timeoutSeconds: 5, admissionReviewVersions: ['v1'],
  matchConditions: [{ name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" }], ...more,
});

/** A PKCS#10 request (CN=probe, a P-256 key), base64 of its PEM: made once with openssl for the corpus. */
const CSR_PEM_B64 = Buffer.from([
  '-----BEGIN CERTIFICATE REQUEST-----',
  'MIHKMHICAQAwEDEOMAwGA1UEAwwFcHJvYmUwWTATBgcqhkjOPQIBBggqhkjOPQMB',
  'BwNCAAQGADyo/XVBdqLNiDL1NB86tVV0i5ipkKyDrIm6gXXZbJbH1jpLoDywSJfR',
  '1IFBPu5DMaA3/0deJRM49xPJWItcoAAwCgYIKoZIzj0EAwIDSAAwRQIhAO3WkP5U',
  'uJbdlRkrMIHCz5WzcnVgOuR0fH5zKYNxmG0WAiA9q2930f3o8tes4o9tRVJ6qfDf',
  'jaMdwVVz2pj5i7XvzA==',
  '-----END CERTIFICATE REQUEST-----',
  '',
].join('\n')).toString('base64');

/** Schedules the reference's cron parser reads or refuses: bounds, ranges, steps, names, descriptors. */
const CRON_SCHEDULES = ['61 * * * *', '* 24 * * *', '0 0 0 * *', '0 0 32 * *', '0 0 * 13 *', '0 0 * * 7', '5-1 * * * *', '*/0 * * * *', '1-2-3 * * * *',
  '1/2/3 * * * *', 'x * * * *', '-1 * * * *', '0 0 * JAN-MAR MON-FRI', '0 0 * foo *', '0,,5 * * * *', '5/15 * * * *', '? * * * *', '@every 5m', '@weekly',
  '@bogus', 'CRON_TZ=Etc/UTC 0 0 * * *', '99999999999999999999 * * * *', '0 0 * * sun-sat/2', '* * * * * *'];

const MATCH_EXPRESSIONS = ['object.spec.enabled', 'request.dryRun', "object.metadata.name == 'x'", 'has(object.spec)', 'true ? object.a : false', 'size(object.metadata.labels)',
  "object.metadata.name.startsWith('a')", '[true]', "object['x']", "request.userInfo.groups.exists(g, g == 'a')", 'request.userInfo.groups.map(g, g)',
  "authorizer.group('').resource('pods').check('get').allowed()", '1 + 2', 'object', '!object.x', "request.userInfo.groups.exists_one(g, g == 'a')", 'request.name', 'oldObject == null'];
// ---------------------------------------------------------------- volume sources
// Every vendor source a pod volume may use, each with its fields set, in one pod: their rules are
// checked per volume, so one pod proves them all. The PV seeds set the PersistentVolume flavours.
const vendorVolumes = [
  { name: 'git', gitRepo: { repository: 'https://git.example/repo.git', revision: 'main', directory: 'src' } },
  { name: 'gce', gcePersistentDisk: { pdName: 'disk-1', fsType: 'ext4', partition: 1, readOnly: true } },
  { name: 'ebs', awsElasticBlockStore: { volumeID: 'vol-1', fsType: 'ext4', partition: 2, readOnly: true } },
  { name: 'nfs', nfs: { server: 'nfs.example', path: '/exports', readOnly: true } },
  { name: 'iscsi', iscsi: { targetPortal: '10.0.0.1:3260', iqn: 'iqn.2001-04.com.example:storage', lun: 1, iscsiInterface: 'default', fsType: 'ext4', readOnly: true, portals: ['10.0.0.2:3260'], chapAuthDiscovery: true, chapAuthSession: true, secretRef: { name: 'chap' }, initiatorName: 'iqn.2026-01.com.example:node1' } },
  { name: 'gluster', glusterfs: { endpoints: 'gluster', path: 'vol', readOnly: true } },
  { name: 'flocker', flocker: { datasetName: 'ds' } },
  { name: 'rbd', rbd: { monitors: ['10.0.0.3:6789'], image: 'img', fsType: 'ext4', pool: 'kube', user: 'kube', keyring: '/etc/ceph/kr', secretRef: { name: 'ceph' }, readOnly: true } },
  { name: 'cinder', cinder: { volumeID: 'c-1', fsType: 'ext4', readOnly: true, secretRef: { name: 'os' } } },
  { name: 'cephfs', cephfs: { monitors: ['10.0.0.3:6789'], path: '/', user: 'admin', secretFile: '/etc/ceph/secret', secretRef: { name: 'ceph' }, readOnly: true } },
  { name: 'quobyte', quobyte: { registry: 'reg1:7861,reg2:7861', volume: 'vol', readOnly: true, user: 'u', group: 'g', tenant: 'tenant-1' } },
  { name: 'fc', fc: { targetWWNs: ['500a0982991b8dc5'], lun: 2, fsType: 'ext4', readOnly: true } },
  { name: 'flex', flexVolume: { driver: 'example.com/flex', fsType: 'ext4', secretRef: { name: 'flex' }, readOnly: true, options: { 'example.com/size': '1' } } },
  { name: 'azfile', azureFile: { secretName: 'az', shareName: 'share', readOnly: true } },
  { name: 'vsphere', vsphereVolume: { volumePath: '[ds] vol.vmdk', fsType: 'ext4', storagePolicyName: 'gold', storagePolicyID: 'p-1' } },
  { name: 'photon', photonPersistentDisk: { pdID: 'pd-1', fsType: 'ext4' } },
  { name: 'pwx', portworxVolume: { volumeID: 'px-1', fsType: 'ext4', readOnly: true } },
  { name: 'azdisk', azureDisk: { diskName: 'd1', diskURI: 'https://acct.blob.core.windows.net/vhds/d1.vhd', cachingMode: 'ReadOnly', fsType: 'ext4', readOnly: true, kind: 'Dedicated' } },
  { name: 'sos', storageos: { volumeName: 'vol-a', volumeNamespace: 'team-a', fsType: 'ext4', readOnly: true, secretRef: { name: 'sos' } } },
  { name: 'sio', scaleIO: { gateway: 'https://sio.example/api', system: 'sys', secretRef: { name: 'sio' }, sslEnabled: true, protectionDomain: 'pd', storagePool: 'sp', storageMode: 'ThickProvisioned', volumeName: 'vol', fsType: 'xfs', readOnly: true } },
  { name: 'csi', csi: { driver: 'csi.example.com', readOnly: true, fsType: 'ext4', volumeAttributes: { size: '1Gi' }, nodePublishSecretRef: { name: 'csi-secret' } } },
];
const vol = (name: string) => vendorVolumes.findIndex((v) => v.name === name);
const bareContainer = { name: 'app', image: 'registry.example/app:1.0', volumeMounts: [{ name: 'nfs', mountPath: '/nfs' }] };
/** iSCSI names in each form, well and badly made. */
const ISCSI_NAMES = ['eui.0123456789ABCDEF', 'naa.0123456789abcdef0123456789abcdef', 'eui.123', 'naa.1', 'iqn.2001-04.com.example', 'iqn.2001-04.com.example:a b', 'iqn.01-04.com.example:a', 'xyz.2001-04.com.example:a', 'x-iqn.2001-04.com.example:a'];
const vendorValues: Seed['values'] = [
  { path: ['spec', 'volumes', vol('iscsi'), 'iscsi', 'iqn'], try: ISCSI_NAMES },
  { path: ['spec', 'volumes', vol('iscsi'), 'iscsi', 'initiatorName'], try: ISCSI_NAMES },
  { path: ['spec', 'volumes', vol('iscsi'), 'iscsi'], try: [{ targetPortal: '10.0.0.1:3260', iqn: 'iqn.2001-04.com.example:s', chapAuthSession: true }, { targetPortal: `${'a'.repeat(50)}:3260`, iqn: 'iqn.2001-04.com.example:s', initiatorName: 'iqn.2026-01.com.example:n' }, { targetPortal: 'p', iqn: 'naa.x', lun: 256 }] },
  { path: ['spec', 'volumes', vol('flocker'), 'flocker'], try: [{ datasetUUID: 'u-1' }, { datasetName: 'a', datasetUUID: 'u-1' }, { datasetName: 'a/b' }, {}] },
  { path: ['spec', 'volumes', vol('fc'), 'fc'], try: [{ wwids: ['w-1'] }, { targetWWNs: ['a'], wwids: ['w-1'], lun: 1 }, { targetWWNs: ['a'] }, { targetWWNs: ['a'], lun: 256 }, { lun: 1 }] },
  { path: ['spec', 'volumes', vol('quobyte'), 'quobyte', 'registry'], try: ['host', '[::1]:80', '[::1]', 'a:b:c', '[a]b:1', 'h:1,', 'h:1,[x]:2', '[h:1', 'h]:1', 'a[b:1'] },
  { path: ['spec', 'volumes', vol('quobyte'), 'quobyte'], try: [{ registry: 'r:1', volume: 'v', tenant: 't'.repeat(65) }, { registry: '', volume: '', tenant: 't'.repeat(65) }, { registry: 'bad', volume: 'v', tenant: 't'.repeat(64) }] },
  { path: ['spec', 'volumes', vol('flex'), 'flexVolume', 'options'], try: [{ 'kubernetes.io/x': 'a' }, { 'foo.k8s.io': 'b' }, { 'Example.Kubernetes.IO/y': 'c' }, { 'k8s.io': 'x' }, { 'notk8s.io/z': 'y', 'a.k8s.io/b/c': 'd' }] },
  { path: ['spec', 'volumes', vol('azdisk'), 'azureDisk'], try: [{ diskName: 'd', diskURI: 'https://a/b.vhd', kind: 'Managed' }, { diskName: 'd', diskURI: '/subscriptions/s/x', kind: 'Managed' }, { diskName: 'd', diskURI: '/subscriptions/s/x' }, { diskName: 'd', diskURI: 'http://a', kind: 'Shared', cachingMode: 'Bad' }, { diskName: 'd', diskURI: '', kind: 'Bad' }] },
  { path: ['spec', 'volumes', vol('csi'), 'csi'], try: [{ driver: 'CSI.Example.com' }, { driver: 'csi.example.com', nodePublishSecretRef: { name: 'Bad_Name' } }, { driver: 'csi.example.com', nodePublishSecretRef: {} }, { driver: `${'d'.repeat(64)}.com` }, { driver: '' }] },
  { path: ['spec', 'volumes', vol('sos'), 'storageos'], try: [{ volumeName: 'Bad_Name', volumeNamespace: 'Bad_NS' }, { volumeName: 'v', secretRef: {} }, {}] },
  { path: ['spec', 'volumes', vol('git'), 'gitRepo', 'directory'], try: ['/abs', '../x', 'a/../b', '.', '..'] },
  { path: ['spec', 'volumes', vol('nfs'), 'nfs', 'path'], try: ['relative', ''] },
  { path: ['spec', 'volumes', vol('gce'), 'gcePersistentDisk', 'partition'], try: [256, 255, 0] },
  { path: ['spec', 'volumes', vol('cinder'), 'cinder', 'secretRef'], try: [{}, { name: 'x', namespace: 'y' }] },
  { path: ['spec', 'volumes', vol('rbd'), 'rbd'], try: [{ monitors: [], image: '' }] },
];
/** An ephemeral volume's claim template with its metadata and every claim spec field set. */
const claimTemplate = {
  metadata: { labels: { app: 'web' }, annotations: { 'example.com/a': 'b' } },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' }, limits: { storage: '2Gi' } }, storageClassName: 'standard', volumeMode: 'Filesystem', selector: { matchLabels: { tier: 'fast' }, matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, dataSource: { kind: 'PersistentVolumeClaim', name: 'src' }, dataSourceRef: { kind: 'PersistentVolumeClaim', name: 'src' } },
};
const templateMetaValues = (prefix: (string | number)[]): Seed['values'] => [
  { path: [...prefix, 'metadata'], try: [{ name: 'n' }, { namespace: 'x', generateName: 'g' }, { uid: 'u-1' }, { finalizers: ['example.com/f'] }, { finalizers: [] }, { generation: 0 }, { generation: 2, resourceVersion: '5', selfLink: '/x' }, { creationTimestamp: '2026-01-01T00:00:00Z' }, { deletionGracePeriodSeconds: 0 }, { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u' }] }, { labels: { 'bad key!': 'v' }, annotations: { 'a/b/c': 'v' } }] },
  { path: [...prefix, 'spec'], try: [{}, { accessModes: ['ReadWriteOncePod', 'ReadWriteOnce'], resources: { requests: { storage: '0' } } }, { accessModes: ['Bad'], resources: { requests: { storage: '1Gi' } }, dataSourceRef: { kind: 'Snap', name: 's', namespace: 'Bad_NS' }, dataSource: { kind: 'X', name: 'y' } }] },
];
const ephemeralSpec = (prefix: string) => ({ containers: [{ name: 'app', image: 'registry.example/app:1.0', volumeMounts: [{ name: 'scratch', mountPath: `/${prefix}` }] }], volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: claimTemplate } }] });
const pv = (source: Record<string, any>, more: Record<string, any> = {}, metadata: Record<string, any> = {}) => ({ apiVersion: 'v1', kind: 'PersistentVolume', metadata, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', ...source, ...more } });
const MOUNT_OPTIONS = 'volume.beta.kubernetes.io/mount-options';
const PVS = '/api/v1/persistentvolumes';
const localAffinity = { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }] }] } } };
const VOLUME_SEEDS: Seed[] = [
  { name: 'pod-vendor-volumes', path: `${NS}/pods`, object: { apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: { containers: [bareContainer], volumes: vendorVolumes } }, values: vendorValues },
  { name: 'pod-ephemeral-volume', path: `${NS}/pods`, object: { apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: ephemeralSpec('scratch') }, values: [...templateMetaValues(['spec', 'volumes', 0, 'ephemeral', 'volumeClaimTemplate'])!, { path: ['spec', 'volumes', 0, 'name'], try: ['x'.repeat(63)] }] },
  { name: 'podtemplate-ephemeral-volume', path: `${NS}/podtemplates`, object: { apiVersion: 'v1', kind: 'PodTemplate', metadata: {}, template: { metadata: { labels: { app: 'web' } }, spec: ephemeralSpec('scratch') } }, values: templateMetaValues(['template', 'spec', 'volumes', 0, 'ephemeral', 'volumeClaimTemplate']) },
  { name: 'pv-gce', path: PVS, object: pv({ gcePersistentDisk: { pdName: 'disk-1', fsType: 'ext4', partition: 1, readOnly: true } }, { mountOptions: ['ro'] }, { annotations: { [MOUNT_OPTIONS]: 'ro' } }) },
  { name: 'pv-aws', path: PVS, object: pv({ awsElasticBlockStore: { volumeID: 'vol-1', fsType: 'ext4', partition: 3, readOnly: true } }) },
  { name: 'pv-glusterfs', path: PVS, object: pv({ glusterfs: { endpoints: 'gluster', path: 'vol', readOnly: true, endpointsNamespace: 'storage' } }), values: [{ path: ['spec', 'glusterfs', 'endpointsNamespace'], try: [''] }] },
  { name: 'pv-flocker', path: PVS, object: pv({ flocker: { datasetUUID: 'uuid-1' } }) },
  { name: 'pv-nfs', path: PVS, object: pv({ nfs: { server: 'nfs.example', path: '/exports', readOnly: true } }, {}, { annotations: { [MOUNT_OPTIONS]: 'hard,nfsvers=4.1' } }), values: [{ path: ['spec', 'nfs', 'path'], try: ['relative'] }] },
  { name: 'pv-rbd', path: PVS, object: pv({ rbd: { monitors: ['10.0.0.3:6789'], image: 'img', fsType: 'ext4', pool: 'kube', user: 'kube', keyring: '/etc/ceph/kr', secretRef: { name: 'ceph', namespace: 'storage' }, readOnly: true } }) },
  { name: 'pv-quobyte', path: PVS, object: pv({ quobyte: { registry: 'reg1:7861', volume: 'vol', readOnly: true, user: 'u', group: 'g', tenant: 'tenant-1' } }) },
  { name: 'pv-cephfs', path: PVS, object: pv({ cephfs: { monitors: ['10.0.0.3:6789'], path: '/', user: 'admin', secretFile: '/etc/ceph/secret', secretRef: { name: 'ceph', namespace: 'storage' }, readOnly: true } }) },
  { name: 'pv-iscsi', path: PVS, object: pv({ iscsi: { targetPortal: '10.0.0.1:3260', iqn: 'iqn.2001-04.com.example:storage', lun: 1, iscsiInterface: 'default', fsType: 'ext4', readOnly: true, portals: ['10.0.0.2:3260'], chapAuthDiscovery: true, chapAuthSession: true, secretRef: { name: 'chap', namespace: 'storage' }, initiatorName: 'iqn.2026-01.com.example:node1' } }), values: [{ path: ['spec', 'iscsi', 'iqn'], try: ISCSI_NAMES }, { path: ['spec', 'iscsi', 'initiatorName'], try: ISCSI_NAMES }, { path: ['spec', 'iscsi', 'targetPortal'], try: [`${'a'.repeat(45)}:3260`] }] },
  { name: 'pv-cinder', path: PVS, object: pv({ cinder: { volumeID: 'c-1', fsType: 'ext4', readOnly: true, secretRef: { name: 'os', namespace: 'storage' } } }) },
  { name: 'pv-fc', path: PVS, object: pv({ fc: { wwids: ['3600508b400105e210000900000490000'], fsType: 'ext4', readOnly: true } }) },
  { name: 'pv-flex', path: PVS, object: pv({ flexVolume: { driver: 'example.com/flex', fsType: 'ext4', secretRef: { name: 'flex', namespace: 'storage' }, readOnly: true, options: { 'example.com/size': '1' } } }), values: [{ path: ['spec', 'nfs'], try: [{ server: 's', path: '/p' }] }] },
  { name: 'pv-azurefile', path: PVS, object: pv({ azureFile: { secretName: 'az', shareName: 'share', readOnly: true, secretNamespace: 'storage' } }) },
  { name: 'pv-vsphere', path: PVS, object: pv({ vsphereVolume: { volumePath: '[ds] vol.vmdk', fsType: 'ext4', storagePolicyName: 'gold', storagePolicyID: 'p-1' } }) },
  { name: 'pv-photon', path: PVS, object: pv({ photonPersistentDisk: { pdID: 'pd-1', fsType: 'ext4' } }) },
  { name: 'pv-portworx', path: PVS, object: pv({ portworxVolume: { volumeID: 'px-1', fsType: 'ext4', readOnly: true } }) },
  { name: 'pv-azuredisk', path: PVS, object: pv({ azureDisk: { diskName: 'd1', diskURI: '/subscriptions/s/resourcegroups/g/providers/microsoft.compute/disks/d1', cachingMode: 'None', fsType: 'ext4', readOnly: true, kind: 'Managed' } }) },
  { name: 'pv-scaleio', path: PVS, object: pv({ scaleIO: { gateway: 'https://sio.example/api', system: 'sys', secretRef: { name: 'sio', namespace: 'storage' }, sslEnabled: true, protectionDomain: 'pd', storagePool: 'sp', storageMode: 'ThinProvisioned', volumeName: 'vol', fsType: 'xfs', readOnly: true } }) },
  { name: 'pv-storageos', path: PVS, object: pv({ storageos: { volumeName: 'vol-a', volumeNamespace: 'team-a', fsType: 'ext4', readOnly: true, secretRef: { kind: 'Secret', name: 'sos', namespace: 'storage' } } }) },
  { name: 'pv-local', path: PVS, object: pv({ local: { path: '/mnt/disks/ssd1', fsType: 'ext4' } }, localAffinity), values: [{ path: ['spec', 'local', 'path'], try: ['/mnt/../etc', 'rel/path'] }, { path: ['metadata', 'annotations'], try: [{ [MOUNT_OPTIONS]: 'ro' }] }] },
  { name: 'pv-csi-secrets', path: PVS, object: pv({ csi: { driver: 'csi.example.com', volumeHandle: 'vol-1', readOnly: true, fsType: 'ext4', volumeAttributes: { a: 'b' }, controllerPublishSecretRef: { name: 'cp', namespace: 'storage' }, nodeStageSecretRef: { name: 'ns', namespace: 'storage' }, nodePublishSecretRef: { name: 'np', namespace: 'storage' }, controllerExpandSecretRef: { name: 'ce', namespace: 'storage' }, nodeExpandSecretRef: { name: 'ne', namespace: 'storage' } } }), values: [{ path: ['metadata', 'annotations'], try: [{ [MOUNT_OPTIONS]: 'ro' }] }] },
];

export const SEEDS: Seed[] = [
  // ---------------------------------------------------------------- core/v1
  { name: 'pod', path: `${NS}/pods`, object: { apiVersion: 'v1', kind: 'Pod', metadata: { labels: { app: 'web' }, annotations: { 'example.com/a': 'b' } }, spec: podSpec() },
    // fields of features 1.28 leaves off: dropped before validation there
    values: [
      { path: ['spec', 'hostUsers'], try: [false] }, { path: ['spec', 'resourceClaims'], try: [[{ name: 'Bad Name!' }]] },
      { path: ['spec', 'containers', 0, 'resizePolicy'], try: [[{ resourceName: 'cpu', restartPolicy: 'Bogus' }]] },
      { path: ['spec', 'containers', 0, 'resources', 'claims'], try: [[{ name: 'Bad Name!' }]] },
      { path: ['spec', 'initContainers', 0, 'restartPolicy'], try: ['Always', 'Bogus'] },
      { path: ['spec', 'containers', 0, 'securityContext', 'procMount'], try: ['Unmasked', 'Bogus'] },
      { path: ['spec', 'topologySpreadConstraints', 0, 'matchLabelKeys'], try: [['pod-template-hash'], ['app'], ['Bad Key!'], ['a', 'a']] },
    ] },
  // Windows host-process pods: on the host network, every container one
  { name: 'pod-windows-hostprocess', path: `${NS}/pods`, object: { apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: {
    os: { name: 'windows' }, hostNetwork: true, securityContext: { windowsOptions: { hostProcess: true, runAsUserName: 'NT AUTHORITY\\SYSTEM' } },
    containers: [{ name: 'a', image: 'registry.example/win:1.0', securityContext: { windowsOptions: { hostProcess: true } } }, { name: 'b', image: 'registry.example/win:1.0' }],
  } }, values: [{ path: ['spec', 'containers', 1, 'securityContext'], try: [{ windowsOptions: { hostProcess: false } }] }, { path: ['spec', 'hostNetwork'], try: [false] }] },
  { name: 'podtemplate', path: `${NS}/podtemplates`, object: { apiVersion: 'v1', kind: 'PodTemplate', metadata: {}, template: template('Always', true) } },
  { name: 'replicationcontroller', path: `${NS}/replicationcontrollers`, object: { apiVersion: 'v1', kind: 'ReplicationController', metadata: {}, spec: { replicas: 2, minReadySeconds: 5, selector: { app: 'web' }, template: template() } } },
  { name: 'service-clusterip', path: `${NS}/services`, object: { apiVersion: 'v1', kind: 'Service', metadata: {}, spec: { type: 'ClusterIP', selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }, { name: 'dns', port: 53, targetPort: 5353, protocol: 'UDP' }], sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } }, ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv4'], internalTrafficPolicy: 'Cluster', publishNotReadyAddresses: true } } },
  { name: 'service-lb', path: `${NS}/services`, object: { apiVersion: 'v1', kind: 'Service', metadata: {}, spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ name: 'https', port: 443, targetPort: 8443, protocol: 'TCP' }], externalTrafficPolicy: 'Local', loadBalancerSourceRanges: ['10.0.0.0/8'], externalIPs: ['192.0.2.10'], allocateLoadBalancerNodePorts: true, loadBalancerClass: 'example.com/lb' } } },
  { name: 'service-externalname', path: `${NS}/services`, object: { apiVersion: 'v1', kind: 'Service', metadata: {}, spec: { type: 'ExternalName', externalName: 'db.example.com' } } },
  { name: 'configmap', path: `${NS}/configmaps`, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: {}, data: { 'app.conf': 'a=b', 'key-2': 'v' }, binaryData: { bin: 'AAEC' } } },
  { name: 'secret', path: `${NS}/secrets`, object: { apiVersion: 'v1', kind: 'Secret', metadata: {}, type: 'Opaque', data: { password: 'cGFzcw==' }, stringData: { user: 'admin' } } },
  { name: 'secret-tls', path: `${NS}/secrets`, object: { apiVersion: 'v1', kind: 'Secret', metadata: {}, type: 'kubernetes.io/tls', data: { 'tls.crt': 'Y3J0', 'tls.key': 'a2V5' } } },
  { name: 'serviceaccount', path: `${NS}/serviceaccounts`, object: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: {}, secrets: [{ name: 'tok' }], imagePullSecrets: [{ name: 'pull' }], automountServiceAccountToken: false } },
  { name: 'endpoints', path: `${NS}/endpoints`, object: { apiVersion: 'v1', kind: 'Endpoints', metadata: {}, subsets: [{ addresses: [{ ip: '10.1.2.3', hostname: 'a', nodeName: 'n1', targetRef: { kind: 'Pod', name: 'p', namespace: 'probes' } }], notReadyAddresses: [{ ip: '10.1.2.4' }], ports: [{ name: 'http', port: 8080, protocol: 'TCP', appProtocol: 'http' }] }] } },
  { name: 'limitrange', path: `${NS}/limitranges`, object: { apiVersion: 'v1', kind: 'LimitRange', metadata: {}, spec: { limits: [{ type: 'Container', max: { cpu: '2', memory: '1Gi' }, min: { cpu: '10m', memory: '4Mi' }, default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m', memory: '64Mi' }, maxLimitRequestRatio: { cpu: '10' } }, { type: 'PersistentVolumeClaim', max: { storage: '10Gi' }, min: { storage: '1Gi' } }] } } },
  { name: 'resourcequota', path: `${NS}/resourcequotas`, object: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: {}, spec: { hard: { cpu: '20', memory: '10Gi', pods: '50', 'requests.storage': '100Gi', 'count/deployments.apps': '10' } } } },
  { name: 'resourcequota-scopes', path: `${NS}/resourcequotas`, object: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: {}, spec: { hard: { pods: '10', cpu: '4' }, scopes: ['NotTerminating', 'NotBestEffort'] } } },
  { name: 'resourcequota-scoped', path: `${NS}/resourcequotas`, object: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: {}, spec: { hard: { pods: '5' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } } } },
  // the beta storage-class annotation's upgrade path: a class may be set on update when it names the annotation's
  { name: 'persistentvolumeclaim-beta-class', path: `${NS}/persistentvolumeclaims`, object: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { annotations: { 'volume.beta.kubernetes.io/storage-class': 'fast' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    values: [{ path: ['spec', 'storageClassName'], try: ['fast', 'slow', ''] }, { path: ['metadata', 'annotations', 'volume.beta.kubernetes.io/storage-class'], try: ['slow', ''] }] },
  { name: 'persistentvolumeclaim', path: `${NS}/persistentvolumeclaims`, object: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: {}, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' }, limits: { storage: '2Gi' } }, storageClassName: 'standard', volumeMode: 'Filesystem', selector: { matchLabels: { tier: 'fast' } } } } },
  { name: 'persistentvolume', path: '/api/v1/persistentvolumes', object: { apiVersion: 'v1', kind: 'PersistentVolume', metadata: {}, spec: { capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce', 'ReadOnlyMany'], persistentVolumeReclaimPolicy: 'Retain', storageClassName: 'standard', volumeMode: 'Filesystem', mountOptions: ['ro'], hostPath: { path: '/mnt/data', type: 'DirectoryOrCreate' }, nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }] }] } } } } },
  { name: 'persistentvolume-csi', path: '/api/v1/persistentvolumes', object: { apiVersion: 'v1', kind: 'PersistentVolume', metadata: {}, spec: { capacity: { storage: '5Gi' }, accessModes: ['ReadWriteMany'], persistentVolumeReclaimPolicy: 'Delete', csi: { driver: 'csi.example.com', volumeHandle: 'vol-1', fsType: 'ext4', volumeAttributes: { a: 'b' } } } } },
  { name: 'node', path: '/api/v1/nodes', object: { apiVersion: 'v1', kind: 'Node', metadata: { labels: { 'kubernetes.io/hostname': 'n1' } }, spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'], providerID: 'example://n1', taints: [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }] }, status: { capacity: { cpu: '4', memory: '8Gi', pods: '110' }, allocatable: { cpu: '3900m', memory: '7Gi', pods: '110' }, addresses: [{ type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'n1' }], daemonEndpoints: { kubeletEndpoint: { Port: 10250 } }, nodeInfo: { machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: '6.1.0', osImage: 'Debian GNU/Linux 12', containerRuntimeVersion: 'containerd://1.7.0', kubeletVersion: 'v1.28.7', kubeProxyVersion: 'v1.28.7', operatingSystem: 'linux', architecture: 'amd64' } } } },
  { name: 'namespace', path: '/api/v1/namespaces', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { labels: { team: 'a' } }, spec: { finalizers: ['kubernetes'] } } },
  { name: 'event', path: `${NS}/events`, object: { apiVersion: 'v1', kind: 'Event', metadata: {}, involvedObject: { kind: 'Pod', name: 'p', namespace: 'probes', apiVersion: 'v1' }, reason: 'Started', message: 'started', source: { component: 'kubelet', host: 'n1' }, firstTimestamp: '2026-01-01T00:00:00Z', lastTimestamp: '2026-01-01T00:00:01Z', count: 2, type: 'Normal', reportingComponent: 'kubelet', reportingInstance: 'n1' } },
  // ---------------------------------------------------------------- apps/v1
  { name: 'deployment', path: '/apis/apps/v1/namespaces/{ns}/deployments', object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { labels: { app: 'web' } }, spec: { replicas: 3, selector, template: template(), strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } }, minReadySeconds: 5, revisionHistoryLimit: 5, progressDeadlineSeconds: 600 } } },
  // a GCE disk mounts on several machines only read-only: templates of more than one pod
  ...(['ReplicaSet', 'Deployment', 'DaemonSet', 'ReplicationController'] as const).map((kind): Seed => {
    const daemon = kind === 'DaemonSet', rc = kind === 'ReplicationController';
    return {
      name: `${kind.toLowerCase()}-gce-pd`, path: rc ? `${NS}/replicationcontrollers` : `/apis/apps/v1/namespaces/{ns}/${kind.toLowerCase()}s`,
      object: { apiVersion: rc ? 'v1' : 'apps/v1', kind, metadata: {}, spec: { ...(daemon ? {} : { replicas: 2 }), selector: rc ? { app: 'pd' } : { matchLabels: { app: 'pd' } }, template: GCE_PD_TEMPLATE } },
      values: [{ path: ['spec', 'template', 'spec', 'volumes', 0, 'gcePersistentDisk', 'readOnly'], try: [false] }, ...(daemon ? [] : [{ path: ['spec', 'replicas'], try: [1, 0] }])],
    };
  }),
  { name: 'replicaset', path: '/apis/apps/v1/namespaces/{ns}/replicasets', object: { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: {}, spec: { replicas: 2, minReadySeconds: 1, selector, template: template() } } },
  { name: 'statefulset', path: '/apis/apps/v1/namespaces/{ns}/statefulsets', object: { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {}, spec: { replicas: 2, serviceName: 'web', selector, template: template(), podManagementPolicy: 'Parallel', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1, maxUnavailable: 1 } }, revisionHistoryLimit: 3, minReadySeconds: 2, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' }, volumeClaimTemplates: [{ metadata: { name: 'www' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] } } },
  { name: 'daemonset', path: '/apis/apps/v1/namespaces/{ns}/daemonsets', object: { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: {}, spec: { selector, template: template(), updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } }, minReadySeconds: 1, revisionHistoryLimit: 4 } } },
  { name: 'controllerrevision', path: '/apis/apps/v1/namespaces/{ns}/controllerrevisions', object: { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: {}, data: { spec: { template: { spec: { containers: [{ name: 'c', image: 'x' }] } } } }, revision: 3 } },
  // ---------------------------------------------------------------- batch/v1
  { name: 'job', path: '/apis/batch/v1/namespaces/{ns}/jobs', object: { apiVersion: 'batch/v1', kind: 'Job', metadata: {}, spec: { parallelism: 2, completions: 4, completionMode: 'Indexed', backoffLimit: 3, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 100, suspend: false, template: template('Never', true), podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { containerName: 'app', operator: 'In', values: [42] } }, { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] } } },
    values: [{ path: ['spec', 'backoffLimitPerIndex'], try: [-1, 2] }, { path: ['spec', 'maxFailedIndexes'], try: [-1, 1] }, { path: ['spec', 'podReplacementPolicy'], try: ['Bogus', 'Failed'] }, { path: ['spec', 'podFailurePolicy', 'rules', 0, 'action'], try: ['FailIndex'] }] },
  { name: 'cronjob', path: '/apis/batch/v1/namespaces/{ns}/cronjobs', object: { apiVersion: 'batch/v1', kind: 'CronJob', metadata: {}, spec: { schedule: '*/5 * * * *', timeZone: 'Etc/UTC', concurrencyPolicy: 'Forbid', startingDeadlineSeconds: 60, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1, suspend: false, jobTemplate: { metadata: { labels: { app: 'web' } }, spec: { backoffLimit: 2, template: template('OnFailure') } } } },
    values: [{ path: ['spec', 'schedule'], try: CRON_SCHEDULES }] },
  // ---------------------------------------------------------------- autoscaling
  { name: 'hpa-v2', path: '/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers', object: { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: {}, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 2, maxReplicas: 10, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }, { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '100' } } }], behavior: { scaleDown: { stabilizationWindowSeconds: 300, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 50, periodSeconds: 60 }] } } } } },
  { name: 'hpa-v2-sources', path: '/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers', object: { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: {}, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' }, minReplicas: 1, maxReplicas: 4, metrics: [
    { type: 'ContainerResource', containerResource: { name: 'memory', container: 'app', target: { type: 'AverageValue', averageValue: '500Mi' } } },
    { type: 'External', external: { metric: { name: 'queue_messages', selector: { matchLabels: { queue: 'jobs' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] } }, target: { type: 'Value', value: '30' } } },
    { type: 'Object', object: { describedObject: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'main' }, metric: { name: 'requests-per-second' }, target: { type: 'AverageValue', averageValue: '10k' } } },
  ] } },
    values: [{ path: ['spec', 'metrics', 0, 'containerResource', 'name'], try: ['pods', 'example.com/gpu', 'hugepages-2Mi', 'kubernetes.io/foo', 'storage'] }, { path: ['spec', 'metrics', 1, 'external', 'metric', 'name'], try: ['a/b', '..', 'a%b'] }] },
  { name: 'hpa-v1', path: '/apis/autoscaling/v1/namespaces/{ns}/horizontalpodautoscalers', object: { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: {}, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 70 } } },
  // ---------------------------------------------------------------- named groups
  { name: 'lease', path: '/apis/coordination.k8s.io/v1/namespaces/{ns}/leases', object: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: {}, spec: { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: '2026-01-01T00:00:00.000000Z', renewTime: '2026-01-01T00:00:05.000000Z', leaseTransitions: 1 } } },
  { name: 'ingress', path: '/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses', object: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: {}, spec: { ingressClassName: 'nginx', defaultBackend: { service: { name: 'web', port: { number: 80 } } }, tls: [{ hosts: ['web.example.com'], secretName: 'tls' }], rules: [{ host: 'web.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { name: 'http' } } } }, { path: '/api', pathType: 'Exact', backend: { resource: { apiGroup: 'example.com', kind: 'Bucket', name: 'b' } } }] } }] } } },
  { name: 'ingressclass', path: '/apis/networking.k8s.io/v1/ingressclasses', object: { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: {}, spec: { controller: 'example.com/ingress', parameters: { apiGroup: 'example.com', kind: 'Params', name: 'p', scope: 'Namespace', namespace: 'default' } } } },
  { name: 'networkpolicy', path: '/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies', object: { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: {}, spec: { podSelector: { matchLabels: { app: 'web' } }, policyTypes: ['Ingress', 'Egress'], ingress: [{ from: [{ podSelector: { matchLabels: { app: 'fe' } } }, { namespaceSelector: { matchLabels: { team: 'a' } } }, { ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }], ports: [{ protocol: 'TCP', port: 80 }, { protocol: 'TCP', port: 8000, endPort: 9000 }] }], egress: [{ to: [{ ipBlock: { cidr: '0.0.0.0/0' } }], ports: [{ protocol: 'UDP', port: 'dns' }] }] } } },
  { name: 'poddisruptionbudget', path: '/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets', object: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: {}, spec: { minAvailable: '50%', selector, unhealthyPodEvictionPolicy: 'AlwaysAllow' } } },
  { name: 'poddisruptionbudget-max', path: '/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets', object: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: {}, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } } } },
  { name: 'priorityclass', path: '/apis/scheduling.k8s.io/v1/priorityclasses', object: { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: {}, value: 1000, globalDefault: false, description: 'high', preemptionPolicy: 'Never' },
    values: [{ path: ['metadata', 'name'], try: ['system-probe', 'system-node-critical', 'system-cluster-critical', 'System-probe'] }, { path: ['value'], try: [1000000001, 2000000000, -2147483648] }] },
  // a system class's name with its own value, and with another
  { name: 'priorityclass-system', path: '/apis/scheduling.k8s.io/v1/priorityclasses', object: { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: {}, value: 2000001000, description: 'system' }, fixedName: 'system-node-critical',
    values: [{ path: ['value'], try: [2000000000, 1000] }, { path: ['globalDefault'], try: [true, false] }] },
  { name: 'storageclass', path: '/apis/storage.k8s.io/v1/storageclasses', object: { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: {}, provisioner: 'csi.example.com', parameters: { type: 'ssd' }, reclaimPolicy: 'Retain', mountOptions: ['debug'], allowVolumeExpansion: true, volumeBindingMode: 'WaitForFirstConsumer', allowedTopologies: [{ matchLabelExpressions: [{ key: 'zone', values: ['a'] }] }] } },
  { name: 'csidriver', path: '/apis/storage.k8s.io/v1/csidrivers', object: { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: {}, spec: { attachRequired: true, podInfoOnMount: true, volumeLifecycleModes: ['Persistent', 'Ephemeral'], storageCapacity: true, fsGroupPolicy: 'File', tokenRequests: [{ audience: 'vault', expirationSeconds: 3600 }], requiresRepublish: false, seLinuxMount: false } } },
  { name: 'csinode', path: '/apis/storage.k8s.io/v1/csinodes', object: { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: {}, spec: { drivers: [{ name: 'csi.example.com', nodeID: 'n1', topologyKeys: ['zone'], allocatable: { count: 10 } }] } } },
  { name: 'volumeattachment', path: '/apis/storage.k8s.io/v1/volumeattachments', object: { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: {}, spec: { attacher: 'csi.example.com', nodeName: 'n1', source: { persistentVolumeName: 'pv-1' } } } },
  { name: 'csistoragecapacity', path: '/apis/storage.k8s.io/v1/namespaces/{ns}/csistoragecapacities', object: { apiVersion: 'storage.k8s.io/v1', kind: 'CSIStorageCapacity', metadata: {}, storageClassName: 'standard', nodeTopology: { matchLabels: { zone: 'a' } }, capacity: '100Gi', maximumVolumeSize: '10Gi' } },
  { name: 'endpointslice', path: '/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices', object: { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { labels: { 'kubernetes.io/service-name': 'web' } }, addressType: 'IPv4', endpoints: [{ addresses: ['10.1.2.3'], conditions: { ready: true, serving: true, terminating: false }, hostname: 'a', nodeName: 'n1', zone: 'a', targetRef: { kind: 'Pod', name: 'p', namespace: 'probes' }, hints: { forZones: [{ name: 'a' }] } }], ports: [{ name: 'http', port: 8080, protocol: 'TCP', appProtocol: 'http' }] } },
  { name: 'runtimeclass', path: '/apis/node.k8s.io/v1/runtimeclasses', object: { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: {}, handler: 'runc', overhead: { podFixed: { cpu: '10m', memory: '16Mi' } }, scheduling: { nodeSelector: { 'runtime': 'runc' }, tolerations: [{ key: 'runtime', operator: 'Exists', effect: 'NoSchedule' }] } } },
  { name: 'event-v1', path: '/apis/events.k8s.io/v1/namespaces/{ns}/events', object: { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: {}, eventTime: '2026-01-01T00:00:00.000000Z', reportingController: 'example.com/ctl', reportingInstance: 'ctl-1', action: 'Scale', reason: 'Scaled', regarding: { kind: 'Deployment', name: 'web', namespace: 'probes', apiVersion: 'apps/v1' }, note: 'scaled up', type: 'Normal' } },
  // ---------------------------------------------------------------- rbac
  { name: 'clusterrole', path: '/apis/rbac.authorization.k8s.io/v1/clusterroles', object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: {}, rules: [{ apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list'] }, { nonResourceURLs: ['/healthz', '/metrics/*'], verbs: ['get'] }] } },
  // An aggregated role's rules are a controller's to write: none match its selector, so they stay empty on either server.
  { name: 'clusterrole-aggregated', path: '/apis/rbac.authorization.k8s.io/v1/clusterroles', object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: {}, rules: [], aggregationRule: { clusterRoleSelectors: [{ matchLabels: { agg: 'probe-none' } }, { matchExpressions: [{ key: 'tier', operator: 'In', values: ['probe-none'] }] }] } } },
  { name: 'clusterrolebinding', path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: {}, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }, { kind: 'ServiceAccount', name: 'default', namespace: 'probes' }, { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' }] } },
  { name: 'role', path: '/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles', object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: {}, rules: [{ apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web'], verbs: ['get', 'update'] }] } },
  { name: 'rolebinding', path: '/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings', object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: {}, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' }, subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'probes' }] } },
  // ---------------------------------------------------------------- admissionregistration, flowcontrol
  { name: 'mutatingwebhookconfiguration', path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', object: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: {}, webhooks: [webhook('a.example.com', { reinvocationPolicy: 'IfNeeded' })] } },
  { name: 'validatingwebhookconfiguration', path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', object: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: {}, webhooks: [webhook('v.example.com'), webhook('w.example.com', { clientConfig: { url: 'https://hook.example.com/validate' } })] },
    // match conditions must be bool to the reference's checker: a field of object is dyn
    values: [{ path: ['webhooks', 0, 'matchConditions', 0, 'expression'], try: MATCH_EXPRESSIONS }] },
  { name: 'flowschema', path: '/apis/flowcontrol.apiserver.k8s.io/v1beta3/flowschemas', object: { apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta3', kind: 'FlowSchema', metadata: {}, spec: { priorityLevelConfiguration: { name: 'workload-low' }, matchingPrecedence: 500, distinguisherMethod: { type: 'ByUser' }, rules: [{ subjects: [{ kind: 'Group', group: { name: 'devs' } }, { kind: 'ServiceAccount', serviceAccount: { namespace: 'probes', name: 'default' } }, { kind: 'User', user: { name: 'alice' } }], resourceRules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'], namespaces: ['*'] }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }] }] } } },
  { name: 'prioritylevelconfiguration', path: '/apis/flowcontrol.apiserver.k8s.io/v1beta3/prioritylevelconfigurations', object: { apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta3', kind: 'PriorityLevelConfiguration', metadata: {}, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 10, lendablePercent: 20, borrowingLimitPercent: 50, limitResponse: { type: 'Queue', queuing: { queues: 16, handSize: 4, queueLengthLimit: 50 } } } } } },
  { name: 'prioritylevelconfiguration-reject', path: '/apis/flowcontrol.apiserver.k8s.io/v1beta3/prioritylevelconfigurations', object: { apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta3', kind: 'PriorityLevelConfiguration', metadata: {}, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' } } } } },
  // ---------------------------------------------------------------- certificates, apiextensions, apiregistration
  { name: 'certificatesigningrequest', path: '/apis/certificates.k8s.io/v1/certificatesigningrequests', object: { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: {}, spec: { signerName: 'example.com/signer', usages: ['digital signature', 'key encipherment', 'client auth'], expirationSeconds: 3600, request: CSR_PEM_B64 } } },
  { name: 'apiservice', path: '/apis/apiregistration.k8s.io/v1/apiservices', object: { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: {}, spec: { group: 'probe.example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 15, service: { namespace: 'probes', name: 'api', port: 443 }, insecureSkipTLSVerify: true } }, fixedName: 'v1.probe.example.com' },
  ...VOLUME_SEEDS,
];
