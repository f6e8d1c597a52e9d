// The Swagger 2.0 document in protobuf (the gnostic models' openapi.v2.Document), as kubectl asks for it.
import YAML from 'yaml';
import type { Json } from './schema.js';

// ---------------------------------------------------------------- v2 as protobuf

/**
 * The protobuf form of the v2 document (the message openapi.v2.Document of the gnostic models).
 * Clients ask for it with an "@" in the name, which is not a valid media type character, so the
 * response names it with a "." (both spellings are accepted in requests).
 */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
export const OPENAPI_V2_PROTOBUF_ASKED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

/** A minimal protobuf writer: length-delimited and varint fields, nested messages built bottom-up. */
class PB {
  private parts: Uint8Array[] = [];
  private size = 0;

  private push(b: Uint8Array) {
    this.parts.push(b);
    this.size += b.length;
  }
  private varint(n: number) {
    const bytes: number[] = [];
    while (n > 0x7f) {
      bytes.push((n & 0x7f) | 0x80);
      n = Math.floor(n / 128);
    }
    bytes.push(n);
    this.push(Uint8Array.from(bytes));
  }
  private key(field: number, wire: number) {
    this.varint(field * 8 + wire);
  }
  bytes(field: number, b: Uint8Array) {
    this.key(field, 2);
    this.varint(b.length);
    this.push(b);
  }
  string(field: number, v: string | undefined) {
    if (v) this.bytes(field, Buffer.from(v, 'utf8'));
  }
  strings(field: number, vs: string[] | undefined) {
    for (const v of vs ?? []) this.bytes(field, Buffer.from(v, 'utf8'));
  }
  bool(field: number, v: boolean | undefined) {
    if (!v) return;
    this.key(field, 0);
    this.varint(1);
  }
  message(field: number, build: (w: PB) => void) {
    const w = new PB();
    build(w);
    this.bytes(field, w.finish());
  }
  finish(): Uint8Array {
    return Buffer.concat(this.parts, this.size);
  }
}

/** Vendor extensions (x-*) as NamedAny entries whose value is YAML text, as the gnostic models keep them. */
function pbExtensions(w: PB, field: number, o: Json) {
  for (const [k, v] of Object.entries(o)) {
    if (k.startsWith('x-')) w.message(field, (n) => { n.string(1, k); n.message(2, (a) => a.string(2, YAML.stringify(v))); });
  }
}

function pbSchema(w: PB, s: Json) {
  w.string(1, s.$ref);
  w.string(2, s.format);
  w.string(4, s.description);
  w.strings(19, s.required);
  for (const e of s.enum ?? []) w.message(20, (a) => a.string(2, YAML.stringify(e)));
  if (s.additionalProperties !== undefined) {
    w.message(21, (a) => (typeof s.additionalProperties === 'boolean' ? a.bool(2, s.additionalProperties) : a.message(1, (x) => pbSchema(x, s.additionalProperties))));
  }
  if (s.type) w.message(22, (t) => t.strings(1, [s.type]));
  if (s.items) w.message(23, (it) => it.message(1, (x) => pbSchema(x, s.items)));
  for (const a of s.allOf ?? []) w.message(24, (x) => pbSchema(x, a));
  if (s.properties) {
    w.message(25, (ps) => {
      for (const [k, v] of Object.entries(s.properties as Json)) ps.message(1, (n) => { n.string(1, k); n.message(2, (x) => pbSchema(x, v)); });
    });
  }
  pbExtensions(w, 31, s);
}

/** A v2 parameter or a reference to one (ParametersItem). */
function pbParametersItem(w: PB, p: Json) {
  if (p.$ref) w.message(2, (r) => r.string(1, p.$ref));
  else w.message(1, (x) => pbParameter(x, p));
}

function pbParameter(w: PB, p: Json) {
  if (p.in === 'body') {
    w.message(1, (b) => {
      b.string(1, p.description); b.string(2, p.name); b.string(3, p.in); b.bool(4, p.required);
      if (p.schema) b.message(5, (x) => pbSchema(x, p.schema));
    });
    return;
  }
  // Query parameters are sub-schema 3, path parameters 4; they differ in the later field numbers.
  const query = p.in === 'query';
  w.message(2, (nb) => nb.message(query ? 3 : 4, (q) => {
    q.bool(1, p.required); q.string(2, p.in); q.string(3, p.description); q.string(4, p.name);
    q.string(query ? 6 : 5, p.type);
    q.bool(query ? 20 : 19, p.uniqueItems);
  }));
}

function pbOperation(w: PB, o: Json) {
  w.strings(1, o.tags);
  w.string(3, o.description);
  w.string(5, o.operationId);
  w.strings(6, o.produces);
  w.strings(7, o.consumes);
  for (const p of o.parameters ?? []) w.message(8, (x) => pbParametersItem(x, p));
  w.message(9, (rs) => {
    for (const [code, r] of Object.entries(o.responses as Json)) {
      rs.message(1, (n) => {
        n.string(1, code);
        n.message(2, (rv) => rv.message(1, (x) => { x.string(1, (r as Json).description); if ((r as Json).schema) x.message(2, (si) => si.message(1, (y) => pbSchema(y, (r as Json).schema))); }));
      });
    }
  });
  w.strings(10, o.schemes);
  pbExtensions(w, 13, o);
}

const PATH_OPS: [string, number][] = [['get', 2], ['put', 3], ['post', 4], ['delete', 5], ['patch', 8]];

/** One entry of the Paths message (NamedPathItem, field 2), with its key and length. */
export function pbPathEntry(path: string, item: Json): Uint8Array {
  const w = new PB();
  w.message(2, (n) => {
    n.string(1, path);
    n.message(2, (pi) => {
      for (const [m, f] of PATH_OPS) if (item[m]) pi.message(f, (x) => pbOperation(x, item[m]));
      for (const p of item.parameters ?? []) pi.message(9, (x) => pbParametersItem(x, p));
    });
  });
  return w.finish();
}

/** One entry of the Definitions message (NamedSchema, field 1), with its key and length. */
export function pbDefinitionEntry(name: string, schema: Json): Uint8Array {
  const w = new PB();
  w.message(1, (n) => { n.string(1, name); n.message(2, (x) => pbSchema(x, schema)); });
  return w.finish();
}

/** The Document message from its head fields and its already encoded path and definition entries. */
export function pbDocument(doc: Json, paths: Uint8Array[], definitions: Uint8Array[]): Uint8Array {
  const w = new PB();
  w.string(1, doc.swagger);
  w.message(2, (i) => { i.string(1, doc.info?.title); i.string(2, doc.info?.version); });
  w.bytes(8, Buffer.concat(paths));
  w.bytes(9, Buffer.concat(definitions));
  if (doc.parameters) {
    w.message(10, (pd) => {
      for (const [name, p] of Object.entries(doc.parameters as Json)) pd.message(1, (n) => { n.string(1, name); n.message(2, (x) => pbParameter(x, p)); });
    });
  }
  for (const req of doc.security ?? []) {
    w.message(12, (sr) => {
      for (const [name, scopes] of Object.entries(req as Json)) sr.message(1, (n) => { n.string(1, name); n.message(2, (a) => a.strings(1, scopes as string[])); });
    });
  }
  if (doc.securityDefinitions) {
    w.message(13, (sd) => {
      for (const [name, d] of Object.entries(doc.securityDefinitions as Json)) {
        sd.message(1, (n) => {
          n.string(1, name);
          n.message(2, (item) => item.message(2, (k) => { k.string(1, d.type); k.string(2, d.name); k.string(3, d.in); k.string(4, d.description); }));
        });
      }
    });
  }
  return w.finish();
}

/** The v2 document (as buildOpenAPI writes it) in protobuf. */
export function encodeOpenAPIV2(doc: Json): Uint8Array {
  return pbDocument(
    doc,
    Object.entries(doc.paths as Json).map(([p, item]) => pbPathEntry(p, item)),
    Object.entries(doc.definitions as Json).map(([n, d]) => pbDefinitionEntry(n, d)),
  );
}
