// The storage backend contract: a revisioned key-value log.
/** A stored value with the revision that last modified it. */
export interface KV {
  key: string;
  value: Uint8Array;
  modRevision: number;
  createRevision: number;
}

export interface StorageEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  key: string;
  revision: number;
  /** New value (ADDED, MODIFIED) or the last value before deletion (DELETED). */
  value: Uint8Array;
  createRevision: number;
  /** Revision of the value this event replaced (0 for ADDED). */
  prevRevision: number;
}

export type WriteOp =
  | { type: 'create'; key: string; value: (revision: number) => Uint8Array }
  /** expectRevision: the modRevision the caller read; a mismatch is a conflict. */
  | { type: 'update'; key: string; expectRevision: number; value: (revision: number) => Uint8Array }
  | { type: 'delete'; key: string; expectRevision: number };

export type WriteResult =
  | { ok: true; revision: number; value?: Uint8Array; createRevision: number }
  | { ok: false; reason: 'exists' | 'not-found' | 'conflict'; current?: KV };

/**
 * Turns a value into the bytes a storage backend keeps and back (encryption at rest, from
 * --encryption-provider-config). key is the storage key, which ciphers may bind the value to.
 */
export interface ValueTransformer {
  toStorage(key: string, value: Uint8Array): Uint8Array;
  /** Throws when the stored bytes cannot be read with the configured providers. */
  fromStorage(key: string, stored: Uint8Array): Uint8Array;
}

/**
 * The storage interface: a revisioned key-value log. Revisions are global and strictly increasing;
 * an etcd backend maps etcd revisions one to one. Every backend runs test/storage-conformance.
 */
export interface StorageBackend {
  open(): Promise<void>;
  close(): Promise<void>;
  /** Highest committed (durable) revision whose events have all reached the onCommit listener. */
  currentRevision(): number;
  /**
   * For a store shared with other servers: a quorum read of the store's latest revision, which a
   * consistent read waits for the cache to reach. Without it, currentRevision() is that revision.
   * One known without asking may be returned as it is (a read then need not wait at all).
   */
  latestRevision?(): number | Promise<number>;
  /** Oldest revision still available for historical reads and watch resume. */
  compactedRevision(): number;
  get(key: string): Promise<KV | undefined>;
  /** Current values of all keys under prefix, in key order (startKey inclusive, at most limit). */
  range(prefix: string, opts?: { startKey?: string; limit?: number }): Promise<KV[]>;
  /** Stream of all current values as of currentRevision() when called, for warming the cache at start. */
  all(): AsyncIterable<KV>;
  /** Commit one write; resolves after it is durable. Conflicts resolve with ok:false, they do not throw. */
  write(op: WriteOp): Promise<WriteResult>;
  /** History of committed events with revision > after, in revision order (throws if compacted past). */
  history(after: number, prefix?: string): AsyncIterable<StorageEvent>;
  /**
   * Called for every committed event, in revision order, after it is durable, with the revision the
   * store has now reached (at least the last event's; more when revisions passed without an event
   * under this server's keys). One subscriber: the kernel's cache.
   */
  onCommit(listener: (events: StorageEvent[], revision: number) => void): void;
  /** Drop history at or below revision. */
  compact(revision: number): Promise<void>;
  ready?(): boolean;
  /** The health check ready() backs: its name (default "storage") and whether /livez includes it (default true). */
  health?: { name: string; live: boolean };
}
