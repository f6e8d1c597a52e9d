// The reference's ValidatePodSpec, for pods and for every pod template (PodTemplate, the workload
// controllers, jobs): the causes it reports, with its field paths, reasons and messages, in its
// order. Volumes, environment, resources, security and scheduling rules live in the sibling files;
// this one walks the spec and checks containers, probes, handlers and ports.
import type { FieldCause } from '../../../../kernel/contracts/index.js';
import { isDNS1123Label, isDNS1123Subdomain, validateLabels } from '../../../../kernel/api/validation.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { duplicate, forbidden, invalid, notSupported, oneOf, portNameErrors, required, show } from './causes.js';
import { envCauses, envFromCauses, str } from './pod-env.js';
import { overheadCauses, resourceRequirementsCauses } from './pod-resources.js';
import { affinityCauses, dnsConfigCauses, hostAliasesCauses, readinessGatesCauses, schedulingGatesCauses, tolerationsCauses, topologySpreadCauses, hostProcessCauses } from './pod-scheduling.js';
import { containerSecurityContextCauses, osCauses, podSecurityContextCauses } from './pod-security.js';
import { volumeDeviceCauses, volumeMountCauses, volumesCauses } from './pod-volumes.js';

const RESTART = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP']; // sorted, as the reference lists them
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];
const PORT_RANGE = 'must be between 1 and 65535, inclusive';
const INT32_MAX = 2147483647;
const NOT_NEGATIVE = 'must be greater than or equal to 0';

const isSet = (v: unknown) => v !== undefined && v !== null;
const validPortNum = (v: unknown) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535;

// ---------------------------------------------------------------- ports, handlers, probes

function containerPortsCauses(ports: unknown, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const names = new Set<string>();
  list(ports).forEach((port, i) => {
    const ip = `${p}[${i}]`;
    const name = str(port.name);
    if (name) {
      const errs = portNameErrors(name);
      if (errs.length) for (const m of errs) out.push(invalid(`${ip}.name`, name, m));
      else if (names.has(name)) out.push(duplicate(`${ip}.name`, name));
      else names.add(name);
    }
    const cp = port.containerPort ?? 0;
    if (cp === 0) out.push(required(`${ip}.containerPort`));
    else if (!validPortNum(cp)) out.push(invalid(`${ip}.containerPort`, cp, PORT_RANGE));
    const hp = port.hostPort ?? 0;
    if (hp !== 0 && !validPortNum(hp)) out.push(invalid(`${ip}.hostPort`, hp, PORT_RANGE));
    oneOf(out, `${ip}.protocol`, port.protocol, PROTOCOLS, true);
  });
  return out;
}

/** Two containers (or two ports) may not claim the same protocol, host IP and host port. */
function hostPortConflicts(containers: J[], p: string, offset = 0): FieldCause[] {
  const out: FieldCause[] = [];
  const seen = new Set<string>();
  containers.forEach((c, i) => list(c.ports).forEach((port, j) => {
    if (!port.hostPort) return;
    const key = `${str(port.protocol)}/${str(port.hostIP)}/${port.hostPort}`;
    if (seen.has(key)) out.push(duplicate(`${p}[${i + offset}].ports[${j}].hostPort`, key));
    seen.add(key);
  }));
  return out;
}

/** An int-or-string port: a number in range, or an IANA service name. */
function portNumOrNameCauses(port: unknown, f: string): FieldCause[] {
  if (typeof port === 'string') return portNameErrors(port).map((m) => invalid(f, port, m));
  const n = typeof port === 'number' ? port : 0;
  return validPortNum(n) ? [] : [invalid(f, n, PORT_RANGE)];
}

const HEADER_RE = /^[-A-Za-z0-9]+$/;
const HEADER_ERROR = "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')";

function handlerCauses(h: J, p: string, kinds: string[]): FieldCause[] {
  const out: FieldCause[] = [];
  let n = 0;
  for (const k of kinds) {
    const a = h[k];
    if (!isObj(a)) continue;
    if (n > 0) { out.push(forbidden(`${p}.${k}`, 'may not specify more than 1 handler type')); continue; }
    n++;
    const ap = `${p}.${k}`;
    if (k === 'exec' && !(Array.isArray(a.command) && a.command.length)) out.push(required(`${ap}.command`));
    if (k === 'httpGet') {
      if (!str(a.path)) out.push(required(`${ap}.path`));
      out.push(...portNumOrNameCauses(a.port, `${ap}.port`));
      if (a.scheme !== 'HTTP' && a.scheme !== 'HTTPS') out.push(notSupported(`${ap}.scheme`, str(a.scheme), ['HTTP', 'HTTPS']));
      for (const hd of list(a.httpHeaders)) if (!HEADER_RE.test(str(hd.name))) out.push(invalid(`${ap}.httpHeaders`, str(hd.name), HEADER_ERROR));
    }
    if (k === 'tcpSocket') out.push(...portNumOrNameCauses(a.port, `${ap}.port`));
    if (k === 'grpc') out.push(...portNumOrNameCauses(typeof a.port === 'number' ? a.port : 0, `${ap}.port`));
  }
  if (n === 0) out.push(required(p, 'must specify a handler type'));
  return out;
}

const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'];
const LIFECYCLE_HANDLERS = ['exec', 'httpGet', 'tcpSocket'];

function probeCauses(probe: unknown, p: string, kind: 'liveness' | 'readiness' | 'startup'): FieldCause[] {
  if (!isObj(probe)) return [];
  const out = handlerCauses(probe, p, PROBE_HANDLERS);
  for (const k of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold']) {
    if (typeof probe[k] === 'number' && probe[k] < 0) out.push(invalid(`${p}.${k}`, probe[k], NOT_NEGATIVE));
  }
  const tgps = probe.terminationGracePeriodSeconds;
  if (typeof tgps === 'number' && tgps <= 0) out.push(invalid(`${p}.terminationGracePeriodSeconds`, tgps, 'must be greater than 0'));
  if (kind === 'readiness' && isSet(tgps)) out.push(invalid(`${p}.terminationGracePeriodSeconds`, tgps, 'must not be set for readinessProbes'));
  if (kind !== 'readiness' && (probe.successThreshold ?? 0) !== 1) out.push(invalid(`${p}.successThreshold`, probe.successThreshold ?? 0, 'must be 1'));
  return out;
}

function lifecycleCauses(lc: unknown, p: string): FieldCause[] {
  if (!isObj(lc)) return [];
  return ['postStart', 'preStop'].flatMap((k) => (isObj(lc[k]) ? handlerCauses(lc[k], `${p}.${k}`, LIFECYCLE_HANDLERS) : []));
}

function probesAndLifecycle(c: J, cp: string): FieldCause[] {
  return [
    ...lifecycleCauses(c.lifecycle, `${cp}.lifecycle`),
    ...probeCauses(c.livenessProbe, `${cp}.livenessProbe`, 'liveness'),
    ...probeCauses(c.readinessProbe, `${cp}.readinessProbe`, 'readiness'),
    ...probeCauses(c.startupProbe, `${cp}.startupProbe`, 'startup'),
  ];
}

// ---------------------------------------------------------------- containers

// resizePolicy (in-place resize), a container's restartPolicy on init containers (sidecars),
// hostUsers (user namespaces) and resourceClaims are features 1.28 leaves off: the reference drops
// those fields before validation, so they are not checked here.

/** validateContainerCommon: what every container (regular, init, ephemeral) must satisfy. */
function containerCommonCauses(c: J, cp: string, vols: Map<string, J>): FieldCause[] {
  const out: FieldCause[] = [];
  const name = str(c.name);
  if (!name) out.push(required(`${cp}.name`));
  else for (const m of isDNS1123Label(name)) out.push(invalid(`${cp}.name`, name, m));
  if (!str(c.image)) out.push(required(`${cp}.image`));
  oneOf(out, `${cp}.terminationMessagePolicy`, c.terminationMessagePolicy, MESSAGE_POLICIES, true);
  out.push(
    ...containerPortsCauses(c.ports, `${cp}.ports`),
    ...envCauses(c.env, `${cp}.env`),
    ...envFromCauses(c.envFrom, `${cp}.envFrom`),
    ...volumeMountCauses(c, vols, `${cp}.volumeMounts`),
    ...volumeDeviceCauses(c, vols, `${cp}.volumeDevices`),
  );
  oneOf(out, `${cp}.imagePullPolicy`, c.imagePullPolicy, PULL_POLICIES, true);
  out.push(
    ...resourceRequirementsCauses(c.resources, `${cp}.resources`),
    ...containerSecurityContextCauses(c.securityContext, `${cp}.securityContext`),
  );
  return out;
}

function regularContainersCauses(spec: J, p: string, vols: Map<string, J>): FieldCause[] {
  const containers = list(spec.containers);
  if (!containers.length) return [required(p)];
  const out: FieldCause[] = [];
  const names = new Set<string>();
  containers.forEach((c, i) => {
    const cp = `${p}[${i}]`;
    out.push(...containerCommonCauses(c, cp, vols));
    if (names.has(str(c.name))) out.push(duplicate(`${cp}.name`, str(c.name)));
    names.add(str(c.name));
    out.push(...probesAndLifecycle(c, cp));
    if (isSet(c.restartPolicy)) out.push(forbidden(`${cp}.restartPolicy`, 'may not be set for non-init containers'));
  });
  out.push(...hostPortConflicts(containers, p));
  return out;
}

/**
 * Init containers run one by one, so each checks its host ports alone. A restartPolicy (sidecar
 * containers) is a feature 1.28 leaves off: such init containers get no probes or lifecycle.
 */
function initContainersCauses(spec: J, p: string, vols: Map<string, J>): FieldCause[] {
  const out: FieldCause[] = [];
  const names = new Set(list(spec.containers).map((c) => str(c.name)));
  const why = 'may not be set for init containers without restartPolicy=Always';
  list(spec.initContainers).forEach((c, i) => {
    const cp = `${p}[${i}]`;
    out.push(...containerCommonCauses(c, cp, vols));
    const name = str(c.name);
    if (names.has(name)) out.push(duplicate(`${cp}.name`, name));
    else if (name) names.add(name);
    out.push(...hostPortConflicts([c], p, i));
    for (const k of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) if (isSet(c[k])) out.push(forbidden(`${cp}.${k}`, why));
  });
  return out;
}

/** Container fields an ephemeral container may not set (what the reference's allow-list leaves out). */
const EPHEMERAL_FORBIDDEN = ['ports', 'resources', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle', 'restartPolicy'];
const isGiven = (v: unknown) => isSet(v) && !(isObj(v) && Object.keys(v).length === 0) && !(Array.isArray(v) && v.length === 0) && v !== '';

function ephemeralContainersCauses(spec: J, p: string, vols: Map<string, J>): FieldCause[] {
  const out: FieldCause[] = [];
  const others = new Set([...list(spec.containers), ...list(spec.initContainers)].map((c) => str(c.name)));
  const names = new Set(others);
  list(spec.ephemeralContainers).forEach((c, i) => {
    const cp = `${p}[${i}]`;
    const name = str(c.name);
    if (names.has(name)) out.push(duplicate(`${cp}.name`, name));
    else names.add(name);
    const target = str(c.targetContainerName);
    if (target && !others.has(target)) out.push({ reason: 'FieldValueNotFound', field: `${cp}.targetContainerName`, message: `Not found: ${show(target)}` });
    out.push(...containerCommonCauses(c, cp, vols));
    for (const f of EPHEMERAL_FORBIDDEN) if (isGiven(c[f])) out.push(forbidden(`${cp}.${f}`, 'cannot be set for an Ephemeral Container'));
    list(c.volumeMounts).forEach((vm, j) => {
      for (const f of ['subPath', 'subPathExpr']) if (isGiven(vm[f])) out.push(forbidden(`${cp}.volumeMounts[${j}].${f}`, 'cannot be set for an Ephemeral Container'));
    });
  });
  return out;
}

/** With the host's network, a pod's container ports are host ports (a template may leave hostPort 0). */
function hostNetworkCauses(spec: J, p: string, pod: boolean): FieldCause[] {
  if (spec.hostNetwork !== true) return [];
  const out: FieldCause[] = [];
  list(spec.containers).forEach((c, i) => list(c.ports).forEach((port, j) => {
    const hp = port.hostPort ?? 0, cp = port.containerPort ?? 0;
    if ((pod || hp !== 0) && hp !== cp) out.push(invalid(`${p}.containers[${i}].ports[${j}].hostPort`, hp, 'must match `containerPort` when `hostNetwork` is true'));
  }));
  return out;
}

function imagePullSecretsCauses(secrets: unknown, p: string): FieldCause[] {
  return list(secrets).flatMap((s, i) => (Object.keys(s).some((k) => k !== 'name')
    ? [invalid(`${p}[${i}]`, s, 'only name may be set', `core.LocalObjectReference{Name:${JSON.stringify(str(s.name))}}`)] : []));
}

function subdomainCauses(v: unknown, f: string): FieldCause[] {
  return typeof v === 'string' && v ? isDNS1123Subdomain(v).map((m) => invalid(f, v, m)) : [];
}

function labelCauses(v: unknown, f: string): FieldCause[] {
  return typeof v === 'string' && v ? isDNS1123Label(v).map((m) => invalid(f, v, m)) : [];
}

// ---------------------------------------------------------------- the spec

/**
 * ValidatePodSpec, plus the pod-only rules (`pod`: images without surrounding blanks, host ports
 * fixed by hostNetwork, ephemeral volume claims named after `podName`) or the template-only one.
 */
export function podSpecCauses(spec: unknown, p: string, pod: boolean, podName?: string): FieldCause[] {
  const s = isObj(spec) ? spec : {};
  const vols = volumesCauses(s.volumes, `${p}.volumes`, pod ? podName : undefined);
  const out = [...vols.causes];
  out.push(
    ...regularContainersCauses(s, `${p}.containers`, vols.byName),
    ...initContainersCauses(s, `${p}.initContainers`, vols.byName),
    ...ephemeralContainersCauses(s, `${p}.ephemeralContainers`, vols.byName),
    ...hostNetworkCauses(s, p, pod),
  );
  oneOf(out, `${p}.restartPolicy`, s.restartPolicy, RESTART, true);
  oneOf(out, `${p}.dnsPolicy`, s.dnsPolicy, DNS_POLICIES, true);
  out.push(
    ...validateLabels(s.nodeSelector, `${p}.nodeSelector`),
    ...podSecurityContextCauses(s, p),
    ...imagePullSecretsCauses(s.imagePullSecrets, `${p}.imagePullSecrets`),
    ...affinityCauses(s.affinity, `${p}.affinity`),
    ...dnsConfigCauses(s, `${p}.dnsConfig`),
    ...readinessGatesCauses(s.readinessGates, `${p}.readinessGates`),
    ...schedulingGatesCauses(s.schedulingGates, `${p}.schedulingGates`),
    ...topologySpreadCauses(s.topologySpreadConstraints, `${p}.topologySpreadConstraints`),
    ...hostProcessCauses(s, p),
    ...subdomainCauses(s.serviceAccountName, `${p}.serviceAccountName`),
    ...subdomainCauses(s.nodeName, `${p}.nodeName`),
  );
  const ads = s.activeDeadlineSeconds;
  if (typeof ads === 'number' && (ads < 1 || ads > INT32_MAX)) out.push(invalid(`${p}.activeDeadlineSeconds`, ads, `must be between 1 and ${INT32_MAX}, inclusive`));
  out.push(
    ...labelCauses(s.hostname, `${p}.hostname`),
    ...labelCauses(s.subdomain, `${p}.subdomain`),
    ...tolerationsCauses(s.tolerations, `${p}.tolerations`),
    ...hostAliasesCauses(s.hostAliases, `${p}.hostAliases`),
    ...subdomainCauses(s.priorityClassName, `${p}.priorityClassName`),
  );
  if (typeof s.runtimeClassName === 'string') out.push(...isDNS1123Subdomain(s.runtimeClassName).map((m) => invalid(`${p}.runtimeClassName`, s.runtimeClassName, m)));
  if (isSet(s.preemptionPolicy)) oneOf(out, `${p}.preemptionPolicy`, s.preemptionPolicy, ['PreemptLowerPriority', 'Never'], true);
  if (isObj(s.overhead)) out.push(...overheadCauses(s.overhead, `${p}.overhead`));
  out.push(...osCauses(s, p));
  if (pod) out.push(...podOnlyCauses(s, p));
  else if (list(s.ephemeralContainers).length) out.push(forbidden(`${p}.ephemeralContainers`, 'ephemeral containers not allowed in pod template'));
  return out;
}

/** What the reference checks for pods and not templates (after the spec). */
function podOnlyCauses(s: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (!str(s.serviceAccountName)) {
    list(s.volumes).forEach((v, i) => list(v.projected?.sources).forEach((src, j) => {
      if (isObj(src.serviceAccountToken)) out.push(forbidden(`${p}.volumes[${i}].projected.sources[${j}].serviceAccountToken`, 'must not be specified when serviceAccountName is not set'));
    }));
  }
  for (const k of ['containers', 'initContainers']) list(s[k]).forEach((c, i) => {
    const image = str(c.image);
    if (image !== image.trim()) out.push(invalid(`${p}.${k}[${i}].image`, image, 'must not have leading or trailing whitespace'));
  });
  return out;
}
