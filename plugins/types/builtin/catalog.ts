// The built-in type catalog: one row per served type. Rows are data; the functions that cannot be
// data (defaulting, validation, table cells, field selectors) are looked up by the row's key.
// Facts (kind, scope, sub-resources) follow the reference server's OpenAPI paths; short names and
// categories follow its discovery documents.
import type { Brand } from '../../../kernel/contracts/brand.js';
import type { KObject, TypeDef } from '../../../kernel/contracts/index.js';
import { at, list } from '../../lib/json.js';

export interface Row {
  /** Written with the spec's placeholder domain ("networking.cluster.io"); "" is the core group. */
  group: string;
  version: string;
  kind: string;
  resource: string;
  namespaced: boolean;
  /** The reference derives it as the lower-cased kind; set only to differ. */
  singular?: string;
  shortNames?: string[];
  categories?: string[];
  subresources?: string[];
  /** Defaults to 'subdomain', the reference's usual rule. */
  nameRule?: TypeDef['nameRule'];
  /** The reference tracks metadata.generation for this type. */
  hasSpec?: boolean | 'create';
  /** See TypeDef: streaming sub-resources answered after CONNECT admission. */
  connectSubresources?: string[];
  /** See TypeDef: field selectors the watch fan-out indexes. */
  indexedFields?: string[];
  /** See TypeDef: finalizers outside metadata, and the phase of a lingering deletion. */
  finalizersField?: string;
  terminatingPhase?: string;
  /** See TypeDef: metadata the status strategy resets from the stored object. */
  statusKeepsMetadata?: string[];
  /** See TypeDef: a create keeps the status it carries. */
  statusOnCreate?: boolean;
  /** See TypeDef: dependents are orphaned when a deletion names no policy. */
  defaultPropagation?: TypeDef['defaultPropagation'];
  /** See TypeDef: the update strategy's own metadata checks (default 1). */
  metadataChecksOnUpdate?: number;
  /** The reference's AllowUnconditionalUpdate is false: a PUT without resourceVersion is refused. */
  conditionalUpdateOnly?: boolean;
  /** Verbs when not the full set (a computed, read-only type). */
  verbs?: string[];
  /** Text of the Warning every request gets (a deprecated kind), and the deprecation metric and audit annotation. */
  deprecated?: string;
  /**
   * A version the reference release this catalog follows does not serve yet (a later release's): its
   * objects have the shape of this other version's, whose definitions it publishes under its own name.
   */
  shapeOf?: string;
}

const NS = true;
const CLUSTER = false;
const ALL = ['all']; // the reference's `kubectl get all` category
const S = ['status'];
const SCALE = ['status', 'scale'];
/** What the reference's ResetObjectMetaForStatus keeps from the stored object on a status write. */
const STATUS_ONLY = ['labels', 'annotations', 'finalizers', 'ownerReferences'];

function row(group: string, version: string, kind: string, resource: string, namespaced: boolean, more: Partial<Row> = {}): Row {
  return { group, version, kind, resource, namespaced, ...more };
}

// Sub-resources listed here are stored fields (status, scale, pods/ephemeralcontainers, pods/resize)
// or CONNECT streams (connectSubresources); the ones plugins serve (pods/log, binding, eviction,
// serviceaccounts/token, ...) are added by those plugins when they start.
export const CATALOG: Row[] = [
  // core v1
  row('', 'v1', 'Namespace', 'namespaces', CLUSTER, { metadataChecksOnUpdate: 2, shortNames: ['ns'], subresources: ['status', 'finalize'], nameRule: 'label', finalizersField: 'spec.finalizers', terminatingPhase: 'Terminating' }),
  row('', 'v1', 'Pod', 'pods', NS, { metadataChecksOnUpdate: 2, shortNames: ['po'], categories: ALL, subresources: [...S, 'ephemeralcontainers', 'resize'], statusKeepsMetadata: ['ownerReferences'], indexedFields: ['spec.nodeName'], connectSubresources: ['exec', 'attach', 'portforward', 'proxy'] }),
  row('', 'v1', 'PodTemplate', 'podtemplates', NS, { hasSpec: true }),
  // Services validate as DNS-1035 labels; 'label' plus the extra check in validate.ts.
  row('', 'v1', 'Service', 'services', NS, { shortNames: ['svc'], categories: ALL, subresources: S, nameRule: 'label', connectSubresources: ['proxy'] }),
  row('', 'v1', 'ConfigMap', 'configmaps', NS, { metadataChecksOnUpdate: 2, shortNames: ['cm'] }),
  row('', 'v1', 'Secret', 'secrets', NS),
  row('', 'v1', 'ServiceAccount', 'serviceaccounts', NS, { shortNames: ['sa'] }),
  // A node agent registers its Node with capacity, allocatable, addresses and nodeInfo: the reference keeps them.
  row('', 'v1', 'Node', 'nodes', CLUSTER, { metadataChecksOnUpdate: 2, shortNames: ['no'], subresources: S, connectSubresources: ['proxy'], statusOnCreate: true }),
  // core/v1 Events are checked for no more than the common path-segment rule (events.k8s.io/v1 wants a subdomain)
  row('', 'v1', 'Event', 'events', NS, { nameRule: 'path-segment', shortNames: ['ev'] }),
  row('', 'v1', 'Endpoints', 'endpoints', NS, { shortNames: ['ep'] }),
  row('', 'v1', 'PersistentVolume', 'persistentvolumes', CLUSTER, { metadataChecksOnUpdate: 2, shortNames: ['pv'], subresources: S }),
  row('', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', NS, { metadataChecksOnUpdate: 3, shortNames: ['pvc'], subresources: S }),
  row('', 'v1', 'LimitRange', 'limitranges', NS, { shortNames: ['limits'] }),
  row('', 'v1', 'ResourceQuota', 'resourcequotas', NS, { shortNames: ['quota'], subresources: S }),
  // Computed on every read (strategies/componentstatus.ts), never stored.
  row('', 'v1', 'ComponentStatus', 'componentstatuses', CLUSTER, { shortNames: ['cs'], verbs: ['get', 'list'], deprecated: 'v1 ComponentStatus is deprecated in v1.19+' }),
  // v1's default, kept by the reference for compatibility: a deletion without a policy orphans the pods
  row('', 'v1', 'ReplicationController', 'replicationcontrollers', NS, { metadataChecksOnUpdate: 2, shortNames: ['rc'], categories: ALL, subresources: SCALE, hasSpec: true, defaultPropagation: { policy: 'Orphan' } }),
  // apps/v1
  row('apps', 'v1', 'Deployment', 'deployments', NS, { shortNames: ['deploy'], categories: ALL, subresources: SCALE, hasSpec: true, statusKeepsMetadata: ['labels'] }),
  row('apps', 'v1', 'ReplicaSet', 'replicasets', NS, { metadataChecksOnUpdate: 2, shortNames: ['rs'], categories: ALL, subresources: SCALE, hasSpec: true }),
  row('apps', 'v1', 'StatefulSet', 'statefulsets', NS, { shortNames: ['sts'], categories: ALL, subresources: SCALE, hasSpec: true }),
  row('apps', 'v1', 'DaemonSet', 'daemonsets', NS, { metadataChecksOnUpdate: 2, shortNames: ['ds'], categories: ALL, subresources: S, hasSpec: true }),
  row('apps', 'v1', 'ControllerRevision', 'controllerrevisions', NS),
  // autoscaling: v2 (listed first: preferred, and the storage version) and v1, one set of objects
  // converted between the two (conversions/autoscaling.ts).
  // The reference's HPA strategies track no metadata.generation.
  row('autoscaling', 'v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', NS, { shortNames: ['hpa'], categories: ALL, subresources: S }),
  row('autoscaling', 'v1', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', NS, { shortNames: ['hpa'], categories: ALL, subresources: S }),
  // batch/v1
  row('batch', 'v1', 'Job', 'jobs', NS, {
    metadataChecksOnUpdate: 2, categories: ALL, subresources: S, hasSpec: true,
    defaultPropagation: { policy: 'Orphan', warning: 'child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning' },
  }),
  row('batch', 'v1', 'CronJob', 'cronjobs', NS, { shortNames: ['cj'], categories: ALL, subresources: S, hasSpec: true }),
  // named groups
  row('coordination.cluster.io', 'v1', 'Lease', 'leases', NS, { conditionalUpdateOnly: true }),
  row('networking.cluster.io', 'v1', 'Ingress', 'ingresses', NS, { shortNames: ['ing'], subresources: S, hasSpec: true }),
  row('networking.cluster.io', 'v1', 'IngressClass', 'ingressclasses', CLUSTER, { hasSpec: true }),
  row('networking.cluster.io', 'v1', 'NetworkPolicy', 'networkpolicies', NS, { shortNames: ['netpol'], hasSpec: true }),
  row('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', NS, { nameRule: 'path-segment', shortNames: ['pdb'], subresources: S, hasSpec: true, conditionalUpdateOnly: true }),
  row('scheduling.cluster.io', 'v1', 'PriorityClass', 'priorityclasses', CLUSTER, { shortNames: ['pc'], hasSpec: 'create' }),
  row('storage.cluster.io', 'v1', 'StorageClass', 'storageclasses', CLUSTER, { shortNames: ['sc'] }),
  row('storage.cluster.io', 'v1', 'CSIDriver', 'csidrivers', CLUSTER, { conditionalUpdateOnly: true }),
  row('storage.cluster.io', 'v1', 'CSINode', 'csinodes', CLUSTER, { conditionalUpdateOnly: true }),
  row('storage.cluster.io', 'v1', 'VolumeAttachment', 'volumeattachments', CLUSTER, { subresources: S, conditionalUpdateOnly: true, statusKeepsMetadata: STATUS_ONLY }),
  row('storage.cluster.io', 'v1', 'CSIStorageCapacity', 'csistoragecapacities', NS, { conditionalUpdateOnly: true }),
  // Endpoint slices have no spec, but the reference still bumps generation on every change.
  row('discovery.cluster.io', 'v1', 'EndpointSlice', 'endpointslices', NS, { hasSpec: true }),
  row('node.cluster.io', 'v1', 'RuntimeClass', 'runtimeclasses', CLUSTER, { conditionalUpdateOnly: true }),
  // API Priority and Fairness configuration (the reference release this catalog follows serves v1beta3).
  // v1beta3 is the storage version; v1 is served beside it (LATER_RELEASES below).
  row('flowcontrol.apiserver.cluster.io', 'v1beta3', 'FlowSchema', 'flowschemas', CLUSTER, { subresources: S, hasSpec: true }),
  row('flowcontrol.apiserver.cluster.io', 'v1beta3', 'PriorityLevelConfiguration', 'prioritylevelconfigurations', CLUSTER, { subresources: S, hasSpec: true }),
  row('events.cluster.io', 'v1', 'Event', 'events', NS, { shortNames: ['ev'] }),
  // RBAC: no short names in the reference; names are path segments ("system:controller:x").
  row('rbac.authorization.cluster.io', 'v1', 'ClusterRole', 'clusterroles', CLUSTER, { metadataChecksOnUpdate: 3, nameRule: 'path-segment' }),
  row('rbac.authorization.cluster.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', CLUSTER, { metadataChecksOnUpdate: 3, nameRule: 'path-segment' }),
  row('rbac.authorization.cluster.io', 'v1', 'Role', 'roles', NS, { metadataChecksOnUpdate: 3, nameRule: 'path-segment' }),
  row('rbac.authorization.cluster.io', 'v1', 'RoleBinding', 'rolebindings', NS, { metadataChecksOnUpdate: 3, nameRule: 'path-segment' }),
  // Webhook configurations. The reference release this catalog follows serves only v1; the older
  // v1beta1 (same objects, other defaults) is an opt-in types plugin,
  // plugins/admission/webhook-common/v1beta1-types.ts, sharing these rows' storage.
  row('admissionregistration.cluster.io', 'v1', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', CLUSTER, { categories: ['api-extensions'], conditionalUpdateOnly: true, hasSpec: true }),
  row('admissionregistration.cluster.io', 'v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', CLUSTER, { categories: ['api-extensions'], conditionalUpdateOnly: true, hasSpec: true }),
];

/**
 * Versions a later reference release serves that clients of that release prefer, served beside the
 * catalog's (which follows the reference release's OpenAPI document exactly): the same objects,
 * converted through the catalog's conversion seam (conversions/), with the shape, definitions and
 * Protobuf messages of the version named by `shapeOf`.
 */
export const LATER_RELEASES: Row[] = [
  // flowcontrol.apiserver/v1 (GA in the next release; clients of 1.29+ prefer it).
  row('flowcontrol.apiserver.cluster.io', 'v1', 'FlowSchema', 'flowschemas', CLUSTER, { subresources: S, hasSpec: true, shapeOf: 'v1beta3' }),
  row('flowcontrol.apiserver.cluster.io', 'v1', 'PriorityLevelConfiguration', 'prioritylevelconfigurations', CLUSTER, { subresources: S, hasSpec: true, shapeOf: 'v1beta3' }),
];

/**
 * Sub-resources of a later release served beside the catalog's, for that release's clients:
 * pods/resize (1.32+; kubectl 1.33 `patch --subresource resize`). Not in the reference release's
 * OpenAPI document; by row key.
 */
export const LATER_SUBRESOURCES: Record<string, string[]> = { pods: ['resize'] };

/** How the hook tables name a row: "pods", "deployments.apps", "ingresses.networking.cluster.io". */
export function rowKey(r: Pick<Row, 'group' | 'resource'>): string {
  return r.group ? `${r.resource}.${r.group}` : r.resource;
}

/** Domain of the brand's reserved labels and annotations: "cluster.io", or "kubernetes.io" for the kubernetes brand. */
export function labelDomain(brand: Brand): string {
  return brand.keyDomain;
}

function str(v: unknown): string {
  return v === undefined || v === null ? '' : String(v);
}

// ---------------------------------------------------------------- field selectors

/** Selector fields mapped to the compared string; missing strings compare as "", missing numbers and booleans as the reference's zero value. */
function fields(paths: string[], extra: Record<string, (o: KObject) => string> = {}): Record<string, (o: KObject) => string> {
  const out: Record<string, (o: KObject) => string> = {};
  for (const p of paths) out[p] = (o) => str(at(o, p));
  return { ...out, ...extra };
}

const coreEventFields = fields(
  ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion',
    'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'type'],
  // source falls back to the reporting controller, as the reference's selectable fields do.
  { reportingComponent: (o) => str(o.reportingComponent), source: (o) => str(at(o, 'source.component')) || str(o.reportingComponent) },
);

/**
 * Field selector labels of a type whose objects are stored as another group's (the reference's
 * field label conversion): each label the type accepts, mapped to the stored field it selects.
 */
export const FIELD_LABELS: Record<string, Record<string, string>> = {
  'events.events.cluster.io': {
    reason: 'reason', type: 'type', reportingController: 'reportingComponent',
    ...Object.fromEntries(['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'].map((f) => [`regarding.${f}`, `involvedObject.${f}`])),
  },
};

export const FIELD_SELECTORS: Record<string, Record<string, (o: KObject) => string>> = {
  pods: fields(['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'status.phase', 'status.nominatedNodeName'], {
    'spec.hostNetwork': (o) => String(at(o, 'spec.hostNetwork') === true),
    // The reference reads the first of status.podIPs, falling back to status.podIP.
    'status.podIP': (o) => str(at(list(at(o, 'status.podIPs'))[0], 'ip') ?? at(o, 'status.podIP')),
  }),
  events: coreEventFields,
  // events.cluster.io/v1 objects are stored as core Events: the stored fields, named as FIELD_LABELS says.
  'events.events.cluster.io': coreEventFields,
  secrets: fields(['type']),
  namespaces: fields(['status.phase']),
  nodes: { 'spec.unschedulable': (o) => String(at(o, 'spec.unschedulable') === true) },
  'replicasets.apps': { 'status.replicas': (o) => String(Number(at(o, 'status.replicas') ?? 0)) },
  replicationcontrollers: { 'status.replicas': (o) => String(Number(at(o, 'status.replicas') ?? 0)) },
  'jobs.batch': { 'status.successful': (o) => String(Number(at(o, 'status.succeeded') ?? 0)) },
};
