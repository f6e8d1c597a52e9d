// The watch path: a watch's initial state or history replay, then the live events the fan-out
// (kernel/watch/fanout.ts) hands it, framed as JSON lines, Protobuf frames or WebSocket messages,
// with bookmarks, a timeout, and backpressure counted in the watcher's and the server's budgets.
// A version stored apart is converted on the way out (convertingSink).
import type { FieldCause, KObject, TypeDef } from '../../contracts/index.js';
import { errors, StatusError } from '../../contracts/status.js';
import type { KRequest, KResponse } from '../../http/types.js';
import { makeEntry, resourcePrefix, withBytes, withRevision, type Entry } from '../../store/cache.js';
import { table, type IncludeObject } from '../repr/table.js';
import { Slicer } from '../../watch/slicer.js';
import type { OutputHolder } from '../../watch/outbudget.js';
import type { Watcher, EventType } from '../../watch/fanout.js';
import { gv } from '../catalog.js';
import { entryProtobuf, objectProtobuf, partialProtobuf, statusProtobuf, watchFrame } from '../repr/protobuf.js';
import { parseResourceVersion, queryBool, queryInt } from '../options.js';
import { parse } from './util.js';
import type { Target } from './base.js';
import { RegistryReads } from './read.js';

/** Where a watch's bytes go: the transport, or a converting stage before it. write() false: backed up. */
interface Sink { write(b: Buffer): boolean; end(): void; resume?(): void }
/** Bytes a watch may hand a converting sink beyond what it has converted and written. */
const CONVERTING_AHEAD = 64 * 1024;

export class RegistryWatch extends RegistryReads {
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
    const parsedRv = parseResourceVersion(rv);
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
    if (parsedRv.n > this.ctx.cache.rev) {
      try { await this.notOlderThan(parsedRv); } catch (e) { waitErr = e as StatusError; }
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
        else put(this.ctx.hub.join(lines));
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
        const start = parsedRv.n;
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

  /**
   * A watch's output for a version stored apart: each event's object converted, in order. Conversion
   * may wait on a webhook, so the sink takes more only while less than CONVERTING_AHEAD bytes wait
   * for it and the socket takes what it writes; otherwise write() says "backed up", the watch keeps
   * later events in its counted backlog, and `onRoom` (the watch's drain) is called once there is room.
   * `resume()` tells it the socket drained.
   */
  protected convertingSink(type: TypeDef, inner: Sink, onRoom: () => void): Sink {
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
}

/** The longest delay a Node timer takes as given. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const EVENT_TAIL = Buffer.from('}\n');
/** A watch's replay (initial state, history) is written to the socket in batches of about this size. */
const REPLAY_BATCH_BYTES = 64 * 1024;
