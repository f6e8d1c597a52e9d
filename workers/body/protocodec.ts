// The Protobuf codec and envelope, both directions (Part A, "Protobuf envelope"); protobuf.ts puts
// them to the kernel's use. A body is four magic bytes, then an `Unknown` message whose `raw`
// holds the object in its own message. Messages are data: catalogs in our own format (written by
// plugins/types/builtin/gen-protobuf.ts from the reference's published definitions); the kernel
// carries the API machinery's (meta.v1: Status, ListMeta, ObjectMeta, WatchEvent, DeleteOptions,
// ...) and a type's catalog entry (TypeDef.protobuf) carries the rest.
//
// The codec maps the JSON form to the wire and back the way the reference's Go types do: fields by
// number, JSON names and inlined structs from the Go types, custom encodings for times, durations,
// quantities, int-or-string and embedded JSON. Decoding keeps what the sender meant: a zero value
// the Go JSON form would omit (omitempty, not a pointer) is left out, as JSON clients leave it out.
// Decoding is bounded: any malformed input is an error, never a partial object.
import protobuf from 'protobufjs';
import type { ProtoCatalog, ProtoField, ProtoMessage } from '../../kernel/contracts/types.js';
import metaCatalog from './protobuf-meta.json' with { type: 'json' };
import { depthError } from './decode.js';

export type { ProtoCatalog, ProtoField, ProtoMessage };

export const META: ProtoCatalog = metaCatalog as unknown as ProtoCatalog;

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
/** Deepest nesting decoded (JSON schemas in CRDs nest deepest); beyond it the body is refused. */
const MAX_DEPTH = 100;

type Json = Record<string, unknown>;

export interface Field {
  json: string;
  no: number;
  type: string;
  scalar: boolean;
  repeated: boolean;
  map: boolean;
  inline: boolean;
  pointer: boolean;
  omitempty: boolean;
}

interface Compiled {
  enc?: string;
  of?: string;
  /** JSON order. */
  fields: Field[];
  /** Wire order (by number). */
  wire: Field[];
  byNo: Map<number, Field>;
}

const SCALARS = new Set(['string', 'bytes', 'bool', 'int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64', 'double', 'float']);
const WIRE: Record<string, number> = { double: 1, fixed64: 1, sfixed64: 1, float: 5, fixed32: 5, sfixed32: 5, string: 2, bytes: 2 };
const wireOf = (t: string) => (SCALARS.has(t) ? WIRE[t] ?? 0 : 2);

/** Malformed input; the request path turns it into a 400. */
export class DecodeError extends Error {}

/** int64 values read as numbers (protobufjs gives a Long when the long package is present). */
function toNumber(v: unknown): number {
  return typeof v === 'number' ? v : (v as { toNumber(): number }).toNumber();
}

// ---------------------------------------------------------------- Go time and duration forms

/** RFC 3339 in UTC, seconds precision (metav1.Time) or microseconds (metav1.MicroTime). */
function formatTime(seconds: number, nanos: number, micro: boolean): string {
  const d = new Date(seconds * 1000);
  const base = d.toISOString().slice(0, 19);
  return micro ? `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${base}Z`;
}

function parseTime(s: unknown): { seconds: number; nanos: number } {
  if (typeof s !== 'string') throw new DecodeError(`a time must be a string, got ${JSON.stringify(s)}`);
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(s);
  const ms = m ? Date.parse(`${m[1]}${m[3]}`) : NaN;
  if (!m || Number.isNaN(ms)) throw new DecodeError(`invalid time ${JSON.stringify(s)}`);
  return { seconds: Math.floor(ms / 1000), nanos: m[2] ? Number(m[2].padEnd(9, '0')) : 0 };
}

const UNITS: [string, number][] = [['h', 3600e9], ['m', 60e9], ['s', 1e9], ['ms', 1e6], ['us', 1e3], ['µs', 1e3], ['μs', 1e3], ['ns', 1]];

/** Go's time.Duration.String(): "1h2m3.5s", "150ms", "0s". */
export function formatDuration(ns: number): string {
  if (ns === 0) return '0s';
  const neg = ns < 0;
  let u = Math.abs(ns);
  let out: string;
  if (u < 1e9) {
    const [unit, div] = u < 1e3 ? ['ns', 1] : u < 1e6 ? ['µs', 1e3] : ['ms', 1e6];
    out = trimFraction(u / div) + unit;
  } else {
    const h = Math.floor(u / 3600e9);
    u -= h * 3600e9;
    const m = Math.floor(u / 60e9);
    u -= m * 60e9;
    out = (h ? `${h}h${m}m` : m ? `${m}m` : '') + trimFraction(u / 1e9) + 's';
  }
  return (neg ? '-' : '') + out;
}
function trimFraction(x: number): string {
  return String(Number(x.toFixed(9)));
}

/** Go's time.ParseDuration. */
export function parseDuration(s: unknown): number {
  if (typeof s !== 'string' || !s) throw new DecodeError(`invalid duration ${JSON.stringify(s)}`);
  let rest = s;
  let sign = 1;
  if (rest[0] === '-' || rest[0] === '+') { sign = rest[0] === '-' ? -1 : 1; rest = rest.slice(1); }
  if (rest === '0') return 0;
  let total = 0;
  const re = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;
  if (!rest) throw new DecodeError(`invalid duration ${JSON.stringify(s)}`);
  while (rest) {
    const m = re.exec(rest);
    if (!m) throw new DecodeError(`invalid duration ${JSON.stringify(s)}`);
    total += Number(m[1]) * UNITS.find(([u]) => u === m[2])![1];
    rest = rest.slice(m[0].length);
  }
  return sign * Math.round(total);
}

// ---------------------------------------------------------------- the codec

/** Encoder and decoder over one set of catalogs (the machinery's plus a provider's). */
export class ProtobufCodec {
  private compiled = new Map<string, Compiled>();
  private messages: Record<string, ProtoMessage>;
  constructor(readonly catalogs: ProtoCatalog[]) {
    this.messages = Object.assign({}, META.messages, ...catalogs.map((c) => c.messages));
  }

  has(name: string): boolean { return name in this.messages; }

  /** Message of a kind: "apps/v1" + "Deployment" (the reference's group names). */
  kindMessage(apiVersion: string, kind: string): string | undefined {
    const k = `${apiVersion}/${kind}`;
    for (const c of this.catalogs) if (c.kinds[k]) return c.kinds[k];
    return META.kinds[k];
  }

  private get(name: string): Compiled {
    let c = this.compiled.get(name);
    if (c) return c;
    const m = this.messages[name];
    if (!m) throw new Error(`no Protobuf message ${name}`);
    if (!Array.isArray(m)) {
      c = { enc: m.enc, of: m.of, fields: [], wire: [], byNo: new Map() };
    } else {
      const fields = m.map(([json, no, type, flags]): Field => ({
        json, no, type, scalar: SCALARS.has(type), repeated: flags.includes('r'), map: flags.includes('m'), inline: flags.includes('i'), pointer: flags.includes('p'), omitempty: flags.includes('e'),
      }));
      c = { fields, wire: [...fields].sort((a, b) => a.no - b.no), byNo: new Map(fields.map((f) => [f.no, f])) };
    }
    this.compiled.set(name, c);
    return c;
  }

  // ---------------------------------------------------------------- encode (JSON → wire)

  encode(name: string, obj: unknown): Uint8Array {
    const w = protobuf.Writer.create();
    this.writeMessage(w, name, obj);
    return w.finish();
  }

  private writeMessage(w: protobuf.Writer, name: string, v: unknown): void {
    const c = this.get(name);
    if (c.enc) return this.writeCustom(w, c, v);
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new DecodeError(`${name}: expected an object`);
    const o = v as Json;
    for (const f of c.wire) {
      if (f.inline) {
        w.uint32((f.no << 3) | 2).fork();
        this.writeMessage(w, f.type, o);
        w.ldelim();
        continue;
      }
      const x = o[f.json];
      if (x === undefined || x === null) continue;
      if (f.map) {
        if (typeof x !== 'object' || Array.isArray(x)) throw new DecodeError(`${f.json}: expected an object`);
        for (const k of Object.keys(x).sort()) {
          const val = (x as Json)[k];
          w.uint32((f.no << 3) | 2).fork();
          w.uint32(10).string(k);
          if (val !== null && val !== undefined) this.writeValue(w, 2, f.type, val);
          w.ldelim();
        }
      } else if (f.repeated) {
        if (!Array.isArray(x)) throw new DecodeError(`${f.json}: expected a list`);
        for (const el of x) this.writeValue(w, f.no, f.type, el ?? (f.scalar ? zero(f.type) : {}));
      } else {
        this.writeValue(w, f.no, f.type, x);
      }
    }
  }

  private writeValue(w: protobuf.Writer, no: number, type: string, v: unknown): void {
    w.uint32((no << 3) | wireOf(type));
    if (!SCALARS.has(type)) {
      w.fork();
      this.writeMessage(w, type, v);
      w.ldelim();
      return;
    }
    writeScalar(w, type, v);
  }

  private writeCustom(w: protobuf.Writer, c: Compiled, v: unknown): void {
    switch (c.enc) {
      case 'time': case 'microtime': {
        const t = parseTime(v);
        w.uint32(8).int64(t.seconds);
        w.uint32(16).int32(c.enc === 'microtime' ? Math.floor(t.nanos / 1000) * 1000 : 0);
        return;
      }
      case 'duration':
        w.uint32(8).int64(parseDuration(v));
        return;
      case 'intorstring':
        if (typeof v === 'number') w.uint32(8).int64(0).uint32(16).int32(v).uint32(26).string('');
        else if (typeof v === 'string') w.uint32(8).int64(1).uint32(16).int32(0).uint32(26).string(v);
        else throw new DecodeError(`an int-or-string must be a number or a string, got ${JSON.stringify(v)}`);
        return;
      case 'quantity':
        if (typeof v !== 'string' && typeof v !== 'number') throw new DecodeError(`a quantity must be a string, got ${JSON.stringify(v)}`);
        w.uint32(10).string(String(v));
        return;
      case 'raw':
        w.uint32(10).bytes(Buffer.from(JSON.stringify(v)));
        return;
      case 'array':
        if (!Array.isArray(v)) throw new DecodeError('expected a list');
        for (const el of v) this.writeValue(w, 1, c.of!, el ?? zero(c.of!));
        return;
      case 'orarray':
        if (Array.isArray(v)) for (const el of v) this.writeValue(w, 2, schemaOf(c), el);
        else this.writeValue(w, 1, schemaOf(c), v);
        return;
      case 'orbool':
        if (typeof v === 'boolean') { w.uint32(8).bool(v); return; }
        w.uint32(8).bool(true);
        this.writeValue(w, 2, schemaOf(c), v);
        return;
      case 'orstringarray':
        if (Array.isArray(v)) for (const el of v) w.uint32(18).string(String(el));
        else this.writeValue(w, 1, schemaOf(c), v);
        return;
    }
    throw new Error(`unknown encoding ${c.enc}`);
  }

  /** A message's fields in JSON order and its custom encoding, if any (for walks such as goshape.ts). */
  shapeOf(name: string): { enc?: string; fields: readonly Field[] } {
    return this.get(name);
  }

  // ---------------------------------------------------------------- decode (wire → JSON)

  /** Decodes one message; throws DecodeError (→ 400) on anything malformed. */
  decode(name: string, bytes: Uint8Array): unknown {
    const r = protobuf.Reader.create(bytes);
    try {
      return this.readMessage(r, name, bytes.length, 0);
    } catch (e) {
      if (e instanceof DecodeError) throw e;
      throw new DecodeError((e as Error).message);
    }
  }

  private readMessage(r: protobuf.Reader, name: string, end: number, depth: number): unknown {
    if (depth > MAX_DEPTH) throw new DecodeError('the message nests too deeply');
    const c = this.get(name);
    if (c.enc) return this.readCustom(r, c, end, depth);
    const vals = new Map<Field, unknown>();
    while (r.pos < end) {
      const tag = r.uint32();
      const no = tag >>> 3, wt = tag & 7;
      const f = c.byNo.get(no);
      if (!f) { skip(r, wt); continue; }
      if (f.map) {
        expectWire(wt, 2, f);
        const len = r.uint32();
        const stop = bound(r, len);
        let key = '';
        let val: unknown;
        while (r.pos < stop) {
          const t = r.uint32();
          if (t >>> 3 === 1 && (t & 7) === 2) key = r.string();
          else if (t >>> 3 === 2) val = this.readValue(r, f.type, t & 7, f, depth);
          else skip(r, t & 7);
        }
        if (r.pos !== stop) throw new DecodeError(`${f.json}: malformed map entry`);
        const m = (vals.get(f) as Json | undefined) ?? {};
        m[key] = val ?? (f.scalar ? zero(f.type) : this.emptyOf(f.type));
        vals.set(f, m);
      } else if (f.repeated) {
        const list = (vals.get(f) as unknown[] | undefined) ?? [];
        if (f.scalar && wt === 2 && wireOf(f.type) !== 2) {
          // packed
          const stop = bound(r, r.uint32());
          while (r.pos < stop) list.push(readScalar(r, f.type));
          if (r.pos !== stop) throw new DecodeError(`${f.json}: malformed packed list`);
        } else {
          list.push(this.readValue(r, f.type, wt, f, depth));
        }
        vals.set(f, list);
      } else {
        vals.set(f, this.readValue(r, f.type, wt, f, depth));
      }
    }
    if (r.pos !== end) throw new DecodeError(`${name}: truncated`);
    // Assemble in JSON order; zero values the JSON form omits are left out.
    const out: Json = {};
    for (const f of c.fields) {
      if (!vals.has(f)) continue;
      const v = vals.get(f);
      if (f.inline) { Object.assign(out, v as Json); continue; }
      if (v === undefined) continue;
      if (!f.pointer && f.omitempty && isZero(v, f)) continue;
      out[f.json] = v;
    }
    return out;
  }

  private readValue(r: protobuf.Reader, type: string, wt: number, f: Pick<Field, 'json'>, depth: number): unknown {
    if (SCALARS.has(type)) {
      expectWire(wt, wireOf(type), f);
      return readScalar(r, type);
    }
    expectWire(wt, 2, f);
    const stop = bound(r, r.uint32());
    return this.readMessage(r, type, stop, depth + 1);
  }

  private emptyOf(type: string): unknown {
    return this.readMessage(protobuf.Reader.create(new Uint8Array(0)), type, 0, 0);
  }

  private readCustom(r: protobuf.Reader, c: Compiled, end: number, depth: number): unknown {
    const fields: Record<number, unknown[]> = {};
    const start = r.pos;
    while (r.pos < end) {
      const tag = r.uint32();
      const no = tag >>> 3, wt = tag & 7;
      let v: unknown;
      const type = customFieldType(c, no);
      if (!type) { skip(r, wt); continue; }
      if (SCALARS.has(type) && wt === 2 && wireOf(type) !== 2) {
        const stop = bound(r, r.uint32());
        while (r.pos < stop) (fields[no] ??= []).push(readScalar(r, type));
        continue;
      }
      if (type === 'bytes') { expectWire(wt, 2, { json: c.enc! }); v = r.bytes(); } // raw, not base64
      else v = this.readValue(r, type, wt, { json: c.enc! }, depth);
      (fields[no] ??= []).push(v);
    }
    if (r.pos !== end) throw new DecodeError(`${c.enc}: truncated`);
    const one = (no: number) => fields[no]?.[fields[no].length - 1];
    switch (c.enc) {
      case 'time': case 'microtime': {
        if (end === start) return undefined; // the zero time: unset
        return formatTime(Number(one(1) ?? 0), c.enc === 'microtime' ? Number(one(2) ?? 0) : 0, c.enc === 'microtime');
      }
      case 'duration': return formatDuration(Number(one(1) ?? 0));
      case 'intorstring': return Number(one(1) ?? 0) === 1 ? String(one(3) ?? '') : Number(one(2) ?? 0);
      case 'quantity': return (one(1) as string | undefined) || '0';
      case 'raw': {
        const raw = one(1) as Uint8Array | undefined;
        if (!raw || !raw.length) return undefined;
        return this.embedded(raw);
      }
      case 'array': return fields[1] ?? [];
      case 'orarray': return fields[2]?.length ? fields[2] : one(1);
      case 'orbool': return one(2) !== undefined ? one(2) : !!one(1);
      case 'orstringarray': return fields[2]?.length ? fields[2] : one(1) ?? null;
    }
    throw new Error(`unknown encoding ${c.enc}`);
  }

  /** Embedded object bytes (RawExtension, JSON, FieldsV1): JSON, or an enveloped Protobuf object of a known kind. */
  private embedded(raw: Uint8Array): unknown {
    if (raw.length >= 4 && MAGIC.equals(Buffer.from(raw.buffer, raw.byteOffset, 4))) {
      const env = unwrap(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength));
      const msg = env.apiVersion && env.kind ? this.kindMessage(env.apiVersion, env.kind) : undefined;
      if (!msg) throw new DecodeError(`an embedded object of unknown kind ${env.apiVersion}/${env.kind}`);
      return { apiVersion: env.apiVersion, kind: env.kind, ...(this.decode(msg, env.raw) as Json) };
    }
    try {
      // bounded by the caller: decodeProtobuf checks the depth of the whole object
      return JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8'));
    } catch (e) {
      throw new DecodeError(`embedded JSON could not be decoded: ${(e as Error).message}`);
    }
  }
}

function schemaOf(c: Compiled): string {
  return c.of ?? '';
}

/** Field types of the custom encodings, by field number. */
function customFieldType(c: Compiled, no: number): string | undefined {
  switch (c.enc) {
    case 'time': case 'microtime': return no === 1 ? 'int64' : no === 2 ? 'int32' : undefined;
    case 'duration': return no === 1 ? 'int64' : undefined;
    case 'intorstring': return no === 1 ? 'int64' : no === 2 ? 'int32' : no === 3 ? 'string' : undefined;
    case 'quantity': return no === 1 ? 'string' : undefined;
    case 'raw': return no === 1 ? 'bytes' : undefined;
    case 'array': return no === 1 ? c.of : undefined;
    case 'orarray': return no === 1 || no === 2 ? c.of : undefined;
    case 'orbool': return no === 1 ? 'bool' : no === 2 ? c.of : undefined;
    case 'orstringarray': return no === 1 ? c.of : no === 2 ? 'string' : undefined;
  }
  return undefined;
}

function zero(type: string): unknown {
  return type === 'string' || type === 'bytes' ? '' : type === 'bool' ? false : 0;
}

function isZero(v: unknown, f: Field): boolean {
  if (f.repeated || f.map) return Array.isArray(v) ? !v.length : !Object.keys(v as Json).length;
  if (!f.scalar) return false;
  return v === '' || v === 0 || v === false;
}

function expectWire(got: number, want: number, f: Pick<Field, 'json'>) {
  if (got !== want) throw new DecodeError(`field ${f.json}: wire type ${got}, expected ${want}`);
}

function bound(r: protobuf.Reader, len: number): number {
  const stop = r.pos + len;
  if (stop > r.len) throw new DecodeError('a length runs past the end of the message');
  return stop;
}

function skip(r: protobuf.Reader, wt: number) {
  if (wt === 3 || wt === 4 || wt > 5) throw new DecodeError(`unsupported wire type ${wt}`);
  r.skipType(wt);
}

function readScalar(r: protobuf.Reader, type: string): unknown {
  switch (type) {
    case 'string': return r.string();
    case 'bytes': return Buffer.from(r.bytes()).toString('base64');
    case 'bool': return r.bool();
    case 'int32': return r.int32();
    case 'uint32': return r.uint32();
    case 'sint32': return r.sint32();
    case 'int64': return toNumber(r.int64());
    case 'uint64': return toNumber(r.uint64());
    case 'sint64': return toNumber(r.sint64());
    case 'fixed32': return r.fixed32();
    case 'sfixed32': return r.sfixed32();
    case 'fixed64': return toNumber(r.fixed64());
    case 'sfixed64': return toNumber(r.sfixed64());
    case 'double': return r.double();
    case 'float': return r.float();
  }
  throw new DecodeError(`unknown scalar type ${type}`);
}

function num(v: unknown): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n)) throw new DecodeError(`expected a number, got ${JSON.stringify(v)}`);
  return n;
}

function writeScalar(w: protobuf.Writer, type: string, v: unknown): void {
  switch (type) {
    case 'string': w.string(typeof v === 'string' ? v : String(v)); return;
    case 'bytes': w.bytes(typeof v === 'string' ? Buffer.from(v, 'base64') : new Uint8Array(0)); return;
    case 'bool': w.bool(v === true); return;
    case 'int32': w.int32(num(v)); return;
    case 'uint32': w.uint32(num(v)); return;
    case 'sint32': w.sint32(num(v)); return;
    case 'int64': w.int64(num(v)); return;
    case 'uint64': w.uint64(num(v)); return;
    case 'sint64': w.sint64(num(v)); return;
    case 'fixed32': w.fixed32(num(v)); return;
    case 'sfixed32': w.sfixed32(num(v)); return;
    case 'fixed64': w.fixed64(num(v)); return;
    case 'sfixed64': w.sfixed64(num(v)); return;
    case 'double': w.double(num(v)); return;
    case 'float': w.float(num(v)); return;
  }
  throw new Error(`unknown scalar type ${type}`);
}

// ---------------------------------------------------------------- the envelope

/** magic + Unknown{typeMeta{apiVersion, kind}, raw, contentEncoding "", contentType ""}, as the reference writes it. */
/**
 * A request body's object decoded (the envelope read already): its apiVersion and kind from the
 * envelope, then its fields; or the 400 message of what is wrong. Embedded JSON (RawExtension,
 * FieldsV1, JSON) deepens the object: the whole object gets the JSON path's bound and answer.
 */
export function decodeObject(codec: ProtobufCodec, body: { bytes: Uint8Array; message: string; kind: string; envelope: { apiVersion: string; kind: string } }): { object: Record<string, unknown> } | { error: string } {
  let obj: Record<string, unknown>;
  try {
    obj = codec.decode(body.message, body.bytes) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof DecodeError) return { error: `the body of the request could not be decoded as ${body.kind}: ${e.message}` };
    throw e;
  }
  const deep = depthError(obj);
  if (deep) return { error: `the body of the request could not be decoded as JSON: ${deep}` };
  const out: Record<string, unknown> = {};
  if (body.envelope.apiVersion) out.apiVersion = body.envelope.apiVersion;
  if (body.envelope.kind) out.kind = body.envelope.kind;
  return { object: Object.assign(out, obj) };
}

export function wrap(apiVersion: string, kind: string, raw: Uint8Array | Uint8Array[]): Buffer {
  return Buffer.concat(wrapParts(apiVersion, kind, Array.isArray(raw) ? raw : [raw]));
}
/** The envelope around `parts` as a list of parts, not joined. */
export function wrapParts(apiVersion: string, kind: string, parts: Uint8Array[]): Uint8Array[] {
  const rawLen = parts.reduce((n, p) => n + p.length, 0);
  const w = protobuf.Writer.create();
  w.uint32(10).fork().uint32(10).string(apiVersion).uint32(18).string(kind).ldelim();
  w.uint32(18).uint32(rawLen);
  const head = w.finish();
  return [MAGIC, head, ...parts, TRAILER];
}
/** contentEncoding and contentType, both empty. */
const TRAILER = Buffer.from([0x1a, 0x00, 0x22, 0x00]);

/** The envelope's parts; throws DecodeError when the magic or the Unknown message is wrong. */
export function unwrap(body: Buffer): { apiVersion: string; kind: string; raw: Uint8Array; contentEncoding: string; contentType: string } {
  if (body.length < MAGIC.length || !MAGIC.equals(body.subarray(0, 4))) throw new DecodeError('the body does not start with the Protobuf envelope\'s magic bytes');
  if (body.length === MAGIC.length) throw new DecodeError('empty body');
  const r = protobuf.Reader.create(body.subarray(4));
  let apiVersion = '', kind = '', contentEncoding = '', contentType = '';
  let raw: Uint8Array | undefined;
  try {
    while (r.pos < r.len) {
      const tag = r.uint32();
      const no = tag >>> 3, wt = tag & 7;
      if (no >= 1 && no <= 4) expectWire(wt, 2, { json: 'Unknown' });
      if (no === 1) {
        const stop = bound(r, r.uint32());
        while (r.pos < stop) {
          const t = r.uint32();
          if (t === 10) apiVersion = r.string();
          else if (t === 18) kind = r.string();
          else skip(r, t & 7);
        }
        if (r.pos !== stop) throw new DecodeError('malformed typeMeta');
      } else if (no === 2) raw = r.bytes();
      else if (no === 3) contentEncoding = r.string();
      else if (no === 4) contentType = r.string();
      else skip(r, wt);
    }
  } catch (e) {
    throw e instanceof DecodeError ? e : new DecodeError((e as Error).message);
  }
  // A message cut before its object is refused, not read as an empty object.
  if (!raw) throw new DecodeError('the envelope holds no object (raw)');
  return { apiVersion, kind, raw, contentEncoding, contentType };
}
