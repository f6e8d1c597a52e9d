// Small pure helpers the registry's modules share: JSON answers' headers, the object path helpers,
// and what a body checked on a worker and a merge leave for field validation and ownership.
// Nothing here holds state of a request or knows the Registry class.
import type { KObject, TypeDef } from '../../contracts/index.js';
import { StatusError } from '../../contracts/status.js';
import type { Entry } from '../../store/cache.js';
import type { Accepted } from '../repr/negotiate.js';
import { deepEqual, type FieldsV1 } from '../../../workers/merge/index.js';
import { WORKER_THRESHOLD_BYTES } from '../../../workers/pool.js';
import { depthError } from '../../../workers/body/decode.js';

/**
 * The size a merge or field-set task counts as, to choose inline or a worker: a custom resource's
 * work grows with its depth more than its bytes (3 KiB nested ~490 levels took 20-40 ms inline, one
 * hold), so one nested past 64 levels goes to a worker whatever its size. Only unstructured types
 * are walked for it: every built-in type's depth is bounded by its schema.
 */
export function mergeSize(type: TypeDef, size: number, ...values: unknown[]): number {
  if (!type.unstructured || size >= WORKER_THRESHOLD_BYTES) return size;
  return values.some((v) => depthError(v, 64) !== undefined) ? WORKER_THRESHOLD_BYTES : size;
}

export const JSON_HEADERS = { 'content-type': 'application/json' };
export const JSON_ACCEPTED: Accepted = { rep: 'json', contentType: 'application/json' };

/** The current time in RFC 3339 at second precision; formatted once a second, not once a call (each write asks twice). */
let nowSecond = -1;
let nowText = '';
export function now(): string {
  const s = Math.floor(Date.now() / 1000);
  if (s !== nowSecond) { nowText = new Date(s * 1000).toISOString().replace('.000Z', 'Z'); nowSecond = s; }
  return nowText;
}
export const parse = (e: Entry): KObject => JSON.parse(e.bytes.toString('utf8'));
export const clone = <T>(o: T): T => (o === undefined ? o : JSON.parse(JSON.stringify(o)));

/**
 * Whether a write would store what is stored, so nothing is written and no event sent: the same
 * JSON up to key order (a create, an apply and an update lay metadata out in different orders) and
 * up to managedFields times (the reference reverts a change of those alone). Reordering keeps the
 * length, so only writes of the stored length are parsed and compared.
 */
export function unchangedWrite(next: Buffer, stored: Buffer): boolean {
  if (next.equals(stored)) return true;
  if (next.length !== stored.length) return false;
  return deepEqual(untimed(JSON.parse(next.toString('utf8'))), untimed(JSON.parse(stored.toString('utf8'))));
}

function untimed(o: KObject): KObject {
  const mf = o.metadata?.managedFields;
  if (!Array.isArray(mf)) return o;
  return { ...o, metadata: { ...o.metadata, managedFields: mf.map((e) => ({ ...(e as object), time: undefined })) } };
}

export function getPath(obj: KObject, path: string): unknown {
  let cur: unknown = obj;
  for (const seg of path.split('.')) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[seg] : undefined;
  return cur;
}
export function setPath(obj: KObject, path: string, value: unknown) {
  const segs = path.split('.');
  let cur = obj as Record<string, unknown>;
  for (const s of segs.slice(0, -1)) cur = (cur[s] ??= {}) as Record<string, unknown>;
  if (value === undefined) delete cur[segs[segs.length - 1]];
  else cur[segs[segs.length - 1]] = value;
}

/** Who a write records as the owner of the fields it sets; `applied` when server-side apply already computed ownership. */
export interface FieldManagement { manager: string; applied?: boolean; /** Request body bytes. */ size?: number }

/** A failed merge as a Status: the merge code's status code, reason and message. */
export function mergeError(e: { code: number; reason: string; message: string }): StatusError {
  return new StatusError(e.code, e.reason || (e.code === 422 ? 'Invalid' : e.code === 400 ? 'BadRequest' : e.code === 413 ? 'RequestEntityTooLarge' : e.code === 415 ? 'UnsupportedMediaType' : 'InternalError'), e.message);
}

/**
 * Fields an endpoint does not write, so nobody gains ownership of them there (server-side apply rule
 * 12): the main resource never writes status; the status sub-resource writes nothing but status.
 */
export function resetFields(type: TypeDef, subresource: string): FieldsV1 | undefined {
  if (!type.statusField) return undefined;
  if (!subresource) return { [`f:${type.statusField}`]: {} };
  if (subresource === type.statusField || subresource === 'status') return { 'f:spec': {} };
  return undefined;
}

/** Findings of bodies checked on a worker (Registry.checkOnWorker), by the decoded object, until fieldValidation takes them. */
export const checked = new WeakMap<object, { typeError?: string; unknown: string[]; duplicates: string[]; yaml?: boolean; positions?: [string, number][] }>();

/** Definitions maps are shared by many types: one key per map, so workers keep each map once. */
const defsKeys = new WeakMap<object, string>();
let defsCount = 0;
export function defsKey(type: TypeDef): string | undefined {
  if (!type.definitions) return undefined;
  let k = defsKeys.get(type.definitions);
  if (!k) defsKeys.set(type.definitions, (k = `defs-${++defsCount}`));
  return k;
}
