// The pure merge logic of the write path, and one dispatcher taking and returning plain data so a
// worker thread (piscina) can run any of it: `runMergeTask(task)` never throws for bad input; it
// answers `{ ok: false, error: { code, reason, message } }` instead.
import type { KObject, Schema } from '../../kernel/contracts/index.js';
import { apply, updateManagedFields } from './apply.js';
import type { ApplyInput, ApplyResult, ManagedFieldsEntry, UpdateInput } from './managed-fields.js';
import { PatchError, jsonPatch, type JsonPatchLimits, type PatchErrorData } from './json-patch.js';
import { mergePatch } from './merge-patch.js';
import type { Definitions } from './schema.js';
import { strategicMergePatch } from './strategic.js';

export * from './schema.js';
export * from './fieldset.js';
export * from './json-patch.js';
export * from './merge-patch.js';
export * from './strategic.js';
// What apply.ts published before it was split; the helpers managed-fields.ts and walk.ts share with it stay inside.
export type { ApplyInput, ApplyResult, Conflict, ManagedFieldsEntry, UpdateInput } from './managed-fields.js';
export { ANCIENT_CHANGES, MAX_UPDATE_MANAGERS, conflictError, conflictMessage, conflictStatus, decodeManagedFields, describeManager, encodeManagedFields, formatTime, managerFromUserAgent } from './managed-fields.js';
export { compareObjects, mergeApplied, removeItems, type Comparison } from './walk.js';
export * from './apply.js';

export type MergeTask =
  | { op: 'json-patch'; doc: unknown; patch: unknown; limits?: JsonPatchLimits }
  | { op: 'merge-patch'; doc: unknown; patch: unknown }
  | { op: 'strategic'; doc: unknown; patch: unknown; schema?: Schema; definitions?: Definitions }
  | ({ op: 'apply' } & ApplyInput)
  | ({ op: 'update-managed-fields' } & UpdateInput);

export type MergeTaskResult =
  | { ok: true; value: unknown }
  | { ok: true; apply: ApplyResult }
  | { ok: true; managedFields: ManagedFieldsEntry[] }
  | { ok: false; error: PatchErrorData };

export function runMergeTask(task: MergeTask): MergeTaskResult {
  try {
    switch (task.op) {
      case 'json-patch':
        return { ok: true, value: jsonPatch(task.doc, task.patch, task.limits) };
      case 'merge-patch':
        return { ok: true, value: mergePatch(task.doc, task.patch) };
      case 'strategic':
        return { ok: true, value: strategicMergePatch(task.doc, task.patch, task.schema, task.definitions) };
      case 'apply': {
        const { op: _, ...input } = task;
        return { ok: true, apply: apply(input) };
      }
      case 'update-managed-fields': {
        const { op: _, ...input } = task;
        return { ok: true, managedFields: updateManagedFields(input) };
      }
      default:
        return { ok: false, error: { code: 500, reason: '', message: `unknown merge task ${JSON.stringify((task as { op?: unknown }).op)}` } };
    }
  } catch (e) {
    if (e instanceof PatchError) return { ok: false, error: e.toJSON() };
    // Inputs are depth-bounded before they get here; should one still exhaust the stack, it is the input's fault.
    if (e instanceof RangeError) return { ok: false, error: { code: 400, reason: 'BadRequest', message: (e as Error).message } };
    return { ok: false, error: { code: 500, reason: '', message: (e as Error)?.message ?? String(e) } };
  }
}

/** Convenience for callers holding a KObject: the managed fields written into a copy's metadata. */
export function withManagedFields(obj: KObject, entries: ManagedFieldsEntry[]): KObject {
  const meta = { ...(obj.metadata ?? {}) };
  if (entries.length) meta.managedFields = entries;
  else delete meta.managedFields;
  return { ...obj, metadata: meta };
}
