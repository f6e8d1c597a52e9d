// Per-type update and field rules of the reference's strategies that the first validators lacked:
// what a pod update may change (and what its resize sub-resource may), the
// immutable PriorityClass fields, and CSIStorageCapacity. Each returns the reference's causes; they
// are combined with validate.ts's validators by row key in index.ts.
import type { FieldCause, KObject } from '../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../lib/json.js';
import { seccompAnnotationCauses } from './validation/pod-security.js';
import { canon, dnsLabelErrors, dnsSubdomainErrors, duplicate, forbidden, invalid, notSupported, required, selectorCauses, type Validator } from './validation/causes.js';
import { resourceRequirementsCauses } from './validation/pod-resources.js';
import { tolerationsCauses } from './validation/pod-scheduling.js';
import { validateLabels } from '../../../kernel/api/validation.js';

// ---------------------------------------------------------------- pods

const UPDATABLE = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
];

/**
 * A pod update may change only container images, activeDeadlineSeconds, tolerations (additions) and
 * a negative terminationGracePeriodSeconds; the resize sub-resource only container resources. The
 * reference appends a Go diff of the two specs to the message; ours ends after the list.
 */
function podSpecUpdateCauses(spec: J, old: J, subresource: string | undefined): FieldCause[] {
  const munged: J = structuredClone(spec);
  const oldContainers = (k: string) => list(old[k]);
  const keepFromOld = (k: string, fields: string[]) => list(munged[k]).forEach((c, i) => {
    for (const f of fields) {
      const v = oldContainers(k)[i]?.[f];
      if (v === undefined) delete c[f]; else c[f] = v;
    }
  });
  if (subresource === 'resize') {
    keepFromOld('containers', ['resources', 'resizePolicy']);
  } else {
    keepFromOld('containers', ['image']);
    keepFromOld('initContainers', ['image']);
    for (const k of ['activeDeadlineSeconds', 'tolerations']) if (old[k] === undefined) delete munged[k]; else munged[k] = old[k];
    if (typeof old.terminationGracePeriodSeconds === 'number' && old.terminationGracePeriodSeconds < 0 && munged.terminationGracePeriodSeconds === 1) munged.terminationGracePeriodSeconds = old.terminationGracePeriodSeconds;
  }
  if (canon(munged) === canon(old)) return [];
  if (subresource === 'resize') return [forbidden('spec', 'only cpu and memory resources are mutable')];
  return [forbidden('spec', `pod updates may not change fields other than ${UPDATABLE.join(',')}`)];
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
  if (!name.startsWith('system-') && typeof o.value === 'number' && o.value > HIGHEST_USER_PRIORITY) {
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
