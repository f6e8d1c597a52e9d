// A revision log held in memory only: the same contract as the embedded log (revisions, history
// for watch resume, compaction with 410 Expired), for test servers that start in a moment and leave
// nothing behind. Nothing survives the process.
import type { KV, StorageBackend, StorageEvent, WriteOp, WriteResult } from '../../../kernel/contracts/index.js';
import { StatusError } from '../../../kernel/contracts/status.js';

/**
 * What a memory store holds. It outlives one MemoryStore object, so that closing and opening a store
 * on the same data within a process sees it again (as the storage conformance suite checks).
 */
export class MemoryData {
  readonly current = new Map<string, KV>();
  /** Current keys in byte (code point) order, for range(). */
  readonly keys: string[] = [];
  /** History after `compacted`, in revision order. */
  events: StorageEvent[] = [];
  revision = 0;
  compacted = 0;
}

/** Code point order, which is the UTF-8 byte order the other backends sort keys in (plain `<` is UTF-16's). */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i), y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}
/** Surrogates (U+D800–DFFF, code points above U+FFFF) rank after U+E000–FFFF. */
const codePointRank = (u: number) => (u >= 0xd800 && u <= 0xdfff ? u + 0x2000 : u >= 0xe000 ? u - 0x800 : u);

/** Index of the first key not before `key`. */
function lowerBound(keys: string[], key: string): number {
  let lo = 0, hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(keys[mid], key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first event with a revision above `rev`. */
function firstAfter(events: StorageEvent[], rev: number): number {
  let lo = 0, hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (events[mid].revision <= rev) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface Pending { event: StorageEvent; resolve: (r: WriteResult) => void }

export class MemoryStore implements StorageBackend {
  private listener: (events: StorageEvent[], revision: number) => void = () => {};
  /** Applied writes not yet shown to the listener; delivered together after the current task. */
  private pending: Pending[] = [];
  private delivering: Promise<void> | undefined;
  /** The revision the listener has seen: currentRevision() (writes are applied at once, committed after). */
  private committed = 0;
  private opened = false;

  constructor(private readonly data = new MemoryData()) {}

  async open(): Promise<void> {
    this.committed = this.data.revision;
    this.opened = true;
  }

  async close(): Promise<void> {
    await this.delivering;
    this.opened = false;
  }

  ready(): boolean { return this.opened; }
  currentRevision(): number { return this.committed; }
  compactedRevision(): number { return this.data.compacted; }

  async get(key: string): Promise<KV | undefined> {
    return this.data.current.get(key);
  }

  async range(prefix: string, opts: { startKey?: string; limit?: number } = {}): Promise<KV[]> {
    const { keys, current } = this.data;
    const from = opts.startKey && compareKeys(opts.startKey, prefix) > 0 ? opts.startKey : prefix;
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const out: KV[] = [];
    for (let i = lowerBound(keys, from); i < keys.length && out.length < limit && keys[i].startsWith(prefix); i++) out.push(current.get(keys[i])!);
    return out;
  }

  async *all(): AsyncIterable<KV> {
    for (const kv of [...this.data.current.values()]) yield kv;
  }

  write(op: WriteOp): Promise<WriteResult> {
    if (!this.opened) return Promise.reject(new StatusError(503, 'ServiceUnavailable', 'storage is not open'));
    const d = this.data;
    const cur = d.current.get(op.key);
    if (op.type === 'create') {
      if (cur) return Promise.resolve({ ok: false, reason: 'exists', current: cur });
    } else {
      if (!cur) return Promise.resolve({ ok: false, reason: 'not-found' });
      if (op.expectRevision && cur.modRevision !== op.expectRevision) return Promise.resolve({ ok: false, reason: 'conflict', current: cur });
    }
    const rev = d.revision + 1;
    // the revision is taken only once the value exists: a callback that throws leaves no hole
    let value: Uint8Array;
    try {
      value = op.type === 'delete' ? cur!.value : op.value(rev);
    } catch (err) {
      return Promise.reject(err);
    }
    d.revision = rev;
    let event: StorageEvent;
    if (op.type === 'delete') {
      d.current.delete(op.key);
      d.keys.splice(lowerBound(d.keys, op.key), 1);
      event = { type: 'DELETED', key: op.key, revision: rev, value, createRevision: cur!.createRevision, prevRevision: cur!.modRevision };
    } else {
      const createRevision = cur ? cur.createRevision : rev;
      d.current.set(op.key, { key: op.key, value, modRevision: rev, createRevision });
      if (!cur) d.keys.splice(lowerBound(d.keys, op.key), 0, op.key);
      event = { type: cur ? 'MODIFIED' : 'ADDED', key: op.key, revision: rev, value, createRevision, prevRevision: cur ? cur.modRevision : 0 };
    }
    d.events.push(event);
    return new Promise((resolve) => {
      this.pending.push({ event, resolve });
      this.delivering ??= Promise.resolve().then(() => this.deliver());
    });
  }

  /** Writes made in one task reach the listener as one batch, in revision order, before they resolve. */
  private deliver(): void {
    const batch = this.pending;
    this.pending = [];
    this.delivering = undefined;
    const last = batch[batch.length - 1].event.revision;
    this.committed = last;
    try { this.listener(batch.map((p) => p.event), last); } catch { /* the cache must not break the store */ }
    for (const { event: e, resolve } of batch) resolve({ ok: true, revision: e.revision, value: e.type === 'DELETED' ? undefined : e.value, createRevision: e.createRevision });
  }

  async *history(after: number, prefix = ''): AsyncIterable<StorageEvent> {
    if (after < this.data.compacted) throw new StatusError(410, 'Expired', `too old resource version: ${after} (${this.data.compacted})`);
    // a snapshot: writes during the iteration are not seen, as with the other backends
    const events = this.data.events;
    const end = firstAfter(events, this.committed);
    for (let i = firstAfter(events, after); i < end; i++) if (!prefix || events[i].key.startsWith(prefix)) yield events[i];
  }

  onCommit(listener: (events: StorageEvent[], revision: number) => void): void { this.listener = listener; }

  async compact(revision: number): Promise<void> {
    revision = Math.min(revision, this.committed);
    if (revision <= this.data.compacted) return;
    this.data.compacted = revision;
    this.data.events = this.data.events.slice(firstAfter(this.data.events, revision));
  }
}
