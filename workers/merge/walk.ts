// Walking a live value and an applied or updated one side by side, as the schema says each node
// merges (leaf, map, set, or list of maps keyed by the list's keys): merge, compare, remove.
import type { Schema } from '../../kernel/contracts/index.js';
import { type FieldSet, type Path, fieldPE, insert, isEmpty, lenientKeyPE, newSet, valuePE } from './fieldset.js';
import { type Definitions, deepEqual, fieldSchema, isObject, itemSchema, keysOf, listType, nodeKind, present, put } from './schema.js';
import { type Ctx } from './managed-fields.js';


// ---------------------------------------------------------------- walking two values

/** How a schema node applies to a pair of values (a mismatch of shapes is handled as a leaf). */
export function kindFor(schema: Schema | undefined, ctx: Ctx, l: unknown, r: unknown): 'leaf' | 'map' | 'set' | 'mapList' {
  let kind = nodeKind(schema, ctx.defs);
  if (kind === 'deduced') kind = isObject(l) || isObject(r) ? 'map' : 'leaf';
  if (kind === 'leaf') return 'leaf';
  const fits = kind === 'map' ? (v: unknown) => v === undefined || v === null || isObject(v) : (v: unknown) => v === undefined || v === null || Array.isArray(v);
  return fits(l) && fits(r) ? kind : 'leaf';
}

/** A container value with null read as empty (the reference treats a null list or map as empty). */
export const asMap = (v: unknown) => (isObject(v) ? v : undefined);
export const asList = (v: unknown) => (Array.isArray(v) ? v : undefined);
export const isEmptyContainer = (v: unknown) => v === undefined || v === null || (Array.isArray(v) ? !v.length : isObject(v) && !keysOf(v).length);

export function peOf(schema: Schema | undefined, ctx: Ctx): (v: unknown) => string {
  const lt = listType(schema, ctx.defs);
  const item = itemSchema(schema, ctx.defs);
  return lt.type === 'map' ? (v) => lenientKeyPE(v, lt.keys, item, ctx.defs) : (v) => valuePE(v);
}

export interface Pair {
  pe: string;
  l: unknown;
  r: unknown;
}

/**
 * Pairs the items of two keyed lists in the order the merged list takes: shared items in the
 * applied order, live-only items kept where they were relative to them, new items where applied.
 */
export function zipList(lhs: unknown[], rhs: unknown[], pe: (v: unknown) => string): Pair[] {
  const lPEs = lhs.map(pe);
  const rPEs = rhs.map(pe);
  const obsL = new Map<string, unknown>();
  const obsR = new Map<string, unknown>();
  lPEs.forEach((p, i) => obsL.has(p) || obsL.set(p, lhs[i]));
  rPEs.forEach((p, i) => obsR.has(p) || obsR.set(p, rhs[i]));
  const shared = rPEs.filter((p) => obsL.has(p));
  let next = shared.shift();
  const merged = new Set<string>();
  const out: Pair[] = [];
  let li = 0;
  let ri = 0;
  while (li < lhs.length || ri < rhs.length) {
    if (li < lhs.length && ri < rhs.length) {
      const p = lPEs[li];
      if (p === rPEs[ri]) {
        merged.add(p);
        out.push({ pe: p, l: obsL.get(p), r: obsR.get(p) });
        li++;
        ri++;
        next = shared.shift();
        continue;
      }
      // A shared item that comes later in the applied order: skip it here.
      if (obsR.has(p) && next !== undefined && next !== p) {
        li++;
        continue;
      }
    }
    if (li < lhs.length) {
      const p = lPEs[li];
      if (!obsR.has(p)) {
        out.push({ pe: p, l: lhs[li], r: undefined });
        li++;
        continue;
      }
      if (merged.has(p)) {
        li++;
        continue;
      }
    }
    if (ri < rhs.length) {
      const p = rPEs[ri];
      merged.add(p);
      out.push({ pe: p, l: obsL.get(p), r: obsR.get(p) });
      ri++;
      if (next === p) next = shared.shift();
    }
  }
  return out;
}

/** Merges an applied value into a live one: applied wins at leaves, maps and keyed lists merge. */
export function mergeApplied(live: unknown, applied: unknown, schema: Schema | undefined, defs?: Definitions): unknown {
  return mergeNode(live, applied, { schema, defs });
}

export function mergeNode(l: unknown, r: unknown, ctx: Ctx): unknown {
  if (r === undefined) return l;
  if (l === undefined) return r;
  const kind = kindFor(ctx.schema, ctx, l, r);
  // Both empty: keep the applied form (preserves the null / empty distinction).
  if (kind === 'leaf' || (isEmptyContainer(l) && isEmptyContainer(r))) return r;
  if (kind === 'map') {
    const lm = asMap(l) ?? {};
    const rm = asMap(r) ?? {};
    const out: Record<string, unknown> = {};
    for (const k of keysOf(lm)) {
      const v = mergeNode(lm[k], rm[k], { schema: fieldSchema(ctx.schema, k, ctx.defs), defs: ctx.defs });
      if (v !== undefined) put(out, k, v);
    }
    for (const k of keysOf(rm)) if (!present(lm, k)) put(out, k, rm[k]);
    return out;
  }
  const item = { schema: itemSchema(ctx.schema, ctx.defs), defs: ctx.defs };
  return zipList(asList(l) ?? [], asList(r) ?? [], peOf(ctx.schema, ctx))
    .map((p) => mergeNode(p.l, p.r, item))
    .filter((v) => v !== undefined);
}

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** Which fields an object change added, modified (leaves) and removed, per the schema. */
export function compareObjects(before: unknown, after: unknown, schema: Schema | undefined, defs?: Definitions): Comparison {
  const out: Comparison = { added: newSet(), modified: newSet(), removed: newSet() };
  compareNode(before, after, { schema, defs }, [], out);
  return out;
}

/** `path`: where l and r are; extended and restored in place (one array for the whole walk: every write's managed fields walk the object). */
export function compareNode(l: unknown, r: unknown, ctx: Ctx, path: Path, out: Comparison): void {
  const kind = kindFor(ctx.schema, ctx, l, r);
  if (kind === 'leaf' || (isEmptyContainer(l) && isEmptyContainer(r))) {
    if (l === undefined) insert(out.added, path);
    else if (r === undefined) insert(out.removed, path);
    else if (!deepEqual(l, r)) insert(out.modified, path);
    return;
  }
  if (kind === 'map') {
    const lm = asMap(l) ?? {};
    const rm = asMap(r) ?? {};
    for (const k of keysOf(lm)) {
      path.push(fieldPE(k));
      compareNode(lm[k], present(rm, k) ? rm[k] : undefined, { schema: fieldSchema(ctx.schema, k, ctx.defs), defs: ctx.defs }, path, out);
      path.pop();
    }
    for (const k of keysOf(rm)) {
      if (present(lm, k)) continue;
      path.push(fieldPE(k));
      compareNode(undefined, rm[k], { schema: fieldSchema(ctx.schema, k, ctx.defs), defs: ctx.defs }, path, out);
      path.pop();
    }
  } else {
    const item = { schema: itemSchema(ctx.schema, ctx.defs), defs: ctx.defs };
    for (const p of zipList(asList(l) ?? [], asList(r) ?? [], peOf(ctx.schema, ctx))) {
      path.push(p.pe);
      compareNode(p.l, p.r, item, path, out);
      path.pop();
    }
  }
  // A container that appeared or disappeared as a whole is itself added or removed.
  if (l === undefined) insert(out.added, path);
  else if (r === undefined) insert(out.removed, path);
}

/** The value without the members of `set` (a member removes its whole subtree). */
export function removeItems(v: unknown, set: FieldSet, schema: Schema | undefined, defs?: Definitions): unknown {
  const out = removeNode(v, set, { schema, defs });
  // The object itself always stays, however empty.
  return out === undefined && isObject(v) ? {} : out;
}

export function removeNode(v: unknown, set: FieldSet, ctx: Ctx): unknown {
  const kind = kindFor(ctx.schema, ctx, v, undefined);
  if (kind === 'leaf' || isEmpty(set)) return v;
  if (kind === 'map') {
    const m = asMap(v);
    if (!m) return v;
    const out: Record<string, unknown> = {};
    for (const k of keysOf(m)) {
      const sub = set.c[fieldPE(k)];
      if (sub?.m) continue;
      const val = sub ? removeNode(m[k], sub, { schema: fieldSchema(ctx.schema, k, ctx.defs), defs: ctx.defs }) : m[k];
      if (val !== undefined) put(out, k, val);
    }
    // A map emptied by removal disappears, as an omitempty field does in the reference's types.
    return Object.keys(out).length || !keysOf(m).length ? out : undefined;
  }
  const list = asList(v);
  if (!list) return v;
  const pe = peOf(ctx.schema, ctx);
  const item = { schema: itemSchema(ctx.schema, ctx.defs), defs: ctx.defs };
  const out: unknown[] = [];
  for (const it of list) {
    const sub = set.c[pe(it)];
    if (sub?.m) continue;
    const val = sub ? removeNode(it, sub, item) : it;
    if (val !== undefined) out.push(val);
  }
  return out.length || !list.length ? out : undefined;
}
