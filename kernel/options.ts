// Query parameters as the reference decodes and validates them (its ParameterCodec, then the
// meta/v1 options validation): integers are parsed like Go's strconv.ParseInt (a failure is a 400
// with its message), booleans are false only for "0" and "false" in any case, and the write
// options (dryRun, fieldManager, fieldValidation, force) are checked into one 422 per options kind.
import type { Brand } from './brand.js';
import type { FieldCause } from './contracts.js';
import { errors } from './status.js';
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
