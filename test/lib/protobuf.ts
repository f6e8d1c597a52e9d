// Test helpers for Protobuf: an independent protobufjs view of our catalogs (to decode our bytes with
// a second implementation), and sample JSON objects built from a message's fields.
import protobuf from 'protobufjs';
import { META, type ProtoCatalog, type ProtoMessage } from '../../kernel/api/repr/protobuf.js';

/** The wire shapes of the custom encodings, as protobufjs fields. */
function customFields(enc: string, of?: string): Record<string, { type: string; id: number; rule?: string }> {
  switch (enc) {
    case 'time': case 'microtime': return { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } };
    case 'duration': return { duration: { type: 'int64', id: 1 } };
    case 'intorstring': return { type: { type: 'int64', id: 1 }, intVal: { type: 'int32', id: 2 }, strVal: { type: 'string', id: 3 } };
    case 'quantity': return { string: { type: 'string', id: 1 } };
    case 'raw': return { raw: { type: 'bytes', id: 1 } };
    case 'array': return { items: { type: dotted(of!), id: 1, rule: 'repeated' } };
    case 'orarray': return { schema: { type: dotted(of!), id: 1 }, jSONSchemas: { type: dotted(of!), id: 2, rule: 'repeated' } };
    case 'orbool': return { allows: { type: 'bool', id: 1 }, schema: { type: dotted(of!), id: 2 } };
    case 'orstringarray': return { schema: { type: dotted(of!), id: 1 }, property: { type: 'string', id: 2, rule: 'repeated' } };
  }
  throw new Error(enc);
}

const SCALARS = new Set(['string', 'bytes', 'bool', 'int32', 'int64', 'uint32', 'uint64', 'double', 'float']);
const dotted = (t: string) => (SCALARS.has(t) ? t : `.m.${t.replace(/\./g, '_')}`);

/** One protobufjs Root holding every message of the catalogs (names flattened under package m). */
export function protobufjsRoot(...catalogs: ProtoCatalog[]): protobuf.Root {
  const nested: Record<string, unknown> = {};
  const all: Record<string, ProtoMessage> = Object.assign({}, META.messages, ...catalogs.map((c) => c.messages));
  for (const [name, m] of Object.entries(all)) {
    const fields: Record<string, unknown> = {};
    if (!Array.isArray(m)) Object.assign(fields, customFields(m.enc, m.of));
    else {
      for (const [json, no, type, flags] of m) {
        const key = `f${no}`; // JSON names like "$ref" are not identifiers
        if (flags.includes('m')) fields[key] = { keyType: 'string', type: dotted(type), id: no };
        else fields[key] = { type: dotted(type), id: no, ...(flags.includes('r') ? { rule: 'repeated', options: { packed: false } } : {}) };
        void json;
      }
    }
    nested[name.replace(/\./g, '_')] = { fields };
  }
  nested.Unknown = { fields: { typeMeta: { type: 'TypeMeta', id: 1 }, raw: { type: 'bytes', id: 2 }, contentEncoding: { type: 'string', id: 3 }, contentType: { type: 'string', id: 4 } } };
  nested.TypeMeta = { fields: { apiVersion: { type: 'string', id: 1 }, kind: { type: 'string', id: 2 } } };
  return protobuf.Root.fromJSON({ nested: { m: { nested } } } as protobuf.INamespace);
}

export function pbType(root: protobuf.Root, name: string): protobuf.Type {
  return root.lookupType(`m.${name.replace(/\./g, '_')}`);
}

/**
 * A JSON object that sets every field of a message (to a bounded depth), in the JSON form the
 * reference's Go types produce: what a full round trip must give back unchanged.
 */
export function sampleObject(catalog: ProtoCatalog, name: string, depth = 0, seed = 1, path: string[] = []): unknown {
  const m = catalog.messages[name] ?? META.messages[name];
  if (!Array.isArray(m)) {
    switch (m.enc) {
      case 'time': return '2024-05-06T07:08:09Z';
      case 'microtime': return '2024-05-06T07:08:09.123456Z';
      case 'duration': return seed % 2 ? '1m30s' : '250ms';
      case 'intorstring': return seed % 2 ? 8080 : 'http';
      case 'quantity': return seed % 2 ? '500m' : '2Gi';
      case 'raw': return { apiVersion: 'v1', kind: 'Thing', n: seed };
      case 'array': return [scalar(m.of!, seed), scalar(m.of!, seed + 1)];
      case 'orarray': return [{ type: 'string' }];
      case 'orbool': return seed % 2 ? false : { type: 'integer' };
      case 'orstringarray': return ['a', 'b'];
    }
  }
  const out: Record<string, unknown> = {};
  if (depth > 8 || path.includes(name)) return out; // recursive types (JSON schemas) stop at one level
  const within = [...path, name];
  for (const [json, no, type, flags] of m as [string, number, string, string][]) {
    const s = seed + no;
    const v = () => (SCALARS.has(type) ? scalar(type, s) : sampleObject(catalog, type, depth + 1, s, within));
    if (flags.includes('i')) Object.assign(out, sampleObject(catalog, type, depth + 1, s, within));
    else if (flags.includes('m')) out[json] = { [`k${s}`]: v() };
    else if (flags.includes('r')) out[json] = [v()];
    else out[json] = v();
  }
  return out;
}

function scalar(type: string, seed: number): unknown {
  switch (type) {
    case 'string': return `s${seed}`;
    case 'bytes': return Buffer.from(`b${seed}`).toString('base64');
    case 'bool': return true;
    case 'double': case 'float': return seed + 0.5;
    case 'int32': return -seed;
    default: return seed * 1000;
  }
}

import https from 'node:https';
import type { TestServer } from './server.js';

export interface RawReply { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }

/** An HTTPS request whose answer is kept as bytes (Protobuf bodies are binary). */
export function rawRequest(s: TestServer, method: string, p: string, headers: Record<string, string> = {}, body?: Buffer): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: s.port, method, path: p, headers: { authorization: `Bearer ${s.token}`, ...(body ? { 'content-length': String(body.length) } : {}), ...headers }, ca: s.ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A Protobuf watch: each 4-byte big-endian length-prefixed frame is handed over as it completes. */
export function protobufWatch(s: TestServer, p: string, accept: string, onFrame: (frame: Buffer) => void): { close(): void; headers: Promise<Record<string, string | string[] | undefined>> } {
  let req!: ReturnType<typeof https.request>;
  const headers = new Promise<Record<string, string | string[] | undefined>>((resolve, reject) => {
    req = https.request({ host: '127.0.0.1', port: s.port, method: 'GET', path: p, headers: { authorization: `Bearer ${s.token}`, accept }, ca: s.ca }, (res) => {
      resolve(res.headers);
      let buf = Buffer.alloc(0);
      res.on('data', (c: Buffer) => {
        buf = Buffer.concat([buf, c]);
        while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
          const n = buf.readUInt32BE(0);
          onFrame(buf.subarray(4, 4 + n));
          buf = buf.subarray(4 + n);
        }
      });
      res.on('error', () => {});
    });
    req.on('error', reject);
    req.end();
  });
  return { close: () => req.destroy(), headers };
}
