// Strategic merge patch, driven by the schema's patch markers, with the reference's semantics:
// - maps merge key by key; null deletes a key; a field with patchStrategy "replace" is replaced;
// - lists with patchStrategy "merge" merge: maps by patchMergeKey, primitives as a set; other
//   lists are replaced by the patch's list;
// - directives: `$patch: replace | delete` in a map (`merge` is accepted as the default), and as a
//   list element (`replace`: the list becomes the patch's other elements; `delete`: drop the
//   elements with that merge key); `$retainKeys: [...]` (keys not listed are cleared);
//   `$deleteFromPrimitiveList/<field>: [...]`; `$setElementOrder/<field>: [...]`;
// - merged lists are ordered as the reference orders them: patch items in patch order, server-only
//   items in their live order, interleaved by live positions (new patch items come first).
import type { Schema } from '../../kernel/contracts/index.js';
import { PatchError, REJECTED_MESSAGE } from './json-patch.js';
import { pruneNulls } from './merge-patch.js';
import {
  type Definitions, deepEqual, clone, fieldSchema, goFormat, goJSON, hasOwn, isObject, itemSchema, patchStrategies, put, resolve,
} from './schema.js';

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_PRIMITIVE_PREFIX = '$deleteFromPrimitiveList/';
const SET_ORDER_PREFIX = '$setElementOrder/';

/** The reference's fixed error texts (mergepatch package). */
export const SMP_ERRORS = {
  badJSONDoc: 'invalid JSON document',
  noListOfLists: 'lists of lists are not supported',
  badPrimitiveList: 'invalid patch format of primitive list',
  badRetainKeys: 'invalid patch format of retainKeys',
  badSetElementOrder: 'invalid patch format of setElementOrder list',
  retainKeysMismatch: "patch content doesn't match retainKeys list",
  unsupported: 'strategic merge patch format is not supported',
} as const;

// The reference maps its format errors to 400, two content errors to 422, and anything else to 500;
// here "anything else" (an unknown directive, a missing merge key: what the client sent) is a 400
// with the reference's message, since a client's bad patch is never a server error.
const bad = (msg: string) => new PatchError(400, msg);
const invalid = (msg: string) => new PatchError(422, msg, { statusMessage: REJECTED_MESSAGE });

type Json = Record<string, unknown>;
type Ctx = { defs: Definitions };

/** Applies a strategic merge patch to a document (not changed); throws PatchError. */
export function strategicMergePatch(doc: unknown, patch: unknown, schema?: Schema, defs?: Definitions): unknown {
  if (!isObject(patch)) {
    const t = Array.isArray(patch) ? 'array' : patch === null ? 'null' : typeof patch === 'boolean' ? 'bool' : typeof patch;
    throw bad(`json: cannot unmarshal ${t} into Go value of type map[string]interface {}`);
  }
  const original = isObject(doc) ? clone(doc) : {};
  return mergeMap(original, clone(patch), schema, { defs });
}

// ---------------------------------------------------------------- maps

function mergeMap(original: Json, patch: Json, schema: Schema | undefined, ctx: Ctx): Json {
  if (hasOwn(patch, DIRECTIVE)) {
    const d = patch[DIRECTIVE];
    delete patch[DIRECTIVE];
    if (d === 'replace') return mergeMap({}, patch, schema, ctx);
    if (d === 'delete') return {};
    if (d !== 'merge') throw bad(`unknown patch type: ${goFormat(d)} in map: ${goFormat({ ...patch, [DIRECTIVE]: d })}`);
  }
  applyRetainKeys(original, patch);
  applySetElementOrder(original, patch, schema, ctx);
  for (const k of Object.keys(patch)) {
    if (k.startsWith(SET_ORDER_PREFIX)) continue;
    const isDeleteList = k.startsWith(DELETE_PRIMITIVE_PREFIX);
    const key = isDeleteList ? k.slice(DELETE_PRIMITIVE_PREFIX.length) : k;
    mergeField(original, key, patch[k], isDeleteList, fieldSchema(schema, key, ctx.defs), ctx);
  }
  return original;
}

function kindOf(v: unknown): 'map' | 'list' | 'scalar' {
  return isObject(v) ? 'map' : Array.isArray(v) ? 'list' : 'scalar';
}

function mergeField(original: Json, key: string, patchV: unknown, isDeleteList: boolean, fs: Schema | undefined, ctx: Ctx): void {
  if (patchV === null) {
    delete original[key];
    return;
  }
  if (!hasOwn(original, key) || kindOf(original[key]) !== kindOf(patchV)) {
    // Nothing to merge with: take the patch's value (its directives applied, its nulls dropped).
    if (!isDeleteList) put(original, key, fresh(patchV, fs, ctx));
    return;
  }
  const orig = original[key];
  if (isObject(orig)) {
    const strategy = mainStrategy(fs, ctx);
    put(original, key, strategy === 'replace' ? fresh(patchV, undefined, ctx) : mergeMap(orig, patchV as Json, fs, ctx));
  } else if (Array.isArray(orig)) {
    put(original, key, mergeListField(orig, patchV as unknown[], fs, key, isDeleteList, ctx));
  } else {
    put(original, key, patchV);
  }
}

/** The patch strategy besides retainKeys ("merge,retainKeys" → "merge"). */
function mainStrategy(fs: Schema | undefined, ctx: Ctx): string {
  const all = patchStrategies(fs, ctx.defs);
  if (all.length > 2 || (all.length === 2 && !all.includes('retainKeys'))) throw bad(`unexpected patch strategy: ${goFormat(all)}`);
  return all.find((s) => s !== 'retainKeys') ?? '';
}

function mergeKeyOf(fs: Schema | undefined, ctx: Ctx): string {
  const r = resolve(fs, ctx.defs);
  return r && r.type === 'array' ? r.patchMergeKey ?? '' : '';
}

function mergeListField(orig: unknown[], patch: unknown[], fs: Schema | undefined, name: string, isDeleteList: boolean, ctx: Ctx): unknown[] {
  if (mainStrategy(fs, ctx) === 'merge' || isDeleteList) {
    return mergeSlice(orig, patch, itemSchema(fs, ctx.defs), mergeKeyOf(fs, ctx), name, isDeleteList, ctx);
  }
  return pruneNulls(patch) as unknown[];
}

/**
 * A patch value placed where the original has nothing: taken as it is (the reference does not
 * merge it, so a list item lacking its merge key is not an error here), but with its directives
 * applied and its nulls dropped so that no directive is ever stored.
 */
function fresh(v: unknown, fs: Schema | undefined, ctx: Ctx): unknown {
  if (isObject(v)) return mergeMap({}, v, fs, ctx);
  if (!Array.isArray(v)) return v;
  if (mainStrategy(fs, ctx) !== 'merge') return pruneNulls(v);
  const item = itemSchema(fs, ctx.defs);
  const out: unknown[] = [];
  for (const it of v) {
    // Directive elements have nothing to act on in an empty list.
    if (isObject(it) && hasOwn(it, DIRECTIVE) && it[DIRECTIVE] !== 'merge') continue;
    out.push(isObject(it) ? mergeMap({}, clone(it), item, ctx) : it);
  }
  return out;
}

// ---------------------------------------------------------------- $retainKeys

function applyRetainKeys(original: Json, patch: Json): void {
  if (!hasOwn(patch, RETAIN_KEYS)) return;
  const list = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(list)) throw bad(SMP_ERRORS.badRetainKeys);
  const keep = new Set(list.filter((x): x is string => typeof x === 'string'));
  for (const k of Object.keys(patch)) {
    if (patch[k] === null || k.startsWith(DELETE_PRIMITIVE_PREFIX) || k.startsWith(SET_ORDER_PREFIX)) continue;
    if (!keep.has(k)) throw invalid(SMP_ERRORS.retainKeysMismatch);
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
}

// ---------------------------------------------------------------- $setElementOrder

function applySetElementOrder(original: Json, patch: Json, schema: Schema | undefined, ctx: Ctx): void {
  for (const k of Object.keys(patch)) {
    if (!k.startsWith(SET_ORDER_PREFIX)) continue;
    const order = patch[k];
    if (!Array.isArray(order)) throw bad(SMP_ERRORS.badSetElementOrder);
    const key = k.slice(SET_ORDER_PREFIX.length);
    const fs = fieldSchema(schema, key, ctx.defs);
    const foundOrig = hasOwn(original, key);
    const foundPatch = hasOwn(patch, key);
    if (foundOrig && !Array.isArray(original[key])) throw bad(SMP_ERRORS.badSetElementOrder);
    if (foundPatch && !Array.isArray(patch[key])) throw bad(SMP_ERRORS.badSetElementOrder);
    const origList = foundOrig ? (original[key] as unknown[]) : [];
    const patchList = foundPatch ? (patch[key] as unknown[]) : [];
    const mk = mergeKeyOf(fs, ctx);
    validateAgainstOrder(patchList, order, mk);
    let merged: unknown[];
    if (foundOrig && foundPatch) merged = mergeListField(origList, patchList, fs, key, false, ctx);
    else if (foundPatch) merged = fresh(patchList, fs, ctx) as unknown[];
    else if (foundOrig) merged = origList;
    else continue;
    const [inOrder, serverOnly] = partition(merged, order, mk);
    const kind = elementKind(merged);
    put(original, key, kind ? normalizeOrder(inOrder, serverOnly, order, origList, mk, kind) : merged);
    // The list is done: keep the main loop from merging it again.
    delete patch[key];
  }
}

/** Every non-directive patch item must appear in the order list, in the same relative order. */
function validateAgainstOrder(patchList: unknown[], order: unknown[], mk: string): void {
  if (!order.length || !patchList.length) return;
  const items = mk ? splitDeletes(patchList)[0] : patchList;
  let p = 0;
  let o = 0;
  while (p < items.length && o < order.length) {
    if (isObject(items[p]) && hasOwn(items[p] as Json, DIRECTIVE)) {
      p++;
      continue;
    }
    if (sameItem(items[p], order[o], mk)) p++;
    o++;
  }
  if (p < items.length) {
    throw bad(`The order in patch list:\n${goFormat(patchList)}\n doesn't match ${SET_ORDER_PREFIX} list:\n${goFormat(order)}\n`);
  }
}

// ---------------------------------------------------------------- lists

/** The one element kind of the given lists; lists of lists are refused, mixed kinds too. */
function elementKind(...lists: unknown[][]): string | undefined {
  let kind: string | undefined;
  for (const l of lists) {
    for (const v of l) {
      const k = v === null ? 'null' : Array.isArray(v) ? 'list' : isObject(v) ? 'map' : typeof v;
      if (k === 'list') throw invalid(SMP_ERRORS.noListOfLists);
      if (kind && kind !== k) throw bad(`list element types are not identical: ${goFormat(lists)}`);
      kind = k;
    }
  }
  return kind;
}

function mergeSlice(original: unknown[], patch: unknown[], item: Schema | undefined, mk: string, name: string, isDeleteList: boolean, ctx: Ctx): unknown[] {
  if (!original.length && !patch.length) return original;
  const kind = elementKind(original, patch)!;
  let merged: unknown[];
  if (kind !== 'map') {
    if (isDeleteList) {
      const drop = new Set(patch.map(goJSON));
      return original.filter((v) => !drop.has(goJSON(v)));
    }
    merged = dedupe([...original, ...patch]);
  } else {
    if (!mk) throw bad(`cannot merge lists without merge key for ${name}`);
    [original, patch] = applySpecialElements(original, patch, mk);
    merged = mergeByKey(original, patch, mk, item, ctx);
  }
  const [inPatch, serverOnly] = partition(merged, patch, mk);
  return normalizeOrder(inPatch, serverOnly, patch, original, mk, kind);
}

function dedupe(list: unknown[]): unknown[] {
  const seen = new Set<string>();
  return list.filter((v) => {
    const k = goJSON(v);
    return seen.has(k) ? false : (seen.add(k), true);
  });
}

/** Handles `$patch` elements; returns the (possibly replaced) original and the remaining patch items. */
function applySpecialElements(original: unknown[], patch: unknown[], mk: string): [unknown[], unknown[]] {
  const rest: unknown[] = [];
  let replace = false;
  for (const v of patch) {
    const m = v as Json;
    if (!hasOwn(m, DIRECTIVE)) {
      rest.push(v);
      continue;
    }
    const d = m[DIRECTIVE];
    if (d === 'delete') {
      if (!hasOwn(m, mk)) throw bad(noMergeKey(m, mk));
      original = original.filter((o) => !(isObject(o) && deepEqual(o[mk], m[mk])));
    } else if (d === 'replace') {
      replace = true;
    } else if (d === 'merge') {
      // Merging is what a list element gets anyway.
      const { [DIRECTIVE]: _, ...plain } = m;
      rest.push(plain);
    } else {
      throw bad(`unknown patch type: ${goFormat(d)} in map: ${goFormat(m)}`);
    }
  }
  return replace ? [rest, []] : [original, rest];
}

function noMergeKey(m: unknown, mk: string): string {
  return `map: ${goFormat(m)} does not contain declared merge key: ${mk}`;
}

function mergeByKey(original: unknown[], patch: unknown[], mk: string, item: Schema | undefined, ctx: Ctx): unknown[] {
  const out = [...original];
  const where = new Map<string, number>();
  out.forEach((o, i) => {
    const k = identity(o, mk);
    if (k !== undefined && !where.has(k)) where.set(k, i);
  });
  for (const v of patch) {
    const m = v as Json;
    if (!hasOwn(m, mk)) throw bad(noMergeKey(m, mk));
    const idx = where.get(identity(m, mk)!);
    if (idx !== undefined) out[idx] = mergeMap(out[idx] as Json, m, item, ctx);
    else {
      where.set(identity(m, mk)!, out.length);
      out.push(fresh(m, item, ctx));
    }
  }
  return out;
}

function sameItem(a: unknown, b: unknown, mk: string): boolean {
  if (!mk) return deepEqual(a, b);
  if (!isObject(a) || !isObject(b)) return false;
  if (!hasOwn(a, mk)) throw bad(noMergeKey(a, mk));
  if (!hasOwn(b, mk)) throw bad(noMergeKey(b, mk));
  return deepEqual(a[mk], b[mk]);
}

/** What identifies an item: its merge key's value (maps), or the value itself (primitives). */
function identity(v: unknown, mk: string): string | undefined {
  if (!mk) return goJSON(v);
  return isObject(v) && hasOwn(v, mk) ? goJSON(v[mk]) : undefined;
}

/** A lookup of first positions in a list, by identity (-1 when absent). */
function positions(list: unknown[], mk: string): (v: unknown) => number {
  const at = new Map<string, number>();
  list.forEach((x, i) => {
    const k = identity(x, mk);
    if (k !== undefined && !at.has(k)) at.set(k, i);
  });
  return (v) => {
    const k = identity(v, mk);
    return k === undefined ? -1 : at.get(k) ?? -1;
  };
}

/** Splits the merged items into those present in `by` and the server-only rest. */
function partition(merged: unknown[], by: unknown[], mk: string): [unknown[], unknown[]] {
  const inBy: unknown[] = [];
  const rest: unknown[] = [];
  const pos = positions(by, mk);
  for (const v of merged) {
    if (mk && !(isObject(v) && hasOwn(v, mk))) throw bad(noMergeKey(v, mk));
    (pos(v) >= 0 ? inBy : rest).push(v);
  }
  return [inBy, rest];
}

function splitDeletes(list: unknown[]): [unknown[], unknown[]] {
  const keep: unknown[] = [];
  const del: unknown[] = [];
  for (const v of list) (isObject(v) && v[DIRECTIVE] === 'delete' ? del : keep).push(v);
  return [keep, del];
}

/** Sorts a list by positions in `order` (stable; items not found keep their place after the found ones). */
function sortByOrder(list: unknown[], order: unknown[], mk: string): unknown[] {
  const at = positions(order, mk);
  const pos = list.map((v, i) => ({ v, i, p: at(v) }));
  pos.sort((a, b) => (a.p >= 0 && b.p >= 0 ? a.p - b.p : a.p >= 0 ? -1 : b.p >= 0 ? 1 : a.i - b.i));
  return pos.map((x) => x.v);
}

/**
 * Orders the patch items by `patchOrder` and the server-only items by `serverOrder`, then interleaves
 * them: a server-only item goes first only when both it and the next patch item are in the live
 * list and it was before it there.
 */
function normalizeOrder(inPatch: unknown[], serverOnly: unknown[], patchOrder: unknown[], serverOrder: unknown[], mk: string, kind: string): unknown[] {
  const key = kind === 'map' ? mk : '';
  let right = inPatch;
  let left = serverOnly;
  if (kind === 'map') {
    for (const v of [...right, ...left, ...patchOrder]) if (!(isObject(v) && hasOwn(v, mk))) throw bad(noMergeKey(v, mk));
    const [keepR, delR] = splitDeletes(right);
    const [keepL, delL] = splitDeletes(left);
    right = [...sortByOrder(keepR, patchOrder, key), ...delR];
    left = [...sortByOrder(keepL, serverOrder, key), ...delL];
  } else {
    right = sortByOrder(right, patchOrder, key);
    left = sortByOrder(left, serverOrder, key);
  }
  const out: unknown[] = [];
  const live = positions(serverOrder, key);
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = live(left[i]);
      const ri = live(right[j]);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}
