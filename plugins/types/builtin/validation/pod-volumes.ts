// Pod volumes and how containers use them (volumeMounts, volumeDevices), as the reference's
// ValidateVolumes / ValidateVolumeMounts / ValidateVolumeDevices check them: DNS-label names, unique,
// exactly one source, and each source's own rules: here those of the sources only pods have
// (emptyDir, secret, configMap, downwardAPI, projected, persistentVolumeClaim, ephemeral with its
// claim template); the sources pods share with PersistentVolumes are in vendor-volumes.ts.
import type { FieldCause } from '../../../../kernel/contracts/index.js';
import { isDNS1123Label, isDNS1123Subdomain, validateAnnotations, validateLabels } from '../../../../kernel/api/validation.js';
import { parseQuantity, sign } from '../../../../workers/body/quantity.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { forbidden, invalid, notSupported, required } from './causes.js';
import { pvcSpecCauses } from './persistentvolumes.js';
import { objectFieldSelectorCauses, resourceFieldSelectorCauses, str, VOLUME_FIELD_PATHS } from './pod-env.js';
import { iscsiVolumeNameCauses, localDescendingPathCauses, noBackstepCauses, vendorSourceCauses } from './vendor-volumes.js';

/** Volume sources in the reference's order, with the path each one's own errors use (a few differ). */
const SOURCES: [key: string, errorPath: string][] = [
  ['emptyDir', 'emptyDir'], ['hostPath', 'hostPath'], ['gitRepo', 'gitRepo'], ['gcePersistentDisk', 'persistentDisk'],
  ['awsElasticBlockStore', 'awsElasticBlockStore'], ['secret', 'secret'], ['nfs', 'nfs'], ['iscsi', 'iscsi'],
  ['glusterfs', 'glusterfs'], ['flocker', 'flocker'], ['persistentVolumeClaim', 'persistentVolumeClaim'], ['rbd', 'rbd'],
  ['cinder', 'cinder'], ['cephfs', 'cephfs'], ['quobyte', 'quobyte'], ['downwardAPI', 'downwardAPI'], ['fc', 'fc'],
  ['flexVolume', 'flexVolume'], ['configMap', 'configMap'], ['azureFile', 'azureFile'], ['vsphereVolume', 'vsphereVolume'],
  ['photonPersistentDisk', 'photonPersistentDisk'], ['portworxVolume', 'portworxVolume'], ['azureDisk', 'azureDisk'],
  ['storageos', 'storageos'], ['projected', 'projected'], ['scaleIO', 'scaleIO'], ['csi', 'csi'], ['ephemeral', 'ephemeral'],
];
/** Where "may not specify more than 1 volume type" is reported, when not at the source's own key. */
const SECOND_SOURCE_PATH: Record<string, string> = { cephfs: 'cephFS', downwardAPI: 'downwarAPI' };

const MOUNT_PROPAGATIONS = ['Bidirectional', 'HostToContainer', 'None'];
const FILE_MODE = 'must be a number between 0 and 0777 (octal), both inclusive';

const badMode = (m: unknown) => typeof m === 'number' && (m > 0o777 || m < 0);

function nonReservedPathCauses(path: string, f: string): FieldCause[] {
  const out = localDescendingPathCauses(path, f);
  if (path.startsWith('..') && !path.startsWith('../')) out.push(invalid(f, path, "must not start with '..'"));
  return out;
}

function keyToPathCauses(kp: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (!str(kp.key)) out.push(required(`${p}.key`));
  if (!str(kp.path)) out.push(required(`${p}.path`));
  out.push(...nonReservedPathCauses(str(kp.path), `${p}.path`));
  if (badMode(kp.mode)) out.push(invalid(`${p}.mode`, kp.mode, FILE_MODE));
  return out;
}

/** secret and configMap volumes: a name, a mode, items. */
function keyedSourceCauses(s: J, p: string, nameKey: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (!str(s[nameKey])) out.push(required(`${p}.${nameKey}`));
  if (badMode(s.defaultMode)) out.push(invalid(`${p}.defaultMode`, s.defaultMode, FILE_MODE));
  list(s.items).forEach((kp, i) => out.push(...keyToPathCauses(kp, `${p}.items[${i}]`)));
  return out;
}

function downwardFileCauses(file: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (!str(file.path)) out.push(required(`${p}.path`));
  out.push(...nonReservedPathCauses(str(file.path), `${p}.path`));
  if (isObj(file.fieldRef)) {
    out.push(...objectFieldSelectorCauses(file.fieldRef, `${p}.fieldRef`, VOLUME_FIELD_PATHS));
    if (isObj(file.resourceFieldRef)) out.push(invalid(p, 'resource', 'fieldRef and resourceFieldRef can not be specified simultaneously'));
    if (file.fieldRef.fieldPath === 'status.hostIPs') out.push(forbidden(`${p}.fieldRef`, "may not be set when feature gate 'PodHostIPs' is not enabled"));
  } else if (isObj(file.resourceFieldRef)) out.push(...resourceFieldSelectorCauses(file.resourceFieldRef, `${p}.resourceFieldRef`, true));
  else out.push(required(p, 'one of fieldRef and resourceFieldRef is required'));
  if (badMode(file.mode)) out.push(invalid(`${p}.mode`, file.mode, FILE_MODE));
  return out;
}

function projectedCauses(pr: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (badMode(pr.defaultMode)) out.push(invalid(`${p}.defaultMode`, pr.defaultMode, FILE_MODE));
  const paths = new Set<string>();
  // a path two sources both write is a conflict, reported at the volume's projected path
  const claim = (path: string, shown: unknown) => {
    if (!path) return;
    if (paths.has(path)) out.push(invalid(p, shown, 'conflicting duplicate paths'));
    paths.add(path);
  };
  list(pr.sources).forEach((src, i) => {
    const sp = `${p}.sources[${i}]`;
    let n = 0;
    for (const k of ['secret', 'configMap']) {
      const s = src[k];
      if (!isObj(s)) continue;
      n++;
      if (!str(s.name)) out.push(required(`${sp}.${k}.name`));
      list(s.items).forEach((kp, j) => {
        out.push(...keyToPathCauses(kp, `${sp}.${k}.items[${j}]`));
        claim(str(kp.path), str(s.name));
      });
    }
    if (isObj(src.downwardAPI)) {
      n++;
      for (const file of list(src.downwardAPI.items)) {
        out.push(...downwardFileCauses(file, `${sp}.downwardAPI`));
        claim(str(file.path), str(file.path));
      }
    }
    const sat = src.serviceAccountToken;
    if (isObj(sat)) {
      n++;
      const exp = typeof sat.expirationSeconds === 'number' ? sat.expirationSeconds : 0;
      if (exp < 600) out.push(invalid(`${sp}.serviceAccountToken.expirationSeconds`, exp, 'may not specify a duration less than 10 minutes'));
      if (exp > 2 ** 32) out.push(invalid(`${sp}.serviceAccountToken.expirationSeconds`, exp, 'may not specify a duration larger than 2^32 seconds'));
      if (!str(sat.path)) out.push(required(`${p}.path`));
    }
    if (n > 1) out.push(forbidden(sp, 'may not specify more than 1 volume type'));
  });
  return out;
}

/** The rules of one source; `v` is the whole volume (its name matters to some). */
function sourceCauses(key: string, s: J, p: string, v: J, podName: string | undefined): FieldCause[] {
  switch (key) {
    case 'emptyDir': {
      const q = s.sizeLimit === undefined || s.sizeLimit === null ? undefined : parseQuantity(s.sizeLimit);
      return q && typeof q !== 'string' && sign(q) < 0 ? [forbidden(`${p}.sizeLimit`, 'SizeLimit field must be a valid resource quantity')] : [];
    }
    case 'secret': return keyedSourceCauses(s, p, 'secretName');
    case 'configMap': return keyedSourceCauses(s, p, 'name');
    case 'persistentVolumeClaim': return str(s.claimName) ? [] : [required(`${p}.claimName`)];
    case 'downwardAPI': {
      const out = badMode(s.defaultMode) ? [invalid(`${p}.defaultMode`, s.defaultMode, FILE_MODE)] : [];
      for (const file of list(s.items)) out.push(...downwardFileCauses(file, p));
      return out;
    }
    case 'projected': return projectedCauses(s, p);
    case 'ephemeral': {
      const t = s.volumeClaimTemplate;
      const out = isObj(t) ? claimTemplateCauses(t, `${p}.volumeClaimTemplate`) : [required(`${p}.volumeClaimTemplate`)];
      // the claim the pod will get is named <pod>-<volume>, which must be a valid name
      const name = str(v.name);
      if (podName && name) {
        const pvc = `${podName}-${name}`;
        for (const m of isDNS1123Subdomain(pvc)) out.push(invalid(`${p.slice(0, p.lastIndexOf('.'))}.name`, name, `PVC name ${JSON.stringify(pvc)}: ${m}`));
      }
      return out;
    }
    default: return vendorSourceCauses(key, s, p, false);
  }
}

/** ObjectMeta's fields in the reference's order, as its allow-list check names them (Go field name, first letter lowered). */
const TEMPLATE_META_FIELDS: [key: string, shown: string][] = [
  ['name', 'name'], ['generateName', 'generateName'], ['namespace', 'namespace'], ['selfLink', 'selfLink'], ['uid', 'uID'],
  ['resourceVersion', 'resourceVersion'], ['generation', 'generation'], ['creationTimestamp', 'creationTimestamp'],
  ['deletionTimestamp', 'deletionTimestamp'], ['deletionGracePeriodSeconds', 'deletionGracePeriodSeconds'],
  ['ownerReferences', 'ownerReferences'], ['finalizers', 'finalizers'], ['managedFields', 'managedFields'],
];

/** Whether a metadata field differs from its Go zero value (an empty list is not nil, a pointer to 0 is set). */
const metaFieldSet = (k: string, v: unknown) => (k === 'deletionGracePeriodSeconds' || Array.isArray(v) ? v !== undefined && v !== null : !!v);

/** An ephemeral volume's claim template: only labels and annotations in its metadata, and a valid claim spec. */
function claimTemplateCauses(t: J, p: string): FieldCause[] {
  const meta: J = isObj(t.metadata) ? t.metadata : {};
  const out = [...validateAnnotations(meta.annotations, `${p}.metadata.annotations`), ...validateLabels(meta.labels, `${p}.metadata.labels`)];
  for (const [k, shown] of TEMPLATE_META_FIELDS) if (metaFieldSet(k, meta[k])) out.push(forbidden(`${p}.metadata.${shown}`, 'cannot be set'));
  out.push(...pvcSpecCauses(isObj(t.spec) ? t.spec : {}, `${p}.spec`));
  return out;
}

export interface Volumes {
  /** Valid volumes by name: what mounts and devices may refer to. */
  byName: Map<string, J>;
  causes: FieldCause[];
}

export function volumesCauses(volumes: unknown, p: string, podName?: string): Volumes {
  const byName = new Map<string, J>();
  const causes: FieldCause[] = [];
  const names = new Set<string>();
  const vols = list(volumes);
  const ephemeralClaims = new Set(podName ? vols.filter((v) => isObj(v.ephemeral)).map((v) => `${podName}-${str(v.name)}`) : []);
  vols.forEach((v, i) => {
    const vp = `${p}[${i}]`;
    const el: FieldCause[] = [];
    let n = 0;
    for (const [key, errorPath] of SOURCES) {
      if (!isObj(v[key])) continue;
      if (key === 'emptyDir') { n++; el.push(...sourceCauses(key, v[key], `${vp}.emptyDir`, v, podName)); continue; }
      if (n > 0) { el.push(forbidden(`${vp}.${SECOND_SOURCE_PATH[key] ?? key}`, 'may not specify more than 1 volume type')); continue; }
      n++;
      el.push(...sourceCauses(key, v[key], `${vp}.${errorPath}`, v, podName));
    }
    // checked wherever the iscsi source stands, even as a second source
    el.push(...iscsiVolumeNameCauses(v, vp));
    if (n === 0) el.push(required(vp, 'must specify a volume type'));
    const name = str(v.name);
    if (!name) el.push(required(`${vp}.name`));
    else for (const m of isDNS1123Label(name)) el.push(invalid(`${vp}.name`, name, m));
    if (names.has(name)) el.push({ reason: 'FieldValueDuplicate', field: `${vp}.name`, message: `Duplicate value: ${JSON.stringify(name)}` });
    if (el.length === 0) { names.add(name); byName.set(name, v); } else causes.push(...el);
    const claim = at2(v, 'persistentVolumeClaim', 'claimName');
    if (claim && ephemeralClaims.has(claim)) causes.push(invalid(`${vp}.persistentVolumeClaim.claimName`, claim, 'must not reference a PVC that gets created for an ephemeral volume'));
  });
  return { byName, causes };
}

const at2 = (o: J, a: string, b: string) => (isObj(o[a]) ? str(o[a][b]) : '');

const notFound = (field: string, value: string): FieldCause => ({ reason: 'FieldValueNotFound', field, message: `Not found: ${JSON.stringify(value)}` });
const isBlockSource = (v: J | undefined) => !!v && (isObj(v.persistentVolumeClaim) || isObj(v.ephemeral));

export function volumeMountCauses(c: J, vols: Map<string, J>, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const devices = new Map(list(c.volumeDevices).map((d) => [str(d.name), str(d.devicePath)]));
  const devicePaths = new Set(devices.values());
  const mountPaths = new Set<string>();
  const privileged = isObj(c.securityContext) && c.securityContext.privileged === true;
  list(c.volumeMounts).forEach((m, i) => {
    const ip = `${p}[${i}]`;
    const name = str(m.name), mountPath = str(m.mountPath);
    if (!name) out.push(required(`${ip}.name`));
    if (!vols.has(name)) out.push(notFound(`${ip}.name`, name));
    if (!mountPath) out.push(required(`${ip}.mountPath`));
    if (mountPaths.has(mountPath)) out.push(invalid(`${ip}.mountPath`, mountPath, 'must be unique'));
    mountPaths.add(mountPath);
    if (devices.has(name)) out.push(invalid(`${ip}.name`, name, 'must not already exist in volumeDevices'));
    if (devicePaths.has(mountPath)) out.push(invalid(`${ip}.mountPath`, mountPath, 'must not already exist as a path in volumeDevices'));
    // the reference reports sub-path errors at the list's path, without the index
    if (str(m.subPath)) out.push(...localDescendingPathCauses(m.subPath, `${p}.subPath`));
    if (str(m.subPathExpr)) {
      if (str(m.subPath)) out.push(invalid(`${ip}.subPathExpr`, m.subPathExpr, 'subPathExpr and subPath are mutually exclusive'));
      out.push(...localDescendingPathCauses(m.subPathExpr, `${p}.subPathExpr`));
    }
    const mp = m.mountPropagation;
    if (mp !== undefined && mp !== null) {
      if (!MOUNT_PROPAGATIONS.includes(mp)) out.push(notSupported(`${p}.mountPropagation`, mp, MOUNT_PROPAGATIONS));
      if (mp === 'Bidirectional' && !privileged) out.push(forbidden(`${p}.mountPropagation`, 'Bidirectional mount propagation is available only to privileged containers'));
    }
  });
  return out;
}

export function volumeDeviceCauses(c: J, vols: Map<string, J>, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const mounts = new Map(list(c.volumeMounts).map((m) => [str(m.name), str(m.mountPath)]));
  const mountPaths = new Set(mounts.values());
  const paths = new Set<string>(), names = new Set<string>();
  list(c.volumeDevices).forEach((d, i) => {
    const ip = `${p}[${i}]`;
    const name = str(d.name), devicePath = str(d.devicePath);
    const vol = vols.get(name);
    if (!name) out.push(required(`${ip}.name`));
    if (names.has(name)) out.push(invalid(`${ip}.name`, name, 'must be unique'));
    if (vol && !isBlockSource(vol)) out.push(invalid(`${ip}.name`, name, 'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode'));
    if (!vol) out.push(notFound(`${ip}.name`, name));
    if (!devicePath) out.push(required(`${ip}.devicePath`));
    if (paths.has(devicePath)) out.push(invalid(`${ip}.devicePath`, devicePath, 'must be unique'));
    if (devicePath && noBackstepCauses(devicePath, '').length) out.push(invalid(`${ip}.devicePath`, devicePath, "can not contain backsteps ('..')"));
    else paths.add(devicePath);
    if (mounts.has(name)) out.push(invalid(`${ip}.name`, name, 'must not already exist in volumeMounts'));
    if (mountPaths.has(devicePath)) out.push(invalid(`${ip}.devicePath`, devicePath, 'must not already exist as a path in volumeMounts'));
    if (name) names.add(name);
  });
  return out;
}
