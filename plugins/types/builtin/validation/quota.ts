// LimitRange and ResourceQuota, as the reference validates them: limit types and resource names, the
// order of min ≤ default request ≤ default ≤ max and the limit/request ratio of each resource;
// quota resource names and non-negative (whole, where counted) amounts, scopes and scope selectors.
// Neither strategy validates an object twice on update.
import type { FieldCause } from '../../../../kernel/contracts/index.js';
import { isQualifiedName } from '../../../../kernel/api/validation.js';
import { compareQuantity, formatQuantity, nanoOf, parseQuantity, type Quantity } from '../../../../workers/body/quantity.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { duplicate, forbidden, invalid, required, type Validator } from './causes.js';
import { str } from './pod-env.js';
import { containerResourceNameCauses, goQuantity, quantityValueCauses, resourceNameCauses } from './pod-resources.js';

// ---------------------------------------------------------------- LimitRange

const LIMIT_TYPES = ['Pod', 'Container', 'PersistentVolumeClaim'];

function limitTypeCauses(type: string, f: string): FieldCause[] {
  const out = isQualifiedName(type).map((m) => invalid(f, type, m));
  if (!out.length && !type.includes('/') && !LIMIT_TYPES.includes(type)) out.push(invalid(f, type, 'must be a standard limit type or fully qualified'));
  return out;
}

/** A map of quantities; what does not parse was refused when the body was decoded. */
function quantities(v: unknown): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  for (const [k, x] of Object.entries(isObj(v) ? v : {})) {
    const q = parseQuantity(x);
    if (typeof q !== 'string') out.set(k, q);
  }
  return out;
}

/** Go's Quantity.MilliValue(): thousandths, rounded away from zero. */
function milli(q: Quantity): number {
  const n = nanoOf(q), unit = 1_000_000n;
  return Number(n % unit === 0n ? n / unit : n / unit + (n < 0n ? -1n : 1n));
}

/** Go's %f. */
const goFloat = (x: number) => (Number.isNaN(x) ? 'NaN' : x === Infinity ? '+Inf' : x === -Infinity ? '-Inf' : x.toFixed(6));

/** Resources that may not be overcommitted (hugepages, extended): default and default request must match. */
const overcommitAllowed = (name: string) => (!name.includes('/') || name.includes('kubernetes.io/')) && !name.startsWith('hugepages-');

function limitItemCauses(limit: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const type = str(limit.type);
  const nameCauses = (name: string, f: string) => (type === 'Pod' || type === 'Container' ? containerResourceNameCauses(name, f) : resourceNameCauses(name, f));
  const byField: Record<string, Map<string, Quantity>> = {};
  const take = (field: string) => {
    const m = quantities(limit[field]);
    for (const name of m.keys()) out.push(...nameCauses(name, `${p}.${field}[${name}]`));
    byField[field] = m;
  };
  take('max');
  take('min');
  if (type === 'Pod') {
    if (isObj(limit.default) && Object.keys(limit.default).length) out.push(forbidden(`${p}.default`, "may not be specified when `type` is 'Pod'"));
    if (isObj(limit.defaultRequest) && Object.keys(limit.defaultRequest).length) out.push(forbidden(`${p}.defaultRequest`, "may not be specified when `type` is 'Pod'"));
    byField.default = new Map();
    byField.defaultRequest = new Map();
  } else {
    take('default');
    take('defaultRequest');
  }
  if (type === 'PersistentVolumeClaim' && !byField.min.has('storage') && !byField.max.has('storage')) {
    out.push(required(`${p}.limits`, 'either minimum or maximum storage value is required, but neither was provided'));
  }
  take('maxLimitRequestRatio');
  const keys = new Set(Object.values(byField).flatMap((m) => [...m.keys()]));
  const s = formatQuantity;
  for (const k of keys) {
    const min = byField.min.get(k), max = byField.max.get(k), def = byField.default.get(k), req = byField.defaultRequest.get(k), ratio = byField.maxLimitRequestRatio.get(k);
    const bad = (field: string, q: Quantity, msg: string) => out.push(invalid(`${p}.${field}[${k}]`, null, msg, goQuantity(q)));
    if (min && max && compareQuantity(min, max) > 0) bad('min', min, `min value ${s(min)} is greater than max value ${s(max)}`);
    if (req && min && compareQuantity(min, req) > 0) bad('defaultRequest', req, `min value ${s(min)} is greater than default request value ${s(req)}`);
    if (req && max && compareQuantity(req, max) > 0) bad('defaultRequest', req, `default request value ${s(req)} is greater than max value ${s(max)}`);
    if (req && def && compareQuantity(req, def) > 0) bad('defaultRequest', req, `default request value ${s(req)} is greater than default limit value ${s(def)}`);
    if (def && min && compareQuantity(min, def) > 0) bad('default', min, `min value ${s(min)} is greater than default value ${s(def)}`);
    if (def && max && compareQuantity(def, max) > 0) bad('default', max, `default value ${s(def)} is greater than max value ${s(max)}`);
    if (ratio && compareQuantity(ratio, parseQuantity('1') as Quantity) < 0) bad('maxLimitRequestRatio', ratio, `ratio ${s(ratio)} is less than 1`);
    if (ratio && min && max) {
      const limitRatio = milli(max) / milli(min);
      if (milli(ratio) / 1000 > limitRatio) bad('maxLimitRequestRatio', ratio, `ratio ${s(ratio)} is greater than max/min = ${goFloat(limitRatio)}`);
    }
    if (!overcommitAllowed(k) && def && req && compareQuantity(def, req) !== 0) bad('defaultRequest', req, `default value ${s(def)} must equal to defaultRequest value ${s(req)} in ${k}`);
  }
  return out;
}

export const limitRange: Validator = (o) => {
  const out: FieldCause[] = [];
  const seen = new Set<string>();
  list(isObj(o.spec) ? o.spec.limits : undefined).forEach((limit, i) => {
    const p = `spec.limits[${i}]`;
    const type = str(limit.type);
    out.push(...limitTypeCauses(type, `${p}.type`));
    if (seen.has(type)) out.push(duplicate(`${p}.type`, type));
    seen.add(type);
    out.push(...limitItemCauses(limit, p));
  });
  return out;
};

// ---------------------------------------------------------------- ResourceQuota

const QUOTA_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.storage',
  'requests.ephemeral-storage', 'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods', 'resourcequotas', 'services',
  'replicationcontrollers', 'secrets', 'persistentvolumeclaims', 'configmaps', 'services.nodeports', 'services.loadbalancers']);
const SCOPES = ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity'];
const POD_COMPUTE = new Set(['cpu', 'memory', 'limits.cpu', 'limits.memory', 'requests.cpu', 'requests.memory']);
const CONFLICTING = [['BestEffort', 'NotBestEffort'], ['Terminating', 'NotTerminating']];
/** Scopes whose selector requirement must use Exists. */
const EXISTS_ONLY = ['BestEffort', 'NotBestEffort', 'Terminating', 'NotTerminating', 'CrossNamespacePodAffinity'];

const isQuotaResource = (name: string) => QUOTA_RESOURCES.has(name) || name.startsWith('hugepages-') || name.startsWith('requests.hugepages-');

/** Whether a hard limit on `resource` means anything under `scope`. */
function scopeFits(scope: string, resource: string): boolean {
  if (scope === 'BestEffort') return resource === 'pods';
  if (['Terminating', 'NotTerminating', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity'].includes(scope)) return resource === 'pods' || POD_COMPUTE.has(resource);
  return true;
}

const goScopes = (v: unknown) => (Array.isArray(v) ? `[]core.ResourceQuotaScope{${v.map((x) => JSON.stringify(str(x))).join(', ')}}` : '[]core.ResourceQuotaScope(nil)');

function hardCauses(hard: unknown, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  for (const [name, q] of quantities(hard)) {
    const f = `${p}[${name}]`;
    out.push(...resourceNameCauses(name, f));
    if (!name.includes('/') && !isQuotaResource(name)) out.push(invalid(f, name, 'must be a standard resource for quota'));
    out.push(...quantityValueCauses(name, q, f));
  }
  return out;
}

function conflictCauses(scopes: Set<string>, f: string, shown: string): FieldCause[] {
  return CONFLICTING.filter((pair) => pair.every((s) => scopes.has(s))).map(() => invalid(f, null, 'conflicting scopes', shown));
}

function scopesCauses(spec: J, hardNames: string[]): FieldCause[] {
  const scopes: unknown[] = Array.isArray(spec.scopes) ? spec.scopes : [];
  if (!scopes.length) return [];
  const shown = goScopes(spec.scopes);
  const out: FieldCause[] = [];
  for (const scope of scopes.map(str)) {
    if (!SCOPES.includes(scope)) out.push(invalid('spec.scopes', null, 'unsupported scope', shown));
    for (const k of hardNames) if (isQuotaResource(k) && !scopeFits(scope, k)) out.push(invalid('spec.scopes', null, 'unsupported scope applied to resource', shown));
  }
  return [...out, ...conflictCauses(new Set(scopes.map(str)), 'spec.scopes', shown)];
}

/** The scope selector's requirements; the reference's paths carry no index. */
function scopeSelectorCauses(spec: J, hardNames: string[]): FieldCause[] {
  if (!isObj(spec.scopeSelector)) return [];
  const p = 'spec.scopeSelector.matchExpressions';
  const out: FieldCause[] = [];
  const names = new Set<string>();
  for (const r of list(spec.scopeSelector.matchExpressions)) {
    const scope = str(r.scopeName), op = str(r.operator);
    const values: unknown[] = Array.isArray(r.values) ? r.values : [];
    if (!SCOPES.includes(scope)) out.push(invalid(`${p}.scopeName`, scope, 'unsupported scope'));
    for (const k of hardNames) if (isQuotaResource(k) && !scopeFits(scope, k)) out.push(invalid(p, null, 'unsupported scope applied to resource', '&core.ScopeSelector{...}'));
    if (EXISTS_ONLY.includes(scope) && op !== 'Exists') {
      out.push(invalid(`${p}.operator`, op, "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"));
    }
    if (op === 'In' || op === 'NotIn') {
      if (!values.length) out.push(required(`${p}.values`, "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"));
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length) out.push(invalid(`${p}.values`, values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"));
    } else out.push(invalid(`${p}.operator`, op, 'not a valid selector operator'));
    names.add(scope);
  }
  return [...out, ...conflictCauses(names, p, goScopes(spec.scopes))];
}

function quotaSpecCauses(spec: J): FieldCause[] {
  const hardNames = [...quantities(spec.hard).keys()].sort();
  return [...hardCauses(spec.hard, 'spec.hard'), ...scopesCauses(spec, hardNames), ...scopeSelectorCauses(spec, hardNames)];
}

export const resourceQuota: Validator = (o, old, _brand, subresource) => {
  const status = isObj(o.status) ? o.status : {};
  const statusCauses = () => [...hardCauses(status.hard, 'status.hard'), ...hardCauses(status.used, 'status.used')];
  // the status strategy validates only the status
  if (subresource === 'status') return statusCauses();
  const spec = isObj(o.spec) ? o.spec : {};
  const out = quotaSpecCauses(spec);
  if (!old) return [...out, ...statusCauses()];
  const set = (v: unknown) => [...new Set((Array.isArray(v) ? v : []).map(str))].sort().join('\n');
  const was = isObj(old.spec) ? old.spec : {};
  if (set(spec.scopes) !== set(was.scopes)) out.push(invalid('spec.scopes', null, 'field is immutable', goScopes(spec.scopes)));
  return out;
};
