// Generic object-metadata validation. Pure functions returning FieldCause lists whose `field`
// and `message` read exactly like the reference server's field errors, so clients that show
// or parse them (kubectl, controller-runtime) behave the same.
import { Buffer } from 'node:buffer';
import type { FieldCause, ObjectMeta } from '../contracts/index.js';

export type NameRule = 'subdomain' | 'label' | 'label1035' | 'path-segment';

// ---------------------------------------------------------------- message formatting

/** Go's %q for a string: the reference quotes bad string values this way. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c === 7) out += '\\a';
    else if (c === 8) out += '\\b';
    else if (c === 11) out += '\\v';
    else if (c === 12) out += '\\f';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out + '"';
}

/** A decoded JSON value as Go's %+v prints it: `map[a:1 b:[x y]]`, keys sorted, `<nil>` for null. */
export function goPrint(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goPrint).join(' ')}]`;
  if (typeof v === 'object') return `map[${Object.keys(v).sort().map((k) => `${k}:${goPrint((v as Record<string, unknown>)[k])}`).join(' ')}]`;
  return String(v);
}

/** How a bad value is printed after "Invalid value: " (Go's %q / %v / %#v, approximated for structs). */
export function formatValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return `[]string{${v.map(goQuote).join(', ')}}`;
  return JSON.stringify(v) ?? String(v);
}

const withDetail = (head: string, detail: string) => (detail ? `${head}: ${detail}` : head);

/** Field error constructors, one per reference error type (reason = the cause type). */
export const fieldError = {
  invalid: (field: string, value: unknown, detail: string): FieldCause =>
    ({ reason: 'FieldValueInvalid', field, message: withDetail(`Invalid value: ${formatValue(value)}`, detail) }),
  required: (field: string, detail = ''): FieldCause => ({ reason: 'FieldValueRequired', field, message: withDetail('Required value', detail) }),
  forbidden: (field: string, detail = ''): FieldCause => ({ reason: 'FieldValueForbidden', field, message: withDetail('Forbidden', detail) }),
  tooLong: (field: string, max: number): FieldCause =>
    ({ reason: 'FieldValueTooLong', field, message: `Too long: must have at most ${max} ${max === 1 ? 'byte' : 'bytes'}` }),
  notSupported: (field: string, value: unknown, supported: string[]): FieldCause => ({
    reason: 'FieldValueNotSupported', field,
    message: withDetail(`Unsupported value: ${formatValue(value)}`, supported.length ? `supported values: ${supported.map(goQuote).join(', ')}` : ''),
  }),
  duplicate: (field: string, value: unknown): FieldCause => ({ reason: 'FieldValueDuplicate', field, message: `Duplicate value: ${formatValue(value)}` }),
};

const { invalid, required, forbidden } = fieldError;
export const FIELD_IMMUTABLE = 'field is immutable';

// ---------------------------------------------------------------- syntax checks (lists of error strings)

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QNAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QNAME_FMT})?`;
// Anchored at both ends; with ^ the engine tries one start position, so these stay linear.
const anchored = (fmt: string) => new RegExp(`^(?:${fmt})$`);
const DNS1123_LABEL_RE = anchored(DNS1123_LABEL_FMT);
const DNS1123_SUBDOMAIN_RE = anchored(DNS1123_SUBDOMAIN_FMT);
const DNS1035_LABEL_RE = anchored(DNS1035_LABEL_FMT);
const QNAME_RE = anchored(QNAME_FMT);
const LABEL_VALUE_RE = anchored(LABEL_VALUE_FMT);

const DNS1123_LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_MSG = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QNAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MSG = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

export const DNS1123_LABEL_MAX = 63;
export const DNS1123_SUBDOMAIN_MAX = 253;
export const DNS1035_LABEL_MAX = 63;
export const QUALIFIED_NAME_MAX = 63;
export const LABEL_VALUE_MAX = 63;
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** The reference measures length in bytes (Go len). */
const byteLen = (s: string) => Buffer.byteLength(s, 'utf8');
const maxLenError = (n: number) => `must be no more than ${n} characters`;
const emptyError = () => 'must be non-empty';

/** The reference's RegexError wording, including its doubled space before each " or ". */
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (!examples.length) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > DNS1123_LABEL_MAX) errs.push(maxLenError(DNS1123_LABEL_MAX));
  if (!DNS1123_LABEL_RE.test(value)) {
    // A valid subdomain that is not a valid label can only be failing on its dots.
    if (DNS1123_SUBDOMAIN_RE.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > DNS1035_LABEL_MAX) errs.push(maxLenError(DNS1035_LABEL_MAX));
  if (!DNS1035_LABEL_RE.test(value)) errs.push(regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  return errs;
}

/** Names that must be usable as one URL path segment (e.g. RBAC roles). */
export function isPathSegmentName(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  return isPathSegmentPrefix(value);
}

/** A generateName prefix may be '.' (a suffix follows), but may not contain '/' or '%'. */
export function isPathSegmentPrefix(value: string): string[] {
  return ['/', '%'].filter((c) => value.includes(c)).map((c) => `may not contain '${c}'`);
}

/** Label keys, annotation keys, finalizers: an optional DNS-subdomain prefix and '/' plus a name of at most 63. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0];
  else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (!prefix) errs.push('prefix part ' + emptyError());
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => 'prefix part ' + m));
  } else {
    return [`a qualified name ${regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (!name) errs.push('name part ' + emptyError());
  else if (byteLen(name) > QUALIFIED_NAME_MAX) errs.push('name part ' + maxLenError(QUALIFIED_NAME_MAX));
  if (!QNAME_RE.test(name)) errs.push('name part ' + regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc'));
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > LABEL_VALUE_MAX) errs.push(maxLenError(LABEL_VALUE_MAX));
  if (!LABEL_VALUE_RE.test(value)) errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

/**
 * The reference replaces a trailing '-' of a generateName prefix before checking it, because a
 * random suffix follows. It cuts two characters, not one (`name[:len-2] + "a"`); kept as is.
 */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? name.slice(0, -2) + 'a' : name;
}

/** Name syntax errors for a rule; `prefix` true checks a generateName prefix. */
export function validateNameByRule(rule: NameRule, name: string, prefix: boolean): string[] {
  switch (rule) {
    case 'label': return isDNS1123Label(prefix ? maskTrailingDash(name) : name);
    case 'label1035': return isDNS1035Label(prefix ? maskTrailingDash(name) : name);
    case 'path-segment': return prefix ? isPathSegmentPrefix(name) : isPathSegmentName(name);
    default: return isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
  }
}

// ---------------------------------------------------------------- field validators (FieldCause lists)

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function validateQualifiedName(value: string, field: string): FieldCause[] {
  return isQualifiedName(value).map((m) => invalid(field, value, m));
}

export function validateLabelValue(value: string, field: string): FieldCause[] {
  return isValidLabelValue(value).map((m) => invalid(field, value, m));
}

/** Keys and values are both reported at the map's path, as the reference does. */
export function validateLabels(labels: unknown, field: string): FieldCause[] {
  if (labels == null) return [];
  if (!isMap(labels)) return [invalid(field, labels, 'must be a map of string keys to string values')];
  const errs: FieldCause[] = [];
  for (const [k, v] of Object.entries(labels)) {
    errs.push(...validateQualifiedName(k, field));
    errs.push(...(typeof v === 'string' ? validateLabelValue(v, field) : [invalid(field, v, 'must be a string')]));
  }
  return errs;
}

export function validateAnnotations(annotations: unknown, field: string): FieldCause[] {
  if (annotations == null) return [];
  if (!isMap(annotations)) return [invalid(field, annotations, 'must be a map of string keys to string values')];
  const errs: FieldCause[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) {
    // Annotation keys are qualified names except that case does not matter.
    errs.push(...isQualifiedName(k.toLowerCase()).map((m) => invalid(field, k, m)));
    if (typeof v !== 'string') errs.push(invalid(field, v, 'must be a string'));
    total += byteLen(k) + (typeof v === 'string' ? byteLen(v) : 0);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(fieldError.tooLong(field, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

/** Finalizer names: qualified-name syntax only (the domain-qualified rule is type-specific in the reference). */
export function validateFinalizers(finalizers: unknown, field: string): FieldCause[] {
  if (finalizers == null) return [];
  if (!Array.isArray(finalizers)) return [invalid(field, finalizers, 'must be a list of strings')];
  const errs: FieldCause[] = [];
  for (const f of finalizers) {
    errs.push(...(typeof f === 'string' ? validateQualifiedName(f, field) : [invalid(field, f, 'must be a string')]));
  }
  // The two deletion-propagation finalizers contradict each other.
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errs.push(invalid(field, finalizers, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return errs;
}

/** Splits apiVersion like the reference's ParseGroupVersion; an unparsable one yields no group/version. */
function splitAPIVersion(apiVersion: string): { group: string; version: string } {
  const parts = apiVersion.split('/');
  if (parts.length === 1) return { group: '', version: parts[0] };
  if (parts.length === 2) return { group: parts[0], version: parts[1] };
  return { group: '', version: '' };
}

/** Shape of ownerReferences; errors name the sub-field without an index, as the reference does. */
export function validateOwnerReferences(refs: unknown, field: string): FieldCause[] {
  if (refs == null) return [];
  if (!Array.isArray(refs)) return [invalid(field, refs, 'must be a list of owner references')];
  const errs: FieldCause[] = [];
  const s = (v: unknown) => (typeof v === 'string' ? v : '');
  let firstController = '';
  for (const raw of refs) {
    const r = isMap(raw) ? raw : {};
    const apiVersion = s(r.apiVersion), kind = s(r.kind), name = s(r.name), uid = s(r.uid);
    const { group, version } = splitAPIVersion(apiVersion);
    if (!version) errs.push(invalid(`${field}.apiVersion`, apiVersion, 'version must not be empty'));
    if (!kind) errs.push(invalid(`${field}.kind`, kind, 'kind must not be empty'));
    if (!name) errs.push(invalid(`${field}.name`, name, 'name must not be empty'));
    if (!uid) errs.push(invalid(`${field}.uid`, uid, 'uid must not be empty'));
    // Core events are short-lived and may not own anything.
    if (group === '' && version === 'v1' && kind === 'Event') errs.push(invalid(field, raw, '/v1, Kind=Event is disallowed from being an owner'));
    if (r.controller === true) {
      const current = `${kind}/${name}`;
      if (firstController) {
        errs.push(invalid(field, refs, `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`));
      } else firstController = current;
    }
  }
  return errs;
}

/** A LabelSelector field of an object (e.g. spec.selector), checked as the reference's ValidateLabelSelector. */
export function validateLabelSelector(sel: unknown, field: string): FieldCause[] {
  if (sel == null) return [];
  if (!isMap(sel)) return [invalid(field, sel, 'must be a label selector object')];
  const errs = validateLabels(sel.matchLabels, `${field}.matchLabels`);
  const exprs = Array.isArray(sel.matchExpressions) ? sel.matchExpressions : [];
  exprs.forEach((raw, i) => {
    const p = `${field}.matchExpressions[${i}]`;
    const e = isMap(raw) ? raw : {};
    const values = Array.isArray(e.values) ? e.values : [];
    switch (e.operator) {
      case 'In': case 'NotIn':
        if (!values.length) errs.push(required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists': case 'DoesNotExist':
        if (values.length) errs.push(forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        errs.push(invalid(`${p}.operator`, e.operator ?? '', 'not a valid selector operator'));
    }
    errs.push(...validateQualifiedName(typeof e.key === 'string' ? e.key : '', `${p}.key`));
    values.forEach((v, j) => {
      errs.push(...(typeof v === 'string' ? validateLabelValue(v, `${p}.values[${j}]`) : [invalid(`${p}.values[${j}]`, v, 'must be a string')]));
    });
  });
  return errs;
}

// ---------------------------------------------------------------- object metadata

export interface ObjectMetaOptions {
  namespaced: boolean;
  nameRule: NameRule;
  /** On create an absent name is fine when generateName is set (the name is generated). */
  isCreate: boolean;
  /** Path of the metadata field; "metadata" unless validating an embedded template. */
  path?: string;
}

/** Reads a string field, reporting a non-string value. */
function str(errs: FieldCause[], field: string, v: unknown): string {
  if (typeof v === 'string') return v;
  if (v != null) errs.push(invalid(field, v, 'must be a string'));
  return '';
}

/**
 * Generic metadata rules for create and update (on update, also call validateObjectMetaUpdate
 * for the old-versus-new rules). Errors come in the reference's order.
 */
export function validateObjectMeta(meta: ObjectMeta | undefined, opts: ObjectMetaOptions): FieldCause[] {
  const m: ObjectMeta = meta ?? {};
  const p = opts.path ?? 'metadata';
  const errs: FieldCause[] = [];
  const generateName = str(errs, `${p}.generateName`, m.generateName);
  const name = str(errs, `${p}.name`, m.name);
  const namespace = str(errs, `${p}.namespace`, m.namespace);

  // The reference checks generateName only on create.
  if (opts.isCreate && generateName) {
    for (const msg of validateNameByRule(opts.nameRule, generateName, true)) errs.push(invalid(`${p}.generateName`, generateName, msg));
  }
  if (!name) {
    if (!(opts.isCreate && generateName)) errs.push(required(`${p}.name`, 'name or generateName is required'));
  } else {
    for (const msg of validateNameByRule(opts.nameRule, name, false)) errs.push(invalid(`${p}.name`, name, msg));
  }

  if (opts.namespaced) {
    if (!namespace) errs.push(required(`${p}.namespace`));
    else for (const msg of validateNameByRule('label', namespace, false)) errs.push(invalid(`${p}.namespace`, namespace, msg));
  } else if (namespace) {
    errs.push(forbidden(`${p}.namespace`, 'not allowed on this type'));
  }

  if (typeof m.generation === 'number' && m.generation < 0) errs.push(invalid(`${p}.generation`, m.generation, 'must be greater than or equal to 0'));
  errs.push(...validateLabels(m.labels, `${p}.labels`));
  errs.push(...validateAnnotations(m.annotations, `${p}.annotations`));
  errs.push(...validateOwnerReferences(m.ownerReferences, `${p}.ownerReferences`));
  errs.push(...validateFinalizers(m.finalizers, `${p}.finalizers`));
  return errs;
}

/**
 * Old-versus-new metadata rules of an update. An omitted uid or creationTimestamp counts as
 * unchanged: the reference copies those from the stored object before validating.
 */
export function validateObjectMetaUpdate(newMeta: ObjectMeta | undefined, oldMeta: ObjectMeta | undefined, path = 'metadata'): FieldCause[] {
  const n: ObjectMeta = newMeta ?? {};
  const o: ObjectMeta = oldMeta ?? {};
  const errs: FieldCause[] = [];

  // Once deletion began, finalizers may only be removed.
  if (o.deletionTimestamp && Array.isArray(n.finalizers)) {
    const old = new Set(Array.isArray(o.finalizers) ? o.finalizers : []);
    const added = [...new Set(n.finalizers.filter((f) => !old.has(f)))].sort();
    if (added.length) errs.push(forbidden(`${path}.finalizers`, `no new finalizers can be added if the object is being deleted, found new finalizers ${formatValue(added)}`));
  }

  const immutable = (field: string, nv: unknown, ov: unknown) => {
    if (nv !== ov) errs.push(invalid(`${path}.${field}`, nv ?? null, FIELD_IMMUTABLE));
  };
  immutable('name', n.name ?? '', o.name ?? '');
  immutable('namespace', n.namespace ?? '', o.namespace ?? '');
  if (n.uid) immutable('uid', n.uid, o.uid ?? '');
  if (n.creationTimestamp) immutable('creationTimestamp', n.creationTimestamp, o.creationTimestamp ?? '');
  // Once set, deletionTimestamp can be neither changed nor unset by an update.
  if (o.deletionTimestamp) immutable('deletionTimestamp', n.deletionTimestamp, o.deletionTimestamp);
  // and the new metadata's own syntax again, as the reference's update check does
  errs.push(...validateLabels(n.labels, `${path}.labels`), ...validateAnnotations(n.annotations, `${path}.annotations`), ...validateOwnerReferences(n.ownerReferences, `${path}.ownerReferences`));
  return errs;
}
