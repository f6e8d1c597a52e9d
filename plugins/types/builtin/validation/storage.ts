// storage.k8s.io/v1: StorageClass, CSINode, VolumeAttachment, CSIDriver and CSIStorageCapacity, as
// the reference validates them.
// Their strategies validate an update as the object and then the update rules (CSINode and
// VolumeAttachment: the update rules validate the object again, so each of its causes comes twice).
import type { FieldCause, KObject } from '../../../../kernel/contracts/index.js';
import { canon } from './causes.js';
import { isDNS1123Subdomain, validateLabelSelector, validateQualifiedName } from '../../../../kernel/api/validation.js';
import { parseQuantity, sign } from '../../../../workers/body/quantity.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { duplicate, forbidden, invalid, notSupported, required, tooLong, type Validator } from './causes.js';

const str = (v: unknown) => (typeof v === 'string' ? v : '');
const isSet = (v: unknown): boolean => v !== undefined && v !== null;

/** The reference's ValidateCSIDriverName. */
export function csiDriverNameCauses(name: string, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (!name) out.push(required(p));
  if (name.length > 63) out.push(tooLong(p, 63));
  for (const m of isDNS1123Subdomain(name.toLowerCase())) out.push(invalid(p, name, m));
  return out;
}

/** A TopologySelectorTerm: each expression's values (required, no duplicates) and key; no key twice. */
export function topologyTermCauses(term: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const keys = new Set<string>();
  list(term.matchLabelExpressions).forEach((e, i) => {
    const ep = `${p}.matchLabelExpressions[${i}]`;
    const values: unknown[] = Array.isArray(e.values) ? e.values : [];
    if (!values.length) out.push(required(`${ep}.values`));
    const seen = new Set<unknown>();
    values.forEach((v, j) => { if (seen.has(v)) out.push(duplicate(`${ep}.values[${j}]`, v)); seen.add(v); });
    out.push(...validateQualifiedName(str(e.key), `${ep}.key`));
    if (keys.has(str(e.key))) out.push(duplicate(`${ep}.key`, str(e.key)));
    keys.add(str(e.key));
  });
  return out;
}

// ---------------------------------------------------------------- StorageClass

function storageClassCauses(o: KObject): FieldCause[] {
  const out: FieldCause[] = [];
  const provisioner = str(o.provisioner);
  if (!provisioner) out.push(required('provisioner'));
  else out.push(...validateQualifiedName(provisioner.toLowerCase(), 'provisioner'));
  const params = isObj(o.parameters) ? o.parameters : {};
  if (Object.keys(params).length > 512) out.push(tooLong('parameters', 512));
  else {
    let size = 0;
    for (const [k, v] of Object.entries(params)) {
      if (!k) out.push(invalid('parameters', k, 'field can not be empty.'));
      size += k.length + str(v).length;
    }
    if (size > 256 * 1024) out.push(tooLong('parameters', 256 * 1024));
  }
  if (str(o.reclaimPolicy) && !['Delete', 'Retain'].includes(str(o.reclaimPolicy))) out.push(notSupported('reclaimPolicy', o.reclaimPolicy, ['Delete', 'Retain']));
  if (!isSet(o.volumeBindingMode)) out.push(required('volumeBindingMode'));
  else if (!['Immediate', 'WaitForFirstConsumer'].includes(str(o.volumeBindingMode))) out.push(notSupported('volumeBindingMode', o.volumeBindingMode, ['Immediate', 'WaitForFirstConsumer']));
  const terms = list(o.allowedTopologies);
  // The reference starts its list of seen terms with one empty entry per term (a make() with a
  // length, then appends): a term without expressions is a duplicate of each of them.
  const seen: string[] = terms.map(() => canon({}));
  terms.forEach((t, i) => {
    out.push(...topologyTermCauses(t, `allowedTopologies[${i}]`));
    // the same set of requirements twice (compared as key → value sets)
    const key = canon(Object.fromEntries(list(t.matchLabelExpressions).map((e) => [str(e.key), [...new Set(Array.isArray(e.values) ? e.values : [])].sort()])));
    for (const s of seen) if (s === key) out.push(duplicate(`allowedTopologies[${i}].matchLabelExpressions`, ''));
    seen.push(key);
  });
  return out;
}

export const storageClass: Validator = (o, old) => {
  const out = storageClassCauses(o);
  if (!old) return out;
  if (canon(o.parameters ?? {}) !== canon(old.parameters ?? {})) out.push(forbidden('parameters', 'updates to parameters are forbidden.'));
  if (str(o.provisioner) !== str(old.provisioner)) out.push(forbidden('provisioner', 'updates to provisioner are forbidden.'));
  if (str(o.reclaimPolicy) !== str(old.reclaimPolicy)) out.push(forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
  if (canon(o.volumeBindingMode ?? null) !== canon(old.volumeBindingMode ?? null)) out.push(invalid('volumeBindingMode', o.volumeBindingMode ?? null, 'field is immutable'));
  return out;
};

// ---------------------------------------------------------------- CSINode

function csiNodeCauses(o: KObject): FieldCause[] {
  const out: FieldCause[] = [];
  const names = new Set<string>();
  list(isObj(o.spec) ? o.spec.drivers : undefined).forEach((d, i) => {
    const p = `spec.drivers[${i}]`;
    const name = str(d.name);
    out.push(...csiDriverNameCauses(name, `${p}.name`));
    const nodeID = str(d.nodeID);
    if (!nodeID) out.push(required(`${p}.nodeID`));
    // updates allow the longer ids of 1.28's nodes; creates the shorter limit
    if (nodeID.length > 192) out.push(invalid(`${p}.nodeID`, nodeID, 'must be 192 characters or less'));
    const count = isObj(d.allocatable) ? d.allocatable.count : undefined;
    if (typeof count === 'number' && count < 0) out.push(invalid(`${p}.allocatable.count`, count, 'must be greater than or equal to 0'));
    if (names.has(name)) out.push(duplicate(`${p}.name`, name));
    names.add(name);
    const keys = new Set<string>();
    for (const k of Array.isArray(d.topologyKeys) ? d.topologyKeys : []) {
      const key = str(k);
      if (!key) out.push(required(p));
      if (keys.has(key)) out.push(duplicate(p, key));
      keys.add(key);
      out.push(...validateQualifiedName(key, p));
    }
  });
  return out;
}

export const csiNode: Validator = (o, old) => {
  const own = csiNodeCauses(o);
  if (!old) return own;
  const out = [...own, ...own];
  const oldDrivers = list(isObj(old.spec) ? old.spec.drivers : undefined);
  for (const od of oldDrivers) for (const nd of list(isObj(o.spec) ? o.spec.drivers : undefined)) {
    if (od.name === nd.name && canon(od) !== canon(nd)) out.push(invalid('CSINodeDriver', nd, 'field is immutable'));
  }
  return out;
};

// ---------------------------------------------------------------- VolumeAttachment

function volumeAttachmentCauses(o: KObject): FieldCause[] {
  const out: FieldCause[] = [];
  const spec = isObj(o.spec) ? o.spec : {};
  if (!str(spec.attacher)) out.push(required('spec.attacher'));
  const source = isObj(spec.source) ? spec.source : {};
  const inline = isSet(source.inlineVolumeSpec), pv = isSet(source.persistentVolumeName);
  if (!inline && !pv) out.push(required('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'));
  else if (inline && pv) out.push(forbidden('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'));
  else if (pv && !str(source.persistentVolumeName)) out.push(required('spec.source.persistentVolumeName', 'must specify non empty persistentVolumeName'));
  for (const m of isDNS1123Subdomain(str(spec.nodeName))) out.push(invalid('spec.nodeName', str(spec.nodeName), m));
  return out;
}

/** v1 also wants a CSI driver's name as the attacher and a valid PersistentVolume name. */
function volumeAttachmentV1Causes(o: KObject): FieldCause[] {
  const spec = isObj(o.spec) ? o.spec : {};
  const out = csiDriverNameCauses(str(spec.attacher), 'spec.attacher');
  const pv = isObj(spec.source) ? spec.source.persistentVolumeName : undefined;
  if (isSet(pv)) for (const m of isDNS1123Subdomain(str(pv))) out.push(invalid('spec.source.persistentVolumeName', pv, m));
  return out;
}

export const volumeAttachment: Validator = (o, old) => {
  const own = volumeAttachmentCauses(o);
  if (!old) return [...own, ...volumeAttachmentV1Causes(o)];
  const out = [...own, ...own];
  if (canon(o.spec ?? {}) !== canon(old.spec ?? {})) out.push(invalid('spec', o.spec, 'field is immutable'));
  return out;
};

// ---------------------------------------------------------------- CSIDriver

const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType'];
const LIFECYCLE_MODES = ['Persistent', 'Ephemeral'];

function tokenRequestCauses(requests: unknown, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const audiences = new Set<string>();
  list(requests).forEach((r, i) => {
    const audience = str(r.audience);
    if (audiences.has(audience)) { out.push(duplicate(`${p}[${i}].audience`, audience)); return; }
    audiences.add(audience);
    if (typeof r.expirationSeconds !== 'number') return;
    if (r.expirationSeconds < 600) out.push(invalid(`${p}[${i}].expirationSeconds`, r.expirationSeconds, 'may not specify a duration less than 10 minutes'));
    if (r.expirationSeconds > 2 ** 32) out.push(invalid(`${p}[${i}].expirationSeconds`, r.expirationSeconds, 'may not specify a duration larger than 2^32 seconds'));
  });
  return out;
}

function csiDriverSpecCauses(spec: J): FieldCause[] {
  const out: FieldCause[] = [];
  // the reference's path says attachedRequired
  if (!isSet(spec.attachRequired)) out.push(required('spec.attachedRequired'));
  if (!isSet(spec.podInfoOnMount)) out.push(required('spec.podInfoOnMount'));
  if (!isSet(spec.storageCapacity)) out.push(required('spec.storageCapacity'));
  if (isSet(spec.fsGroupPolicy) && !FS_GROUP_POLICIES.includes(str(spec.fsGroupPolicy))) out.push(notSupported('spec.fsGroupPolicy', spec.fsGroupPolicy, FS_GROUP_POLICIES));
  out.push(...tokenRequestCauses(spec.tokenRequests, 'spec.tokenRequests'));
  for (const m of Array.isArray(spec.volumeLifecycleModes) ? spec.volumeLifecycleModes : []) {
    if (!LIFECYCLE_MODES.includes(str(m))) out.push(notSupported('spec.volumeLifecycleModes', m, LIFECYCLE_MODES));
  }
  return out;
}

export const csiDriver: Validator = (o, old) => {
  const spec = isObj(o.spec) ? o.spec : {};
  const out = csiDriverSpecCauses(spec);
  if (!old) return out;
  const was = isObj(old.spec) ? old.spec : {};
  for (const [k, path] of [['attachRequired', 'spec.attachedRequired'], ['fsGroupPolicy', 'spec.fsGroupPolicy'], ['podInfoOnMount', 'spec.podInfoOnMount'], ['volumeLifecycleModes', 'spec.volumeLifecycleModes']] as const) {
    if (canon(spec[k] ?? null) !== canon(was[k] ?? null)) out.push(invalid(path, spec[k] ?? null, 'field is immutable'));
  }
  return [...out, ...tokenRequestCauses(spec.tokenRequests, 'spec.tokenRequests')];
};

// ---------------------------------------------------------------- CSIStorageCapacity

export const csiStorageCapacity: Validator = (o, old) => {
  const out: FieldCause[] = [];
  if (isSet(o.nodeTopology)) out.push(...validateLabelSelector(o.nodeTopology, 'nodeTopology'));
  for (const m of isDNS1123Subdomain(str(o.storageClassName))) out.push(invalid('storageClassName', str(o.storageClassName), m));
  const q = isSet(o.capacity) ? parseQuantity(o.capacity) : undefined;
  if (q && typeof q !== 'string' && sign(q) < 0) out.push(invalid('capacity', o.capacity, 'must be greater than or equal to 0'));
  // an update validates the object, then the update: nothing of the object twice here
  if (old) {
    if (canon(o.nodeTopology ?? null) !== canon(old.nodeTopology ?? null)) out.push(invalid('nodeTopology', o.nodeTopology ?? null, 'field is immutable'));
    if (str(o.storageClassName) !== str(old.storageClassName)) out.push(invalid('storageClassName', str(o.storageClassName), 'field is immutable'));
  }
  return out;
};
