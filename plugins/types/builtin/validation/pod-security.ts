// Pod and container security contexts (user and group ids, sysctls, seccomp, procMount, Windows
// options) and the per-OS restrictions of spec.os, as the reference validates them.
import type { FieldCause } from '../../../../kernel/contracts/index.js';
import { isDNS1123Subdomain } from '../../../../kernel/api/validation.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { duplicate, forbidden, invalid, notSupported, required } from './causes.js';
import { str } from './pod-env.js';
import { localDescendingPathCauses } from './vendor-volumes.js';

const ID_RANGE = 'must be between 0 and 2147483647, inclusive';
const badId = (v: unknown) => typeof v === 'number' && (v < 0 || v > 2147483647);
const SECCOMP_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'];

const SYSCTL_MAX = 253;
/** A sysctl name: segments of [a-z0-9]([-_a-z0-9]*[a-z0-9])? joined by "." or "/". */
const SYSCTL_RE = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/;
const SYSCTL_SHOWN = '^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$';

function sysctlCauses(sysctls: unknown, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const seen = new Set<string>();
  list(sysctls).forEach((s, i) => {
    const f = `${p}[${i}].name`;
    const name = str(s.name);
    if (!name) out.push(required(f));
    else if (name.length > SYSCTL_MAX || !SYSCTL_RE.test(name)) out.push(invalid(f, name, `must have at most ${SYSCTL_MAX} characters and match regex ${SYSCTL_SHOWN}`));
    else if (seen.has(name)) out.push(duplicate(f, name));
    seen.add(name);
  });
  return out;
}

/** Go's %#v of a SeccompProfile, printed by the reference when localhostProfile is misplaced. */
const goSeccomp = (sp: J) => `core.SeccompProfile{Type:${JSON.stringify(str(sp.type))}, LocalhostProfile:(*string)(0xc000000000)}`;

function seccompCauses(sp: unknown, p: string): FieldCause[] {
  if (!isObj(sp)) return [];
  const out: FieldCause[] = [];
  if (!str(sp.type)) out.push(required(`${p}.type`, 'type is required when seccompProfile is set'));
  else if (!SECCOMP_TYPES.includes(sp.type)) out.push(notSupported(`${p}.type`, sp.type, SECCOMP_TYPES));
  const profile = sp.localhostProfile;
  if (sp.type === 'Localhost') {
    if (typeof profile !== 'string') out.push(required(`${p}.localhostProfile`, 'must be set when seccomp type is Localhost'));
    else out.push(...localDescendingPathCauses(profile, `${p}.localhostProfile`));
  } else if (profile !== undefined && profile !== null) out.push(invalid(`${p}.localhostProfile`, sp, 'can only be set when seccomp type is Localhost', goSeccomp(sp)));
  return out;
}

function windowsOptionsCauses(w: unknown, p: string): FieldCause[] {
  if (!isObj(w)) return [];
  const out: FieldCause[] = [];
  if (typeof w.gmsaCredentialSpecName === 'string') for (const m of isDNS1123Subdomain(w.gmsaCredentialSpecName)) out.push(invalid(`${p}.gmsaCredentialSpecName`, w.gmsaCredentialSpecName, m));
  if (w.gmsaCredentialSpec === '') out.push(invalid(`${p}.gmsaCredentialSpec`, '', 'gmsaCredentialSpec cannot be an empty string'));
  else if (typeof w.gmsaCredentialSpec === 'string' && Buffer.byteLength(w.gmsaCredentialSpec) > 64 * 1024) out.push(invalid(`${p}.gmsaCredentialSpec`, w.gmsaCredentialSpec, 'gmsaCredentialSpec size must be under 64 KiB'));
  if (typeof w.runAsUserName === 'string') for (const m of runAsUserNameErrors(w.runAsUserName)) out.push(invalid(`${p}.runAsUserName`, w.runAsUserName, m));
  return out;
}

/** A Windows user name, DOMAIN\\USER or USER, as the reference reads it (lengths in bytes). */
function runAsUserNameErrors(name: string): string[] {
  if (name === '') return ['runAsUserName cannot be an empty string'];
  if (/[\x00-\x1f\x7f]/.test(name)) return ['runAsUserName cannot contain control characters'];
  const parts = name.split('\\');
  if (parts.length > 2) return ['runAsUserName cannot contain more than one backslash'];
  const [domain, user] = parts.length === 2 ? parts as [string, string] : ['', parts[0]!];
  const out: string[] = [];
  if (Buffer.byteLength(domain) >= 256) out.push('runAsUserName\'s Domain length must be under 256 characters');
  const label = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
  if (parts.length === 2 && !(/^[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}$/.test(domain) || new RegExp(`^${label}(?:\\.${label})*$`).test(domain))) out.push("runAsUserName's Domain doesn't match the NetBios nor the DNS format");
  const len = Buffer.byteLength(user);
  if (len === 0) out.push("runAsUserName's User cannot be empty");
  else if (len > 104) out.push("runAsUserName's User length must not be longer than 104 characters");
  if (/^[. ]+$/.test(user)) out.push("runAsUserName's User cannot contain only periods or spaces");
  if (/["/\\:;|=,+*?<>@[\]]/.test(user)) out.push('runAsUserName\'s User cannot contain the following characters: "/\\:;|=,+*?<>@[]');
  return out;
}

/** validatePodSpecSecurityContext (the host namespaces sit on the spec in v1). */
export function podSecurityContextCauses(spec: J, p: string): FieldCause[] {
  const sc = spec.securityContext;
  if (!isObj(sc)) return [];
  const f = `${p}.securityContext`;
  const out: FieldCause[] = [];
  if (badId(sc.fsGroup)) out.push(invalid(`${f}.fsGroup`, sc.fsGroup, ID_RANGE));
  if (badId(sc.runAsUser)) out.push(invalid(`${f}.runAsUser`, sc.runAsUser, ID_RANGE));
  if (badId(sc.runAsGroup)) out.push(invalid(`${f}.runAsGroup`, sc.runAsGroup, ID_RANGE));
  (Array.isArray(sc.supplementalGroups) ? sc.supplementalGroups : []).forEach((g: unknown, i: number) => {
    if (badId(g)) out.push(invalid(`${f}.supplementalGroups[${i}]`, g, ID_RANGE));
  });
  if (spec.shareProcessNamespace === true && spec.hostPID === true) out.push(invalid(`${f}.shareProcessNamespace`, true, 'ShareProcessNamespace and HostPID cannot both be enabled'));
  out.push(...sysctlCauses(sc.sysctls, `${f}.sysctls`));
  const fgp = sc.fsGroupChangePolicy;
  if (fgp !== undefined && fgp !== null && fgp !== 'Always' && fgp !== 'OnRootMismatch') out.push(notSupported(`${f}.fsGroupChangePolicy`, fgp, ['Always', 'OnRootMismatch']));
  out.push(...seccompCauses(sc.seccompProfile, `${f}.seccompProfile`), ...windowsOptionsCauses(sc.windowsOptions, `${f}.windowsOptions`));
  return out;
}

/** Go's %#v of a container's SecurityContext: its pointer fields, nil or set (the address is the reference's own). */
function goSecurityContext(sc: J): string {
  const fields: [string, string, string][] = [['Capabilities', 'capabilities', 'core.Capabilities'], ['Privileged', 'privileged', 'bool'],
    ['SELinuxOptions', 'seLinuxOptions', 'core.SELinuxOptions'], ['WindowsOptions', 'windowsOptions', 'core.WindowsSecurityContextOptions'],
    ['RunAsUser', 'runAsUser', 'int64'], ['RunAsGroup', 'runAsGroup', 'int64'], ['RunAsNonRoot', 'runAsNonRoot', 'bool'],
    ['ReadOnlyRootFilesystem', 'readOnlyRootFilesystem', 'bool'], ['AllowPrivilegeEscalation', 'allowPrivilegeEscalation', 'bool'],
    ['ProcMount', 'procMount', 'core.ProcMountType'], ['SeccompProfile', 'seccompProfile', 'core.SeccompProfile']];
  return `core.SecurityContext{${fields.map(([go, k, t]) => `${go}:(*${t})(${isSet(sc[k]) ? '0xc000000000' : 'nil'})`).join(', ')}}`;
}

/** ValidateSecurityContext of one container (procMount is dropped in 1.28: its feature is off). */
export function containerSecurityContextCauses(sc: unknown, p: string): FieldCause[] {
  if (!isObj(sc)) return [];
  const out: FieldCause[] = [];
  if (badId(sc.runAsUser)) out.push(invalid(`${p}.runAsUser`, sc.runAsUser, ID_RANGE));
  if (badId(sc.runAsGroup)) out.push(invalid(`${p}.runAsGroup`, sc.runAsGroup, ID_RANGE));
  out.push(...seccompCauses(sc.seccompProfile, `${p}.seccompProfile`));
  if (sc.allowPrivilegeEscalation === false) {
    if (sc.privileged === true) out.push(invalid(p, sc, 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true', goSecurityContext(sc)));
    for (const cap of Array.isArray(sc.capabilities?.add) ? sc.capabilities.add : []) {
      if (cap === 'CAP_SYS_ADMIN') out.push(invalid(p, sc, 'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN', goSecurityContext(sc)));
    }
  }
  out.push(...windowsOptionsCauses(sc.windowsOptions, `${p}.windowsOptions`));
  return out;
}

/** Every container with its path, in the reference's visiting order (init, regular, ephemeral). */
export function allContainers(spec: J, p: string): [J, string][] {
  return ['initContainers', 'containers', 'ephemeralContainers'].flatMap((k) => list(spec[k]).map((c, i) => [c, `${p}.${k}[${i}]`] as [J, string]));
}

const WINDOWS_POD_FIELDS: [string, string][] = [['seLinuxOptions', 'securityContext.seLinuxOptions']];
const WINDOWS_CONTAINER_FIELDS = ['seLinuxOptions', 'seccompProfile', 'capabilities', 'readOnlyRootFilesystem', 'privileged', 'allowPrivilegeEscalation', 'runAsUser', 'runAsGroup'];
const isSet = (v: unknown) => v !== undefined && v !== null;

/** spec.os: linux or windows, and what the other OS's pods may not set. */
export function osCauses(spec: J, p: string): FieldCause[] {
  const os = spec.os;
  if (!isObj(os)) return [];
  if (!str(os.name)) return [required(`${p}.os.name`, 'cannot be empty')];
  if (os.name !== 'linux' && os.name !== 'windows') return [notSupported(`${p}.os`, os.name, ['linux', 'windows'])];
  const out: FieldCause[] = [];
  const sc = isObj(spec.securityContext) ? spec.securityContext : {};
  const windowsOnly = 'windows options cannot be set for a linux pod', notWindows = 'cannot be set for a windows pod';
  if (os.name === 'linux') {
    if (isSet(sc.windowsOptions)) out.push(forbidden(`${p}.securityContext.windowsOptions`, windowsOnly));
    for (const [c, cp] of allContainers(spec, p)) if (isSet(c.securityContext?.windowsOptions)) out.push(forbidden(`${cp}.securityContext.windowsOptions`, windowsOnly));
    return out;
  }
  for (const [k, path] of WINDOWS_POD_FIELDS) if (isSet(sc[k])) out.push(forbidden(`${p}.${path}`, notWindows));
  if (spec.hostPID === true) out.push(forbidden(`${p}.hostPID`, notWindows));
  if (spec.hostIPC === true) out.push(forbidden(`${p}.hostIPC`, notWindows));
  for (const k of ['seccompProfile', 'fsGroup', 'fsGroupChangePolicy']) if (isSet(sc[k])) out.push(forbidden(`${p}.securityContext.${k}`, notWindows));
  if (Array.isArray(sc.sysctls) && sc.sysctls.length) out.push(forbidden(`${p}.securityContext.sysctls`, notWindows));
  if (isSet(spec.shareProcessNamespace)) out.push(forbidden(`${p}.shareProcessNamespace`, notWindows));
  for (const k of ['runAsUser', 'runAsGroup', 'supplementalGroups']) if (isSet(sc[k])) out.push(forbidden(`${p}.securityContext.${k}`, notWindows));
  for (const [c, cp] of allContainers(spec, p)) {
    const csc = c.securityContext;
    if (!isObj(csc)) continue;
    for (const k of WINDOWS_CONTAINER_FIELDS) if (isSet(csc[k])) out.push(forbidden(`${cp}.securityContext.${k}`, notWindows));
  }
  return out;
}

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION = 'container.seccomp.security.alpha.kubernetes.io/';

function seccompMatch(annotation: string, sp: J, p: string): FieldCause | undefined {
  const typeMismatch = forbidden(`${p}.type`, 'seccomp type in annotation and field must match');
  switch (sp.type) {
    case 'Unconfined': return annotation === 'unconfined' ? undefined : typeMismatch;
    case 'RuntimeDefault': return annotation === 'runtime/default' || annotation === 'docker/default' ? undefined : typeMismatch;
    case 'Localhost':
      if (!annotation.startsWith('localhost/')) return typeMismatch;
      return sp.localhostProfile === annotation.slice('localhost/'.length) ? undefined : forbidden(`${p}.localhostProfile`, 'seccomp profile in annotation and field must match');
    default: return undefined;
  }
}

/** validateSeccompAnnotationsAndFields: the deprecated annotations, when present, agree with the fields. */
export function seccompAnnotationCauses(annotations: unknown, spec: J, p: string): FieldCause[] {
  const ann = isObj(annotations) ? annotations : {};
  const out: FieldCause[] = [];
  const podSp = spec.securityContext?.seccompProfile;
  if (isObj(podSp) && typeof ann[SECCOMP_POD_ANNOTATION] === 'string') {
    const c = seccompMatch(ann[SECCOMP_POD_ANNOTATION], podSp, `${p}.securityContext.seccompProfile`);
    if (c) out.push(c);
  }
  for (const [ctr, cp] of allContainers(spec, p)) {
    const sp = ctr.securityContext?.seccompProfile;
    const a = ann[`${SECCOMP_CONTAINER_ANNOTATION}${str(ctr.name)}`];
    if (!isObj(sp) || typeof a !== 'string') continue;
    const c = seccompMatch(a, sp, `${cp}.securityContext.seccompProfile`);
    if (c) out.push(c);
  }
  return out;
}
