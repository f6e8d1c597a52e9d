// resource.Quantity, the wire type of every amount in the API ("100m", "1.5Gi", "2e3"): parsed with
// the reference's grammar and errors, and printed in its canonical form. Pure API machinery like
// metav1.Time, kept beside its first user, the typed decode (fieldcheck.ts), which refuses a malformed
// quantity with these messages and stores the canonical text; quota, limit ranges and validation
// (plugins) use it to compare exactly.
//
// A value is m × 10^e (m a bigint), which is exact for every quantity the grammar admits: amounts
// finer than a nano-unit are rounded away from zero to one, as the reference does, and decimal
// exponents stay in `e` so that "1e999999999" costs no more than "1".

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface Quantity {
  m: bigint;
  e: number;
  format: QuantityFormat;
  /** The text as given, kept when the reference keeps it (already in a canonical shape). */
  s?: string;
}

const SPLIT_RE = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
export const QUANTITY_FORMAT_ERROR = `quantities must match the regular expression '${SPLIT_RE}'`;
export const QUANTITY_NUMERIC_ERROR = 'unable to parse numeric part of quantity';
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";

const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_BY_EXP = new Map(Object.entries(DECIMAL).map(([k, v]) => [v, k]));
const BINARY_BY_EXP = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const SUFFIX_CHARS = 'eEinumkKMGTP';
const INT64_MAX = (1n << 63n) - 1n;
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

interface Parts { positive: boolean; num: string; denom: string; suffix: string }

/** The reference's scan of a quantity's text: sign, integer digits (leading zeros dropped), fraction, suffix. */
function split(str: string): Parts | string {
  let pos = 0;
  const end = str.length;
  let positive = true;
  if (str[0] === '-') { positive = false; pos++; } else if (str[0] === '+') pos++;
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, num: '0', denom: '', suffix: '' };
  const numStart = pos;
  while (pos < end && isDigit(str[pos])) pos++;
  const num = str.slice(numStart, pos) || '0';
  let denom = '';
  if (str[pos] === '.') {
    const d = ++pos;
    while (pos < end && isDigit(str[pos])) pos++;
    denom = str.slice(d, pos);
  }
  const suffixStart = pos;
  while (pos < end && SUFFIX_CHARS.includes(str[pos]!)) pos++;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) return QUANTITY_FORMAT_ERROR;
  return { positive, num, denom, suffix: str.slice(suffixStart) };
}

/** Base, exponent and format of a suffix; undefined when it is none the reference knows. */
function suffixOf(suffix: string): { base: 2 | 10; exp: number; format: QuantityFormat } | undefined {
  if (suffix in DECIMAL) return { base: 10, exp: DECIMAL[suffix]!, format: 'DecimalSI' };
  if (suffix in BINARY) return { base: 2, exp: BINARY[suffix]!, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E') && /^[+-]?\d+$/.test(suffix.slice(1))) {
    const exp = Number(suffix.slice(1));
    // strconv.ParseInt's int64, then int32 in the reference: bound it where a bigint power stays cheap
    if (Math.abs(exp) <= 2 ** 31 - 1) return { base: 10, exp, format: 'DecimalExponent' };
  }
  return undefined;
}

/** Rounds m × 10^e to whole nano-units, away from zero (the reference's inf.RoundUp at scale 9). */
function roundToNano(m: bigint, e: number): [bigint, number] {
  if (e >= -9 || m === 0n) return [m, e];
  const neg = m < 0n;
  const a = neg ? -m : m;
  // below one nano-unit it is one (no power of ten built for "1e-2000000000")
  const q = digitsOf(a) <= -9 - e ? 1n : (a + 10n ** BigInt(-9 - e) - 1n) / 10n ** BigInt(-9 - e);
  return [neg ? -q : q, -9];
}

/**
 * Parses a quantity's text (or a JSON number, as the reference's UnmarshalJSON reads the literal);
 * the reference's error message when it is not one.
 */
export function parseQuantity(v: unknown): Quantity | string {
  const str = typeof v === 'number' ? (Number.isFinite(v) ? String(v) : '') : typeof v === 'string' ? v.trim() : '';
  if (str === '') return QUANTITY_FORMAT_ERROR;
  if (str === '0') return { m: 0n, e: 0, format: 'DecimalSI', s: '0' };
  const p = split(str);
  if (typeof p === 'string') return p;
  const suf = suffixOf(p.suffix);
  if (!suf) return QUANTITY_SUFFIX_ERROR;
  const digits = p.num + p.denom;
  let m = BigInt(digits);
  if (!p.positive) m = -m;
  let e = -p.denom.length;
  let format = suf.format;
  if (suf.base === 10) e += suf.exp;
  else m <<= BigInt(suf.exp);
  // The reference keeps the text when its fast path finds it canonical already.
  const s = keptText(str, p, suf, digits) ? str : undefined;
  [m, e] = roundToNano(m, e);
  if (format === 'BinarySI') {
    // capped at int64's maximum; a binary amount under one prints as decimal
    const whole = e >= 0 ? m * 10n ** BigInt(e) : undefined;
    if (whole !== undefined && whole > INT64_MAX) { m = INT64_MAX; e = 0; }
    else if (whole !== undefined && whole < -INT64_MAX) { m = -INT64_MAX; e = 0; }
    if (cmpAbs({ m, e }, { m: 1n, e: 0 }) < 0 && m !== 0n) format = 'DecimalSI';
  }
  return s !== undefined ? { m, e, format, s } : { m, e, format };
}

/** When the reference's fast path reuses the text: an int64 amount already in canonical shape. */
function keptText(str: string, p: Parts, suf: { base: 2 | 10; exp: number }, shifted: string): boolean {
  if (suf.base === 10) {
    const scale = suf.exp - p.denom.length;
    if (18 - shifted.length < 0 || scale < -9) return false;
    return scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
  }
  if (p.denom.length) return false;
  const precision = 15 - p.num.length - Math.floor((suf.exp * 3) / 10) - 1;
  if (precision < 0) return false;
  const n = BigInt(shifted);
  if ((n << BigInt(suf.exp)) > INT64_MAX) return false;
  return (n & 7n) !== 0n && str !== '';
}

/** Whether a text is a quantity. */
export const isQuantity = (v: unknown) => typeof parseQuantity(v) !== 'string';

/** -1, 0 or 1. */
export const sign = (q: Quantity) => (q.m < 0n ? -1 : q.m > 0n ? 1 : 0);

function digitsOf(m: bigint): number {
  return (m < 0n ? -m : m).toString().length;
}

function cmpAbs(a: Pick<Quantity, 'm' | 'e'>, b: Pick<Quantity, 'm' | 'e'>): number {
  const am = a.m < 0n ? -a.m : a.m, bm = b.m < 0n ? -b.m : b.m;
  if (am === 0n || bm === 0n) return am === bm ? 0 : am === 0n ? -1 : 1;
  // orders of magnitude first, so that far-apart exponents never build a huge power
  const oa = digitsOf(am) + a.e, ob = digitsOf(bm) + b.e;
  if (oa !== ob) return oa < ob ? -1 : 1;
  const e = Math.min(a.e, b.e);
  const x = am * 10n ** BigInt(a.e - e), y = bm * 10n ** BigInt(b.e - e);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** a compared with b: -1, 0, 1. */
export function compareQuantity(a: Quantity, b: Quantity): number {
  const sa = sign(a), sb = sign(b);
  if (sa !== sb) return sa < sb ? -1 : 1;
  return sa >= 0 ? cmpAbs(a, b) : -cmpAbs(a, b);
}

/** Exponents past this saturate in sums and nano-unit counts, so that no arithmetic builds a power of ten with billions of digits. */
const MAX_EXP = 1000;
const clampExp = (e: number) => Math.max(-MAX_EXP, Math.min(MAX_EXP, e));

/** a + b; a zero left side takes the right side's format, as the reference's Quantity.Add does. */
export function addQuantity(a: Quantity | undefined, b: Quantity): Quantity {
  if (!a) return { m: b.m, e: b.e, format: b.format };
  const e = Math.min(clampExp(a.e), clampExp(b.e));
  const m = a.m * 10n ** BigInt(clampExp(a.e) - e) + b.m * 10n ** BigInt(clampExp(b.e) - e);
  return { m, e, format: a.m === 0n ? b.format : a.format };
}

/** The amount in nano-units (exact: every parsed quantity is a whole number of them). */
export function nanoOf(q: Quantity): bigint {
  const e = clampExp(q.e);
  return e >= -9 ? q.m * 10n ** BigInt(e + 9) : q.m / 10n ** BigInt(-9 - e);
}

export function fromNano(nano: bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
  return { m: nano, e: -9, format };
}

/** The amount as a JavaScript number (approximate; for comparisons that need no exactness). */
export function quantityValue(q: Quantity): number {
  return Number(q.m) * 10 ** q.e;
}

/** The canonical text, as the reference serialises a quantity. */
export function formatQuantity(q: Quantity): string {
  if (q.s !== undefined) return q.s;
  if (q.m === 0n) return '0';
  let format = q.format;
  if (format === 'BinarySI') {
    const small = cmpAbs(q, { m: 1024n, e: 0 }) < 0;
    const whole = q.e >= 0 ? q.m * 10n ** BigInt(q.e) : q.m % 10n ** BigInt(-q.e) === 0n ? q.m / 10n ** BigInt(-q.e) : undefined;
    if (small || whole === undefined) format = 'DecimalSI';
    else {
      const neg = whole < 0n;
      let v = neg ? -whole : whole;
      let i = 0;
      while (v >= 1024n && v % 1024n === 0n) { v /= 1024n; i++; }
      return `${neg ? '-' : ''}${v}${BINARY_BY_EXP[i] ?? ''}`;
    }
  }
  let m = q.m, e = q.e;
  while (m % 10n === 0n) { m /= 10n; e++; }
  const r = ((e % 3) + 3) % 3;
  if (r) { m *= 10n ** BigInt(r); e -= r; }
  if (format === 'DecimalExponent') return e === 0 ? `${m}` : `${m}e${e}`;
  // the reference prints no suffix where its table has none (past E)
  return `${m}${DECIMAL_BY_EXP.get(e) ?? ''}`;
}

/** The canonical text of a quantity's text; undefined when it is not one. */
export function canonicalQuantity(v: unknown): string | undefined {
  const q = parseQuantity(v);
  return typeof q === 'string' ? undefined : formatQuantity(q);
}
