// Type-specific validation for the built-in types: a modest subset of the reference's rules, with
// its field paths ("spec.containers[0].image") and error bodies ("Required value",
// "Invalid value: <v>: <detail>") so that clients see the same 422 causes. Name syntax and object
// metadata are the kernel's job; these run after defaulting.
import { validateHpa } from './autoscaling.js';
import { validateCoreEvent, validateEventsV1 } from './events.js';
import type { Brand } from '../../../kernel/contracts/brand.js';
import type { FieldCause, KObject } from '../../../kernel/contracts/index.js';
import { labelDomain } from './catalog.js';
import { at, isObj, list, type J } from '../../lib/json.js';
import { dnsSubdomainErrors, show, type Validator, goMap, goStrings, goSelector, required, forbidden, duplicate, tooLong, invalid, notSupported, oneOf, nonNegative, PORT_RANGE, regexError, dnsLabelErrors, dns1035Errors, portNameErrors, configKeyErrors, validPort, base64Length, selectorCauses, canon, labelsOf } from './validation/causes.js';
import { selectorMatches } from '../../lib/label-selector.js';
import { ingress, ingressClass, networkPolicy } from './validation/networking.js';
import { clusterRole, clusterRoleBinding, role, roleBinding } from './validation/rbac.js';
import { webhookConfiguration } from './validation/webhooks.js';
import { service } from './validation/services.js';
import { podDisruptionBudget } from './validation/policy.js';
import { endpointSlice } from './validation/discovery.js';
import { flowSchema, priorityLevelConfiguration } from './validation/flowcontrol.js';
import { csiDriver, csiNode, csiStorageCapacity, storageClass, volumeAttachment } from './validation/storage.js';
import { podSpecCauses } from './validation/pod.js';
import { persistentVolume, persistentVolumeClaim } from './validation/persistentvolumes.js';
import { limitRange, resourceQuota } from './validation/quota.js';
import { endpoints, namespace, node } from './validation/core.js';


// ---------------------------------------------------------------- pods

const RESTART = ['Always', 'OnFailure', 'Never'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP']; // sorted, as the reference lists them

// ---------------------------------------------------------------- workloads

interface WorkloadRule {
  /** Wording of the reference's "empty selector" message for this kind; absent: an empty selector is allowed. */
  emptySelector?: string;
  /** Restart policies its pod template may use. */
  restart: string[];
  /** The selector is a plain label map (replication controllers) rather than a label selector. */
  mapSelector?: boolean;
  /** The selector may be absent (jobs: the server generates it). */
  selectorOptional?: boolean;
}

/** Selector, template labels and pod template of a controller spec found at `p`. */
function controllerCauses(spec: J, p: string, rule: WorkloadRule, oldSpec: unknown): FieldCause[] {
  const out: FieldCause[] = [];
  const sel = spec.selector;
  let selector: J | undefined; // as a label selector, when usable for matching
  if (sel === undefined || sel === null || (rule.mapSelector && !Object.keys(labelsOf(sel)).length)) {
    if (!rule.selectorOptional) out.push(required(`${p}.selector`));
  } else if (rule.mapSelector) {
    selector = { matchLabels: sel };
  } else if (isObj(sel)) {
    const causes = selectorCauses(sel, `${p}.selector`);
    out.push(...causes);
    if (Object.keys(labelsOf(sel.matchLabels)).length + list(sel.matchExpressions).length === 0) {
      if (rule.emptySelector) out.push(invalid(`${p}.selector`, sel, rule.emptySelector, goSelector(sel)));
    } else if (!causes.length) selector = sel;
  }
  // Selectors are immutable (apps/v1 and batch/v1).
  if (isObj(oldSpec) && oldSpec.selector !== undefined && !rule.mapSelector && canon(oldSpec.selector) !== canon(sel)) {
    out.push(invalid(`${p}.selector`, sel, 'field is immutable', isObj(sel) ? goSelector(sel) : show(sel)));
  }
  const tpl = spec.template;
  if (!isObj(tpl)) {
    out.push(required(`${p}.template`));
    return out;
  }
  const labels = at(tpl, 'metadata.labels');
  if (selector && !selectorMatches(selector, labelsOf(labels))) {
    out.push(invalid(`${p}.template.metadata.labels`, labels, '`selector` does not match template `labels`', goMap(labels)));
  }
  out.push(...podSpecCauses(tpl.spec, `${p}.template.spec`, false));
  const rp = at(tpl, 'spec.restartPolicy');
  if (RESTART.includes(rp as string) && !rule.restart.includes(rp as string)) out.push(notSupported(`${p}.template.spec.restartPolicy`, rp, rule.restart));
  return out;
}

function workload(rule: WorkloadRule, more?: (spec: J, out: FieldCause[]) => void): Validator {
  return (o, old) => {
    const spec = isObj(o.spec) ? o.spec : {};
    const out: FieldCause[] = [];
    nonNegative(out, 'spec.replicas', spec.replicas);
    nonNegative(out, 'spec.revisionHistoryLimit', spec.revisionHistoryLimit);
    nonNegative(out, 'spec.minReadySeconds', spec.minReadySeconds);
    out.push(...controllerCauses(spec, 'spec', rule, old?.spec));
    more?.(spec, out);
    return out;
  };
}

const ALWAYS = ['Always'];

function deploymentMore(spec: J, out: FieldCause[]): void {
  const st = isObj(spec.strategy) ? spec.strategy : {};
  oneOf(out, 'spec.strategy.type', st.type, ['Recreate', 'RollingUpdate'], true);
  if (st.type === 'Recreate' && st.rollingUpdate != null) out.push(forbidden('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'"));
  const ru = isObj(st.rollingUpdate) ? st.rollingUpdate : {};
  const zero = (v: unknown) => v === 0 || v === '0%';
  if (zero(ru.maxUnavailable) && zero(ru.maxSurge)) out.push(invalid('spec.strategy.rollingUpdate.maxUnavailable', ru.maxUnavailable, 'may not be 0 when `maxSurge` is 0'));
  nonNegative(out, 'spec.progressDeadlineSeconds', spec.progressDeadlineSeconds);
  if (typeof spec.progressDeadlineSeconds === 'number' && spec.progressDeadlineSeconds <= (spec.minReadySeconds ?? 0)) {
    out.push(invalid('spec.progressDeadlineSeconds', spec.progressDeadlineSeconds, 'must be greater than minReadySeconds'));
  }
}

function jobSpecCauses(spec: J, p: string, old: unknown): FieldCause[] {
  const out: FieldCause[] = [];
  for (const k of ['parallelism', 'completions', 'backoffLimit']) nonNegative(out, `${p}.${k}`, spec[k]);
  oneOf(out, `${p}.completionMode`, spec.completionMode, ['NonIndexed', 'Indexed']);
  if (spec.completionMode === 'Indexed' && (spec.completions === undefined || spec.completions === null)) {
    out.push(required(`${p}.completions`, 'when completion mode is Indexed'));
  }
  // A job's pods run to completion: the template needs OnFailure or Never (defaulting gave it Always).
  out.push(...controllerCauses(spec, p, { restart: ['OnFailure', 'Never'], selectorOptional: true }, old));
  return out;
}

/** A cron schedule: five fields, or one of the @ descriptors the reference's parser accepts. */
function scheduleError(s: string): string | undefined {
  const t = s.trim();
  if (t.startsWith('@')) return /^@(yearly|annually|monthly|weekly|daily|midnight|hourly|every \S+)$/.test(t) ? undefined : `unrecognized descriptor: ${t}`;
  const f = t.replace(/^(CRON_)?TZ=\S+\s+/, '').split(/\s+/).filter(Boolean);
  return f.length === 5 ? undefined : `expected exactly 5 fields, found ${f.length}: [${f.join(' ')}]`;
}

function cronJob(o: KObject, old: KObject | undefined): FieldCause[] {
  const out: FieldCause[] = [];
  const name = o.metadata?.name;
  // Job names get an 11-character suffix; the reference caps cron job names to keep them labels.
  if (typeof name === 'string' && name.length > 52) out.push(invalid('metadata.name', name, 'must be no more than 52 characters'));
  const spec = isObj(o.spec) ? o.spec : {};
  if (typeof spec.schedule !== 'string' || spec.schedule === '') out.push(required('spec.schedule'));
  else {
    const err = scheduleError(spec.schedule);
    if (err) out.push(invalid('spec.schedule', spec.schedule, err));
  }
  oneOf(out, 'spec.concurrencyPolicy', spec.concurrencyPolicy, ['Allow', 'Forbid', 'Replace'], true);
  for (const k of ['startingDeadlineSeconds', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit']) nonNegative(out, `spec.${k}`, spec[k]);
  const jt = at(spec, 'jobTemplate.spec');
  out.push(...jobSpecCauses(isObj(jt) ? jt : {}, 'spec.jobTemplate.spec', at(old, 'spec.jobTemplate.spec')));
  return out;
}

// ---------------------------------------------------------------- services

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

// ---------------------------------------------------------------- config maps and secrets

const MAX_SIZE = 1024 * 1024;

function keyCauses(out: FieldCause[], map: unknown, p: string): void {
  for (const k of Object.keys(labelsOf(map))) for (const m of configKeyErrors(k)) out.push(invalid(`${p}[${k}]`, k, m));
}

/** Once `immutable` is true, neither the data nor the flag may change. */
function immutableCauses(out: FieldCause[], o: KObject, old: KObject | undefined, dataKeys: string[]): void {
  if (!old || old.immutable !== true) return;
  const msg = 'field is immutable when `immutable` is set';
  if (o.immutable !== true) out.push(forbidden('immutable', msg));
  for (const k of dataKeys) if (canon(o[k] ?? {}) !== canon(old[k] ?? {})) out.push(forbidden(k, msg));
}

function configMap(o: KObject, old: KObject | undefined): FieldCause[] {
  const out: FieldCause[] = [];
  keyCauses(out, o.data, 'data');
  keyCauses(out, o.binaryData, 'binaryData');
  let size = 0;
  for (const [k, v] of Object.entries(labelsOf(o.data))) {
    size += k.length + Buffer.byteLength(String(v));
    if (isObj(o.binaryData) && k in o.binaryData) out.push(invalid(`binaryData[${k}]`, k, 'duplicate of key present in data'));
  }
  for (const [k, v] of Object.entries(labelsOf(o.binaryData))) {
    const b = base64Length(String(v));
    size += k.length + ('bytes' in b ? b.bytes : 0);
  }
  // The reference's path is the empty one, which it prints as "[]".
  if (size > MAX_SIZE) out.push(tooLong('[]', MAX_SIZE));
  immutableCauses(out, o, old, ['data', 'binaryData']);
  return out;
}

function secret(o: KObject, old: KObject | undefined, brand: Brand): FieldCause[] {
  const out: FieldCause[] = [];
  const data = labelsOf(o.data);
  keyCauses(out, data, 'data');
  let size = 0;
  for (const [k, v] of Object.entries(data)) {
    const b = base64Length(String(v));
    // Never echo secret data back in an error.
    if ('bad' in b) out.push(invalid(`data[${k}]`, v, `illegal base64 data at input byte ${b.bad}`, '"<secret contents redacted>"'));
    else size += b.bytes;
  }
  if (size > MAX_SIZE) out.push(tooLong('data', MAX_SIZE));
  // Typed secrets must carry their keys.
  const d = labelDomain(brand);
  const needs: Record<string, string[]> = {
    [`${d}/tls`]: ['tls.crt', 'tls.key'],
    [`${d}/dockercfg`]: ['.dockercfg'],
    [`${d}/dockerconfigjson`]: ['.dockerconfigjson'],
    [`${d}/ssh-auth`]: ['ssh-privatekey'],
  };
  const keys = { ...data, ...labelsOf(o.stringData) };
  for (const k of needs[o.type as string] ?? []) if (!(k in keys)) out.push(required(`data[${k}]`));
  if (o.type === `${d}/service-account-token` && !labelsOf(o.metadata?.annotations)[`${d}/service-account.name`]) {
    out.push(required(`metadata.annotations[${d}/service-account.name]`));
  }
  if (old && (old.type ?? 'Opaque') !== (o.type ?? 'Opaque')) out.push(invalid('type', o.type, 'field is immutable'));
  immutableCauses(out, o, old, ['data']);
  return out;
}


/** Validators by row key (see catalog.ts rowKey). */
export const VALIDATORS: Record<string, Validator> = {
  pods: (o) => podSpecCauses(o.spec, 'spec', true, o.metadata?.name),
  podtemplates: (o) => (isObj(o.template) ? podSpecCauses(o.template.spec, 'template.spec', false) : [required('template')]),
  services: service,
  configmaps: configMap,
  secrets: secret,
  persistentvolumeclaims: persistentVolumeClaim,
  persistentvolumes: persistentVolume,
  limitranges: limitRange,
  resourcequotas: resourceQuota,
  endpoints,
  nodes: node,
  namespaces: namespace,
  replicationcontrollers: workload({ restart: ALWAYS, mapSelector: true }),
  'deployments.apps': workload({ emptySelector: 'empty selector is invalid for deployment', restart: ALWAYS }, deploymentMore),
  'replicasets.apps': workload({ emptySelector: 'empty selector is invalid for deployment', restart: ALWAYS }),
  'statefulsets.apps': workload({ emptySelector: 'empty selector is invalid for statefulset', restart: ALWAYS }, (spec, out) => {
    oneOf(out, 'spec.podManagementPolicy', spec.podManagementPolicy, ['OrderedReady', 'Parallel'], true);
    oneOf(out, 'spec.updateStrategy.type', at(spec, 'updateStrategy.type'), ['OnDelete', 'RollingUpdate'], true);
  }),
  'daemonsets.apps': workload({ emptySelector: 'empty selector is not valid for daemonset.', restart: ALWAYS }, (spec, out) => {
    oneOf(out, 'spec.updateStrategy.type', at(spec, 'updateStrategy.type'), ['OnDelete', 'RollingUpdate'], true);
  }),
  'jobs.batch': (o, old) => jobSpecCauses(isObj(o.spec) ? o.spec : {}, 'spec', old?.spec),
  'cronjobs.batch': cronJob,
  'horizontalpodautoscalers.autoscaling': validateHpa,
  events: validateCoreEvent,
  'events.events.cluster.io': validateEventsV1,
  'ingresses.networking.cluster.io': ingress,
  'ingressclasses.networking.cluster.io': ingressClass,
  'roles.rbac.authorization.cluster.io': role,
  'poddisruptionbudgets.policy': podDisruptionBudget,
  'endpointslices.discovery.cluster.io': endpointSlice,
  'flowschemas.flowcontrol.apiserver.cluster.io': flowSchema,
  'prioritylevelconfigurations.flowcontrol.apiserver.cluster.io': priorityLevelConfiguration,
  'storageclasses.storage.cluster.io': storageClass,
  'csinodes.storage.cluster.io': csiNode,
  'csidrivers.storage.cluster.io': csiDriver,
  'csistoragecapacities.storage.cluster.io': csiStorageCapacity,
  'volumeattachments.storage.cluster.io': volumeAttachment,
  'clusterroles.rbac.authorization.cluster.io': clusterRole,
  'rolebindings.rbac.authorization.cluster.io': roleBinding,
  'clusterrolebindings.rbac.authorization.cluster.io': clusterRoleBinding,
  'networkpolicies.networking.cluster.io': networkPolicy,
  'mutatingwebhookconfigurations.admissionregistration.cluster.io': webhookConfiguration(true),
  'validatingwebhookconfigurations.admissionregistration.cluster.io': webhookConfiguration(false),
};
