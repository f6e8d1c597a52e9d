// Resource quantities ("100m", "1.5Gi", "2e3") as exact integers of nano-units for quota arithmetic,
// parsed and printed by the reference's grammar (workers/body/quantity.ts). Shared by ResourceQuota and LimitRanger.
import { formatQuantity as formatExact, fromNano, nanoOf, parseQuantity as parseExact } from '../../../workers/body/quantity.js';

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';
export interface Quantity { nano: bigint; format: QuantityFormat }
/** Resource name → quantity (a ResourceList). */
export type ResourceList = Map<string, Quantity>;

/** Parses a quantity string (or a JSON number) with the reference's grammar; undefined when it is not one. */
export function parseQuantity(v: unknown): Quantity | undefined {
  const q = parseExact(v);
  return typeof q === 'string' ? undefined : { nano: nanoOf(q), format: q.format };
}

/** The canonical text the reference prints. */
export function formatQuantity(q: Quantity): string {
  return formatExact(fromNano(q.nano, q.format));
}

/** Canonical text of a quantity string; the input itself when it does not parse. */
export function canonical(v: unknown): string {
  const q = parseQuantity(v);
  return q ? formatQuantity(q) : String(v);
}

/** a + b; a zero left side takes the right side's format, as the reference's Quantity.Add does. */
export function addQuantity(a: Quantity | undefined, b: Quantity): Quantity {
  if (!a) return { ...b };
  return { nano: a.nano + b.nano, format: a.nano === 0n ? b.format : a.format };
}

export const zero = (): Quantity => ({ nano: 0n, format: 'DecimalSI' });
export const count = (n: number): Quantity => ({ nano: BigInt(n) * 1_000_000_000n, format: 'DecimalSI' });

/** A JSON map of quantities (resources.requests, spec.hard, ...) as a ResourceList; unparseable values are skipped. */
export function resourceList(v: unknown): ResourceList {
  const out: ResourceList = new Map();
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, raw] of Object.entries(v)) {
      const q = parseQuantity(raw);
      if (q) out.set(k, q);
    }
  }
  return out;
}

/** A ResourceList as a JSON map of canonical strings, keys sorted. */
export function toJSON(l: ResourceList): Record<string, string> {
  return Object.fromEntries([...l.keys()].sort().map((k) => [k, formatQuantity(l.get(k)!)]));
}

/** "k1=v1,k2=v2" with keys sorted: the reference's prettyPrint of a ResourceList. */
export function prettyPrint(l: ResourceList): string {
  return [...l.keys()].sort().map((k) => `${k}=${formatQuantity(l.get(k)!)}`).join(',');
}

/** Sum of two lists (the result is a new list). */
export function addLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map([...a].map(([k, q]) => [k, { ...q }]));
  for (const [k, q] of b) out.set(k, addQuantity(out.get(k), q));
  return out;
}

/** Only the given keys. */
export function mask(l: ResourceList, keys: Iterable<string>): ResourceList {
  const out: ResourceList = new Map();
  for (const k of keys) if (l.has(k)) out.set(k, l.get(k)!);
  return out;
}

type J = Record<string, any>;
const objects = (v: unknown): J[] => (Array.isArray(v) ? v.filter((x) => x && typeof x === 'object') : []);

/** A pod's total requests or limits: containers summed, at least each init container, plus overhead. */
export function podTotal(spec: J, side: 'requests' | 'limits'): ResourceList {
  const total: ResourceList = new Map();
  for (const c of objects(spec.containers)) for (const [k, q] of resourceList(c.resources?.[side])) total.set(k, addQuantity(total.get(k), q));
  for (const c of objects(spec.initContainers)) {
    for (const [k, q] of resourceList(c.resources?.[side])) if (!total.has(k) || total.get(k)!.nano < q.nano) total.set(k, q);
  }
  for (const [k, q] of resourceList(spec.overhead)) if (side === 'requests' || total.has(k)) total.set(k, addQuantity(total.get(k), q));
  return total;
}
