// The generic registry: get, list, watch, create, update, patch, delete and deletecollection for
// every type, driven by its TypeDef. Nothing here knows a particular type.
import { joinWarnings, warningValue } from '../warnings.js';
import { randomUUID, randomBytes } from 'node:crypto';
import type { AdmissionAttributes, FieldCause, KObject, Operation, StorageBackend, TypeDef, UserInfo, WriteFinisher, WriteGuard, WriteResult, UpstreamTarget } from '../../contracts/index.js';
import type { Brand } from '../../contracts/brand.js';
import type { KRequest, KResponse } from '../../http/types.js';
import { errors, StatusError } from '../../contracts/status.js';
import { makeEntry, resourcePrefix, storageKey, withBytes, withRevision, type Entry, type ObjectCache, type ResourceCache } from '../../store/cache.js';
import { decodeBody, decodedYamlDuplicates, decodeYaml, encodeAs, negotiate, type Accepted } from '../repr/negotiate.js';
import { depthError, parseJson } from '../../../workers/decode.js';
import { columnDefinitions, table, tableRow, type IncludeObject } from '../repr/table.js';
import { Slicer, giveTurn, joinSliced } from '../../watch/slicer.js';
import { sendSized, type OutputBudget, type OutputHolder } from '../../watch/outbudget.js';
import { gv, storedApiVersion } from '../catalog.js';
import type { WatchHub, Watcher, EventType } from '../../watch/fanout.js';
import { goPrint, goQuote, isDNS1123Label, validateObjectMeta, validateObjectMetaUpdate } from '../validation.js';
import { parseLabelSelector, matchLabels, parseFieldSelector, matchFields, exactFieldValue } from '../selectors.js';
import { decodeDeleteOptions, decodeProtobuf, entryProtobuf, isProtobufType, listProtobuf, objectProtobuf, partialListProtobuf, partialProtobuf, statusProtobuf, watchFrame } from '../repr/protobuf.js';
import { checkWriteOptions, dryRunCauses, queryBool, queryInt } from '../options.js';
import { checkJsonOnWorker, checksJsonOnWorker, runMerge } from '../../../workers/pool.js';
import { conflictError, managerFromUserAgent, runMergeTask, withManagedFields, type ApplyResult, type FieldsV1, type MergeTask } from '../../../workers/merge/index.js';
import { WriteQueue } from '../../store/writequeue.js';
import { proxyConnect, type ConnectOptions } from '../proxy.js';
import { compileValidator, dropNullFields, findDuplicateFields, decodeTypeError, duplicateYamlKeyLines, findDuplicateYamlKeys, pruneUnknown, strictDecodingMessage, strictErrors, unknownFields } from '../fieldvalidation.js';

/**
 * The admission the registry runs (kernel/pipeline/admission.ts's AdmissionChain): declared here so
 * the API machinery does not import the request pipeline that calls it.
 */
export interface Admission {
  admit(a: AdmissionAttributes): Promise<void>;
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

const JSON_HEADERS = { 'content-type': 'application/json' };
const JSON_ACCEPTED: Accepted = { rep: 'json', contentType: 'application/json' };
/** Fresh names tried when a generated name is taken. */
const MAX_NAME_ATTEMPTS = 8;
const NAME_SUFFIX_CHARS = 'bcdfghjklmnpqrstvwxz2456789'; // as the reference: no vowels, no 0/1/3 look-alikes

function randomSuffix(n = 5): string {
  const b = randomBytes(n);
  let s = '';
  for (let i = 0; i < n; i++) s += NAME_SUFFIX_CHARS[b[i] % NAME_SUFFIX_CHARS.length];
  return s;
}

const now = () => new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
const parse = (e: Entry): KObject => JSON.parse(e.bytes.toString('utf8'));
const clone = <T>(o: T): T => (o === undefined ? o : JSON.parse(JSON.stringify(o)));

function getPath(obj: KObject, path: string): unknown {
  let cur: unknown = obj;
  for (const seg of path.split('.')) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[seg] : undefined;
  return cur;
}
function setPath(obj: KObject, path: string, value: unknown) {
  const segs = path.split('.');
  let cur = obj as Record<string, unknown>;
  for (const s of segs.slice(0, -1)) cur = (cur[s] ??= {}) as Record<string, unknown>;
  if (value === undefined) delete cur[segs[segs.length - 1]];
  else cur[segs[segs.length - 1]] = value;
}

/** Everything but metadata and status: a change here bumps metadata.generation. */
function specOf(o: KObject): string {
  const { metadata: _m, status: _s, ...rest } = o;
  return JSON.stringify(rest);
}

/**
 * Runs a write with a fresh list on its target that collects the warnings its admission adds
 * (AdmissionAttributes.warn), to be sent as Warning headers.
 */
async function collectWarnings<T>(t: Target, fn: (t: Target) => Promise<T>): Promise<{ result: T; warned: string[] }> {
  const warned: string[] = [];
  const result = await fn({ ...t, warnings: warned });
  return { result, warned };
}

/** Headers plus the collected warnings, appended to any Warning header already there. */
function withWarnings(headers: Record<string, string>, warned: string[]): Record<string, string> {
  if (!warned.length) return headers;
  return { ...headers, warning: joinWarnings(headers.warning, ...warned.map(warningValue))! };
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

/** Where a watch's bytes go: the transport, or a converting stage before it. write() false: backed up. */
interface Sink { write(b: Buffer): boolean; end(): void; resume?(): void }
/** Bytes a watch may hand a converting sink beyond what it has converted and written. */
const CONVERTING_AHEAD = 64 * 1024;

export class Registry {
  private guards = new Map<string, WriteGuard[]>();
  /** Clients' writes to one object wait for each other (see WriteQueue). */
  private writes = new WriteQueue();
  constructor(private ctx: RegistryContext) {}

  /** Runs a client's write to t's object behind the writes to it already under way. */
  private queued<T>(t: Target, fn: () => Promise<T>): Promise<T> {
    return this.writes.run(storageKey(t.type, t.namespace, t.name), fn);
  }

  /**
   * Another writer committed first (a plugin's write, or one outside the queue): wait until the cache
   * holds that write, so the next attempt reads it instead of the version that just lost.
   */
  private async afterConflict(t: Target, r: WriteResult): Promise<void> {
    if (r.ok) return;
    if (r.reason === 'not-found') throw errors.notFound(t.type.group, t.type.resource, t.name);
    const rev = r.current?.modRevision ?? this.ctx.backend.currentRevision();
    if (!(await this.ctx.cache.waitFor(rev, 3000))) throw errors.timeout('Timeout: waiting for the cache to catch up', 1);
  }

  /** A plugin's check on every create and update of a type (see PluginHost.guardWrites). */
  addGuard(group: string, resource: string, guard: WriteGuard): void {
    const k = `${group}/${resource}`;
    this.guards.set(k, [...(this.guards.get(k) ?? []), guard]);
  }

  private async guard(t: Target, op: 'CREATE' | 'UPDATE', obj: KObject, old: KObject | undefined, user: UserInfo) {
    for (const g of this.guards.get(`${t.type.group}/${t.type.resource}`) ?? []) await g(op, obj, old, user);
  }

  rc(type: TypeDef): ResourceCache { return this.ctx.cache.forType(type); }

  // ------------------------------------------------------------------ versions stored apart (TypeDef.convert)

  /** Stored bytes as this version serves them: objects stored in another version are converted, in one batch. */
  private async asServed(type: TypeDef, bytes: Buffer[]): Promise<Buffer[]> {
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
  private readDefaulted(type: TypeDef, e: Entry): Entry {
    const rd = type.readDefaults;
    if (!rd || !rd.pending(e.namespace, e.name)) return e;
    const obj = parse(e);
    if (obj.apiVersion !== gv(type) && type.convert) return e; // converted later; defaults are the served version's
    return withBytes(e, Buffer.from(JSON.stringify(rd.apply(obj))));
  }

  private async fromStored(type: TypeDef, obj: KObject): Promise<KObject> {
    return type.convert && obj.apiVersion !== gv(type) ? (await type.convert([obj], gv(type)))[0] : obj;
  }

  /** The object as it is stored: in the storage version (or the other group's, for a resource stored with it), when that is not this one. */
  private async toStored(type: TypeDef, obj: KObject): Promise<KObject> {
    const stored = storedApiVersion(type);
    return type.convert && stored !== gv(type) ? (await type.convert([obj], stored))[0] : obj;
  }

  /**
   * A watch's output for a version stored apart: each event's object converted, in order. Conversion
   * may wait on a webhook, so the sink takes more only while less than CONVERTING_AHEAD bytes wait
   * for it and the socket takes what it writes; otherwise write() says "backed up", the watch keeps
   * later events in its counted backlog, and `onRoom` (the watch's drain) is called once there is room.
   * `resume()` tells it the socket drained.
   */
  private convertingSink(type: TypeDef, inner: Sink, onRoom: () => void): Sink {
    if (!type.convert) return inner;
    const want = gv(type);
    let chain = Promise.resolve();
    let waiting = 0;
    let socketFull = false;
    let refused = false;
    const convert = async (b: Buffer): Promise<Buffer> => {
      const lines = b.toString('utf8').split('\n').filter(Boolean);
      const out: string[] = [];
      for (const line of lines) {
        const ev = JSON.parse(line) as { type: string; object: KObject };
        if (ev.object?.kind === type.kind && ev.object.apiVersion && ev.object.apiVersion !== want) ev.object = (await type.convert!([ev.object], want))[0];
        out.push(JSON.stringify(ev) + '\n');
      }
      return Buffer.from(out.join(''));
    };
    const room = () => waiting < CONVERTING_AHEAD && !socketFull;
    return {
      write: (b) => {
        waiting += b.length;
        chain = chain.then(async () => {
          const out = await convert(b);
          waiting -= b.length;
          if (!inner.write(out)) socketFull = true;
          if (refused && room()) { refused = false; onRoom(); }
        }).catch((e) => {
          inner.write(Buffer.from(`{"type":"ERROR","object":${JSON.stringify(errors.internal(String((e as Error)?.message ?? e)).toStatus())}}\n`));
          inner.end();
        });
        if (room()) return true;
        refused = true;
        return false;
      },
      end: () => { chain = chain.then(() => inner.end()); },
      resume: () => { socketFull = false; },
    };
  }

  private key(t: Target) { return storageKey(t.type, t.namespace, t.name); }

  current(type: TypeDef, namespace: string, name: string): Entry | undefined {
    return this.rc(type).byKey.get(storageKey(type, type.namespaced ? namespace : '', name));
  }

  // ------------------------------------------------------------------ serving

  /** Negotiated representation of a read: Table and metadata forms allowed, Protobuf where the type has it. */
  private accepted(req: KRequest, t: Target): Accepted {
    return negotiate(req.header('accept'), this.ctx.brand, true, !!t.type.protobuf);
  }

  /** `entry`: the cached object being served, whose Protobuf encoding is kept for the next read. */
  private async respondObject(req: KRequest, res: KResponse, t: Target, code: number, bytes: Buffer, entry?: Entry) {
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
    } else {
      body = await encodeAs(acc, bytes);
    }
    res.send(code, { 'content-type': acc.contentType }, req.method === 'HEAD' ? '' : body);
  }

  /**
   * Table rows of a version converted in process are printed from the stored object, as the
   * reference prints its internal form whatever version was asked for (an object embedded in the
   * rows, when asked for, is in the request's version).
   */
  private printsStored(req: KRequest, t: Target, acc: Accepted): boolean {
    return !!t.type.convertObject && acc.rep === 'table' && req.query.get('includeObject') !== 'Object';
  }

  /** A computed type's get or list (TypeDef.computed): the objects of this moment, never stored. */
  async computed(req: KRequest, res: KResponse, t: Target): Promise<void> {
    const acc = this.accepted(req, t);
    const sel = this.selectors(t.type, req.query);
    const objs = await t.type.computed!();
    const entries = objs.map((o) => {
      const md = o.metadata ?? {};
      return makeEntry(t.type, storageKey(t.type, md.namespace ?? '', md.name ?? ''), Buffer.from(JSON.stringify(o)), o, 0, 0);
    });
    if (t.name) {
      const e = entries.find((x) => x.name === t.name && (!t.type.namespaced || x.namespace === t.namespace));
      if (!e) throw errors.notFound(t.type.group, t.type.resource, t.name);
      return this.respondObject(req, res, t, 200, e.bytes);
    }
    const ns = this.scope(t, sel);
    const items = entries.filter((e) => (!ns || e.namespace === ns) && (sel.name === undefined || e.name === sel.name) && (!sel.matches || sel.matches(e)));
    await this.sendList(req, res, t, acc, items, this.ctx.cache.rev, '', undefined);
  }

  async get(req: KRequest, res: KResponse, t: Target): Promise<void> {
    const rv = req.query.get('resourceVersion');
    if (rv === null || rv === '') await this.consistent();
    else if (rv !== '0') await this.notOlderThan(rv);
    const e = this.current(t.type, t.namespace, t.name);
    if (!e) throw errors.notFound(t.type.group, t.type.resource, t.name);
    if (t.subresource === 'scale') return this.respondObject(req, res, t, 200, Buffer.from(JSON.stringify(this.scaleOf(t.type, parse(e)))));
    const shown = this.readDefaulted(t.type, e);
    const served = this.printsStored(req, t, this.accepted(req, t)) ? shown.bytes : (await this.asServed(t.type, [shown.bytes]))[0];
    await this.respondObject(req, res, t, 200, served, served === shown.bytes && shown === e ? e : undefined);
  }

  /**
   * A write's answer in the representation the client accepts: JSON, YAML or Protobuf, and JSON
   * when nothing fits (the write has happened; refusing the answer would hide that).
   */
  private async sendWritten(req: KRequest, res: KResponse, t: Target, code: number, headers: Record<string, string>, body: Buffer | string) {
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

  /** Consistent read: the cache has applied everything committed. */
  async consistent(): Promise<void> {
    const b = this.ctx.backend;
    const rev = b.latestRevision ? await b.latestRevision() : b.currentRevision();
    if (!(await this.ctx.cache.waitFor(rev, 3000))) throw errors.timeout('Timeout: waiting for the cache to catch up', 1);
  }

  async notOlderThan(rv: string): Promise<void> {
    const n = Number(rv);
    if (!/^\d+$/.test(rv)) throw errors.badRequest(`invalid resource version "${rv}"`);
    if (!(await this.ctx.cache.waitFor(n, 3000))) {
      const e = errors.timeout(`Timeout: Too large resource version: ${n}, current: ${this.ctx.cache.rev}`, 1);
      e.details = { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 };
      throw e;
    }
  }

  private selectors(type: TypeDef, q: URLSearchParams) {
    const ls = q.get('labelSelector') ?? '';
    const fs = q.get('fieldSelector') ?? '';
    let label, field;
    try { label = ls ? parseLabelSelector(ls) : undefined; } catch (e) { throw errors.badRequest(`unable to parse requirement: ${(e as Error).message}`.replace('unable to parse requirement: unable to parse requirement: ', 'unable to parse requirement: ')); }
    // A type stored with another group's resource names the stored fields after its own schema (fieldLabels).
    const labels = type.fieldLabels;
    const supported = new Set(['metadata.name', 'metadata.namespace', ...Object.keys(labels ?? type.fieldSelectors ?? {})]);
    try { field = fs ? parseFieldSelector(fs, supported) : undefined; } catch (e) { throw errors.badRequest((e as Error).message); }
    const matches = label || field
      ? (e: Entry) => (!label || matchLabels(label, e.labels)) && (!field || matchFields(field, (f) => e.fields[labels?.[f] ?? f] ?? ''))
      : undefined;
    const name = field ? exactFieldValue(field, 'metadata.name') : undefined;
    const namespace = field ? exactFieldValue(field, 'metadata.namespace') : undefined;
    let indexed: [string, string] | undefined;
    for (const f of type.indexedFields ?? []) {
      const v = field ? exactFieldValue(field, f) : undefined;
      if (v !== undefined) { indexed = [f, v]; break; }
    }
    return { matches, name, namespace, indexed, hasSelector: !!(label || field) };
  }

  /**
   * The namespace a list, watch or collection read covers. The request's path is its scope; a
   * metadata.namespace selector only narrows a cluster-wide request (as the reference's store does
   * for a valid namespace name) and never widens a namespaced one: there the selector stays a filter
   * (`matches`), so naming another namespace selects nothing.
   */
  private scope(t: Target, sel: { namespace?: string }): string {
    if (t.namespace || !t.type.namespaced) return t.namespace;
    return sel.namespace !== undefined && !isDNS1123Label(sel.namespace).length ? sel.namespace : '';
  }

  /**
   * Which revision a list reads, per Part A's list table: Most recent (consistent), Any (the cache as
   * it is), Not older than (wait for it), Exact (rebuild that revision from history), or the continue
   * token's revision. Invalid combinations are 422 (ListOptions) or 400, as the reference answers.
   */
  private async listRevision(q: URLSearchParams, limit: number, cont: string): Promise<{ rev: number; start?: { namespace: string; name: string } }> {
    const rv = q.get('resourceVersion') ?? '';
    const rvm = q.get('resourceVersionMatch') ?? '';
    // Every invalid combination is reported at once, as the reference's ListOptions validation does.
    const causes: FieldCause[] = [];
    const forbid = (field: string, message: string) => causes.push({ reason: 'FieldValueForbidden', field, message: `Forbidden: ${message}` });
    if (q.get('sendInitialEvents') !== null) forbid('sendInitialEvents', 'sendInitialEvents is forbidden for list');
    if (rvm) {
      if (rvm !== 'Exact' && rvm !== 'NotOlderThan') {
        causes.push({ reason: 'FieldValueNotSupported', field: 'resourceVersionMatch', message: `Unsupported value: "${rvm}": supported values: "Exact", "NotOlderThan", ""` });
      }
      if (cont) forbid('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided');
      if (!rv) forbid('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided');
      if (rvm === 'Exact' && rv === '0') forbid('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
    }
    if (causes.length) throw errors.invalid(`meta.${this.ctx.brand.domain}`, 'ListOptions', '', causes);
    if (rv && rv !== '0' && !/^[1-9]\d*$/.test(rv)) throw errors.badRequest(`invalid resource version "${rv}"`);
    if (cont) {
      if (rv && rv !== '0') throw errors.badRequest('specifying resource version is not allowed when using continue');
      const tok = decodeContinue(cont);
      if (tok.rv < this.ctx.cache.floor) {
        const e = errors.gone('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.');
        e.listMeta = { continue: encodeContinue(this.ctx.cache.rev, tok.start) };
        throw e;
      }
      if (tok.rv > this.ctx.cache.rev) throw errors.badRequest('continue key is not valid: the resource version is newer than the server\'s');
      return { rev: tok.rv, start: tok.start };
    }
    if (rv === '') { await this.consistent(); return { rev: this.ctx.cache.rev }; }
    if (rv === '0') return { rev: this.ctx.cache.rev };
    const n = Number(rv);
    const exact = rvm === 'Exact' || (!rvm && limit > 0);
    await this.notOlderThan(rv);
    if (!exact) return { rev: this.ctx.cache.rev };
    if (n < this.ctx.cache.floor) throw errors.gone('The resourceVersion for the provided list is too old.');
    return { rev: n };
  }

  async list(req: KRequest, res: KResponse, t: Target): Promise<void> {
    const q = req.query;
    const acc = this.accepted(req, t);
    const cont = q.get('continue') ?? '';
    // A negative limit means no limit, as in the reference's storage. timeoutSeconds is decoded (and
    // refused when malformed) with the other ListOptions even though a list does not use it.
    const limit = Math.max(0, queryInt(q, 'limit') ?? 0);
    queryInt(q, 'timeoutSeconds');
    const sel = this.selectors(t.type, q);
    const { rev, start } = await this.listRevision(q, limit, cont);
    if (t.namespace && sel.namespace !== undefined && sel.namespace !== t.namespace) { await this.sendList(req, res, t, acc, [], rev, '', undefined); return; }
    const ns = this.scope(t, sel);
    const rc = this.rc(t.type);
    // The same unfiltered list at the same revision is served from the bytes built last time.
    const memoKey = !sel.hasSelector && (acc.rep === 'json' || acc.rep === 'protobuf') && rev === this.ctx.cache.rev && !t.type.convert && !t.type.readDefaults?.any() ? `${acc.rep}\0${ns}\0${rev}\0${limit}\0${start ? `${start.namespace}/${start.name}` : ''}` : '';
    // (shared bytes: a stalled client holds only what it has queued)
    if (memoKey && rc.listMemo?.key === memoKey) return this.sendAnswer(req, res, t, { 'content-type': acc.contentType }, [rc.listMemo.body], rc.listMemo.body.length, false);
    const items: Entry[] = [];
    let next = '';
    let remaining = 0;
    // The cache's sorted array when reading the latest revision; otherwise the rebuilt older revision.
    const latest = rev === this.ctx.cache.rev;
    const source = latest ? rc.range(ns, start) : rc.at(rev, ns, start);
    // Without a filter, what a page leaves is counted from the sorted index: reading every later entry
    // for remainingItemCount made paging through a collection quadratic.
    const counted = latest && !sel.hasSelector && sel.name === undefined && !sel.matches;
    for (const e of source) {
      if (sel.name !== undefined && e.name !== sel.name) continue;
      if (sel.matches && !sel.matches(e)) continue;
      if (limit && items.length === limit) {
        if (!next) {
          const last = items[items.length - 1];
          next = encodeContinue(rev, { namespace: last.namespace, name: last.name + '\0' });
          if (sel.hasSelector) break; // no count is reported with selectors: stop reading
          if (counted) { remaining = rc.count(ns, start) - limit; break; }
        }
        remaining++;
        continue;
      }
      items.push(e);
    }
    if (t.type.readDefaults?.any()) items.forEach((e, i) => { items[i] = this.readDefaulted(t.type, e); });
    if (t.type.convert && !this.printsStored(req, t, acc)) {
      const converted = await this.asServed(t.type, items.map((e) => e.bytes));
      items.forEach((e, i) => { if (converted[i] !== e.bytes) items[i] = withBytes(e, converted[i]); });
    }
    const body = await this.sendList(req, res, t, acc, items, rev, next, next && !sel.hasSelector ? remaining : undefined, memoKey ? { rc, key: memoKey } : undefined);
    if (memoKey && body) rc.listMemo = { key: memoKey, body };
  }

  /**
   * Sends a list; returns the body when it was built whole as JSON or Protobuf (so the same list at
   * the same revision can reuse it). Large answers go out in pieces with backpressure and count in
   * the server's output budget while their client is not reading (sendAnswer); JSON and Protobuf
   * lists are then sent straight from each object's cached bytes, never joined into one buffer.
   * Table and metadata-only rows are built item by item in time slices, and YAML is written on a
   * worker, so a list of tens of MB does not hold the event loop.
   */
  private async sendList(req: KRequest, res: KResponse, t: Target, acc: Accepted, items: Entry[], rev: number, next: string, remaining: number | undefined, memo?: ListMemoSlot): Promise<Buffer | undefined> {
    const meta: Record<string, unknown> = { resourceVersion: String(rev), continue: next };
    if (remaining !== undefined) meta.remainingItemCount = remaining;
    if (acc.rep === 'partial' && acc.protobuf) {
      // Metadata-only in Protobuf (metadata informers): each item's metadata, in time slices.
      const metaApi = `meta.${this.ctx.brand.domain}/${acc.metaVersion}`;
      const metadatas: unknown[] = [];
      const slicer = new Slicer();
      for (const e of items) {
        metadatas.push(parse(e).metadata);
        if (slicer.due()) {
          await slicer.pause();
          if (res.aborted) return undefined;
        }
      }
      const parts = partialListProtobuf(metaApi, meta, metadatas);
      await this.sendAnswer(req, res, t, { 'content-type': acc.contentType }, parts, parts.reduce((n, p) => n + p.length, 0), true);
      return undefined;
    }
    if (acc.rep === 'table' || acc.rep === 'partial') {
      const include = (req.query.get('includeObject') as IncludeObject) || 'Metadata';
      const metaApi = `meta.${this.ctx.brand.domain}/${acc.metaVersion}`;
      const now = Date.now();
      // The same JSON as JSON.stringify(table(...)) or of the PartialObjectMetadataList, one row at a time.
      const head = acc.rep === 'table'
        ? `{"kind":"Table","apiVersion":"${metaApi}","metadata":${JSON.stringify(meta)},"columnDefinitions":${JSON.stringify(columnDefinitions(t.type))},"rows":[`
        : `{"kind":"PartialObjectMetadataList","apiVersion":"${metaApi}","metadata":${JSON.stringify(meta)},"items":[`;
      // Bytes per row: the answer goes out row by row, never one huge string to encode on the event loop.
      const parts: Buffer[] = [Buffer.from(head)];
      let total = parts[0].length + TAIL.length;
      const slicer = new Slicer();
      for (const e of items) {
        const o = parse(e);
        if (parts.length > 1) { parts.push(COMMA); total++; }
        const row = Buffer.from(JSON.stringify(acc.rep === 'table' ? tableRow(t.type, o, this.ctx.brand, include, acc.metaVersion!, now) : { kind: 'PartialObjectMetadata', apiVersion: metaApi, metadata: o.metadata }));
        parts.push(row);
        total += row.length;
        if (slicer.due()) {
          await slicer.pause();
          if (res.aborted) return undefined;
        }
      }
      parts.push(TAIL);
      await this.sendAnswer(req, res, t, JSON_HEADERS, parts, total, true);
      return undefined;
    }
    if (acc.rep === 'protobuf') {
      // Each item's cached Protobuf message goes out as it is, as for JSON below.
      const parts = listProtobuf(t.type, gv(t.type), meta, items);
      const total = parts.reduce((n, p) => n + p.length, 0);
      if (total > LIST_MEMO_MAX_BYTES) return this.sendLarge(req, res, t, acc, parts, total, memo);
      const pb = Buffer.concat(parts, total);
      await this.sendAnswer(req, res, t, { 'content-type': acc.contentType }, [pb], total, true);
      return pb;
    }
    // Each item's stored bytes go out as they are: the list is never re-serialized.
    const head = Buffer.from(`{"kind":"${t.type.kind}List","apiVersion":"${gv(t.type)}","metadata":${JSON.stringify(meta)},"items":[`);
    let total = head.length + TAIL.length + Math.max(0, items.length - 1);
    for (const e of items) total += e.bytes.length;
    function* pieces() {
      yield head;
      for (let j = 0; j < items.length; j++) {
        if (j) yield COMMA;
        yield items[j].bytes;
      }
      yield TAIL;
    }
    if (acc.rep === 'json' && total > LIST_MEMO_MAX_BYTES) return this.sendLarge(req, res, t, acc, pieces(), total, memo);
    if (acc.rep === 'json') {
      const json = Buffer.concat([...pieces()], total);
      await this.sendAnswer(req, res, t, { 'content-type': acc.contentType }, [json], total, true);
      return json;
    }
    // YAML is written on a worker from the whole JSON, joined here in slices and moved there.
    const json = await joinSliced(pieces(), total);
    if (res.aborted) return undefined;
    const yaml = await encodeAs(acc, json, true);
    const bytes = typeof yaml === 'string' ? Buffer.from(yaml) : yaml;
    await this.sendAnswer(req, res, t, { 'content-type': acc.contentType }, [bytes], bytes.length, true);
    return undefined;
  }

  /**
   * A large JSON or Protobuf list. When it will be kept for the next identical list (`memo`), it is
   * joined in time slices once and every later client gets those shared bytes; otherwise it goes
   * out from the objects' cached bytes as they are, never joined.
   */
  private async sendLarge(req: KRequest, res: KResponse, t: Target, acc: Accepted, pieces: Iterable<Uint8Array>, total: number, memo: ListMemoSlot | undefined): Promise<Buffer | undefined> {
    const headers = { 'content-type': acc.contentType };
    if (!memo) { await this.sendAnswer(req, res, t, headers, pieces, total, false); return undefined; }
    // Clients asking for the same list while it is being joined wait for that one join.
    const { rc, key } = memo;
    let joining = rc.listJoin?.key === key ? rc.listJoin.body : undefined;
    if (!joining) rc.listJoin = { key, body: (joining = joinSliced(pieces, total)) };
    const body = await joining.finally(() => { if (rc.listJoin?.body === joining) rc.listJoin = undefined; });
    if (!res.aborted) await this.sendAnswer(req, res, t, headers, [body], total, false);
    return body;
  }

  /**
   * A list's answer: small ones in one piece, large ones in pieces with backpressure, counted in the
   * server's output budget while the client is not reading (kernel/watch/outbudget.ts). `built`: the
   * pieces were made for this answer (see SizedAnswer).
   */
  private async sendAnswer(req: KRequest, res: KResponse, t: Target, headers: Record<string, string>, pieces: Iterable<Uint8Array>, total: number, built: boolean): Promise<void> {
    if (req.method === 'HEAD') return res.send(200, headers, '');
    if (total < SIZED_ANSWER_BYTES) {
      const parts = [...pieces];
      return res.send(200, headers, parts.length === 1 ? parts[0] : Buffer.concat(parts, total));
    }
    await sendSized(res, this.ctx.outputBudget, { what: `list ${req.path}`, group: t.type.group, resource: t.type.resource, kind: 'list' }, { code: 200, headers, total, pieces, built });
  }

  // ------------------------------------------------------------------ watch

  /**
   * Watch, per Part A's watch table: unset → the state at the latest revision as synthetic ADDED
   * events, then changes; "0" → the same from the cache as it is; any other revision → only the changes
   * after it (from the in-memory history, or the storage log's history for older ones). With
   * sendInitialEvents=true the initial state ends with a BOOKMARK marked by the initial-events-end
   * annotation. Errors after the stream began are sent as an ERROR event carrying a Status.
   */
  async watch(req: KRequest, res: KResponse, t: Target): Promise<void> {
    const q = req.query;
    const acc = this.accepted(req, t);
    const pb = acc.rep === 'protobuf' || !!acc.protobuf;
    const sel = this.selectors(t.type, q);
    const rv = q.get('resourceVersion') ?? '';
    const rvm = q.get('resourceVersionMatch') ?? '';
    const bookmarks = queryBool(q, 'allowWatchBookmarks') ?? false;
    const sie = q.get('sendInitialEvents');
    const sendInitial = queryBool(q, 'sendInitialEvents') ?? false;
    const causes: FieldCause[] = [];
    const forbid = (field: string, message: string) => causes.push({ reason: 'FieldValueForbidden', field, message: `Forbidden: ${message}` });
    if (sie !== null) {
      if (rvm !== 'NotOlderThan') forbid('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
      if (sendInitial && !bookmarks) forbid('allowWatchBookmarks', 'sendInitialEvents requires setting allowWatchBookmarks to true');
    } else if (rvm) {
      forbid('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
    }
    if (causes.length) throw errors.invalid(`meta.${this.ctx.brand.domain}`, 'ListOptions', '', causes);
    if (rv && rv !== '0' && !/^[1-9]\d*$/.test(rv)) throw errors.badRequest(`invalid resource version "${rv}"`);
    queryInt(q, 'limit'); // decoded with the other ListOptions: malformed is a 400 here too
    const timeoutParam = queryInt(q, 'timeoutSeconds');
    const timeout = timeoutParam !== undefined ? Math.max(0, timeoutParam) : this.ctx.minWatchTimeoutSeconds * (1 + Math.random());
    const rc = this.rc(t.type);
    const include = (q.get('includeObject') as IncludeObject) || 'Metadata';
    const brand = this.ctx.brand;
    const type = t.type;
    // A version converted in process: each event is converted here, once per version (the fan-out
    // memoizes by `rep`, which names the version), into an entry of its own so that the stored
    // entry's cached Protobuf bytes stay those of the stored version.
    const inline = type.convertObject;
    const want = gv(type);
    const printsStored = this.printsStored(req, t, acc);
    const served = (stored: Entry): Entry => {
      const e = this.readDefaulted(type, stored);
      if (!inline || printsStored) return e;
      const obj = parse(e);
      return obj.apiVersion === want ? e : withBytes(e, Buffer.from(JSON.stringify(inline(obj, want))));
    };
    const metaApi = `meta.${brand.domain}/${acc.metaVersion}`;
    /** A metadata-only watch (metadata informers): each event's object is its PartialObjectMetadata. */
    const partial = (md: unknown): string | Buffer => (pb ? partialProtobuf(metaApi, md) : JSON.stringify({ kind: 'PartialObjectMetadata', apiVersion: metaApi, metadata: md }));
    const encodeObject = (stored: Entry): string | Buffer => {
      const e = served(stored);
      if (acc.rep === 'partial') return partial(parse(e).metadata);
      return pb ? entryProtobuf(type, e, want)
        : acc.rep === 'table' ? JSON.stringify(table(type, [parse(e)], brand, include, acc.metaVersion!, { resourceVersion: String(e.rev) })) : e.bytes;
    };
    // JSON: one `{"type":...,"object":...}` line per event; Protobuf: the reference's length-prefixed WatchEvent frames.
    const frame = (evType: EventType, obj: string | Buffer) => pb ? watchFrame(evType, obj as Buffer)
      : Buffer.concat([Buffer.from(`{"type":"${evType}","object":`), Buffer.isBuffer(obj) ? obj : Buffer.from(obj), EVENT_TAIL]);

    // "Get state" (synthetic ADDED) unless a plain revision says the client has it already.
    const getState = sendInitial || (sie === null && (rv === '' || rv === '0'));
    if (rv === '' && getState) await this.consistent();
    let waitErr: StatusError | undefined;
    if (rv && rv !== '0' && Number(rv) > this.ctx.cache.rev) {
      try { await this.notOlderThan(rv); } catch (e) { waitErr = e as StatusError; }
    }

    const ws = req.header('upgrade')?.toLowerCase() === 'websocket' && res.upgrade;
    let closed = false;
    let lastRev = 0;
    let sink: Sink;
    const budget = this.ctx.outputBudget;
    const holder: OutputHolder = { what: `watch ${req.path}`, kind: 'watch', group: type.group, resource: type.resource, queued: 0, close: () => finish() };
    const finish = () => {
      if (closed) return;
      closed = true;
      budget.remove(holder);
      this.ctx.watches.delete(finish);
      this.ctx.hub.remove(rc, w);
      clearTimeout(timer);
      clearInterval(bm);
      sink?.end();
      wakeReplay?.();
    };
    // Every write goes through here, initial state included. Bytes the socket does not take stay in
    // memory: a watcher that cannot keep up is closed past its own cap (the client resumes from the
    // last revision it received), and all watchers share the server's budget (largest closed first).
    // Once one write is not taken whole, the transport is given nothing more until it drains: later
    // bytes wait in `backlog` as the very buffers every watcher shares (no copy per watcher), so the
    // transport's own buffer (uWS's, the TLS front's, node's) holds at most that one write, plus
    // what its write() reported as taken (`heldBeyond`); both count, with the backlog.
    let backlog: Buffer[] | undefined;
    let backlogBytes = 0;
    const count = (bytes: number) => {
      if (holder.queued + bytes > this.ctx.watchBudgetBytes) budget.closeOver(holder);
      else budget.queue(holder, bytes);
    };
    const put = (b: Buffer): boolean => {
      if (closed) return true;
      if (backlog) {
        backlog.push(b);
        backlogBytes += b.length;
        count(b.length);
        return false;
      }
      if (sink.write(b)) return true;
      backlog = [];
      backlogBytes = 0;
      count(b.length + heldBeyond);
      return false;
    };
    // While the initial state or history is replayed, events committed meanwhile wait in `queued`
    // (`held` bytes, counted with the socket's backlog), and the replay itself waits for the socket.
    let held = 0;
    let replaying = true;
    let wakeReplay: (() => void) | undefined;
    let heldBeyond = 0;
    const drained = () => {
      sink?.resume?.();
      budget.drained(holder);
      // The backlog goes out until the socket backs up again; what is left counts anew.
      const q = backlog;
      backlog = undefined;
      if (q) {
        for (let i = 0; i < q.length; i++) {
          if (closed) return;
          backlogBytes -= q[i].length;
          if (sink.write(q[i])) continue;
          backlog = q.slice(i + 1);
          count(q[i].length + heldBeyond + backlogBytes);
          break;
        }
      }
      if (closed) return;
      if (held) budget.queue(holder, held);
      if (!backlog) wakeReplay?.();
    };
    budget.add(holder);
    const pinned = sel.indexed;
    let pending: Buffer[] = [];
    /** A WebSocket carries one event per message: its queued events are never joined into one write. */
    let perMessage = false;
    const w: Watcher = {
      namespace: this.scope(t, sel),
      name: sel.name ?? '',
      field: pinned,
      matches: sel.matches,
      rep: (inline ? `${want}:` : '') + (acc.rep === 'table' ? `table:${acc.metaVersion}:${include}` : acc.rep === 'partial' ? `partial:${acc.metaVersion}:${pb ? 'pb' : 'json'}` : acc.rep === 'protobuf' ? 'protobuf' : 'json'),
      encode: (evType, e) => frame(evType, encodeObject(e)),
      close: () => finish(),
      deliver: (line, rev) => {
        if (closed || rev <= lastRev) return;
        lastRev = rev;
        pending.push(line);
        this.ctx.hub.touched(w);
      },
      flush: () => {
        if (closed || !pending.length) return;
        const lines = pending;
        pending = [];
        // A backed-up watcher keeps the shared lines themselves: joining them would copy them for it alone.
        if (perMessage || backlog) for (const line of lines) put(line);
        else put(lines.length === 1 ? lines[0] : Buffer.concat(lines));
      },
    };
    const bookmark = (annotations?: Record<string, string>) => {
      // No periodic bookmark in the middle of a replay: it would claim a revision the client has not caught up to.
      if (closed || !bookmarks || (replaying && !annotations)) return;
      const md: Record<string, unknown> = { resourceVersion: String(Math.max(lastRev, this.ctx.cache.rev)) };
      if (annotations) md.annotations = annotations;
      const obj = { kind: type.kind, apiVersion: gv(type), metadata: md };
      put(frame('BOOKMARK', acc.rep === 'partial' ? partial(md) : pb ? objectProtobuf(brand, type, obj)! : JSON.stringify(obj)));
    };
    // Node's timers take at most 2^31-1 ms (a longer delay fires after 1 ms): a long timeoutSeconds
    // re-arms until its deadline.
    const deadline = Date.now() + timeout * 1000;
    const arm = (): NodeJS.Timeout => setTimeout(() => {
      if (Date.now() < deadline) { timer = arm(); return; }
      bookmark();
      finish();
    }, Math.min(Math.max(0, deadline - Date.now()), MAX_TIMER_MS));
    let timer = arm();
    const bm = setInterval(() => bookmark(), this.ctx.bookmarkIntervalMs);
    this.ctx.watches.add(finish);
    const inScope = (e: Entry) =>
      (!w.namespace || e.namespace === w.namespace) && (!w.name || e.name === w.name) && (!pinned || e.fields[pinned[0]] === pinned[1]) && (!w.matches || w.matches(e));
    const fail = (se: StatusError) => { put(frame('ERROR', pb ? statusProtobuf(se.toStatus()) : JSON.stringify(se.toStatus()))); finish(); };

    const begin = async () => {
      if (waitErr) return fail(waitErr);
      // Register first, then replay: events committed meanwhile queue behind the replay.
      const queued: [Buffer, number][] = [];
      const live = w.deliver;
      w.deliver = (line, rev) => {
        if (!replaying) return live(line, rev);
        queued.push([line, rev]);
        held += line.length;
        if (holder.queued + line.length > this.ctx.watchBudgetBytes) budget.closeOver(holder);
        else budget.queue(holder, line.length);
      };
      this.ctx.hub.add(rc, w);
      const snapshotRev = this.ctx.cache.rev;
      // The replay goes out in batches, in time slices, and waits while the socket is backed up: a
      // large initial state never holds the event loop, nor sits whole in memory for a slow client.
      const slicer = new Slicer();
      // A WebSocket carries one event per message: no batches there.
      const batchLimit = ws ? 0 : REPLAY_BATCH_BYTES;
      let batch: Buffer[] = [];
      let batchBytes = 0;
      const send = async () => {
        if (!batch.length) return;
        const out = batch.length === 1 ? batch[0] : Buffer.concat(batch, batchBytes);
        batch = [];
        batchBytes = 0;
        if (!put(out) && !closed) await new Promise<void>((resolve) => { wakeReplay = resolve; });
        wakeReplay = undefined;
      };
      const emit = async (line: Buffer, rev: number) => {
        lastRev = rev;
        batch.push(line);
        batchBytes += line.length;
        if (batchBytes >= batchLimit) await send();
        if (slicer.due()) await slicer.pause();
      };
      if (getState) {
        // The state at snapshotRev, taken at once: the cache changes while the replay waits.
        const state: Entry[] = [];
        for (const e of rc.range(w.namespace)) if (inScope(e)) state.push(e);
        for (const e of state) {
          if (closed) return;
          await emit(frame('ADDED', encodeObject(e)), 0);
        }
        lastRev = snapshotRev;
        await send();
        if (closed) return;
        if (sendInitial) bookmark({ [`${brand.domain}/initial-events-end`]: 'true' });
      } else {
        const start = Number(rv);
        lastRev = start;
        if (start < this.ctx.cache.floor) {
          // Older than the in-memory history: replay the storage log's history.
          try {
            for await (const ev of this.ctx.backend.history(start, resourcePrefix(type))) {
              if (closed) return;
              if (ev.revision > snapshotRev) break;
              const obj = JSON.parse(Buffer.from(ev.value).toString('utf8')) as KObject;
              if (ev.type === 'DELETED') obj.metadata = { ...obj.metadata, resourceVersion: String(ev.revision) };
              const e = makeEntry(type, ev.key, ev.type === 'DELETED' ? Buffer.from(JSON.stringify(obj)) : Buffer.from(ev.value), obj, ev.revision, ev.createRevision);
              if (inScope(e)) await emit(frame(ev.type, encodeObject(e)), ev.revision);
            }
          } catch (err) {
            replaying = false;
            return fail(err instanceof StatusError ? err : errors.internal(String(err)));
          }
        } else {
          // The history array is read by revision, not index: it may be trimmed while the replay waits.
          let at = start;
          for (let i = rc.eventsAfter(at); i < rc.events.length && rc.events[i].rev <= snapshotRev; i = rc.eventsAfter(at)) {
            if (closed) return;
            // Trimmed while the replay waited for a slow client: it relists, as after any expired watch.
            if (at < this.ctx.cache.floor) { replaying = false; return fail(new StatusError(410, 'Expired', `too old resource version: ${at} (${this.ctx.cache.floor})`)); }
            const ev = rc.events[i];
            at = ev.rev;
            const now = ev.type !== 'DELETED' && inScope(ev.entry);
            const before = !!ev.prev && inScope(ev.prev);
            const kind: EventType | undefined = ev.type === 'DELETED' ? (inScope(ev.entry) ? 'DELETED' : undefined) : now && before ? 'MODIFIED' : now ? 'ADDED' : before ? 'DELETED' : undefined;
            // Leaving the selection: the object as it was, at this event's revision.
            const shown = ev.type !== 'DELETED' && !now && before ? withRevision(ev.prev!, ev.rev) : ev.entry;
            if (kind) await emit(frame(kind, encodeObject(shown)), ev.rev);
          }
        }
        await send();
        if (closed) return;
        lastRev = Math.max(lastRev, snapshotRev);
      }
      replaying = false;
      // The socket took the replay: what it holds now is only the events that waited for it.
      budget.drained(holder);
      held = 0;
      for (const [line, rev] of queued) live(line, rev);
      w.flush!();
    };

    if (ws) {
      const ok = res.upgrade!({
        open: (s) => {
          // One event per text frame, without the newline that separates events on HTTP.
          perMessage = true;
          const ws = { write: (b: Buffer) => s.send(pb ? b.subarray(4) : b.subarray(0, b.length - 1).toString('utf8')), end: () => { try { s.end(1000); } catch { /* already closed */ } } };
          sink = pb || inline || acc.rep === 'partial' ? ws : this.convertingSink(type, ws, drained);
          void begin();
        },
        drain: drained,
        close: () => { sink = { write: () => true, end: () => {} }; finish(); },
      });
      if (!ok) finish();
      return;
    }
    res.start(200, { 'content-type': pb ? `${brand.protobufType};stream=watch` : 'application/json', 'cache-control': 'no-cache, private' }, pb ? 'frames' : 'lines');
    const http = { write: (b: Buffer) => res.write(b), end: () => res.end() };
    sink = pb || inline || acc.rep === 'partial' ? http : this.convertingSink(type, http, drained);
    heldBeyond = res.heldBeyond ?? 0;
    res.onDrain(drained);
    res.onClose(() => finish());
    await begin();
  }

  // ------------------------------------------------------------------ writes

  private attrs(op: Operation, t: Target, user: UserInfo, dryRun: boolean, object?: KObject, oldObject?: KObject, options?: Record<string, unknown>): AdmissionAttributes {
    const type = t.type;
    const a: AdmissionAttributes = {
      operation: op, object, oldObject, subresource: t.subresource, namespace: t.namespace, name: t.name, user, dryRun, options, type,
      warn: (text) => { t.warnings?.push(text); },
      kind: { group: type.group, version: type.version, kind: type.kind },
      resource: { group: type.group, version: type.version, resource: type.resource },
    };
    t.audit?.attach(a);
    return a;
  }

  /**
   * Admission of a create on a sub-resource served by a plugin (pods/binding, pods/eviction,
   * serviceaccounts/token): both phases run on the request's object, under the sub-resource's own
   * kind, before the plugin acts, as for any other create.
   */
  async admitSubresourceCreate(t: Target, user: UserInfo, dryRun: boolean, obj: KObject): Promise<void> {
    const a = this.attrs('CREATE', t, user, dryRun, obj);
    const info = t.type.subresourceInfo?.[t.subresource];
    if (info?.kind) a.kind = { group: info.group ?? t.type.group, version: info.version ?? t.type.version, kind: info.kind };
    await this.ctx.admission.admit(a);
    await this.ctx.admission.validate(a);
  }

  /** `large`: the structural check and the type's rules each take long; other requests run in between. */
  private async validate(t: Target, obj: KObject, old: KObject | undefined, large: boolean) {
    const type = t.type;
    const causes = validateObjectMeta(obj.metadata ?? {}, { namespaced: type.namespaced, nameRule: type.nameRule ?? 'subdomain', isCreate: !old });
    if (old) causes.push(...validateObjectMetaUpdate(obj.metadata ?? {}, old.metadata ?? {}));
    causes.push(...compileValidator(type)(obj));
    if (large) await giveTurn();
    if (type.validate) causes.push(...type.validate(obj, old, this.ctx.brand, t.subresource || undefined));
    // The reference names the kind it validates: the stored group's, for a type stored with another group's resource.
    if (causes.length) throw errors.invalid(type.storageGroup ?? type.group, type.kind, obj.metadata?.name ?? obj.metadata?.generateName ?? '', causes);
  }

  private checkTypeMeta(t: Target, obj: KObject) {
    const want = gv(t.type);
    if (obj.apiVersion !== undefined && obj.apiVersion !== want) throw errors.badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${want})`);
    if (obj.kind !== undefined && obj.kind !== t.type.kind) throw errors.badRequest(`the kind in the data (${obj.kind}) does not match the expected kind (${t.type.kind})`);
    obj.apiVersion = want;
    obj.kind = t.type.kind;
    const md = (obj.metadata ??= {});
    if (typeof md !== 'object' || Array.isArray(md)) throw errors.badRequest('metadata must be an object');
    if (t.type.namespaced) {
      if (md.namespace && t.namespace && md.namespace !== t.namespace) throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      md.namespace = t.namespace || md.namespace;
    } else {
      delete md.namespace;
    }
  }

  /** Commit with the object's resourceVersion set to the revision the log assigns; the stored bytes are what every reader gets. */
  private async commit(op: 'create' | 'update', key: string, obj: KObject, expect = 0, large = false): Promise<WriteResult & { bytes?: Buffer }> {
    let bytes: Buffer | undefined;
    // A large object is serialized before the write, around a token where the revision goes, and the
    // event loop gets a turn: serializing and the log's write would otherwise hold it in one go.
    let around: [Buffer, Buffer] | undefined;
    if (large) {
      const token = `capi-rv-${randomBytes(12).toString('hex')}`;
      obj.metadata!.resourceVersion = token;
      const text = JSON.stringify(obj);
      const at = text.indexOf(`"${token}"`);
      if (at >= 0 && text.indexOf(token, at + token.length) < 0) around = [Buffer.from(text.slice(0, at)), Buffer.from(text.slice(at + token.length + 2))];
      await giveTurn();
    }
    const value = (rev: number) => {
      obj.metadata!.resourceVersion = String(rev);
      return (bytes = around ? Buffer.concat([around[0], Buffer.from(`"${rev}"`), around[1]]) : Buffer.from(JSON.stringify(obj)));
    };
    const r = op === 'create'
      ? await this.ctx.backend.write({ type: 'create', key, value })
      : await this.ctx.backend.write({ type: 'update', key, expectRevision: expect, value });
    // A backend that learns the revision only at commit (etcd) ran the callback with a placeholder:
    // the stored value it returns is the truth.
    if (r.ok) {
      obj.metadata!.resourceVersion = String(r.revision);
      if (r.value) bytes = Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength);
    }
    return { ...r, bytes };
  }

  async create(req: KRequest, res: KResponse, t: Target, user: UserInfo): Promise<void> {
    const dryRun = checkWriteOptions(req.query, this.ctx.brand, 'CreateOptions');
    const raw = await req.body(this.ctx.maxBodyBytes);
    const obj = await this.decode(req, t, raw);
    const warnings = this.fieldValidation(req, t, obj, this.isProtobuf(req) ? undefined : raw);
    const fm = { ...this.fieldManager(req), size: raw.length };
    const { result: out, warned } = await collectWarnings(t, (t) => this.createObject(t, obj, user, dryRun, fm));
    await this.sendWritten(req, res, t, 201, withWarnings({ ...JSON_HEADERS, ...warnings }, warned), out);
  }

  private isProtobuf(req: KRequest): boolean {
    return isProtobufType(this.ctx.brand, req.header('content-type'));
  }

  /** A create or update body: JSON, YAML, or Protobuf for types (and sub-resources) with a Protobuf schema. */
  async decode(req: KRequest, t: Target, raw: Buffer): Promise<KObject> {
    if (this.isProtobuf(req)) return decodeProtobuf(raw, this.ctx.brand, t.type, t.subresource);
    const ct = (req.header('content-type') ?? 'application/json').split(';')[0].trim().toLowerCase();
    if (t.type.schema && (t.subresource === '' || t.subresource === 'status') && checksJsonOnWorker(raw.length) && (ct === 'application/json' || ct === '' || ct === '*/*')) {
      return this.decodeOnWorker(req, t, raw);
    }
    const obj = await decodeBody(req.header('content-type'), raw);
    if (t.type.schema) dropNullFields(obj, t.type.schema, t.type.definitions);
    return obj;
  }

  /**
   * A large JSON body: decode() and fieldValidation()'s passes over every key run on a worker
   * (workers/checkbody.ts), which sends back the pruned object's JSON and its findings; those wait
   * in `checked` for fieldValidation().
   */
  private async decodeOnWorker(req: KRequest, t: Target, raw: Buffer): Promise<KObject> {
    const fields = (req.query.get('fieldValidation') || 'Warn') !== 'Ignore';
    const r = await checkJsonOnWorker({ op: 'check-json', text: raw.toString('utf8'), schema: t.type.schema!, definitions: t.type.definitions, fields }, defsKey(t.type));
    if (!r.ok) throw errors.badRequest(`the body of the request could not be decoded as JSON: ${r.message}`);
    const obj = JSON.parse(r.json) as unknown;
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw errors.badRequest('the body of the request must be a JSON object');
    checked.set(obj, r);
    return obj as KObject;
  }

  /**
   * fieldValidation=Strict | Warn (the default) | Ignore: unknown and duplicate fields are a 400 naming
   * them all (Strict: the reference's strict decoding error), one Warning each (Warn), or nothing
   * (Ignore). The mode itself was checked with the write options.
   */
  fieldValidation(req: KRequest, t: Target, obj: KObject, raw: Buffer | undefined, patch?: unknown, apply = false): Record<string, string> {
    const mode = req.query.get('fieldValidation') || 'Warn';
    // Checked already on a worker (decodeOnWorker, or with a patch's merge), pruned there too.
    const done = checked.get(obj);
    if (done) checked.delete(obj);
    // A value the typed decoding cannot hold (a wrong JSON type, a number out of range) is a decode error, whatever the mode.
    const typeError = done ? done.typeError : t.type.schema ? decodeTypeError(obj, t.type.schema, t.type.definitions, raw?.toString('utf8')) : undefined;
    if (typeError && patch !== undefined) {
      // A patched object that does not decode is an Invalid on the field "patch", as the reference words it.
      throw errors.invalid('', '', '', [{ reason: 'FieldValueInvalid', field: 'patch', message: `Invalid value: ${goQuote(JSON.stringify(obj))}: ${typeError}` }]);
    }
    if (typeError) throw errors.badRequest(`${t.type.kind} in version ${goQuote(t.type.version)} cannot be handled as a ${t.type.kind}: ${typeError}`);
    // An applied configuration's unknown fields are the apply's own error (its typed patch cannot be built), whatever the mode.
    const unknown = mode === 'Ignore' || apply ? [] : done ? done.unknown : unknownFields(t.type, obj);
    let dups: string[] = done && raw ? done.duplicates : [];
    let text: string | undefined;
    const position = new Map<string, number>();
    // (a body checked on a worker was JSON, and is not copied into a string again here)
    const json = !!raw && (!!done || /^\s*[{[]/.test((text = raw.toString('utf8'))));
    if (mode !== 'Ignore' && raw && !done) dups = json ? findDuplicateFields(text!, 100, position) : decodedYamlDuplicates(raw) ?? findDuplicateYamlKeys(text!);
    // Whatever the mode, what the schema does not know is not stored (as typed decoding drops it).
    if (t.type.schema && !apply && !done) pruneUnknown(obj, t.type.schema, t.type.definitions);
    if (!unknown.length && !dups.length) return {};
    const msgs = strictErrors(unknown, dups, !raw ? {} : !json ? { yaml: dups.length ? duplicateYamlKeyLines(text!) : [] } : t.type.unstructured ? { unstructured: true } : { position });
    if (mode === 'Strict') {
      if (patch === undefined) throw errors.badRequest(strictDecodingMessage(t.type.kind, t.type.version, msgs));
      // A patch's strict errors are an Invalid on the field "patch", the patch printed as a Go map.
      throw errors.invalid('', '', '', [{ reason: 'FieldValueInvalid', field: 'patch', message: `Invalid value: ${goQuote(goPrint(patch))}: strict decoding error: ${msgs.join(', ')}` }]);
    }
    return { warning: msgs.map(warningValue).join('\n') };
  }

  async createObject(t: Target, obj: KObject, user: UserInfo, dryRun: boolean, fm?: FieldManagement): Promise<Buffer> {
    const type = t.type;
    this.checkTypeMeta(t, obj);
    const md = obj.metadata!;
    if (type.createForbidden) throw errors.methodNotAllowed(type.createForbidden);
    if (md.resourceVersion) throw errors.badRequest('resourceVersion should not be set on objects to be created');
    type.defaults?.(obj, this.ctx.brand);
    if (fm && !fm.applied) await this.trackFields(t, undefined, obj, fm.manager, fm.size ?? 0);
    await this.guard(t, 'CREATE', obj, undefined, user);
    const attrs = this.attrs('CREATE', { ...t, name: md.name ?? '' }, user, dryRun, obj);
    await this.ctx.admission.admit(attrs);
    // Server-set metadata, and a fresh status where status has its own endpoint.
    md.uid = randomUUID();
    md.creationTimestamp = now();
    delete md.deletionTimestamp;
    delete md.deletionGracePeriodSeconds;
    if (type.hasSpec) md.generation = 1;
    if (type.subresources?.includes('status') && type.statusField) {
      const fresh = clone(obj);
      delete fresh[type.statusField];
      type.defaults?.(fresh, this.ctx.brand);
      if (fresh[type.statusField] === undefined) delete obj[type.statusField];
      else obj[type.statusField] = fresh[type.statusField];
    }
    const generate = !md.name && !!md.generateName;
    if (generate) md.name = md.generateName + randomSuffix();
    const finish = await type.strategy?.beginCreate?.(obj, { dryRun, user, subresource: t.subresource });
    // Validating and serializing a large object each take long: other requests run in between.
    const large = (fm?.size ?? 0) >= LARGE_WRITE_BYTES;
    return settle(finish, async () => {
      await this.validate(t, obj, undefined, large);
      attrs.name = md.name!;
      await this.ctx.admission.validate(attrs);
      if (large) await giveTurn();
      if (dryRun) {
        // A dry run answers what the real create would: an existing name is a conflict.
        if (!generate && this.current(type, md.namespace ?? '', md.name!)) throw errors.alreadyExists(type.group, type.resource, md.name!);
        return { ok: false, value: Buffer.from(JSON.stringify(obj)) };
      }
      for (let attempt = 0; ; attempt++) {
        const r = await this.commit('create', storageKey(type, md.namespace ?? '', md.name!), await this.toStored(type, obj), 0, large);
        if (r.ok) return { ok: true, value: (await this.asServed(type, [r.bytes!]))[0] };
        if (r.reason === 'exists' && generate && attempt < MAX_NAME_ATTEMPTS) {
          md.name = md.generateName + randomSuffix();
          continue;
        }
        if (generate) throw new StatusError(409, 'AlreadyExists', `${type.group ? `${type.resource}.${type.group}` : type.resource} "${md.name}" already exists, the server was not able to generate a unique name for the object`, { name: md.name, group: type.group || undefined, kind: type.resource });
        throw errors.alreadyExists(type.group, type.resource, md.name!);
      }
    });
  }

  async update(req: KRequest, res: KResponse, t: Target, user: UserInfo): Promise<void> {
    const dryRun = checkWriteOptions(req.query, this.ctx.brand, 'UpdateOptions');
    const raw = await req.body(this.ctx.maxBodyBytes);
    const body = await this.decode(req, t, raw);
    if (t.subresource === 'scale') return this.updateScale(req, res, t, user, dryRun, () => body);
    const warnings = this.fieldValidation(req, t, body, this.isProtobuf(req) ? undefined : raw);
    this.checkTypeMeta(t, body);
    if (body.metadata!.name && body.metadata!.name !== t.name) throw errors.badRequest(`the name of the object (${body.metadata!.name}) does not match the name on the URL (${t.name})`);
    body.metadata!.name = t.name;
    // Types whose strategy disallows unconditional updates want the version the client read.
    if (!body.metadata!.resourceVersion && t.type.unconditionalUpdate === false) {
      if (!this.current(t.type, t.namespace, t.name)) throw errors.notFound(t.type.group, t.type.resource, t.name);
      // The reference names the resource where the kind would be ("leases.coordination.k8s.io").
      throw errors.invalid(t.type.group, t.type.resource, t.name, [{ reason: 'FieldValueInvalid', field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' }]);
    }
    const fm = { ...this.fieldManager(req), size: raw.length };
    const { result: { code, bytes }, warned } = await this.queued(t, () => collectWarnings(t, (t) => this.updateObject(t, user, dryRun, () => clone(body), body.metadata!.resourceVersion, fm)));
    await this.sendWritten(req, res, t, code, withWarnings({ ...JSON_HEADERS, ...warnings }, warned), bytes);
  }

  /**
   * Read-modify-write: `next` builds the new object from the current one. Without a resourceVersion
   * from the client the write is retried on conflict, against the fresh object, until it commits
   * (the reference's GuaranteedUpdate: an unconditional write never fails because another writer
   * got there first); with one, a stale version is a 409.
   */
  async updateObject(t: Target, user: UserInfo, dryRun: boolean, next: (cur: KObject) => KObject | Promise<KObject>, clientRv?: string, fm?: FieldManagement): Promise<{ code: number; bytes: Buffer }> {
    const type = t.type;
    for (;;) {
      const e = this.current(type, t.namespace, t.name);
      if (!e) throw errors.notFound(type.group, type.resource, t.name);
      const old = await this.fromStored(type, parse(e));
      if (clientRv && clientRv !== String(e.rev)) throw errors.conflict(type.group, type.resource, t.name, 'the object has been modified; please apply your changes to the latest version and try again');
      let obj = await next(clone(old));
      this.checkTypeMeta(t, obj);
      const md = obj.metadata!;
      const omd = old.metadata!;
      if (md.uid && md.uid !== omd.uid) throw errors.conflict(type.group, type.resource, t.name, `Precondition failed: UID in precondition: ${md.uid}, UID in object meta: ${omd.uid}`);
      // Subresources write only their own fields; the main resource never writes them.
      const sub = t.subresource;
      const subField = sub === 'status' ? type.statusField : sub === 'finalize' ? type.finalizersField : sub ? type.subresourceFields?.[sub] : undefined;
      if (sub && !subField) throw errors.methodNotAllowed();
      if (sub === 'status' && subField) {
        // The status strategy: everything outside metadata and status stays as stored; metadata
        // changes apply except what the type's strategy resets (statusKeepsMetadata).
        const sent = obj;
        obj = clone(old);
        setPath(obj, subField, clone(getPath(sent, subField)));
        const keep = new Set(type.statusKeepsMetadata ?? []);
        const smd = (sent.metadata ?? {}) as Record<string, unknown>;
        const md = obj.metadata as Record<string, unknown>;
        for (const k of new Set([...Object.keys(smd), ...Object.keys(md)])) {
          if (keep.has(k)) continue;
          if (smd[k] === undefined) delete md[k];
          else md[k] = clone(smd[k]);
        }
      } else if (subField) {
        const v = getPath(obj, subField);
        // An apply to the sub-resource computed the ownership of this write: keep it.
        const applied = fm?.applied ? obj.metadata?.managedFields : undefined;
        obj = clone(old);
        setPath(obj, subField, clone(v));
        if (applied) obj.metadata!.managedFields = applied;
      } else {
        if (type.statusField) setPath(obj, type.statusField, clone(getPath(old, type.statusField)));
        if (type.finalizersField) setPath(obj, type.finalizersField, clone(getPath(old, type.finalizersField)));
      }
      const nmd = obj.metadata!;
      type.defaults?.(obj, this.ctx.brand);
      nmd.uid = omd.uid;
      nmd.creationTimestamp = omd.creationTimestamp;
      nmd.resourceVersion = omd.resourceVersion;
      if (omd.deletionTimestamp) nmd.deletionTimestamp = omd.deletionTimestamp; else delete nmd.deletionTimestamp;
      if (omd.deletionGracePeriodSeconds !== undefined) nmd.deletionGracePeriodSeconds = omd.deletionGracePeriodSeconds; else delete nmd.deletionGracePeriodSeconds;
      // A version converted in process compares the stored forms: a spec change the served version
      // cannot show (another version's field, an order) is still a change.
      const storedAs = storedApiVersion(type);
      const inStorage = type.convertObject && storedAs !== gv(type) ? (o: KObject) => type.convertObject!(o, storedAs) : undefined;
      // A status write never bumps generation (the reference's status strategies keep the stored spec).
      if (type.hasSpec) nmd.generation = (omd.generation ?? 1) + (sub !== 'status' && (inStorage ? specOf(inStorage(obj)) !== specOf(inStorage(parse(e))) : specOf(obj) !== specOf(old)) ? 1 : 0);
      else delete nmd.generation;
      if (fm && !fm.applied) await this.trackFields(t, old, obj, fm.manager, 2 * e.bytes.length + (fm.size ?? 0));
      if (!t.subresource) await this.guard(t, 'UPDATE', obj, old, user);
      const attrs = this.attrs('UPDATE', t, user, dryRun, obj, old);
      await this.ctx.admission.admit(attrs);
      const finish = await type.strategy?.beginUpdate?.(obj, old, { dryRun, user, subresource: t.subresource });
      const out = await settle(finish, async (): Promise<{ ok: boolean; value: { code: number; bytes: Buffer } | undefined }> => {
        const large = e.bytes.length + (fm?.size ?? 0) >= LARGE_WRITE_BYTES;
        await this.validate(t, obj, old, large);
        await this.ctx.admission.validate(attrs);
        if (large) await giveTurn();
        // The last finalizer removed from an object being deleted: the object goes.
        if (nmd.deletionTimestamp && !nmd.finalizers?.length && !this.extraFinalizers(type, obj)) {
          if (dryRun) return { ok: false, value: { code: 200, bytes: Buffer.from(JSON.stringify(obj)) } };
          const r = await this.ctx.backend.write({ type: 'delete', key: e.key, expectRevision: e.rev });
          if (r.ok) {
            await type.strategy?.afterDelete?.(obj);
            return { ok: true, value: { code: 200, bytes: Buffer.from(JSON.stringify(obj)) } };
          }
          if (clientRv && r.reason === 'conflict') throw errors.conflict(type.group, type.resource, t.name, 'the object has been modified; please apply your changes to the latest version and try again');
          await this.afterConflict(t, r);
          return { ok: false, value: undefined };
        }
        const stored = await this.toStored(type, obj);
        const bytes = Buffer.from(JSON.stringify(stored));
        if (bytes.equals(e.bytes)) return { ok: true, value: { code: 200, bytes: (await this.asServed(type, [e.bytes]))[0] } }; // no change: no write, no event
        if (dryRun) return { ok: false, value: { code: 200, bytes: stored === obj ? bytes : Buffer.from(JSON.stringify(obj)) } };
        if (large) await giveTurn();
        const r = await this.commit('update', e.key, stored, e.rev, large);
        if (r.ok) return { ok: true, value: { code: 200, bytes: (await this.asServed(type, [r.bytes!]))[0] } };
        if (clientRv && r.reason === 'conflict') throw errors.conflict(type.group, type.resource, t.name, 'the object has been modified; please apply your changes to the latest version and try again');
        await this.afterConflict(t, r);
        return { ok: false, value: undefined };
      });
      if (out) return out;
    }
  }

  /** Finalizers a type keeps outside metadata.finalizers (namespaces: spec.finalizers). */
  private extraFinalizers(type: TypeDef, obj: KObject): boolean {
    if (!type.finalizersField) return false;
    const f = getPath(obj, type.finalizersField);
    return Array.isArray(f) && f.length > 0;
  }

  /** The manager a write records: fieldManager, else derived from the User-Agent as the reference does. */
  /** (checkWriteOptions has already refused a bad fieldManager, or a missing one on apply.) */
  private fieldManager(req: KRequest): FieldManagement {
    return { manager: req.query.get('fieldManager') || managerFromUserAgent(req.header('user-agent') ?? '') || 'unknown' };
  }

  /** Records who owns what after a non-apply write (Part A, server-side apply rules 2 and 10). */
  /** `size`: bytes of input, to choose inline or worker (from lengths already known: no serializing to measure). */
  private async trackFields(t: Target, old: KObject | undefined, obj: KObject, manager: string, size: number): Promise<void> {
    const type = t.type;
    const task: MergeTask = {
      op: 'update-managed-fields', old: old ?? null, next: obj, manager, apiVersion: gv(type), schema: type.schema, definitions: type.definitions,
      time: now(), subresource: t.subresource || undefined, serverSideApply: this.ctx.featureGates.ServerSideApply !== false, resetFields: resetFields(type, t.subresource),
    };
    const r = await runMerge(task, size, defsKey(type));
    if (!r.ok) throw mergeError(r.error);
    const entries = 'managedFields' in r ? r.managedFields : [];
    if (entries.length) obj.metadata!.managedFields = entries;
    else delete obj.metadata!.managedFields;
  }

  /**
   * PATCH: JSON patch, merge patch, strategic merge patch (types with a schema) and server-side apply
   * (with the ServerSideApply feature). The merge runs inline for small objects and on the worker pool
   * for large ones; every write records field ownership.
   */
  async patch(req: KRequest, res: KResponse, t: Target, user: UserInfo): Promise<void> {
    const type = t.type;
    const ct = (req.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
    const ssa = this.ctx.featureGates.ServerSideApply !== false;
    const accepted = ['application/json-patch+json', 'application/merge-patch+json', ...(ssa ? ['application/apply-patch+yaml'] : []), ...(type.schema && type.strategicMerge !== false ? ['application/strategic-merge-patch+json'] : [])];
    if (!accepted.includes(ct)) throw errors.unsupportedMediaType(accepted);
    const raw = await req.body(this.ctx.maxBodyBytes);
    const isApply = ct === 'application/apply-patch+yaml';
    const dryRun = checkWriteOptions(req.query, this.ctx.brand, 'PatchOptions', isApply);
    const force = queryBool(req.query, 'force') ?? false;
    let patch: unknown;
    // An apply body is YAML (JSON is YAML): JSON (what clients send) goes through the fast native
    // parser first; what it refuses (a YAML flow mapping that looks like JSON, with trailing commas)
    // is read as YAML, as the reference reads every apply body. YAML keeps the last of duplicate keys
    // as JSON does, and fieldValidation reports them.
    const text = raw.toString('utf8');
    if (isApply && !/^\s*[{[]/.test(text)) patch = await decodeYaml(raw, 'error decoding patch: ');
    else {
      try { patch = parseJson(text); } catch (e) {
        // (a body nested too deep is refused as JSON: YAML would only say it again, less precisely)
        if (!isApply || /exceeded max depth/.test((e as Error).message)) throw errors.badRequest(`error decoding patch: ${(e as Error).message}`);
        patch = await decodeYaml(raw, 'error decoding patch: ');
      }
    }
    if (isApply && (typeof patch !== 'object' || patch === null || Array.isArray(patch))) throw errors.badRequest('error decoding YAML: the applied configuration must be an object');
    const fm = { ...this.fieldManager(req), size: raw.length };
    const size = raw.length + (this.current(type, t.namespace, t.name)?.bytes.length ?? 0);
    const key = defsKey(type);
    const merge = async (cur: KObject): Promise<KObject> => {
      const task: MergeTask = ct === 'application/json-patch+json' ? { op: 'json-patch', doc: cur, patch }
        : ct === 'application/merge-patch+json' ? { op: 'merge-patch', doc: cur, patch }
        : { op: 'strategic', doc: cur, patch, schema: type.schema, definitions: type.definitions };
      const fields = (req.query.get('fieldValidation') || 'Warn') !== 'Ignore';
      const check = type.schema ? { schema: type.schema, definitions: type.definitions, fields, raw: ct === 'application/json-patch+json' ? undefined : text } : undefined;
      const r = await runMerge(task, size, key, check);
      if (!r.ok) throw mergeError(r.error);
      const out = (r as { value: unknown }).value;
      if (r.checked && typeof out === 'object' && out !== null) checked.set(out, r.checked);
      if (typeof out !== 'object' || out === null || Array.isArray(out)) throw errors.badRequest('the patch does not result in an object');
      // Merges never nest deeper than their (bounded) inputs; a JSON patch can add a deep value deep down.
      if (task.op === 'json-patch') tooDeep(out);
      // A resourceVersion in the patch is a precondition.
      const rv = (out as KObject).metadata?.resourceVersion;
      if (rv !== undefined && rv !== cur.metadata?.resourceVersion) throw errors.conflict(type.group, type.resource, t.name, 'the object has been modified; please apply your changes to the latest version and try again');
      // The patched object is checked like a created or updated one (unknown fields named, then dropped).
      patchWarnings = this.fieldValidation(req, t, out as KObject, ct === 'application/json-patch+json' ? undefined : raw, patch);
      return out as KObject;
    };
    let patchWarnings: Record<string, string> = {};
    const applyTo = async (live: KObject | null): Promise<KObject> => {
      // A resourceVersion in the applied configuration is a precondition, as for any write.
      const rv = (patch as KObject).metadata?.resourceVersion;
      if (rv !== undefined && rv !== '' && rv !== live?.metadata?.resourceVersion) throw errors.conflict(type.group, type.resource, t.name, 'the object has been modified; please apply your changes to the latest version and try again');
      const r = await runMerge({
        op: 'apply', live, applied: patch as KObject, manager: fm.manager, force, schema: type.schema, definitions: type.definitions,
        apiVersion: gv(type), kind: type.kind, time: now(), subresource: t.subresource || undefined, defaultManagerName: this.ctx.brand.kubectlManager,
        lastAppliedAnnotation: this.ctx.brand.lastAppliedAnnotation, serverSideApply: ssa, metaGroup: `meta.${this.ctx.brand.domain}`, resetFields: resetFields(type, t.subresource),
      }, size, key);
      if (!r.ok) throw mergeError(r.error);
      const a = (r as { apply: ApplyResult }).apply;
      if ('conflicts' in a) throw conflictError(a.conflicts);
      if ('error' in a) throw mergeError(a.error);
      return withManagedFields(a.object, a.managedFields);
    };
    if (t.subresource === 'scale') {
      // Scale is a small fixed shape: a JSON patch applies as such, every other kind merges.
      return this.updateScale(req, res, t, user, dryRun, (scale) => {
        const r = runMergeTask(ct === 'application/json-patch+json' ? { op: 'json-patch', doc: scale, patch } : { op: 'merge-patch', doc: scale, patch });
        if (!r.ok) throw mergeError(r.error);
        return (r as { value: KObject }).value;
      });
    }
    if (isApply) {
      const appliedName = (patch as KObject).metadata?.name;
      if (appliedName !== undefined && appliedName !== t.name) throw errors.badRequest(`the name of the object (${appliedName}) does not match the name on the URL (${t.name})`);
      const warnings = this.fieldValidation(req, t, patch as KObject, raw, undefined, true);
      if (!this.current(type, t.namespace, t.name) && !t.subresource) {
        // Rule 1: apply creates what does not exist.
        const obj = await applyTo(null);
        obj.metadata = { ...obj.metadata, name: t.name };
        try {
          const { result: out, warned } = await collectWarnings(t, (t) => this.createObject(t, obj, user, dryRun, { ...fm, applied: true }));
          return this.sendWritten(req, res, t, 201, withWarnings({ ...JSON_HEADERS, ...warnings }, warned), out);
        } catch (err) {
          if (!(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err;
        }
      }
      const { result: { code, bytes }, warned } = await this.queued(t, () => collectWarnings(t, (t) => this.updateObject(t, user, dryRun, (cur) => applyTo(cur), undefined, { ...fm, applied: true })));
      return this.sendWritten(req, res, t, code, withWarnings({ ...JSON_HEADERS, ...warnings }, warned), bytes);
    }
    const { result: { code, bytes }, warned } = await this.queued(t, () => collectWarnings(t, (t) => this.updateObject(t, user, dryRun, merge, undefined, fm)));
    await this.sendWritten(req, res, t, code, withWarnings({ ...JSON_HEADERS, ...patchWarnings }, warned), bytes);
  }

  // ------------------------------------------------------------------ scale sub-resource

  private scaleOf(type: TypeDef, obj: KObject): KObject {
    if (!type.subresources?.includes('scale')) throw errors.pathNotFound();
    let replicas: unknown, current: unknown, selector = '';
    if (type.scale) {
      replicas = getPath(obj, type.scale.specReplicasPath);
      current = getPath(obj, type.scale.statusReplicasPath);
      const sel = type.scale.labelSelectorPath ? getPath(obj, type.scale.labelSelectorPath) : undefined;
      if (typeof sel === 'string') selector = sel;
    } else {
      const spec = (obj.spec ?? {}) as Record<string, unknown>;
      const status = (obj.status ?? {}) as Record<string, unknown>;
      const sel = (spec.selector ?? {}) as { matchLabels?: Record<string, string> };
      selector = typeof sel === 'object' && sel.matchLabels ? Object.entries(sel.matchLabels).map(([k, v]) => `${k}=${v}`).join(',') : '';
      replicas = spec.replicas;
      current = status.replicas;
    }
    return {
      kind: 'Scale', apiVersion: 'autoscaling/v1',
      metadata: { name: obj.metadata?.name, namespace: obj.metadata?.namespace, uid: obj.metadata?.uid, resourceVersion: obj.metadata?.resourceVersion, creationTimestamp: obj.metadata?.creationTimestamp },
      spec: { replicas: replicas ?? 0 },
      status: { replicas: current ?? 0, ...(selector ? { selector } : {}) },
    };
  }

  /**
   * A write to the scale sub-resource: `change` builds the new Scale from the current object's, on
   * every attempt, so a patch applies to the fresh object; a resourceVersion in the new Scale is a
   * precondition.
   */
  private async updateScale(req: KRequest, res: KResponse, t: Target, user: UserInfo, dryRun: boolean, change: (scale: KObject) => KObject) {
    const main = { ...t, subresource: '' };
    const { bytes } = await this.queued(t, () => this.updateObject(main, user, dryRun, (cur) => {
      const scale = change(this.scaleOf(t.type, cur));
      const replicas = (scale.spec as { replicas?: unknown } | undefined)?.replicas;
      if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
        throw errors.invalid('autoscaling', 'Scale', t.name, [{ reason: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0` }]);
      }
      const rv = scale.metadata?.resourceVersion;
      if (rv && rv !== cur.metadata?.resourceVersion) throw errors.conflict(t.type.group, t.type.resource, t.name, 'the object has been modified; please apply your changes to the latest version and try again');
      setPath(cur, t.type.scale?.specReplicasPath ?? 'spec.replicas', replicas);
      return cur;
    }));
    await this.sendWritten(req, res, t, 200, JSON_HEADERS, JSON.stringify(this.scaleOf(t.type, JSON.parse(bytes.toString('utf8')))));
  }

  // ------------------------------------------------------------------ connect

  /**
   * Streaming sub-resources (pods/exec, attach, portforward, proxy): CONNECT admission sees the
   * options from the query (command, container, stdin, tty, ...), as the reference builds them;
   * then the request goes to the upstream a plugin names (kernel/api/proxy.ts), upgrades included, or,
   * with no plugin serving the sub-resource, the answer is 503.
   */
  async connect(req: KRequest, res: KResponse, t: Target, user: UserInfo, stored: string, upstream?: () => Promise<UpstreamTarget>, how?: ConnectOptions): Promise<void> {
    const e = this.current(t.type, t.namespace, stored);
    if (!e) throw errors.notFound(t.type.group, t.type.resource, stored);
    const options: Record<string, unknown> = { kind: t.type.subresourceInfo?.[t.subresource]?.kind ?? 'ConnectOptions', apiVersion: 'v1' };
    for (const [k, v] of req.query) {
      const bool = ['stdin', 'stdout', 'stderr', 'tty'].includes(k);
      if (k === 'command') options.command = [...((options.command as string[]) ?? []), v];
      else if (k === 'ports') options.ports = [...((options.ports as unknown[]) ?? []), Number(v)];
      else options[k] = bool ? queryBool(req.query, k) : v;
    }
    // As in the reference, the object of a CONNECT is the options; plugins read the pod themselves.
    const attrs = this.attrs('CONNECT', t, user, false, options as KObject, undefined, options);
    await this.ctx.admission.admit(attrs);
    await this.ctx.admission.validate(attrs);
    if (!upstream) throw errors.serviceUnavailable(`unable to ${t.subresource} into ${t.type.resource} "${t.name}": no node agent is connected to this server`);
    await proxyConnect(req, res, await upstream(), this.ctx.maxBodyBytes, how);
  }

  // ------------------------------------------------------------------ delete

  private async deleteOptions(req: KRequest): Promise<Record<string, any>> {
    const raw = await req.body(this.ctx.maxBodyBytes);
    let opts: Record<string, any> = {};
    if (raw.length && this.isProtobuf(req)) opts = decodeDeleteOptions(raw);
    else if (raw.length) {
      try { opts = parseJson(raw.toString('utf8')) as Record<string, any>; } catch (e) { throw errors.badRequest(`error decoding DeleteOptions: ${(e as Error).message}`); }
    }
    const q = req.query;
    // Without a body the options come from the query, decoded as the reference's ParameterCodec does.
    if (!raw.length) {
      if (q.get('propagationPolicy') !== null) opts.propagationPolicy = q.get('propagationPolicy');
      const grace = queryInt(q, 'gracePeriodSeconds');
      if (grace !== undefined) opts.gracePeriodSeconds = grace;
      const orphan = queryBool(q, 'orphanDependents');
      if (orphan !== undefined) opts.orphanDependents = orphan;
      if (q.getAll('dryRun').length) opts.dryRun = q.getAll('dryRun');
    }
    const causes: FieldCause[] = [];
    const pp = opts.propagationPolicy;
    if (opts.orphanDependents != null && pp != null) causes.push({ reason: 'FieldValueInvalid', field: 'propagationPolicy', message: `Invalid value: ${goQuote(String(pp))}: orphanDependents and deletionPropagation cannot be both set` });
    if (pp != null && !['Foreground', 'Background', 'Orphan'].includes(pp)) {
      causes.push({ reason: 'FieldValueNotSupported', field: 'propagationPolicy', message: `Unsupported value: ${goQuote(String(pp))}: supported values: "Foreground", "Background", "Orphan", "nil"` });
    }
    causes.push(...dryRunCauses([].concat(opts.dryRun ?? [])));
    if (causes.length) throw errors.invalid(`meta.${this.ctx.brand.domain}`, 'DeleteOptions', '', causes);
    return opts;
  }

  async delete(req: KRequest, res: KResponse, t: Target, user: UserInfo): Promise<void> {
    const opts = await this.deleteOptions(req);
    const { result: { code, body }, warned } = await this.queued(t, () => collectWarnings(t, (t) => this.deleteObject(t, user, opts)));
    await this.sendWritten(req, res, t, code, withWarnings(JSON_HEADERS, warned), body);
  }

  async deleteObject(t: Target, user: UserInfo, opts: Record<string, any>): Promise<{ code: number; body: Buffer | string; obj?: KObject }> {
    const type = t.type;
    const dryRun = [].concat(opts.dryRun ?? []).includes('All' as never);
    const pre = opts.preconditions ?? {};
    for (;;) {
      const e = this.current(type, t.namespace, t.name);
      if (!e) throw errors.notFound(type.group, type.resource, t.name);
      // Admission, the answer and a lingering deletion see the object in this version; it is written back in the stored one.
      const old = await this.fromStored(type, parse(e));
      // Checked before deletion begins, as the reference's BeforeDelete does: it names the Kind, not the resource.
      if (pre.uid && pre.uid !== e.uid) throw errors.conflict(type.group, type.kind, t.name, `the UID in the precondition (${pre.uid}) does not match the UID in record (${e.uid}). The object might have been deleted and then recreated`);
      if (pre.resourceVersion && pre.resourceVersion !== String(e.rev)) throw errors.conflict(type.group, type.kind, t.name, `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${e.rev}). The object might have been modified`);
      await this.ctx.admission.admit(this.attrs('DELETE', t, user, dryRun, undefined, old, opts));
      await this.ctx.admission.validate(this.attrs('DELETE', t, user, dryRun, undefined, old, opts));
      const policy: string = opts.propagationPolicy ?? (opts.orphanDependents === true ? 'Orphan' : 'Background');
      const finalizers = [...(old.metadata!.finalizers ?? [])];
      // Foreground and Orphan deletion are carried out by the garbage collector through finalizers.
      const gcFinalizer = policy === 'Foreground' ? 'foregroundDeletion' : policy === 'Orphan' ? 'orphan' : '';
      // Graceful deletion (pods): the object lingers for its grace period; a shorter grace shortens it.
      const grace = type.strategy?.gracePeriod ? await type.strategy.gracePeriod(old, typeof opts.gracePeriodSeconds === 'number' ? opts.gracePeriodSeconds : undefined) : 0;
      const lingering = old.metadata!.deletionGracePeriodSeconds;
      if (grace > 0 && (lingering === undefined || grace < lingering || !old.metadata!.deletionTimestamp)) {
        const obj = clone(old);
        const md = obj.metadata!;
        md.deletionTimestamp = new Date(Math.floor(Date.now() / 1000) * 1000 + grace * 1000).toISOString().replace('.000Z', 'Z');
        md.deletionGracePeriodSeconds = grace;
        if (gcFinalizer && !finalizers.includes(gcFinalizer)) md.finalizers = [...finalizers.filter((f) => f !== 'orphan' && f !== 'foregroundDeletion'), gcFinalizer];
        if (dryRun) return { code: 200, body: JSON.stringify(obj), obj };
        const r = await this.commit('update', e.key, await this.toStored(type, obj), e.rev);
        if (r.ok) return { code: 200, body: (await this.asServed(type, [r.bytes!]))[0], obj };
        await this.afterConflict(t, r);
        continue;
      }
      if (grace > 0) return { code: 200, body: JSON.stringify(old), obj: old }; // already lingering with a grace no longer than this one
      const graceful = finalizers.length > 0 || this.extraFinalizers(type, old) || (gcFinalizer && !old.metadata!.deletionTimestamp);
      if (graceful) {
        if (old.metadata!.deletionTimestamp && !gcFinalizer && (old.metadata!.deletionGracePeriodSeconds ?? 0) === 0) return { code: 200, body: JSON.stringify(old), obj: old };
        const obj = clone(old);
        const md = obj.metadata!;
        if (md.deletionGracePeriodSeconds) { md.deletionTimestamp = now(); md.deletionGracePeriodSeconds = 0; }
        md.deletionTimestamp ??= now();
        md.deletionGracePeriodSeconds ??= 0;
        if (gcFinalizer && !finalizers.includes(gcFinalizer)) md.finalizers = [...finalizers.filter((f) => f !== 'orphan' && f !== 'foregroundDeletion'), gcFinalizer];
        if (type.terminatingPhase) setPath(obj, `${type.statusField ?? 'status'}.phase`, type.terminatingPhase);
        if (dryRun) return { code: 200, body: JSON.stringify(obj), obj };
        const r = await this.commit('update', e.key, await this.toStored(type, obj), e.rev);
        if (r.ok) return { code: 200, body: (await this.asServed(type, [r.bytes!]))[0], obj };
        await this.afterConflict(t, r);
        continue;
      }
      const status = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: t.name, group: type.group || undefined, kind: type.resource, uid: e.uid } });
      if (dryRun) return { code: 200, body: status, obj: old };
      const r = await this.ctx.backend.write({ type: 'delete', key: e.key, expectRevision: e.rev });
      if (r.ok) {
        await type.strategy?.afterDelete?.(old);
        return { code: 200, body: status, obj: old };
      }
      // Preconditions are checked again against the fresh object on the next attempt.
      await this.afterConflict(t, r);
    }
  }

  async deleteCollection(req: KRequest, res: KResponse, t: Target, user: UserInfo): Promise<void> {
    const opts = await this.deleteOptions(req);
    const sel = this.selectors(t.type, req.query);
    await this.consistent();
    const targets = [...this.rc(t.type).range(t.namespace)].filter((e) => !sel.matches || sel.matches(e));
    const deleted: KObject[] = [];
    for (const e of targets) {
      try {
        const r = await this.deleteObject({ ...t, namespace: e.namespace, name: e.name }, user, opts);
        if (r.obj) deleted.push(r.obj);
      } catch (err) {
        if (!(err instanceof StatusError && err.code === 404)) throw err;
      }
    }
    await this.sendWritten(req, res, t, 200, JSON_HEADERS, JSON.stringify({ kind: `${t.type.kind}List`, apiVersion: gv(t.type), metadata: { resourceVersion: String(this.ctx.cache.rev) }, items: deleted }));
  }
}

/**
 * Runs the rest of a write a strategy prepared, then tells the strategy whether it committed: `ok`
 * false (dry run, failure, a retry) undoes its reservations. `value` undefined asks the caller to retry.
 */
async function settle<T>(finish: WriteFinisher | void, rest: () => Promise<{ ok: boolean; value: T }>): Promise<T> {
  let r: { ok: boolean; value: T };
  try {
    r = await rest();
  } catch (e) {
    if (finish) await finish(false);
    throw e;
  }
  if (finish) await finish(r.ok);
  return r.value;
}

/** Who a write records as the owner of the fields it sets; `applied` when server-side apply already computed ownership. */
interface FieldManagement { manager: string; applied?: boolean; /** Request body bytes. */ size?: number }

/** An object nested past MAX_DEPTH (a patch can deepen one) is refused before anything recurses through it. */
function tooDeep(obj: unknown): void {
  const deep = depthError(obj);
  if (deep) throw errors.badRequest(deep);
}

/** A failed merge as a Status: the merge code's status code, reason and message. */
function mergeError(e: { code: number; reason: string; message: string }): StatusError {
  return new StatusError(e.code, e.reason || (e.code === 422 ? 'Invalid' : e.code === 400 ? 'BadRequest' : e.code === 413 ? 'RequestEntityTooLarge' : e.code === 415 ? 'UnsupportedMediaType' : 'InternalError'), e.message);
}

/**
 * Fields an endpoint does not write, so nobody gains ownership of them there (server-side apply rule
 * 12): the main resource never writes status; the status sub-resource writes nothing but status.
 */
function resetFields(type: TypeDef, subresource: string): FieldsV1 | undefined {
  if (!type.statusField) return undefined;
  if (!subresource) return { [`f:${type.statusField}`]: {} };
  if (subresource === type.statusField || subresource === 'status') return { 'f:spec': {} };
  return undefined;
}


/** The longest delay a Node timer takes as given. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Bytes of a write (body, or body and current object) from which its long steps are separated by a turn of the event loop. */
const LARGE_WRITE_BYTES = 256 * 1024;

/** Findings of bodies checked on a worker (Registry.decodeOnWorker), by the decoded object, until fieldValidation takes them. */
const checked = new WeakMap<object, { typeError?: string; unknown: string[]; duplicates: string[] }>();

/** Definitions maps are shared by many types: one key per map, so workers keep each map once. */
const defsKeys = new WeakMap<object, string>();
let defsCount = 0;
function defsKey(type: TypeDef): string | undefined {
  if (!type.definitions) return undefined;
  let k = defsKeys.get(type.definitions);
  if (!k) defsKeys.set(type.definitions, (k = `defs-${++defsCount}`));
  return k;
}

/** Where a list's joined answer is kept for the next identical list (ResourceCache.listMemo). */
interface ListMemoSlot { rc: ResourceCache; key: string }

const COMMA = Buffer.from(',');
/** Answers from this size on go out in pieces, counted in the output budget (sendAnswer). */
const SIZED_ANSWER_BYTES = 64 * 1024;
/**
 * JSON and Protobuf lists up to this size are joined at once; larger ones are joined in time slices
 * (sendLarge). Either way an unfiltered list at the latest revision is kept for the next identical
 * list (ResourceCache.listMemo: one per resource).
 */
const LIST_MEMO_MAX_BYTES = 8 * 1024 * 1024;
const TAIL = Buffer.from(']}');
const EVENT_TAIL = Buffer.from('}\n');
/** A watch's replay (initial state, history) is written to the socket in batches of about this size. */
const REPLAY_BATCH_BYTES = 64 * 1024;

function encodeContinue(rv: number, start: { namespace: string; name: string }): string {
  return Buffer.from(JSON.stringify({ v: 1, rv, ns: start.namespace, n: start.name })).toString('base64url');
}

function decodeContinue(tok: string): { rv: number; start: { namespace: string; name: string } } {
  try {
    const o = JSON.parse(Buffer.from(tok, 'base64url').toString('utf8'));
    if (o.v !== 1 || typeof o.rv !== 'number' || typeof o.ns !== 'string' || typeof o.n !== 'string') throw new Error('bad token');
    return { rv: o.rv, start: { namespace: o.ns, name: o.n } };
  } catch {
    throw errors.badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
}
