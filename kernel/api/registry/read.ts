// The read path: get, list and a computed type's reads. Which revision a read sees (consistent,
// not older than, exact, a continue token's), the label and field selectors and the namespace they
// cover, and how a list goes out: from each object's cached bytes, memoized whole for the next
// identical list, in pieces with backpressure when large. Watches build on this (watch.ts).
import type { FieldCause, TypeDef } from '../../contracts/index.js';
import { errors } from '../../contracts/status.js';
import { isPromise, type KRequest, type KResponse } from '../../http/types.js';
import { makeEntry, storageKey, withBytes, type Entry, type ResourceCache } from '../../store/cache.js';
import { encodeAs, type Accepted } from '../repr/negotiate.js';
import { columnDefinitions, tableRow, type IncludeObject } from '../repr/table.js';
import { Slicer, joinSliced } from '../../watch/slicer.js';
import { sendSized } from '../../watch/outbudget.js';
import { gv } from '../catalog.js';
import { isDNS1123Label } from '../validation.js';
import { parseLabelSelector, matchLabels, parseFieldSelector, matchFields, exactFieldValue } from '../selectors.js';
import { listProtobuf, partialListProtobuf } from '../repr/protobuf.js';
import { parseResourceVersion, queryInt, type ParsedRV } from '../options.js';
import { JSON_HEADERS, parse } from './util.js';
import { scaleOf } from './scale.js';
import { RegistryBase, type Target } from './base.js';

export class RegistryReads extends RegistryBase {
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

  /** One object: at once when the cache has the revision the read needs (nothing to wait for, nothing converted). */
  get(req: KRequest, res: KResponse, t: Target): void | Promise<void> {
    const rv = req.query.size === 0 ? null : req.query.get('resourceVersion');
    const ready = rv === null || rv === '' ? this.consistent() : rv !== '0' ? this.notOlderThan(parseResourceVersion(rv)) : undefined;
    return ready ? ready.then(() => this.getCurrent(req, res, t)) : this.getCurrent(req, res, t);
  }

  private getCurrent(req: KRequest, res: KResponse, t: Target): void | Promise<void> {
    const e = this.current(t.type, t.namespace, t.name);
    if (!e) throw errors.notFound(t.type.group, t.type.resource, t.name);
    if (t.subresource === 'scale') return this.respondObject(req, res, t, 200, Buffer.from(JSON.stringify(scaleOf(t.type, parse(e)))));
    const shown = this.readDefaulted(t.type, e);
    if (!t.type.convert || this.printsStored(req, t, this.accepted(req, t))) return this.respondObject(req, res, t, 200, shown.bytes, shown === e ? e : undefined);
    return this.asServed(t.type, [shown.bytes]).then(([served]) => this.respondObject(req, res, t, 200, served, served === shown.bytes && shown === e ? e : undefined));
  }

  /** Consistent read: the cache has applied everything committed (undefined: it has already). */
  consistent(): Promise<void> | undefined {
    const b = this.ctx.backend;
    const latest = b.latestRevision ? b.latestRevision() : b.currentRevision();
    if (!isPromise(latest) && latest <= this.ctx.cache.rev) return undefined;
    return Promise.resolve(latest).then(async (rev) => {
      if (!(await this.ctx.cache.waitFor(rev, 3000))) throw errors.timeout('Timeout: waiting for the cache to catch up', 1);
    });
  }

  /** The cache reaches the revision (undefined: it has already). */
  notOlderThan(rv: ParsedRV): Promise<void> | undefined {
    if (rv.n <= this.ctx.cache.rev) return undefined;
    return this.ctx.cache.waitFor(rv.n, 3000).then((ok) => {
      if (ok) return;
      const e = errors.timeout(`Timeout: Too large resource version: ${rv.text}, current: ${this.ctx.cache.rev}`, 1);
      e.details = { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 };
      throw e;
    });
  }

  protected selectors(type: TypeDef, q: URLSearchParams) {
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
  protected scope(t: Target, sel: { namespace?: string }): string {
    if (t.namespace || !t.type.namespaced) return t.namespace;
    return sel.namespace !== undefined && !isDNS1123Label(sel.namespace).length ? sel.namespace : '';
  }

  /**
   * Which revision a list reads, per Part A's list table: Most recent (consistent), Any (the cache as
   * it is), Not older than (wait for it), Exact (rebuild that revision from history), or the continue
   * token's revision. Invalid combinations are 422 (ListOptions) or 400, as the reference answers.
   */
  protected async listRevision(q: URLSearchParams, limit: number, cont: string): Promise<{ rev: number; start?: { namespace: string; name: string } }> {
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
    // the reference's watch cache hands an Exact list, a paged one and a continued one to etcd, whose parse error is a 400
    const parsed = parseResourceVersion(rv, rvm === 'Exact' || (limit > 0 && rv !== '0') || !!cont);
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
    const exact = rvm === 'Exact' || (!rvm && limit > 0);
    await this.notOlderThan(parsed);
    if (!exact) return { rev: this.ctx.cache.rev };
    if (parsed.n < this.ctx.cache.floor) throw errors.gone('The resourceVersion for the provided list is too old.');
    return { rev: parsed.n };
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
  protected async sendList(req: KRequest, res: KResponse, t: Target, acc: Accepted, items: Entry[], rev: number, next: string, remaining: number | undefined, memo?: ListMemoSlot): Promise<Buffer | undefined> {
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
  protected async sendLarge(req: KRequest, res: KResponse, t: Target, acc: Accepted, pieces: Iterable<Uint8Array>, total: number, memo: ListMemoSlot | undefined): Promise<Buffer | undefined> {
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
  protected async sendAnswer(req: KRequest, res: KResponse, t: Target, headers: Record<string, string>, pieces: Iterable<Uint8Array>, total: number, built: boolean): Promise<void> {
    if (req.method === 'HEAD') return res.send(200, headers, '');
    if (total < SIZED_ANSWER_BYTES) {
      const parts = [...pieces];
      return res.send(200, headers, parts.length === 1 ? parts[0] : Buffer.concat(parts, total));
    }
    await sendSized(res, this.ctx.outputBudget, { what: `list ${req.path}`, group: t.type.group, resource: t.type.resource, kind: 'list' }, { code: 200, headers, total, pieces, built });
  }
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
