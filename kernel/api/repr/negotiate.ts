// Content negotiation: which representation a client accepts, and decoding request bodies.
import type { Brand } from '../../contracts/brand.js';
import type { KObject } from '../../contracts/index.js';
import { errors } from '../../contracts/status.js';
import { parseJson, YAML_DECODED_FACTOR } from '../../../workers/body/decode.js';
import { decodeYamlBody, encodeYamlBody } from '../../../workers/pool.js';

export type Representation = 'json' | 'yaml' | 'table' | 'partial' | 'protobuf';

export interface Accepted {
  rep: Representation;
  /** For Table and PartialObjectMetadata: the meta group-version asked for. */
  metaVersion?: string;
  contentType: string;
  /** PartialObjectMetadata in Protobuf (any type, custom resources too, as the reference serves it). */
  protobuf?: boolean;
}

interface MediaRange { type: string; params: Record<string, string>; q: number }

function parseAccept(h: string): MediaRange[] {
  const out: MediaRange[] = [];
  for (const part of h.split(',')) {
    const [type, ...ps] = part.split(';').map((s) => s.trim());
    if (!type) continue;
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of ps) {
      const i = p.indexOf('=');
      if (i < 0) continue;
      const k = p.slice(0, i).trim().toLowerCase();
      const v = p.slice(i + 1).trim().replace(/^"|"$/g, '');
      if (k === 'q') q = Number(v);
      else params[k] = v;
    }
    out.push({ type: type.toLowerCase(), params, q });
  }
  return out.sort((a, b) => b.q - a.q);
}

/**
 * The first acceptable representation in the client's order. Table and metadata-only forms are
 * offered only where `allowTable` (object reads), and only as JSON; Protobuf only where `protobuf`
 * (the type has a message), so a client that lists it first and JSON second gets JSON for the others.
 */
export function negotiate(accept: string | undefined, brand: Brand, allowTable: boolean, protobuf = false): Accepted {
  if (!accept) return JSON_ANSWER;
  // Clients send the same few Accept headers again and again: each one's answer is parsed once.
  let memos = negotiated.get(brand);
  if (!memos) negotiated.set(brand, (memos = [new Map(), new Map(), new Map(), new Map()]));
  const memo = memos[(allowTable ? 2 : 0) + (protobuf ? 1 : 0)];
  let acc = memo.get(accept);
  if (!acc) {
    acc = Object.freeze(choose(accept, brand, allowTable, protobuf));
    if (memo.size >= NEGOTIATED_MAX) memo.clear();
    memo.set(accept, acc);
  }
  return acc;
}

const JSON_ANSWER: Accepted = Object.freeze({ rep: 'json', contentType: 'application/json' });
const NEGOTIATED_MAX = 512;
/** Per brand, one memo for each combination of allowTable and protobuf. */
const negotiated = new WeakMap<Brand, Map<string, Accepted>[]>();

function choose(accept: string, brand: Brand, allowTable: boolean, protobuf: boolean): Accepted {
  const metaGroup = `meta.${brand.domain}`;
  for (const m of parseAccept(accept)) {
    if (m.q <= 0) continue;
    const as = m.params.as;
    if (as) {
      const pb = m.type === brand.protobufType;
      if (!allowTable || (!pb && m.type !== 'application/json' && m.type !== '*/*' && m.type !== 'application/*')) continue;
      if (m.params.g !== metaGroup || !['v1', 'v1beta1'].includes(m.params.v ?? '')) continue;
      // A Table is JSON only; metadata-only objects are JSON or Protobuf (metadata informers ask for Protobuf first).
      if (as === 'Table' && !pb) return { rep: 'table', metaVersion: m.params.v, contentType: 'application/json' };
      if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') return { rep: 'partial', metaVersion: m.params.v, contentType: pb ? brand.protobufType : 'application/json', ...(pb ? { protobuf: true } : {}) };
      continue;
    }
    if (m.type === 'application/json' || m.type === '*/*' || m.type === 'application/*' || m.type === 'application/json-seq') return { rep: 'json', contentType: 'application/json' };
    if (m.type === 'application/yaml') return { rep: 'yaml', contentType: 'application/yaml' };
    if (protobuf && m.type === brand.protobufType) return { rep: 'protobuf', contentType: brand.protobufType };
  }
  // The reference names its serializers for the type: JSON, YAML, and Protobuf where the type has it.
  throw errors.notAcceptable(`only the following media types are accepted: ${['application/json', 'application/yaml', ...(protobuf ? [brand.protobufType] : [])].join(', ')}`);
}

/** Duplicate keys found while decoding a YAML body, by body, so fieldValidation need not parse it again. */
const yamlDuplicates = new WeakMap<Buffer, string[]>();
export const decodedYamlDuplicates = (raw: Buffer): string[] | undefined => yamlDuplicates.get(raw);

/**
 * A YAML body, bounded and off the event loop when large (workers/body/decode.ts); a failure is a 400
 * starting with `prefix`, or a 413 when it would decode to more than YAML_DECODED_FACTOR times the
 * body limit `maxBodyBytes`.
 */
export async function decodeYaml(raw: Buffer, prefix: string, maxBodyBytes: number): Promise<unknown> {
  const r = await decodeYamlBody(raw.toString('utf8'), maxBodyBytes * YAML_DECODED_FACTOR);
  if (!r.ok) throw r.tooLarge ? errors.tooLarge(r.message) : errors.badRequest(prefix + r.message);
  yamlDuplicates.set(raw, r.duplicates);
  return r.value;
}

/** Decode a create/update body (JSON or YAML) into one object. */
export async function decodeBody(contentType: string | undefined, body: Buffer, maxBodyBytes: number): Promise<KObject> {
  const ct = (contentType ?? 'application/json').split(';')[0].trim().toLowerCase();
  let obj: unknown;
  if (ct === 'application/json' || ct === '' || ct === '*/*') {
    try { obj = parseJson(body.toString('utf8')); } catch (e) {
      throw errors.badRequest(`the body of the request could not be decoded as JSON: ${(e as Error).message}`);
    }
  } else if (ct === 'application/yaml' || ct === 'application/x-yaml' || ct === 'text/yaml') {
    obj = await decodeYaml(body, 'the body of the request could not be decoded as YAML: ', maxBodyBytes);
  } else {
    throw errors.unsupportedMediaType(['application/json', 'application/yaml']);
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw errors.badRequest('the body of the request must be a JSON object');
  return obj as KObject;
}

/**
 * A JSON answer in the accepted representation (YAML is written off the event loop when large).
 * `disposable`: the caller does not use `json` afterwards, so it may be moved to the worker, not copied.
 */
export async function encodeAs(acc: Accepted, json: Buffer | string, disposable = false): Promise<Uint8Array | string> {
  return acc.rep === 'yaml' ? encodeYamlBody(json, disposable) : json;
}
