// The embedded storage log: a revisioned key-value log on classic-level (LevelDB).
//
// Layout (one LevelDB, utf8 keys):
//   c:<key>          current value      [modRev f64][createRev f64][value bytes]
//   h:<rev hex16>    history event      [type u8][rev f64][createRev f64][prevRev f64][keyLen u16][key][value]
//   m:rev            latest committed revision (same batch as the write, so it is never behind)
//   m:compacted      revision at or below which history was dropped
//
// Writes are checked against an in-memory index (which includes writes still waiting for their
// sync), assigned the next revision, and queued. One flush at a time writes every queued write in a
// single synced batch (group commit): concurrent writers share one fsync. A write's promise
// resolves, and its event reaches onCommit, only after that batch is durable.
import { ClassicLevel } from 'classic-level';
import type { KV, StorageBackend, StorageEvent, WriteOp, WriteResult } from '../contracts.js';
import { StatusError } from '../status.js';

const TYPE_CODE = { ADDED: 1, MODIFIED: 2, DELETED: 3 } as const;
const TYPE_NAME = ['', 'ADDED', 'MODIFIED', 'DELETED'] as const;

const revKey = (rev: number) => 'h:' + rev.toString(16).padStart(16, '0');

/**
 * The least string above every string that starts with s, in the store's (UTF-8 byte) key order:
 * s with its last code point raised by one (a last U+10FFFF is dropped and the one before raised).
 * Appending '\uffff' is not such a bound: characters outside the BMP encode above it.
 */
function prefixEnd(s: string): string {
  const cps = Array.from(s);
  while (cps.length) {
    const cp = cps.pop()!.codePointAt(0)!;
    if (cp < 0x10ffff) return cps.join('') + String.fromCodePoint(cp === 0xd7ff ? 0xe000 : cp + 1);
  }
  return '\u{10ffff}';
}

function encodeCurrent(kv: KV): Uint8Array {
  const out = new Uint8Array(16 + kv.value.length);
  const dv = new DataView(out.buffer);
  dv.setFloat64(0, kv.modRevision);
  dv.setFloat64(8, kv.createRevision);
  out.set(kv.value, 16);
  return out;
}

function decodeCurrent(key: string, buf: Uint8Array): KV {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  return { key, modRevision: dv.getFloat64(0), createRevision: dv.getFloat64(8), value: buf.subarray(16) };
}

function encodeEvent(ev: StorageEvent): Uint8Array {
  const key = Buffer.from(ev.key, 'utf8');
  const out = new Uint8Array(27 + key.length + ev.value.length);
  const dv = new DataView(out.buffer);
  dv.setUint8(0, TYPE_CODE[ev.type]);
  dv.setFloat64(1, ev.revision);
  dv.setFloat64(9, ev.createRevision);
  dv.setFloat64(17, ev.prevRevision);
  dv.setUint16(25, key.length);
  out.set(key, 27);
  out.set(ev.value, 27 + key.length);
  return out;
}

function decodeEvent(buf: Uint8Array): StorageEvent {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const keyLen = dv.getUint16(25);
  return {
    type: TYPE_NAME[dv.getUint8(0)] as StorageEvent['type'],
    revision: dv.getFloat64(1),
    createRevision: dv.getFloat64(9),
    prevRevision: dv.getFloat64(17),
    key: Buffer.from(buf.buffer, buf.byteOffset + 27, keyLen).toString('utf8'),
    value: buf.subarray(27 + keyLen),
  };
}

interface Pending {
  ops: { type: 'put' | 'del'; key: string; value?: Uint8Array }[];
  event: StorageEvent;
  resolve: (r: WriteResult) => void;
  reject: (e: Error) => void;
}

export interface LogOptions {
  /** One synced batch for all writes queued while the previous sync ran (default true). */
  groupCommit?: boolean;
  /** fsync every batch (default true). Only benchmarks turn this off. */
  sync?: boolean;
}

export class StorageLog implements StorageBackend {
  private db: ClassicLevel<string, Uint8Array>;
  /** Current state including queued writes: conflict checks must see writes not yet synced. */
  private index = new Map<string, KV>();
  private queue: Pending[] = [];
  private flushing = false;
  private nextRev = 0;
  private committedRev = 0;
  private compactedRev = 0;
  private listener: (events: StorageEvent[]) => void = () => {};
  private opened = false;
  private failed: Error | undefined;
  private readonly groupCommit: boolean;
  private readonly sync: boolean;

  constructor(readonly dir: string, opts: LogOptions = {}) {
    this.db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    this.groupCommit = opts.groupCommit ?? true;
    this.sync = opts.sync ?? true;
  }

  async open(): Promise<void> {
    await this.db.open();
    const rev = await this.db.get('m:rev');
    const compacted = await this.db.get('m:compacted');
    this.committedRev = this.nextRev = rev ? Number(Buffer.from(rev).toString()) : 0;
    this.compactedRev = compacted ? Number(Buffer.from(compacted).toString()) : 0;
    for await (const [k, v] of this.db.iterator({ gt: 'c:', lt: 'c;' })) {
      const key = k.slice(2);
      this.index.set(key, decodeCurrent(key, v));
    }
    this.opened = true;
  }

  async close(): Promise<void> {
    while (this.flushing || this.queue.length) await new Promise((r) => setTimeout(r, 1));
    this.opened = false;
    await this.db.close();
  }

  ready(): boolean { return this.opened && !this.failed; }
  currentRevision(): number { return this.committedRev; }
  compactedRevision(): number { return this.compactedRev; }

  async get(key: string): Promise<KV | undefined> {
    const v = await this.db.get('c:' + key);
    return v ? decodeCurrent(key, v) : undefined;
  }

  async range(prefix: string, opts: { startKey?: string; limit?: number } = {}): Promise<KV[]> {
    const out: KV[] = [];
    const gte = 'c:' + (opts.startKey && opts.startKey > prefix ? opts.startKey : prefix);
    for await (const [k, v] of this.db.iterator({ gte, lt: prefixEnd('c:' + prefix), limit: opts.limit ?? -1 })) {
      out.push(decodeCurrent(k.slice(2), v));
    }
    return out;
  }

  async *all(): AsyncIterable<KV> {
    for await (const [k, v] of this.db.iterator({ gt: 'c:', lt: 'c;' })) yield decodeCurrent(k.slice(2), v);
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
    let event: StorageEvent;
    const ops: Pending['ops'] = [];
    if (op.type === 'delete') {
      this.nextRev = rev;
      this.index.delete(op.key);
      event = { type: 'DELETED', key: op.key, revision: rev, value: cur!.value, createRevision: cur!.createRevision, prevRevision: cur!.modRevision };
      ops.push({ type: 'del', key: 'c:' + op.key });
    } else {
      // The revision is taken only once the value exists: a callback that throws must fail this
      // write alone (as a rejected promise) and leave no hole in the revision sequence.
      let value: Uint8Array;
      try {
        value = op.value(rev);
      } catch (err) {
        return Promise.reject(err);
      }
      this.nextRev = rev;
      const kv: KV = { key: op.key, value, modRevision: rev, createRevision: cur ? cur.createRevision : rev };
      this.index.set(op.key, kv);
      event = { type: cur ? 'MODIFIED' : 'ADDED', key: op.key, revision: rev, value, createRevision: kv.createRevision, prevRevision: cur ? cur.modRevision : 0 };
      ops.push({ type: 'put', key: 'c:' + op.key, value: encodeCurrent(kv) });
    }
    ops.push({ type: 'put', key: revKey(rev), value: encodeEvent(event) });
    return new Promise((resolve, reject) => {
      this.queue.push({ ops, event, resolve, reject });
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
        const last = batch[batch.length - 1].event.revision;
        ops.push({ type: 'put', key: 'm:rev', value: Buffer.from(String(last)) });
        try {
          await this.db.batch(ops as never, { sync: this.sync });
        } catch (err) {
          // The in-memory index already reflects these writes; after a failed sync it cannot be
          // trusted, so the log refuses all further writes (the process should restart).
          this.failed = new StatusError(500, 'InternalError', `storage write failed: ${(err as Error).message}`);
          for (const p of batch.concat(this.queue.splice(0))) p.reject(this.failed);
          return;
        }
        this.committedRev = last;
        const events = batch.map((p) => p.event);
        try { this.listener(events); } catch { /* the cache must not break the log */ }
        for (const p of batch) {
          const e = p.event;
          p.resolve({ ok: true, revision: e.revision, value: e.type === 'DELETED' ? undefined : e.value, createRevision: e.createRevision });
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  async *history(after: number, prefix = ''): AsyncIterable<StorageEvent> {
    if (after < this.compactedRev) throw new StatusError(410, 'Expired', `too old resource version: ${after} (${this.compactedRev})`);
    for await (const [, v] of this.db.iterator({ gt: revKey(after), lte: revKey(this.committedRev) })) {
      const ev = decodeEvent(v);
      if (!prefix || ev.key.startsWith(prefix)) yield ev;
    }
  }

  onCommit(listener: (events: StorageEvent[]) => void): void { this.listener = listener; }

  async compact(revision: number): Promise<void> {
    revision = Math.min(revision, this.committedRev);
    if (revision <= this.compactedRev) return;
    // Mark first, then drop: a reader or a crash between the two must never find history that is
    // silently partial (a history(after) call below the mark fails with 410 instead).
    this.compactedRev = revision;
    await this.db.put('m:compacted', Buffer.from(String(revision)));
    await this.db.clear({ gt: 'h:', lte: revKey(revision) });
  }
}
