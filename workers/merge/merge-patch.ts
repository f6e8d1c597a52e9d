// JSON merge patch (RFC 7386), as the reference applies it: objects merge key by key, null deletes
// a key, anything else (arrays included) replaces; null-valued keys inside values that are taken
// from the patch are dropped, including inside objects nested in arrays.
import { PatchError } from './json-patch.js';
import { isObject, put } from './schema.js';

export function mergePatch(target: unknown, patch: unknown): unknown {
  // A patch that is null or a scalar is not a merge patch the reference accepts.
  if (patch === null || (typeof patch !== 'object')) throw new PatchError(400, 'Invalid JSON Patch');
  return mergeValue(target, patch);
}

function mergeValue(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return pruneNulls(patch);
  if (!isObject(target)) return pruneNulls(patch);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(target)) put(out, k, target[k]);
  for (const k of Object.keys(patch)) {
    const v = patch[k];
    if (v === null) delete out[k];
    else put(out, k, mergeValue(out[k], v));
  }
  return out;
}

/** A copy without null-valued object keys (array elements that are null stay). */
export function pruneNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(pruneNulls);
  if (!isObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) if (v[k] !== null) put(out, k, pruneNulls(v[k]));
  return out;
}
