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
import type { KObject } from '../../kernel/contracts/index.js';
import { type FieldSet, difference, fieldsOf, fromFieldsV1, has, intersection, isEmpty, newSet, paths, pathToString, recursiveDifference, union, ensureNamedFieldsAreMembers } from './fieldset.js';
import type { PatchErrorData } from './json-patch.js';
import { clone, compareStrings, deepEqual, fieldSchema, goJSON, hasOwn, isObject, resolve, utf8Length } from './schema.js';
import { type ManagedFieldsEntry, type Conflict, type ApplyInput, type ApplyResult, type UpdateInput, type Owners, type Ctx, MAX_UPDATE_MANAGERS, ANCIENT_CHANGES, TOTAL_ANNOTATION_SIZE_LIMIT, ownerId, decodeManagedFields, str, seconds, encodeManagedFields, formatTime, STRIPPED, reconcileOwners, withoutManagedFields } from './managed-fields.js';
import { mergeNode, compareObjects, removeItems } from './walk.js';


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
