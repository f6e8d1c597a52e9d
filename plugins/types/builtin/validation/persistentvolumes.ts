// PersistentVolume and PersistentVolumeClaim, as the reference validates them: access modes, a
// storage capacity or request, exactly one volume source (each checked by vendor-volumes.ts), the
// beta mount-options annotation, node affinity, class name and volume mode. Both strategies
// validate an update as the object and then the update, whose rules validate the object again:
// every cause of the object comes twice on update. The claim spec rules serve ephemeral pod volumes too.
import { posix } from 'node:path';
import type { Brand } from '../../../../kernel/contracts/brand.js';
import type { FieldCause, KObject } from '../../../../kernel/contracts/index.js';
import { isDNS1123Label, isDNS1123Subdomain, validateLabelSelector } from '../../../../kernel/api/validation.js';
import { compareQuantity, formatQuantity, nanoOf, parseQuantity, sign, type Quantity } from '../../../../workers/body/quantity.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { canon, forbidden, invalid, notSupported, required, type Validator } from './causes.js';
import { str } from './pod-env.js';
import { nodeSelectorCauses } from './pod-scheduling.js';
import { mountOptionCauses, vendorSourceCauses } from './vendor-volumes.js';

const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'];
const VOLUME_MODES = ['Block', 'Filesystem'];
const isSet = (v: unknown): boolean => v !== undefined && v !== null;
const specOf = (o: KObject | undefined): J => (isObj(o?.spec) ? o.spec : {});

/** Access modes: at least one, each known, ReadWriteOncePod alone. */
function accessModeCauses(modes: unknown, p: string, requiredDetail: string): FieldCause[] {
  const all: unknown[] = Array.isArray(modes) ? modes : [];
  const out = all.length ? [] : [required(p, requiredDetail)];
  for (const m of all) if (!ACCESS_MODES.includes(m as string)) out.push(notSupported(p, m, ACCESS_MODES));
  if (all.includes('ReadWriteOncePod') && all.some((m) => m !== 'ReadWriteOncePod' && ACCESS_MODES.includes(m as string))) {
    out.push(forbidden(p, 'may not use ReadWriteOncePod with other access modes'));
  }
  return out;
}

/** Go's Quantity.Value(): whole units, rounded away from zero. */
function wholeUnits(q: Quantity): bigint {
  const n = nanoOf(q), unit = 1_000_000_000n;
  return n % unit === 0n ? n / unit : n / unit + (n < 0n ? -1n : 1n);
}

/** ValidatePositiveQuantityValue. */
function positiveCauses(q: Quantity, f: string): FieldCause[] {
  return sign(q) <= 0 ? [invalid(f, formatQuantity(q), 'must be greater than zero')] : [];
}

function classNameCauses(name: unknown, p: string): FieldCause[] {
  return str(name) ? isDNS1123Subdomain(str(name)).map((m) => invalid(p, name, m)) : [];
}

function volumeModeCauses(mode: unknown, p: string): FieldCause[] {
  return isSet(mode) && !VOLUME_MODES.includes(mode as string) ? [notSupported(p, mode, VOLUME_MODES)] : [];
}

// ---------------------------------------------------------------- PersistentVolume

/** The PersistentVolumeSource's fields in the reference's order, with where "more than 1" is reported. */
const PV_SOURCES: [key: string, secondPath: string][] = [
  ['hostPath', 'hostPath'], ['gcePersistentDisk', 'gcePersistentDisk'], ['awsElasticBlockStore', 'awsElasticBlockStore'],
  ['glusterfs', 'glusterfs'], ['flocker', 'flocker'], ['nfs', 'nfs'], ['rbd', 'rbd'], ['quobyte', 'quobyte'],
  ['cephfs', 'cephFS'], ['iscsi', 'iscsi'], ['cinder', 'cinder'], ['fc', 'fc'], ['flexVolume', ''], ['azureFile', 'azureFile'],
  ['vsphereVolume', 'vsphereVolume'], ['photonPersistentDisk', 'photonPersistentDisk'], ['portworxVolume', 'portworxVolume'],
  ['azureDisk', 'azureDisk'], ['scaleIO', 'scaleIO'], ['local', 'local'], ['storageos', 'storageos'], ['csi', 'csi'],
];

/** A source's rules; `affinity`: whether node affinity was given (local volumes need it). */
function pvSourceCauses(key: string, s: J, p: string, affinity: boolean, pvName: string): FieldCause[] {
  const out = vendorSourceCauses(key, s, p, true, pvName);
  if (key === 'local' && !affinity) out.push(required('spec.nodeAffinity', 'Local volume requires node affinity'));
  return out;
}

/** Go's %#v of a capacity (a core.ResourceList), as the NotSupported message prints it. */
function goResourceList(v: unknown): string {
  if (!isObj(v)) return 'core.ResourceList(nil)';
  return `core.ResourceList{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(String(v[k]))}`).join(', ')}}`;
}

function capacityCauses(capacity: unknown): FieldCause[] {
  const caps = isObj(capacity) ? capacity : {};
  const names = Object.keys(caps);
  const out = names.length ? [] : [required('spec.capacity')];
  if (!('storage' in caps) || names.length > 1) out.push(notSupported('spec.capacity', capacity, ['storage'], goResourceList(capacity)));
  for (const name of names) {
    const q = parseQuantity(caps[name]);
    if (typeof q === 'string') continue;
    const f = `spec.capacity[${name}]`;
    const whole = wholeUnits(q);
    if (whole < 0n) out.push(invalid(f, null, 'must be a valid resource quantity', String(whole)));
    out.push(...positiveCauses(q, f));
  }
  return out;
}

function pvSpecCauses(spec: J, pvName: string): FieldCause[] {
  const out = accessModeCauses(spec.accessModes, 'spec.accessModes', '');
  out.push(...capacityCauses(spec.capacity));
  const policy = str(spec.persistentVolumeReclaimPolicy);
  if (policy && !RECLAIM_POLICIES.includes(policy)) out.push(notSupported('spec.persistentVolumeReclaimPolicy', policy, RECLAIM_POLICIES));
  const affinity = isSet(spec.nodeAffinity);
  if (affinity) {
    const na = isObj(spec.nodeAffinity) ? spec.nodeAffinity : {};
    if (isObj(na.required)) out.push(...nodeSelectorCauses(na.required, 'spec.nodeAffinity.required'));
    else out.push(required('spec.nodeAffinity.required', 'must specify required node constraints'));
  }
  let sources = 0;
  for (const [key, second] of PV_SOURCES) {
    if (!isSet(spec[key])) continue;
    // a flexVolume is counted but never reported as a second source
    if (sources > 0 && second) { out.push(forbidden(`spec.${second}`, 'may not specify more than 1 volume type')); continue; }
    sources++;
    out.push(...pvSourceCauses(key, isObj(spec[key]) ? spec[key] : {}, key === 'gcePersistentDisk' ? 'spec.persistentDisk' : `spec.${key}`, affinity, pvName));
  }
  if (!sources) out.push(required('spec', 'must specify a volume type'));
  const hostPath = isObj(spec.hostPath) ? str(spec.hostPath.path) : '';
  if (hostPath && posix.normalize(hostPath).replace(/\/+$/, '') === '' && policy === 'Recycle') {
    out.push(forbidden('spec.persistentVolumeReclaimPolicy', "may not be 'recycle' for a hostPath mount of '/'"));
  }
  out.push(...classNameCauses(spec.storageClassName, 'spec.storageClassName'));
  out.push(...volumeModeCauses(spec.volumeMode, 'spec.volumeMode'));
  return out;
}

/** Node selector keys the reference lets an update move from their beta name to the GA one. */
function betaToGA(brand: Brand): Record<string, string> {
  const d = brand.keyDomain;
  return {
    [`failure-domain.beta.${d}/zone`]: `topology.${d}/zone`, [`failure-domain.beta.${d}/region`]: `topology.${d}/region`,
    [`beta.${d}/os`]: `${d}/os`, [`beta.${d}/arch`]: `${d}/arch`, [`beta.${d}/instance-type`]: `node.${d}/instance-type`,
  };
}

/** The old node affinity with each beta key renamed where the new one has the GA key in its place. */
function maskedOldAffinity(now: unknown, was: unknown, brand: Brand): unknown {
  const map = betaToGA(brand);
  const masked = structuredClone(was) as J;
  const newTerms = list(isObj(now) && isObj(now.required) ? now.required.nodeSelectorTerms : undefined);
  list(isObj(masked?.required) ? masked.required.nodeSelectorTerms : undefined).forEach((t, i) => {
    list(t.matchExpressions).forEach((r, j) => {
      const key = list(newTerms[i]?.matchExpressions)[j]?.key;
      // a key that is no beta label maps to "" (Go's zero value): a key emptied passes as well
      if (r.key !== key && (map[str(r.key)] ?? '') === str(key)) {
        if (key === undefined) delete r.key; else r.key = key;
      }
    });
  });
  return masked;
}

const goVolumeNodeAffinity = (na: unknown) => (isObj(na)
  ? `core.VolumeNodeAffinity{Required:${isObj(na.required) ? '(*core.NodeSelector)(0xc000000000)' : '(*core.NodeSelector)(nil)'}}`
  : '(*core.VolumeNodeAffinity)(nil)');

const sourceOf = (spec: J) => Object.fromEntries(PV_SOURCES.map(([k]) => [k, spec[k]]).filter(([, v]) => isSet(v)));

export const persistentVolume: Validator = (o, old, brand) => {
  const spec = specOf(o);
  const own = pvSpecCauses(spec, str(o.metadata?.name));
  // the volume plugins' own check, once, after the object's rules
  const mountOptions = mountOptionCauses(o, brand);
  if (!old) return [...own, ...mountOptions];
  const was = specOf(old);
  const out = [...own, ...mountOptions, ...own];
  // a CSI volume without a controllerExpandSecretRef may gain one
  const now = sourceOf(spec);
  if (isObj(was.csi) && !isSet(was.csi.controllerExpandSecretRef) && isObj(now.csi)) {
    now.csi = { ...now.csi };
    delete (now.csi as J).controllerExpandSecretRef;
  }
  if (canon(now) !== canon(sourceOf(was))) {
    out.push(forbidden('spec.persistentvolumesource', 'spec.persistentvolumesource is immutable after creation\n'));
  }
  if ((spec.volumeMode ?? null) !== (was.volumeMode ?? null)) out.push(invalid('volumeMode', spec.volumeMode ?? null, 'field is immutable'));
  if (isSet(was.nodeAffinity) && canon(spec.nodeAffinity ?? null) !== canon(maskedOldAffinity(spec.nodeAffinity, was.nodeAffinity, brand))) {
    out.push(invalid('nodeAffinity', spec.nodeAffinity, 'field is immutable, except for updating from beta label to GA', goVolumeNodeAffinity(spec.nodeAffinity)));
  }
  return out;
};

// ---------------------------------------------------------------- PersistentVolumeClaim

function dataSourceCauses(ds: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (!str(ds.name)) out.push(required(`${p}.name`));
  if (!str(ds.kind)) out.push(required(`${p}.kind`));
  if (!str(ds.apiGroup) && ds.kind !== 'PersistentVolumeClaim') out.push(invalid(p, str(ds.kind), "must be 'PersistentVolumeClaim' when referencing the default apiGroup"));
  return out;
}

/** ValidatePersistentVolumeClaimSpec, its errors under `p` (a claim's spec, or an ephemeral volume's claim template's). */
export function pvcSpecCauses(spec: J, p = 'spec'): FieldCause[] {
  const out = accessModeCauses(spec.accessModes, `${p}.accessModes`, 'at least 1 access mode is required');
  if (isSet(spec.selector)) out.push(...validateLabelSelector(spec.selector, `${p}.selector`));
  const requests = isObj(spec.resources) && isObj(spec.resources.requests) ? spec.resources.requests : {};
  const q = 'storage' in requests ? parseQuantity(requests.storage) : undefined;
  if (q === undefined) out.push(required(`${p}.resources[storage]`));
  else if (typeof q !== 'string') out.push(...positiveCauses(q, `${p}.resources[storage]`));
  out.push(...classNameCauses(spec.storageClassName, `${p}.storageClassName`));
  out.push(...volumeModeCauses(spec.volumeMode, `${p}.volumeMode`));
  const ds = isObj(spec.dataSource) ? spec.dataSource : undefined;
  const ref = isObj(spec.dataSourceRef) ? spec.dataSourceRef : undefined;
  if (ds) out.push(...dataSourceCauses(ds, `${p}.dataSource`));
  if (ref) {
    out.push(...dataSourceCauses(ref, `${p}.dataSourceRef`));
    if (str(ref.namespace)) out.push(...isDNS1123Label(str(ref.namespace)).map((m) => invalid(`${p}.dataSourceRef.namespace`, ref.namespace, m)));
  }
  if (ref && str(ref.namespace)) {
    if (ds) out.push(invalid(p, `${p}.dataSource`, 'may not be specified when dataSourceRef.namespace is specified'));
  } else if (ds && ref && (str(ds.apiGroup) !== str(ref.apiGroup) || ds.kind !== ref.kind || ds.name !== ref.name)) {
    out.push(invalid(p, `${p}.dataSource`, 'must match dataSourceRef'));
  }
  return out;
}

/** Empty lists and maps are equal to absent ones, as the reference's semantic equality has them. */
function semantic(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? v.map(semantic) : undefined;
  if (!isObj(v)) return v;
  const out: J = {};
  for (const [k, x] of Object.entries(v)) { const s = semantic(x); if (s !== undefined && s !== null) out[k] = s; }
  return out;
}

const storageRequest = (spec: J): Quantity | undefined => {
  const q = isObj(spec.resources) && isObj(spec.resources.requests) ? parseQuantity(spec.resources.requests.storage) : undefined;
  return typeof q === 'string' ? undefined : q;
};

/**
 * A claim's spec is immutable but for a first volumeName, a storage class set where there was none,
 * and (for a bound claim) the storage request, which may only grow.
 */
function pvcUpdateCauses(o: KObject, old: KObject, brand: Brand): FieldCause[] {
  const spec: J = structuredClone(specOf(o)), was: J = structuredClone(specOf(old));
  const out: FieldCause[] = [];
  if (!str(was.volumeName)) was.volumeName = spec.volumeName;
  // The beta annotation's upgrade path: a class may be set where none was when it names the
  // annotation's class (or there is none); otherwise the annotation itself is immutable.
  const beta = `volume.beta.${brand.keyDomain}/storage-class`;
  const annotations = (x: KObject): Record<string, string> => (isObj(x.metadata?.annotations) ? x.metadata.annotations : {});
  const oldClass = annotations(old)[beta], newClass = annotations(o)[beta];
  const fromAnnotation = oldClass !== undefined && !isSet(was.storageClassName) && isSet(spec.storageClassName) && spec.storageClassName === oldClass && (newClass === undefined || newClass === oldClass);
  if (fromAnnotation) was.storageClassName = spec.storageClassName;
  else {
    if ((newClass ?? '') !== (oldClass ?? '')) out.push(invalid(`metadata.annotations.${beta}`, newClass ?? '', 'field is immutable'));
    if (isSet(spec.storageClassName) && !isSet(was.storageClassName) && (oldClass === undefined || spec.storageClassName === oldClass)) was.storageClassName = spec.storageClassName;
  }
  if (isObj(o.status) && o.status.phase === 'Bound' && isObj(spec.resources) && isObj(spec.resources.requests)) {
    spec.resources.requests.storage = isObj(was.resources) && isObj(was.resources.requests) ? was.resources.requests.storage : undefined;
  }
  if (canon(semantic(spec)) !== canon(semantic(was))) out.push(forbidden('spec', 'spec is immutable after creation except resources.requests for bound claims\n'));
  const zero = parseQuantity('0') as Quantity;
  if (compareQuantity(storageRequest(specOf(o)) ?? zero, storageRequest(specOf(old)) ?? zero) < 0) {
    out.push(forbidden('spec.resources.requests.storage', 'field can not be less than previous value'));
  }
  const mode = specOf(o).volumeMode ?? null;
  if (mode !== (specOf(old).volumeMode ?? null)) out.push(invalid('volumeMode', mode, 'field is immutable'));
  return out;
}

export const persistentVolumeClaim: Validator = (o, old, brand) => {
  const own = pvcSpecCauses(specOf(o));
  return old ? [...own, ...own, ...pvcUpdateCauses(o, old, brand)] : own;
};
