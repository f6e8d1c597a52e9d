// What the object cache holds per object and records per change: the types the cache, its sorted
// index, the watch fan-out and the Protobuf encoder share (apart from cache.ts, so none imports it in a circle).

/**
 * An entry's uid, labels and fields may be lazy accessors (StoredEntry): never copy one with a
 * spread, which would drop them; withBytes makes a copy with other bytes.
 */
export interface Entry {
  key: string;
  namespace: string;
  name: string;
  uid: string;
  rev: number;
  createRev: number;
  /** The stored JSON, resourceVersion included. Never mutated. */
  bytes: Buffer;
  /** The object's Protobuf message, framed as a list item; encoded at the first Protobuf read (kernel/api/repr/protobuf.ts). */
  pb?: Buffer;
  labels: Record<string, string> | undefined;
  /** Values of the type's field selectors (metadata.name and metadata.namespace included). */
  fields: Record<string, string>;
}

export interface CacheEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  rev: number;
  /** When the cache applied it (ms), for trimming history to the retention window. */
  at: number;
  /** New state; for DELETED the last state with its resourceVersion set to the deletion revision. */
  entry: Entry;
  prev: Entry | undefined;
}
