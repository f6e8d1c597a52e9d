// Server-side apply and managed-fields bookkeeping (spec "Server-side apply", rules 1-14).
//
// Ownership is a FieldSet per manager entry. An entry is identified by manager name, operation and
// sub-resource, plus the apiVersion for Update entries (an applier keeps one entry across versions).
// The algorithms follow the reference server's field manager:
// - apply: merge the applied config into live (applied wins), record the config's field set as
//   the applier's, prune what the applier owned last time and no longer sets unless someone still
//   owns it, then compare live with the result: another manager owning a field whose value changed
//   or appeared is a conflict (force moves it to the applier), removed fields leave every entry;
// - update: compare old with new; changed and added fields move to the writer's Update entry.
import type { KObject, Schema } from '../../kernel/contracts/index.js';
import { StatusError, type StatusBody } from '../../kernel/contracts/status.js';
import {
  type FieldSet, type FieldsV1, type Path, difference, fieldPE, fieldsOf, fromFieldsV1, has, insert, intersection,
  isEmpty, lenientKeyPE, newSet, paths, pathToString, reconcileWithSchema, recursiveDifference, setOf, toFieldsV1, union,
  valuePE, ensureNamedFieldsAreMembers, goQuote,
} from './fieldset.js';
import { depthError, MAX_DEPTH } from '../decode.js';
import type { PatchErrorData } from './json-patch.js';
import {
  type Definitions, clone, compareStrings, deepEqual, fieldSchema, goJSON, hasOwn, isObject, itemSchema, keysOf, listType, nodeKind,
  present, put, resolve, utf8Length,
} from './schema.js';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: FieldsV1;
  subresource?: string;
}

/** One field another manager owns that the apply would change. */
export interface Conflict {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
  /** The field in the reference's format: `.spec.replicas`. */
  path: string;
  /** The same path as FieldsV1 path elements. */
  pathElements: Path;
}

export interface ApplyInput {
  /** The current object; absent when the apply creates it (rule 1). */
  live?: KObject | null;
  applied: KObject;
  manager: string;
  force?: boolean;
  schema?: Schema;
  definitions?: Definitions;
  /** The request's group/version ("apps/v1"); the applied object must carry the same. */
  apiVersion: string;
  /** When given, the applied object's kind must match it. */
  kind?: string;
  /** Time of the request (RFC 3339); recorded on changed entries at second precision. */
  time: string;
  subresource?: string;
  /** The client tool's default manager name ("kubectl"): enables the client-side apply migration (rule 14). */
  defaultManagerName?: string;
  /** The last-applied annotation parsed; read from live under `lastAppliedAnnotation` when absent. */
  lastApplied?: KObject;
  /** Key of the client-side apply annotation; with it the annotation is kept current (downgrade path). */
  lastAppliedAnnotation?: string;
  /** Fields the endpoint resets (e.g. status on the main resource): nobody gains ownership of them. */
  resetFields?: FieldsV1;
  /** The ServerSideApply feature (rule 13); false refuses apply. */
  serverSideApply?: boolean;
  /** Group of the PatchOptions kind in messages ("meta.k8s.io"). */
  metaGroup?: string;
}

export type ApplyResult =
  | { object: KObject; managedFields: ManagedFieldsEntry[] }
  | { conflicts: Conflict[] }
  | { error: PatchErrorData };

export interface UpdateInput {
  /** The object before the write; absent on create. */
  old?: KObject | null;
  /** The object to be stored (its metadata.managedFields as the client sent it). */
  next: KObject;
  manager: string;
  operation?: 'Update';
  apiVersion: string;
  schema?: Schema;
  definitions?: Definitions;
  time: string;
  subresource?: string;
  resetFields?: FieldsV1;
  serverSideApply?: boolean;
  /** Update entries kept before the oldest are folded into "ancient-changes" (10 in the reference). */
  maxUpdateManagers?: number;
}

interface Owner {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  subresource?: string;
  set: FieldSet;
}
type Owners = Map<string, Owner>;
type Ctx = { schema?: Schema; defs: Definitions };

export const MAX_UPDATE_MANAGERS = 10;
export const ANCIENT_CHANGES = 'ancient-changes';
const FIELD_MANAGER_MAX_LENGTH = 128;
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

// ---------------------------------------------------------------- managed fields entries

function ownerId(manager: string, operation: string, apiVersion: string, subresource?: string): string {
  // Appliers keep one entry whatever version they apply with.
  return JSON.stringify([manager, operation, operation === 'Apply' ? '' : apiVersion, subresource ?? '']);
}

const idOf = (o: Owner) => ownerId(o.manager, o.operation, o.apiVersion, o.subresource);

/** Decodes metadata.managedFields; throws with the reference's wording on a malformed entry. */
export function decodeManagedFields(list: unknown): Owners {
  const owners: Owners = new Map();
  if (list === undefined || list === null) return owners;
  if (!Array.isArray(list)) throw new Error('managedFields must be a list');
  // Entries nested past the body limit (stored before it was enforced on every decode path) are
  // undecodable: the caller drops them, as the reference drops managed fields it cannot decode.
  // (an object within the limit has field sets a few levels deeper than itself)
  const deep = depthError(list, MAX_DEPTH + 8);
  if (deep) throw new Error(deep);
  for (const e of list) {
    if (!isObject(e)) throw new Error('managed fields entry must be an object');
    if (!e.fieldsType) throw new Error('missing fieldsType in managed fields entry');
    if (e.fieldsType !== 'FieldsV1') throw new Error(`invalid fieldsType ${goQuote(String(e.fieldsType))} in managed fields entry`);
    const o: Owner = {
      manager: str(e.manager),
      operation: str(e.operation) as Owner['operation'],
      apiVersion: str(e.apiVersion),
      set: e.fieldsV1 === undefined || e.fieldsV1 === null ? newSet() : fromFieldsV1(e.fieldsV1),
    };
    if (typeof e.time === 'string' && e.time) o.time = e.time;
    if (typeof e.subresource === 'string' && e.subresource) o.subresource = e.subresource;
    owners.set(idOf(o), o);
  }
  return owners;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

function seconds(t?: string): number {
  const ms = t ? Date.parse(t) : NaN;
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/** The entries in the reference's order: Apply before Update, then by time, manager, version, sub-resource. */
export function encodeManagedFields(owners: Owners): ManagedFieldsEntry[] {
  const list = [...owners.values()].filter((o) => !isEmpty(o.set));
  list.sort((p, q) =>
    compareStrings(p.operation, q.operation) || seconds(p.time) - seconds(q.time) || compareStrings(p.manager, q.manager) ||
    compareStrings(p.apiVersion, q.apiVersion) || compareStrings(p.subresource ?? '', q.subresource ?? ''));
  return list.map((o) => {
    const e: ManagedFieldsEntry = { manager: o.manager, operation: o.operation, apiVersion: o.apiVersion } as ManagedFieldsEntry;
    if (o.time) e.time = o.time;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = toFieldsV1(o.set);
    if (o.subresource) e.subresource = o.subresource;
    return e;
  });
}

/** RFC 3339 at second precision in UTC, as managed fields record time. */
export function formatTime(t: string | number | Date): string {
  const d = t instanceof Date ? t : new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toISOString().replace(/\.\d+Z$/, 'Z');
}

/** Paths the server manages itself: never owned by anyone (exact paths, not their children). */
const STRIPPED = setOf(
  [fieldPE('apiVersion')], [fieldPE('kind')], [fieldPE('metadata')],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion']
    .map((f) => [fieldPE('metadata'), fieldPE(f)]),
);

function reconcileOwners(owners: Owners, ctx: Ctx): Owners {
  const out: Owners = new Map();
  for (const [id, o] of owners) out.set(id, { ...o, set: reconcileWithSchema(o.set, ctx.schema, ctx.defs) });
  return out;
}

/** The object without metadata.managedFields (ownership is never part of the compared content). */
function withoutManagedFields(obj: KObject | null | undefined): Record<string, unknown> {
  if (!isObject(obj)) return {};
  if (!isObject(obj.metadata) || !hasOwn(obj.metadata, 'managedFields')) return obj;
  const { managedFields: _, ...meta } = obj.metadata;
  return { ...obj, metadata: meta };
}

// ---------------------------------------------------------------- walking two values

/** How a schema node applies to a pair of values (a mismatch of shapes is handled as a leaf). */
function kindFor(schema: Schema | undefined, ctx: Ctx, l: unknown, r: unknown): 'leaf' | 'map' | 'set' | 'mapList' {
  let kind = nodeKind(schema, ctx.defs);
  if (kind === 'deduced') kind = isObject(l) || isObject(r) ? 'map' : 'leaf';
  if (kind === 'leaf') return 'leaf';
  const fits = kind === 'map' ? (v: unknown) => v === undefined || v === null || isObject(v) : (v: unknown) => v === undefined || v === null || Array.isArray(v);
  return fits(l) && fits(r) ? kind : 'leaf';
}

/** A container value with null read as empty (the reference treats a null list or map as empty). */
const asMap = (v: unknown) => (isObject(v) ? v : undefined);
const asList = (v: unknown) => (Array.isArray(v) ? v : undefined);
const isEmptyContainer = (v: unknown) => v === undefined || v === null || (Array.isArray(v) ? !v.length : isObject(v) && !keysOf(v).length);

function peOf(schema: Schema | undefined, ctx: Ctx): (v: unknown) => string {
  const lt = listType(schema, ctx.defs);
  const item = itemSchema(schema, ctx.defs);
  return lt.type === 'map' ? (v) => lenientKeyPE(v, lt.keys, item, ctx.defs) : (v) => valuePE(v);
}

interface Pair {
  pe: string;
  l: unknown;
  r: unknown;
}

/**
 * Pairs the items of two keyed lists in the order the merged list takes: shared items in the
 * applied order, live-only items kept where they were relative to them, new items where applied.
 */
function zipList(lhs: unknown[], rhs: unknown[], pe: (v: unknown) => string): Pair[] {
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

function mergeNode(l: unknown, r: unknown, ctx: Ctx): unknown {
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

function compareNode(l: unknown, r: unknown, ctx: Ctx, path: Path, out: Comparison): void {
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
      compareNode(lm[k], present(rm, k) ? rm[k] : undefined, { schema: fieldSchema(ctx.schema, k, ctx.defs), defs: ctx.defs }, [...path, fieldPE(k)], out);
    }
    for (const k of keysOf(rm)) {
      if (!present(lm, k)) compareNode(undefined, rm[k], { schema: fieldSchema(ctx.schema, k, ctx.defs), defs: ctx.defs }, [...path, fieldPE(k)], out);
    }
  } else {
    const item = { schema: itemSchema(ctx.schema, ctx.defs), defs: ctx.defs };
    for (const p of zipList(asList(l) ?? [], asList(r) ?? [], peOf(ctx.schema, ctx))) compareNode(p.l, p.r, item, [...path, p.pe], out);
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

function removeNode(v: unknown, set: FieldSet, ctx: Ctx): unknown {
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

// ---------------------------------------------------------------- ownership updates

/**
 * Moves ownership after `live` became `next`: changed or added fields leave every other entry
 * (as conflicts when not forced), removed fields leave every entry; empty entries are dropped.
 */
function settleOwnership(live: unknown, next: unknown, owners: Owners, writer: string, force: boolean, reset: FieldSet, ctx: Ctx):
  { owners: Owners; changed: FieldSet } | { conflicts: Conflict[] } {
  const cmp = compareObjects(live, next, ctx.schema, ctx.defs);
  const changed = recursiveDifference(union(cmp.modified, cmp.added), reset);
  const removed = recursiveDifference(cmp.removed, reset);
  const conflicts: Conflict[] = [];
  for (const [id, o] of owners) {
    if (id === writer) continue;
    for (const p of paths(intersection(o.set, changed))) {
      conflicts.push({ manager: o.manager, operation: o.operation, apiVersion: o.apiVersion, ...(o.subresource ? { subresource: o.subresource } : {}), path: pathToString(p), pathElements: p });
    }
  }
  if (!force && conflicts.length) return { conflicts: sortConflicts(conflicts) };
  const out: Owners = new Map();
  for (const [id, o] of owners) {
    const set = id === writer ? o.set : difference(difference(o.set, changed), removed);
    if (!isEmpty(set)) out.set(id, { ...o, set });
  }
  return { owners: out, changed };
}

function sortConflicts(cs: Conflict[]): Conflict[] {
  const key = (c: Conflict) => ownerId(c.manager, c.operation, c.apiVersion, c.subresource);
  // Stable: paths keep the set's order within one manager.
  return cs.map((c, i) => ({ c, i })).sort((a, b) => compareStrings(key(a.c), key(b.c)) || a.i - b.i).map((x) => x.c);
}

/**
 * Rule 6: removes what the applier set last time and no longer sets, unless another entry (or the
 * applier's new config) still owns it; fields never applied by this applier are never removed.
 */
function prune(merged: unknown, owners: Owners, last: FieldSet | undefined, ctx: Ctx): unknown {
  if (!last || isEmpty(last)) return merged;
  const ens = (s: FieldSet) => ensureNamedFieldsAreMembers(s, ctx.schema, ctx.defs);
  const setOfValue = (v: unknown) => ens(fieldsOf(v, ctx.schema, ctx.defs));
  const lastE = ens(last);
  let pruned = removeItems(merged, lastE, ctx.schema, ctx.defs);
  // Add back anything that somebody owns.
  let managed = newSet();
  for (const o of owners.values()) managed = union(managed, o.set);
  const mergedSet = setOfValue(merged);
  pruned = removeItems(merged, difference(mergedSet, union(setOfValue(pruned), ens(managed))), ctx.schema, ctx.defs);
  // Add back anything the applier never owned (unowned or defaulted content stays).
  return removeItems(merged, intersection(difference(mergedSet, setOfValue(pruned)), lastE), ctx.schema, ctx.defs);
}

/** The writer's own fields without the server-managed metadata; an entry left empty is dropped. */
function stripOwner(owners: Owners, id: string): void {
  const o = owners.get(id);
  if (!o) return;
  const set = difference(o.set, STRIPPED);
  if (isEmpty(set)) owners.delete(id);
  else owners.set(id, { ...o, set });
}

// ---------------------------------------------------------------- apply

const err = (code: number, reason: string, message: string): { error: PatchErrorData } => ({ error: { code, reason, message } });

function gvkString(obj: KObject): string {
  const av = str(obj.apiVersion);
  const slash = av.indexOf('/');
  const group = slash >= 0 ? av.slice(0, slash) : '';
  const version = slash >= 0 ? av.slice(slash + 1) : av;
  return `${group}/${version}, Kind=${str(obj.kind)}`;
}

export function apply(request: ApplyInput): ApplyResult {
  const ctx: Ctx = { schema: request.schema, defs: request.definitions };
  const pre = checkApplied(request);
  if (pre) return pre;
  // Work on a clean copy of the config: JSON-shaped, without undefined-valued keys.
  const input = { ...request, applied: clone(request.applied) };
  const { applied } = input;
  const errors: string[] = [];
  const appliedSet = fieldsOf(applied, ctx.schema, ctx.defs, errors);
  if (errors.length) {
    const meta = isObject(applied.metadata) ? applied.metadata : {};
    const what = `${str(meta.namespace)}/${str(meta.name)}; ${gvkString(applied)}`;
    return err(500, '', `failed to create typed patch object (${what}): ${errors.length === 1 ? errors[0] : `errors:\n  ${errors.join('\n  ')}`}`);
  }
  let owners: Owners;
  try {
    owners = reconcileOwners(decodeManagedFields(input.live?.metadata?.managedFields), ctx);
  } catch (e) {
    return err(500, '', `failed to decode managed fields: ${(e as Error).message}`);
  }
  const live = withoutManagedFields(input.live);
  const reset = input.resetFields ? fromFieldsV1(input.resetFields) : newSet();
  const id = ownerId(input.manager, 'Apply', input.apiVersion, input.subresource);
  let res = applyOnce(live, input, appliedSet, owners, id, !!input.force, reset, ctx);
  if ('conflicts' in res && migratesClientSideApply(input)) {
    // Rule 14: conflicts on fields the last client-side apply set (to their live values) are the
    // same intent moving to server-side apply: take them; any other conflict still fails.
    const allowed = lastAppliedFields(input, live, ctx);
    const rest = allowed ? res.conflicts.filter((c) => !has(allowed, c.pathElements)) : res.conflicts;
    if (rest.length) return { conflicts: rest };
    res = applyOnce(live, input, appliedSet, owners, id, true, reset, ctx);
  }
  if ('conflicts' in res) return res;
  const { object, owners: after } = res;
  const entry = after.get(id);
  if (entry) {
    // The entry's time moves only when the apply changed the object: an apply that changes nothing
    // keeps the time the manager had, and a new manager's entry then has none (as the reference's).
    const before = owners.get(id)?.time;
    entry.time = !deepEqual(live, object) ? formatTime(input.time) : before;
  }
  stripOwner(after, id);
  const managedFields = encodeManagedFields(after);
  // The merged value shares parts with the inputs: copy before writing metadata into it.
  const out = clone(object) as KObject;
  setManagedFields(out, managedFields);
  keepLastAppliedCurrent(out, input);
  return { object: out, managedFields };
}

/** Refusals before any merging: feature off, no manager, wrong kind or version, managedFields sent. */
function checkApplied(input: ApplyInput): { error: PatchErrorData } | undefined {
  const { applied } = input;
  if (input.serverSideApply === false) {
    return err(415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json');
  }
  if (!input.manager) {
    return err(422, 'Invalid', `PatchOptions.${input.metaGroup ?? 'meta.k8s.io'} "" is invalid: fieldManager: Required value: is required for apply patch`);
  }
  if (!isObject(applied)) return err(400, 'BadRequest', 'error decoding YAML: the applied configuration must be an object');
  if (input.kind !== undefined && (str(applied.apiVersion) !== input.apiVersion || str(applied.kind) !== input.kind)) {
    return err(400, 'BadRequest', `invalid object type: ${gvkString(applied)}`);
  }
  if (str(applied.apiVersion) !== input.apiVersion) {
    return err(400, 'BadRequest', `Incorrect version specified in apply patch. Specified patch version: ${str(applied.apiVersion)}, expected: ${input.apiVersion}`);
  }
  // Rule 7: ownership is the server's record; an applied config may not carry it.
  if (isObject(applied.metadata) && Array.isArray(applied.metadata.managedFields)) {
    return err(400, 'BadRequest', 'metadata.managedFields must be nil');
  }
  // Anything else but null there cannot be read as the typed object: refused too, never ignored.
  const mf = isObject(applied.metadata) ? applied.metadata.managedFields : undefined;
  if (mf !== undefined && mf !== null) {
    return err(400, 'BadRequest', `failed to create typed patch object (${gvkString(applied)}): .metadata.managedFields: expected list, got ${JSON.stringify(mf)}`);
  }
  return undefined;
}

function applyOnce(live: unknown, input: ApplyInput, appliedSet: FieldSet, owners: Owners, id: string, force: boolean, reset: FieldSet, ctx: Ctx):
  { object: unknown; owners: Owners } | { conflicts: Conflict[] } {
  const merged = mergeNode(live, clone(input.applied), ctx);
  const last = owners.get(id)?.set;
  const next: Owners = new Map(owners);
  next.set(id, {
    manager: input.manager, operation: 'Apply', apiVersion: input.apiVersion, time: owners.get(id)?.time,
    ...(input.subresource ? { subresource: input.subresource } : {}),
    set: recursiveDifference(appliedSet, reset),
  });
  const object = prune(merged, next, last, ctx);
  const settled = settleOwnership(live, object, next, id, force, reset, ctx);
  if ('conflicts' in settled) return settled;
  return { object, owners: settled.owners };
}

function setManagedFields(obj: KObject, entries: ManagedFieldsEntry[]): void {
  const meta = isObject(obj.metadata) ? obj.metadata : (obj.metadata = {});
  if (entries.length) meta.managedFields = entries;
  else delete meta.managedFields;
}

// ---------------------------------------------------------------- rule 14: client-side apply

function migratesClientSideApply(input: ApplyInput): boolean {
  return !!input.defaultManagerName && input.manager === input.defaultManagerName;
}

function readLastApplied(input: ApplyInput): KObject | undefined {
  if (input.lastApplied) return input.lastApplied;
  const raw = input.lastAppliedAnnotation ? input.live?.metadata?.annotations?.[input.lastAppliedAnnotation] : undefined;
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw);
    return isObject(v) ? (v as KObject) : undefined;
  } catch {
    return undefined;
  }
}

/** The fields of the last-applied configuration whose values the live object still has. */
function lastAppliedFields(input: ApplyInput, live: unknown, ctx: Ctx): FieldSet | undefined {
  const last = readLastApplied(input);
  if (!last || last.apiVersion !== input.apiVersion) return undefined;
  const cmp = compareObjects(last, live, ctx.schema, ctx.defs);
  return difference(difference(difference(fieldsOf(last, ctx.schema, ctx.defs), cmp.modified), cmp.added), cmp.removed);
}

/**
 * After a server-side apply by the default client manager, an existing last-applied annotation is
 * rewritten to this config so a later client-side apply computes its patch from it (downgrade).
 */
function keepLastAppliedCurrent(obj: KObject, input: ApplyInput): void {
  const key = input.lastAppliedAnnotation;
  const annotations = obj.metadata?.annotations;
  if (!key || !migratesClientSideApply(input) || !isObject(annotations) || !hasOwn(annotations, key)) return;
  const cfg = clone(input.applied);
  if (isObject(cfg.metadata) && isObject(cfg.metadata.annotations)) delete cfg.metadata.annotations[key];
  // Encoded as the reference encodes it: keys sorted, a trailing newline.
  annotations[key] = goJSON(cfg) + '\n';
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) total += utf8Length(k) + utf8Length(String(v));
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) delete annotations[key];
}

// ---------------------------------------------------------------- update

/** Rule 10: a list holding one empty entry clears all ownership. */
export function isResetManagedFields(v: unknown): boolean {
  if (!Array.isArray(v) || v.length !== 1 || !isObject(v[0])) return false;
  const e = v[0];
  return ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1', 'subresource', 'fields']
    .every((k) => e[k] === undefined || e[k] === null || e[k] === '');
}

function decodeOr(list: unknown, fallback: () => Owners): Owners {
  try {
    const owners = decodeManagedFields(list);
    return owners.size ? owners : fallback();
  } catch {
    return fallback();
  }
}

/**
 * The object as the reference's typed objects always hold it: metadata and the top-level spec and
 * status structs exist (possibly empty), so writing the first field into one does not count the
 * struct itself as added.
 */
function withTopStructs(obj: Record<string, unknown>, ctx: Ctx): Record<string, unknown> {
  const out: Record<string, unknown> = { ...obj };
  for (const f of ['metadata', 'spec', 'status']) {
    if (out[f] !== undefined && out[f] !== null) continue;
    const s = resolve(fieldSchema(ctx.schema, f, ctx.defs), ctx.defs);
    if (f === 'metadata' || (s && s.type === 'object' && s.fields)) out[f] = {};
  }
  return out;
}

/**
 * The managedFields after a create, update or non-apply patch: fields whose values changed or were
 * added move to the writer's Update entry for this apiVersion (removed from everyone else), removed
 * fields leave every entry, and entries that own nothing disappear.
 */
export function updateManagedFields(input: UpdateInput): ManagedFieldsEntry[] {
  if (input.serverSideApply === false) return [];
  const ctx: Ctx = { schema: input.schema, defs: input.definitions };
  const fromOld = () => decodeOr(input.old?.metadata?.managedFields, () => new Map());
  const sent = input.next.metadata?.managedFields;
  // Sub-resources never take managedFields from the request (rule 12); an empty or undecodable list
  // keeps the stored entries; one empty entry resets them (rule 10).
  let owners: Owners;
  if (input.subresource) owners = fromOld();
  else if (isResetManagedFields(sent)) owners = new Map();
  else owners = decodeOr(sent, fromOld);
  owners = reconcileOwners(owners, ctx);

  const before = withTopStructs(withoutManagedFields(input.old), ctx);
  const after = withTopStructs(withoutManagedFields(input.next), ctx);
  const reset = input.resetFields ? fromFieldsV1(input.resetFields) : newSet();
  const settled = settleOwnership(before, after, owners, '', true, reset, ctx);
  if ('conflicts' in settled) return encodeManagedFields(owners); // unreachable: forced
  const next = settled.owners;
  const mine = difference(settled.changed, STRIPPED);
  if (!isEmpty(mine)) {
    const id = ownerId(input.manager, 'Update', input.apiVersion, input.subresource);
    const prev = next.get(id);
    next.set(id, {
      manager: input.manager, operation: 'Update', apiVersion: input.apiVersion, time: formatTime(input.time),
      ...(input.subresource ? { subresource: input.subresource } : {}),
      set: prev ? union(mine, prev.set) : mine,
    });
  }
  capUpdateManagers(next, input.maxUpdateManagers ?? MAX_UPDATE_MANAGERS);
  return encodeManagedFields(next);
}

/** Folds the oldest Update entries, per apiVersion, into "ancient-changes" until at most `max` remain. */
function capUpdateManagers(owners: Owners, max: number): void {
  const updaters = [...owners.entries()].filter(([, o]) => o.operation === 'Update');
  if (updaters.length <= max) return;
  updaters.sort(([ia, a], [ib, b]) => seconds(a.time) - seconds(b.time) || compareStrings(ia, ib));
  const firstOfVersion = new Map<string, string>();
  let count = updaters.length;
  for (let i = 0; i < updaters.length && count > max; i++) {
    const [id, o] = updaters[i];
    const bucket = ownerId(ANCIENT_CHANGES, 'Update', o.apiVersion);
    const first = firstOfVersion.get(o.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(o.apiVersion, id);
      continue;
    }
    const base = owners.get(bucket) ?? owners.get(first)!;
    owners.delete(first);
    owners.delete(id);
    owners.set(bucket, { manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: o.apiVersion, time: o.time, set: union(o.set, base.set) });
    count--;
  }
}

// ---------------------------------------------------------------- conflict errors

/** A manager as the reference names it in conflict messages. */
export function describeManager(c: Pick<Conflict, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  let s = goQuote(c.manager);
  if (c.subresource) s += ` with subresource ${goQuote(c.subresource)}`;
  if (c.operation === 'Update') s += ` using ${c.apiVersion}`;
  return s;
}

export function conflictMessage(conflicts: Conflict[]): string {
  if (conflicts.length === 1) {
    return `Apply failed with 1 conflict: conflict with ${describeManager(conflicts[0])}: ${conflicts[0].path}`;
  }
  const byManager = new Map<string, Conflict[]>();
  for (const c of conflicts) {
    const k = ownerId(c.manager, c.operation, c.apiVersion, c.subresource);
    byManager.set(k, [...(byManager.get(k) ?? []), c]);
  }
  const lines: string[] = [];
  for (const k of [...byManager.keys()].sort(compareStrings)) {
    const group = byManager.get(k)!;
    lines.push(`conflicts with ${describeManager(group[0])}:`);
    for (const c of group) lines.push(`- ${c.path}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

function conflictCauses(conflicts: Conflict[]) {
  return conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${describeManager(c)}`, field: c.path }));
}

/** The reference's 409 Status body for apply conflicts (details carry only the causes). */
export function conflictStatus(conflicts: Conflict[]): StatusBody {
  return {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: conflictMessage(conflicts), reason: 'Conflict', details: { causes: conflictCauses(conflicts) }, code: 409,
  };
}

export function conflictError(conflicts: Conflict[]): StatusError {
  return new StatusError(409, 'Conflict', conflictMessage(conflicts), { causes: conflictCauses(conflicts) });
}

// ---------------------------------------------------------------- manager names

/** The default manager of a non-apply write: the User-Agent's program name, printable, at most 128 bytes. */
export function managerFromUserAgent(userAgent: string): string {
  let out = '';
  let bytes = 0;
  for (const ch of userAgent.split('/')[0]) {
    if (!/^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch)) continue;
    const n = utf8Length(ch);
    if (bytes + n > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
    bytes += n;
  }
  return out;
}
