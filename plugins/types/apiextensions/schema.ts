// A custom resource version's openAPIV3Schema (JSONSchemaProps, as written in the definition), turned
// into what the server needs, once per version:
//   toSchema         the kernel's structural Schema: pruning, unknown-field reports, SSA list/map markers
//   structuralErrors the reference's structural-schema rules, as field causes of the definition
//   compileValues    value validation (ajv) with the reference's messages and field paths
//   applyDefaults    `default` values and the pruning of nulls that are not nullable
import { Ajv, type ErrorObject } from 'ajv';
import type { FieldCause, Schema } from '../../../kernel/contracts.js';
import { fieldError, formatValue, goQuote } from '../../../kernel/validation.js';

export type Props = Record<string, any>;

const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
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
 * ("spec.versions[0].schema.openAPIV3Schema"). Value-level keywords inside anyOf/allOf/oneOf/not
 * must not carry types or defaults (the structural rule), which is checked one level deep.
 */
export function structuralErrors(p: unknown, path: string, statusEnabled: boolean): FieldCause[] {
  const out: FieldCause[] = [];
  if (!isObj(p)) return [fieldError.required(path, '')];
  const walk = (s: Props, at: string, where: 'root' | 'field' | 'item' | 'additional', nested: boolean) => {
    const intOrString = s['x-kubernetes-int-or-string'] === true;
    const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
    const embedded = s['x-kubernetes-embedded-resource'] === true;
    if (s.type !== undefined && !TYPES.includes(s.type)) out.push(fieldError.notSupported(`${at}.type`, s.type, TYPES));
    if (embedded && s.type !== 'object') out.push(s.type === undefined ? fieldError.required(`${at}.type`, 'must be object if x-kubernetes-embedded-resource is true') : fieldError.invalid(`${at}.type`, s.type, 'must be object if x-kubernetes-embedded-resource is true'));
    else if (!s.type && !intOrString && !(preserve && where !== 'root')) {
      if (where === 'root') out.push(fieldError.required(`${at}.type`, 'must not be empty at the root'));
      else if (where === 'item') out.push(fieldError.required(`${at}.type`, 'must not be empty for specified array items'));
      else if (where === 'field') out.push(fieldError.required(`${at}.type`, 'must not be empty for specified object fields'));
    }
    if (where === 'root' && s.type && s.type !== 'object') out.push(fieldError.invalid(`${at}.type`, s.type, 'must be object at the root'));
    if (where === 'root' && s.additionalProperties !== undefined && s.additionalProperties !== false) out.push(fieldError.forbidden(`${at}.additionalProperties`, 'must not be used at the root'));
    if (embedded && s.additionalProperties !== undefined) out.push(fieldError.forbidden(`${at}.additionalProperties`, 'must not be used if x-kubernetes-embedded-resource is set'));
    if (embedded && !preserve && !(isObj(s.properties) && Object.keys(s.properties).length)) out.push(fieldError.required(`${at}.properties`, 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
    if (intOrString && preserve) out.push(fieldError.invalid(`${at}.x-kubernetes-preserve-unknown-fields`, true, 'must be false if x-kubernetes-int-or-string is true'));
    if (intOrString && embedded) out.push(fieldError.invalid(`${at}.x-kubernetes-embedded-resource`, true, 'must be false if x-kubernetes-int-or-string is true'));
    if (s.type === 'array' && !isObj(s.items)) out.push(fieldError.required(`${at}.items`, 'must be specified'));
    if (isObj(s.properties) && isObj(s.additionalProperties)) out.push(fieldError.forbidden(`${at}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
    if (typeof s.pattern === 'string') {
      try { new RegExp(s.pattern, 'u'); } catch (e) { out.push(fieldError.invalid(`${at}.pattern`, s.pattern, `must be a valid regular expression, but isn't: ${(e as Error).message}`)); }
    }
    const lt = s['x-kubernetes-list-type'];
    if (lt !== undefined) {
      if (!['atomic', 'set', 'map'].includes(lt)) out.push(fieldError.notSupported(`${at}.x-kubernetes-list-type`, lt, ['atomic', 'set', 'map']));
      else if (s.type !== 'array') out.push(fieldError.invalid(`${at}.x-kubernetes-list-type`, lt, 'must only be used on array types'));
      else if (lt === 'map') {
        const keys = s['x-kubernetes-list-map-keys'];
        if (!Array.isArray(keys) || !keys.length) out.push(fieldError.required(`${at}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
        else if (!isObj(s.items) || s.items.type !== 'object') out.push(fieldError.invalid(`${at}.x-kubernetes-list-type`, lt, 'must only be map if the array items are of type object'));
        else for (const k of keys) if (!isObj(s.items.properties?.[k])) out.push(fieldError.invalid(`${at}.x-kubernetes-list-map-keys`, keys, `entries must all be names of item properties`));
      } else if (lt === 'set' && isObj(s.items) && s.items.type === 'object' && s.items['x-kubernetes-map-type'] !== 'atomic') {
        out.push(fieldError.invalid(`${at}.items.x-kubernetes-map-type`, s.items['x-kubernetes-map-type'] ?? null, 'must be atomic as item of a list with x-kubernetes-list-type=set'));
      }
    }
    if (s['x-kubernetes-list-map-keys'] !== undefined && lt !== 'map') out.push(fieldError.invalid(`${at}.x-kubernetes-list-type`, lt ?? '', 'must be map if x-kubernetes-list-map-keys is non-empty'));
    if (isObj(s.properties)) {
      for (const [k, v] of Object.entries(s.properties)) {
        if (k === 'metadata' && nested && !embedded) out.push(fieldError.forbidden(key(at, k), 'must not be specified in a nested context'));
        if (!isObj(v)) continue;
        if (k === 'metadata' && (where === 'root' || embedded)) {
          const allowed = new Set(['type', 'properties', 'description']);
          const bad = Object.keys(v).some((x) => !allowed.has(x)) || (isObj(v.properties) && Object.keys(v.properties).some((x) => x !== 'name' && x !== 'generateName'));
          if (bad) out.push(fieldError.forbidden(key(at, k), 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
        }
        walk(v, key(at, k), 'field', where !== 'root' || nested || embedded ? true : k !== 'metadata');
      }
    }
    if (where === 'root' && statusEnabled) {
      // With a status sub-resource the root may only carry what the reference allows there.
      const allowedRoot = new Set(['description', 'type', 'required', 'properties', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-validations', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string', 'x-kubernetes-list-type', 'x-kubernetes-map-type', 'x-kubernetes-list-map-keys']);
      for (const k of Object.keys(s)) if (!allowedRoot.has(k) && k !== 'nullable') out.push(fieldError.invalid(at, '', 'only description, type, properties, required, x-kubernetes-preserve-unknown-fields and x-kubernetes-validations allowed at the root of the schema if the status subresource is enabled'));
    }
    if (isObj(s.items)) walk(s.items, `${at}.items`, 'item', true);
    if (isObj(s.additionalProperties)) walk(s.additionalProperties, `${at}.additionalProperties`, 'additional', true);
    for (const comb of ['allOf', 'anyOf', 'oneOf']) {
      if (!Array.isArray(s[comb])) continue;
      s[comb].forEach((x: unknown, i: number) => {
        if (!isObj(x)) return;
        for (const f of ['type', 'default', 'additionalProperties', 'nullable', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string']) {
          if (x[f] !== undefined && x[f] !== false) out.push(fieldError.forbidden(`${at}.${comb}[${i}].${f}`, `must be ${f === 'type' || f === 'description' ? 'empty' : f === 'nullable' || f.startsWith('x-') ? 'false' : 'undefined'} to be structural`));
        }
      });
    }
  };
  walk(p, path, 'root', false);
  return dedupe(out);
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

let shared: Ajv | undefined;
function ajv(): Ajv {
  if (!shared) {
    shared = new Ajv({ allErrors: true, strict: false, validateSchema: false, unicodeRegExp: true, formats: Object.fromEntries(Object.entries(FORMATS).map(([k, f]) => [k, typeof f === 'function' ? { type: 'string', validate: f } : { type: 'string', validate: (s: string) => f.test(s) }])) });
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

export type ValueValidator = (obj: unknown) => FieldCause[];

/** Compiles a version's value rules once. The object's metadata is checked by the kernel, so it is left out. */
export function compileValues(p: Props): ValueValidator {
  const schema = toAjv(p);
  if (isObj(schema.properties)) delete schema.properties.metadata;
  const fn = ajv().compile(schema);
  return (obj) => {
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
}
