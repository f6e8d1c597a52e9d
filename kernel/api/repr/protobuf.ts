// Protobuf for the kernel's requests and answers (Part A, "Protobuf envelope"): which message a
// type's body uses, request bodies decoded into objects with the request path's errors, and answers
// (objects, lists, Status, watch frames) encoded, cached objects once per revision. The codec and
// the envelope are in protocodec.ts (re-exported here).
import protobuf from 'protobufjs';
import type { Brand } from '../../contracts/brand.js';
import type { KObject } from '../../contracts/objects.js';
import { errors } from '../../contracts/status.js';
import type { TypeDef } from '../../contracts/types.js';
import type { Entry } from '../../store/entry.js';
import { DecodeError, decodeObject, ProtobufCodec, unwrap, wrap, wrapParts, type ProtoCatalog } from '../../../workers/body/protocodec.js';

export { META, ProtobufCodec, formatDuration, parseDuration, unwrap, wrap, type ProtoCatalog, type ProtoField, type ProtoMessage } from '../../../workers/body/protocodec.js';
export { GoShaper } from './goshape.js';

// ---------------------------------------------------------------- kernel use

const codecs = new WeakMap<object, ProtobufCodec>();
/** The machinery alone: Status, WatchEvent, ListMeta, DeleteOptions, PartialObjectMetadata. */
export const metaCodec = new ProtobufCodec([]);

/** The codec of a type's catalog (shared by every type of that catalog). */
export function codecFor(type: TypeDef): ProtobufCodec | undefined {
  const p = type.protobuf;
  if (!p) return undefined;
  let c = codecs.get(p.catalog);
  if (!c) codecs.set(p.catalog, (c = new ProtobufCodec([p.catalog])));
  return c;
}

/** The reference's spelling of a brand's group: "rbac.authorization.cluster.io" → "rbac.authorization.k8s.io". */
export function referenceGroup(brand: Brand, group: string): string {
  const d = brand.domain;
  return group === d ? 'k8s.io' : group.endsWith(`.${d}`) ? group.slice(0, -d.length) + 'k8s.io' : group;
}

/**
 * The message a request or response body of `type` (or one of its sub-resources) uses: the type's
 * own for the object and its status; the sub-resource's kind (Scale, TokenRequest, Eviction,
 * Binding, ...) looked up in the same catalog.
 */
export function bodyMessage(brand: Brand, type: TypeDef, subresource: string): { codec: ProtobufCodec; message: string; apiVersion: string; kind: string } | undefined {
  const codec = codecFor(type);
  if (!codec) return undefined;
  const gv = (g: string, v: string) => (g ? `${g}/${v}` : v);
  if (!subresource || subresource === 'status' || subresource === 'finalize') {
    return { codec, message: type.protobuf!.message, apiVersion: gv(type.group, type.version), kind: type.kind };
  }
  const info = type.subresourceInfo?.[subresource];
  const group = info?.group ?? (subresource === 'scale' ? 'autoscaling' : type.group);
  const version = info?.version ?? (subresource === 'scale' ? 'v1' : type.version);
  const kind = info?.kind ?? (subresource === 'scale' ? 'Scale' : type.kind);
  const message = codec.kindMessage(gv(referenceGroup(brand, group), version), kind);
  return message ? { codec, message, apiVersion: gv(group, version), kind } : undefined;
}

function asBadRequest(e: unknown, what: string): never {
  if (e instanceof DecodeError) throw errors.badRequest(`the body of the request could not be decoded as ${what}: ${e.message}`);
  throw e;
}

/** A Protobuf request body unwrapped: its object's bytes, the message they are, and the codec's catalogs (for a worker). */
export interface ProtobufBody { bytes: Uint8Array; message: string; kind: string; catalogs: ProtoCatalog[]; catalogKey: string; envelope: { apiVersion: string; kind: string } }

const codecKeys = new WeakMap<ProtobufCodec, string>();
let keys = 0;
/** A key naming a codec's catalogs to a worker, which keeps a codec of them by it. */
const keyOf = (codec: ProtobufCodec) => {
  let k = codecKeys.get(codec);
  if (!k) codecKeys.set(codec, (k = `protobuf-${++keys}`));
  return k;
};

/** The envelope of a Protobuf request body of `type` read (sub-resource aware); 415 when there is no Protobuf schema for it here, 400 for a bad envelope. */
export function protobufBody(body: Buffer, brand: Brand, type: TypeDef, subresource = ''): ProtobufBody {
  const target = bodyMessage(brand, type, subresource);
  if (!target) throw errors.unsupportedMediaType(['application/json', 'application/yaml']);
  let env;
  try { env = unwrap(body); } catch (e) { asBadRequest(e, 'Protobuf'); }
  if (env.contentEncoding) throw errors.badRequest(`unsupported content encoding "${env.contentEncoding}"`);
  if (env.contentType && env.contentType !== brand.protobufType) throw errors.badRequest(`unsupported content type "${env.contentType}" inside the envelope`);
  return { bytes: env.raw, message: target.message, kind: target.kind, catalogs: target.codec.catalogs, catalogKey: keyOf(target.codec), envelope: { apiVersion: env.apiVersion, kind: env.kind } };
}

/**
 * Decodes a Protobuf request body of `type` (sub-resource aware); 415 when there is no Protobuf
 * schema for it here, 400 for anything malformed (decodeObject's errors, as a worker gives them).
 */
export function decodeProtobuf(body: Buffer, brand: Brand, type: TypeDef, subresource = ''): KObject {
  const p = protobufBody(body, brand, type, subresource);
  const r = decodeObject(codecFor(type)!, p);
  if ('error' in r) throw errors.badRequest(r.error);
  return r.object;
}

/** DeleteOptions sent as Protobuf (kubectl and client-go send them so on DELETE). */
export function decodeDeleteOptions(body: Buffer): Record<string, unknown> {
  let env;
  try { env = unwrap(body); } catch (e) { asBadRequest(e, 'DeleteOptions'); }
  try { return metaCodec.decode('meta.v1.DeleteOptions', env.raw) as Record<string, unknown>; } catch (e) { asBadRequest(e, 'DeleteOptions'); }
}

/** Whether a Content-Type header names the brand's Protobuf type. */
export function isProtobufType(brand: Brand, contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0].trim().toLowerCase() === brand.protobufType;
}

/** A Status (error or success) in Protobuf. */
export function statusProtobuf(status: object): Buffer {
  return wrap('v1', 'Status', metaCodec.encode('meta.v1.Status', status));
}

// ---------------------------------------------------------------- responses

/** `tag(2) varint(len) msg`: an item as a list's repeated `items` field, its message a subarray of it. */
function framedItem(msg: Uint8Array): Buffer {
  const head = protobuf.Writer.create().uint32(18).uint32(msg.length).finish();
  return Buffer.concat([head, msg]);
}

/**
 * A cached object's message (no envelope). Encoded once per revision, lazily, and kept on the cache
 * entry next to its JSON bytes, framed as a list item so that lists concatenate it unchanged.
 */
export function entryMessage(type: TypeDef, e: Entry): Buffer {
  if (!e.pb) {
    const p = type.protobuf!;
    e.pb = framedItem(codecFor(type)!.encode(p.message, JSON.parse(e.bytes.toString('utf8'))));
  }
  return e.pb.subarray(e.pb.length - itemLength(e.pb));
}
function itemLength(framed: Buffer): number {
  const r = protobuf.Reader.create(framed);
  r.uint32();
  return r.uint32();
}

/** One cached object in the envelope (get, watch events). */
export function entryProtobuf(type: TypeDef, e: Entry, apiVersion: string): Buffer {
  return wrap(apiVersion, type.kind, entryMessage(type, e));
}

/** A list: ListMeta, then each item's cached framed bytes as they are (no re-encoding). */
/** A list's envelope in parts (the items' cached messages among them), to be sent as they are. */
export function listProtobuf(type: TypeDef, apiVersion: string, meta: Record<string, unknown>, items: Entry[]): Uint8Array[] {
  const lm = metaCodec.encode('meta.v1.ListMeta', meta);
  const parts: Uint8Array[] = [protobuf.Writer.create().uint32(10).uint32(lm.length).finish(), lm];
  for (const e of items) {
    entryMessage(type, e);
    parts.push(e.pb!);
  }
  return wrapParts(apiVersion, `${type.kind}List`, parts);
}

/**
 * Any JSON answer of a type's endpoints (an object, a sub-resource's object, a Status) in the
 * envelope, by its apiVersion and kind; undefined when there is no message for it.
 */
export function objectProtobuf(brand: Brand, type: TypeDef, json: Buffer | string | KObject): Buffer | undefined {
  const obj = (typeof json === 'string' || Buffer.isBuffer(json) ? JSON.parse(json.toString()) : json) as KObject;
  const apiVersion = obj.apiVersion ?? '';
  const kind = obj.kind ?? '';
  if (kind === 'Status' && apiVersion === 'v1') return statusProtobuf(obj);
  const i = apiVersion.indexOf('/');
  const ref = i < 0 ? apiVersion : `${referenceGroup(brand, apiVersion.slice(0, i))}${apiVersion.slice(i)}`;
  const codec = codecFor(type) ?? metaCodec;
  const message = codec.kindMessage(ref, kind);
  if (!message) return undefined;
  return wrap(apiVersion, kind, codec.encode(message, obj));
}

/** An object's metadata alone, PartialObjectMetadata in the envelope (get, watch events). */
export function partialProtobuf(apiVersion: string, metadata: unknown): Buffer {
  return wrap(apiVersion, 'PartialObjectMetadata', metaCodec.encode('meta.v1.PartialObjectMetadata', { metadata }));
}

/** A PartialObjectMetadataList's envelope in parts: ListMeta, then each item's metadata. */
export function partialListProtobuf(apiVersion: string, meta: Record<string, unknown>, metadatas: unknown[]): Uint8Array[] {
  const lm = metaCodec.encode('meta.v1.ListMeta', meta);
  const parts: Uint8Array[] = [protobuf.Writer.create().uint32(10).uint32(lm.length).finish(), lm];
  for (const metadata of metadatas) parts.push(framedItem(metaCodec.encode('meta.v1.PartialObjectMetadata', { metadata })));
  return wrapParts(apiVersion, 'PartialObjectMetadataList', parts);
}

/** A watch frame: 4-byte big-endian length, then the WatchEvent message (no envelope), whose object holds the enveloped object. */
export function watchFrame(type: string, enveloped: Uint8Array): Buffer {
  const w = protobuf.Writer.create();
  w.uint32(10).string(type);
  w.uint32(18).fork().uint32(10).bytes(enveloped).ldelim();
  const ev = w.finish();
  const len = Buffer.alloc(4);
  len.writeUInt32BE(ev.length);
  return Buffer.concat([len, ev]);
}
