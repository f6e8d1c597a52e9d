// The object cache: every current object, kept as the exact JSON bytes that were stored, plus the
// few parsed facts reads need (labels, selector fields, finalizers). Reads, lists and watches are
// served from here; an unchanged object is never serialized again. It is fed in revision order by
// the storage backend's onCommit, so after a commit returns the cache already holds it.
import type { StorageEvent, TypeDef, KObject } from '../contracts.js';

export interface Entry {
  key: string;
  namespace: string;
  name: string;
  uid: string;
  rev: number;
  createRev: number;
  /** The stored JSON, resourceVersion included. Never mutated. */
  bytes: Buffer;
  labels: Record<string, string> | undefined;
  /** Values of the type's field selectors (metadata.name and metadata.namespace included). */
  fields: Record<string, string>;
}

export interface CacheEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  rev: number;
  /** New state; for DELETED the last state with its resourceVersion set to the deletion revision. */
  entry: Entry;
  prev: Entry | undefined;
}

/** Storage keys: /<group or "core">/<resource>/<namespace>/<name> or /<group>/<resource>/<name>. */
export function resourcePrefix(type: Pick<TypeDef, 'group' | 'resource' | 'storageResource'>): string {
  return `/${type.group || 'core'}/${type.storageResource ?? type.resource}/`;
}
export function storageKey(type: TypeDef, namespace: string, name: string): string {
  return resourcePrefix(type) + (type.namespaced ? `${namespace}/${name}` : name);
}

const cmp = (a: Entry, b: Entry) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** One resource's objects: a map for point lookups and an array sorted by (namespace, name) for lists and paging. */
export class ResourceCache {
  readonly byKey = new Map<string, Entry>();
  sorted: Entry[] = [];
  constructor(readonly type: TypeDef) {}

  /** Index of the first entry not before (namespace, name). */
  lowerBound(namespace: string, name: string): number {
    let lo = 0, hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const e = this.sorted[mid];
      if (e.namespace < namespace || (e.namespace === namespace && e.name < name)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  put(e: Entry): Entry | undefined {
    const prev = this.byKey.get(e.key);
    this.byKey.set(e.key, e);
    const i = this.lowerBound(e.namespace, e.name);
    if (prev) this.sorted[i] = e;
    else this.sorted.splice(i, 0, e);
    return prev;
  }

  remove(key: string): Entry | undefined {
    const prev = this.byKey.get(key);
    if (!prev) return undefined;
    this.byKey.delete(key);
    const i = this.lowerBound(prev.namespace, prev.name);
    if (this.sorted[i] === prev) this.sorted.splice(i, 1);
    return prev;
  }

  /** Entries of one namespace (or all when namespace is empty), in order. */
  range(namespace: string): Entry[] {
    if (!namespace || !this.type.namespaced) return this.sorted;
    const start = this.lowerBound(namespace, '');
    let end = start;
    while (end < this.sorted.length && this.sorted[end].namespace === namespace) end++;
    return this.sorted.slice(start, end);
  }
}

export function makeEntry(type: TypeDef, key: string, bytes: Buffer, obj: KObject, rev: number, createRev: number): Entry {
  const md = obj.metadata ?? {};
  const fields: Record<string, string> = { 'metadata.name': md.name ?? '', 'metadata.namespace': md.namespace ?? '' };
  if (type.fieldSelectors) for (const [f, get] of Object.entries(type.fieldSelectors)) fields[f] = get(obj);
  return { key, namespace: md.namespace ?? '', name: md.name ?? '', uid: md.uid ?? '', rev, createRev, bytes, labels: md.labels, fields };
}

export class ObjectCache {
  private resources = new Map<string, ResourceCache>();
  private waiters: { rev: number; resolve: () => void }[] = [];
  rev = 0;
  /** Called with every applied event, in order (the watch fan-out). */
  onEvent: (ev: CacheEvent, rc: ResourceCache) => void = () => {};

  register(type: TypeDef): ResourceCache {
    const p = resourcePrefix(type);
    let rc = this.resources.get(p);
    if (!rc) this.resources.set(p, (rc = new ResourceCache(type)));
    return rc;
  }

  forType(type: TypeDef): ResourceCache {
    return this.resources.get(resourcePrefix(type)) ?? this.register(type);
  }

  private forKey(key: string): ResourceCache | undefined {
    const i = key.indexOf('/', key.indexOf('/', 1) + 1);
    return this.resources.get(key.slice(0, i + 1));
  }

  /** Load one stored value at start-up (no events). */
  load(key: string, value: Uint8Array, rev: number, createRev: number): void {
    const rc = this.forKey(key);
    if (!rc) return; // a type no longer served (runtime-config): kept in storage, not served
    const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    rc.put(makeEntry(rc.type, key, bytes, JSON.parse(bytes.toString('utf8')), rev, createRev));
  }

  apply(events: StorageEvent[]): void {
    for (const ev of events) {
      const rc = this.forKey(ev.key);
      if (rc) {
        const bytes = Buffer.from(ev.value.buffer, ev.value.byteOffset, ev.value.byteLength);
        const obj = JSON.parse(bytes.toString('utf8')) as KObject;
        if (ev.type === 'DELETED') {
          const prev = rc.remove(ev.key);
          // Watchers see the deleted object at the deletion's revision, as the reference sends it.
          obj.metadata = { ...obj.metadata, resourceVersion: String(ev.revision) };
          const entry = makeEntry(rc.type, ev.key, Buffer.from(JSON.stringify(obj)), obj, ev.revision, ev.createRevision);
          this.onEvent({ type: 'DELETED', rev: ev.revision, entry, prev }, rc);
        } else {
          const entry = makeEntry(rc.type, ev.key, bytes, obj, ev.revision, ev.createRevision);
          const prev = rc.put(entry);
          this.onEvent({ type: prev ? 'MODIFIED' : 'ADDED', rev: ev.revision, entry, prev }, rc);
        }
      }
      this.rev = ev.revision;
    }
    if (this.waiters.length) {
      const still: typeof this.waiters = [];
      for (const w of this.waiters) (w.rev <= this.rev ? w.resolve() : still.push(w));
      this.waiters = still;
    }
  }

  /** Resolves when the cache has applied `rev` (false on timeout). */
  waitFor(rev: number, timeoutMs: number): Promise<boolean> {
    if (rev <= this.rev) return Promise.resolve(true);
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      const waiter = { rev, resolve: () => { clearTimeout(t); resolve(true); } };
      this.waiters.push(waiter);
    });
  }
}
