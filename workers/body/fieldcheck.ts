// The walks of field validation over a decoded body, against a type's structural Schema: unknown
// fields as the reference's strict decoder names them ("spec.containers[0].foo"), pruning, null
// fields, the typed decoder's type errors, and duplicate keys of JSON and YAML texts. Pure
// functions with no kernel state: the event loop runs them on small bodies, the worker pool on
// large ones (checkbody.ts). kernel/api/fieldvalidation.ts builds the messages from their findings.
import { base64ErrorOffset, rfc3339Error, RFC3339_MICRO } from './godecode.js';
import YAML from 'yaml';
import type { Schema } from '../../kernel/contracts/index.js';
import { duplicateKeys } from './decode.js';
import { formatQuantity, parseQuantity, QUANTITY_FORMAT_ERROR } from './quantity.js';

export type Defs = Readonly<Record<string, Schema>> | undefined;

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Follows refs to the schema they name; undefined for a dangling ref (read as "anything"). */
function resolve(s: Schema | undefined, defs: Defs): Schema | undefined {
  for (let hops = 0; s && s.type === 'ref'; hops++) {
    if (hops > 64) return undefined;
    s = defs?.[s.ref];
  }
  return s;
}

export const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

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
 * field stack has none). A malformed resource.Quantity ends the decoding with its own message
 * (`quantities must match the regular expression ...`), and every quantity that parses is rewritten,
 * in place, to the canonical text the reference stores ("1000m" → "1"). Undefined when the object decodes.
 */
export function decodeTypeError(obj: unknown, schema: Schema | undefined, definitions?: Defs, body?: string, typed = false): string | undefined {
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
      case 'object': {
        if (s.fields) return inlinedName(s);
        if (!s.additional) return undefined;
        // the core group's map of quantities is its own named type
        if (isQuantity(s.additional, definitions)) return 'v1.ResourceList';
        const e = goType(s.additional, hops + 1); return e && `map[string]${e}`; }
      default: return undefined;
    }
  };
  /** A definition copied into a field (to carry the field's merge markers) is named as the definition it copies. */
  const inlinedName = (s: Extract<Schema, { type: 'object' }>): string | undefined => {
    const fields = JSON.stringify(s.fields);
    const name = Object.keys(definitions ?? {}).find((k) => { const d = definitions![k]; return d?.type === 'object' && JSON.stringify(d.fields) === fields; });
    if (!name) return undefined;
    const dots = name.split('.');
    return `${dots[dots.length - 2]}.${dots[dots.length - 1]}`;
  };
  const where = (struct: string, path: string) => (struct ? `Go struct field ${struct}.${path}` : 'Go value');
  // Go's decoder saves the first type mismatch and goes on; an error of a type's own decoder (a
  // malformed quantity, an IntOrString that is no int32) ends the decoding at once and is the one reported.
  let first: string | undefined;
  const walk = (value: unknown, declared: Schema | undefined, path: string, outer: string): void => {
    if (value === null || value === undefined || !declared) return;
    let struct = outer;
    let s: Schema | undefined = declared;
    for (let hops = 0; s && s.type === 'ref' && hops < 64; hops++) {
      const name = s.ref.slice(s.ref.lastIndexOf('.') + 1);
      if (name === 'IntOrString') { s = { type: 'int-or-string' }; break; }
      // a typed time is a string, then an RFC 3339 time: either failure ends the decoding
      if (typed && (name === 'Time' || name === 'MicroTime')) {
        if (typeof value !== 'string') throw new AbortDecode(`json: cannot unmarshal ${jsonKind(value)} into ${where(outer, path)} of type string`);
        const err = rfc3339Error(value, name === 'MicroTime' ? RFC3339_MICRO : undefined);
        if (err) throw new AbortDecode(err);
        return;
      }
      if (CUSTOM_DECODE.has(name)) return;
      s = definitions?.[s.ref];
      if (s?.type === 'object') struct = name;
    }
    if (!s) return;
    // IntOrString decodes a string, or else its int32: anything else ends the decoding (its own decoder's error).
    // (a custom resource's int-or-string is its schema's to check: 422, not a decode error)
    if (s.type === 'int-or-string' && typed) {
      if (typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value) && value >= INT_RANGE.int32[0] && value <= INT_RANGE.int32[1])) return;
      const shown = typeof value === 'number' ? ` ${numberLiteral(body, value) ?? String(value)}` : '';
      throw new AbortDecode(`json: cannot unmarshal ${jsonKind(value)}${shown} into ${where(outer, path)} of type int32`);
    }
    // The Go type is named only in an error: not worked out for every value that decodes.
    const mismatch = () => { const want = goType(declared); if (want && !first) first = `json: cannot unmarshal ${jsonKind(value)} into ${where(outer, path)} of type ${want}`; };
    switch (s.type) {
      case 'string': {
        if (typeof value !== 'string') return mismatch();
        // a typed []byte is standard base64
        const bad = typed && s.format === 'byte' ? base64ErrorOffset(value) : undefined;
        if (bad !== undefined) first ??= `illegal base64 data at input byte ${bad}`;
        return;
      }
      case 'boolean': if (typeof value !== 'boolean') mismatch(); return;
      case 'number': if (typeof value !== 'number') mismatch(); return;
      case 'integer': {
        if (typeof value !== 'number') return mismatch();
        const range = INT_RANGE[s.format ?? 'int64'] ?? INT_RANGE.int64;
        if (Number.isInteger(value) && value >= range[0] && value <= range[1]) return;
        const shown = numberLiteral(body, value) ?? (Number.isInteger(value) && Math.abs(value) < 1e21 ? BigInt(value).toString() : String(value));
        first ??= `json: cannot unmarshal number ${shown} into ${where(outer, path)} of type ${s.format ?? 'int64'}`;
        return;
      }
      case 'array':
        if (!Array.isArray(value)) return mismatch();
        if (typed && isQuantity(s.items, definitions)) { for (let i = 0; i < value.length; i++) value[i] = quantityText(value[i]); return; }
        for (const v of value) walk(v, s.items, path, struct);
        return;
      case 'object': {
        if (!isObject(value)) return mismatch();
        const quantities = typed && !s.fields && isQuantity(s.additional, definitions);
        for (const k of Object.keys(value)) {
          const f = s.fields?.[k];
          if (quantities || (typed && f && isQuantity(f, definitions))) { value[k] = quantityText(value[k]); continue; }
          // a map's values are reported at the map's own path (Go's field stack has no keys)
          if (f) walk(value[k], f, join(path, k), struct);
          else if (s.additional) walk(value[k], s.additional, path, struct);
        }
        return;
      }
      default:
    }
  };
  try {
    walk(obj, schema, '', '');
  } catch (e) {
    if (e instanceof AbortDecode) return e.message;
    throw e;
  }
  return first;
}

/** A type's own decoder failed (a quantity, an IntOrString): the whole decoding ends with its message. */
class AbortDecode extends Error {}

/** Whether a field holds a resource.Quantity (its definition's format says so). */
function isQuantity(s: Schema | undefined, defs: Defs): boolean {
  const r = s?.type === 'ref' ? defs?.[s.ref] : s;
  return r?.type === 'string' && r.format === 'quantity';
}

/** A quantity's canonical text, as the reference stores it (null stays unset); throws its parse error. */
function quantityText(v: unknown): unknown {
  if (v === null || v === undefined) return v;
  const q = typeof v === 'string' || typeof v === 'number' ? parseQuantity(v) : QUANTITY_FORMAT_ERROR;
  if (typeof q === 'string') throw new AbortDecode(q);
  return formatQuantity(q);
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
