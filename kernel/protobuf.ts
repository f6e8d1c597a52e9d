// Protobuf request bodies (Part A, "Protobuf envelope"): four magic bytes, then an `Unknown` message
// whose `raw` holds the object in the type's own Protobuf schema. The kernel knows the envelope; a
// type's message schema comes from its catalog entry (TypeDef.protobuf), as protobufjs JSON.
import protobuf from 'protobufjs';
import type { Brand } from './brand.js';
import type { KObject, TypeDef } from './contracts.js';
import { errors } from './status.js';

const envelope = protobuf.Root.fromJSON({
  nested: {
    TypeMeta: { fields: { apiVersion: { type: 'string', id: 1 }, kind: { type: 'string', id: 2 } } },
    Unknown: { fields: { typeMeta: { type: 'TypeMeta', id: 1 }, raw: { type: 'bytes', id: 2 }, contentEncoding: { type: 'string', id: 3 }, contentType: { type: 'string', id: 4 } } },
  },
}).lookupType('Unknown');

const roots = new WeakMap<object, protobuf.Root>();

/** Seconds-and-nanos timestamps (the Time message) become the RFC 3339 strings of the JSON form. */
function timesToStrings(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(timesToStrings);
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length && keys.every((k) => k === 'seconds' || k === 'nanos') && 'seconds' in o) {
      return new Date(Number(o.seconds) * 1000).toISOString().replace('.000Z', 'Z');
    }
    for (const k of keys) o[k] = timesToStrings(o[k]);
  }
  return v;
}

/** Decodes a Protobuf body for `type`; 415 when the type has no Protobuf schema here. */
export function decodeProtobuf(body: Buffer, brand: Brand, type: TypeDef): KObject {
  const unsupported = () => errors.unsupportedMediaType(['application/json', 'application/yaml', ...(type.protobuf ? [brand.protobufType] : [])]);
  if (!type.protobuf) throw unsupported();
  const magic = brand.protobufMagic;
  if (body.length < magic.length || !magic.every((b, i) => body[i] === b)) throw errors.badRequest('the body does not start with the Protobuf envelope\'s magic bytes');
  let outer: { typeMeta?: { apiVersion?: string; kind?: string }; raw?: Uint8Array; contentEncoding?: string; contentType?: string };
  try {
    outer = envelope.toObject(envelope.decode(body.subarray(magic.length))) as typeof outer;
  } catch (e) {
    throw errors.badRequest(`the Protobuf envelope could not be decoded: ${(e as Error).message}`);
  }
  if (outer.contentEncoding) throw errors.badRequest(`unsupported content encoding "${outer.contentEncoding}"`);
  if (outer.contentType && outer.contentType !== brand.protobufType) throw errors.badRequest(`unsupported content type "${outer.contentType}" inside the envelope`);
  let root = roots.get(type.protobuf.schema);
  if (!root) roots.set(type.protobuf.schema, (root = protobuf.Root.fromJSON(type.protobuf.schema as protobuf.INamespace)));
  const msg = root.lookupType(type.protobuf.message);
  let obj: KObject;
  try {
    obj = msg.toObject(msg.decode(outer.raw ?? new Uint8Array()), { longs: Number, arrays: false, objects: false, defaults: false }) as KObject;
  } catch (e) {
    throw errors.badRequest(`the Protobuf body could not be decoded as ${type.kind}: ${(e as Error).message}`);
  }
  timesToStrings(obj);
  if (outer.typeMeta?.apiVersion) obj.apiVersion = outer.typeMeta.apiVersion;
  if (outer.typeMeta?.kind) obj.kind = outer.typeMeta.kind;
  return obj;
}
