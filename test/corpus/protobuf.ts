// Protobuf bodies for the corpus's probes. A mutation travels in Protobuf only when the wire can
// carry it: a wrong JSON type, a time that is not RFC 3339, a fraction for an integer or a key a
// struct does not have cannot be said in Protobuf and is left to the JSON probes. Whether a body
// carries its mutation is decided by encoding it and reading it back, so the generator needs no
// schema: what survives the round trip (or becomes the zero value Protobuf leaves out) is probed.
import { isDeepStrictEqual } from 'node:util';
import { ProtobufCodec, unwrap, wrap } from '../../kernel/api/repr/protobuf.js';
import { PROTOBUF_CATALOG } from '../../plugins/lib/protobuf-catalog.js';

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';

const codec = new ProtobufCodec([PROTOBUF_CATALOG]);

/** The object in the reference's Protobuf envelope, or undefined when it cannot be encoded. */
export function protobufBody(obj: Record<string, any>): Buffer | undefined {
  const message = codec.kindMessage(obj.apiVersion, obj.kind);
  if (!message) return undefined;
  try {
    return wrap(obj.apiVersion, obj.kind, codec.encode(message, obj));
  } catch {
    return undefined;
  }
}

const isZero = (v: unknown) => v === '' || v === 0 || v === false || v === null || (Array.isArray(v) && !v.length) || (typeof v === 'object' && v !== null && !Object.keys(v).length);

/** The value at a path of keys and list indexes (undefined where the path runs out). */
export function valueAt(o: unknown, path: (string | number)[]): unknown {
  let cur: any = o;
  for (const seg of path) {
    if (cur === undefined || cur === null || typeof cur !== 'object') return undefined;
    cur = cur[seg];
  }
  return cur;
}

/** Whether `obj`'s Protobuf form still holds the value at `path` (removed fields always do). */
export function carries(obj: Record<string, any>, path: (string | number)[], removed: boolean): boolean {
  const body = protobufBody(obj);
  if (!body) return false;
  if (removed) return true;
  const back = codec.decode(codec.kindMessage(obj.apiVersion, obj.kind)!, unwrap(body).raw);
  const sent = valueAt(obj, path);
  const got = valueAt(back, path);
  return isDeepStrictEqual(withoutZeros(got), withoutZeros(sent));
}

/** A value with its zero-valued fields left out, as Protobuf leaves them out (undefined if all zero). */
function withoutZeros(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? v.map((x) => withoutZeros(x) ?? {}) : undefined;
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) { const y = withoutZeros(x); if (y !== undefined) out[k] = y; }
    return Object.keys(out).length ? out : undefined;
  }
  return isZero(v) ? undefined : v;
}
