// A custom resource version's openAPIV3Schema (JSONSchemaProps, as written in the definition), turned
// into what the server needs, once per version:
//   toSchema         the kernel's structural Schema: pruning, unknown-field reports, SSA list/map markers
//   structuralErrors the reference's structural-schema rules, as field causes of the definition
//   compileValues    value validation (ajv) with the reference's messages and field paths
//   applyDefaults    `default` values and the pruning of nulls that are not nullable
import { createRequire } from 'node:module';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { RE2JS } from 're2js';
import type { FieldCause, Schema } from '../../../kernel/contracts/index.js';
import { fieldError, formatValue, goQuote } from '../../../kernel/api/validation.js';
import { isObj } from '../../lib/json.js';
import { compileDeep, compileDeepSliced, isDeep } from '../../../kernel/api/ajvdeep.js';

export type Props = Record<string, any>;

const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];

/** The kernel Schema of a structural schema; `metaRef` names ObjectMeta for metadata at the root and in embedded resources. */
export function toSchema(p: Props, metaRef: string, root = true): Schema {
  const description = typeof p.description === 'string' ? p.description : undefined;
  const d = { ...(description ? { description } : {}), ...(p.nullable === true ? { nullable: true } : {}) };
  if (p['x-kubernetes-int-or-string']) return { type: 'int-or-string', ...(description ? { description } : {}) };
  const embedded = p['x-kubernetes-embedded-resource'] === true;
  const preserve = p['x-kubernetes-preserve-unknown-fields'] === true;
  if (p.type === 'object' || embedded || root) {
    const fields: Record<string, Schema> = {};
    for (const [k, v] of Object.entries(isObj(p.properties) ? p.properties : {})) if (isObj(v)) fields[k] = toSchema(v, metaRef, false);
    if (root || embedded) {
      fields.apiVersion ??= { type: 'string' };
      fields.kind ??= { type: 'string' };
      // ObjectMeta is the server's: a schema may only narrow name and generateName (checked as values).
      fields.metadata = { type: 'ref', ref: metaRef };
    }
    const s: Extract<Schema, { type: 'object' }> = { type: 'object', ...d };
    if (isObj(p.additionalProperties)) s.additional = toSchema(p.additionalProperties, metaRef, false);
    else if (p.additionalProperties === true) s.additional = { type: 'any' };
    else s.fields = fields; // no additionalProperties: only the declared fields survive pruning
    if (s.additional && Object.keys(fields).length) s.fields = fields;
    if (Array.isArray(p.required) && p.required.length) s.required = [...p.required];
    if (preserve) s.preserveUnknown = true;
    if (p['x-kubernetes-map-type'] === 'atomic') s.mapType = 'atomic';
    else if (p['x-kubernetes-map-type'] === 'granular') s.mapType = 'granular';
    return s;
  }
  if (p.type === 'array') {
    // Lists are atomic unless marked: the reference's default for custom resources.
    const lt = p['x-kubernetes-list-type'];
    const s: Extract<Schema, { type: 'array' }> = { type: 'array', items: isObj(p.items) ? toSchema(p.items, metaRef, false) : { type: 'any' }, listType: lt === 'set' || lt === 'map' ? lt : 'atomic', ...d };
    if (lt === 'map' && Array.isArray(p['x-kubernetes-list-map-keys'])) s.mapKeys = [...p['x-kubernetes-list-map-keys']];
    return s;
  }
  if (p.type === 'string' || p.type === 'integer' || p.type === 'number' || p.type === 'boolean') {
    const s: { type: 'string' | 'integer' | 'number' | 'boolean'; format?: string; description?: string } = { type: p.type, ...d };
    // The kernel's type check reads date-time and byte; the other formats are checked by compileValues.
    if (p.type === 'string' && (p.format === 'date-time' || p.format === 'byte')) s.format = p.format;
    return s;
  }
  return { type: 'any', ...(description ? { description } : {}) };
}

// ---------------------------------------------------------------- structural rules

const key = (path: string, k: string) => `${path}.properties[${k}]`;

/**
 * The reference's structural-schema and OpenAPI checks that matter for serving, at `path`
 * ("spec.versions[0].schema.openAPIV3Schema"). Value rules inside anyOf/allOf/oneOf/not must not
 * shape the value (the structural rule), except the int-or-string pair controller-gen emits.
 */
export function structuralErrors(p: unknown, path: string, statusEnabled: boolean): FieldCause[] {
  if (!isObj(p)) return [fieldError.required(path, '')];
  // The reference reports its structural rules sorted by their text, then its OpenAPI rules.
  const out: FieldCause[] = [];
  const openapi: FieldCause[] = [];
  const walk = (s: Props, at: string, where: 'root' | 'field' | 'item' | 'additional') => {
    const intOrString = s['x-kubernetes-int-or-string'] === true;
    const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
    const embedded = s['x-kubernetes-embedded-resource'] === true;
    if (s.type !== undefined && !TYPES.includes(s.type)) openapi.push(fieldError.notSupported(`${at}.type`, s.type, TYPES));
    if (embedded && s.type !== 'object') out.push(s.type === undefined ? fieldError.required(`${at}.type`, 'must be object if x-kubernetes-embedded-resource is true') : fieldError.invalid(`${at}.type`, s.type, 'must be object if x-kubernetes-embedded-resource is true'));
    else if (!s.type && !intOrString && !(preserve && where !== 'root')) {
      if (where === 'root') out.push(fieldError.required(`${at}.type`, 'must not be empty at the root'));
      else if (where === 'item') out.push(fieldError.required(`${at}.type`, 'must not be empty for specified array items'));
      else if (where === 'field') out.push(fieldError.required(`${at}.type`, 'must not be empty for specified object fields'));
    }
    if (where === 'root' && s.type && s.type !== 'object') out.push(fieldError.invalid(`${at}.type`, s.type, 'must be object at the root'));
    // Any additionalProperties at the root, false included (the structural form keeps it as a bool).
    if (where === 'root' && s.additionalProperties !== undefined && s.additionalProperties !== null) out.push(fieldError.forbidden(`${at}.additionalProperties`, 'must not be used at the root'));
    if (embedded && s.additionalProperties !== undefined) out.push(fieldError.forbidden(`${at}.additionalProperties`, 'must not be used if x-kubernetes-embedded-resource is set'));
    if (embedded && !preserve && !(isObj(s.properties) && Object.keys(s.properties).length)) out.push(fieldError.required(`${at}.properties`, 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
    if (intOrString && preserve) out.push(fieldError.invalid(`${at}.x-kubernetes-preserve-unknown-fields`, true, 'must be false if x-kubernetes-int-or-string is true'));
    if (intOrString && embedded) out.push(fieldError.invalid(`${at}.x-kubernetes-embedded-resource`, true, 'must be false if x-kubernetes-int-or-string is true'));
    if (s.type === 'array' && !isObj(s.items)) out.push(fieldError.required(`${at}.items`, 'must be specified'));
    // `true` beside properties is allowed; `false` or a schema is not (properties are for structs, additionalProperties for maps).
    if (isObj(s.properties) && Object.keys(s.properties).length && (s.additionalProperties === false || isObj(s.additionalProperties))) openapi.push(fieldError.forbidden(`${at}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
    checkPattern(s, at, out);
    const lt = s['x-kubernetes-list-type'];
    if (lt !== undefined) {
      if (!['atomic', 'set', 'map'].includes(lt)) openapi.push(fieldError.notSupported(`${at}.x-kubernetes-list-type`, lt, ['atomic', 'set', 'map']));
      else if (s.type !== 'array') openapi.push(fieldError.invalid(`${at}.x-kubernetes-list-type`, lt, 'must only be used on array types'));
      else if (lt === 'map') {
        const keys = s['x-kubernetes-list-map-keys'];
        if (!Array.isArray(keys) || !keys.length) openapi.push(fieldError.required(`${at}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
        else if (!isObj(s.items) || s.items.type !== 'object') openapi.push(fieldError.invalid(`${at}.x-kubernetes-list-type`, lt, 'must only be map if the array items are of type object'));
        else for (const k of keys) if (!isObj(s.items.properties?.[k])) openapi.push(fieldError.invalid(`${at}.x-kubernetes-list-map-keys`, keys, `entries must all be names of item properties`));
      } else if (lt === 'set' && isObj(s.items) && s.items.type === 'object' && s.items['x-kubernetes-map-type'] !== 'atomic') {
        openapi.push(fieldError.invalid(`${at}.items.x-kubernetes-map-type`, s.items['x-kubernetes-map-type'] ?? null, 'must be atomic as item of a list with x-kubernetes-list-type=set'));
      }
    }
    if (s['x-kubernetes-list-map-keys'] !== undefined && lt !== 'map') openapi.push(fieldError.invalid(`${at}.x-kubernetes-list-type`, lt ?? '', 'must be map if x-kubernetes-list-map-keys is non-empty'));
    if (isObj(s.properties)) {
      for (const [k, v] of Object.entries(s.properties)) {
        if (!isObj(v)) continue;
        if (k === 'metadata') out.push(...metadataErrors(v, where === 'root', embedded, key(at, k)));
        walk(v, key(at, k), 'field');
      }
    }
    if (where === 'root' && statusEnabled) {
      // With a status sub-resource the root may only carry what the reference allows there.
      const allowedRoot = new Set(['description', 'type', 'required', 'properties', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-validations', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string', 'x-kubernetes-list-type', 'x-kubernetes-map-type', 'x-kubernetes-list-map-keys']);
      for (const k of Object.keys(s)) if (!allowedRoot.has(k) && k !== 'nullable') openapi.push(fieldError.invalid(at, '', 'only description, type, properties, required, x-kubernetes-preserve-unknown-fields and x-kubernetes-validations allowed at the root of the schema if the status subresource is enabled'));
    }
    if (isObj(s.items)) walk(s.items, `${at}.items`, 'item');
    if (isObj(s.additionalProperties)) walk(s.additionalProperties, `${at}.additionalProperties`, 'additional');
    valueValidationErrors(s, at, out);
  };
  walk(p, path, 'root');
  out.push(...completenessErrors(p, p, path, path));
  const text = (c: FieldCause) => `${c.field}: ${c.message}`;
  out.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
  return dedupe([...out, ...openapi]);
}

function dedupe(causes: FieldCause[]): FieldCause[] {
  const seen = new Set<string>();
  return causes.filter((c) => {
    const k = `${c.field}\0${c.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

// ---------------------------------------------------------------- regular expressions

/**
 * `pattern` is an RE2 expression in the reference (Go's regexp), so it is compiled and matched with
 * re2js, never as a JavaScript RegExp: `(?i)` works, look-arounds and back-references are refused.
 */
const compiled = new Map<string, RE2JS | Error>();
/**
 * re2js is required with the first pattern (0.6 MiB of heap from start-up otherwise, for a schema
 * feature most servers never see); compilation is synchronous, so its CommonJS build.
 */
let re2js: typeof import('re2js') | undefined;
const compileRe2 = (pattern: string) => (re2js ??= createRequire(import.meta.url)('re2js') as typeof import('re2js')).RE2JS.compile(pattern);
export function re2(pattern: string): RE2JS | Error {
  let r = compiled.get(pattern);
  if (r === undefined) {
    try {
      const named = goNamedGroup(pattern);
      r = named ? new Error(`error parsing regexp: invalid or unsupported Perl syntax: \`${named}\``) : compileRe2(pattern);
    } catch (e) { r = e as Error; }
    if (compiled.size > 10_000) compiled.clear();
    compiled.set(pattern, r);
  }
  return r;
}

/** Go 1.21 (the reference's) knows only `(?P<name>`; `(?<name>` came with Go 1.22, which re2js follows. */
function goNamedGroup(p: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') { i++; continue; }
    if (inClass) { if (c === ']') inClass = false; continue; }
    if (c === '[') { inClass = true; if (p[i + 1] === '^') i++; if (p[i + 1] === ']') i++; continue; }
    if (c === '(' && p.startsWith('(?<', i) && p[i + 3] !== '=' && p[i + 3] !== '!') return '(?<';
  }
  return undefined;
}

function checkPattern(s: Props, at: string, out: FieldCause[]): void {
  if (typeof s.pattern !== 'string' || !s.pattern) return;
  const r = re2(s.pattern);
  if (r instanceof Error) out.push(fieldError.invalid(`${at}.pattern`, s.pattern, `must be a valid regular expression, but isn't: ${r.message}`));
}

// ---------------------------------------------------------------- metadata, value validation, completeness

/**
 * A `metadata` property: at the root it may only narrow name and generateName (the reference drops
 * those, type and default, and then wants nothing left); at the root and in embedded resources it must be an object.
 */
function metadataErrors(m: Props, root: boolean, embedded: boolean, at: string): FieldCause[] {
  const out: FieldCause[] = [];
  if ((root || embedded) && m.type !== 'object') out.push(fieldError.invalid(`${at}.type`, m.type ?? '', 'must be object'));
  if (root) {
    const rest = Object.keys(m).filter((k) => k !== 'type' && k !== 'default' && !(k === 'nullable' && m[k] === false) && !(k.startsWith('x-kubernetes-') && m[k] === false));
    const props = isObj(m.properties) ? Object.keys(m.properties) : [];
    const onlyNames = props.length > 0 && props.every((k) => k === 'name' || k === 'generateName');
    if (rest.some((k) => k !== 'properties') || (rest.includes('properties') && !onlyNames && props.length > 0)) {
      out.push(fieldError.forbidden(at, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
    }
  }
  return out;
}

const isIntOrStringPair = (l: unknown): boolean => Array.isArray(l) && l.length === 2
  && [['integer', l[0]], ['string', l[1]]].every(([t, x]) => isObj(x) && Object.keys(x).length === 1 && x.type === t);

/** The reference's value-validation rules of one schema: its anyOf/allOf/oneOf/not, recursively, and its pattern. */
function valueValidationErrors(s: Props, at: string, out: FieldCause[], skipAnyOf = isIntOrStringPair(s.anyOf), skipFirstAllOfAnyOf = Array.isArray(s.allOf) && isObj(s.allOf[0]) && isIntOrStringPair(s.allOf[0].anyOf)): void {
  if (!skipAnyOf && Array.isArray(s.anyOf)) s.anyOf.forEach((x: unknown, i: number) => nestedErrors(x, `${at}.anyOf[${i}]`, out, false));
  if (Array.isArray(s.allOf)) s.allOf.forEach((x: unknown, i: number) => nestedErrors(x, `${at}.allOf[${i}]`, out, skipFirstAllOfAnyOf && i === 0));
  if (Array.isArray(s.oneOf)) s.oneOf.forEach((x: unknown, i: number) => nestedErrors(x, `${at}.oneOf[${i}]`, out, false));
  if (isObj(s.not)) nestedErrors(s.not, `${at}.not`, out, false);
}

/** Inside anyOf/allOf/oneOf/not only value rules may appear: what shapes or describes the value must be absent. */
function nestedErrors(x: unknown, at: string, out: FieldCause[], skipAnyOf: boolean): void {
  if (!isObj(x)) return;
  checkPattern(x, at, out);
  valueValidationErrors(x, at, out, skipAnyOf, false);
  if (isObj(x.items)) nestedErrors(x.items, `${at}.items`, out, false);
  if (isObj(x.properties)) for (const [k, v] of Object.entries(x.properties)) nestedErrors(v, key(at, k), out, false);
  const present = (f: string) => x[f] !== undefined && x[f] !== null && x[f] !== false && x[f] !== '' && !(Array.isArray(x[f]) && !x[f].length);
  if (present('type')) out.push(fieldError.forbidden(`${at}.type`, 'must be empty to be structural'));
  if (x.additionalProperties !== undefined) out.push(fieldError.forbidden(`${at}.additionalProperties`, 'must be undefined to be structural'));
  if (x.default !== undefined) out.push(fieldError.forbidden(`${at}.default`, 'must be undefined to be structural'));
  if (present('title')) out.push(fieldError.forbidden(`${at}.title`, 'must be empty to be structural'));
  if (present('description')) out.push(fieldError.forbidden(`${at}.description`, 'must be empty to be structural'));
  if (present('nullable')) out.push(fieldError.forbidden(`${at}.nullable`, 'must be false to be structural'));
  for (const f of ['x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string']) if (present(f)) out.push(fieldError.forbidden(`${at}.${f}`, 'must be false to be structural'));
  if (present('x-kubernetes-list-map-keys')) out.push(fieldError.forbidden(`${at}.x-kubernetes-list-map-keys`, 'must be empty to be structural'));
  for (const f of ['x-kubernetes-list-type', 'x-kubernetes-map-type']) if (x[f] !== undefined) out.push(fieldError.forbidden(`${at}.${f}`, 'must be undefined to be structural'));
  if (present('x-kubernetes-validations')) out.push(fieldError.forbidden(`${at}.x-kubernetes-validations`, 'must be empty to be structural'));
  // Reasoning about metadata in value rules could restrict it in ways the server does not allow.
  if (isObj(x.properties) && 'metadata' in x.properties) out.push(fieldError.forbidden(`${key(at, 'metadata')}`, 'must not be specified in a nested context'));
}

/** Every property and items a value rule of the root names must also be specified in the structural part. */
function completenessErrors(v: Props, s: Props | undefined, sPath: string, vPath: string): FieldCause[] {
  const out: FieldCause[] = [];
  const nested = (n: unknown, st: Props | undefined, sp: string, vp: string) => {
    if (!isObj(n)) return;
    if (!st) { out.push(fieldError.required(sp, `because it is defined in ${vp}`)); return; }
    out.push(...completenessErrors(n, st, sp, vp));
    if (isObj(n.items)) nested(n.items, isObj(st.items) ? st.items : undefined, `${sp}.items`, `${vp}.items`);
    if (isObj(n.properties)) for (const [k, x] of Object.entries(n.properties)) {
      const sf = isObj(st.properties) && isObj(st.properties[k]) ? st.properties[k] : undefined;
      if (!sf) out.push(fieldError.required(key(sp, k), `because it is defined in ${key(vp, k)}`));
      else nested(x, sf, key(sp, k), key(vp, k));
    }
  };
  if (isObj(v.not)) nested(v.not, s, sPath, `${vPath}.not`);
  for (const c of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(v[c])) v[c].forEach((x: unknown, i: number) => nested(x, s, sPath, `${vPath}.${c}[${i}]`));
  return out;
}

// ---------------------------------------------------------------- defaulting and null pruning

/**
 * Structural defaulting, in place: a null where null is not allowed is dropped (or replaced by the
 * default); then every absent field with a `default` gets a copy of it, top-down, so defaults of
 * defaulted objects apply too.
 */
export function applyDefaults(value: unknown, p: Props | undefined): void {
  if (!p || !isObj(value)) {
    if (p && Array.isArray(value) && isObj(p.items)) for (const v of value) applyDefaults(v, p.items);
    return;
  }
  const props = isObj(p.properties) ? p.properties : undefined;
  const add = isObj(p.additionalProperties) ? p.additionalProperties : undefined;
  for (const k of Object.keys(value)) {
    const s = props?.[k] ?? add;
    if (value[k] === null && isObj(s) && s.nullable !== true) {
      if (s.default !== undefined) value[k] = structuredClone(s.default);
      else delete value[k];
    }
  }
  if (props) for (const [k, s] of Object.entries(props)) if (isObj(s) && value[k] === undefined && s.default !== undefined) value[k] = structuredClone(s.default);
  for (const k of Object.keys(value)) {
    const s = props?.[k] ?? add;
    if (isObj(s)) applyDefaults(value[k], s);
  }
}

/** Whether a schema declares any default (such schemas need defaulting on every write). */
export function hasDefaults(p: unknown): boolean {
  if (!isObj(p)) return false;
  if (p.default !== undefined || p.nullable === true) return true;
  return [...Object.values(isObj(p.properties) ? p.properties : {}), p.items, p.additionalProperties].some(hasDefaults);
}

// ---------------------------------------------------------------- value validation

/** Formats the reference validates (others pass, as unknown formats do there). */
const FORMATS: Record<string, RegExp | ((s: string) => boolean)> = {
  int32: () => true, int64: () => true, float: () => true, double: () => true, password: () => true,
  uuid: /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i,
  uuid3: /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i,
  uuid4: /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i,
  uuid5: /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i,
  hostname: /^(?=.{1,253}$)[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$/,
  ipv4: /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/,
  ipv6: (s) => s.includes(':') && /^[0-9a-fA-F:.]+$/.test(s),
  cidr: /^[0-9a-fA-F:.]+\/\d{1,3}$/,
  mac: /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  duration: /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d|w))+$/,
  email: /^[^@\s]+@[^@\s]+$/,
  uri: /^[a-zA-Z][a-zA-Z0-9+.-]*:/,
  'date-time': () => true, byte: () => true, // the kernel's type check reads these two
};

/** JSONSchemaProps → JSON Schema for ajv: types and the two kernel formats are left to the kernel's check. */
function toAjv(p: Props): Props {
  const out: Props = {};
  for (const [k, v] of Object.entries(p)) {
    switch (k) {
      case 'properties': case 'patternProperties': case 'definitions':
        out[k] = Object.fromEntries(Object.entries(v as Props).map(([n, s]) => [n, isObj(s) ? toAjv(s) : s]));
        break;
      case 'items': case 'not':
        out[k] = isObj(v) ? toAjv(v) : v;
        break;
      case 'additionalProperties':
        out[k] = isObj(v) ? toAjv(v) : true; // false means "no other keys": pruning removes them
        break;
      case 'allOf': case 'anyOf': case 'oneOf':
        out[k] = (v as unknown[]).map((s) => (isObj(s) ? toAjv(s) : s));
        break;
      case 'required': case 'enum': case 'maximum': case 'minimum': case 'exclusiveMaximum': case 'exclusiveMinimum':
      case 'maxLength': case 'minLength': case 'pattern': case 'maxItems': case 'minItems': case 'uniqueItems':
      case 'multipleOf': case 'maxProperties': case 'minProperties': case 'format':
        out[k] = v;
        break;
      default: // type, nullable, default, description, x-kubernetes-*: not value rules here
    }
  }
  // OpenAPI v3.0's boolean exclusive bounds.
  if (out.exclusiveMaximum === true) { out.exclusiveMaximum = out.maximum; delete out.maximum; } else if (out.exclusiveMaximum === false) delete out.exclusiveMaximum;
  if (out.exclusiveMinimum === true) { out.exclusiveMinimum = out.minimum; delete out.minimum; } else if (out.exclusiveMinimum === false) delete out.exclusiveMinimum;
  if (out.pattern !== undefined) out.pattern = String(out.pattern);
  if (out.format !== undefined && !FORMATS[out.format]) delete out.format;
  return out;
}

/** ajv's `pattern` through RE2 (the reference matches anywhere in the string, as find does). */
const regExp = Object.assign((pattern: string) => {
  const r = re2(pattern);
  return { test: (s: string) => (r instanceof Error ? true : r.test(s)), toString: () => pattern };
}, { code: 're2' });

let shared: Ajv | undefined;
function ajv(): Ajv {
  if (!shared) {
    shared = new Ajv({ allErrors: true, strict: false, validateSchema: false, unicodeRegExp: true, code: { regExp }, formats: Object.fromEntries(Object.entries(FORMATS).map(([k, f]) => [k, typeof f === 'function' ? { type: 'string', validate: f } : { type: 'string', validate: (s: string) => f.test(s) }])) });
  }
  return shared;
}

const join = (path: string, k: string) => (path ? `${path}.${k}` : k);

/** "/spec/items/0/name" → "spec.items[0].name", reading the data to tell indexes from keys. */
function pathOf(data: unknown, pointer: string): { path: string; value: unknown } {
  let path = '';
  let cur: unknown = data;
  if (!pointer) return { path, value: cur };
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) { path += `[${seg}]`; cur = cur[Number(seg)]; }
    else { path = join(path, seg); cur = isObj(cur) ? cur[seg] : undefined; }
  }
  return { path, value: cur };
}

/** Numbers as Go prints them in these messages (%v of float64 for bounds, integers plain). */
const num = (n: unknown) => String(n);

function toCause(e: ErrorObject, data: unknown): FieldCause | undefined {
  const { path, value } = pathOf(data, e.instancePath);
  const where = path || '<root>';
  const p = e.params as Record<string, any>;
  switch (e.keyword) {
    case 'required': return fieldError.required(join(path, p.missingProperty), '');
    case 'enum': return fieldError.notSupported(path, value, (p.allowedValues as unknown[]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))));
    case 'maxLength': return fieldError.tooLong(path, p.limit);
    case 'maxItems': return { reason: 'FieldValueTooMany', field: path, message: `Too many: ${(value as unknown[]).length}: must have at most ${p.limit} ${p.limit === 1 ? 'item' : 'items'}` };
    case 'maxProperties': return { reason: 'FieldValueTooMany', field: path, message: `Too many: ${Object.keys(value as object).length}: must have at most ${p.limit} ${p.limit === 1 ? 'item' : 'items'}` };
    case 'minLength': return fieldError.invalid(path, value, `${where} in body should be at least ${p.limit} chars long`);
    case 'minItems': return fieldError.invalid(path, value, `${where} in body should have at least ${p.limit} items`);
    case 'minProperties': return fieldError.invalid(path, value, `${where} in body should have at least ${p.limit} properties`);
    case 'maximum': return fieldError.invalid(path, value, `${where} in body should be less than or equal to ${num(p.limit)}`);
    case 'minimum': return fieldError.invalid(path, value, `${where} in body should be greater than or equal to ${num(p.limit)}`);
    case 'exclusiveMaximum': return fieldError.invalid(path, value, `${where} in body should be less than ${num(p.limit)}`);
    case 'exclusiveMinimum': return fieldError.invalid(path, value, `${where} in body should be greater than ${num(p.limit)}`);
    case 'multipleOf': return fieldError.invalid(path, value, `${where} in body should be a multiple of ${num(p.multipleOf)}`);
    case 'pattern': return fieldError.invalid(path, value, `${where} in body should match '${p.pattern}'`);
    case 'uniqueItems': return { reason: 'FieldValueDuplicate', field: `${path}[${p.j}]`, message: `Duplicate value: ${formatValue((value as unknown[])[p.j])}` };
    case 'format': return { reason: 'FieldValueTypeInvalid', field: path, message: `Invalid value: ${goQuote(String(value))}: ${where} in body must be of type ${p.format}: ${goQuote(String(value))}` };
    case 'not': return fieldError.invalid(path, value, `${where} in body must not validate the schema (not)`);
    case 'oneOf': return fieldError.invalid(path, value, `${where} in body must validate one and only one schema (oneOf)`);
    case 'anyOf': return fieldError.invalid(path, value, `${where} in body must validate at least one schema (anyOf)`);
    case 'additionalProperties': return undefined; // pruned, never an error
    default: return fieldError.invalid(path, value, `${where} in body ${e.message ?? 'is invalid'}`);
  }
}

/** A version's value check; `ready()` compiles it ahead of a write, a deep schema in pieces (see kernel/api/ajvdeep.ts). */
export type ValueValidator = ((obj: unknown) => FieldCause[]) & { ready(): Promise<void> | undefined };

/**
 * Compiled validators by the text of their ajv schema: versions of one definition often share a
 * schema, and re-serving a definition (a status write, a new version) keeps the others'. Bounded; an
 * evicted schema leaves ajv's own cache too, with the pieces a deep one was cut into.
 */
const validators = new Map<string, { schema: Props; fn: ValidateFunction; pieces: string[] }>();
const MAX_VALIDATORS = 512;
/** Deep schemas being compiled in pieces, by text: writes that come meanwhile wait for the same compile. */
const compiling = new Map<string, Promise<ValidateFunction>>();

function cached(text: string): ValidateFunction | undefined {
  const hit = validators.get(text);
  if (hit) { validators.delete(text); validators.set(text, hit); } // most recent last
  return hit?.fn;
}

function keep(text: string, schema: Props, fn: ValidateFunction, pieces: string[]): ValidateFunction {
  const had = validators.get(text);
  if (had) { for (const id of pieces) ajv().removeSchema(id); return had.fn; } // compiled meanwhile in one go
  validators.set(text, { schema, fn, pieces });
  if (validators.size > MAX_VALIDATORS) {
    const [k, v] = validators.entries().next().value as [string, { schema: Props; pieces: string[] }];
    validators.delete(k);
    ajv().removeSchema(v.schema);
    for (const id of v.pieces) ajv().removeSchema(id);
  }
  return fn;
}

function validatorFor(schema: Props): ValidateFunction {
  const text = JSON.stringify(schema);
  const pieces: string[] = [];
  return cached(text) ?? keep(text, schema, compileDeep(ajv(), schema, pieces), pieces);
}

/** As validatorFor, a deep schema compiled in pieces with other work run in between; undefined when compiled already. */
function validatorSliced(schema: Props): Promise<ValidateFunction> | undefined {
  const text = JSON.stringify(schema);
  if (cached(text)) return undefined;
  let p = compiling.get(text);
  if (!p) {
    const pieces: string[] = [];
    compiling.set(text, p = compileDeepSliced(ajv(), schema, pieces).then((fn) => keep(text, schema, fn, pieces)).finally(() => compiling.delete(text)));
  }
  return p;
}

/**
 * A version's value rules, compiled on first use: serving a definition must not wait for code
 * generation (a large schema takes ajv a second or more), and most served versions are never written.
 * The object's metadata is checked by the kernel, so it is left out.
 */
export function compileValues(p: Props): ValueValidator {
  let fn: ValidateFunction | undefined;
  let schema: Props | undefined;
  const ajvSchema = () => {
    if (!schema) {
      schema = toAjv(p);
      if (isObj(schema.properties)) delete schema.properties.metadata;
    }
    return schema;
  };
  const check = (obj: unknown) => {
    fn ??= validatorFor(ajvSchema());
    if (fn(obj)) return [];
    const out: FieldCause[] = [];
    // A failed anyOf/oneOf/not reports its branches' errors too; keep only the combinator's.
    for (const e of fn.errors ?? []) {
      if (/\/(anyOf|oneOf|not)\//.test(e.schemaPath)) continue;
      const c = toCause(e, obj);
      if (c) out.push(c);
    }
    return dedupe(out);
  };
  const ready = () => {
    if (fn) return undefined;
    const s = ajvSchema();
    if (!isDeep(s)) return undefined; // compiled with the first write, as it is quick
    return validatorSliced(s)?.then((f) => { fn = f; });
  };
  return Object.assign(check, { ready });
}
