// The workload controllers' rules (ReplicationController, ReplicaSet, Deployment, StatefulSet,
// DaemonSet) and PodTemplate, as the reference's apps and core validation and its strategies run
// them. Two of the reference's habits show on the wire and are kept: the DaemonSet, ReplicaSet and
// ReplicationController strategies validate the whole object and then the update, so every cause of
// their spec appears twice on update; and a StatefulSet's pod spec is not validated at all (only its
// template's labels, annotations and restart policy).
import type { FieldCause } from '../../../../kernel/contracts/index.js';
import { validateAnnotations, validateLabels, validateLabelSelector } from '../../../../kernel/api/validation.js';
import { selectorMatches } from '../../../lib/label-selector.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { canon, forbidden, goMap, goSelector, invalid, labelsOf, nonNegative, notSupported, required, show, type Validator } from './causes.js';
import { podSpecCauses } from './pod.js';
import { seccompAnnotationCauses } from './pod-security.js';

const obj = (v: unknown): J => (isObj(v) ? v : {});

/** ValidatePodTemplateSpec: the template's labels and annotations, its pod spec, and the seccomp annotations against the fields. */
export function podTemplateSpecCauses(tpl: J, p: string): FieldCause[] {
  const meta = obj(tpl.metadata);
  const spec = obj(tpl.spec);
  return [
    ...validateLabels(meta.labels, `${p}.labels`),
    ...validateAnnotations(meta.annotations, `${p}.annotations`),
    ...podSpecCauses(spec, `${p}.spec`, false),
    ...seccompAnnotationCauses(meta.annotations, spec, `${p}.spec`),
  ];
}

// ---------------------------------------------------------------- selectors

/**
 * The selector as the reference's LabelSelectorAsSelector sees it: 'nothing' when absent (matches no
 * labels), 'everything' when empty, 'bad' when it does not parse, else the selector itself.
 */
export type Parsed = 'nothing' | 'everything' | 'bad' | J;

export function parseSelector(sel: unknown): Parsed {
  if (sel === undefined || sel === null) return 'nothing';
  if (!isObj(sel)) return 'bad';
  if (Object.keys(labelsOf(sel.matchLabels)).length + (Array.isArray(sel.matchExpressions) ? sel.matchExpressions.length : 0) === 0) return 'everything';
  return validateLabelSelector(sel, 'x').length ? 'bad' : sel;
}

/** Whether the template's labels fail the selector (an empty selector selects everything; an absent one nothing). */
export function labelsMismatch(parsed: Parsed, labels: unknown): boolean {
  if (parsed === 'everything' || parsed === 'bad') return false;
  return parsed === 'nothing' || !selectorMatches(parsed, labelsOf(labels));
}

const mismatch = (p: string, labels: unknown) => invalid(`${p}.metadata.labels`, labels, '`selector` does not match template `labels`', goMap(labels));

/** A required label selector, strictly validated, that may not be empty (Deployment, ReplicaSet, StatefulSet). */
function requiredSelectorCauses(sel: unknown, p: string, kind: string, unparsable: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (sel === undefined || sel === null) out.push(required(p));
  else {
    out.push(...validateLabelSelector(sel, p));
    if (parseSelector(sel) === 'everything') out.push(invalid(p, sel, `empty selector is invalid for ${kind}`, goSelector(obj(sel))));
  }
  if (parseSelector(sel) === 'bad') out.push(invalid(p, sel, unparsable, goSelector(obj(sel))));
  return out;
}

/** Selectors of apps/v1 objects may not change after creation. */
function immutableSelector(spec: J, old: J): FieldCause[] {
  return canon(spec.selector ?? null) === canon(old.selector ?? null) ? [] : [invalid('spec.selector', spec.selector, 'field is immutable', isObj(spec.selector) ? goSelector(spec.selector) : show(spec.selector))];
}

// ---------------------------------------------------------------- templates of replicated pods

/** ValidatePodTemplateSpecForReplicaSet (and ForRC): selector match, the template, Always restarts, no deadline. */
function replicatedTemplateCauses(tpl: J, parsed: Parsed, p: string, kind: string, replicas: unknown, oldTpl: J | undefined): FieldCause[] {
  const out: FieldCause[] = [];
  const labels = obj(tpl.metadata).labels;
  if (labelsMismatch(parsed, labels)) out.push(mismatch(p, labels));
  out.push(...podTemplateSpecCauses(tpl, p));
  if ((typeof replicas === 'number' ? replicas : 1) > 1) out.push(...readOnlyDiskCauses(tpl, oldTpl, `${p}.spec.volumes`));
  out.push(...alwaysRestartCauses(obj(tpl.spec), `${p}.spec`, kind));
  return out;
}

/**
 * A GCE persistent disk mounts on several machines only read-only: refused in a template of more
 * than one pod, unless the template being replaced had a writable one already (ValidateReadOnlyPersistentDisks).
 */
function readOnlyDiskCauses(tpl: J, oldTpl: J | undefined, p: string): FieldCause[] {
  const writable = (v: J) => isObj(v.gcePersistentDisk) && v.gcePersistentDisk.readOnly !== true;
  if (oldTpl && list(obj(oldTpl.spec).volumes).some(writable)) return [];
  return list(obj(tpl.spec).volumes).flatMap((v, i) => (writable(v) ? [invalid(`${p}[${i}].gcePersistentDisk.readOnly`, false, 'must be true for replicated pods > 1; GCE PD can only be mounted on multiple machines if it is read-only')] : []));
}

/** Controllers that keep pods running: restartPolicy Always, and no activeDeadlineSeconds. */
function alwaysRestartCauses(spec: J, p: string, kind: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (spec.restartPolicy !== 'Always') out.push(notSupported(`${p}.restartPolicy`, spec.restartPolicy ?? '', ['Always']));
  if (spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds !== null) out.push(forbidden(`${p}.activeDeadlineSeconds`, `activeDeadlineSeconds in ${kind} is not Supported`));
  return out;
}

// ---------------------------------------------------------------- int-or-percent fields

const PERCENT_ERROR = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";
const isPercent = (v: unknown): v is string => typeof v === 'string' && /^[0-9]+%$/.test(v);

/** ValidatePositiveIntOrPercent. */
function intOrPercentCauses(v: unknown, p: string): FieldCause[] {
  if (typeof v === 'string') return isPercent(v) ? [] : [invalid(p, v, PERCENT_ERROR)];
  if (typeof v === 'number' && v < 0) return [invalid(p, v, 'must be greater than or equal to 0')];
  return [];
}

/** The value an int-or-percent stands for (an unparsable percent counts as 0, as in the reference). */
const intOrPercentValue = (v: unknown): number => (typeof v === 'number' ? v : isPercent(v) ? Number(v.slice(0, -1)) : 0);

function notOver100(v: unknown, p: string): FieldCause[] {
  return isPercent(v) && intOrPercentValue(v) > 100 ? [invalid(p, v, 'must not be greater than 100%')] : [];
}

// ---------------------------------------------------------------- the kinds

function replicaSetSpecCauses(spec: J, oldSpec?: J): FieldCause[] {
  const out: FieldCause[] = [];
  nonNegative(out, 'spec.replicas', spec.replicas);
  nonNegative(out, 'spec.minReadySeconds', spec.minReadySeconds);
  out.push(...requiredSelectorCauses(spec.selector, 'spec.selector', 'deployment', 'invalid label selector'));
  const parsed = parseSelector(spec.selector);
  if (parsed !== 'bad') out.push(...replicatedTemplateCauses(obj(spec.template), parsed, 'spec.template', 'ReplicaSet', spec.replicas, oldSpec && obj(oldSpec.template)));
  return out;
}

function deploymentStrategyCauses(st: J): FieldCause[] {
  const p = 'spec.strategy';
  if (st.type === 'Recreate') return st.rollingUpdate != null ? [forbidden(`${p}.rollingUpdate`, "may not be specified when strategy `type` is 'Recreate'")] : [];
  if (st.type !== 'RollingUpdate') return [notSupported(p, st, ['Recreate', 'RollingUpdate'])];
  if (!isObj(st.rollingUpdate)) return [required(`${p}.rollingUpdate`, 'this should be defaulted and never be nil')];
  const ru = st.rollingUpdate;
  const out = [...intOrPercentCauses(ru.maxUnavailable, `${p}.rollingUpdate.maxUnavailable`), ...intOrPercentCauses(ru.maxSurge, `${p}.rollingUpdate.maxSurge`)];
  if (intOrPercentValue(ru.maxUnavailable) === 0 && intOrPercentValue(ru.maxSurge) === 0) out.push(invalid(`${p}.rollingUpdate.maxUnavailable`, ru.maxUnavailable, 'may not be 0 when `maxSurge` is 0'));
  out.push(...notOver100(ru.maxUnavailable, `${p}.rollingUpdate.maxUnavailable`));
  return out;
}

function deploymentSpecCauses(spec: J, oldSpec?: J): FieldCause[] {
  const out: FieldCause[] = [];
  nonNegative(out, 'spec.replicas', spec.replicas);
  out.push(...requiredSelectorCauses(spec.selector, 'spec.selector', 'deployment', 'invalid label selector'));
  const parsed = parseSelector(spec.selector);
  if (parsed !== 'bad') out.push(...replicatedTemplateCauses(obj(spec.template), parsed, 'spec.template', 'ReplicaSet', spec.replicas, oldSpec && obj(oldSpec.template)));
  out.push(...deploymentStrategyCauses(obj(spec.strategy)));
  nonNegative(out, 'spec.minReadySeconds', spec.minReadySeconds);
  nonNegative(out, 'spec.revisionHistoryLimit', spec.revisionHistoryLimit);
  if (isObj(spec.rollbackTo)) nonNegative(out, 'spec.rollback.version', spec.rollbackTo.revision);
  const pds = spec.progressDeadlineSeconds;
  if (typeof pds === 'number') {
    nonNegative(out, 'spec.progressDeadlineSeconds', pds);
    if (pds <= (typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0)) out.push(invalid('spec.progressDeadlineSeconds', pds, 'must be greater than minReadySeconds'));
  }
  return out;
}

function daemonSetStrategyCauses(st: J): FieldCause[] {
  const p = 'spec.updateStrategy';
  if (st.type === 'OnDelete') return [];
  if (st.type !== 'RollingUpdate') return [notSupported(p, st, ['RollingUpdate', 'OnDelete'])];
  if (!isObj(st.rollingUpdate)) return [required(`${p}.rollingUpdate`)];
  const ru = st.rollingUpdate, rp = `${p}.rollingUpdate`;
  const out = [
    ...intOrPercentCauses(ru.maxUnavailable, `${rp}.maxUnavailable`), ...intOrPercentCauses(ru.maxSurge, `${rp}.maxSurge`),
    ...notOver100(ru.maxUnavailable, `${rp}.maxUnavailable`), ...notOver100(ru.maxSurge, `${rp}.maxSurge`),
  ];
  const hasUnavailable = intOrPercentValue(ru.maxUnavailable) !== 0, hasSurge = intOrPercentValue(ru.maxSurge) !== 0;
  if (hasUnavailable && hasSurge) out.push(invalid(`${rp}.maxSurge`, ru.maxSurge, 'may not be set when maxUnavailable is non-zero'));
  if (!hasUnavailable && !hasSurge) out.push(required(`${rp}.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
  return out;
}

function daemonSetSpecCauses(spec: J, oldSpec?: J): FieldCause[] {
  const out: FieldCause[] = [];
  // The selector is not required here: an absent one selects nothing, so the template's labels fail it.
  out.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  const parsed = parseSelector(spec.selector);
  const tpl = obj(spec.template);
  if (labelsMismatch(parsed, obj(tpl.metadata).labels)) out.push(mismatch('spec.template', obj(tpl.metadata).labels));
  if (parsed === 'everything') out.push(invalid('spec.selector', spec.selector, 'empty selector is invalid for daemonset', goSelector(obj(spec.selector))));
  out.push(...podTemplateSpecCauses(tpl, 'spec.template'));
  out.push(...readOnlyDiskCauses(tpl, oldSpec && obj(oldSpec.template), 'spec.template.spec.volumes'));
  out.push(...alwaysRestartCauses(obj(tpl.spec), 'spec.template.spec', 'DaemonSet'));
  nonNegative(out, 'spec.minReadySeconds', spec.minReadySeconds);
  out.push(...daemonSetStrategyCauses(obj(spec.updateStrategy)));
  nonNegative(out, 'spec.revisionHistoryLimit', spec.revisionHistoryLimit);
  return out;
}

function statefulSetStrategyCauses(st: J): FieldCause[] {
  const p = 'spec.updateStrategy';
  if (st.type === undefined || st.type === null || st.type === '') return [required(p)];
  if (st.type === 'OnDelete') return st.rollingUpdate != null ? [invalid(`${p}.rollingUpdate`, st.rollingUpdate, "only allowed for updateStrategy 'RollingUpdate'")] : [];
  if (st.type !== 'RollingUpdate') return [invalid(p, st, "must be 'RollingUpdate' or 'OnDelete'")];
  if (!isObj(st.rollingUpdate)) return [];
  const ru = st.rollingUpdate, rp = `${p}.rollingUpdate`;
  const out: FieldCause[] = [];
  nonNegative(out, `${rp}.partition`, ru.partition);
  // maxUnavailable belongs to MaxUnavailableStatefulSet, a feature 1.28 leaves off: the reference drops it unchecked.
  return out;
}

const RETENTION = ['Retain', 'Delete'];

function statefulSetSpecCauses(spec: J): FieldCause[] {
  const out: FieldCause[] = [];
  const pmp = spec.podManagementPolicy;
  if (pmp === undefined || pmp === null || pmp === '') out.push(required('spec.podManagementPolicy'));
  else if (pmp !== 'OrderedReady' && pmp !== 'Parallel') out.push(invalid('spec.podManagementPolicy', pmp, "must be 'OrderedReady' or 'Parallel'"));
  out.push(...statefulSetStrategyCauses(obj(spec.updateStrategy)));
  if (isObj(spec.persistentVolumeClaimRetentionPolicy)) {
    for (const k of ['whenDeleted', 'whenScaled']) {
      const v = spec.persistentVolumeClaimRetentionPolicy[k];
      if (!RETENTION.includes(v)) out.push(notSupported(`spec.persistentVolumeClaimRetentionPolicy.${k}`, v ?? '', RETENTION));
    }
  }
  nonNegative(out, 'spec.replicas', spec.replicas);
  nonNegative(out, 'spec.minReadySeconds', spec.minReadySeconds);
  if (isObj(spec.ordinals)) nonNegative(out, 'spec.ordinals.start', spec.ordinals.start);
  out.push(...requiredSelectorCauses(spec.selector, 'spec.selector', 'statefulset', ''));
  const parsed = parseSelector(spec.selector);
  const tpl = obj(spec.template);
  const meta = obj(tpl.metadata);
  if (parsed !== 'bad') {
    // The reference leaves a StatefulSet's pod spec unvalidated (volume claim templates would fail volume mounts).
    if (labelsMismatch(parsed, meta.labels)) out.push(mismatch('spec.template', meta.labels));
    out.push(...validateLabels(meta.labels, 'spec.template.labels'), ...validateAnnotations(meta.annotations, 'spec.template.annotations'));
  }
  out.push(...alwaysRestartCauses(obj(tpl.spec), 'spec.template.spec', 'StatefulSet'));
  return out;
}

/** Fields of a StatefulSet's spec an update may change; the rest are fixed at creation. */
const STATEFULSET_MUTABLE = ['replicas', 'template', 'updateStrategy', 'minReadySeconds', 'ordinals', 'persistentVolumeClaimRetentionPolicy'];

function statefulSetUpdateCauses(spec: J, old: J): FieldCause[] {
  const fixed = (s: J) => canon(Object.fromEntries(Object.entries(s).filter(([k]) => !STATEFULSET_MUTABLE.includes(k))));
  if (fixed(spec) === fixed(old)) return [];
  return [forbidden('spec', "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")];
}

function replicationControllerSpecCauses(spec: J, oldSpec?: J): FieldCause[] {
  const out: FieldCause[] = [];
  nonNegative(out, 'spec.minReadySeconds', spec.minReadySeconds);
  const selector = labelsOf(spec.selector);
  if (!Object.keys(selector).length) out.push(required('spec.selector'));
  nonNegative(out, 'spec.replicas', spec.replicas);
  if (!isObj(spec.template)) out.push(required('spec.template'));
  else out.push(...replicatedTemplateCauses(spec.template, Object.keys(selector).length ? { matchLabels: selector } : 'everything', 'spec.template', 'ReplicationController', spec.replicas, oldSpec && obj(oldSpec.template)));
  return out;
}

/**
 * A validator from a kind's spec rules. `twice`: its strategy validates the object, then the update,
 * so on update each spec cause is reported twice (its metadata too: the catalog's metadataChecksOnUpdate). `selectorFixed`: apps/v1 selectors are immutable.
 */
function kind(specCauses: (spec: J, oldSpec?: J) => FieldCause[], opts: { twice?: boolean; selectorFixed?: boolean; update?: (spec: J, old: J) => FieldCause[] } = {}): Validator {
  return (o, old, _brand, subresource) => {
    // The status and scale sub-resources have rules of their own; the spec is the stored one.
    if (subresource) return [];
    const spec = obj(o.spec);
    if (!old) return specCauses(spec);
    const oldSpec = obj(old.spec);
    // validated as an object (no old spec), then as an update of the old one
    const causes = specCauses(spec, oldSpec);
    return [
      ...(opts.twice ? [...specCauses(spec), ...causes] : causes),
      ...(opts.update?.(spec, oldSpec) ?? []),
      ...(opts.selectorFixed ? immutableSelector(spec, oldSpec) : []),
    ];
  };
}

/** Validators by row key (see catalog.ts rowKey). */
export const WORKLOAD_VALIDATORS: Record<string, Validator> = {
  podtemplates: (o) => podTemplateSpecCauses(obj(o.template), 'template'),
  replicationcontrollers: kind(replicationControllerSpecCauses, { twice: true }),
  'replicasets.apps': kind(replicaSetSpecCauses, { twice: true, selectorFixed: true }),
  'deployments.apps': kind(deploymentSpecCauses, { selectorFixed: true }),
  'daemonsets.apps': kind(daemonSetSpecCauses, { twice: true, selectorFixed: true }),
  'statefulsets.apps': kind(statefulSetSpecCauses, { update: statefulSetUpdateCauses }),
};
