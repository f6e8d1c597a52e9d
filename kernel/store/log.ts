// The embedded storage log: a revisioned key-value log on classic-level (LevelDB).
//
// Layout (one LevelDB, utf8 keys; every record starts with a CRC-32 of the rest, the key included):
//   c:<key>          current value      [crc u32][modRev f64][createRev f64][stored value]
//   h:<rev hex16>    history event      [crc u32][type u8][rev f64][createRev f64][prevRev f64][keyLen u16][key][stored value]
//   m:rev            latest committed revision (same batch as the write, so it is never behind)
//   m:count, m:digest  number of current keys and StateDigest of them, as of m:rev (same batch)
//   m:compacted      revision at or below which history was dropped
//   m:gap:<from hex16>  revisions from+1..value were reserved but never written (an unclean stop)
//   m:format         "3" (stores without it are upgraded at open)
// Beside it, the HIGHWATER file (integrity.ts) holds the reserved revision and, after a clean stop,
// the revision the store ended at; the ACKED file the last revision acknowledged. "stored value" is the value after the optional transformer
// (encryption at rest); the index, the events and the cache hold the plain value.
//
// Writes are checked against an in-memory index (which includes writes still waiting for their
// sync), assigned the next revision, and queued. One flush at a time writes every queued write in a
// single synced batch (group commit): concurrent writers share one fsync. A write's promise
// resolves, and its event reaches onCommit, only after that batch is durable and ACKED holds its
// revision (that second sync overlaps the next batch's).
//
// At open the store is checked (its files before LevelDB opens it, the write-ahead log's record
// checksums, every record's checksum, the count and digest of current keys, contiguous history, the
// revision acknowledged last and the one it was stopped at) and a damaged
// store is refused with a StoreDamageError; `cluster-apiserver repair` salvages it (ops/repair.ts). LevelDB helpers
// are in leveldb.ts.
import path from 'node:path';
import type { KV, StorageBackend, StorageEvent, ValueTransformer, WriteOp, WriteResult } from '../contracts/index.js';
import { StatusError } from '../contracts/status.js';
import { ACK_FILE, AckMark, checkLogs, checkStoreFiles, HIGH_WATER_FILE, readAcked, readHighWater, StateDigest, StoreDamageError, writeAcked, writeHighWater, type HighWater } from './integrity.js';
import { BULK, eachEntry, FORMAT, levelDbDamage, lostWrites, num, openDb, ownBuffer, prefixEnd, Slabs, str, type Db } from './leveldb.js';
import { decodeCurrent, decodeEvent, encodeCurrent, encodeEvent, revKey } from './records.js';

/** Revisions reserved in the high-water file per write of it: one extra fsync per this many revisions. */
const RESERVE_BLOCK = 1000;

interface Pending {
  ops: { type: 'put' | 'del'; key: string; value?: Uint8Array }[];
  event: StorageEvent;
  /** Number of keys and state digest once this write is applied. */
  count: number;
  digest: string;
  resolve: (r: WriteResult) => void;
  reject: (e: Error) => void;
}

export interface LogOptions {
  /** One synced batch for all writes queued while the previous sync ran (default true). */
  groupCommit?: boolean;
  /** fsync every batch (default true). Only benchmarks turn this off. */
  sync?: boolean;
  /** Turns values into what is stored and back (encryption at rest). */
  transformer?: ValueTransformer;
  /** Where the log reports what it repaired on its own at open. */
  warn?: (msg: string) => void;
}

export class StorageLog implements StorageBackend {
  /** Set by open(). */
  private db!: Db;
  /** Current state including queued writes: conflict checks must see writes not yet synced. */
  private index = new Map<string, KV>();
  private digest = new StateDigest();
  /** Revision ranges (from, to] reserved but never written, which history skips. */
  private gaps = new Map<number, number>();
  private queue: Pending[] = [];
  private flushing = false;
  /** History records read and verified by open(), until the first history() call takes them. */
  private openedHistory: StorageEvent[] | undefined;
  private nextRev = 0;
  private committedRev = 0;
  private compactedRev = 0;
  /** The high-water file says no revision above this was handed out. */
  private reserved = 0;
  private listener: (events: StorageEvent[], revision: number) => void = () => {};
  private ack: AckMark | undefined;
  /** The last batch's answers, sent once ACKED holds its revision; batches are answered in order. */
  private delivered: Promise<void> = Promise.resolve();
  private opened = false;
  private failed: Error | undefined;
  private readonly groupCommit: boolean;
  private readonly sync: boolean;
  private readonly tx: ValueTransformer | undefined;
  private readonly warn: (msg: string) => void;

  constructor(readonly dir: string, opts: LogOptions = {}) {
    this.groupCommit = opts.groupCommit ?? true;
    this.sync = opts.sync ?? true;
    this.tx = opts.transformer;
    this.warn = opts.warn ?? (() => {});
  }

  private damage(problem: string): StoreDamageError {
    return new StoreDamageError(this.dir, problem);
  }

  private plain(key: string, stored: Uint8Array): Uint8Array {
    return this.tx ? this.tx.fromStorage(key, stored) : stored;
  }

  private current(key: string, buf: Uint8Array): KV {
    const r = decodeCurrent(key, buf, false);
    if (!r) throw this.damage(`the record of ${key} fails its checksum`);
    return { key, modRevision: r.modRevision, createRevision: r.createRevision, value: this.plain(key, r.stored) };
  }

  private event(buf: Uint8Array): StorageEvent {
    const ev = decodeEvent(buf, false);
    if (!ev) throw this.damage('a history record fails its checksum');
    ev.value = this.plain(ev.key, ev.value);
    return ev;
  }

  async open(): Promise<void> {
    // Before LevelDB may create or delete a file: a store is new only when it has no file at all.
    const isNew = checkStoreFiles(this.dir) === 'new';
    checkLogs(this.dir);
    const hw = readHighWater(this.dir);
    this.db = await openDb(this.dir, isNew);
    try {
      await this.load(hw);
      this.ack = await AckMark.open(this.dir, this.sync);
    } catch (e) {
      await this.db.close();
      // LevelDB's own reports of damage (a table block it cannot read, a table cut short) are damage too
      throw levelDbDamage(this.dir, e) ?? levelDbDamage(this.dir, (e as { cause?: unknown }).cause) ?? e;
    }
    this.opened = true;
  }

  /** Reads and checks the store; refuses it (StoreDamageError) unless everything agrees. */
  private async load(hw: HighWater | undefined): Promise<void> {
    const meta = async (k: string) => num(await this.db.get('m:' + k));
    const stored = await this.db.get('m:format');
    const upgraded = stored === undefined;
    // A store that lost its m:format record is damaged, not one from before checksums: decoding its
    // records as unchecksummed ones would read checksums as revisions.
    if (upgraded) for await (const [k, v] of this.db.iterator({ gt: 'c:', lt: 'c;', limit: 1 })) if (decodeCurrent(k.slice(2), v, false)) throw this.damage('the record of the store format is lost');
    if (upgraded) await this.upgrade();
    const format = upgraded ? FORMAT : Buffer.from(stored).toString();
    // format 2 differs only in how the digest is computed: it is recomputed below, unchecked, once
    const oldDigest = format === '2';
    if (format !== FORMAT && !oldDigest) throw this.damage(`unknown store format "${format}"`);
    const rev = (await meta('rev')) ?? 0;
    this.compactedRev = (await meta('compacted')) ?? 0;
    if (!hw && rev > 0 && !upgraded) throw new StoreDamageError(path.join(this.dir, HIGH_WATER_FILE), 'is missing');
    const slabs = new Slabs();
    await eachEntry(this.db, { gt: 'c:', lt: 'c;' }, (k, v) => {
      const kv = this.current(k.slice(2), v);
      kv.value = slabs.copy(kv.value);
      this.index.set(kv.key, kv);
      this.digest.toggle(kv.key, kv.modRevision);
    });
    const count = (await meta('count')) ?? 0;
    if (count !== this.index.size) throw this.damage(`the store holds ${this.index.size} objects but recorded ${count} at revision ${rev}: records are lost`);
    const digest = (await this.db.get('m:digest')) ?? str(new StateDigest().toString());
    if (oldDigest) await this.db.batch([{ type: 'put', key: 'm:digest', value: str(this.digest.toString()) }, { type: 'put', key: 'm:format', value: str(FORMAT) }], { sync: true });
    else if (Buffer.from(digest).toString() !== this.digest.toString()) throw this.damage(`the current records do not match the digest recorded at revision ${rev}: records are lost or stale`);
    for await (const [k, v] of this.db.iterator({ gt: 'm:gap:', lt: 'm:gap;' })) this.gaps.set(parseInt(k.slice(6), 16), num(v)!);
    // History must hold every revision from the compacted one to the current one, gaps excepted.
    let expect = this.skipGaps(this.compactedRev + 1);
    const opened: StorageEvent[] = [];
    await eachEntry(this.db, { gt: revKey(this.compactedRev), lte: revKey(rev) }, (k, v) => {
      const ev = decodeEvent(v, false);
      if (!ev || k !== revKey(ev.revision)) throw this.damage(`the history record ${k} fails its checksum`);
      if (ev.revision !== expect) throw this.damage(`history lacks revision ${expect}: records are lost`);
      expect = this.skipGaps(expect + 1);
      // The event that wrote a current value holds the same bytes as its current record (checked
      // just above and in the pass before): it shares them, so the history read here is not held
      // twice until the cache takes it (after a burst of creates, that is most of the history).
      const cur = this.tx ? undefined : this.index.get(ev.key);
      if (cur?.modRevision === ev.revision && ev.type !== 'DELETED') ev.value = cur.value;
      opened.push(ev);
    });
    // Values under encryption still need decrypting, and unreadable ones are dropped below: only a
    // plain store hands this pass to the cache's warm-up.
    if (!this.tx) this.openedHistory = opened;
    if (expect !== rev + 1 && rev > this.compactedRev) throw this.damage(`history ends at revision ${expect - 1}, the store at ${rev}: records are lost`);
    await this.dropUnreadableHistory(rev);
    // An acknowledged write that is gone: the end of the log was lost (cut, or a sync that lied).
    const acked = readAcked(this.dir);
    if (!acked && hw?.acked && rev > 0) throw new StoreDamageError(path.join(this.dir, ACK_FILE), 'is missing');
    if (acked && acked.revision > rev) throw this.damage(lostWrites(rev, acked.revision));
    if (hw?.closedAt !== undefined && hw.closedAt !== rev) {
      throw this.damage(`the store ends at revision ${rev} but was stopped at revision ${hw.closedAt}: the last writes are lost`);
    }
    if (hw && rev > hw.reserved) throw new StoreDamageError(path.join(this.dir, HIGH_WATER_FILE), `reserves up to revision ${hw.reserved}, below the store's ${rev}`);
    this.committedRev = this.nextRev = rev;
    if (hw && hw.closedAt === undefined && hw.reserved > rev) {
      // An unclean stop: revisions up to the reservation may have been handed out to writes that
      // never committed. None is handed out again; history records the skipped range.
      await this.db.batch([{ type: 'put', key: 'm:gap:' + revKey(rev).slice(2), value: str(hw.reserved) }, { type: 'put', key: 'm:rev', value: str(hw.reserved) }], { sync: true });
      this.gaps.set(rev, hw.reserved);
      this.committedRev = this.nextRev = hw.reserved;
    }
    this.reserved = this.nextRev + RESERVE_BLOCK;
    // a new store, or one from before ACKED: everything it holds counts as acknowledged
    if (!acked) await writeAcked(this.dir, this.committedRev, this.sync);
    await writeHighWater(this.dir, { reserved: this.reserved }, this.sync);
  }

  /**
   * History written with an encryption key that was rotated out of the configuration can no longer be
   * read. It only serves watch resumes, so it is compacted away (those resumes get 410 and relist);
   * current values, by contrast, must all be readable or the store does not open.
   */
  private async dropUnreadableHistory(rev: number): Promise<void> {
    if (!this.tx) return;
    let unreadable = 0;
    for await (const [, v] of this.db.iterator({ gt: revKey(this.compactedRev), lte: revKey(rev), ...BULK })) {
      const ev = decodeEvent(v, false)!;
      try { this.tx.fromStorage(ev.key, ev.value); } catch { unreadable = ev.revision; }
    }
    if (!unreadable) return;
    this.committedRev = rev;
    await this.compact(unreadable);
    this.warn(`history up to revision ${unreadable} was written with an encryption key no longer configured: compacted (watches resumed from before it relist)`);
  }

  /** The first revision at or after rev that is not inside a gap. */
  private skipGaps(rev: number): number {
    for (let moved = true; moved;) {
      moved = false;
      for (const [from, to] of this.gaps) if (from < rev && rev <= to) { rev = to + 1; moved = true; }
    }
    return rev;
  }

  /** A store written before checksums (no m:format): every record rewritten with its checksum. */
  private async upgrade(): Promise<void> {
    const ops: { type: 'put'; key: string; value: Uint8Array }[] = [];
    const digest = new StateDigest();
    let count = 0;
    for await (const [k, v] of this.db.iterator({ gt: 'c:', lt: 'c;', ...BULK })) {
      const r = decodeCurrent(k.slice(2), v, true)!;
      ops.push({ type: 'put', key: k, value: encodeCurrent(k.slice(2), r.modRevision, r.createRevision, r.stored) });
      digest.toggle(k.slice(2), r.modRevision);
      count++;
    }
    for await (const [k, v] of this.db.iterator({ gt: 'h:', lt: 'h;', ...BULK })) {
      const ev = decodeEvent(v, true);
      if (ev) ops.push({ type: 'put', key: k, value: encodeEvent(ev, ev.value) });
    }
    ops.push({ type: 'put', key: 'm:count', value: str(count) }, { type: 'put', key: 'm:digest', value: str(digest.toString()) }, { type: 'put', key: 'm:format', value: str(FORMAT) });
    await this.db.batch(ops, { sync: true });
  }

  async close(): Promise<void> {
    while (this.flushing || this.queue.length) await new Promise((r) => setTimeout(r, 1));
    await this.delivered;
    if (!this.opened) return;
    this.opened = false;
    await this.ack?.close();
    // A clean stop records where the store ends, so that losing its last writes is noticed at open.
    if (!this.failed) await writeHighWater(this.dir, { reserved: this.reserved, closedAt: this.committedRev }, this.sync);
    await this.db.close();
  }

  ready(): boolean { return this.opened && !this.failed; }
  currentRevision(): number { return this.committedRev; }
  compactedRevision(): number { return this.compactedRev; }

  async get(key: string): Promise<KV | undefined> {
    const v = await this.db.get('c:' + key);
    return v ? this.current(key, v) : undefined;
  }

  async range(prefix: string, opts: { startKey?: string; limit?: number } = {}): Promise<KV[]> {
    const out: KV[] = [];
    const gte = 'c:' + (opts.startKey && opts.startKey > prefix ? opts.startKey : prefix);
    for await (const [k, v] of this.db.iterator({ gte, lt: prefixEnd('c:' + prefix), limit: opts.limit ?? -1, ...BULK })) {
      out.push(this.current(k.slice(2), v));
    }
    return out;
  }

  async *all(): AsyncIterable<KV> {
    // The index holds every current value, read and verified at open: no second pass over the disk,
    // and the cache shares these bytes rather than holding a copy of its own.
    const snapshot = [...this.index.values()];
    for (const kv of snapshot) yield kv;
  }

  write(op: WriteOp): Promise<WriteResult> {
    if (this.failed) return Promise.reject(this.failed);
    if (!this.opened) return Promise.reject(new StatusError(503, 'ServiceUnavailable', 'storage is not open'));
    const cur = this.index.get(op.key);
    if (op.type === 'create') {
      if (cur) return Promise.resolve({ ok: false, reason: 'exists', current: cur });
    } else {
      if (!cur) return Promise.resolve({ ok: false, reason: 'not-found' });
      if (op.expectRevision && cur.modRevision !== op.expectRevision) return Promise.resolve({ ok: false, reason: 'conflict', current: cur });
    }
    const rev = this.nextRev + 1;
    // The revision is taken only once the value (and its stored form) exists: a callback or
    // transformer that throws must fail this write alone and leave no hole in the revision sequence.
    let value: Uint8Array;
    let stored: Uint8Array;
    try {
      value = op.type === 'delete' ? cur!.value : ownBuffer(op.value(rev));
      stored = this.tx ? this.tx.toStorage(op.key, value) : value;
    } catch (err) {
      return Promise.reject(err);
    }
    this.nextRev = rev;
    let event: StorageEvent;
    const ops: Pending['ops'] = [];
    if (cur) this.digest.toggle(op.key, cur.modRevision);
    if (op.type === 'delete') {
      this.index.delete(op.key);
      event = { type: 'DELETED', key: op.key, revision: rev, value, createRevision: cur!.createRevision, prevRevision: cur!.modRevision };
      ops.push({ type: 'del', key: 'c:' + op.key });
    } else {
      const kv: KV = { key: op.key, value, modRevision: rev, createRevision: cur ? cur.createRevision : rev };
      this.index.set(op.key, kv);
      this.digest.toggle(op.key, rev);
      event = { type: cur ? 'MODIFIED' : 'ADDED', key: op.key, revision: rev, value, createRevision: kv.createRevision, prevRevision: cur ? cur.modRevision : 0 };
      ops.push({ type: 'put', key: 'c:' + op.key, value: encodeCurrent(op.key, rev, kv.createRevision, stored) });
    }
    ops.push({ type: 'put', key: revKey(rev), value: encodeEvent(event, stored) });
    return new Promise((resolve, reject) => {
      this.queue.push({ ops, event, count: this.index.size, digest: this.digest.toString(), resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length) {
        const batch = this.groupCommit ? this.queue.splice(0) : this.queue.splice(0, 1);
        const ops: { type: 'put' | 'del'; key: string; value?: Uint8Array }[] = [];
        for (const p of batch) for (const o of p.ops) ops.push(o);
        const tail = batch[batch.length - 1];
        const last = tail.event.revision;
        ops.push({ type: 'put', key: 'm:rev', value: str(last) }, { type: 'put', key: 'm:count', value: str(tail.count) }, { type: 'put', key: 'm:digest', value: str(tail.digest) });
        try {
          // A revision becomes durable only below a durable reservation, so none is handed out twice
          // even if the log loses its tail.
          if (last > this.reserved) {
            await writeHighWater(this.dir, { reserved: last + RESERVE_BLOCK }, this.sync);
            this.reserved = last + RESERVE_BLOCK;
          }
          // A chained batch: the array form clones and re-checks every operation in JavaScript
          // (measured: about a quarter of the batch's main-thread cost at ten creates a batch).
          const b = this.db.batch();
          for (const o of ops) {
            if (o.type === 'put') b.put(o.key, o.value as never);
            else b.del(o.key);
          }
          await b.write({ sync: this.sync } as never);
        } catch (err) {
          this.fail(err, batch.concat(this.queue.splice(0)));
          return;
        }
        // Answered (and shown to watchers) only once ACKED holds the revision, so that losing this
        // batch from the log is noticed at the next start; meanwhile the next batch is written.
        const marked = this.ack!.advance(last);
        const before = this.delivered;
        this.delivered = (async () => {
          let markErr: unknown;
          await marked.catch((e) => { markErr = e; });
          await before;
          if (markErr) return this.fail(markErr, batch);
          this.committedRev = last;
          const events = batch.map((p) => p.event);
          try { this.listener(events, last); } catch { /* the cache must not break the log */ }
          for (const p of batch) {
            const e = p.event;
            p.resolve({ ok: true, revision: e.revision, value: e.type === 'DELETED' ? undefined : e.value, createRevision: e.createRevision });
          }
        })();
      }
    } finally {
      this.flushing = false;
    }
  }

  /**
   * The in-memory index already reflects these writes; after a failed sync it cannot be trusted, so
   * the log refuses all further writes (the process should restart).
   */
  private fail(err: unknown, writes: Pending[]): void {
    this.failed ??= new StatusError(500, 'InternalError', `storage write failed: ${(err as Error).message}`);
    for (const p of writes) p.reject(this.failed);
  }

  async *history(after: number, prefix = ''): AsyncIterable<StorageEvent> {
    if (after < this.compactedRev) throw new StatusError(410, 'Expired', `too old resource version: ${after} (${this.compactedRev})`);
    // The first read after open (the cache's warm-up) takes the records open() already read and
    // verified instead of reading the whole history from disk a second time.
    const opened = this.openedHistory;
    this.openedHistory = undefined;
    if (opened?.length) {
      for (const ev of opened) if (ev.revision > after && (!prefix || ev.key.startsWith(prefix))) yield ev;
      after = Math.max(after, opened[opened.length - 1].revision);
    }
    for await (const [, v] of this.db.iterator({ gt: revKey(after), lte: revKey(this.committedRev), ...BULK })) {
      const ev = this.event(v);
      if (!prefix || ev.key.startsWith(prefix)) yield ev;
    }
  }

  onCommit(listener: (events: StorageEvent[], revision: number) => void): void { this.listener = listener; }

  async compact(revision: number): Promise<void> {
    revision = Math.min(revision, this.committedRev);
    if (revision <= this.compactedRev) return;
    // Mark first, then drop: a reader or a crash between the two must never find history that is
    // silently partial (a history(after) call below the mark fails with 410 instead).
    this.compactedRev = revision;
    await this.db.put('m:compacted', str(revision));
    await this.db.clear({ gt: 'h:', lte: revKey(revision) });
    for (const [from, to] of this.gaps) {
      if (to <= revision) {
        this.gaps.delete(from);
        await this.db.del('m:gap:' + revKey(from).slice(2));
      }
    }
  }

}
