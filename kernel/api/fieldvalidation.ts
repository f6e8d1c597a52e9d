// Generic field validation against a type's structural Schema (kernel/contracts/types.ts):
//   checkFields          unknown fields, as the reference's strict decoder names them ("spec.containers[0].foo")
//   findDuplicateFields  duplicate keys of a JSON body, found by a small linear scanner ("metadata.name")
//   compileValidator     a structural type check (ajv, compiled once per type) returning field causes
// No type-specific code: everything follows the Schema and its definitions.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import YAML from 'yaml';
import type { FieldCause, KObject, Schema, TypeDef } from '../contracts/index.js';
import { goQuote } from './validation.js';
import { duplicateKeys } from '../../workers/decode.js';

type Defs = Readonly<Record<string, Schema>> | undefined;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Follows refs to the schema they name; undefined for a dangling ref (read as "anything"). */
function resolve(s: Schema | undefined, defs: Defs): Schema | undefined {
  for (let hops = 0; s && s.type === 'ref'; hops++) {
    if (hops > 64) return undefined;
    s = defs?.[s.ref];
  }
  return s;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

// ---------------------------------------------------------------- unknown fields

export interface FieldCheck {
  /** Paths of fields the schema does not know, in document order: "spec.foo", "spec.containers[0].bar". */
  unknown: string[];
}

/**
 * Lists the fields of `obj` that its schema does not declare. Objects with `additional` are maps (any
 * key, each value checked), objects marked preserveUnknown or without fields accept any key, and `any`,
 * int-or-string and scalars end the walk. Values of the wrong JSON type are left to the type check.
 */
export function checkFields(obj: unknown, schema: Schema | undefined, definitions?: Defs): FieldCheck {
  const unknown: string[] = [];
  // Explicit stack (documents can nest deeper than the call stack is comfortable with). A frame with
  // no schema slot is an unknown field, reported when popped so that the list keeps document order.
  type Frame = [value: unknown, schema: Schema | undefined, path: string] | [path: string];
  const stack: Frame[] = [[obj, schema, '']];
  while (stack.length) {
    const frame = stack.pop()!;
    if (frame.length === 1) {
      unknown.push(frame[0]);
      continue;
    }
    const [value, raw, path] = frame;
    const s = resolve(raw, definitions);
    if (!s || value === null || value === undefined) continue;
    const next: Frame[] = [];
    if (s.type === 'object' && isObject(value)) {
      const fields = s.fields;
      for (const [k, v] of Object.entries(value)) {
        const f = fields && Object.prototype.hasOwnProperty.call(fields, k) ? fields[k] : undefined;
        if (f) next.push([v, f, join(path, k)]);
        else if (s.additional) next.push([v, s.additional, join(path, k)]);
        else if (fields && !s.preserveUnknown) next.push([join(path, k)]);
      }
    } else if (s.type === 'array' && Array.isArray(value)) {
      value.forEach((v, i) => next.push([v, s.items, `${path}[${i}]`]));
    }
    // Reverse so that the pops visit children in document order.
    for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]);
  }
  return { unknown };
}

/**
 * Removes, in place, the fields the schema does not declare — what the reference's typed decoding
 * does to every write, whatever the fieldValidation mode reported.
 */
export function pruneUnknown(obj: unknown, schema: Schema | undefined, definitions?: Defs): void {
  const stack: [unknown, Schema | undefined][] = [[obj, schema]];
  while (stack.length) {
    const [value, raw] = stack.pop()!;
    const s = resolve(raw, definitions);
    if (!s || value === null || value === undefined) continue;
    if (s.type === 'object' && isObject(value)) {
      const fields = s.fields;
      for (const k of Object.keys(value)) {
        const f = fields && Object.prototype.hasOwnProperty.call(fields, k) ? fields[k] : undefined;
        if (f) stack.push([value[k], f]);
        else if (s.additional) stack.push([value[k], s.additional]);
        else if (fields && !s.preserveUnknown) delete value[k];
      }
    } else if (s.type === 'array' && Array.isArray(value)) {
      for (const v of value) stack.push([v, s.items]);
    }
  }
}

/**
 * Removes, in place, the fields whose value is JSON null: for a typed decoder null is the field's zero
 * value, that is, unset (`"expirationSeconds": null`). Maps and free-form values keep their nulls;
 * without a schema every object's null fields go.
 */
export function dropNullFields(obj: unknown, schema: Schema | undefined, definitions?: Defs): void {
  const stack: [unknown, Schema | undefined][] = [[obj, schema]];
  while (stack.length) {
    const [value, raw] = stack.pop()!;
    const s = raw ? resolve(raw, definitions) : undefined;
    if (raw && !s) continue;
    if (isObject(value)) {
      if (s && (s.type !== 'object' || !s.fields)) {
        if (s.type === 'object' && s.additional) for (const v of Object.values(value)) stack.push([v, s.additional]);
        continue;
      }
      for (const [k, v] of Object.entries(value)) {
        const f = s?.type === 'object' ? s.fields?.[k] ?? { type: 'any' } : undefined;
        // A field whose schema says nullable keeps its null (custom resources' `nullable: true`).
        if (v === null) { if (!(f && 'nullable' in f && f.nullable)) delete value[k]; }
        else stack.push([v, f]);
      }
    } else if (Array.isArray(value)) {
      const items = s?.type === 'array' ? s.items : undefined;
      if (!s || items) for (const v of value) stack.push([v, items]);
    }
  }
}

/** The number as the client wrote it ("1E+308", "1e400"): the first literal in the body with that value. */
function numberLiteral(raw: string | undefined, value: number): string | undefined {
  if (!raw) return undefined;
  for (const m of raw.matchAll(/-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g)) if (Object.is(Number(m[0]), value)) return m[0];
  return undefined;
}

const INT_RANGE: Record<string, [number, number]> = { int32: [-2147483648, 2147483647], int64: [-9223372036854775808, 9223372036854775807] };

/** Definitions whose Go types decode JSON themselves (times, quantities, raw JSON): not checked here. */
const CUSTOM_DECODE = new Set(['Time', 'MicroTime', 'Duration', 'Quantity', 'IntOrString', 'RawExtension', 'FieldsV1', 'JSON', 'JSONSchemaPropsOrArray', 'JSONSchemaPropsOrBool', 'JSONSchemaPropsOrStringArray']);

/** How Go's decoder names a JSON value in a type error. */
const jsonKind = (v: unknown) => (typeof v === 'string' ? 'string' : typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'bool' : Array.isArray(v) ? 'array' : 'object');

/**
 * The first value (in document order, as Go's decoder meets them) that the typed decoding of the
 * reference could not put into its field, worded as Go's decoder words it: `json: cannot unmarshal
 * number into Go struct field ObjectMeta.metadata.name of type string`, or for an integer out of
 * its type's range `... number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type
 * int32` (the struct is the innermost definition; the path has no list indexes or map keys, as Go's
 * field stack has none). Undefined when the object decodes.
 */
export function decodeTypeError(obj: unknown, schema: Schema | undefined, definitions?: Defs, body?: string): string | undefined {
  /** The Go type a schema decodes into ("string", "int32", "[]v1.Container", "map[string]string"); undefined: not checked. */
  const goType = (s: Schema | undefined, hops = 0): string | undefined => {
    if (!s || hops > 64) return undefined;
    switch (s.type) {
      case 'ref': {
        const name = s.ref.slice(s.ref.lastIndexOf('.') + 1);
        if (CUSTOM_DECODE.has(name)) return undefined;
        const d = definitions?.[s.ref];
        if (d && d.type !== 'object') return goType(d, hops + 1);
        const dots = s.ref.split('.');
        return `${dots[dots.length - 2]}.${name}`;
      }
      case 'string': return 'string';
      case 'integer': return s.format === 'int32' ? 'int32' : 'int64';
      case 'number': return 'float64';
      case 'boolean': return 'bool';
      case 'array': { const e = goType(s.items, hops + 1); return e && `[]${e}`; }
      case 'object': { if (s.fields || !s.additional) return undefined; const e = goType(s.additional, hops + 1); return e && `map[string]${e}`; }
      default: return undefined;
    }
  };
  const where = (struct: string, path: string) => (struct ? `Go struct field ${struct}.${path}` : 'Go value');
  const walk = (value: unknown, declared: Schema | undefined, path: string, outer: string): string | undefined => {
    if (value === null || value === undefined || !declared) return undefined;
    let struct = outer;
    let s: Schema | undefined = declared;
    for (let hops = 0; s && s.type === 'ref' && hops < 64; hops++) {
      const name = s.ref.slice(s.ref.lastIndexOf('.') + 1);
      if (CUSTOM_DECODE.has(name)) return undefined;
      s = definitions?.[s.ref];
      if (s?.type === 'object') struct = name;
    }
    if (!s) return undefined;
    const want = goType(declared);
    const mismatch = () => (want ? `json: cannot unmarshal ${jsonKind(value)} into ${where(outer, path)} of type ${want}` : undefined);
    switch (s.type) {
      case 'string': return typeof value === 'string' ? undefined : mismatch();
      case 'boolean': return typeof value === 'boolean' ? undefined : mismatch();
      case 'number': return typeof value === 'number' ? undefined : mismatch();
      case 'integer': {
        if (typeof value !== 'number') return mismatch();
        const range = INT_RANGE[s.format ?? 'int64'] ?? INT_RANGE.int64;
        if (Number.isInteger(value) && value >= range[0] && value <= range[1]) return undefined;
        const shown = numberLiteral(body, value) ?? (Number.isInteger(value) && Math.abs(value) < 1e21 ? BigInt(value).toString() : String(value));
        return `json: cannot unmarshal number ${shown} into ${where(outer, path)} of type ${s.format ?? 'int64'}`;
      }
      case 'array':
        if (!Array.isArray(value)) return mismatch();
        for (const v of value) { const e = walk(v, s.items, path, struct); if (e) return e; }
        return undefined;
      case 'object':
        if (!isObject(value)) return mismatch();
        for (const [k, v] of Object.entries(value)) {
          const f = s.fields?.[k];
          // a map's values are reported at the map's own path (Go's field stack has no keys)
          const e = f ? walk(v, f, join(path, k), struct) : s.additional ? walk(v, s.additional, path, struct) : undefined;
          if (e) return e;
        }
        return undefined;
      default:
        return undefined;
    }
  };
  return walk(obj, schema, '', '');
}

/** Unknown fields of an object of a served type; none when the type is unstructured. */
export function unknownFields(type: TypeDef, obj: unknown): string[] {
  return type.schema ? checkFields(obj, type.schema, type.definitions).unknown : [];
}

// ---------------------------------------------------------------- duplicate keys

/** Duplicate mapping keys of a YAML text, as paths ("data.a"); the YAML counterpart of findDuplicateFields. */
export function findDuplicateYamlKeys(text: string, limit = 100): string[] {
  try { return duplicateKeys(YAML.parseDocument(text, { uniqueKeys: false }).contents, limit); } catch { return []; }
}

/**
 * Duplicate object keys of a JSON text, as paths in document order ("metadata.name",
 * "spec.containers[0].image"). One linear pass, no parse tree; stops quietly at malformed input
 * (the body's parser reports syntax errors). At most `limit` paths (the reference keeps 100 strict errors).
 */
export function findDuplicateFields(text: string, limit = 100, positions?: Map<string, number>): string[] {
  const out: string[] = [];
  const reported = new Set<string>();
  type Frame = { obj: true; path: string; keys: Set<string> } | { obj: false; path: string; index: number };
  const stack: Frame[] = [];
  const n = text.length;
  let i = 0;

  const skipWs = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
  };
  /** Reads a string at text[i] === '"'; undefined when unterminated. */
  const readString = (): string | undefined => {
    const start = i++;
    let escaped = false;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x5c) { escaped = true; i += 2; continue; }
      i++;
      if (c === 0x22) {
        const raw = text.slice(start, i);
        if (!escaped) return raw.slice(1, -1);
        try { return JSON.parse(raw) as string; } catch { return undefined; }
      }
    }
    return undefined;
  };
  const skipScalar = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x2c || c === 0x5d || c === 0x7d || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) break;
      i++;
    }
  };

  // Each turn: read one value at `path`, then climb out of finished containers.
  let path = '';
  for (;;) {
    skipWs();
    if (i >= n) return out;
    const c = text[i];
    let opened = false;
    if (c === '{' || c === '[') {
      i++;
      skipWs();
      const empty = text[i] === (c === '{' ? '}' : ']');
      if (empty) i++;
      else {
        stack.push(c === '{' ? { obj: true, path, keys: new Set() } : { obj: false, path, index: 0 });
        opened = true;
      }
    } else if (c === '"') {
      if (readString() === undefined) return out;
    } else {
      const before = i;
      skipScalar();
      if (i === before) return out;
    }
    // After a value: the next key or element, or the end of containers.
    let needKey = opened && stack[stack.length - 1].obj;
    if (opened && !needKey) {
      const top = stack[stack.length - 1] as { path: string; index: number };
      path = `${top.path}[0]`;
      continue;
    }
    while (!needKey) {
      const top = stack[stack.length - 1];
      if (!top) return out;
      skipWs();
      const d = text[i++];
      if (d === ',') {
        if (top.obj) needKey = true;
        else {
          top.index++;
          path = `${top.path}[${top.index}]`;
          break;
        }
      } else if (d === (top.obj ? '}' : ']')) stack.pop();
      else return out;
    }
    if (!needKey) continue;
    // Read "key": within the innermost object.
    const top = stack[stack.length - 1] as { path: string; keys: Set<string> };
    skipWs();
    if (text[i] !== '"') return out;
    const key = readString();
    if (key === undefined) return out;
    skipWs();
    if (text[i++] !== ':') return out;
    path = join(top.path, key);
    if (positions && !positions.has(path)) positions.set(path, i);
    if (top.keys.has(key)) {
      if (!reported.has(path) && out.length < limit) {
        reported.add(path);
        out.push(path);
      }
    } else top.keys.add(key);
  }
}

// ---------------------------------------------------------------- messages as the reference words them

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

/** The duplicate keys of a YAML text with the line each repeated key is on (1-based), in document order. */
export function duplicateYamlKeyLines(text: string, limit = 100): { key: string; line: number }[] {
  const out: { key: string; line: number }[] = [];
  let doc;
  try { doc = YAML.parseDocument(text, { uniqueKeys: false }); } catch { return out; }
  const lineOf = (offset: number) => { let n = 1; for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) n++; return n; };
  const visit = (node: unknown) => {
    if (out.length >= limit) return;
    if (YAML.isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const k = pair.key as { value?: unknown; range?: [number, number, number] } | null;
        const key = String(YAML.isScalar(k) ? k.value : k);
        if (seen.has(key) && out.length < limit) out.push({ key, line: lineOf(k?.range?.[0] ?? 0) });
        seen.add(key);
        visit(pair.value);
      }
    } else if (YAML.isSeq(node)) for (const item of node.items) visit(item);
  };
  visit(doc.contents);
  return out;
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
  let v: TypeValidator = NONE;
  if (type.schema) {
    const key = type.definitions ?? NO_DEFS;
    let ajv = ajvByDefs.get(key);
    if (!ajv) ajvByDefs.set(key, (ajv = newAjv(type.definitions)));
    const fn: ValidateFunction = ajv.compile(toJsonSchema(type.schema));
    v = (obj) => {
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
  validators.set(type, v);
  return v;
}
