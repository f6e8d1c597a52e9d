// Where a pod may run and how it is reached: tolerations, affinity, topology spread constraints,
// readiness and scheduling gates, host aliases and DNS configuration, as the reference checks them.
import { isIP } from 'node:net';
import type { FieldCause } from '../../../../kernel/contracts/index.js';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue, validateLabelSelector, validateQualifiedName } from '../../../../kernel/api/validation.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { duplicate, forbidden, goStrings, invalid, notSupported, required } from './causes.js';
import { str } from './pod-env.js';

/** Go's net.ParseIP as the reference uses it (ParseIPSloppy: IPv4 octets may carry leading zeros). */
export function parsesAsIP(s: string): boolean {
  if (isIP(s)) return true;
  const parts = s.split('.');
  return parts.length === 4 && parts.every((x) => /^\d{1,3}$/.test(x) && Number(x) <= 255);
}

const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** Go's %#v of a toleration, which the reference prints when Exists comes with a value. */
function goToleration(t: J): string {
  const secs = typeof t.tolerationSeconds === 'number' ? '(*int64)(0xc000000000)' : '(*int64)(nil)';
  return `core.Toleration{Key:${JSON.stringify(str(t.key))}, Operator:${JSON.stringify(str(t.operator))}, Value:${JSON.stringify(str(t.value))}, Effect:${JSON.stringify(str(t.effect))}, TolerationSeconds:${secs}}`;
}

export function tolerationsCauses(tolerations: unknown, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  list(tolerations).forEach((t, i) => {
    const ip = `${p}[${i}]`;
    const key = str(t.key), op = str(t.operator), value = str(t.value), effect = str(t.effect);
    if (key) out.push(...validateQualifiedName(key, `${ip}.key`));
    if (!key && op !== 'Exists') out.push(invalid(`${ip}.operator`, op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && effect !== 'NoExecute') out.push(invalid(`${ip}.effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    if (op === 'Equal' || op === '') {
      const errs = isValidLabelValue(value);
      if (errs.length) out.push(invalid(`${ip}.operator`, value, errs.join(';')));
    } else if (op === 'Exists') {
      if (value) out.push(invalid(`${ip}.operator`, t, "value must be empty when `operator` is 'Exists'", goToleration(t)));
    } else out.push(notSupported(`${ip}.operator`, op, ['Equal', 'Exists']));
    if (effect && !EFFECTS.includes(effect)) out.push(notSupported(`${ip}.effect`, effect, EFFECTS));
  });
  return out;
}

export function hostAliasesCauses(aliases: unknown, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  for (const a of list(aliases)) {
    // the reference reports these without the alias's index
    if (!parsesAsIP(str(a.ip))) out.push(invalid(`${p}.ip`, str(a.ip), 'must be valid IP address'));
    for (const h of Array.isArray(a.hostnames) ? a.hostnames : []) for (const m of isDNS1123Subdomain(String(h))) out.push(invalid(`${p}.hostnames`, h, m));
  }
  return out;
}

export function dnsConfigCauses(spec: J, p: string): FieldCause[] {
  const cfg = spec.dnsConfig;
  const nameservers: unknown[] = isObj(cfg) && Array.isArray(cfg.nameservers) ? cfg.nameservers : [];
  if (spec.dnsPolicy === 'None') {
    if (!isObj(cfg)) return [required(p, 'must provide `dnsConfig` when `dnsPolicy` is None')];
    if (!nameservers.length) return [required(`${p}.nameservers`, 'must provide at least one DNS nameserver when `dnsPolicy` is None')];
  }
  if (!isObj(cfg)) return [];
  const out: FieldCause[] = [];
  if (nameservers.length > 3) out.push(invalid(`${p}.nameservers`, nameservers, 'must not have more than 3 nameservers', goStrings(nameservers)));
  nameservers.forEach((ns, i) => { if (!parsesAsIP(String(ns))) out.push(invalid(`${p}.nameservers[${i}]`, ns, 'must be valid IP address')); });
  const searches: string[] = Array.isArray(cfg.searches) ? cfg.searches.map(String) : [];
  if (searches.length > 32) out.push(invalid(`${p}.searches`, searches, 'must not have more than 32 search paths', goStrings(searches)));
  if (searches.join(' ').length > 2048) out.push(invalid(`${p}.searches`, searches, 'must not have more than 2048 characters (including spaces) in the search list', goStrings(searches)));
  searches.forEach((s, i) => {
    const v = s.endsWith('.') ? s.slice(0, -1) : s;
    for (const m of isDNS1123Subdomain(v)) out.push(invalid(`${p}.searches[${i}]`, v, m));
  });
  list(cfg.options).forEach((o, i) => { if (!str(o.name)) out.push(required(`${p}.options[${i}]`, 'must not be empty')); });
  return out;
}

export function readinessGatesCauses(gates: unknown, p: string): FieldCause[] {
  return list(gates).flatMap((g, i) => validateQualifiedName(str(g.conditionType), `${p}[${i}].conditionType`));
}

export function schedulingGatesCauses(gates: unknown, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const seen = new Set<string>();
  list(gates).forEach((g, i) => {
    const name = str(g.name);
    out.push(...validateQualifiedName(name, `${p}[${i}]`));
    if (seen.has(name)) out.push(duplicate(`${p}[${i}]`, name));
    seen.add(name);
  });
  return out;
}

// ---------------------------------------------------------------- affinity

function nodeSelectorRequirementCauses(r: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const n = Array.isArray(r.values) ? r.values.length : 0;
  switch (r.operator) {
    case 'In': case 'NotIn':
      if (n === 0) out.push(required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case 'Exists': case 'DoesNotExist':
      if (n > 0) out.push(forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      break;
    case 'Gt': case 'Lt':
      if (n !== 1) out.push(required(`${p}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      break;
    default: out.push(invalid(`${p}.operator`, str(r.operator), 'not a valid selector operator'));
  }
  out.push(...validateQualifiedName(str(r.key), `${p}.key`));
  return out;
}

/** matchFields may only select on metadata.name, with In or NotIn and exactly one value. */
function nodeFieldRequirementCauses(r: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const n = Array.isArray(r.values) ? r.values.length : 0;
  if (r.operator === 'In' || r.operator === 'NotIn') {
    if (n !== 1) out.push(required(`${p}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
  } else out.push(invalid(`${p}.operator`, str(r.operator), 'not a valid selector operator'));
  if (r.key !== 'metadata.name') out.push(invalid(`${p}.key`, str(r.key), 'not a valid field selector key'));
  else (Array.isArray(r.values) ? r.values : []).forEach((v, i) => { for (const m of isDNS1123Subdomain(String(v))) out.push(invalid(`${p}.values[${i}]`, v, m)); });
  return out;
}

function nodeSelectorTermCauses(term: unknown, p: string): FieldCause[] {
  const t = isObj(term) ? term : {};
  return [
    ...list(t.matchExpressions).flatMap((r, j) => nodeSelectorRequirementCauses(r, `${p}.matchExpressions[${j}]`)),
    ...list(t.matchFields).flatMap((r, j) => nodeFieldRequirementCauses(r, `${p}.matchFields[${j}]`)),
  ];
}

/** ValidateNodeSelector: at least one term, each term's requirements. */
export function nodeSelectorCauses(sel: J, p: string): FieldCause[] {
  const terms = list(sel.nodeSelectorTerms);
  if (!terms.length) return [required(`${p}.nodeSelectorTerms`, 'must have at least one node selector term')];
  return terms.flatMap((t, i) => nodeSelectorTermCauses(t, `${p}.nodeSelectorTerms[${i}]`));
}

function weightCauses(w: unknown, p: string): FieldCause[] {
  const n = typeof w === 'number' ? w : 0;
  return n <= 0 || n > 100 ? [invalid(p, n, 'must be in the range 1-100')] : [];
}

function podAffinityTermCauses(term: unknown, p: string): FieldCause[] {
  const t = isObj(term) ? term : {};
  const out = [...validateLabelSelector(t.labelSelector, `${p}.labelSelector`), ...validateLabelSelector(t.namespaceSelector, `${p}.namespaceSelector`)];
  for (const ns of Array.isArray(t.namespaces) ? t.namespaces : []) for (const m of isDNS1123Label(String(ns))) out.push(invalid(`${p}.namespace`, ns, m));
  const key = str(t.topologyKey);
  if (!key) out.push(required(`${p}.topologyKey`, 'can not be empty'));
  out.push(...isQualifiedName(key).map((m) => invalid(`${p}.topologyKey`, key, m)));
  return out;
}

function podAffinityCauses(a: unknown, p: string): FieldCause[] {
  if (!isObj(a)) return [];
  return [
    ...list(a.requiredDuringSchedulingIgnoredDuringExecution).flatMap((t, i) => podAffinityTermCauses(t, `${p}.requiredDuringSchedulingIgnoredDuringExecution[${i}]`)),
    ...list(a.preferredDuringSchedulingIgnoredDuringExecution).flatMap((w, i) => {
      const wp = `${p}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
      return [...weightCauses(w.weight, `${wp}.weight`), ...podAffinityTermCauses(w.podAffinityTerm, `${wp}.podAffinityTerm`)];
    }),
  ];
}

export function affinityCauses(affinity: unknown, p: string): FieldCause[] {
  if (!isObj(affinity)) return [];
  const out: FieldCause[] = [];
  const na = affinity.nodeAffinity;
  if (isObj(na)) {
    const np = `${p}.nodeAffinity`;
    const req = na.requiredDuringSchedulingIgnoredDuringExecution;
    if (isObj(req)) out.push(...nodeSelectorCauses(req, `${np}.requiredDuringSchedulingIgnoredDuringExecution`));
    list(na.preferredDuringSchedulingIgnoredDuringExecution).forEach((t, i) => {
      const tp = `${np}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
      out.push(...weightCauses(t.weight, `${tp}.weight`), ...nodeSelectorTermCauses(t.preference, `${tp}.preference`));
    });
  }
  out.push(...podAffinityCauses(affinity.podAffinity, `${p}.podAffinity`), ...podAffinityCauses(affinity.podAntiAffinity, `${p}.podAntiAffinity`));
  return out;
}

// ---------------------------------------------------------------- topology spread

const WHEN_UNSATISFIABLE = ['DoNotSchedule', 'ScheduleAnyway'];
const INCLUSION_POLICIES = ['Honor', 'Ignore'];

export function topologySpreadCauses(constraints: unknown, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const all = list(constraints);
  all.forEach((c, i) => {
    const ip = `${p}[${i}]`;
    const skew = typeof c.maxSkew === 'number' ? c.maxSkew : 0;
    if (skew <= 0) out.push(invalid(`${ip}.maxSkew`, skew, 'must be greater than zero'));
    const key = str(c.topologyKey), when = str(c.whenUnsatisfiable);
    if (!key) out.push(required(`${ip}.topologyKey`, 'can not be empty'));
    if (!WHEN_UNSATISFIABLE.includes(when)) out.push(notSupported(`${ip}.whenUnsatisfiable`, when, WHEN_UNSATISFIABLE));
    if (all.slice(i + 1).some((o) => str(o.topologyKey) === key && str(o.whenUnsatisfiable) === when)) out.push(duplicate(`${ip}.{topologyKey, whenUnsatisfiable}`, `{${key}, ${when}}`));
    if (typeof c.minDomains === 'number') {
      if (c.minDomains <= 0) out.push(invalid(`${ip}.minDomains`, c.minDomains, 'must be greater than zero'));
      if (when !== 'DoNotSchedule') out.push(invalid(`${ip}.minDomains`, c.minDomains, `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${when}`));
    }
    for (const k of ['nodeAffinityPolicy', 'nodeTaintsPolicy']) {
      const v = c[k];
      if (v !== undefined && v !== null && !INCLUSION_POLICIES.includes(v)) out.push(notSupported(`${ip}.${k}`, v, INCLUSION_POLICIES));
    }
    out.push(...matchLabelKeysCauses(c, `${ip}.matchLabelKeys`));
    out.push(...validateLabelSelector(c.labelSelector, `${ip}.labelSelector`));
  });
  return out;
}

/** matchLabelKeys: label names, with a label selector, and none of them among the selector's keys. */
function matchLabelKeysCauses(c: J, p: string): FieldCause[] {
  const keys: unknown[] = Array.isArray(c.matchLabelKeys) ? c.matchLabelKeys : [];
  if (!keys.length) return [];
  const out: FieldCause[] = [];
  const sel = c.labelSelector;
  if (!isObj(sel)) out.push(forbidden(p, 'must not be specified when labelSelector is not set'));
  const taken = new Set<unknown>(isObj(sel) ? [...Object.keys(isObj(sel.matchLabels) ? sel.matchLabels : {}), ...list(sel.matchExpressions).map((e) => e.key)] : []);
  keys.forEach((k, i) => {
    out.push(...validateQualifiedName(String(k ?? ''), `${p}[${i}]`));
    if (taken.has(k)) out.push(invalid(`${p}[${i}]`, k, 'exists in both matchLabelKeys and labelSelector'));
  });
  return out;
}

/**
 * Windows host-process pods: the pod's and a container's hostProcess agree where both are set, and
 * a pod with any host-process container has only those, on the host network.
 */
export function hostProcessCauses(s: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const windows = (sc: unknown) => (isObj(sc) && isObj(sc.windowsOptions) ? sc.windowsOptions : undefined);
  const podFlag = windows(s.securityContext)?.hostProcess;
  const pod = typeof podFlag === 'boolean' ? podFlag : undefined;
  let containers = 0, hostProcess = 0;
  for (const k of ['initContainers', 'containers', 'ephemeralContainers']) {
    list(s[k]).forEach((c, i) => {
      containers++;
      const own = windows(c.securityContext)?.hostProcess;
      const flag = typeof own === 'boolean' ? own : undefined;
      if (pod !== undefined && flag !== undefined && pod !== flag) out.push(invalid(`${p}.${k}[${i}].securityContext.windowsOptions.hostProcess`, flag, `pod hostProcess value must be identical if both are specified, was ${pod}`));
      if (flag === true || (flag === undefined && pod === true)) hostProcess++;
    });
  }
  if (hostProcess > 0) {
    if (hostProcess !== containers) out.push(invalid(p, '', 'If pod contains any hostProcess containers then all containers must be HostProcess containers'));
    if (s.hostNetwork !== true) out.push(invalid(`${p}.hostNetwork`, false, 'hostNetwork must be true if pod contains any hostProcess containers'));
  }
  return out;
}
