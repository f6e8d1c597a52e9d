// Sets of field paths (what a manager owns), their FieldsV1 wire form, and the set of fields an
// object sets according to its schema's merge markers.
//
// A set is a tree of plain objects: `m` says the path ending at this node is a member, `c` holds
// the children by path element. Path elements are kept as their FieldsV1 strings:
//   f:<field>            a struct field or map key
//   k:<json object>      a list-map item, identified by its key fields (JSON with sorted keys)
//   v:<json value>       a set item
//   i:<index>            an item by position (decoded, never produced)
// Sets are values: the operations below never change their inputs (results may share subtrees),
// and only `insert` mutates, for building a fresh set.
import type { Schema } from '../../kernel/contracts/index.js';
import {
  type Definitions, compareStrings, fieldSchema, goJSON, isDeclaredField, isObject, itemSchema, resolve,
  isAtomicContainer, keyDefault, keysOf, listType, nodeKind, present,
} from './schema.js';

export interface FieldSet {
  m: boolean;
  c: Record<string, FieldSet>;
}
export type PathElement = string;
export type Path = PathElement[];
/** The FieldsV1 JSON object: `{"f:spec":{"f:replicas":{}}}`; `"."` marks a member that also has children. */
export type FieldsV1 = { [key: string]: FieldsV1 };

export function newSet(): FieldSet {
  return { m: false, c: {} };
}

function hasChildren(s: FieldSet): boolean {
  for (const _ in s.c) return true;
  return false;
}

export function isEmpty(s: FieldSet): boolean {
  return !s.m && !hasChildren(s);
}

/** Adds a path as a member (mutates `s`; use only on a set being built). */
export function insert(s: FieldSet, path: Path): void {
  let node = s;
  for (const pe of path) node = node.c[pe] ??= newSet();
  node.m = true;
}

export function has(s: FieldSet, path: Path): boolean {
  let node: FieldSet | undefined = s;
  for (const pe of path) {
    node = node.c[pe];
    if (!node) return false;
  }
  return node.m;
}

/** The subtree under one path element (empty when absent). */
export function withPrefix(s: FieldSet, pe: PathElement): FieldSet {
  return s.c[pe] ?? newSet();
}

export function union(a: FieldSet, b: FieldSet): FieldSet {
  if (isEmpty(b)) return a;
  if (isEmpty(a)) return b;
  const out: FieldSet = { m: a.m || b.m, c: { ...a.c } };
  for (const k in b.c) out.c[k] = a.c[k] ? union(a.c[k], b.c[k]) : b.c[k];
  return out;
}

/** Paths in `a` that are not in `b` (exact paths: a member of `b` does not remove `a`'s deeper paths). */
export function difference(a: FieldSet, b: FieldSet): FieldSet {
  const out: FieldSet = { m: a.m && !b.m, c: {} };
  for (const k in a.c) {
    const d = b.c[k] ? difference(a.c[k], b.c[k]) : a.c[k];
    if (!isEmpty(d)) out.c[k] = d;
  }
  return out;
}

export function intersection(a: FieldSet, b: FieldSet): FieldSet {
  const out: FieldSet = { m: a.m && b.m, c: {} };
  for (const k in a.c) {
    if (!b.c[k]) continue;
    const i = intersection(a.c[k], b.c[k]);
    if (!isEmpty(i)) out.c[k] = i;
  }
  return out;
}

/** Paths in `a` that are neither in `b` nor below a member of `b`. */
export function recursiveDifference(a: FieldSet, b: FieldSet): FieldSet {
  const out: FieldSet = { m: a.m && !b.m, c: {} };
  for (const k in a.c) {
    const bc = b.c[k];
    if (bc?.m) continue;
    const d = bc ? recursiveDifference(a.c[k], bc) : a.c[k];
    if (!isEmpty(d)) out.c[k] = d;
  }
  return out;
}

/** Only the members that have no children. */
export function leaves(s: FieldSet): FieldSet {
  const out: FieldSet = { m: s.m && !hasChildren(s), c: {} };
  for (const k in s.c) {
    const l = leaves(s.c[k]);
    if (!isEmpty(l)) out.c[k] = l;
  }
  return out;
}

/** Every member path, in the reference's iteration order (a level's members, then its children). */
export function paths(s: FieldSet): Path[] {
  const out: Path[] = [];
  const walk = (node: FieldSet, prefix: Path) => {
    const keys = sortedKeys(node);
    for (const k of keys) if (node.c[k].m) out.push([...prefix, k]);
    for (const k of keys) if (hasChildren(node.c[k])) walk(node.c[k], [...prefix, k]);
  };
  if (s.m) out.push([]);
  walk(s, []);
  return out;
}

export function size(s: FieldSet): number {
  let n = s.m ? 1 : 0;
  for (const k in s.c) n += size(s.c[k]);
  return n;
}

/** Builds a set from a list of paths. */
export function setOf(...ps: Path[]): FieldSet {
  const s = newSet();
  for (const p of ps) insert(s, p);
  return s;
}

// ---------------------------------------------------------------- path elements

type Parsed =
  | { kind: 0; name: string }
  | { kind: 1; fields: [string, unknown][] }
  | { kind: 2; value: unknown }
  | { kind: 3; index: number };

const parsedCache = new Map<string, Parsed>();

/** Decodes a path element string; throws on an unknown form. */
export function parsePE(pe: PathElement): Parsed {
  let p = parsedCache.get(pe);
  if (p) return p;
  p = parseUncached(pe);
  // A bounded cache: path elements repeat heavily within one object but workers live long.
  if (parsedCache.size > 20000) parsedCache.clear();
  parsedCache.set(pe, p);
  return p;
}

function parseUncached(pe: string): Parsed {
  const prefix = pe.slice(0, 2);
  const rest = pe.slice(2);
  if (prefix === 'f:') return { kind: 0, name: rest };
  if (prefix === 'k:') {
    const obj = parseJSON(rest, pe);
    if (!isObject(obj)) throw new Error(`parsing key as JSON object: ${pe}`);
    const fields = Object.keys(obj).sort(compareStrings).map((k): [string, unknown] => [k, obj[k]]);
    return { kind: 1, fields };
  }
  if (prefix === 'v:') return { kind: 2, value: parseJSON(rest, pe) };
  if (prefix === 'i:' && /^-?\d+$/.test(rest)) return { kind: 3, index: Number(rest) };
  throw new Error('unknown path element type');
}

function parseJSON(s: string, pe: string): unknown {
  try {
    return JSON.parse(s);
  } catch (e) {
    throw new Error(`parsing JSON of path element ${pe}: ${(e as Error).message}`);
  }
}

/** The one spelling of a path element we store (key fields sorted, JSON as the reference writes it). */
export function canonicalPE(pe: PathElement): PathElement {
  const p = parsePE(pe);
  switch (p.kind) {
    case 0:
      return pe;
    case 1:
      return keyPEFromFields(p.fields);
    case 2:
      return valuePE(p.value);
    case 3:
      return `i:${p.index}`;
  }
}

export const fieldPE = (name: string): PathElement => `f:${name}`;
export const valuePE = (v: unknown): PathElement => `v:${goJSON(v)}`;
export const indexPE = (i: number): PathElement => `i:${i}`;

function keyPEFromFields(fields: [string, unknown][]): PathElement {
  const sorted = [...fields].sort((a, b) => compareStrings(a[0], b[0]));
  return `k:{${sorted.map(([k, v]) => `${goJSON(k)}:${goJSON(v)}`).join(',')}}`;
}

/** The path element of a list-map item; throws (with the reference's wording) when it cannot have one. */
export function keyPE(item: unknown, keys: string[], item_schema: Schema | undefined, defs: Definitions): PathElement {
  if (item === null) throw new Error('associative list with keys may not have a null element');
  if (!isObject(item)) throw new Error('associative list with keys may not have non-map elements');
  const fields: [string, unknown][] = [];
  for (const k of keys) {
    if (present(item, k)) fields.push([k, item[k]]);
    else {
      const d = keyDefault(item_schema, k, defs);
      if (d === undefined) throw new Error(`associative list with keys has an element that omits key field ${goQuote(k)} (and doesn't have default value)`);
      fields.push([k, d]);
    }
  }
  return keyPEFromFields(fields);
}

/** A list-map item's path element, tolerating items that lack keys (live objects are not validated). */
export function lenientKeyPE(item: unknown, keys: string[], item_schema: Schema | undefined, defs: Definitions): PathElement {
  try {
    return keyPE(item, keys, item_schema, defs);
  } catch {
    if (!isObject(item)) return valuePE(item);
    return keyPEFromFields(keys.filter((k) => present(item, k)).map((k): [string, unknown] => [k, item[k]]));
  }
}

/** The order of path elements: fields, then keys, then values, then indexes. */
export function comparePE(a: PathElement, b: PathElement): number {
  if (a === b) return 0;
  const pa = parsePE(a);
  const pb = parsePE(b);
  if (pa.kind !== pb.kind) return pa.kind - pb.kind;
  switch (pa.kind) {
    case 0:
      return compareStrings(pa.name, (pb as typeof pa).name);
    case 1:
      return compareFieldLists(pa.fields, (pb as typeof pa).fields);
    case 2:
      return compareValues(pa.value, (pb as typeof pa).value);
    case 3:
      return pa.index - (pb as typeof pa).index;
  }
}

function compareFieldLists(a: [string, unknown][], b: [string, unknown][]): number {
  for (let i = 0; ; i++) {
    if (i >= a.length) return i >= b.length ? 0 : -1;
    if (i >= b.length) return 1;
    const c = compareStrings(a[i][0], b[i][0]) || compareValues(a[i][1], b[i][1]);
    if (c) return c;
  }
}

function rank(v: unknown): number {
  if (typeof v === 'number') return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (isObject(v)) return 4;
  return 5; // null
}

/** The reference's total order of values: numbers, strings, booleans, lists, maps, null. */
export function compareValues(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number') return a < (b as number) ? -1 : a > (b as number) ? 1 : 0;
  if (typeof a === 'string') return compareStrings(a, b as string);
  if (typeof a === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    for (let i = 0; i < Math.min(a.length, bb.length); i++) {
      const c = compareValues(a[i], bb[i]);
      if (c) return c;
    }
    return a.length - bb.length;
  }
  if (isObject(a)) {
    const fa = Object.keys(a).sort(compareStrings).map((k): [string, unknown] => [k, a[k]]);
    const ob = b as Record<string, unknown>;
    const fb = Object.keys(ob).sort(compareStrings).map((k): [string, unknown] => [k, ob[k]]);
    return compareFieldLists(fa, fb);
  }
  return 0;
}

function sortedKeys(s: FieldSet): string[] {
  return Object.keys(s.c).sort(comparePE);
}

// ---------------------------------------------------------------- rendering paths

/** Go's %q for the strings that appear in paths and messages. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + '"';
}

function valueToString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (Array.isArray(v)) return `[${v.map(valueToString).join(',')}]`;
  if (isObject(v)) return `{${Object.keys(v).sort(compareStrings).map((k) => `${k}=${valueToString(v[k])}`).join(',')}}`;
  return String(v);
}

/** One path element as the reference prints it: `.name`, `[name="nginx"]`, `[="a"]`, `[3]`. */
export function peToString(pe: PathElement): string {
  const p = parsePE(pe);
  switch (p.kind) {
    case 0:
      return `.${p.name}`;
    case 1:
      return `[${p.fields.map(([k, v]) => `${k}=${valueToString(v)}`).join(',')}]`;
    case 2:
      return `[=${valueToString(p.value)}]`;
    case 3:
      return `[${p.index}]`;
  }
}

/** A path in the reference's conflict format: `.spec.containers[name="nginx"].image`. */
export function pathToString(path: Path): string {
  return path.map(peToString).join('');
}

// ---------------------------------------------------------------- FieldsV1

/** The FieldsV1 JSON object of a set: children sorted, "." first where a member has children. */
export function toFieldsV1(s: FieldSet): FieldsV1 {
  return emit(s, false);
}

function emit(s: FieldSet, self: boolean): FieldsV1 {
  const out: FieldsV1 = {};
  const keys = sortedKeys(s);
  if (self && s.m && keys.length) out['.'] = {};
  for (const k of keys) out[k] = emit(s.c[k], true);
  return out;
}

/** Decodes a FieldsV1 object (throws on a malformed one); path elements are canonicalized. */
export function fromFieldsV1(v: unknown): FieldSet {
  if (!isObject(v)) throw new Error('FieldsV1 must be a JSON object');
  const s = newSet();
  decodeInto(v, s);
  return s;
}

function decodeInto(v: Record<string, unknown>, node: FieldSet): void {
  for (const k of Object.keys(v)) {
    if (k === '.') {
      node.m = true;
      continue;
    }
    const sub = v[k];
    if (!isObject(sub)) throw new Error(`FieldsV1 value at ${k} must be a JSON object`);
    const child = (node.c[canonicalPE(k)] ??= newSet());
    if (Object.keys(sub).length === 0) child.m = true;
    else decodeInto(sub, child);
  }
}

// ---------------------------------------------------------------- the fields an object sets

/**
 * The set of fields an object sets, per its schema: leaves (scalars, atomic lists and maps) are
 * members; granular structs recurse (a declared field holding a non-empty struct or map is not
 * itself a member, only its content); map entries, list items, nulls and empty maps are members;
 * list-maps yield k: elements and sets v: elements. Without a schema objects are granular maps and
 * lists atomic. With `errors`, invalid lists (duplicates, items without keys) are reported there.
 */
export function fieldsOf(obj: unknown, schema?: Schema, defs?: Definitions, errors?: string[]): FieldSet {
  const s = newSet();
  if (obj !== undefined) collect(obj, schema, defs, s, [], errors);
  return s;
}

// `path` is only tracked (for messages) when errors are collected.
function collect(v: unknown, schema: Schema | undefined, defs: Definitions, node: FieldSet, path: Path, errors?: string[]): void {
  let kind = nodeKind(schema, defs);
  if (kind === 'deduced') kind = isObject(v) ? 'map' : 'leaf';
  if (kind === 'leaf') {
    node.m = true;
    return;
  }
  if (kind === 'map') {
    if (!isObject(v)) {
      node.m = true;
      return;
    }
    // A field the structure does not declare cannot be typed: the reference refuses the apply with it.
    const struct = errors ? resolve(schema, defs) : undefined;
    const closed = !!struct && struct.type === 'object' && !!struct.fields && !struct.additional && !struct.preserveUnknown;
    for (const k of keysOf(v)) {
      const val = v[k];
      const pe = fieldPE(k);
      if (closed && !isDeclaredField(schema, k, defs)) { errors!.push(`${pathToString([...path, pe])}: field not declared in schema`); continue; }
      const child = (node.c[pe] ??= newSet());
      collect(val, fieldSchema(schema, k, defs), defs, child, errors ? [...path, pe] : path, errors);
      const emptyMap = isObject(val) && keysOf(val).length === 0;
      if (val === null || emptyMap || !isDeclaredField(schema, k, defs)) child.m = true;
      if (isEmpty(child)) delete node.c[pe];
    }
    return;
  }
  if (!Array.isArray(v)) {
    node.m = true;
    return;
  }
  const item = itemSchema(schema, defs);
  const lt = listType(schema, defs);
  const seen = new Set<string>();
  v.forEach((it, i) => {
    let pe: PathElement;
    if (lt.type === 'map') {
      try {
        pe = errors ? keyPE(it, lt.keys, item, defs) : lenientKeyPE(it, lt.keys, item, defs);
      } catch (e) {
        errors!.push(`${pathToString(path)}: element ${i}: ${(e as Error).message}`);
        return;
      }
    } else pe = valuePE(it);
    if (errors && seen.has(pe)) errors.push(`${pathToString(path)}: duplicate entries for key ${peToString(pe)}`);
    seen.add(pe);
    const child = (node.c[pe] ??= newSet());
    if (lt.type === 'map') collect(it, item, defs, child, errors ? [...path, pe] : path, errors);
    child.m = true;
  });
}

// ---------------------------------------------------------------- schema-aware set rewrites

function childSchema(schema: Schema | undefined, pe: PathElement, defs: Definitions): Schema | undefined {
  return pe.startsWith('f:') ? fieldSchema(schema, pe.slice(2), defs) : itemSchema(schema, defs);
}

/**
 * Makes every declared struct field that has children a member as well. Pruning removes whole
 * members, so a struct field an applier set only through its content must count as set itself.
 */
export function ensureNamedFieldsAreMembers(s: FieldSet, schema: Schema | undefined, defs: Definitions): FieldSet {
  const out: FieldSet = { m: s.m, c: {} };
  for (const k in s.c) {
    const sub = ensureNamedFieldsAreMembers(s.c[k], childSchema(schema, k, defs), defs);
    if (k.startsWith('f:') && isDeclaredField(schema, k.slice(2), defs)) sub.m = true;
    out.c[k] = sub;
  }
  return out;
}

/**
 * Rule 11: where the schema now says a list or map is atomic but ownership was recorded element by
 * element, whoever owned any part of it owns the whole (the path becomes a single leaf).
 */
export function reconcileWithSchema(s: FieldSet, schema: Schema | undefined, defs: Definitions): FieldSet {
  let changed = false;
  const out: FieldSet = { m: s.m, c: {} };
  for (const k in s.c) {
    const sub = s.c[k];
    const cs = childSchema(schema, k, defs);
    let next: FieldSet;
    if (isAtomicContainer(cs, defs) && hasChildren(sub)) next = { m: true, c: {} };
    else next = reconcileWithSchema(sub, cs, defs);
    if (next !== sub) changed = true;
    out.c[k] = next;
  }
  return changed ? out : s;
}
