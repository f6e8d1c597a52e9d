// Container environment (env, envFrom) and the downward-API selectors that env vars and
// downwardAPI volumes share, with the reference's paths and messages.
import type { FieldCause } from '../../../../kernel/contracts/index.js';
import { isDNS1123Subdomain, isQualifiedName } from '../../../../kernel/api/validation.js';
import { formatQuantity, parseQuantity, sign } from '../../../../workers/body/quantity.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { configKeyErrors, forbidden, invalid, notSupported, regexError, required } from './causes.js';

export const str = (v: unknown): string => (typeof v === 'string' ? v : '');

const ENV_NAME_RE = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** IsEnvVarName: the reference's pattern, and no '.'/'..' (a chdir) at the start. */
export function envVarNameErrors(v: string): string[] {
  const errs: string[] = [];
  if (!ENV_NAME_RE.test(v)) {
    errs.push(regexError("a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit", '[-._a-zA-Z][-._a-zA-Z0-9]*', 'my.env-name', 'MY_ENV.NAME', 'MyEnvName1'));
  }
  if (v === '.') errs.push("must not be '.'");
  else if (v === '..') errs.push("must not be '..'");
  else if (v.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/** Fields an env var may read from the pod (sorted, as the reference lists them). */
export const ENV_FIELD_PATHS = ['metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName', 'spec.serviceAccountName', 'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs'];
/** Fields a downwardAPI volume file may read. */
export const VOLUME_FIELD_PATHS = ['metadata.annotations', 'metadata.labels', 'metadata.name', 'metadata.namespace', 'metadata.uid'];
const CONVERTIBLE = new Set(['metadata.annotations', 'metadata.labels', 'metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName',
  'spec.restartPolicy', 'spec.serviceAccountName', 'spec.schedulerName', 'status.phase', 'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs']);

/** "metadata.labels['a']" → ['metadata.labels', 'a']; undefined when not subscripted. */
function splitSubscript(path: string): [string, string] | undefined {
  if (!path.endsWith("']")) return undefined;
  const s = path.slice(0, -2);
  const at = s.indexOf("['");
  return at > 0 ? [s.slice(0, at), s.slice(at + 2)] : undefined;
}

/** validateObjectFieldSelector: apiVersion v1, a path the downward API converts, one of `allowed`. */
export function objectFieldSelectorCauses(fs: J, p: string, allowed: string[]): FieldCause[] {
  if (!str(fs.apiVersion)) return [required(`${p}.apiVersion`)];
  const path = str(fs.fieldPath);
  if (!path) return [required(`${p}.fieldPath`)];
  let err: string | undefined;
  let internal = path;
  const sub = splitSubscript(path);
  if (fs.apiVersion !== 'v1') err = `unsupported pod version: ${fs.apiVersion}`;
  else if (sub) { if (sub[0] !== 'metadata.annotations' && sub[0] !== 'metadata.labels') err = `field label does not support subscript: ${path}`; }
  else if (path === 'spec.host') internal = 'spec.nodeName';
  else if (!CONVERTIBLE.has(path)) err = `field label not supported: ${path}`;
  if (err) return [invalid(`${p}.fieldPath`, path, `error converting fieldPath: ${err}`)];
  if (sub) {
    const key = sub[0] === 'metadata.annotations' ? sub[1].toLowerCase() : sub[1];
    return isQualifiedName(key).map((m) => invalid(p, key, m));
  }
  return allowed.includes(internal) ? [] : [notSupported(`${p}.fieldPath`, internal, allowed)];
}

/** status.hostIPs needs the PodHostIPs feature, off in 1.28. */
function hostIPsCauses(fs: J, p: string): FieldCause[] {
  return fs.fieldPath === 'status.hostIPs' ? [forbidden(p, "may not be set when feature gate 'PodHostIPs' is not enabled")] : [];
}

const RESOURCE_FIELD_PATHS = ['limits.cpu', 'limits.ephemeral-storage', 'limits.memory', 'requests.cpu', 'requests.ephemeral-storage', 'requests.memory'];
const BYTE_DIVISORS = ['1', '1k', '1M', '1G', '1T', '1P', '1E', '1Ki', '1Mi', '1Gi', '1Ti', '1Pi', '1Ei'];
const DIVISORS_SHOWN = BYTE_DIVISORS.join(', ');

function divisorCauses(resource: string, divisor: unknown, p: string): FieldCause[] {
  const q = parseQuantity(divisor);
  if (divisor === undefined || divisor === null || typeof q === 'string' || sign(q) === 0) return [];
  const d = formatQuantity(q);
  const out: FieldCause[] = [];
  const f = `${p}.divisor`;
  if (resource === 'limits.cpu' || resource === 'requests.cpu') {
    if (d !== '1m' && d !== '1') out.push(invalid(f, resource, "only divisor's values 1m and 1 are supported with the cpu resource"));
  } else if ((resource === 'limits.memory' || resource === 'requests.memory') && !BYTE_DIVISORS.includes(d)) {
    out.push(invalid(f, resource, `only divisor's values ${DIVISORS_SHOWN} are supported with the memory resource`));
  } else if ((resource === 'limits.ephemeral-storage' || resource === 'requests.ephemeral-storage') && !BYTE_DIVISORS.includes(d)) {
    out.push(invalid(f, resource, `only divisor's values ${DIVISORS_SHOWN} are supported with the local ephemeral storage resource`));
  }
  if ((resource.startsWith('requests.hugepages-') || resource.startsWith('limits.hugepages-')) && !BYTE_DIVISORS.includes(d)) {
    out.push(invalid(f, resource, `only divisor's values ${DIVISORS_SHOWN} are supported with the hugepages resource`));
  }
  return out;
}

/** validateContainerResourceFieldSelector; a volume's selector must also name its container. */
export function resourceFieldSelectorCauses(fs: J, p: string, volume: boolean): FieldCause[] {
  const out: FieldCause[] = [];
  const resource = str(fs.resource);
  if (volume && !str(fs.containerName)) out.push(required(`${p}.containerName`));
  else if (!resource) out.push(required(`${p}.resource`));
  else if (!RESOURCE_FIELD_PATHS.includes(resource) && !resource.startsWith('limits.hugepages-') && !resource.startsWith('requests.hugepages-')) {
    out.push(notSupported(`${p}.resource`, resource, RESOURCE_FIELD_PATHS));
  }
  out.push(...divisorCauses(resource, fs.divisor, p));
  return out;
}

/** A referenced config map's or secret's name and key. */
function keySelectorCauses(s: J, p: string): FieldCause[] {
  const out = isDNS1123Subdomain(str(s.name)).map((m) => invalid(`${p}.name`, str(s.name), m));
  const key = str(s.key);
  if (!key) out.push(required(`${p}.key`));
  else for (const m of configKeyErrors(key)) out.push(invalid(`${p}.key`, key, m));
  return out;
}

function valueFromCauses(ev: J, p: string): FieldCause[] {
  const vf = ev.valueFrom;
  if (!isObj(vf)) return [];
  const out: FieldCause[] = [];
  let n = 0;
  if (isObj(vf.fieldRef)) {
    n++;
    out.push(...objectFieldSelectorCauses(vf.fieldRef, `${p}.fieldRef`, ENV_FIELD_PATHS), ...hostIPsCauses(vf.fieldRef, `${p}.fieldRef`));
  }
  if (isObj(vf.resourceFieldRef)) { n++; out.push(...resourceFieldSelectorCauses(vf.resourceFieldRef, `${p}.resourceFieldRef`, false)); }
  if (isObj(vf.configMapKeyRef)) { n++; out.push(...keySelectorCauses(vf.configMapKeyRef, `${p}.configMapKeyRef`)); }
  if (isObj(vf.secretKeyRef)) { n++; out.push(...keySelectorCauses(vf.secretKeyRef, `${p}.secretKeyRef`)); }
  if (n === 0) out.push(invalid(p, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
  else if (str(ev.value)) out.push(invalid(p, '', 'may not be specified when `value` is not empty'));
  else if (n > 1) out.push(invalid(p, '', 'may not have more than one field specified at a time'));
  return out;
}

export function envCauses(env: unknown, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  list(env).forEach((ev, i) => {
    const ip = `${p}[${i}]`;
    const name = str(ev.name);
    if (!name) out.push(required(`${ip}.name`));
    else for (const m of envVarNameErrors(name)) out.push(invalid(`${ip}.name`, name, m));
    out.push(...valueFromCauses(ev, `${ip}.valueFrom`));
  });
  return out;
}

function envSourceNameCauses(ref: J, p: string): FieldCause[] {
  const name = str(ref.name);
  if (!name) return [required(`${p}.name`)];
  return isDNS1123Subdomain(name).map((m) => invalid(`${p}.name`, name, m));
}

export function envFromCauses(envFrom: unknown, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  list(envFrom).forEach((ev, i) => {
    const ip = `${p}[${i}]`;
    const prefix = str(ev.prefix);
    if (prefix) for (const m of envVarNameErrors(prefix)) out.push(invalid(`${ip}.prefix`, prefix, m));
    let n = 0;
    if (isObj(ev.configMapRef)) { n++; out.push(...envSourceNameCauses(ev.configMapRef, `${ip}.configMapRef`)); }
    if (isObj(ev.secretRef)) { n++; out.push(...envSourceNameCauses(ev.secretRef, `${ip}.secretRef`)); }
    // the reference reports these at the list's path, not the item's
    if (n === 0) out.push(invalid(p, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (n > 1) out.push(invalid(p, '', 'may not have more than one field specified at a time'));
  });
  return out;
}
