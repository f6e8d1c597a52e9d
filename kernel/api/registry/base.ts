// The registry's ground floor: what it is given (RegistryContext), what a request names (Target),
// the conversions between a type's stored and served versions, the cache lookups, and how one
// object is answered (respondObject for reads, sendWritten for writes). The read, watch and write
// layers (read.ts, watch.ts, write.ts, ...) build on this class; registry.ts assembles them.
import { joinWarnings, warningValue } from '../../ops/warnings.js';
import type { AdmissionAttributes, KObject, StorageBackend, TypeDef } from '../../contracts/index.js';
import type { Brand } from '../../contracts/brand.js';
import type { KRequest, KResponse } from '../../http/types.js';
import { storageKey, withBytes, type Entry, type ObjectCache, type ResourceCache } from '../../store/cache.js';
import { encodeAs, negotiate, type Accepted } from '../repr/negotiate.js';
import { table, type IncludeObject } from '../repr/table.js';
import type { OutputBudget } from '../../watch/outbudget.js';
import type { WatchHub } from '../../watch/fanout.js';
import { gv, storedApiVersion } from '../catalog.js';
import { entryProtobuf, isProtobufType, objectProtobuf, partialProtobuf } from '../repr/protobuf.js';
import { JSON_ACCEPTED, parse } from './util.js';

/**
 * The admission the registry runs (kernel/api/admission.ts's AdmissionChain): declared here so
 * the API machinery does not import the request pipeline that calls it.
 */
export interface Admission {
  /** True when a mutating step ran (the object may have changed). */
  admit(a: AdmissionAttributes): Promise<boolean>;
  validate(a: AdmissionAttributes): Promise<void>;
}

/** A request's audit context (kernel/ops/audit.ts's AuditContext), as far as the registry uses it. */
export interface AuditAttach {
  attach(a: AdmissionAttributes): void;
}

export interface RegistryContext {
  brand: Brand;
  backend: StorageBackend;
  cache: ObjectCache;
  admission: Admission;
  hub: WatchHub;
  maxBodyBytes: number;
  /** Watches end after a random time in [min, 2*min) seconds unless timeoutSeconds says otherwise. */
  minWatchTimeoutSeconds: number;
  /** Open watches' end functions, so shutdown can end them cleanly. */
  watches: Set<() => void>;
  /** Bytes a watcher may have queued on a backed-up socket before it is closed. */
  watchBudgetBytes: number;
  /** The server-wide budget all watchers' queued bytes share (kernel/watch/outbudget.ts). */
  outputBudget: OutputBudget;
  bookmarkIntervalMs: number;
  featureGates: Record<string, boolean>;
}

export interface Target {
  type: TypeDef;
  namespace: string;
  name: string;
  subresource: string;
  /** The request's audit context when audit backends are configured: admission attributes get `annotate` from it. */
  audit?: AuditAttach;
  /** Where admission warnings of this write go (collectWarnings), for the response's Warning headers. */
  warnings?: string[];
}

/**
 * Runs a write with a fresh list on its target that collects the warnings its admission adds
 * (AdmissionAttributes.warn), to be sent as Warning headers.
 */
export async function collectWarnings<T>(t: Target, fn: (t: Target) => Promise<T>): Promise<{ result: T; warned: string[] }> {
  const warned: string[] = [];
  const result = await fn({ ...t, warnings: warned });
  return { result, warned };
}

/** Headers plus the collected warnings, appended to any Warning header already there. */
export function withWarnings(headers: Record<string, string>, warned: string[]): Record<string, string> {
  if (!warned.length) return headers;
  return { ...headers, warning: joinWarnings(headers.warning, ...warned.map(warningValue))! };
}

/** The one header of an object's answer, made once per content type (the transports only read it). */
const ofContentType = new Map<string, Record<string, string>>();
function contentTypeHeaders(ct: string): Record<string, string> {
  let h = ofContentType.get(ct);
  if (!h) ofContentType.set(ct, (h = Object.freeze({ 'content-type': ct }) as Record<string, string>));
  return h;
}

export class RegistryBase {
  constructor(protected readonly ctx: RegistryContext) {}

  rc(type: TypeDef): ResourceCache { return this.ctx.cache.forType(type); }

  // ------------------------------------------------------------------ versions stored apart (TypeDef.convert)

  /** Stored bytes as this version serves them: objects stored in another version are converted, in one batch. */
  protected async asServed(type: TypeDef, bytes: Buffer[]): Promise<Buffer[]> {
    if (!type.convert) return bytes;
    const want = gv(type);
    const objs = bytes.map((b) => JSON.parse(b.toString('utf8')) as KObject);
    const idx = objs.flatMap((o, i) => (o.apiVersion !== want ? [i] : []));
    if (!idx.length) return bytes;
    const converted = await type.convert(idx.map((i) => objs[i]), want);
    const out = [...bytes];
    idx.forEach((i, j) => { out[i] = Buffer.from(JSON.stringify(converted[j])); });
    return out;
  }

  /** An entry as reads show it: with the defaults of TypeDef.readDefaults when it lacks some (a new entry; the stored one is never changed). */
  protected readDefaulted(type: TypeDef, e: Entry): Entry {
    const rd = type.readDefaults;
    if (!rd || !rd.pending(e.namespace, e.name)) return e;
    const obj = parse(e);
    if (obj.apiVersion !== gv(type) && type.convert) return e; // converted later; defaults are the served version's
    return withBytes(e, Buffer.from(JSON.stringify(rd.apply(obj))));
  }

  protected async fromStored(type: TypeDef, obj: KObject): Promise<KObject> {
    return type.convert && obj.apiVersion !== gv(type) ? (await type.convert([obj], gv(type)))[0] : obj;
  }

  /** The object as it is stored: in the storage version (or the other group's, for a resource stored with it), when that is not this one. */
  protected async toStored(type: TypeDef, obj: KObject): Promise<KObject> {
    const stored = storedApiVersion(type);
    return type.convert && stored !== gv(type) ? (await type.convert([obj], stored))[0] : obj;
  }

  current(type: TypeDef, namespace: string, name: string): Entry | undefined {
    return this.rc(type).byKey.get(storageKey(type, type.namespaced ? namespace : '', name));
  }

  // ------------------------------------------------------------------ serving

  /** Negotiated representation of a read: Table and metadata forms allowed, Protobuf where the type has it. */
  protected accepted(req: KRequest, t: Target): Accepted {
    return negotiate(req.header('accept'), this.ctx.brand, true, !!t.type.protobuf);
  }

  /** `entry`: the cached object being served, whose Protobuf encoding is kept for the next read. */
  protected respondObject(req: KRequest, res: KResponse, t: Target, code: number, bytes: Buffer, entry?: Entry): void | Promise<void> {
    let acc = this.accepted(req, t);
    let body: Uint8Array | string = bytes;
    if (acc.rep === 'protobuf') {
      const pb = entry ? entryProtobuf(t.type, entry, gv(t.type)) : objectProtobuf(this.ctx.brand, t.type, bytes);
      if (pb) body = pb;
      else acc = JSON_ACCEPTED;
    } else if (acc.rep === 'table' || acc.rep === 'partial') {
      const obj = JSON.parse(bytes.toString('utf8')) as KObject;
      const include = (req.query.get('includeObject') as IncludeObject) || 'Metadata';
      const metaApi = `meta.${this.ctx.brand.domain}/${acc.metaVersion}`;
      body = acc.rep === 'table'
        ? JSON.stringify(table(t.type, [obj], this.ctx.brand, include, acc.metaVersion!, { resourceVersion: obj.metadata?.resourceVersion ?? '' }))
        : acc.protobuf ? partialProtobuf(metaApi, obj.metadata) : JSON.stringify({ kind: 'PartialObjectMetadata', apiVersion: metaApi, metadata: obj.metadata });
    } else if (acc.rep === 'yaml') {
      const ct = acc.contentType;
      return encodeAs(acc, bytes).then((y) => res.send(code, { 'content-type': ct }, req.method === 'HEAD' ? '' : y));
    }
    res.send(code, contentTypeHeaders(acc.contentType), req.method === 'HEAD' ? '' : body);
  }

  /**
   * Table rows of a version converted in process are printed from the stored object, as the
   * reference prints its internal form whatever version was asked for (an object embedded in the
   * rows, when asked for, is in the request's version).
   */
  protected printsStored(req: KRequest, t: Target, acc: Accepted): boolean {
    return !!t.type.convertObject && acc.rep === 'table' && req.query.get('includeObject') !== 'Object';
  }

  /**
   * A write's answer in the representation the client accepts: JSON, YAML or Protobuf, and JSON
   * when nothing fits (the write has happened; refusing the answer would hide that).
   */
  protected async sendWritten(req: KRequest, res: KResponse, t: Target, code: number, headers: Record<string, string>, body: Buffer | string) {
    let acc: Accepted;
    try { acc = negotiate(req.header('accept'), this.ctx.brand, false, !!t.type.protobuf); } catch { acc = JSON_ACCEPTED; }
    let out: Uint8Array | string = body;
    if (acc.rep === 'protobuf') {
      const pb = objectProtobuf(this.ctx.brand, t.type, body);
      if (pb) out = pb;
      else acc = JSON_ACCEPTED;
    } else {
      out = await encodeAs(acc, body);
    }
    res.send(code, { ...headers, 'content-type': acc.contentType }, out);
  }

  protected isProtobuf(req: KRequest): boolean {
    return isProtobufType(this.ctx.brand, req.header('content-type'));
  }
}
