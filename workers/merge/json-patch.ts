// JSON patch (RFC 6902) with the reference server's behaviour and wording: JSON pointers with ~0/~1
// escapes, `-` to append, negative array indexes counted from the end (a non-standard extension the
// reference keeps), at most 10000 operations (413) and at most 3 MiB copied by `copy` operations
// (the only operation that can multiply the size of the document).
import { clone, deepEqual, isObject, put, utf8Length } from './schema.js';

/** The error of a patch: plain data (code, reason, message) so it crosses worker boundaries intact. */
export class PatchError extends Error {
  readonly code: number;
  readonly reason: string;
  /** What the reference writes as the Status message when it differs from `message`. */
  readonly statusMessage?: string;
  constructor(code: number, message: string, opts: { reason?: string; statusMessage?: string } = {}) {
    super(message);
    this.name = 'PatchError';
    this.code = code;
    this.reason = opts.reason ?? reasonFor(code);
    if (opts.statusMessage) this.statusMessage = opts.statusMessage;
  }
  toJSON(): PatchErrorData {
    return { code: this.code, reason: this.reason, message: this.message, ...(this.statusMessage ? { statusMessage: this.statusMessage } : {}) };
  }
}

export interface PatchErrorData {
  code: number;
  reason: string;
  message: string;
  statusMessage?: string;
}

export function reasonFor(code: number): string {
  switch (code) {
    case 400: return 'BadRequest';
    case 409: return 'Conflict';
    case 413: return 'RequestEntityTooLarge';
    case 415: return 'UnsupportedMediaType';
    case 422: return 'Invalid';
    default: return ''; // the reference's "Unknown" reason is the empty string
  }
}

/** The reference answers every failed JSON patch operation with 422 and this message. */
export const REJECTED_MESSAGE = 'the server rejected our request due to an error in our request';
export const MAX_JSON_PATCH_OPERATIONS = 10000;
export const MAX_COPY_BYTES = 3 * 1024 * 1024;

export interface JsonPatchLimits {
  maxOperations?: number;
  maxCopyBytes?: number;
}

type Container = Record<string, unknown> | unknown[];

/** A failure inside one operation; wrapped as the reference does ("context: cause"). */
class OpFailure extends Error {}
const MISSING = 'missing value';
const INVALID_INDEX = 'invalid index referenced';
const TEST_FAILED = 'test failed';
const wrap = (msg: string, cause: string) => new OpFailure(`${msg}: ${cause}`);

/** Applies a JSON patch to a document (not changed); throws PatchError. */
export function jsonPatch(doc: unknown, patch: unknown, limits: JsonPatchLimits = {}): unknown {
  const ops = decodePatch(patch);
  const max = limits.maxOperations ?? MAX_JSON_PATCH_OPERATIONS;
  if (ops.length > max) {
    throw new PatchError(413, `Request entity too large: The allowed maximum operations in a JSON patch is ${max}, got ${ops.length}`);
  }
  const state = { copied: 0, maxCopy: limits.maxCopyBytes ?? MAX_COPY_BYTES };
  const root = clone(doc);
  for (const op of ops) {
    try {
      applyOp(root, op, state);
    } catch (e) {
      if (e instanceof OpFailure) throw new PatchError(422, e.message, { statusMessage: REJECTED_MESSAGE });
      throw e;
    }
  }
  return root;
}

function goTypeName(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (isObject(v)) return 'object';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

function decodePatch(patch: unknown): Record<string, unknown>[] {
  if (patch === null) return [];
  if (!Array.isArray(patch)) throw new PatchError(400, `json: cannot unmarshal ${goTypeName(patch)} into Go value of type jsonpatch.Patch`);
  return patch.map((op) => {
    if (op === null) return {};
    if (!isObject(op)) throw new PatchError(400, `json: cannot unmarshal ${goTypeName(op)} into Go value of type jsonpatch.Operation`);
    return op;
  });
}

// ---------------------------------------------------------------- pointers and containers

/** "~1" → "/", "~0" → "~" (in that order, so "~01" is "~1"). */
export function decodePointerToken(s: string): string {
  return s.replace(/~[01]/g, (m) => (m === '~1' ? '/' : '~'));
}

export function encodePointerToken(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The container holding the last token of a pointer, or undefined when a parent is missing. */
function findObject(doc: unknown, path: string): { con: Container; key: string } | undefined {
  const split = path.split('/');
  if (split.length < 2) return undefined;
  let cur = doc;
  for (const part of split.slice(1, -1)) {
    if (!isContainer(cur)) return undefined;
    let next: unknown;
    try {
      next = getIn(cur, decodePointerToken(part));
    } catch {
      return undefined;
    }
    if (next === undefined || next === null) return undefined;
    cur = next;
  }
  if (!isContainer(cur)) return undefined;
  return { con: cur, key: decodePointerToken(split[split.length - 1]) };
}

function isContainer(v: unknown): v is Container {
  return Array.isArray(v) || isObject(v);
}

/** Go's strconv.Atoi, with its error text. */
function atoi(key: string): number {
  if (!/^[+-]?\d+$/.test(key)) throw new OpFailure(`strconv.Atoi: parsing ${JSON.stringify(key)}: invalid syntax`);
  const n = Number(key);
  if (!Number.isSafeInteger(n)) throw new OpFailure(`strconv.Atoi: parsing ${JSON.stringify(key)}: value out of range`);
  return n;
}

/** An index into an array of `len` items (negative counts from the end); throws when out of range. */
function arrayIndex(key: string, len: number): number {
  let idx = atoi(key);
  if (idx < 0) {
    if (idx < -len) throw wrap(`Unable to access invalid index: ${idx}`, INVALID_INDEX);
    idx += len;
  }
  if (idx >= len) throw wrap(`Unable to access invalid index: ${idx}`, INVALID_INDEX);
  return idx;
}

/** The value at key; undefined for a missing object key. */
function getIn(con: Container, key: string): unknown {
  if (Array.isArray(con)) return con[arrayIndex(key, con.length)];
  return Object.prototype.hasOwnProperty.call(con, key) ? con[key] : undefined;
}

function addIn(con: Container, key: string, val: unknown): void {
  if (!Array.isArray(con)) {
    put(con, key, val);
    return;
  }
  if (key === '-') {
    con.push(val);
    return;
  }
  let idx: number;
  try {
    idx = atoi(key);
  } catch (e) {
    throw wrap(`value was not a proper array index: '${key}'`, (e as Error).message);
  }
  const size = con.length + 1;
  if (idx >= size || idx < -size) throw wrap(`Unable to access invalid index: ${idx}`, INVALID_INDEX);
  if (idx < 0) idx += size;
  con.splice(idx, 0, val);
}

function removeIn(con: Container, key: string): void {
  if (Array.isArray(con)) {
    con.splice(arrayIndex(key, con.length), 1);
    return;
  }
  if (!Object.prototype.hasOwnProperty.call(con, key)) throw wrap(`Unable to remove nonexistent key: ${key}`, MISSING);
  delete con[key];
}

function setIn(con: Container, key: string, val: unknown): void {
  if (Array.isArray(con)) con[arrayIndex(key, con.length)] = val;
  else put(con, key, val);
}

// ---------------------------------------------------------------- operations

function opString(op: Record<string, unknown>, field: 'path' | 'from'): string {
  const v = op[field];
  if (v === undefined || v === null) {
    throw new OpFailure(field === 'path' ? `operation missing path field: ${MISSING}` : `operation, missing from field: ${MISSING}`);
  }
  if (typeof v !== 'string') throw new OpFailure(`json: cannot unmarshal ${goTypeName(v)} into Go value of type string`);
  return v;
}

function pathOf(op: Record<string, unknown>, what: string): string {
  try {
    return opString(op, 'path');
  } catch (e) {
    throw wrap(`${what} operation failed to decode path`, (e as Error).message);
  }
}

function fromOf(op: Record<string, unknown>, what: string): string {
  try {
    return opString(op, 'from');
  } catch (e) {
    throw wrap(`${what} operation failed to decode from`, (e as Error).message);
  }
}

/** Runs `fn`, prefixing an operation failure with context. */
function inContext<T>(msg: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof OpFailure) throw wrap(msg, e.message);
    throw e;
  }
}

function applyOp(doc: unknown, op: Record<string, unknown>, state: { copied: number; maxCopy: number }): void {
  const kind = typeof op.op === 'string' ? op.op : 'unknown';
  // A missing "value" reads as null, as in the reference.
  const value = op.value === undefined ? null : op.value;
  switch (kind) {
    case 'add': {
      const path = pathOf(op, 'add');
      const t = findObject(doc, path);
      if (!t) throw wrap(`add operation does not apply: doc is missing path: "${path}"`, MISSING);
      inContext(`error in add for path: '${path}'`, () => addIn(t.con, t.key, clone(value)));
      return;
    }
    case 'remove': {
      const path = pathOf(op, 'remove');
      const t = findObject(doc, path);
      if (!t) throw wrap(`remove operation does not apply: doc is missing path: "${path}"`, MISSING);
      inContext(`error in remove for path: '${path}'`, () => removeIn(t.con, t.key));
      return;
    }
    case 'replace': {
      const path = pathOf(op, 'replace');
      const t = findObject(doc, path);
      if (!t) throw wrap(`replace operation does not apply: doc is missing path: ${path}`, MISSING);
      let current: unknown;
      try {
        current = getIn(t.con, t.key);
      } catch {
        current = undefined;
      }
      if (current === undefined) throw wrap(`replace operation does not apply: doc is missing key: ${path}`, MISSING);
      inContext(`error in remove for path: '${path}'`, () => setIn(t.con, t.key, clone(value)));
      return;
    }
    case 'move': {
      const from = fromOf(op, 'move');
      const src = findObject(doc, from);
      if (!src) throw wrap(`move operation does not apply: doc is missing from path: ${from}`, MISSING);
      const val = inContext(`error in move for path: '${src.key}'`, () => getIn(src.con, src.key));
      inContext(`error in move for path: '${src.key}'`, () => removeIn(src.con, src.key));
      const path = pathOf(op, 'move');
      const dst = findObject(doc, path);
      if (!dst) throw wrap(`move operation does not apply: doc is missing destination path: ${path}`, MISSING);
      inContext(`error in move for path: '${path}'`, () => addIn(dst.con, dst.key, val));
      return;
    }
    case 'copy': {
      const from = fromOf(op, 'copy');
      const src = findObject(doc, from);
      if (!src) throw wrap(`copy operation does not apply: doc is missing from path: ${from}`, MISSING);
      const val = inContext(`error in copy for from: '${from}'`, () => {
        const v = getIn(src.con, src.key);
        if (v === undefined) throw wrap(`unable to get nonexistent key: ${src.key}`, MISSING);
        return v;
      });
      const path = pathOf(op, 'copy');
      const dst = findObject(doc, path);
      if (!dst) throw wrap(`copy operation does not apply: doc is missing destination path: ${path}`, MISSING);
      // Copies are the one way a small patch grows a document a lot: bound their total size.
      state.copied += utf8Length(JSON.stringify(val) ?? 'null');
      if (state.maxCopy > 0 && state.copied > state.maxCopy) {
        throw new OpFailure(`Unable to complete the copy, the accumulated size increase of copy is ${state.copied}, exceeding the limit ${state.maxCopy}`);
      }
      inContext('error while adding value during copy', () => addIn(dst.con, dst.key, clone(val)));
      return;
    }
    case 'test': {
      const path = pathOf(op, 'test');
      const t = findObject(doc, path);
      if (!t) throw wrap(`test operation does not apply: is missing path: ${path}`, MISSING);
      const current = inContext(`error in test for path: '${path}'`, () => getIn(t.con, t.key));
      // A missing key and a null value both match a null test value.
      const actual = current === undefined ? null : current;
      if (!deepEqual(actual, value)) throw wrap(`testing value ${path} failed`, TEST_FAILED);
      return;
    }
    default:
      throw new OpFailure(`Unexpected kind: ${kind}`);
  }
}
