// The watch fan-out. Watchers are indexed by resource, then by namespace and by object name, so an
// event reaches only the watchers that can match it. Each event is encoded once per representation
// (and event type) and the same bytes are written to every watcher that wants that representation.
import type { CacheEvent, Entry, ResourceCache } from './store/cache.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface Watcher {
  /** Index keys: empty namespace/name means "any". */
  namespace: string;
  name: string;
  /** Label and field selectors beyond the index keys; absent means everything matches. */
  matches?: (e: Entry) => boolean;
  /** Representation key: watchers with the same key share encoded bytes. */
  rep: string;
  encode(type: EventType, e: Entry): Buffer;
  deliver(line: Buffer, rev: number): void;
}

interface Index {
  all: Set<Watcher>;
  byNamespace: Map<string, Set<Watcher>>;
  byName: Map<string, Set<Watcher>>; // "<namespace>/<name>"
}

function addTo<K>(m: Map<K, Set<Watcher>>, k: K, w: Watcher) {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(w);
}

export class WatchHub {
  private indexes = new Map<ResourceCache, Index>();
  count = 0;

  private index(rc: ResourceCache): Index {
    let ix = this.indexes.get(rc);
    if (!ix) this.indexes.set(rc, (ix = { all: new Set(), byNamespace: new Map(), byName: new Map() }));
    return ix;
  }

  add(rc: ResourceCache, w: Watcher): void {
    const ix = this.index(rc);
    if (w.name) addTo(ix.byName, `${w.namespace}/${w.name}`, w);
    else if (w.namespace) addTo(ix.byNamespace, w.namespace, w);
    else ix.all.add(w);
    this.count++;
  }

  remove(rc: ResourceCache, w: Watcher): void {
    const ix = this.indexes.get(rc);
    if (!ix) return;
    const del = (s: Set<Watcher> | undefined) => s?.delete(w) ?? false;
    const removed = w.name ? del(ix.byName.get(`${w.namespace}/${w.name}`)) : w.namespace ? del(ix.byNamespace.get(w.namespace)) : ix.all.delete(w);
    if (removed) this.count--;
  }

  dispatch(ev: CacheEvent, rc: ResourceCache): void {
    const ix = this.indexes.get(rc);
    if (!ix) return;
    const e = ev.entry;
    const memo = new Map<string, Buffer>();
    const line = (w: Watcher, type: EventType) => {
      const k = w.rep + '\0' + type;
      let b = memo.get(k);
      if (!b) memo.set(k, (b = w.encode(type, e)));
      return b;
    };
    const send = (set: Set<Watcher> | undefined) => {
      if (!set) return;
      for (const w of set) {
        if (!w.matches) { w.deliver(line(w, ev.type), ev.rev); continue; }
        // With a selector, an object entering the selected set is ADDED and one leaving it is DELETED.
        const now = ev.type !== 'DELETED' && w.matches(e);
        const before = ev.prev !== undefined && w.matches(ev.prev);
        if (ev.type === 'DELETED') { if (w.matches(e)) w.deliver(line(w, 'DELETED'), ev.rev); }
        else if (now && before) w.deliver(line(w, 'MODIFIED'), ev.rev);
        else if (now) w.deliver(line(w, 'ADDED'), ev.rev);
        else if (before) w.deliver(line(w, 'DELETED'), ev.rev);
      }
    };
    send(ix.all);
    if (e.namespace) send(ix.byNamespace.get(e.namespace));
    send(ix.byName.get(`${e.namespace}/${e.name}`));
  }
}
