// Schema and JSON-value helpers shared by the merge workers. Everything here is pure and works on
// plain JSON data, so the same code runs inline and in worker threads.
import type { Schema } from '../../kernel/contracts/index.js';

export type Definitions = Readonly<Record<string, Schema>> | undefined;
export type ObjectSchema = Extract<Schema, { type: 'object' }>;
export type ArraySchema = Extract<Schema, { type: 'array' }>;
export type JsonObject = Record<string, unknown>;

/** How the items of a list are identified (and so merged and owned). */
export type ListType = { type: 'atomic' } | { type: 'set' } | { type: 'map'; keys: string[] };

// ---------------------------------------------------------------- schema navigation

/** Follows `ref` chains through the definitions; an unknown ref reads as unstructured (undefined). */
export function resolve(s: Schema | undefined, defs: Definitions): Schema | undefined {
  let cur = s;
  // A bound on the chain length guards against a definition that refers to itself.
  for (let i = 0; cur && cur.type === 'ref' && i < 64; i++) cur = defs?.[cur.ref];
  return cur && cur.type === 'ref' ? undefined : cur;
}

/** The resolved schema of one key of an object (a declared field, else the map's value schema). */
export function fieldSchema(s: Schema | undefined, key: string, defs: Definitions): Schema | undefined {
  const r = resolve(s, defs);
  if (!r || r.type !== 'object') return undefined;
  if (r.fields && Object.prototype.hasOwnProperty.call(r.fields, key)) return resolve(r.fields[key], defs);
  return r.additional ? resolve(r.additional, defs) : undefined;
}

/** Whether `key` is a declared field of a struct (as opposed to an entry of a map). */
export function isDeclaredField(s: Schema | undefined, key: string, defs: Definitions): boolean {
  const r = resolve(s, defs);
  return !!r && r.type === 'object' && !!r.fields && Object.prototype.hasOwnProperty.call(r.fields, key);
}

/** The resolved schema of a list's items. */
export function itemSchema(s: Schema | undefined, defs: Definitions): Schema | undefined {
  const r = resolve(s, defs);
  return r && r.type === 'array' ? resolve(r.items, defs) : undefined;
}

/** The patch strategies of a schema node ("merge,retainKeys" → ["merge", "retainKeys"]). */
export function patchStrategies(s: Schema | undefined, defs: Definitions): string[] {
  const r = resolve(s, defs);
  const raw = r && (r.type === 'object' || r.type === 'array') ? r.patchStrategy : undefined;
  return raw ? raw.split(',').map((x) => x.trim()).filter(Boolean) : [];
}

/**
 * The effective list type: an explicit listType wins; otherwise patchStrategy=merge reads as a map
 * keyed by patchMergeKey (a set when there is no key); anything else (and no schema) is atomic.
 */
export function listType(s: Schema | undefined, defs: Definitions): ListType {
  const r = resolve(s, defs);
  if (!r || r.type !== 'array') return { type: 'atomic' };
  if (r.listType === 'set') return { type: 'set' };
  if (r.listType === 'atomic') return { type: 'atomic' };
  if (r.listType === 'map') {
    const keys = r.mapKeys?.length ? r.mapKeys : r.patchMergeKey ? [r.patchMergeKey] : [];
    return keys.length ? { type: 'map', keys } : { type: 'atomic' };
  }
  if (patchStrategies(r, defs).includes('merge')) return r.patchMergeKey ? { type: 'map', keys: [r.patchMergeKey] } : { type: 'set' };
  return { type: 'atomic' };
}

/**
 * What a schema node is for merging and ownership:
 * - 'leaf': scalars, atomic lists, atomic maps/structs (one owner for the whole value);
 * - 'map': granular structs and maps (keys merged and owned one by one);
 * - 'set' / 'mapList': granular lists;
 * - 'deduced': no schema (unstructured): objects act as granular maps, everything else is a leaf.
 */
export type NodeKind = 'leaf' | 'map' | 'set' | 'mapList' | 'deduced';

export function nodeKind(s: Schema | undefined, defs: Definitions): NodeKind {
  const r = resolve(s, defs);
  if (!r || r.type === 'any') return 'deduced';
  if (r.type === 'object') {
    if (r.mapType === 'atomic') return 'leaf';
    // An object without declared fields or a value schema carries arbitrary content.
    return r.fields || r.additional ? 'map' : 'deduced';
  }
  if (r.type === 'array') {
    const lt = listType(r, defs);
    return lt.type === 'atomic' ? 'leaf' : lt.type === 'set' ? 'set' : 'mapList';
  }
  return 'leaf';
}

/** Whether a schema node is atomic in the sense of rule 11 (a list or map owned as a whole). */
export function isAtomicContainer(s: Schema | undefined, defs: Definitions): boolean {
  const r = resolve(s, defs);
  if (!r) return false;
  if (r.type === 'object') return r.mapType === 'atomic';
  if (r.type === 'array') return listType(r, defs).type === 'atomic';
  return false;
}

/**
 * The default of a list-map key field when an item omits it. Schemas may carry `default`; without
 * one, `protocol` defaults to TCP as every keyed protocol field of the built-in types does.
 */
export function keyDefault(item: Schema | undefined, key: string, defs: Definitions): unknown {
  const fs = fieldSchema(item, key, defs) as (Schema & { default?: unknown }) | undefined;
  if (fs && fs.default !== undefined) return fs.default;
  return key === 'protocol' ? 'TCP' : undefined;
}

// ---------------------------------------------------------------- JSON values

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Sets a key without ever touching the prototype (JSON may carry a "__proto__" key). */
export function put(o: JsonObject, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

export function hasOwn(o: JsonObject, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

/** The keys of an object that hold a value (an undefined value is an absent key, as in JSON). */
export function keysOf(o: JsonObject): string[] {
  return Object.keys(o).filter((k) => o[k] !== undefined);
}

/** Whether an object holds a value under `k`. */
export function present(o: JsonObject, k: string): boolean {
  return hasOwn(o, k) && o[k] !== undefined;
}

/** A deep copy of a JSON value (keys holding undefined are left out). */
export function clone<T>(v: T): T {
  if (Array.isArray(v)) return v.map(clone) as T;
  if (isObject(v)) {
    const out: JsonObject = {};
    for (const k of keysOf(v)) put(out, k, clone(v[k]));
    return out as T;
  }
  return v;
}

/** Deep equality of JSON values (key order ignored, numbers compared by value). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    for (const k of ka) if (!hasOwn(b, k) || !deepEqual(a[k], b[k])) return false;
    return true;
  }
  return false;
}

/** JSON as Go's encoding/json writes it: map keys sorted, <, >, & and U+2028/9 escaped. */
export function goJSON(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goString(v);
  if (typeof v === 'number') return Number.isFinite(v) ? JSON.stringify(v) : 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[${v.map(goJSON).join(',')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort(compareStrings);
    return `{${keys.map((k) => `${goString(k)}:${goJSON(v[k])}`).join(',')}}`;
  }
  return 'null';
}

function goString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Byte-wise (UTF-8) string order, as Go compares strings. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  // Code-point order equals UTF-8 byte order; UTF-16 order differs only around surrogates.
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0)!;
    const cy = y.value.codePointAt(0)!;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

/** Size of a string in UTF-8 bytes (Go's len). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * Go's `%v` rendering of a decoded JSON value, used where the reference puts values in messages:
 * `map[a:1 b:[x y]]`, `[1 2]`, `<nil>`.
 */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (isObject(v)) return `map[${Object.keys(v).sort(compareStrings).map((k) => `${k}:${goFormat(v[k])}`).join(' ')}]`;
  return String(v);
}
