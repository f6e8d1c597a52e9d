// Defaulting for the built-in types, following the reference's defaulting functions and the
// create-time parts of its registry strategies. Every function works in place, sets a field only
// when it is unset (null counts as unset, like the reference's optional pointer fields) and is
// idempotent: running it twice gives the same object.
import type { Brand } from '../../../kernel/contracts/brand.js';
import type { KObject } from '../../../kernel/contracts/index.js';
import { defaultHpa } from './autoscaling.js';
import { labelDomain } from './catalog.js';
import { at, isObj, list, type J } from '../../lib/json.js';
import { quantity } from './quantity.js';

type Defaulter = (obj: KObject, brand: Brand) => void;

function unset(v: unknown): boolean {
  return v === undefined || v === null;
}

/** o[k] = v unless the user set it. */
function def(o: J, k: string, v: unknown): void {
  if (unset(o[k])) o[k] = v;
}

/** A default of a plain (non-pointer) field in the reference's Go types, whose zero value ("" or 0) counts as unset too. */
function defPlain(o: J, k: string, v: string | number): void {
  if (unset(o[k]) || o[k] === '' || o[k] === 0) o[k] = v;
}

/** The object at o[k], created when unset. A non-object value is left alone (validation reports it). */
function child(o: J, k: string): J {
  if (unset(o[k])) o[k] = {};
  return isObj(o[k]) ? o[k] : {};
}

function empty(v: unknown): boolean {
  return !isObj(v) || Object.keys(v).length === 0;
}

/** A new object, not yet stored: creates carry no resourceVersion. Used for create-only defaults. */
function isNew(o: J): boolean {
  return unset(at(o, 'metadata.resourceVersion')) && unset(at(o, 'metadata.deletionTimestamp'));
}

// ---------------------------------------------------------------- pods and pod templates

/** The reference pulls always when the tag is `latest` or absent, unless the image is pinned by digest. */
export function imagePullPolicy(image: unknown): 'Always' | 'IfNotPresent' {
  if (typeof image !== 'string' || image === '') return 'IfNotPresent'; // unparseable: no tag found
  const digestAt = image.indexOf('@');
  const name = digestAt >= 0 ? image.slice(0, digestAt) : image;
  const colon = name.lastIndexOf(':');
  const tag = colon > name.lastIndexOf('/') ? name.slice(colon + 1) : ''; // a colon before the last '/' is a registry port
  if (tag === '') return digestAt >= 0 ? 'IfNotPresent' : 'Always';
  return tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function httpGet(h: J): void {
  defPlain(h, 'path', '/');
  defPlain(h, 'scheme', 'HTTP');
}

function probe(p: J): void {
  defPlain(p, 'timeoutSeconds', 1);
  defPlain(p, 'periodSeconds', 10);
  defPlain(p, 'successThreshold', 1);
  defPlain(p, 'failureThreshold', 3);
  if (isObj(p.httpGet)) httpGet(p.httpGet);
  if (isObj(p.grpc)) def(p.grpc, 'service', '');
}

function fieldRefs(items: unknown): void {
  for (const it of list(items)) if (isObj(it.fieldRef)) defPlain(it.fieldRef, 'apiVersion', 'v1');
}

function container(c: J): void {
  defPlain(c, 'imagePullPolicy', imagePullPolicy(c.image));
  defPlain(c, 'terminationMessagePath', '/dev/termination-log');
  defPlain(c, 'terminationMessagePolicy', 'File');
  def(c, 'resources', {});
  for (const p of list(c.ports)) defPlain(p, 'protocol', 'TCP');
  fieldRefs(list(c.env).map((e) => e.valueFrom).filter(isObj));
  for (const k of ['livenessProbe', 'readinessProbe', 'startupProbe']) if (isObj(c[k])) probe(c[k]);
  for (const k of ['postStart', 'preStop']) {
    const h = at(c, `lifecycle.${k}.httpGet`);
    if (isObj(h)) httpGet(h);
  }
}

/** Defaults of the sources pod volumes and PersistentVolumes share. */
function volumeSource(v: J): void {
  if (isObj(v.hostPath)) def(v.hostPath, 'type', '');
  if (isObj(v.iscsi)) defPlain(v.iscsi, 'iscsiInterface', 'default');
  if (isObj(v.rbd)) {
    defPlain(v.rbd, 'pool', 'rbd');
    defPlain(v.rbd, 'user', 'admin');
    defPlain(v.rbd, 'keyring', '/etc/ceph/keyring');
  }
  if (isObj(v.azureDisk)) {
    // the default kind (Shared) is a blob disk: validation then wants an https:// URI
    for (const [k, d] of [['cachingMode', 'ReadWrite'], ['kind', 'Shared'], ['fsType', 'ext4'], ['readOnly', false]] as const) def(v.azureDisk, k, d);
  }
  if (isObj(v.scaleIO)) {
    defPlain(v.scaleIO, 'storageMode', 'ThinProvisioned');
    defPlain(v.scaleIO, 'fsType', 'xfs');
  }
}

function volume(v: J): void {
  if (Object.keys(v).every((k) => k === 'name')) v.emptyDir = {}; // no source given: the reference picks emptyDir
  for (const k of ['secret', 'configMap', 'downwardAPI', 'projected']) if (isObj(v[k])) def(v[k], 'defaultMode', 420);
  volumeSource(v);
  const claim = at(v, 'ephemeral.volumeClaimTemplate.spec');
  if (isObj(claim)) def(claim, 'volumeMode', 'Filesystem');
  fieldRefs(at(v, 'downwardAPI.items'));
  for (const s of list(at(v, 'projected.sources'))) {
    if (isObj(s.serviceAccountToken)) def(s.serviceAccountToken, 'expirationSeconds', 3600);
    fieldRefs(at(s, 'downwardAPI.items'));
  }
}

/** Pod spec defaults, shared by pods and every pod template. */
export function podSpec(spec: J): void {
  // serviceAccount is the deprecated alias of serviceAccountName: read when the new field is empty, and written back as its copy.
  if (!spec.serviceAccountName && typeof spec.serviceAccount === 'string' && spec.serviceAccount) spec.serviceAccountName = spec.serviceAccount;
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName) spec.serviceAccount = spec.serviceAccountName;
  else delete spec.serviceAccount;
  defPlain(spec, 'restartPolicy', 'Always'); // also in job templates: validation then demands OnFailure or Never
  defPlain(spec, 'dnsPolicy', 'ClusterFirst');
  defPlain(spec, 'schedulerName', 'default-scheduler');
  def(spec, 'terminationGracePeriodSeconds', 30);
  def(spec, 'securityContext', {});
  for (const c of [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)]) container(c);
  for (const v of list(spec.volumes)) volume(v);
}

function template(spec: J): void {
  podSpec(child(child(spec, 'template'), 'spec'));
}

/** The reference's QoS class: only cpu and memory count; Guaranteed needs equal, complete limits everywhere. */
export function qosClass(spec: J): 'BestEffort' | 'Burstable' | 'Guaranteed' {
  const sums = { requests: {} as Record<string, number>, limits: {} as Record<string, number> };
  let guaranteed = true;
  for (const c of [...list(spec.containers), ...list(spec.initContainers)]) {
    const limited = new Set<string>();
    for (const side of ['requests', 'limits'] as const) {
      const rl = at(c, `resources.${side}`);
      for (const [name, q] of Object.entries(isObj(rl) ? rl : {})) {
        const n = quantity(q);
        if ((name !== 'cpu' && name !== 'memory') || !(n > 0)) continue;
        sums[side][name] = (sums[side][name] ?? 0) + n;
        if (side === 'limits') limited.add(name);
      }
    }
    if (!limited.has('cpu') || !limited.has('memory')) guaranteed = false;
  }
  const req = Object.entries(sums.requests);
  if (req.length === 0 && Object.keys(sums.limits).length === 0) return 'BestEffort';
  if (guaranteed && req.every(([k, v]) => sums.limits[k] === v) && req.length === Object.keys(sums.limits).length) return 'Guaranteed';
  return 'Burstable';
}

function pod(o: KObject): void {
  const spec = child(o, 'spec');
  podSpec(spec);
  def(spec, 'enableServiceLinks', true); // pods only, not templates
  for (const c of [...list(spec.containers), ...list(spec.initContainers)]) {
    // Requests default to the limits the user gave.
    const res = isObj(c.resources) ? c.resources : {};
    if (isObj(res.limits)) {
      const req = child(res, 'requests');
      for (const [k, v] of Object.entries(res.limits)) def(req, k, v);
    }
    // Host-network pods expose container ports on the host.
    if (spec.hostNetwork === true) for (const p of list(c.ports)) def(p, 'hostPort', p.containerPort);
  }
  // A new pod starts Pending, with its QoS class fixed at creation.
  if (empty(o.status)) o.status = { phase: 'Pending', qosClass: qosClass(spec) };
}

// ---------------------------------------------------------------- workloads

function deployment(o: KObject): void {
  const spec = child(o, 'spec');
  def(spec, 'replicas', 1);
  const strategy = child(spec, 'strategy');
  defPlain(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const ru = child(strategy, 'rollingUpdate');
    def(ru, 'maxUnavailable', '25%');
    def(ru, 'maxSurge', '25%');
  }
  def(spec, 'revisionHistoryLimit', 10);
  def(spec, 'progressDeadlineSeconds', 600);
  template(spec);
}

function replicaSet(o: KObject): void {
  const spec = child(o, 'spec');
  def(spec, 'replicas', 1);
  template(spec);
}

function statefulSet(o: KObject): void {
  const spec = child(o, 'spec');
  def(spec, 'replicas', 1);
  defPlain(spec, 'podManagementPolicy', 'OrderedReady');
  const us = child(spec, 'updateStrategy');
  defPlain(us, 'type', 'RollingUpdate');
  if (us.type === 'RollingUpdate') def(child(us, 'rollingUpdate'), 'partition', 0);
  def(spec, 'revisionHistoryLimit', 10);
  const retention = child(spec, 'persistentVolumeClaimRetentionPolicy');
  defPlain(retention, 'whenDeleted', 'Retain');
  defPlain(retention, 'whenScaled', 'Retain');
  template(spec);
  // each claim template is a whole PersistentVolumeClaim on the wire (the reference's conversion names its kind)
  for (const pvc of list(spec.volumeClaimTemplates)) {
    pvc.apiVersion = 'v1';
    pvc.kind = 'PersistentVolumeClaim';
    def(child(pvc, 'spec'), 'volumeMode', 'Filesystem');
    def(child(pvc, 'status'), 'phase', 'Pending');
  }
}

function daemonSet(o: KObject): void {
  const spec = child(o, 'spec');
  const us = child(spec, 'updateStrategy');
  defPlain(us, 'type', 'RollingUpdate');
  if (us.type === 'RollingUpdate') {
    const ru = child(us, 'rollingUpdate');
    def(ru, 'maxUnavailable', 1);
    def(ru, 'maxSurge', 0);
  }
  def(spec, 'revisionHistoryLimit', 10);
  template(spec);
  // a new DaemonSet's template generation (template-generation.ts keeps it), there before its managed fields are taken
  if (isNew(o)) def(child(child(o, 'metadata'), 'annotations'), 'deprecated.daemonset.template.generation', '1');
}

function replicationController(o: KObject): void {
  const spec = child(o, 'spec');
  def(spec, 'replicas', 1);
  const labels = at(spec, 'template.metadata.labels');
  // The selector and the object's labels default to the template's labels.
  if (isObj(labels) && !empty(labels)) {
    if (empty(spec.selector)) spec.selector = { ...labels };
    const meta = child(o, 'metadata');
    if (empty(meta.labels)) meta.labels = { ...labels };
  }
  if (isObj(spec.template)) template(spec); // optional here, unlike the apps/v1 templates

}

function job(o: KObject): void {
  const spec = child(o, 'spec');
  const meta = child(o, 'metadata');
  if (unset(spec.completions) && unset(spec.parallelism)) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  def(spec, 'parallelism', 1);
  def(spec, 'backoffLimit', 6);
  def(spec, 'completionMode', 'NonIndexed');
  def(spec, 'suspend', false);
  for (const rule of list(at(spec, 'podFailurePolicy.rules'))) for (const c of list(rule.onPodConditions)) defPlain(c, 'status', 'True');
  template(spec);
  // The job takes its template's labels when it has none. The reference shares one map, so on create
  // the labels its strategy then generates on the template (strategies/jobs.ts) end up on the job
  // too: shared here as well (its field manager sees the labels before those are generated).
  const tmeta = child(child(spec, 'template'), 'metadata');
  if (isObj(tmeta.labels) && empty(meta.labels)) meta.labels = isNew(o) ? tmeta.labels : { ...tmeta.labels };
}

function cronJob(o: KObject): void {
  const spec = child(o, 'spec');
  defPlain(spec, 'concurrencyPolicy', 'Allow');
  def(spec, 'suspend', false);
  def(spec, 'successfulJobsHistoryLimit', 3);
  def(spec, 'failedJobsHistoryLimit', 1);
  // Only the pod template inside jobTemplate is defaulted, not the job spec itself.
  template(child(child(spec, 'jobTemplate'), 'spec'));
}

// ---------------------------------------------------------------- services and networking

function service(o: KObject): void {
  const spec = child(o, 'spec');
  // plain string fields: "" is unset, as Go's defaulting sees it
  if (spec.type === '') delete spec.type;
  if (spec.sessionAffinity === '') delete spec.sessionAffinity;
  if (spec.externalTrafficPolicy === '') delete spec.externalTrafficPolicy;
  def(spec, 'type', 'ClusterIP');
  def(spec, 'sessionAffinity', 'None');
  if (spec.sessionAffinity === 'ClientIP') def(child(child(spec, 'sessionAffinityConfig'), 'clientIP'), 'timeoutSeconds', 10800);
  // no affinity, no affinity configuration (the reference's defaulting clears it)
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  for (const p of list(spec.ports)) {
    if (p.protocol === '') delete p.protocol;
    def(p, 'protocol', 'TCP');
    if ((unset(p.targetPort) || p.targetPort === 0 || p.targetPort === '') && typeof p.port === 'number') p.targetPort = p.port;
  }
  if (spec.type === 'ExternalName') return; // no addresses, so none of the traffic or family settings
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') def(spec, 'externalTrafficPolicy', 'Cluster');
  if (spec.type === 'LoadBalancer') def(spec, 'allocateLoadBalancerNodePorts', true);
  def(spec, 'internalTrafficPolicy', 'Cluster');
  // ipFamilyPolicy, ipFamilies and clusterIPs depend on the cluster's ranges: the service strategy
  // (strategies/services.ts) sets them with the allocation.
}

function endpoints(o: KObject): void {
  // a plain string field: "" is unset too
  for (const s of list(o.subsets)) for (const p of list(s.ports)) if (unset(p.protocol) || p.protocol === '') p.protocol = 'TCP';
}

function endpointSlice(o: KObject): void {
  for (const p of list(o.ports)) {
    def(p, 'protocol', 'TCP');
    def(p, 'name', '');
  }
}

function networkPolicy(o: KObject): void {
  const spec = child(o, 'spec');
  if (!Array.isArray(spec.policyTypes) || spec.policyTypes.length === 0) {
    spec.policyTypes = list(spec.egress).length ? ['Ingress', 'Egress'] : ['Ingress'];
  }
  for (const rule of [...list(spec.ingress), ...list(spec.egress)]) for (const p of list(rule.ports)) def(p, 'protocol', 'TCP');
}

// ---------------------------------------------------------------- cluster and storage

function namespace(o: KObject, brand: Brand): void {
  const meta = child(o, 'metadata');
  // The reference keeps this label equal to the name (it overrides a user value).
  if (typeof meta.name === 'string' && meta.name) child(meta, 'labels')[`${labelDomain(brand)}/metadata.name`] = meta.name;
  // Create only: the finalizer may be removed later (finalize) and must not come back on update.
  if (isNew(o)) {
    def(child(o, 'spec'), 'finalizers', [brand.namespaceFinalizer]);
    def(child(o, 'status'), 'phase', 'Active');
  }
}

function limitRange(o: KObject): void {
  for (const item of list(at(o, 'spec.limits'))) {
    if (item.type !== 'Container') continue;
    // default ← max; defaultRequest ← default, then min (only keys not already set).
    const fill = (target: string, from: unknown) => {
      if (!isObj(from) || empty(from)) return;
      const t = child(item, target);
      for (const [k, v] of Object.entries(from)) def(t, k, v);
    };
    fill('default', item.max);
    fill('defaultRequest', item.default);
    fill('defaultRequest', item.min);
  }
}

function node(o: KObject): void {
  // The reference's conversion: podCIDR, when set, is authoritative and the first of podCIDRs.
  const spec = o.spec;
  if (isObj(spec) && typeof spec.podCIDR === 'string' && spec.podCIDR) {
    if (!Array.isArray(spec.podCIDRs) || spec.podCIDRs[0] !== spec.podCIDR) spec.podCIDRs = [spec.podCIDR];
  } else if (isObj(spec) && Array.isArray(spec.podCIDRs) && typeof spec.podCIDRs[0] === 'string') spec.podCIDR = spec.podCIDRs[0];
  const status = o.status;
  if (isObj(status) && isObj(status.capacity) && unset(status.allocatable)) status.allocatable = { ...status.capacity };
}

function persistentVolume(o: KObject): void {
  const spec = child(o, 'spec');
  def(spec, 'persistentVolumeReclaimPolicy', 'Retain');
  def(spec, 'volumeMode', 'Filesystem');
  volumeSource(spec);
  def(child(o, 'status'), 'phase', 'Pending');
}

function persistentVolumeClaim(o: KObject): void {
  def(child(o, 'spec'), 'volumeMode', 'Filesystem');
  def(child(o, 'status'), 'phase', 'Pending');
}

function csiDriver(o: KObject): void {
  const spec = child(o, 'spec');
  def(spec, 'attachRequired', true);
  def(spec, 'podInfoOnMount', false);
  def(spec, 'storageCapacity', false);
  def(spec, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
  if (!Array.isArray(spec.volumeLifecycleModes) || spec.volumeLifecycleModes.length === 0) spec.volumeLifecycleModes = ['Persistent'];
  def(spec, 'requiresRepublish', false);
  def(spec, 'seLinuxMount', false);
}

/** stringData is a write-only convenience: its values are folded into data (base64), winning over data. */
function secret(o: J): void {
  // a plain string field: "" is unset too
  if (unset(o.type) || o.type === '') o.type = 'Opaque';
  const sd = o.stringData;
  if (sd && typeof sd === 'object' && !Array.isArray(sd)) {
    const data = (o.data && typeof o.data === 'object' && !Array.isArray(o.data) ? o.data : {}) as Record<string, unknown>;
    for (const [k, v] of Object.entries(sd as Record<string, unknown>)) if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
    o.data = data;
    delete o.stringData;
  }
}

// ---------------------------------------------------------------- admission webhook configurations

/**
 * Mutating and validating webhook configurations. v1 and v1beta1 are two versions of the same
 * objects whose defaults differ; the version is read from the object's apiVersion.
 */
function webhookConfiguration(mutating: boolean): Defaulter {
  return (o) => {
    const beta = typeof o.apiVersion === 'string' && o.apiVersion.endsWith('/v1beta1');
    for (const w of list(o.webhooks)) {
      def(w, 'failurePolicy', beta ? 'Ignore' : 'Fail');
      def(w, 'matchPolicy', beta ? 'Exact' : 'Equivalent');
      def(w, 'timeoutSeconds', beta ? 30 : 10);
      if (beta) {
        def(w, 'sideEffects', 'Unknown');
        if (unset(w.admissionReviewVersions) || (Array.isArray(w.admissionReviewVersions) && w.admissionReviewVersions.length === 0)) w.admissionReviewVersions = ['v1beta1'];
      }
      def(w, 'namespaceSelector', {});
      def(w, 'objectSelector', {});
      if (mutating) def(w, 'reinvocationPolicy', 'Never');
      for (const r of list(w.rules)) def(r, 'scope', '*');
      const svc = at(w, 'clientConfig.service');
      if (isObj(svc)) def(svc, 'port', 443);
    }
  };
}

// ---------------------------------------------------------------- API Priority and Fairness

/** FlowSchema (v1beta3 and v1): matching precedence 1000 when unset or zero. */
function flowSchema(o: KObject): void {
  const spec = child(o as J, 'spec');
  if (!spec.matchingPrecedence) spec.matchingPrecedence = 1000;
}

/**
 * PriorityLevelConfiguration: v1 defaults an unset nominalConcurrencyShares to 30 and keeps a zero;
 * v1beta3 also reads a zero as "unset" unless the object carries the preserve-zero annotation (which
 * v1 writers' zeros get in conversion); unset lendable percents are 0; queuing 64 queues, hand 8, 50 long.
 */
function priorityLevel(o: KObject, brand: Brand): void {
  const spec = child(o as J, 'spec');
  if (isObj(spec.exempt)) {
    def(spec.exempt, 'nominalConcurrencyShares', 0);
    def(spec.exempt, 'lendablePercent', 0);
  }
  if (isObj(spec.limited)) {
    const l = spec.limited;
    const beta = typeof o.apiVersion === 'string' && o.apiVersion.endsWith('/v1beta3');
    const preserve = `flowcontrol.apiserver.${brand.domain}/v1beta3-preserve-zero-concurrency-shares` in (o.metadata?.annotations ?? {});
    if (unset(l.nominalConcurrencyShares) || (beta && l.nominalConcurrencyShares === 0 && !preserve)) l.nominalConcurrencyShares = 30;
    def(l, 'lendablePercent', 0);
    const q = at(l, 'limitResponse.queuing');
    if (isObj(q)) {
      if (!q.handSize) q.handSize = 8;
      if (!q.queues) q.queues = 64;
      if (!q.queueLengthLimit) q.queueLengthLimit = 50;
    }
  }
}

/** A binding's roleRef, and its User and Group subjects, default to the RBAC group. */
function binding(o: KObject, brand: Brand): void {
  const group = `rbac.authorization.${brand.domain}`;
  // roleRef is a struct in the reference: defaulted even when absent
  const ref = child(o as J, 'roleRef');
  if (!ref.apiGroup) ref.apiGroup = group;
  for (const s of list(o.subjects)) if (!s.apiGroup && (s.kind === 'User' || s.kind === 'Group')) s.apiGroup = group;
}

/** Defaulters by row key (see catalog.ts rowKey). */
export const DEFAULTERS: Record<string, Defaulter> = {
  pods: pod,
  podtemplates: (o) => template(o as J),
  services: service,
  secrets: secret,
  namespaces: namespace,
  nodes: node,
  endpoints,
  persistentvolumes: persistentVolume,
  persistentvolumeclaims: persistentVolumeClaim,
  limitranges: limitRange,
  replicationcontrollers: replicationController,
  'deployments.apps': deployment,
  'replicasets.apps': replicaSet,
  'statefulsets.apps': statefulSet,
  'daemonsets.apps': daemonSet,
  'jobs.batch': job,
  'cronjobs.batch': cronJob,
  'horizontalpodautoscalers.autoscaling': defaultHpa,
  'flowschemas.flowcontrol.apiserver.cluster.io': flowSchema,
  'prioritylevelconfigurations.flowcontrol.apiserver.cluster.io': priorityLevel,
  'networkpolicies.networking.cluster.io': networkPolicy,
  'endpointslices.discovery.cluster.io': endpointSlice,
  'priorityclasses.scheduling.cluster.io': (o) => def(o, 'preemptionPolicy', 'PreemptLowerPriority'),
  'storageclasses.storage.cluster.io': (o) => {
    def(o, 'reclaimPolicy', 'Delete');
    def(o, 'volumeBindingMode', 'Immediate');
  },
  'csidrivers.storage.cluster.io': csiDriver,
  'rolebindings.rbac.authorization.cluster.io': binding,
  'clusterrolebindings.rbac.authorization.cluster.io': binding,
  // parameters without a scope refer to a cluster-scoped object
  'ingressclasses.networking.cluster.io': (o) => { const p = at(o, 'spec.parameters'); if (isObj(p)) def(p, 'scope', 'Cluster'); },
  'mutatingwebhookconfigurations.admissionregistration.cluster.io': webhookConfiguration(true),
  'validatingwebhookconfigurations.admissionregistration.cluster.io': webhookConfiguration(false),
};
