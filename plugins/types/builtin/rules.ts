// Per-type update and field rules of the reference's strategies that the first validators lacked:
// what a pod update may change (and what its resize sub-resource may), the
// immutable PriorityClass fields, and CSIStorageCapacity. Each returns the reference's causes; they
// are combined with validate.ts's validators by row key in index.ts.
import type { FieldCause } from '../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../lib/json.js';
import { seccompAnnotationCauses } from './validation/pod-security.js';
import { canon, dnsLabelErrors, duplicate, forbidden, invalid, notSupported, required, type Validator } from './validation/causes.js';
import { resourceRequirementsCauses } from './validation/pod-resources.js';
import { tolerationsCauses } from './validation/pod-scheduling.js';
import { validateLabels } from '../../../kernel/api/validation.js';
import { SYSTEM_PRIORITY } from '../../lib/system-priority-classes.js';

// ---------------------------------------------------------------- pods

const UPDATABLE = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
];

const INT32_MAX = 2147483647;
const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const given = (v: unknown) => v !== undefined && v !== null;

/** ValidateContainerUpdates: the same number of containers, each with an image without surrounding blanks. */
function containerUpdateCauses(spec: J, old: J, k: string): { causes: FieldCause[]; stop: boolean } {
  const now = list(spec[k]);
  if (now.length !== list(old[k]).length) return { causes: [forbidden(`spec.${k}`, 'pod updates may not add or remove containers')], stop: true };
  const causes: FieldCause[] = [];
  now.forEach((c, i) => {
    const image = text(c.image);
    if (!image) causes.push(required(`spec.${k}[${i}].image`));
    if (image.trim() !== image) causes.push(invalid(`spec.${k}[${i}].image`, image, 'must not have leading or trailing whitespace'));
  });
  return { causes, stop: false };
}

/** A toleration as Go compares it: unset strings are empty. */
const tolerationKey = (t: J) => canon({ key: text(t.key), operator: text(t.operator), value: text(t.value), effect: text(t.effect) });

/** validateOnlyAddedTolerations: every old toleration is still there (its tolerationSeconds may change); then the new list's rules. */
function tolerationUpdateCauses(spec: J, old: J): FieldCause[] {
  const now = new Set(list(spec.tolerations).map(tolerationKey));
  if (list(old.tolerations).some((t) => !now.has(tolerationKey(t)))) return [forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds')];
  return tolerationsCauses(spec.tolerations, 'spec.tolerations');
}

/** validateOnlyDeletedSchedulingGates: an update may only remove gates. */
function schedulingGateUpdateCauses(spec: J, old: J): FieldCause[] {
  const had = new Set(list(old.schedulingGates).map((g) => g.name));
  return list(spec.schedulingGates).flatMap((g, i) => (had.has(g.name) ? [] : [forbidden(`spec.schedulingGates[${i}].name`, `only deletion is allowed, but found new scheduling gate '${text(g.name)}'`)]));
}

/**
 * ValidatePodUpdate's spec rules: containers may not be added or removed, activeDeadlineSeconds may
 * only be set or lowered, tolerations only added; beyond those, only container images and a negative
 * terminationGracePeriodSeconds may change. The resize sub-resource changes only container
 * resources. The reference appends a Go diff of the two specs to the message; ours ends after the list.
 */
function podSpecUpdateCauses(spec: J, old: J, subresource: string | undefined): FieldCause[] {
  if (subresource === 'resize') {
    const munged: J = structuredClone(spec);
    list(munged.containers).forEach((c, i) => {
      for (const f of ['resources', 'resizePolicy']) {
        const v = list(old.containers)[i]?.[f];
        if (v === undefined) delete c[f]; else c[f] = v;
      }
    });
    return canon(munged) === canon(old) ? [] : [forbidden('spec', 'only cpu and memory resources are mutable')];
  }
  const out: FieldCause[] = [];
  for (const k of ['containers', 'initContainers']) {
    const r = containerUpdateCauses(spec, old, k);
    out.push(...r.causes);
    if (r.stop) return out;
  }
  const ads = spec.activeDeadlineSeconds, oldAds = old.activeDeadlineSeconds;
  if (given(ads)) {
    if (typeof ads === 'number' && (ads < 0 || ads > INT32_MAX)) return [...out, invalid('spec.activeDeadlineSeconds', ads, `must be between 0 and ${INT32_MAX}, inclusive`)];
    if (typeof oldAds === 'number' && typeof ads === 'number' && oldAds < ads) return [...out, invalid('spec.activeDeadlineSeconds', ads, 'must be less than or equal to previous value')];
  } else if (given(oldAds)) out.push(invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value', '"null"'));
  out.push(...tolerationUpdateCauses(spec, old), ...schedulingGateUpdateCauses(spec, old));
  const munged: J = structuredClone(spec);
  for (const k of ['containers', 'initContainers']) list(munged[k]).forEach((c, i) => {
    const v = list(old[k])[i]?.image;
    if (v === undefined) delete c.image; else c.image = v;
  });
  for (const k of ['activeDeadlineSeconds', 'tolerations', 'schedulingGates']) if (old[k] === undefined) delete munged[k]; else munged[k] = old[k];
  if (typeof old.terminationGracePeriodSeconds === 'number' && old.terminationGracePeriodSeconds < 0 && munged.terminationGracePeriodSeconds === 1) munged.terminationGracePeriodSeconds = old.terminationGracePeriodSeconds;
  if (canon(munged) !== canon(old)) out.push(forbidden('spec', `pod updates may not change fields other than ${UPDATABLE.join(',')}`));
  return out;
}

/**
 * The ephemeralcontainers sub-resource adds containers: an existing one may be neither removed nor
 * changed (matched by name, as patches reorder). The reference appends a Go diff to "may not be
 * changed"; ours ends after the name.
 */
function ephemeralUpdateCauses(spec: J, old: J): FieldCause[] {
  const byName = new Map(list(spec.ephemeralContainers).map((c) => [c.name, c]));
  const out: FieldCause[] = [];
  for (const c of list(old.ephemeralContainers)) {
    const now = byName.get(c.name);
    if (!now) out.push(forbidden('spec.ephemeralContainers', `existing ephemeral containers ${JSON.stringify(c.name)} may not be removed\n`));
    else if (canon(now) !== canon(c)) out.push(forbidden('spec.ephemeralContainers', `existing ephemeral containers ${JSON.stringify(c.name)} may not be changed\n`));
  }
  return out;
}

export const pod: Validator = (o, old, brand, subresource) => {
  const spec = isObj(o.spec) ? o.spec : {};
  const out: FieldCause[] = [];
  if (!old) {
    if (list(spec.ephemeralContainers).length) out.push(forbidden('spec.ephemeralContainers', 'cannot be set on create'));
    if (typeof spec.nodeName === 'string' && spec.nodeName && list(spec.schedulingGates).length) out.push(forbidden('spec.nodeName', 'cannot be set until all schedulingGates have been cleared'));
    out.push(...seccompAnnotationCauses(o.metadata?.annotations, spec, 'spec'));
  }
  if (old && subresource === 'ephemeralcontainers') {
    if (isObj(old.metadata?.annotations) && old.metadata.annotations[`${brand.keyDomain}/config.mirror`] !== undefined) return [forbidden('', 'static pods do not support ephemeral containers')];
    out.push(...ephemeralUpdateCauses(spec, isObj(old.spec) ? old.spec : {}));
  }
  // Sub-resources with their own rules on the spec (binding, ephemeral containers) are not pod updates.
  if (old && (subresource === undefined || subresource === 'resize')) out.push(...podSpecUpdateCauses(spec, isObj(old.spec) ? old.spec : {}, subresource));
  return out;
};

// ---------------------------------------------------------------- scheduling

const HIGHEST_USER_PRIORITY = 1000000000;

export const priorityClass: Validator = (o, old) => {
  const out: FieldCause[] = [];
  const name = o.metadata?.name ?? '';
  if (!old && name.startsWith('system-')) {
    // names of this prefix are the system classes' alone, with their values (the reference's IsKnownSystemPriorityClass)
    const known = SYSTEM_PRIORITY[name];
    const why = known === undefined ? `${name} is not a known system priority class`
      : o.value !== known ? `value of ${name} PriorityClass must be ${known}`
      : o.globalDefault === true ? `globalDefault of ${name} PriorityClass must be false` : '';
    if (why) out.push(forbidden('metadata.name', `priority class names with 'system-' prefix are reserved for system use only. error: ${why}`));
  } else if (!old && !name.startsWith('system-') && typeof o.value === 'number' && o.value > HIGHEST_USER_PRIORITY) {
    out.push(forbidden('value', `maximum allowed value of a user defined priority is ${HIGHEST_USER_PRIORITY}`));
  }
  // an update is checked for its immutable fields only (the reference validates no more there)
  const pp = o.preemptionPolicy;
  if (!old && pp === '') out.push(required('preemptionPolicy'));
  else if (!old && pp !== undefined && pp !== null && pp !== 'PreemptLowerPriority' && pp !== 'Never') out.push(notSupported('preemptionPolicy', pp, ['PreemptLowerPriority', 'Never']));
  if (old) {
    if (o.value !== old.value) out.push(forbidden('value', 'may not be changed in an update.'));
    if ((o.preemptionPolicy ?? null) !== (old.preemptionPolicy ?? null)) out.push(invalid('preemptionPolicy', o.preemptionPolicy ?? null, 'field is immutable'));
  }
  return out;
};

// ---------------------------------------------------------------- storage

/** CSIStorageCapacity: a storage class name, non-negative quantities, a valid topology selector; all immutable but capacity. */

// ---------------------------------------------------------------- rbac, node, apps

/** A RuntimeClass handler is a DNS label and immutable. */
/** A RuntimeClass: handler (a DNS label, immutable), overhead as a pod's limits, scheduling's node selector and tolerations. */
const runtimeClass: Validator = (o, old) => {
  const h = typeof o.handler === 'string' ? o.handler : '';
  const own = dnsLabelErrors(h).map((m) => invalid('handler', h, m));
  if (isObj(o.overhead)) own.push(...resourceRequirementsCauses({ limits: o.overhead.podFixed }, 'overhead'));
  if (isObj(o.scheduling)) {
    const sch = o.scheduling;
    if (sch.nodeSelector !== undefined && sch.nodeSelector !== null) own.push(...validateLabels(sch.nodeSelector, 'scheduling.nodeSelector'));
    // the reference's path repeats "tolerations" for the toleration rules (not for duplicates)
    own.push(...tolerationsCauses(sch.tolerations, 'scheduling.tolerations.tolerations'));
    const seen = new Set<string>();
    list(sch.tolerations).forEach((t, i) => {
      const k = JSON.stringify([t.key ?? '', t.operator ?? '', t.value ?? '', t.effect ?? '']);
      if (seen.has(k)) own.push(duplicate(`scheduling.tolerations[${i}]`, t)); else seen.add(k);
    });
  }
  if (old && o.handler !== old.handler) own.push(invalid('handler', o.handler ?? '', 'field is immutable'));
  return own;
};

/** A Lease: positive duration, non-negative transitions. */
const lease: Validator = (o) => {
  const out: FieldCause[] = [];
  const spec = isObj(o.spec) ? o.spec : {};
  if (typeof spec.leaseDurationSeconds === 'number' && spec.leaseDurationSeconds <= 0) out.push(invalid('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'));
  if (typeof spec.leaseTransitions === 'number' && spec.leaseTransitions < 0) out.push(invalid('spec.leaseTransitions', spec.leaseTransitions, 'must be greater than or equal to 0'));
  return out;
};

/** A ControllerRevision carries data and a non-negative revision. */
const controllerRevision: Validator = (o, old) => {
  const out: FieldCause[] = [];
  if (o.data === undefined || o.data === null) out.push(required('data', 'data is mandatory'));
  if (typeof o.revision === 'number' && o.revision < 0) out.push(invalid('revision', o.revision, 'must be greater than or equal to 0'));
  if (old && canon(o.data ?? null) !== canon(old.data ?? null)) out.push(invalid('data', o.data ?? null, 'field is immutable'));
  return out;
};

// ---------------------------------------------------------------- by row key

/** These rules by row key (see catalog.ts rowKey); index.ts runs them after validate.ts's. */
export const RULES: Record<string, Validator> = {
  pods: pod,
  'priorityclasses.scheduling.cluster.io': priorityClass,
  'runtimeclasses.node.cluster.io': runtimeClass,
  'leases.coordination.cluster.io': lease,
  'controllerrevisions.apps': controllerRevision,
};
