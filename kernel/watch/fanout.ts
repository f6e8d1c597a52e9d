// The watch fan-out. Watchers are indexed by resource, then by the most selective key they pin:
// object name, an indexed field (e.g. spec.nodeName), namespace, or nothing. An event therefore
// reaches only watchers that can match it. Each event is encoded once per representation (and event
// type) and the same bytes are written to every watcher that wants that representation.
import { withRevision, type CacheEvent, type Entry, type ResourceCache } from '../store/cache.js';

/** Longest a committed event waits so that it shares a socket write with later ones. */
const MAX_COALESCE_MS = 20;
/** Distinct joined batches kept per first line during one flush. */
const MAX_JOINED = 8;

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface Watcher {
  /** Empty means any. */
  namespace: string;
  name: string;
  /** An indexed field the watcher's field selector pins: ["spec.nodeName", "node-1"]. */
  field?: [string, string];
  /** Label and other field selectors beyond the index; absent means everything in the index matches. */
  matches?: (e: Entry) => boolean;
  /** Representation key: watchers with the same key share encoded bytes. */
  rep: string;
  encode(type: EventType, e: Entry): Buffer;
  deliver(line: Buffer, rev: number): void;
  /** Writes what deliver() queued; called once per committed batch, so a watcher gets one socket write per batch. */
  flush?(): void;
  /** Ends the watch (its type is no longer served). */
  close?(): void;
}

interface Index {
  all: Set<Watcher>;
  byNamespace: Map<string, Set<Watcher>>;
  byName: Map<string, Set<Watcher>>;
  byField: Map<string, Set<Watcher>>; // "<field>=<value>"
  fields: string[]; // the type's indexed fields
}

function addTo(m: Map<string, Set<Watcher>>, k: string, w: Watcher) {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(w);
}
function removeFrom(m: Map<string, Set<Watcher>>, k: string, w: Watcher): boolean {
  const s = m.get(k);
  if (!s?.delete(w)) return false;
  if (!s.size) m.delete(k);
  return true;
}

export class WatchHub {
  private indexes = new Map<ResourceCache, Index>();
  /** Watchers with queued lines since the last flush. */
  private dirty = new Set<Watcher>();
  count = 0;

  /** A watcher queued something: flush it at the end of the batch. */
  touched(w: Watcher): void { this.dirty.add(w); }

  /** End of a committed batch: one write per watcher that received anything. */
  flush(): void {
    if (!this.dirty.size) return;
    const t0 = performance.now();
    const ws = [...this.dirty];
    this.dirty.clear();
    this.flushing = true;
    try {
      for (const w of ws) w.flush?.();
    } finally {
      this.flushing = false;
      this.joined.clear();
    }
    this.lastFlushMs = performance.now() - t0;
  }

  private flushing = false;
  /** This flush's joined batches, by their first line: watchers that queued the same lines share one copy. */
  private joined = new Map<Buffer, { lines: Buffer[]; bytes: Buffer }[]>();

  /**
   * The lines a watcher queued, as one buffer. During a flush, watchers that queued the very same
   * shared lines (the usual case: every watcher of a collection gets every event) get the same
   * joined buffer, so the bytes are copied once per batch, not once per watcher.
   */
  join(lines: Buffer[]): Buffer {
    if (lines.length === 1) return lines[0];
    if (!this.flushing) return Buffer.concat(lines);
    let seen = this.joined.get(lines[0]);
    if (seen) {
      for (const j of seen) {
        if (j.lines.length !== lines.length) continue;
        let same = true;
        for (let i = 1; i < lines.length && same; i++) same = j.lines[i] === lines[i];
        if (same) return j.bytes;
      }
    } else this.joined.set(lines[0], (seen = []));
    const bytes = Buffer.concat(lines);
    // a few distinct batches per first line (selectors that split the events), not one per watcher
    if (seen.length < MAX_JOINED) seen.push({ lines, bytes });
    return bytes;
  }

  private flushTimer: NodeJS.Immediate | NodeJS.Timeout | undefined;
  private lastFlushMs = 0;

  /**
   * Flush soon rather than now: when fan-out is expensive (the last flush took more than a
   * millisecond), wait about as long again so the events of several commits share one socket write
   * per watcher — fewer syscalls and TLS records per event, at a latency cost bounded by MAX_COALESCE_MS.
   */
  schedule(): void {
    if (this.flushTimer || !this.dirty.size) return;
    const run = () => { this.flushTimer = undefined; this.flush(); };
    this.flushTimer = this.lastFlushMs > 1 ? setTimeout(run, Math.min(this.lastFlushMs * 2, MAX_COALESCE_MS)) : setImmediate(run);
  }

  private index(rc: ResourceCache): Index {
    let ix = this.indexes.get(rc);
    if (!ix) this.indexes.set(rc, (ix = { all: new Set(), byNamespace: new Map(), byName: new Map(), byField: new Map(), fields: rc.type.indexedFields ?? [] }));
    return ix;
  }

  /** Whether a field selector on this field can use the index. */
  indexed(rc: ResourceCache, field: string): boolean {
    return (rc.type.indexedFields ?? []).includes(field);
  }

  add(rc: ResourceCache, w: Watcher): void {
    const ix = this.index(rc);
    if (w.name) addTo(ix.byName, w.name, w);
    else if (w.field) addTo(ix.byField, `${w.field[0]}=${w.field[1]}`, w);
    else if (w.namespace) addTo(ix.byNamespace, w.namespace, w);
    else ix.all.add(w);
    this.count++;
  }

  remove(rc: ResourceCache, w: Watcher): void {
    const ix = this.indexes.get(rc);
    if (!ix) return;
    const removed = w.name ? removeFrom(ix.byName, w.name, w)
      : w.field ? removeFrom(ix.byField, `${w.field[0]}=${w.field[1]}`, w)
      : w.namespace ? removeFrom(ix.byNamespace, w.namespace, w)
      : ix.all.delete(w);
    if (removed) this.count--;
  }

  /** Ends every watch on a resource (a run-time type that stopped being served). */
  closeAll(rc: ResourceCache): void {
    const ix = this.indexes.get(rc);
    if (!ix) return;
    const ws = [ix.all, ...ix.byNamespace.values(), ...ix.byName.values(), ...ix.byField.values()].flatMap((set) => [...set]);
    for (const w of ws) w.close?.();
  }

  dispatch(ev: CacheEvent, rc: ResourceCache): void {
    const ix = this.indexes.get(rc);
    if (!ix) return;
    const e = ev.entry;
    const memo = new Map<string, Buffer>();
    let left: Entry | undefined;
    const line = (w: Watcher, type: EventType, leaving = false) => {
      const k = w.rep + '\0' + type + (leaving ? '\0prev' : '');
      let b = memo.get(k);
      if (!b) memo.set(k, (b = w.encode(type, leaving ? (left ??= withRevision(ev.prev!, ev.rev)) : e)));
      return b;
    };
    const inIndex = (w: Watcher, x: Entry | undefined) =>
      !!x && (!w.namespace || x.namespace === w.namespace) && (!w.field || x.fields[w.field[0]] === w.field[1]);
    const send = (set: Set<Watcher> | undefined, checkIndex: boolean) => {
      if (!set) return;
      for (const w of set) {
        if (!w.matches && !checkIndex) { w.deliver(line(w, ev.type), ev.rev); continue; }
        // With a selector, an object entering the selected set is ADDED and one leaving it is DELETED.
        const ok = (x: Entry | undefined) => inIndex(w, x) && (!w.matches || w.matches(x!));
        if (ev.type === 'DELETED') { if (ok(e)) w.deliver(line(w, 'DELETED'), ev.rev); continue; }
        const now = ok(e);
        const before = ok(ev.prev);
        if (now && before) w.deliver(line(w, 'MODIFIED'), ev.rev);
        else if (now) w.deliver(line(w, 'ADDED'), ev.rev);
        else if (before) w.deliver(line(w, 'DELETED', true), ev.rev);
      }
    };
    send(ix.all, false);
    if (e.namespace) send(ix.byNamespace.get(e.namespace), false);
    send(ix.byName.get(e.name), true);
    for (const f of ix.fields) {
      const v = e.fields[f];
      send(ix.byField.get(`${f}=${v}`), true);
      const pv = ev.prev?.fields[f];
      if (pv !== undefined && pv !== v) send(ix.byField.get(`${f}=${pv}`), true);
    }
  }
}
