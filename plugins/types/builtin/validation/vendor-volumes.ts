// The rules of the volume sources pods and PersistentVolumes share (host paths, the cloud disks,
// the network and vendor file systems, CSI), as the reference's validateXxxVolumeSource and
// validateXxxPersistentVolumeSource functions check them. A source's pod and PV flavours differ in
// a few places (secret namespaces, iSCSI messages, glusterfs endpointsNamespace, inline CSI), told
// apart by `pv`. Also the PV-only rule of the beta mount-options annotation.
import type { Brand } from '../../../../kernel/contracts/brand.js';
import type { FieldCause, KObject } from '../../../../kernel/contracts/index.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../../../kernel/api/validation.js';
import { isObj, type J } from '../../../lib/json.js';
import { forbidden, goStrings, invalid, notSupported, required } from './causes.js';
import { str } from './pod-env.js';
import { csiDriverNameCauses } from './storage.js';

const HOST_PATH_TYPES = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'];
const PARTITION = 'must be between 1 and 255, inclusive'; // the reference's message, though it lets 0 through
const LUN = 'must be between 0 and 255, inclusive';
const QUOBYTE_REGISTRY = 'must be a host:port pair or multiple pairs separated by commas';
const ISCSI_NAME_LENGTH = 'Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.';
const AZURE_CACHING_MODES = ['None', 'ReadOnly', 'ReadWrite'];
const AZURE_DISK_KINDS = ['Dedicated', 'Managed', 'Shared'];
const AZURE_MANAGED_URI = '/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}';
const AZURE_BLOB_URI = 'https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd';

// iSCSI qualified names; the iqn form is anchored only at its end, as the reference's is
const IQN = /iqn\.\d{4}-\d{2}\.([A-Za-z0-9.-]+)(:[^,;*&$|\t\n\f\r ]+)$/u;
const EUI = /^eui[^\n][A-Za-z0-9]{16}$/u;
const NAA = /^naa[^\n][A-Za-z0-9]{32}$/u;

const isSet = (v: unknown): boolean => v !== undefined && v !== null;
const byteLen = (s: string) => Buffer.byteLength(s, 'utf8');
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const len = (v: unknown): number => (Array.isArray(v) ? v.length : 0);
const labelCauses = (v: string, f: string) => isDNS1123Label(v).map((m) => invalid(f, v, m));

export function noBackstepCauses(path: string, f: string): FieldCause[] {
  return path.replace(/\\/g, '/').split('/').includes('..') ? [invalid(f, path, "must not contain '..'")] : [];
}

export function localDescendingPathCauses(path: string, f: string): FieldCause[] {
  const out = path.startsWith('/') ? [invalid(f, path, 'must be a relative path')] : [];
  return [...out, ...noBackstepCauses(path, f)];
}

/** A hostPath source (of a pod volume or a PersistentVolume): a path without backsteps, a known type. */
export function hostPathCauses(s: J, p: string): FieldCause[] {
  if (!str(s.path)) return [required(`${p}.path`)];
  const out = noBackstepCauses(s.path, `${p}.path`);
  if (isSet(s.type) && !HOST_PATH_TYPES.includes(s.type)) out.push(notSupported(`${p}.type`, s.type, HOST_PATH_TYPES));
  return out;
}

/** validatePVSecretReference: a name (DNS subdomain) and a namespace (DNS label). */
export function secretRefCauses(ref: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (!str(ref.name)) out.push(required(`${p}.name`));
  else out.push(...isDNS1123Subdomain(str(ref.name)).map((m) => invalid(`${p}.name`, ref.name, m)));
  if (!str(ref.namespace)) out.push(required(`${p}.namespace`));
  else out.push(...labelCauses(str(ref.namespace), `${p}.namespace`));
  return out;
}

/** A secretRef that needs a name, and (on a PV) a namespace. */
function namedRefCauses(ref: unknown, p: string, pv: boolean): FieldCause[] {
  if (!isObj(ref)) return [];
  const out = str(ref.name) ? [] : [required(`${p}.name`)];
  if (pv && !str(ref.namespace)) out.push(required(`${p}.namespace`));
  return out;
}

/** An iSCSI qualified name (iqn, eui or naa form); `badPrefix` is the message for none of the three. */
function iscsiNameCauses(v: string, f: string, badPrefix: string): FieldCause[] {
  const kind = v.slice(0, 3);
  if (kind !== 'iqn' && kind !== 'eui' && kind !== 'naa') return [invalid(f, v, badPrefix)];
  const re = kind === 'iqn' ? IQN : kind === 'eui' ? EUI : NAA;
  return re.test(v) ? [] : [invalid(f, v, 'must be valid format')];
}

function iscsiCauses(s: J, p: string, pv: boolean, pvName: string): FieldCause[] {
  const out: FieldCause[] = [];
  const portal = str(s.targetPortal);
  if (!portal) out.push(required(`${p}.targetPortal`));
  // a PV checks the length of <its name>:<portal> here; a pod volume does it with its own name
  if (pv && isSet(s.initiatorName) && byteLen(`${pvName}:${portal}`) > 64) out.push(invalid(`${p}.targetportal`, portal, ISCSI_NAME_LENGTH));
  const prefixMsg = pv ? 'must be valid format' : 'must be valid format starting with iqn, eui, or naa';
  if (!str(s.iqn)) out.push(required(`${p}.iqn`));
  else out.push(...iscsiNameCauses(str(s.iqn), `${p}.iqn`, prefixMsg));
  const lun = num(s.lun) ?? 0;
  if (lun < 0 || lun > 255) out.push(invalid(`${p}.lun`, lun, LUN));
  if ((s.chapAuthDiscovery === true || s.chapAuthSession === true) && !isSet(s.secretRef)) out.push(required(`${p}.secretRef`));
  if (pv && isObj(s.secretRef) && !str(s.secretRef.name)) out.push(required(`${p}.secretRef.name`));
  if (isSet(s.initiatorName)) out.push(...iscsiNameCauses(str(s.initiatorName), `${p}.initiatorname`, prefixMsg));
  return out;
}

/** A pod's iSCSI volume with an initiator name: <volume name>:<portal> must fit in 64 bytes (reported at the volume's name). */
export function iscsiVolumeNameCauses(v: J, p: string): FieldCause[] {
  const s = v.iscsi;
  if (!isObj(s) || !isSet(s.initiatorName)) return [];
  const name = str(v.name);
  return byteLen(`${name}:${str(s.targetPortal)}`) > 64 ? [invalid(`${p}.name`, name, ISCSI_NAME_LENGTH)] : [];
}

/** Go's net.SplitHostPort succeeding: host:port, or [host]:port, with no stray colons or brackets. */
function splitsHostPort(hp: string): boolean {
  const i = hp.lastIndexOf(':');
  if (i < 0) return false;
  let j = 0, k = 0;
  if (hp.startsWith('[')) {
    const end = hp.indexOf(']');
    if (end < 0 || end + 1 !== i) return false;
    j = 1;
    k = end + 1;
  } else if (hp.slice(0, i).includes(':')) return false;
  return !hp.slice(j).includes('[') && !hp.slice(k).includes(']');
}

function quobyteCauses(s: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const registry = str(s.registry);
  if (!registry) out.push(required(`${p}.registry`, QUOBYTE_REGISTRY));
  else if (byteLen(str(s.tenant)) >= 65) out.push(required(`${p}.tenant`, 'must be a UUID and may not exceed a length of 64 characters'));
  else for (const pair of registry.split(',')) if (!splitsHostPort(pair)) out.push(invalid(`${p}.registry`, registry, QUOBYTE_REGISTRY));
  if (!str(s.volume)) out.push(required(`${p}.volume`));
  return out;
}

function fcCauses(s: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const wwns = len(s.targetWWNs), wwids = len(s.wwids);
  if (wwns < 1 && wwids < 1) out.push(required(`${p}.targetWWNs`, 'must specify either targetWWNs or wwids, but not both'));
  if (wwns && wwids) out.push(invalid(`${p}.targetWWNs`, s.targetWWNs, 'targetWWNs and wwids can not be specified simultaneously', goStrings(s.targetWWNs)));
  if (wwns) {
    const lun = num(s.lun);
    if (lun === undefined) out.push(required(`${p}.lun`, 'lun is required if targetWWNs is specified'));
    else if (lun < 0 || lun > 255) out.push(invalid(`${p}.lun`, lun, LUN));
  }
  return out;
}

function flockerCauses(s: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const name = str(s.datasetName), uuid = str(s.datasetUUID);
  if (!name && !uuid) out.push(required(p, 'one of datasetName and datasetUUID is required'));
  if (name && uuid) out.push(invalid(p, 'resource', 'datasetName and datasetUUID can not be specified simultaneously'));
  if (name.includes('/')) out.push(invalid(`${p}.datasetName`, name, "must not contain '/'"));
  return out;
}

function flexCauses(s: J, p: string): FieldCause[] {
  const out = str(s.driver) ? [] : [required(`${p}.driver`)];
  // options may not claim the reserved kubernetes.io and k8s.io domains
  for (const k of Object.keys(isObj(s.options) ? s.options : {})) {
    const slash = k.indexOf('/');
    const domain = `.${(slash >= 0 ? k.slice(0, slash) : k).toLowerCase()}`;
    if (domain.endsWith('.kubernetes.io') || domain.endsWith('.k8s.io')) out.push(invalid(`${p}.options[${k}]`, k, 'kubernetes.io and k8s.io namespaces are reserved'));
  }
  return out;
}

function azureDiskCauses(s: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const uri = str(s.diskURI);
  if (!str(s.diskName)) out.push(required(`${p}.diskName`));
  if (!uri) out.push(required(`${p}.diskURI`));
  if (isSet(s.cachingMode) && !AZURE_CACHING_MODES.includes(s.cachingMode)) out.push(notSupported(`${p}.cachingMode`, s.cachingMode, AZURE_CACHING_MODES));
  if (isSet(s.kind)) {
    if (!AZURE_DISK_KINDS.includes(s.kind)) out.push(notSupported(`${p}.kind`, s.kind, AZURE_DISK_KINDS));
    if (s.kind === 'Managed' && !uri.startsWith('/subscriptions/')) out.push(notSupported(`${p}.diskURI`, uri, [AZURE_MANAGED_URI]));
    if (s.kind !== 'Managed' && !uri.startsWith('https://')) out.push(notSupported(`${p}.diskURI`, uri, [AZURE_BLOB_URI]));
  }
  return out;
}

function storageosCauses(s: J, p: string, pv: boolean): FieldCause[] {
  const out: FieldCause[] = [];
  if (!str(s.volumeName)) out.push(required(`${p}.volumeName`));
  else out.push(...labelCauses(str(s.volumeName), `${p}.volumeName`));
  if (str(s.volumeNamespace)) out.push(...labelCauses(str(s.volumeNamespace), `${p}.volumeNamespace`));
  out.push(...namedRefCauses(s.secretRef, `${p}.secretRef`, pv));
  return out;
}

function csiCauses(s: J, p: string, pv: boolean): FieldCause[] {
  const out = csiDriverNameCauses(str(s.driver), `${p}.driver`);
  if (pv) {
    if (!str(s.volumeHandle)) out.push(required(`${p}.volumeHandle`));
    for (const k of ['controllerPublishSecretRef', 'controllerExpandSecretRef', 'nodePublishSecretRef', 'nodeExpandSecretRef']) {
      if (isObj(s[k])) out.push(...secretRefCauses(s[k], `${p}.${k}`));
    }
  } else if (isObj(s.nodePublishSecretRef)) {
    // an inline volume's secret is in the pod's namespace; a bad name is reported at csi.name
    const name = str(s.nodePublishSecretRef.name);
    if (!name) out.push(required(`${p}.nodePublishSecretRef.name`));
    else out.push(...isDNS1123Subdomain(name).map((m) => invalid(`${p}.name`, name, m)));
  }
  return out;
}

/** Fields that must be non-empty strings: the whole rule of several sources. */
function requiredStrings(s: J, p: string, keys: string[]): FieldCause[] {
  return keys.filter((k) => !str(s[k])).map((k) => required(`${p}.${k}`));
}

/**
 * The rules of one of the shared sources, `key` as the object names it; `p` is where its errors go.
 * `pv`: the PersistentVolume flavour, with the PV's name (iSCSI). Sources it does not know: no rules.
 */
export function vendorSourceCauses(key: string, s: J, p: string, pv: boolean, pvName = ''): FieldCause[] {
  switch (key) {
    case 'hostPath': return hostPathCauses(s, p);
    case 'gitRepo': return [...requiredStrings(s, p, ['repository']), ...localDescendingPathCauses(str(s.directory), `${p}.directory`)];
    case 'gcePersistentDisk': case 'awsElasticBlockStore': {
      const out = requiredStrings(s, p, [key === 'gcePersistentDisk' ? 'pdName' : 'volumeID']);
      const part = num(s.partition) ?? 0;
      if (part < 0 || part > 255) out.push(invalid(`${p}.partition`, part, PARTITION));
      return out;
    }
    case 'nfs': {
      const out = requiredStrings(s, p, ['server', 'path']);
      if (!str(s.path).startsWith('/')) out.push(invalid(`${p}.path`, str(s.path), 'must be an absolute path'));
      return out;
    }
    case 'iscsi': return iscsiCauses(s, p, pv, pvName);
    case 'glusterfs': {
      const out = requiredStrings(s, p, ['endpoints', 'path']);
      if (pv && isSet(s.endpointsNamespace)) {
        const ns = str(s.endpointsNamespace);
        if (!ns) out.push(invalid(`${p}.endpointsNamespace`, ns, 'if the endpointnamespace is set, it must be a valid namespace name'));
        else out.push(...labelCauses(ns, `${p}.endpointsNamespace`));
      }
      return out;
    }
    case 'flocker': return flockerCauses(s, p);
    case 'rbd': return [...(len(s.monitors) ? [] : [required(`${p}.monitors`)]), ...requiredStrings(s, p, ['image'])];
    case 'cinder': return [...requiredStrings(s, p, ['volumeID']), ...namedRefCauses(s.secretRef, `${p}.secretRef`, pv)];
    case 'cephfs': return len(s.monitors) ? [] : [required(`${p}.monitors`)];
    case 'quobyte': return quobyteCauses(s, p);
    case 'fc': return fcCauses(s, p);
    case 'flexVolume': return flexCauses(s, p);
    case 'azureFile': {
      const out = requiredStrings(s, p, ['secretName', 'shareName']);
      if (pv && isSet(s.secretNamespace) && !str(s.secretNamespace)) out.push(required(`${p}.secretNamespace`));
      return out;
    }
    case 'vsphereVolume': return requiredStrings(s, p, ['volumePath']);
    case 'photonPersistentDisk': return requiredStrings(s, p, ['pdID']);
    case 'portworxVolume': return requiredStrings(s, p, ['volumeID']);
    case 'azureDisk': return azureDiskCauses(s, p);
    case 'scaleIO': return requiredStrings(s, p, ['gateway', 'system', 'volumeName']);
    case 'storageos': return storageosCauses(s, p, pv);
    case 'local': return str(s.path) ? noBackstepCauses(str(s.path), `${p}.path`) : [required(`${p}.path`)];
    case 'csi': return csiCauses(s, p, pv);
    default: return [];
  }
}

/** PV sources whose plugins take mount options; any other may not carry the beta mount-options annotation. */
const MOUNT_OPTION_SOURCES = ['gcePersistentDisk', 'awsElasticBlockStore', 'glusterfs', 'nfs', 'rbd', 'quobyte', 'iscsi',
  'cinder', 'cephfs', 'azureFile', 'vsphereVolume', 'azureDisk', 'photonPersistentDisk'];

export function mountOptionCauses(o: KObject, brand: Brand): FieldCause[] {
  const spec: J = isObj(o.spec) ? o.spec : {};
  if (MOUNT_OPTION_SOURCES.some((k) => isSet(spec[k]))) return [];
  const key = `volume.beta.${brand.keyDomain}/mount-options`;
  const annotations = isObj(o.metadata) && isObj(o.metadata.annotations) ? o.metadata.annotations : {};
  return key in annotations ? [forbidden(`metadata.annotations.${key}`, 'may not specify mount options for this volume type')] : [];
}
