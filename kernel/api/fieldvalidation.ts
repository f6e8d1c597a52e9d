// Generic field validation against a type's structural Schema (kernel/contracts/types.ts):
//   compileValidator     a structural type check (ajv, compiled once per type) returning field causes
//   strictErrors         the strict decoder's messages for unknown and duplicate fields
// The walks over a body (unknown fields, duplicate keys, type errors, pruning) are pure and run on
// the worker pool too, so they live in workers/body/fieldcheck.ts.
// No type-specific code: everything follows the Schema and its definitions.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FieldCause, KObject, Schema, TypeDef } from '../contracts/index.js';
import { goQuote } from './validation.js';
import { checkFields, isObject, join, type Defs } from '../../workers/body/fieldcheck.js';
import { compileDeep, compileDeepSliced, isDeep } from './ajvdeep.js';
// The registry takes the body walks from here with the rest of field validation.
export { checkFields, decodeTypeError, dropNullFields, duplicateYamlKeyLines, findDuplicateFields, findDuplicateYamlKeys, pruneUnknown } from '../../workers/body/fieldcheck.js';

/** Unknown fields of an object of a served type; none when the type is unstructured. */
export function unknownFields(type: TypeDef, obj: unknown): string[] {
  return type.schema ? checkFields(obj, type.schema, type.definitions).unknown : [];
}

/**
 * Strict decoding errors in the reference's words and order: `unknown field "spec.foo"`,
 * `duplicate field "metadata.name"`. The order follows the reference's decoders: a typed JSON body
 * reports both in document order (`position` of each path's first key); an unstructured one (custom
 * resources) its duplicates, then the unknown fields its pruning found, sorted; a YAML body first
 * its duplicate keys as the YAML decoder words them (`yaml: unmarshal errors:\n  line 9: key "a"
 * already set in map`), then the unknown fields, sorted.
 */
export function strictErrors(unknown: string[], duplicates: string[] = [], order: { yaml?: { key: string; line: number }[]; unstructured?: boolean; position?: Map<string, number> } = {}): string[] {
  const unknownMsg = (p: string) => `unknown field ${goQuote(p)}`;
  const dupMsg = (p: string) => `duplicate field ${goQuote(p)}`;
  let out: string[];
  if (order.yaml) {
    const lines = order.yaml.map((d) => `  line ${d.line}: key ${goQuote(d.key)} already set in map`);
    out = [...(lines.length ? [`yaml: unmarshal errors:\n${lines.join('\n')}`] : []), ...[...unknown].sort().map(unknownMsg)];
  } else if (order.unstructured) {
    out = [...duplicates.map(dupMsg), ...[...unknown].sort().map(unknownMsg)];
  } else if (order.position) {
    const pos = order.position;
    const all = [...unknown.map((p) => [p, unknownMsg(p)] as const), ...duplicates.map((p) => [p, dupMsg(p)] as const)];
    out = all.map(([p, m], i) => ({ m, at: pos.get(p) ?? Number.MAX_SAFE_INTEGER, i })).sort((a, b) => a.at - b.at || a.i - b.i).map((x) => x.m);
  } else {
    out = [...unknown.map(unknownMsg), ...duplicates.map(dupMsg)];
  }
  return out.slice(0, 100);
}

/** The 400 message of a strict request: `Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.foo"`. */
export function strictDecodingMessage(kind: string, version: string, errors: string[]): string {
  return `${kind} in version ${goQuote(version)} cannot be handled as a ${kind}: strict decoding error: ${errors.join(', ')}`;
}

// ---------------------------------------------------------------- structural type check

export type TypeValidator = (obj: KObject) => FieldCause[];

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** JSON type name of a value, as the reference's schema validator prints it. */
function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Where ajv keeps the shared definitions of one map. */
const DEFS_ID = 'defs';
const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Our Schema as JSON Schema for ajv. null passes everywhere (the reference decodes it as the zero
 * value); unknown fields are not an error here (checkFields reports them) and nothing is required.
 */
function toJsonSchema(s: Schema): Record<string, unknown> {
  switch (s.type) {
    case 'ref':
      // raw JSON (runtime.RawExtension) holds any value, not only objects
      if (s.ref.endsWith('.RawExtension')) return {};
      return { $ref: `${DEFS_ID}#/definitions/${escapePointer(s.ref)}` };
    case 'object': {
      const out: Record<string, unknown> = { type: ['object', 'null'] };
      if (s.fields) out.properties = Object.fromEntries(Object.entries(s.fields).map(([k, v]) => [k, toJsonSchema(v)]));
      if (s.additional) out.additionalProperties = toJsonSchema(s.additional);
      return out;
    }
    case 'array':
      return { type: ['array', 'null'], items: toJsonSchema(s.items) };
    case 'int-or-string':
      return { type: ['integer', 'string', 'null'] };
    case 'any':
      return {};
    case 'string':
      if (s.format === 'quantity') return { type: ['string', 'number', 'null'] };
      if (s.format === 'date-time' || s.format === 'byte') return { type: ['string', 'null'], format: s.format };
      return { type: ['string', 'null'] };
    default:
      return { type: [s.type, 'null'] };
  }
}

function newAjv(defs: Defs): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false, formats: {
    'date-time': { type: 'string', validate: (x: string) => RFC3339.test(x) },
    byte: { type: 'string', validate: (x: string) => BASE64.test(x.replace(/[\r\n]/g, '')) },
  } });
  const definitions: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(defs ?? {})) definitions[k] = toJsonSchema(v);
  ajv.addSchema({ $id: DEFS_ID, definitions });
  return ajv;
}

/** "/spec/containers/0/image" → "spec.containers[0].image", reading the data to tell indexes from keys. */
function fieldPath(data: unknown, pointer: string): string {
  if (!pointer) return '';
  let path = '';
  let cur: unknown = data;
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) {
      path += `[${seg}]`;
      cur = cur[Number(seg)];
    } else {
      path = join(path, seg);
      cur = isObject(cur) ? cur[seg] : undefined;
    }
  }
  return path;
}

function valueAt(data: unknown, pointer: string): unknown {
  let cur: unknown = data;
  if (!pointer) return cur;
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    cur = Array.isArray(cur) ? cur[Number(seg)] : isObject(cur) ? cur[seg] : undefined;
  }
  return cur;
}

function toCause(e: ErrorObject, data: unknown): FieldCause | undefined {
  const field = fieldPath(data, e.instancePath);
  const value = valueAt(data, e.instancePath);
  const where = field || '<root>';
  if (e.keyword === 'type') {
    const expected = ([] as string[]).concat(e.params.type as string | string[]).filter((t) => t !== 'null');
    const actual = jsonType(value);
    return {
      reason: 'FieldValueTypeInvalid', field,
      message: `Invalid value: ${goQuote(actual)}: ${where} in body must be of type ${expected.join(',')}: ${goQuote(actual)}`,
    };
  }
  if (e.keyword === 'format') {
    const shown = typeof value === 'string' ? value : JSON.stringify(value);
    return {
      reason: 'FieldValueTypeInvalid', field,
      message: `Invalid value: ${goQuote(shown)}: ${where} in body must be of type ${e.params.format as string}: ${goQuote(shown)}`,
    };
  }
  return { reason: 'FieldValueInvalid', field, message: `Invalid value: ${goQuote(jsonType(value))}: ${where} in body ${e.message ?? 'is invalid'}` };
}

const ajvByDefs = new WeakMap<object, Ajv>();
const NO_DEFS = {};
const validators = new WeakMap<TypeDef, TypeValidator>();
const NONE: TypeValidator = () => [];

/**
 * The structural type check of a type, compiled once and cached on the TypeDef. Types sharing one
 * definitions map share one ajv instance, so each definition compiles once. Unstructured types pass.
 */
export function compileValidator(type: TypeDef): TypeValidator {
  const cached = validators.get(type);
  if (cached) return cached;
  // A type that names a shared, frozen definition (the built-in types) shares its compiled check
  // with every TypeDef naming it: a second server in the process compiles nothing again.
  const byRef = type.schema?.type === 'ref' && type.definitions && Object.isFrozen(type.definitions) ? refValidators(type.definitions) : undefined;
  const shared = byRef?.get((type.schema as { ref: string }).ref);
  if (shared) {
    validators.set(type, shared);
    return shared;
  }
  const v = type.schema ? checker(compileDeep(ajvFor(type), toJsonSchema(type.schema))) : NONE;
  validators.set(type, v);
  byRef?.set((type.schema as { ref: string }).ref, v);
  return v;
}

/**
 * The type's check as compileValidator gives it, or, while a deep schema (a custom resource's, see
 * ajvdeep.ts) is not compiled yet, a promise of it, compiled in pieces with other requests run in between.
 */
export function typeValidator(type: TypeDef): TypeValidator | Promise<TypeValidator> {
  const cached = validators.get(type);
  if (cached || !type.schema || type.schema.type === 'ref') return cached ?? compileValidator(type);
  const schema = toJsonSchema(type.schema);
  if (!isDeep(schema)) return compileValidator(type);
  let p = compiling.get(type);
  if (!p) {
    compiling.set(type, p = compileDeepSliced(ajvFor(type), schema).then((fn) => {
      const v = validators.get(type) ?? checker(fn);
      validators.set(type, v);
      return v;
    }).finally(() => compiling.delete(type)));
  }
  return p;
}
const compiling = new WeakMap<TypeDef, Promise<TypeValidator>>();

function ajvFor(type: TypeDef): Ajv {
  const key = type.definitions ?? NO_DEFS;
  let ajv = ajvByDefs.get(key);
  if (!ajv) ajvByDefs.set(key, (ajv = newAjv(type.definitions)));
  return ajv;
}

/** A compiled check as field causes, each once. */
function checker(fn: ValidateFunction): TypeValidator {
  return (obj) => {
    if (fn(obj)) return [];
    const causes: FieldCause[] = [];
    const seen = new Set<string>();
    for (const e of fn.errors ?? []) {
      const c = toCause(e, obj);
      if (!c) continue;
      const k = `${c.field}\0${c.message}`;
      if (seen.has(k)) continue;
      seen.add(k);
      causes.push(c);
    }
    return causes;
  };
}

const sharedByDefs = new WeakMap<object, Map<string, TypeValidator>>();
function refValidators(defs: object): Map<string, TypeValidator> {
  let m = sharedByDefs.get(defs);
  if (!m) sharedByDefs.set(defs, (m = new Map()));
  return m;
}
