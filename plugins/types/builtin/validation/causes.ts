// The vocabulary of the built-in types' validators: cause builders with the reference's reasons and
// messages ("Required value", "Invalid value: <v>: <detail>"), values printed as Go prints them,
// and the name and selector checks several types share.
import type { Brand } from '../../../../kernel/contracts/brand.js';
import type { FieldCause, KObject } from '../../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../../lib/json.js';

export type Validator = (obj: KObject, old: KObject | undefined, brand: Brand, subresource?: string) => FieldCause[];

// ---------------------------------------------------------------- cause builders

/** A value printed as the reference prints it in messages (Go's %q / %v / %#v). */
export function show(v: unknown): string {
  if (v === undefined || v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (isObj(v) && Object.values(v).every((x) => typeof x === 'string')) return goMap(v);
  return JSON.stringify(v);
}

export function goMap(m: unknown): string {
  if (!isObj(m)) return 'map[string]string(nil)';
  const body = Object.keys(m).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(m[k])}`);
  return `map[string]string{${body.join(', ')}}`;
}

export function goStrings(v: unknown): string {
  return Array.isArray(v) ? `[]string{${v.map((x) => JSON.stringify(String(x))).join(', ')}}` : '[]string(nil)';
}

/** A label selector as the reference prints the Go struct. */
export function goSelector(sel: J): string {
  const reqs = list(sel.matchExpressions).map((r) =>
    `v1.LabelSelectorRequirement{Key:${JSON.stringify(String(r.key ?? ''))}, Operator:${JSON.stringify(String(r.operator ?? ''))}, Values:${goStrings(r.values)}}`);
  const exprs = reqs.length ? `[]v1.LabelSelectorRequirement{${reqs.join(', ')}}` : '[]v1.LabelSelectorRequirement(nil)';
  return `v1.LabelSelector{MatchLabels:${goMap(sel.matchLabels)}, MatchExpressions:${exprs}}`;
}

export const required = (field: string, detail = ''): FieldCause => ({ reason: 'FieldValueRequired', field, message: detail ? `Required value: ${detail}` : 'Required value' });
export const forbidden = (field: string, detail: string): FieldCause => ({ reason: 'FieldValueForbidden', field, message: `Forbidden: ${detail}` });
export const duplicate = (field: string, value: unknown): FieldCause => ({ reason: 'FieldValueDuplicate', field, message: `Duplicate value: ${show(value)}` });
export const tooLong = (field: string, max: number): FieldCause => ({ reason: 'FieldValueTooLong', field, message: `Too long: must have at most ${max} bytes` });
/** `shown` lets a caller pass the already-printed value (Go structs, redacted secrets). */
export function invalid(field: string, value: unknown, detail: string, shown = show(value)): FieldCause {
  return { reason: 'FieldValueInvalid', field, message: `Invalid value: ${shown}${detail ? `: ${detail}` : ''}` };
}
export function notSupported(field: string, value: unknown, valid: string[], shown = show(value)): FieldCause {
  return { reason: 'FieldValueNotSupported', field, message: `Unsupported value: ${shown}: supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}` };
}

/** Required when empty, else one of `valid`. */
export function oneOf(out: FieldCause[], field: string, value: unknown, valid: string[], requiredIfEmpty = false): void {
  if (value === undefined || value === null || value === '') {
    if (requiredIfEmpty) out.push(required(field));
  } else if (!valid.includes(value as string)) out.push(notSupported(field, value, valid));
}

export function nonNegative(out: FieldCause[], field: string, value: unknown): void {
  if (typeof value === 'number' && value < 0) out.push(invalid(field, value, 'must be greater than or equal to 0'));
}

// ---------------------------------------------------------------- syntax checks

export const PORT_RANGE = 'must be between 1 and 65535, inclusive';

export function regexError(msg: string, re: string, ...examples: string[]): string {
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${re}')`;
}

/** Messages for a value that is not a DNS-1123 label. */
export function dnsLabelErrors(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push('must be no more than 63 characters');
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(v)) {
    errs.push(regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", '[a-z0-9]([-a-z0-9]*[a-z0-9])?', 'my-name', '123-abc'));
  }
  return errs;
}

/** Messages for a value that is not a DNS-1035 label (a DNS-1123 label starting with a letter). */
export function dns1035Errors(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push('must be no more than 63 characters');
  if (!/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(v)) {
    errs.push(regexError("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character", '[a-z]([-a-z0-9]*[a-z0-9])?', 'my-name', 'abc-123'));
  }
  return errs;
}

/** IANA service port names: at most 15 characters, lower-case letters, digits and single inner hyphens, at least one letter. */
export function portNameErrors(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 15) errs.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(v)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(v)) errs.push('must contain at least one letter (a-z)');
  if (v.includes('--')) errs.push('must not contain consecutive hyphens');
  if (v.startsWith('-') || v.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

export function configKeyErrors(k: string): string[] {
  const errs: string[] = [];
  if (k.length > 253) errs.push('must be no more than 253 characters');
  if (!/^[-._a-zA-Z0-9]+$/.test(k)) errs.push(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", '[-._a-zA-Z0-9]+', 'key.name', 'KEY_NAME', 'key-name'));
  if (k === '.') errs.push("must not be '.'");
  else if (k === '..') errs.push("must not be '..'");
  else if (k.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

export function validPort(v: unknown): boolean {
  return Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535;
}

/** Decoded length of padded base64, or roughly where the reference's decoder gives up. */
export function base64Length(s: string): { bytes: number } | { bad: number } {
  const body = /^[A-Za-z0-9+/]*/.exec(s)![0].length;
  const pad = s.length - body;
  if (!/^={0,2}$/.test(s.slice(body))) return { bad: body }; // first byte outside the alphabet
  if (s.length % 4 !== 0) return { bad: s.length - (s.length % 4) }; // truncated final quantum
  return { bytes: (s.length / 4) * 3 - pad };
}

/** JSON with sorted keys, to compare values regardless of key order. */
export function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (isObj(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canon(v[k])}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

export function labelsOf(v: unknown): Record<string, string> {
  return isObj(v) ? (v as Record<string, string>) : {};
}

export function dnsSubdomainErrors(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push('must be no more than 253 characters');
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(v)) {
    errs.push(regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*', 'example.com'));
  }
  return errs;
}

// ---------------------------------------------------------------- int or percent

const PERCENT = '[0-9]+%';

/** The reference's ValidatePositiveIntOrPercent (an IntOrString: a non-negative int or "N%"). */
export function intOrPercentCauses(v: unknown, p: string): FieldCause[] {
  const goValue = typeof v === 'string' ? `intstr.IntOrString{Type:1, IntVal:0, StrVal:${JSON.stringify(v)}}` : `intstr.IntOrString{Type:0, IntVal:${String(v)}, StrVal:""}`;
  if (typeof v === 'string') return new RegExp(`^${PERCENT}$`).test(v) ? [] : [invalid(p, v, regexError("a valid percent string must be a numeric string followed by an ending '%'", PERCENT, '1%', '93%'), goValue)];
  if (typeof v === 'number' && v < 0) return [invalid(p, v, 'must be greater than or equal to 0')];
  return [];
}

/** The reference's IsNotMoreThan100Percent. */
export function notOver100PercentCauses(v: unknown, p: string): FieldCause[] {
  if (typeof v !== 'string' || !new RegExp(`^${PERCENT}$`).test(v) || Number(v.slice(0, -1)) <= 100) return [];
  return [invalid(p, v, 'must not be greater than 100%', `intstr.IntOrString{Type:1, IntVal:0, StrVal:${JSON.stringify(v)}}`)];
}
