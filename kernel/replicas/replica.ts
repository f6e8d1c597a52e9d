// The storage a read loop sees (--read-loops, docs/ARCHITECTURE.md "More than one core"): a replica
// of the writer loop's store over a MessagePort. The writer keeps the one storage backend, its write
// queue and its revision order; every loop keeps a cache of its own, fed with the writer's committed
// batches in commit order, exactly as a server replica on etcd is fed by its watch. Writes, point
// reads and ranges of the store go to the writer; a consistent read waits until the loop's cache has
// reached the revision the writer had committed when the read began (a shared counter, no message).
import type { MessagePort } from 'node:worker_threads';
import type { KV, StorageBackend, StorageEvent, WriteOp, WriteResult } from '../contracts/index.js';
import { StatusError } from '../contracts/status.js';
import { encodeTemplate, stamp } from './template.js';

/** Slots of the shared revision counters the writer keeps. */
const COMMITTED = 0;
const COMPACTED = 1;
/** KVs per snapshot or history message: bounded messages, so neither loop holds its event loop long. */
const CHUNK = 2000;

/**
 * Values travel packed in one fresh buffer per message: a view into a larger buffer (the log's slabs)
 * would be cloned whole. A committed batch goes to every loop in one SharedArrayBuffer, copied once.
 */
interface Packed { buf: ArrayBuffer | SharedArrayBuffer; ends: number[] }
function pack(values: Uint8Array[], shared = false): Packed {
  let n = 0;
  for (const v of values) n += v.byteLength;
  const out = new Uint8Array(shared ? new SharedArrayBuffer(n) : new ArrayBuffer(n));
  const ends: number[] = [];
  let at = 0;
  for (const v of values) { out.set(v, at); at += v.byteLength; ends.push(at); }
  return { buf: out.buffer, ends };
}
function unpack(p: Packed): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  for (const end of p.ends) { out.push(Buffer.from(p.buf, at, end - at)); at = end; }
  return out;
}

type WireKV = Omit<KV, 'value'>;
type WireEvent = Omit<StorageEvent, 'value'>;
type WireWrite =
  | { type: 'create'; key: string; template: Uint8Array }
  | { type: 'update'; key: string; expectRevision: number; template: Uint8Array }
  | { type: 'delete'; key: string; expectRevision: number };

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;
/** Loop → writer. */
export type ReplicaRequest =
  | { id: number; op: 'snapshot' }
  | { id: number; op: 'get'; key: string }
  | { id: number; op: 'range'; prefix: string; opts?: { startKey?: string; limit?: number } }
  | { id: number; op: 'history'; after: number; prefix?: string }
  | { id: number; op: 'write'; write: WireWrite }
  | { id: number; op: 'compact'; revision: number };

/** Writer → loop. */
type ReplicaMessage =
  | { t: 'commit'; events: WireEvent[]; values: Packed; rev: number }
  | { t: 'items'; id: number; kvs?: WireKV[]; events?: WireEvent[]; values: Packed }
  | { t: 'done'; id: number; result?: unknown }
  | { t: 'fail'; id: number; error: { message: string; code?: number; reason?: string } };

const wireKVs = (kvs: KV[]) => ({ kvs: kvs.map(({ key, modRevision, createRevision }) => ({ key, modRevision, createRevision })), values: pack(kvs.map((k) => k.value)) });
/** Events as they travel (`shared`: one copy every loop reads). */
export const wireEvents = (evs: StorageEvent[], shared = false) => ({ events: evs.map(({ value: _v, ...e }) => e), values: pack(evs.map((e) => e.value), shared) });
export type WireEvents = ReturnType<typeof wireEvents>;

/**
 * The writer's side: answers one loop's requests from the writer's backend, and sends it every
 * committed batch from the moment its snapshot was taken.
 */
export class ReplicaSource {
  /** Set once the loop has taken its snapshot: from then on it gets every commit. */
  private live = false;

  constructor(private readonly port: MessagePort, private readonly backend: StorageBackend,
    /** Every current value at revision `rev`, read in the turn it is called (ObjectCache.snapshot). */
    private readonly snapshot: () => { rev: number; kvs: Iterable<KV> }) {
    port.on('message', (m: ReplicaRequest) => void this.answer(m));
  }

  /** A committed batch, in commit order (called from the writer's onCommit, after its own cache). */
  commit(events: StorageEvent[] | WireEvents, rev: number): void {
    if (this.live) this.port.postMessage({ t: 'commit', ...(Array.isArray(events) ? wireEvents(events) : events), rev } satisfies ReplicaMessage);
  }

  private send(m: ReplicaMessage): void { this.port.postMessage(m); }

  private async answer(m: ReplicaRequest): Promise<void> {
    try {
      switch (m.op) {
        case 'snapshot': {
          // values and subscription in one turn: the loop gets exactly the commits after the snapshot
          const s = this.snapshot();
          this.live = true;
          let batch: KV[] = [];
          for (const kv of s.kvs) {
            batch.push(kv);
            if (batch.length === CHUNK) { this.send({ t: 'items', id: m.id, ...wireKVs(batch) }); batch = []; }
          }
          if (batch.length) this.send({ t: 'items', id: m.id, ...wireKVs(batch) });
          return this.send({ t: 'done', id: m.id, result: { rev: s.rev } });
        }
        case 'get': {
          const kv = await this.backend.get(m.key);
          if (kv) this.send({ t: 'items', id: m.id, ...wireKVs([kv]) });
          return this.send({ t: 'done', id: m.id });
        }
        case 'range': {
          const kvs = await this.backend.range(m.prefix, m.opts);
          for (let i = 0; i < kvs.length; i += CHUNK) this.send({ t: 'items', id: m.id, ...wireKVs(kvs.slice(i, i + CHUNK)) });
          return this.send({ t: 'done', id: m.id });
        }
        case 'history': {
          let batch: StorageEvent[] = [];
          for await (const ev of this.backend.history(m.after, m.prefix)) {
            batch.push(ev);
            if (batch.length === CHUNK) { this.send({ t: 'items', id: m.id, ...wireEvents(batch) }); batch = []; }
          }
          if (batch.length) this.send({ t: 'items', id: m.id, ...wireEvents(batch) });
          return this.send({ t: 'done', id: m.id });
        }
        case 'write': {
          const w = m.write;
          const op: WriteOp = w.type === 'delete' ? w
            : { ...w, value: (rev: number) => stamp(Buffer.from(w.template.buffer, w.template.byteOffset, w.template.byteLength), rev) };
          const r = await this.backend.write(op);
          if (r.ok) return this.send({ t: 'done', id: m.id, result: { ok: true, revision: r.revision, createRevision: r.createRevision } });
          if (r.current) this.send({ t: 'items', id: m.id, ...wireKVs([r.current]) });
          return this.send({ t: 'done', id: m.id, result: { ok: false, reason: r.reason } });
        }
        case 'compact':
          await this.backend.compact(m.revision);
          return this.send({ t: 'done', id: m.id, result: this.backend.compactedRevision() });
      }
    } catch (e) {
      const s = e as Partial<StatusError>;
      this.send({ t: 'fail', id: m.id, error: { message: String(s.message ?? e), code: s.code, reason: s.reason } });
    }
  }
}

/** The counters the writer publishes to every loop: the revision committed, and the oldest kept. */
export class SharedRevisions {
  readonly view: Float64Array;
  constructor(readonly buffer = new SharedArrayBuffer(16)) { this.view = new Float64Array(buffer); }
  /** Writer: after its onCommit and each compaction. Float64 stores are single 8-byte writes on every platform Node runs on. */
  publish(committed: number, compacted: number): void { this.view[COMMITTED] = committed; this.view[COMPACTED] = compacted; }
  committed(): number { return this.view[COMMITTED]; }
  compacted(): number { return this.view[COMPACTED]; }
}

interface Call { items: (m: Extract<ReplicaMessage, { t: 'items' }>) => void; done: (result: unknown) => void; fail: (e: Error) => void }

/** A read loop's storage backend: the writer's store, through ReplicaSource. */
export class ReplicaBackend implements StorageBackend {
  private nextId = 0;
  private calls = new Map<number, Call>();
  /** Resolves close() once no call is in flight. */
  private idle: (() => void) | undefined;
  private listener: ((events: StorageEvent[], revision: number) => void) | undefined;
  /** The revision of the last commit received (delivered, or folded into the snapshot before the kernel subscribed). */
  private applied = 0;
  /** The values open() read and the commits since, until the kernel has subscribed and read them with all(). */
  private snapshot: Map<string, KV> | undefined;
  /** What this replica's own compact() reached (the shared counter says what the writer's did). */
  private compacted = 0;

  constructor(private readonly port: MessagePort, private readonly revs: SharedRevisions) {
    port.on('message', (m: ReplicaMessage) => this.receive(m));
  }

  private receive(m: ReplicaMessage): void {
    if (m.t === 'commit') {
      const values = unpack(m.values);
      const events = m.events.map((e, i) => ({ ...e, value: values[i] }));
      this.applied = m.rev;
      if (this.listener) return this.listener(events, m.rev);
      // before the kernel subscribes: folded into the values its all() will give, at this revision
      for (const e of events) {
        if (e.type === 'DELETED') this.snapshot?.delete(e.key);
        else this.snapshot?.set(e.key, { key: e.key, value: e.value, modRevision: e.revision, createRevision: e.createRevision });
      }
      return;
    }
    const c = this.calls.get(m.id);
    if (!c) return;
    if (m.t === 'items') c.items(m);
    else {
      this.calls.delete(m.id);
      if (!this.calls.size) this.idle?.();
      if (m.t === 'done') c.done(m.result);
      else c.fail(m.error.code ? new StatusError(m.error.code, m.error.reason ?? 'InternalError', m.error.message) : new Error(m.error.message));
    }
  }

  /** One request; `items` gets every chunk before the promise resolves. */
  private call<T>(req: DistributiveOmit<ReplicaRequest, 'id'>, items: Call['items'] = () => {}): Promise<T> {
    const id = ++this.nextId;
    return new Promise<T>((resolve, reject) => {
      this.calls.set(id, { items, done: (r) => resolve(r as T), fail: reject });
      this.port.postMessage({ ...req, id } as ReplicaRequest);
    });
  }

  private kvsOf(out: KV[]): Call['items'] {
    return (m) => { const v = unpack(m.values); m.kvs!.forEach((k, i) => out.push({ ...k, value: v[i] })); };
  }

  async open(): Promise<void> {
    const kvs: KV[] = [];
    const { rev } = await this.call<{ rev: number }>({ op: 'snapshot' }, this.kvsOf(kvs));
    this.snapshot = new Map(kvs.map((kv) => [kv.key, kv]));
    this.applied = rev;
  }

  /** Writes in flight complete first (the writer commits them), as on every backend. */
  async close(): Promise<void> {
    while (this.calls.size) await new Promise<void>((resolve) => { this.idle = resolve; });
    this.port.close();
  }

  currentRevision(): number { return this.applied; }
  latestRevision(): number { return Math.max(this.revs.committed(), this.applied); }
  compactedRevision(): number { return Math.max(this.revs.compacted(), this.compacted); }

  async get(key: string): Promise<KV | undefined> {
    const out: KV[] = [];
    await this.call({ op: 'get', key }, this.kvsOf(out));
    return out[0];
  }

  async range(prefix: string, opts?: { startKey?: string; limit?: number }): Promise<KV[]> {
    const out: KV[] = [];
    await this.call({ op: 'range', prefix, opts }, this.kvsOf(out));
    return out;
  }

  /**
   * The values at currentRevision(): open()'s snapshot with the commits since folded in, until the
   * kernel, subscribed, has read them once to warm its cache; after that, a fresh snapshot of the writer's.
   */
  async *all(): AsyncIterable<KV> {
    const s = this.snapshot;
    if (this.listener) this.snapshot = undefined;
    if (s) return yield* s.values();
    const kvs: KV[] = [];
    await this.call({ op: 'snapshot' }, this.kvsOf(kvs));
    yield* kvs;
  }

  async write(op: WriteOp): Promise<WriteResult> {
    const template = op.type === 'delete' ? undefined : encodeTemplate(op.value);
    const write: WireWrite = op.type === 'delete' ? op : { type: op.type, key: op.key, ...(op.type === 'update' ? { expectRevision: op.expectRevision } : {}), template: template! } as WireWrite;
    const current: KV[] = [];
    const r = await this.call<{ ok: true; revision: number; createRevision: number } | { ok: false; reason: 'exists' | 'not-found' | 'conflict' }>({ op: 'write', write }, this.kvsOf(current));
    if (!r.ok) return { ok: false, reason: r.reason, current: current[0] };
    return { ok: true, revision: r.revision, createRevision: r.createRevision, value: template && stamp(template, r.revision) };
  }

  async *history(after: number, prefix?: string): AsyncIterable<StorageEvent> {
    const events: StorageEvent[] = [];
    await this.call({ op: 'history', after, prefix }, (m) => { const v = unpack(m.values); m.events!.forEach((e, i) => events.push({ ...e, value: v[i] })); });
    yield* events;
  }

  onCommit(listener: (events: StorageEvent[], revision: number) => void): void {
    this.listener = listener;
  }

  /** The one store is compacted (the kernel's read loops leave that to the writer and trim their caches only). */
  async compact(revision: number): Promise<void> {
    this.compacted = Math.max(this.compacted, await this.call<number>({ op: 'compact', revision }));
  }
  ready(): boolean { return true; }
}
