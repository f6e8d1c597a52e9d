// The etcd3 storage backend: the StorageBackend contract on an etcd v3 cluster.
//
// Keys: <prefix><kernel key>, e.g. /registry/core/pods/default/web-0 (--etcd-prefix, default
// /registry). Values: the object's JSON with its revision cut out (value.ts). resourceVersion is
// etcd's revision: every write is one transaction whose compare is the caller's precondition
// (create_revision = 0 for a create, mod_revision = expected for an update or delete), so optimistic
// concurrency is decided by etcd, across every replica that shares the cluster.
//
// One watch per process feeds the kernel's cache (and through it the watch fan-out): it covers the
// whole etcd keyspace, not only the prefix, so that every etcd revision arrives as an event and the
// cache's revision follows etcd's exactly — a consistent read (a quorum read of the current revision,
// then a wait until the watch has delivered it) always completes, on any etcd version, without
// relying on requested progress notifications (whose ordering with events etcd before 3.4.25/3.5.8
// does not guarantee). Events outside the prefix only move the revision. A write resolves once its
// own event has come back through that watch, so after a write returns, this process's cache has it.
import type { ClientDuplexStream } from '@grpc/grpc-js';
import type { KV, StorageBackend, StorageEvent, ValueTransformer, WriteOp, WriteResult } from '../../../kernel/contracts/index.js';
import { StatusError, errors } from '../../../kernel/contracts/status.js';
import { EtcdClient, storageError, type ClientOptions } from './client.js';
import { CompareResult, CompareTarget, EventType, num, rpc, type Compare, type KeyValue, type RequestOp, type WatchEvent, type WatchRequest, type WatchResponse } from './proto.js';
import { encodeTemplate, stamp } from '../../../kernel/replicas/template.js';

export interface EtcdOptions extends ClientOptions {
  /** Key prefix of every object (--etcd-prefix). */
  prefix: string;
  /** Encryption at rest (--encryption-provider-config): applied to the template, under the kernel key. */
  transformer?: ValueTransformer;
}

/** The least key above every key that starts with `b` (etcd's prefix range end). */
export function prefixEnd(b: Buffer): Buffer {
  const out = Buffer.from(b);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] < 0xff) { out[i]++; return out.subarray(0, i + 1); }
  }
  return Buffer.from([0]); // all keys
}

const ALL = Buffer.from([0]);
const PAGE = 1000;

export const expired = (after: number, compacted: number) => errors.gone(`too old resource version: ${after} (${compacted})`);

export class EtcdBackend implements StorageBackend {
  readonly health = { name: 'etcd', live: false };
  private client: EtcdClient;
  /** The prefix as given, without a trailing slash; kernel keys start with "/". */
  private readonly base: string;
  private readonly baseBytes: Buffer;
  /** The range of this server's keys: [start, end). */
  private readonly start: Buffer;
  private readonly end: Buffer;
  /** Highest revision whose events have all been handed to the listener. */
  private delivered = 0;
  private compacted = 0;
  private listener: (events: StorageEvent[], revision: number) => void = () => {};
  private waiters: { rev: number; resolve: () => void }[] = [];
  private inflight = new Set<Promise<unknown>>();
  private opened = false;
  private closed = false;
  private watch: ClientDuplexStream<WatchRequest, WatchResponse> | undefined;
  private watchUp = false;
  private watchRetry: NodeJS.Timeout | undefined;
  private watchBackoff = 100;
  private reachable = true;
  private probe: NodeJS.Timeout | undefined;
  /** Set when the watch could not resume (its revision was compacted away): this process's cache can no longer follow etcd. */
  private lost: string | undefined;

  constructor(readonly opts: EtcdOptions, private log: (msg: string, fields?: Record<string, unknown>) => void = () => {}) {
    this.client = new EtcdClient(opts);
    this.base = opts.prefix.replace(/\/+$/, '');
    this.baseBytes = Buffer.from(this.base);
    this.start = Buffer.from(this.base + '/');
    this.end = prefixEnd(this.start);
  }

  private key(k: string): Buffer { return Buffer.from(this.base + k); }
  private mine(k: Buffer): boolean { return k.length >= this.start.length && this.start.equals(k.subarray(0, this.start.length)); }

  /** A stored value as readers get it: decrypted (with a transformer), the revision written in. */
  private read(key: string, stored: Buffer, revision: number): Buffer {
    const tx = this.opts.transformer;
    if (!tx) return stamp(stored, revision);
    const plain = tx.fromStorage(key, stored);
    return stamp(Buffer.from(plain.buffer, plain.byteOffset, plain.byteLength), revision);
  }

  private toKV(kv: KeyValue): KV {
    const modRevision = num(kv.mod_revision);
    const key = kv.key.toString('utf8', this.baseBytes.length);
    return { key, value: this.read(key, kv.value, modRevision), modRevision, createRevision: num(kv.create_revision) };
  }

  private toEvent(e: WatchEvent): StorageEvent | undefined {
    if (!this.mine(e.kv.key)) return undefined;
    const key = e.kv.key.toString('utf8', this.baseBytes.length);
    const revision = num(e.kv.mod_revision);
    if (e.type === EventType.DELETE) {
      const prev = e.prev_kv;
      const prevRevision = prev ? num(prev.mod_revision) : 0;
      return { type: 'DELETED', key, revision, value: prev ? this.read(key, prev.value, prevRevision) : Buffer.alloc(0), createRevision: prev ? num(prev.create_revision) : 0, prevRevision };
    }
    const created = num(e.kv.version) === 1;
    return {
      type: created ? 'ADDED' : 'MODIFIED', key, revision, value: this.read(key, e.kv.value, revision),
      createRevision: num(e.kv.create_revision), prevRevision: created || !e.prev_kv ? 0 : num(e.prev_kv.mod_revision),
    };
  }

  async open(): Promise<void> {
    const rev = await this.latestRevision();
    this.delivered = rev;
    this.compacted = await this.findCompacted(rev);
    this.opened = true;
    this.startWatch();
    // Readiness follows a quorum read every second (and the watch stream's state).
    this.probe = setInterval(() => {
      this.client.call(rpc.range, { key: this.start, count_only: true }, true, 2000).then(() => { this.reachable = true; }, () => { this.reachable = false; });
    }, 1000);
    this.probe.unref();
  }

  async close(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
    this.opened = false;
    this.closed = true;
    clearInterval(this.probe);
    clearTimeout(this.watchRetry);
    this.watch?.cancel();
    this.watch = undefined;
    for (const w of this.waiters.splice(0)) w.resolve();
    this.client.close();
  }

  ready(): boolean { return this.opened && this.reachable && this.watchUp && !this.lost; }
  currentRevision(): number { return this.delivered; }
  compactedRevision(): number { return this.compacted; }

  /**
   * A quorum read of etcd's current revision: what a consistent read must wait for. Concurrent
   * readers share one: a reader that arrives while one is in flight (it may have been sent before
   * the reader began) waits for the next, which all readers arriving meanwhile share — one etcd
   * round trip per batch of reads, as etcd batches its own ReadIndex requests.
   */
  latestRevision(): Promise<number> {
    if (!this.revRound) {
      this.revRound = this.client.call(rpc.range, { key: this.start, count_only: true }, true).then((r) => num(r.header.revision));
      const clear = () => { this.revRound = undefined; };
      this.revRound.then(clear, clear);
      return this.revRound;
    }
    this.revNext ??= this.revRound.then(() => undefined, () => undefined).then(() => {
      this.revNext = undefined;
      return this.latestRevision();
    });
    return this.revNext;
  }
  private revRound: Promise<number> | undefined;
  private revNext: Promise<number> | undefined;

  /** etcd does not report its compacted revision: find the oldest readable revision (binary search of historical reads). */
  private async findCompacted(current: number): Promise<number> {
    let lo = 1;
    let hi = Math.max(1, current);
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      try {
        await this.client.call(rpc.range, { key: this.start, count_only: true, revision: mid }, true);
        hi = mid;
      } catch (e) {
        if (!/compacted/.test((e as Error).message)) throw e;
        lo = mid + 1;
      }
    }
    return lo - 1; // history at or below this is gone
  }

  async get(key: string): Promise<KV | undefined> {
    const r = await this.client.call(rpc.range, { key: this.key(key) }, true);
    return r.kvs.length ? this.toKV(r.kvs[0]) : undefined;
  }

  async range(prefix: string, opts: { startKey?: string; limit?: number } = {}): Promise<KV[]> {
    let lo: Buffer = Buffer.from(this.base + prefix);
    if (Buffer.compare(lo, this.start) < 0) lo = this.start;
    const hi = prefix ? prefixEnd(Buffer.from(this.base + prefix)) : this.end;
    if (opts.startKey !== undefined) {
      const s = this.key(opts.startKey);
      if (Buffer.compare(s, lo) > 0) lo = s;
    }
    if (Buffer.compare(lo, hi) >= 0) return [];
    const r = await this.client.call(rpc.range, { key: lo, range_end: hi, limit: opts.limit ?? 0 }, true);
    return r.kvs.map((kv) => this.toKV(kv));
  }

  /** Every current value at the revision of the call (paged reads at that one revision). */
  async *all(): AsyncIterable<KV> {
    const revision = this.delivered;
    let from = this.start;
    for (;;) {
      const r = await this.client.call(rpc.range, { key: from, range_end: this.end, limit: PAGE, revision }, true);
      for (const kv of r.kvs) yield this.toKV(kv);
      if (!r.more || !r.kvs.length) return;
      from = Buffer.concat([r.kvs[r.kvs.length - 1].key, ALL]);
    }
  }

  write(op: WriteOp): Promise<WriteResult> {
    const p = this.commit(op);
    this.inflight.add(p);
    const done = () => this.inflight.delete(p);
    p.then(done, done);
    return p;
  }

  private async commit(op: WriteOp): Promise<WriteResult> {
    if (!this.opened) throw new StatusError(503, 'ServiceUnavailable', 'storage is not open');
    if (this.lost) throw new StatusError(503, 'ServiceUnavailable', this.lost);
    const key = this.key(op.key);
    const stored = op.type === 'delete' ? undefined : encodeTemplate(op.value);
    const wire = stored && this.opts.transformer ? this.opts.transformer.toStorage(op.key, stored) : stored;
    const compare: Compare = op.type === 'create' ? { result: CompareResult.EQUAL, target: CompareTarget.CREATE, key, create_revision: 0 }
      : op.expectRevision ? { result: CompareResult.EQUAL, target: CompareTarget.MOD, key, mod_revision: op.expectRevision }
      : { result: CompareResult.GREATER, target: CompareTarget.CREATE, key, create_revision: 0 };
    // An update or delete reads the key's create_revision (metadata only) in the same transaction.
    const meta: RequestOp = { request_range: { key, keys_only: true } };
    const success: RequestOp[] = op.type === 'create' ? [{ request_put: { key, value: wire! } }]
      : op.type === 'update' ? [meta, { request_put: { key, value: wire! } }]
      : [meta, { request_delete_range: { key } }];
    const res = await this.client.call(rpc.txn, { compare: [compare], success, failure: [{ request_range: { key } }] }, false);
    if (!res.succeeded) {
      const kv = res.responses[0]?.response_range?.kvs[0];
      if (op.type === 'create') return { ok: false, reason: 'exists', current: kv && this.toKV(kv) };
      return kv ? { ok: false, reason: 'conflict', current: this.toKV(kv) } : { ok: false, reason: 'not-found' };
    }
    const revision = num(res.header.revision);
    const createRevision = op.type === 'create' ? revision : num(res.responses[0].response_range!.kvs[0].create_revision);
    await this.until(revision);
    return { ok: true, revision, value: stored && stamp(stored, revision), createRevision };
  }

  /** Resolves once the watch has delivered `rev` (the write is durable in etcd already; after the request timeout it resolves anyway). */
  private until(rev: number): Promise<void> {
    if (rev <= this.delivered || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        this.log('write acknowledged before its watch event arrived', { revision: rev, delivered: this.delivered });
        resolve();
      }, this.client.timeoutMs);
      const waiter = { rev, resolve: () => { clearTimeout(t); resolve(); } };
      this.waiters.push(waiter);
    });
  }

  // ------------------------------------------------------------------ the watch

  private startWatch(): void {
    if (this.closed) return;
    const { stream, channel } = this.client.watchStream(rpc.watch);
    this.watch = stream;
    const broken = (e?: Error) => {
      if (this.watch !== stream) return;
      this.watch = undefined;
      this.watchUp = false;
      if (this.closed) return;
      this.client.rotate(channel);
      if (this.watchBackoff === 100) this.log('etcd watch interrupted; resuming', { revision: this.delivered + 1, error: e ? String(e.message) : 'stream ended' });
      this.watchRetry = setTimeout(() => this.startWatch(), this.watchBackoff);
      this.watchBackoff = Math.min(this.watchBackoff * 2, 2000);
    };
    stream.on('data', (r: WatchResponse) => { if (this.watch === stream) this.onWatch(r, stream); });
    stream.on('error', broken);
    stream.on('end', () => broken());
    stream.write({ create_request: { key: ALL, range_end: ALL, start_revision: this.delivered + 1, prev_kv: true, progress_notify: true } });
  }

  private onWatch(r: WatchResponse, stream: ClientDuplexStream<WatchRequest, WatchResponse>): void {
    if (r.created) { this.watchUp = true; this.watchBackoff = 100; }
    const compactedAt = num(r.compact_revision);
    if (compactedAt) {
      // Events this process never saw are gone: its cache cannot be brought up to date from here.
      this.lost = `etcd compacted revision ${compactedAt} before this server's watch could resume from ${this.delivered + 1}; restart this server`;
      this.log(this.lost);
      this.watchUp = false;
      stream.cancel();
      return;
    }
    if (r.canceled) { stream.cancel(); return; }
    const events: StorageEvent[] = [];
    let last = this.delivered;
    for (const e of r.events) {
      const rev = num(e.kv.mod_revision);
      if (rev <= this.delivered) continue;
      last = rev;
      try {
        const ev = this.toEvent(e);
        if (ev) events.push(ev);
      } catch (err) {
        this.log('etcd watch: an event cannot be read (encryption key no longer configured?); it is left out', { key: e.kv.key.toString(), revision: rev, error: String(err) });
      }
    }
    // A progress notification (no events, on an established watch) says every revision up to the
    // header's has been sent; a "created" header may run ahead of a watch still catching up.
    if (!r.events.length && !r.created && num(r.watch_id) >= 0) last = Math.max(last, num(r.header?.revision));
    if (last <= this.delivered) return;
    this.delivered = last;
    try { this.listener(events, last); } catch (e) { this.log('storage listener failed', { error: String(e) }); }
    if (this.waiters.length) {
      const still: typeof this.waiters = [];
      for (const w of this.waiters) (w.rev <= last ? w.resolve() : still.push(w));
      this.waiters = still;
    }
  }

  onCommit(listener: (events: StorageEvent[], revision: number) => void): void { this.listener = listener; }

  /**
   * History after `after`, read with a watch of its own from after+1. It covers the whole keyspace
   * for the same reason as the main watch: the event at the current revision ends the read.
   */
  async *history(after: number, prefix = ''): AsyncIterable<StorageEvent> {
    if (after < this.compacted) throw expired(after, this.compacted);
    const target = this.delivered;
    // etcd starts at revision 1 with no event: the first write is revision 2
    if (after >= target || target <= 1) return;
    const { stream } = this.client.watchStream(rpc.watch);
    const queue: WatchResponse[] = [];
    let failure: unknown;
    let wake: (() => void) | undefined;
    stream.on('data', (r: WatchResponse) => { queue.push(r); wake?.(); });
    stream.on('error', (e: Error) => { failure = e; wake?.(); });
    stream.on('end', () => { failure ??= new Error('watch stream ended'); wake?.(); });
    stream.write({ create_request: { key: ALL, range_end: ALL, start_revision: after + 1, prev_kv: true } });
    try {
      for (;;) {
        while (!queue.length) {
          if (failure) throw storageError(failure);
          // a member that stops answering must not hang the reader
          const quiet = setTimeout(() => { failure ??= Object.assign(new Error('no history from etcd'), { code: 4 }); wake?.(); }, this.client.timeoutMs);
          await new Promise<void>((r) => { wake = r; });
          clearTimeout(quiet);
          wake = undefined;
        }
        const r = queue.shift()!;
        const compactedAt = num(r.compact_revision);
        if (compactedAt) {
          this.compacted = Math.max(this.compacted, compactedAt - 1);
          throw expired(after, this.compacted);
        }
        if (r.canceled) throw storageError(new Error(`watch canceled: ${r.cancel_reason}`));
        let last = 0;
        for (const e of r.events) {
          last = num(e.kv.mod_revision);
          if (last > target) return;
          const ev = this.toEvent(e);
          if (ev && ev.key.startsWith(prefix)) yield ev;
        }
        if (last >= target) return;
      }
    } finally {
      stream.cancel();
    }
  }

  /** Compacts etcd so that history at or below `revision` is gone (etcd keeps the revision it is given, so it gets revision + 1). */
  async compact(revision: number): Promise<void> {
    const current = this.delivered;
    revision = Math.min(revision, current);
    if (revision <= this.compacted) return;
    const at = revision < current ? revision + 1 : revision;
    try {
      await this.client.call(rpc.compact, { revision: at }, true);
    } catch (e) {
      if (!/compacted/.test((e as Error).message)) throw e;
      // another server compacted further
      this.compacted = Math.max(this.compacted, await this.findCompacted(this.delivered));
      return;
    }
    this.compacted = Math.max(this.compacted, at - 1);
  }
}
