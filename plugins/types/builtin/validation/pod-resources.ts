// Container resources and pod overhead, as the reference's ValidateResourceRequirements checks them:
// resource names (standard, hugepages-<size>, or a domain-qualified extended resource), quantities
// that are non-negative (and whole for integer resources), requests no greater than limits (equal
// for resources that cannot be overcommitted) and hugepages in whole pages next to cpu or memory.
// Quantities come from kernel/api/quantity.ts; the stored text is already canonical.
import type { FieldCause } from '../../../../kernel/contracts/index.js';
import { isQualifiedName } from '../../../../kernel/api/validation.js';
import { compareQuantity, formatQuantity, nanoOf, parseQuantity, sign, type Quantity } from '../../../../workers/body/quantity.js';
import { isObj } from '../../../lib/json.js';
import { forbidden, invalid, required } from './causes.js';

const CONTAINER_RESOURCES = ['cpu', 'memory', 'ephemeral-storage'];
/** The reference's standard resource names (what a name without a domain may be), quota names included. */
const STANDARD_RESOURCES = new Set([...CONTAINER_RESOURCES, 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage',
  'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods', 'resourcequotas', 'services', 'replicationcontrollers',
  'secrets', 'persistentvolumeclaims', 'configmaps', 'storage', 'requests.storage', 'services.nodeports', 'services.loadbalancers']);
const INTEGER_RESOURCES = new Set(['pods', 'resourcequotas', 'services', 'replicationcontrollers', 'secrets', 'configmaps',
  'persistentvolumeclaims', 'services.nodeports', 'services.loadbalancers']);
const HUGEPAGES = 'hugepages-';

const isHugePages = (name: string) => name.startsWith(HUGEPAGES);
/** In the default namespace: no domain, or kubernetes.io's. */
const isNative = (name: string) => !name.includes('/') || name.includes('kubernetes.io/');
const isExtended = (name: string) => !isNative(name) && !name.startsWith('requests.') && isQualifiedName(`requests.${name}`).length === 0;
const overcommitAllowed = (name: string) => isNative(name) && !isHugePages(name);
const isStandard = (name: string) => STANDARD_RESOURCES.has(name) || name.startsWith(`requests.${HUGEPAGES}`) || isHugePages(name);

/** validateResourceName: a qualified name; without a domain, a standard resource. */
export function resourceNameCauses(name: string, f: string): FieldCause[] {
  const out = isQualifiedName(name).map((m) => invalid(f, name, m));
  if (!out.length && !name.includes('/') && !isStandard(name)) out.push(invalid(f, name, 'must be a standard resource type or fully qualified'));
  return out;
}

/** validateContainerResourceName: a resource name; without a domain a container resource; with one, native or extended. */
export function containerResourceNameCauses(name: string, f: string): FieldCause[] {
  const out = resourceNameCauses(name, f);
  const plain = !name.includes('/');
  if (plain) {
    if (!CONTAINER_RESOURCES.includes(name) && !isHugePages(name)) out.push(invalid(f, name, 'must be a standard resource for containers'));
  } else if (!isNative(name) && !isExtended(name)) out.push(invalid(f, name, "doesn't follow extended resource name standard"));
  return out;
}

/** Go's %#v of a resource.Quantity, which the reference prints for a fractional integer resource. */
export function goQuantity(q: Quantity): string {
  const text = formatQuantity(q);
  return `resource.Quantity{i:resource.int64Amount{value:${q.m}, scale:${q.e}}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:${JSON.stringify(text)}, Format:${JSON.stringify(q.format)}}`;
}

/** ValidateResourceQuantityValue: never negative; whole numbers for integer and extended resources. */
export function quantityValueCauses(name: string, q: Quantity, f: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (sign(q) < 0) out.push(invalid(f, formatQuantity(q), 'must be greater than or equal to 0'));
  if ((INTEGER_RESOURCES.has(name) || isExtended(name)) && nanoOf(q) % 1_000_000_000n !== 0n) out.push(invalid(f, q, 'must be an integer', goQuantity(q)));
  return out;
}

/** Go's Quantity.Value(): the amount rounded up to a whole number. */
function wholeValue(q: Quantity): bigint {
  const n = nanoOf(q), unit = 1_000_000_000n;
  const w = n / unit;
  return n % unit > 0n ? w + 1n : w;
}

function hugePagesError(name: string, q: Quantity): string | undefined {
  const page = parseQuantity(name.slice(HUGEPAGES.length));
  const ok = typeof page !== 'string' && sign(page) > 0 && nanoOf(page) % 1_000_000_000n === 0n && wholeValue(q) % wholeValue(page) === 0n;
  return ok ? undefined : `${formatQuantity(q)} is not positive integer multiple of ${name}`;
}

const quantities = (rl: unknown): [string, Quantity][] => (isObj(rl) ? Object.entries(rl) : [])
  .map(([k, v]) => [k, parseQuantity(v)] as const)
  .filter((e): e is [string, Quantity] => typeof e[1] !== 'string');

/**
 * ValidateResourceRequirements. Resource claims are not checked: they belong to dynamic resource
 * allocation, a feature 1.28 leaves off (the reference drops the fields).
 */
export function resourceRequirementsCauses(res: unknown, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const r = isObj(res) ? res : {};
  const limits = new Map(quantities(r.limits));
  let cpuOrMemory = false, hugePages = false;
  for (const [name, q] of limits) {
    const f = `${p}.limits[${name}]`;
    out.push(...containerResourceNameCauses(name, f), ...quantityValueCauses(name, q, f));
    if (isHugePages(name)) {
      hugePages = true;
      const e = hugePagesError(name, q);
      if (e) out.push(invalid(f, formatQuantity(q), e));
    }
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
  }
  for (const [name, q] of quantities(r.requests)) {
    const f = `${p}.requests[${name}]`;
    out.push(...containerResourceNameCauses(name, f), ...quantityValueCauses(name, q, f));
    const limit = limits.get(name);
    if (limit) {
      const cmp = compareQuantity(q, limit);
      if (cmp !== 0 && !overcommitAllowed(name)) out.push(invalid(`${p}.requests`, formatQuantity(q), `must be equal to ${name} limit of ${formatQuantity(limit)}`));
      else if (cmp > 0) out.push(invalid(`${p}.requests`, formatQuantity(q), `must be less than or equal to ${name} limit of ${formatQuantity(limit)}`));
    } else if (!overcommitAllowed(name)) out.push(required(`${p}.limits`, 'Limit must be set for non overcommitable resources'));
    if (isHugePages(name)) {
      hugePages = true;
      const e = hugePagesError(name, q);
      if (e) out.push(invalid(f, formatQuantity(q), e));
    }
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
  }
  if (hugePages && !cpuOrMemory) out.push(forbidden(p, 'HugePages require cpu or memory'));
  return out;
}

/** Pod overhead: the same rules as a container's limits. */
export function overheadCauses(overhead: unknown, p: string): FieldCause[] {
  return resourceRequirementsCauses({ limits: overhead }, p);
}
