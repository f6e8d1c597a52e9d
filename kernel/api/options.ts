// Query parameters as the reference decodes and validates them (its ParameterCodec, then the
// meta/v1 options validation): integers are parsed like Go's strconv.ParseInt (a failure is a 400
// with its message), booleans are false only for "0" and "false" in any case, and the write
// options (dryRun, fieldManager, fieldValidation, force) are checked into one 422 per options kind.
import type { Brand } from '../contracts/brand.js';
import type { FieldCause } from '../contracts/index.js';
import { errors, StatusError } from '../contracts/status.js';
import { formatValue, goQuote } from './validation.js';

/** The first value of a query parameter as a bool: absent → undefined; "0" and "false" (any case) → false; anything else → true. */
export function queryBool(q: URLSearchParams, name: string): boolean | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  return !(v === '0' || v.toLowerCase() === 'false');
}

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

/** Go's strconv.ParseInt(s, 10, 64): an optional sign and decimal digits, in the int64 range. */
export function parseGoInt64(s: string): number {
  if (!/^[+-]?\d+$/.test(s)) throw errors.badRequest(`strconv.ParseInt: parsing ${goQuote(s)}: invalid syntax`);
  const n = BigInt(s);
  if (n > INT64_MAX || n < INT64_MIN) throw errors.badRequest(`strconv.ParseInt: parsing ${goQuote(s)}: value out of range`);
  return Number(n);
}

const UINT64_MAX = 18446744073709551615n;

/** A resourceVersion as the reference's storage reads it: the revision, and its exact decimal text (past 2^53 a number is not exact). */
export interface ParsedRV { n: number; text: string }

/**
 * A resourceVersion as the reference's storage versioner parses it: "" and "0" are 0, anything else
 * Go's strconv.ParseUint(rv, 10, 64). Its failure is the storage's InvalidError; the watch cache
 * returns it as it is, which the reference's handler answers as a 500 without a reason (`delegated`:
 * a list the watch cache hands to etcd, which wraps it in a 400).
 */
export function parseResourceVersion(rv: string, delegated = false): ParsedRV {
  if (rv === '' || rv === '0') return { n: 0, text: '0' };
  const why = !/^\d+$/.test(rv) ? 'invalid syntax' : BigInt(rv) > UINT64_MAX ? 'value out of range' : undefined;
  if (why) {
    const msg = `resourceVersion: Invalid value: ${goQuote(rv)}: strconv.ParseUint: parsing ${goQuote(rv)}: ${why}`;
    throw delegated ? errors.badRequest(`invalid resource version: ${msg}`) : new StatusError(500, '', msg);
  }
  const big = BigInt(rv);
  return { n: Number(big), text: big.toString() };
}

/** The first value of an integer query parameter; undefined when absent. */
export function queryInt(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  return v === null ? undefined : parseGoInt64(v);
}

export type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';

const FIELD_MANAGER_MAX = 128;
const FIELD_VALIDATION = ['', 'Ignore', 'Strict', 'Warn'];

/** Go's %#U of a rune: "U+0007", with the character quoted after it when it is printable. */
function goRune(ch: string): string {
  const hex = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch) ? `U+${hex} '${ch}'` : `U+${hex}`;
}

/** dryRun values: only "All" is allowed (an empty value too is refused, as the reference's set check does). */
export function dryRunCauses(values: string[]): FieldCause[] {
  if (values.every((v) => v === 'All')) return [];
  return [{ reason: 'FieldValueNotSupported', field: 'dryRun', message: `Unsupported value: ${formatValue(values)}: supported values: "All"` }];
}

/**
 * The write options of a create, update or patch (and their order of causes) as the reference
 * validates them; `apply` marks a server-side apply patch. Returns whether the request is a dry run.
 */
export function checkWriteOptions(q: URLSearchParams, brand: Brand, kind: Exclude<OptionsKind, 'DeleteOptions'>, apply = false): boolean {
  const causes: FieldCause[] = [];
  const fm = q.get('fieldManager') ?? '';
  if (kind === 'PatchOptions') {
    if (!apply && q.get('force') !== null) causes.push({ reason: 'FieldValueForbidden', field: 'force', message: 'Forbidden: may not be specified for non-apply patch' });
    if (apply && fm === '') causes.push({ reason: 'FieldValueRequired', field: 'fieldManager', message: 'Required value: is required for apply patch' });
  }
  if (Buffer.byteLength(fm) > FIELD_MANAGER_MAX) causes.push({ reason: 'FieldValueTooLong', field: 'fieldManager', message: `Too long: must have at most ${FIELD_MANAGER_MAX} bytes` });
  let pos = 0;
  for (const ch of fm) {
    if (!/^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch)) {
      causes.push({ reason: 'FieldValueInvalid', field: 'fieldManager', message: `Invalid value: ${goQuote(fm)}: invalid character ${goRune(ch)} (at position ${pos})` });
    }
    pos += Buffer.byteLength(ch);
  }
  const dryRun = q.getAll('dryRun');
  causes.push(...dryRunCauses(dryRun));
  const fv = q.get('fieldValidation') ?? '';
  if (!FIELD_VALIDATION.includes(fv)) {
    causes.push({ reason: 'FieldValueNotSupported', field: 'fieldValidation', message: `Unsupported value: ${goQuote(fv)}: supported values: ${FIELD_VALIDATION.map((v) => goQuote(v)).join(', ')}` });
  }
  if (causes.length) throw errors.invalid(`meta.${brand.domain}`, kind, '', causes);
  return dryRun.length > 0;
}

const DURATION_UNITS: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/** Go's time.ParseDuration in nanoseconds, failing with its messages ("time: missing unit in duration \"5\""). */
export function parseGoDuration(s: string): number {
  const invalid = () => new Error(`time: invalid duration ${goQuote(s)}`);
  let rest = s;
  let sign = 1;
  if (rest[0] === '-' || rest[0] === '+') { sign = rest[0] === '-' ? -1 : 1; rest = rest.slice(1); }
  if (rest === '0') return 0;
  if (rest === '') throw invalid();
  let total = 0;
  while (rest) {
    const m = /^(\d*)(?:\.(\d*))?/.exec(rest)!;
    if (m[0] === '' || m[0] === '.' || (m[1] === '' && !m[2])) throw invalid();
    rest = rest.slice(m[0].length);
    const unit = /^[^\d.]*/.exec(rest)![0];
    if (!unit) throw new Error(`time: missing unit in duration ${goQuote(s)}`);
    const scale = DURATION_UNITS[unit];
    if (scale === undefined) throw new Error(`time: unknown unit ${goQuote(unit)} in duration ${goQuote(s)}`);
    rest = rest.slice(unit.length);
    total += Number(`${m[1] || '0'}.${m[2] || '0'}`) * scale;
    if (total > 9223372036854775807) throw invalid();
  }
  return sign * Math.round(total);
}

/**
 * A request's `?timeout=` in milliseconds (undefined when absent), as the reference's request-deadline
 * filter reads it: a Go duration, else 400.
 */
export function queryTimeoutMs(q: URLSearchParams): number | undefined {
  const v = q.size === 0 ? null : q.get('timeout');
  if (!v) return undefined;
  try { return parseGoDuration(v) / 1e6; } catch (e) { throw errors.badRequest(`invalid timeout specified in the request URL - ${(e as Error).message}`); }
}
