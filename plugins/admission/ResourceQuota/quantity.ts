// Resource quantities ("100m", "1.5Gi", "2e3") as exact integers of nano-units, and back to the
// canonical text the reference prints. Shared by ResourceQuota and LimitRanger.

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';
export interface Quantity { nano: bigint; format: QuantityFormat }
/** Resource name → quantity (a ResourceList). */
export type ResourceList = Map<string, Quantity>;

const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const QUANTITY = /^([+-]?)(\d+\.?\d*|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;
const GIGA = 1_000_000_000n;

/** Parses a quantity string (or a JSON number); undefined when it is not one. Sub-nano amounts round up. */
export function parseQuantity(v: unknown): Quantity | undefined {
  const s = typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'string' ? v.trim() : '';
  const m = QUANTITY.exec(s);
  if (!m) return undefined;
  const [, sign, num, suffix, exp] = m;
  const [whole, frac = ''] = num.split('.');
  let n = BigInt((whole || '0') + frac);
  let pow10 = 9 - frac.length;
  let format: QuantityFormat = 'DecimalSI';
  if (exp !== undefined) {
    pow10 += Number(exp);
    format = 'DecimalExponent';
  } else if (suffix !== undefined && suffix in BINARY) {
    n <<= BigInt(BINARY[suffix]);
    format = 'BinarySI';
  } else {
    pow10 += DECIMAL[suffix ?? ''];
  }
  if (pow10 >= 0) n *= 10n ** BigInt(pow10);
  else {
    const d = 10n ** BigInt(-pow10);
    n = (n + d - 1n) / d;
  }
  return { nano: sign === '-' ? -n : n, format };
}

/** The canonical text: the largest suffix that keeps an integer mantissa, in the quantity's own format. */
export function formatQuantity(q: Quantity): string {
  const sign = q.nano < 0n ? '-' : '';
  let n = q.nano < 0n ? -q.nano : q.nano;
  if (n === 0n) return '0';
  // binary only for whole amounts of at least 1024; smaller or fractional ones print as decimal
  if (q.format === 'BinarySI' && n % GIGA === 0n && n >= 1024n * GIGA) {
    let v = n / GIGA;
    let i = 0;
    while (i < 6 && v % 1024n === 0n) {
      v /= 1024n;
      i++;
    }
    return sign + v + ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'][i];
  }
  let e = -9;
  while (e < 18 && n % 1000n === 0n) {
    n /= 1000n;
    e += 3;
  }
  if (q.format === 'DecimalExponent') return sign + n + (e === 0 ? '' : `e${e}`);
  const suffix = Object.keys(DECIMAL).find((k) => DECIMAL[k] === e)!;
  return sign + n + suffix;
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
export const count = (n: number): Quantity => ({ nano: BigInt(n) * GIGA, format: 'DecimalSI' });

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
