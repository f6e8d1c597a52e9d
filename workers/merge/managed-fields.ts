// Managed fields: the entries as stored in metadata.managedFields (one FieldSet per manager,
// operation, sub-resource and apiVersion), the inputs and results of apply and update, and the
// 409 a conflict answers. The algorithms that move ownership are in apply.ts.
import type { KObject, Schema } from '../../kernel/contracts/index.js';
import { StatusError, type StatusBody } from '../../kernel/contracts/status.js';
import { type FieldSet, type FieldsV1, type Path, fieldPE, fromFieldsV1, isEmpty, newSet, reconcileWithSchema, setOf, toFieldsV1, goQuote } from './fieldset.js';
import { depthError, MAX_DEPTH } from '../body/decode.js';
import type { PatchErrorData } from './json-patch.js';
import { type Definitions, compareStrings, hasOwn, isObject, utf8Length } from './schema.js';


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

export interface Owner {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  subresource?: string;
  set: FieldSet;
}
export type Owners = Map<string, Owner>;
export type Ctx = { schema?: Schema; defs: Definitions };

export const MAX_UPDATE_MANAGERS = 10;
export const ANCIENT_CHANGES = 'ancient-changes';
export const FIELD_MANAGER_MAX_LENGTH = 128;
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

// ---------------------------------------------------------------- managed fields entries

export function ownerId(manager: string, operation: string, apiVersion: string, subresource?: string): string {
  // Appliers keep one entry whatever version they apply with.
  return JSON.stringify([manager, operation, operation === 'Apply' ? '' : apiVersion, subresource ?? '']);
}

export const idOf = (o: Owner) => ownerId(o.manager, o.operation, o.apiVersion, o.subresource);

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

export const str = (v: unknown) => (typeof v === 'string' ? v : '');

export function seconds(t?: string): number {
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
  // Every write of a second passes the same text: format it once.
  if (typeof t === 'string' && t === lastTimeIn) return lastTimeOut;
  const d = t instanceof Date ? t : new Date(t);
  const out = Number.isNaN(d.getTime()) ? String(t) : d.toISOString().replace(/\.\d+Z$/, 'Z');
  if (typeof t === 'string') { lastTimeIn = t; lastTimeOut = out; }
  return out;
}
let lastTimeIn: string | undefined;
let lastTimeOut = '';

/** Paths the server manages itself: never owned by anyone (exact paths, not their children). */
export const STRIPPED = setOf(
  [fieldPE('apiVersion')], [fieldPE('kind')], [fieldPE('metadata')],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion']
    .map((f) => [fieldPE('metadata'), fieldPE(f)]),
);

export function reconcileOwners(owners: Owners, ctx: Ctx): Owners {
  const out: Owners = new Map();
  for (const [id, o] of owners) out.set(id, { ...o, set: reconcileWithSchema(o.set, ctx.schema, ctx.defs) });
  return out;
}

/** The object without metadata.managedFields (ownership is never part of the compared content). */
export function withoutManagedFields(obj: KObject | null | undefined): Record<string, unknown> {
  if (!isObject(obj)) return {};
  if (!isObject(obj.metadata) || !hasOwn(obj.metadata, 'managedFields')) return obj;
  const { managedFields: _, ...meta } = obj.metadata;
  return { ...obj, metadata: meta };
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

export function conflictCauses(conflicts: Conflict[]) {
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
