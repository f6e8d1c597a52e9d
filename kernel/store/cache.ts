// The object cache: every current object, kept as the exact JSON bytes that were stored, plus the
// few parsed facts reads need (labels, selector fields, finalizers). Reads, lists and watches are
// served from here; an unchanged object is never serialized again. It is fed in revision order by
// the storage backend's onCommit, so after a commit returns the cache already holds it.
import type { KV, StorageEvent, TypeDef, KObject } from '../contracts/index.js';
import type { CacheEvent, Entry } from './entry.js';
import { SortedEntries, before } from './sorted.js';

export type { CacheEvent, Entry };

/** Storage keys: /<group or "core">/<resource>/<namespace>/<name> or /<group>/<resource>/<name>. */
export function resourcePrefix(type: Pick<TypeDef, 'group' | 'resource' | 'storageResource' | 'storageGroup'>): string {
  return `/${(type.storageGroup ?? type.group) || 'core'}/${type.storageResource ?? type.resource}/`;
}
/** The resource prefix of a storage key ("/<group>/<resource>/"). */
function prefixOf(key: string): string {
  return key.slice(0, key.indexOf('/', key.indexOf('/', 1) + 1) + 1);
}
export function storageKey(type: TypeDef, namespace: string, name: string): string {
  return resourcePrefix(type) + (type.namespaced ? `${namespace}/${name}` : name);
}

const cmp = (a: Entry, b: Entry) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0);


/**
 * One resource's objects: a map for point lookups, an array sorted by (namespace, name) for lists and
 * paging, and the recent events (each with the entry it replaced) so that the collection as it was at
 * an older revision can be rebuilt without touching storage.
 */
export class ResourceCache {
  readonly byKey = new Map<string, Entry>();
  readonly sorted = new SortedEntries();
  /** The last unfiltered list body built (JSON or Protobuf, by namespace, revision and page), reused until the revision moves. */
  listMemo: { key: string; body: Buffer } | undefined;
  /** A large list being joined for listMemo, shared by the clients that ask for it meanwhile. */
  listJoin: { key: string; body: Promise<Buffer> } | undefined;
  /** Events in revision order, newest last; trimmed to the retention window. */
  events: CacheEvent[] = [];
  /** Replaced when a run-time type is served again with a new definition (PluginHost.serveTypes). */
  constructor(public type: TypeDef) {}

  /** Index of the first event with rev > r. */
  eventsAfter(r: number): number {
    let lo = 0, hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.events[mid].rev <= r) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * The entries of `namespace` (all when empty) as they were at revision r, in (namespace, name)
   * order, starting at `from`. Undoes the events after r: each changed key takes the entry its first
   * later event replaced (none if that event created it). Cost: the events after r plus the entries read.
   */
  *at(r: number, namespace: string, from?: { namespace: string; name: string }): Generator<Entry> {
    const ns = this.type.namespaced ? namespace : '';
    const changed = new Map<string, Entry | null>();
    for (let i = this.eventsAfter(r); i < this.events.length; i++) {
      const ev = this.events[i];
      if (!changed.has(ev.entry.key)) changed.set(ev.entry.key, ev.type === 'ADDED' ? null : ev.prev ?? null);
    }
    const startNs = from ? from.namespace : ns;
    const startName = from ? from.name : '';
    const restored = [...changed.values()].filter((e): e is Entry => !!e && (!ns || e.namespace === ns) && !before(e, startNs, startName));
    restored.sort(cmp);
    let j = 0;
    for (const e of this.sorted.from(startNs, startName)) {
      if (ns && e.namespace !== ns) break;
      while (j < restored.length && cmp(restored[j], e) < 0) yield restored[j++];
      if (!changed.has(e.key)) yield e;
    }
    while (j < restored.length) yield restored[j++];
  }

  put(e: Entry): Entry | undefined {
    const prev = this.byKey.get(e.key);
    this.byKey.set(e.key, e);
    this.sorted.put(e);
    return prev;
  }

  remove(key: string): Entry | undefined {
    const prev = this.byKey.get(key);
    if (!prev) return undefined;
    this.byKey.delete(key);
    this.sorted.remove(prev.namespace, prev.name);
    return prev;
  }

  /** How many current entries range(namespace, from) yields, without reading them. */
  count(namespace: string, from?: { namespace: string; name: string }): number {
    const ns = this.type.namespaced ? namespace : '';
    const end = ns ? this.sorted.rank(ns + '\0', '') : this.sorted.size;
    return end - this.sorted.rank(from ? from.namespace : ns, from ? from.name : '');
  }

  /** Current entries of a namespace (all when empty, or for cluster-scoped types), in order, from a start position. */
  *range(namespace: string, from?: { namespace: string; name: string }): Generator<Entry> {
    const ns = this.type.namespaced ? namespace : '';
    for (const e of this.sorted.from(from ? from.namespace : ns, from ? from.name : '')) {
      if (ns && e.namespace !== ns) return;
      yield e;
    }
  }
}

/** A copy of an entry with other bytes (and revision): the same facts, no Protobuf form yet. */
export function withBytes(e: Entry, bytes: Buffer, rev = e.rev): Entry {
  return { key: e.key, namespace: e.namespace, name: e.name, uid: e.uid, rev, createRev: e.createRev, bytes, pb: undefined, labels: e.labels, fields: e.fields };
}

/** The same object reported at another revision (an object leaving a watch's selection is sent as it was, at the event's revision). */
export function withRevision(e: Entry, rev: number): Entry {
  const obj = JSON.parse(e.bytes.toString('utf8')) as KObject;
  obj.metadata = { ...obj.metadata, resourceVersion: String(rev) };
  return withBytes(e, Buffer.from(JSON.stringify(obj)), rev);
}

export function makeEntry(type: TypeDef, key: string, bytes: Buffer, obj: KObject, rev: number, createRev: number): Entry {
  const md = obj.metadata ?? {};
  const fields: Record<string, string> = { 'metadata.name': md.name ?? '', 'metadata.namespace': md.namespace ?? '' };
  if (type.fieldSelectors) for (const [f, get] of Object.entries(type.fieldSelectors)) fields[f] = get(obj);
  return { key, namespace: md.namespace ?? '', name: md.name ?? '', uid: md.uid ?? '', rev, createRev, bytes, labels: md.labels, fields };
}

/**
 * An entry read at start-up or committed: namespace and name come from its storage key, and the bytes are parsed
 * for uid, labels and selector fields only when something first asks (most objects are never
 * filtered by a selector before they change), so a restart does not parse every object, and a 2 MiB
 * object committed does not hold the event loop while its 100,000 keys are parsed for a name.
 * A class, so that a million of them share their accessors instead of holding closures each.
 */
class StoredEntry implements Entry {
  pb: Buffer | undefined = undefined;
  private facts: Entry | undefined = undefined;
  constructor(private readonly type: TypeDef, readonly key: string, readonly namespace: string, readonly name: string, readonly rev: number, readonly createRev: number, readonly bytes: Buffer) {}
  private parsed(): Entry {
    return (this.facts ??= makeEntry(this.type, this.key, this.bytes, JSON.parse(this.bytes.toString('utf8')) as KObject, this.rev, this.createRev));
  }
  get uid() { return this.parsed().uid; }
  get labels() { return this.parsed().labels; }
  get fields() { return this.parsed().fields; }
  // a type served again with other field selectors recomputes them (ObjectCache.register)
  set fields(f: Record<string, string>) { this.parsed().fields = f; }
}

/** The namespace of the entry made last: a start-up reads objects in key order, so most share it (one string, not a million). */
let lastNamespace = '';

function storedEntry(type: TypeDef, key: string, bytes: Buffer, rev: number, createRev: number): Entry {
  const at = key.indexOf('/', key.indexOf('/', 1) + 1) + 1; // after the resource prefix
  let namespace = '';
  let name: string;
  const slash = type.namespaced ? key.indexOf('/', at) : -1;
  if (slash < 0) name = key.slice(at);
  else {
    if (slash - at === lastNamespace.length && key.startsWith(lastNamespace, at)) namespace = lastNamespace;
    else namespace = lastNamespace = key.slice(at, slash);
    name = key.slice(slash + 1);
  }
  return new StoredEntry(type, key, namespace, name, rev, createRev, bytes);
}

export const HISTORY_DEFAULTS = { maxEvents: 1_000_000, maxEventBytes: 512 * 1024 * 1024 };

export class ObjectCache {
  private resources = new Map<string, ResourceCache>();
  private waiters: { rev: number; resolve: () => void }[] = [];
  rev = 0;
  /** Oldest revision the in-memory history can rebuild (the start-up revision, then the trim point). */
  floor = 0;
  /** Caps on the events kept in memory across all resources, and on the bytes of the object versions they carry (kernel/ops/compaction.ts). */
  maxEvents = HISTORY_DEFAULTS.maxEvents;
  maxEventBytes = HISTORY_DEFAULTS.maxEventBytes;
  historyEvents = 0;
  eventBytes = 0;
  /** The newest revision dropped to keep within the caps, and who is told (the store compacts to it). */
  boundFloor = 0;
  onBoundsTrimmed: () => void = () => {};
  /** Called with every applied event, in order (the watch fan-out). */
  onEvent: (ev: CacheEvent, rc: ResourceCache) => void = () => {};
  /** Called after each applied batch of events. */
  onBatch: () => void = () => {};

  /**
   * The cache of a type's storage prefix. A type registered after start-up (served at run time) takes
   * over what start-up loaded under its prefix; a new definition of a served type replaces the old one.
   */
  register(type: TypeDef): ResourceCache {
    const p = resourcePrefix(type);
    let rc = this.resources.get(p);
    if (rc) {
      // A type stored with another group's resource leaves the cache that group's (its objects, its metrics name).
      if (type.storageGroup !== undefined && type.storageGroup !== type.group) return rc;
      // A type served again with other field selectors (a custom resource's selectableFields):
      // the current objects' field values follow.
      const before = Object.keys(rc.type.fieldSelectors ?? {}).join('\0');
      rc.type = type;
      if (Object.keys(type.fieldSelectors ?? {}).join('\0') !== before) {
        for (const e of rc.byKey.values()) e.fields = makeEntry(type, e.key, e.bytes, JSON.parse(e.bytes.toString('utf8')) as KObject, e.rev, e.createRev).fields;
      }
      return rc;
    }
    this.resources.set(p, (rc = new ResourceCache(type)));
    const d = this.dormant.get(p);
    if (d) {
      this.dormant.delete(p);
      for (const kv of d.values.values()) this.load(kv.key, kv.value, kv.modRevision, kv.createRevision);
      this.replay(rc, d.events);
    }
    return rc;
  }

  /** Values and history start-up found under prefixes no type claims yet, kept until one does (custom resources). */
  private dormant = new Map<string, { values: Map<string, KV>; events: StorageEvent[] }>();
  private dormantFor(key: string) {
    const p = prefixOf(key);
    let d = this.dormant.get(p);
    if (!d) this.dormant.set(p, (d = { values: new Map(), events: [] }));
    return d;
  }

  /**
   * Every current value at `rev`, those no type claims yet included, read in one turn: what a read
   * loop's cache starts from (kernel/replicas/).
   */
  snapshot(): { rev: number; kvs: Iterable<KV> } {
    const kvs: KV[] = [];
    for (const rc of this.resources.values()) for (const e of rc.byKey.values()) kvs.push({ key: e.key, value: e.bytes, modRevision: e.rev, createRevision: e.createRev });
    for (const d of this.dormant.values()) for (const kv of d.values.values()) kvs.push(kv);
    return { rev: this.rev, kvs };
  }

  forType(type: TypeDef): ResourceCache {
    return this.resources.get(resourcePrefix(type)) ?? this.register(type);
  }

  private forKey(key: string): ResourceCache | undefined {
    return this.resources.get(prefixOf(key));
  }

  /** Load one stored value at start-up (no events). */
  load(key: string, value: Uint8Array, rev: number, createRev: number): void {
    const rc = this.forKey(key);
    if (!rc) { this.dormantFor(key).values.set(key, { key, value, modRevision: rev, createRevision: createRev }); return; }
    // the log's own Buffer when it is one: a second view of the same bytes costs ~100 bytes an object
    const bytes = Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    rc.put(storedEntry(rc.type, key, bytes, rev, createRev));
  }

  /**
   * Start-up: rebuilds the in-memory history from the storage log's history (revisions after
   * `compacted`, in order) so that exact reads and continue tokens from before a restart keep working.
   * A modification whose previous version is older than the log's history cannot be undone, so the
   * floor moves above it. Call after load() and before any live event.
   */
  preload(events: Iterable<StorageEvent>, compacted: number): void {
    const byRc = new Map<ResourceCache, StorageEvent[]>();
    for (const ev of events) {
      const rc = this.forKey(ev.key);
      if (!rc) { this.dormantFor(ev.key).events.push(ev); continue; }
      let l = byRc.get(rc);
      if (!l) byRc.set(rc, (l = []));
      l.push(ev);
    }
    this.floor = compacted;
    for (const [rc, evs] of byRc) this.replay(rc, evs);
  }

  /**
   * Rebuilds one resource's in-memory history from the log's events. A modification whose previous
   * version is older than the log's history cannot be undone, so the floor moves above it; history
   * before the floor is dropped everywhere.
   */
  private replay(rc: ResourceCache, events: StorageEvent[]): void {
    const last = new Map<string, Entry>();
    let floor = this.floor;
    const at = Date.now();
    const entryOf = (ev: StorageEvent, rev: number) => {
      const bytes = Buffer.from(ev.value.buffer, ev.value.byteOffset, ev.value.byteLength);
      return makeEntry(rc.type, ev.key, bytes, JSON.parse(bytes.toString('utf8')) as KObject, rev, ev.createRevision);
    };
    for (const ev of events) {
      let entry: Entry;
      let prev: Entry | undefined;
      if (ev.type === 'DELETED') {
        prev = entryOf(ev, ev.prevRevision); // the last value travels with the deletion
        entry = withRevision(prev, ev.revision);
        last.delete(ev.key);
      } else {
        // The newest event of an object still current is its current entry: shared, not parsed and
        // held a second time (after a burst of creates, that is most of the history).
        const current = rc.byKey.get(ev.key);
        entry = current?.rev === ev.revision ? current : entryOf(ev, ev.revision);
        if (ev.type === 'MODIFIED') {
          prev = last.get(ev.key);
          if (prev?.rev !== ev.prevRevision) { prev = undefined; floor = Math.max(floor, ev.revision); }
        }
        last.set(ev.key, entry);
      }
      rc.events.push({ type: ev.type, rev: ev.revision, at, entry, prev });
      this.historyEvents++;
      this.eventBytes += entry.bytes.length;
    }
    this.floor = floor;
    this.trim(0, this.maxEvents, this.maxEventBytes);
  }

  private record(rc: ResourceCache, ev: CacheEvent) {
    rc.events.push(ev);
    this.eventBytes += ev.entry.bytes.length;
    // past a cap the oldest tenth goes at once, so the sort over all events is not paid per event
    if (++this.historyEvents > this.maxEvents || this.eventBytes > this.maxEventBytes) { this.trim(0, this.maxEvents * 0.9, this.maxEventBytes * 0.9); this.onBoundsTrimmed(); }
    this.onEvent(ev, rc);
  }

  /**
   * Drops history applied before `olderThanMs`, and more, oldest first over all resources, until at most `keep`
   * events carrying at most `keepBytes` remain; the floor moves to the newest revision dropped (before it: 410).
   */
  trim(olderThanMs: number, keep = this.maxEvents, keepBytes = this.maxEventBytes): void {
    if (this.historyEvents > keep || this.eventBytes > keepBytes) {
      const all = [...this.resources.values()].flatMap((rc) => rc.events).sort((a, b) => a.rev - b.rev);
      for (let n = all.length, bytes = this.eventBytes, i = 0; i < all.length && (n > keep || bytes > keepBytes); i++, n--) { bytes -= all[i].entry.bytes.length; this.floor = Math.max(this.floor, all[i].rev); }
      this.boundFloor = this.floor;
    }
    for (const rc of this.resources.values()) {
      let i = 0;
      while (i < rc.events.length && (rc.events[i].at < olderThanMs || rc.events[i].rev <= this.floor)) {
        this.floor = Math.max(this.floor, rc.events[i].rev);
        this.eventBytes -= rc.events[i].entry.bytes.length;
        i++;
      }
      if (i) {
        rc.events = rc.events.slice(i);
        this.historyEvents -= i;
      }
    }
  }

  /** Applies committed events in order; `upTo` is the store revision reached (may pass the last event). */
  apply(events: StorageEvent[], upTo = 0): void {
    const now = Date.now();
    for (const ev of events) {
      const rc = this.forKey(ev.key);
      if (rc) {
        // the log's own Buffer when it is one (as in load): a second view costs ~100 bytes an object
        const bytes = Buffer.isBuffer(ev.value) ? ev.value : Buffer.from(ev.value.buffer, ev.value.byteOffset, ev.value.byteLength);
        if (ev.type === 'DELETED') {
          const prev = rc.remove(ev.key);
          // Watchers see the deleted object at the deletion's revision, as the reference sends it.
          const obj = JSON.parse(bytes.toString('utf8')) as KObject;
          obj.metadata = { ...obj.metadata, resourceVersion: String(ev.revision) };
          const entry = makeEntry(rc.type, ev.key, Buffer.from(JSON.stringify(obj)), obj, ev.revision, ev.createRevision);
          this.record(rc, { type: 'DELETED', rev: ev.revision, at: now, entry, prev });
        } else {
          // The entry's facts (uid, labels, selector fields) are parsed only when something asks: a
          // watch or list with a selector. Most writes meet neither, and parsing the bytes the write
          // had just serialized was about 3 % of the server's main thread in the create benchmark.
          const entry = storedEntry(rc.type, ev.key, bytes, ev.revision, ev.createRevision);
          const prev = rc.put(entry);
          this.record(rc, { type: prev ? 'MODIFIED' : 'ADDED', rev: ev.revision, at: now, entry, prev });
        }
      } else {
        // No type claims the key yet (a custom resource whose definition a read loop has not served
        // yet, in the same batch): its current value waits for the type, as start-up's do.
        const d = this.dormantFor(ev.key);
        if (ev.type === 'DELETED') d.values.delete(ev.key);
        else d.values.set(ev.key, { key: ev.key, value: ev.value, modRevision: ev.revision, createRevision: ev.createRevision });
      }
      this.rev = ev.revision;
    }
    if (upTo > this.rev) this.rev = upTo;
    this.onBatch();
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
