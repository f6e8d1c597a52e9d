// The Kubernetes CEL libraries for URLs and quantities, on @bufbuild/cel. Their values are opaque to
// rules: a map with one key no rule can write (a NUL-prefixed tag) holding the canonical form, so
// `==` compares two quantities (or URLs) by value and the methods below find their receiver.
//   url:      isURL(string), url(string), getScheme, getHost, getHostname, getPort, getEscapedPath, getQuery
//   quantity: isQuantity(string), quantity(string), sign, isInteger, asInteger, asApproximateFloat,
//             add, sub (a quantity or an int), isGreaterThan, isLessThan, compareTo
import type { CelMap, CelValue } from '@bufbuild/cel';
import { cel } from '../../lib/cel-lib.js';

const URL_TAG = '\u0000url';
const QTY_TAG = '\u0000quantity';

// ---------------------------------------------------------------- URLs

/** A URL as Go's url.ParseRequestURI reads it: an absolute URI, or an absolute path. */
interface ParsedURL { scheme: string; host: string; path: string; query: string }

function parseURL(s: string): ParsedURL | undefined {
  if (s.startsWith('/')) {
    const m = /^([^?#]*)(?:\?([^#]*))?$/.exec(s);
    return m ? { scheme: '', host: '', path: m[1], query: m[2] ?? '' } : undefined;
  }
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?$/.exec(s);
  if (!m || /[\s]/.test(s)) return undefined;
  const authority = m[2] ?? '';
  const host = authority.includes('@') ? authority.slice(authority.lastIndexOf('@') + 1) : authority;
  // a host is a bracketed IPv6 address or a name without colons, then an optional numeric port
  if (!(host.startsWith('[') ? /^\[[0-9a-fA-F:.]+\](?::\d*)?$/ : /^[^:[\]]*(?::\d*)?$/).test(host)) return undefined;
  return { scheme: m[1], host, path: m[3], query: m[4] ?? '' };
}

function urlOf(v: unknown): ParsedURL {
  const raw = cel().isCelMap(v) ? v.get(URL_TAG) : undefined;
  const p = typeof raw === 'string' ? parseURL(raw) : undefined;
  if (!p) throw new Error('no such overload');
  return p;
}

function hostname(host: string): string {
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  const i = host.indexOf(':');
  return i < 0 ? host : host.slice(0, i);
}

function port(host: string): string {
  const end = host.startsWith('[') ? host.indexOf(']') + 1 : 0;
  const i = host.indexOf(':', end);
  return i < 0 ? '' : host.slice(i + 1);
}

function query(q: string): CelMap {
  const out = new Map<string, string[]>();
  if (q) for (const [k, v] of new URLSearchParams(q)) out.set(k, [...(out.get(k) ?? []), v]);
  return cel().celMap(new Map([...out].map(([k, vs]) => [k, cel().celList(vs)])));
}

const urlFuncs = () => {
  const { celFunc, celMethod, CelScalar } = cel();
  return [
    celFunc('isURL', [CelScalar.STRING], CelScalar.BOOL, (s: string) => parseURL(s) !== undefined),
    celFunc('url', [CelScalar.STRING], CelScalar.DYN, (s: string) => {
      if (!parseURL(s)) throw new Error(`URL parse error during conversion from string: parse ${JSON.stringify(s)}: invalid URI for request`);
      return cel().celMap(new Map([[URL_TAG, s]]));
    }),
    celMethod('getScheme', CelScalar.DYN, [], CelScalar.STRING, function (this: CelValue) { return urlOf(this).scheme; }),
    celMethod('getHost', CelScalar.DYN, [], CelScalar.STRING, function (this: CelValue) { return urlOf(this).host; }),
    celMethod('getHostname', CelScalar.DYN, [], CelScalar.STRING, function (this: CelValue) { return hostname(urlOf(this).host); }),
    celMethod('getPort', CelScalar.DYN, [], CelScalar.STRING, function (this: CelValue) { return port(urlOf(this).host); }),
    celMethod('getEscapedPath', CelScalar.DYN, [], CelScalar.STRING, function (this: CelValue) { return urlOf(this).path; }),
    celMethod('getQuery', CelScalar.DYN, [], CelScalar.DYN, function (this: CelValue) { return query(urlOf(this).query); }),
  ];
};

// ---------------------------------------------------------------- quantities

/** An exact quantity: num / 10^scale (binary suffixes are whole multipliers), reduced. */
interface Qty { num: bigint; scale: number }

const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

function reduce(q: Qty): Qty {
  let { num, scale } = q;
  while (scale > 0 && num % 10n === 0n) { num /= 10n; scale--; }
  return { num, scale };
}

/** The reference's quantity syntax: a signed decimal number, then a binary or decimal SI suffix or a decimal exponent. */
export function parseQuantity(s: string): Qty | undefined {
  const m = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/.exec(s);
  if (!m) return undefined;
  const [int, frac = ''] = m[2].split('.');
  let num = BigInt((int || '0') + frac);
  let scale = frac.length;
  const suf = m[3] ?? '';
  if (suf in BINARY) num <<= BigInt(BINARY[suf]);
  else {
    const exp = suf in DECIMAL ? DECIMAL[suf] : Number(suf.slice(1));
    if (Math.abs(exp) > 1000) return undefined;
    if (exp >= 0) num *= 10n ** BigInt(exp);
    else scale += -exp;
  }
  if (m[1] === '-') num = -num;
  return reduce({ num, scale });
}

const encode = (q: Qty): CelMap => cel().celMap(new Map([[QTY_TAG, `${q.num}e-${q.scale}`]]));

function qtyOf(v: unknown): Qty {
  const raw = cel().isCelMap(v) ? v.get(QTY_TAG) : undefined;
  if (typeof raw !== 'string') throw new Error('no such overload');
  const [num, scale] = raw.split('e-');
  return { num: BigInt(num), scale: Number(scale) };
}

/** Two quantities on one scale. */
function align(a: Qty, b: Qty): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.num * 10n ** BigInt(scale - a.scale), b.num * 10n ** BigInt(scale - b.scale), scale];
}

const compare = (a: Qty, b: Qty) => { const [x, y] = align(a, b); return x < y ? -1 : x > y ? 1 : 0; };
/** An int argument is a whole quantity. */
const operand = (v: unknown): Qty => (typeof v === 'bigint' ? { num: v, scale: 0 } : qtyOf(v));
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

const quantityFuncs = () => {
  const { celFunc, celMethod, CelScalar } = cel();
  return [
    celFunc('isQuantity', [CelScalar.STRING], CelScalar.BOOL, (s: string) => parseQuantity(s) !== undefined),
    celFunc('quantity', [CelScalar.STRING], CelScalar.DYN, (s: string) => {
      const q = parseQuantity(s);
      if (!q) throw new Error('quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'');
      return encode(q);
    }),
    celMethod('sign', CelScalar.DYN, [], CelScalar.INT, function (this: CelValue) { const q = qtyOf(this); return q.num > 0n ? 1n : q.num < 0n ? -1n : 0n; }),
    celMethod('isInteger', CelScalar.DYN, [], CelScalar.BOOL, function (this: CelValue) { const q = qtyOf(this); return q.scale === 0 && q.num <= INT64_MAX && q.num >= INT64_MIN; }),
    celMethod('asInteger', CelScalar.DYN, [], CelScalar.INT, function (this: CelValue) {
      const q = qtyOf(this);
      if (q.scale !== 0 || q.num > INT64_MAX || q.num < INT64_MIN) throw new Error('cannot convert value to integer');
      return q.num;
    }),
    celMethod('asApproximateFloat', CelScalar.DYN, [], CelScalar.DOUBLE, function (this: CelValue) { const q = qtyOf(this); return Number(q.num) / 10 ** q.scale; }),
    celMethod('add', CelScalar.DYN, [CelScalar.DYN], CelScalar.DYN, function (this: CelValue, o: CelValue) { const [x, y, scale] = align(qtyOf(this), operand(o)); return encode(reduce({ num: x + y, scale })); }),
    celMethod('sub', CelScalar.DYN, [CelScalar.DYN], CelScalar.DYN, function (this: CelValue, o: CelValue) { const [x, y, scale] = align(qtyOf(this), operand(o)); return encode(reduce({ num: x - y, scale })); }),
    celMethod('isGreaterThan', CelScalar.DYN, [CelScalar.DYN], CelScalar.BOOL, function (this: CelValue, o: CelValue) { return compare(qtyOf(this), qtyOf(o)) > 0; }),
    celMethod('isLessThan', CelScalar.DYN, [CelScalar.DYN], CelScalar.BOOL, function (this: CelValue, o: CelValue) { return compare(qtyOf(this), qtyOf(o)) < 0; }),
    celMethod('compareTo', CelScalar.DYN, [CelScalar.DYN], CelScalar.INT, function (this: CelValue, o: CelValue) { return BigInt(compare(qtyOf(this), qtyOf(o))); }),
  ];
};

/** The url and quantity libraries (made when the CEL environment is: they need the library loaded). */
export const urlAndQuantityLibraries = () => [...urlFuncs(), ...quantityFuncs()];
