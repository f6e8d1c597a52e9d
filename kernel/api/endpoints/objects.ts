// The object client plugins get (PluginHost.objects): reads from the cache, writes through the
// registry as the server itself (admission included), and watches of the committed objects.
import type { KObject, ObjectClient, TypeDef, UserInfo } from '../../contracts/index.js';
import { isStatusError } from '../../contracts/status.js';
import { resourcePrefix, type CacheEvent, type Entry, type ResourceCache } from '../../store/cache.js';
import type { Registry, Target } from '../registry/registry.js';
import { parseText, SLICED_PARSE_BYTES } from '../../../workers/parse.js';

/** The user the server's own writes run as. */
export const SYSTEM_USER: UserInfo = { username: 'system:apiserver', uid: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] };

type ObjectListener = (t: 'ADDED' | 'MODIFIED' | 'DELETED', o: KObject) => void;
type Only = { name?: string; namespace?: string };

/** Plugins' watches of committed objects (ObjectClient.watch), by resource prefix. */
export class ObjectWatchers {
  private byPrefix = new Map<string, Map<ObjectListener, Only | undefined>>();
  /** Changes waiting for a large one's parse before them, in commit order. */
  private queued: { type: CacheEvent['type']; text: string; wanted: ObjectListener[] }[] = [];
  private draining = false;

  add(type: TypeDef, listener: ObjectListener, only?: Only): () => void {
    const k = resourcePrefix(type);
    let set = this.byPrefix.get(k);
    if (!set) this.byPrefix.set(k, (set = new Map()));
    set.set(listener, only);
    return () => set!.delete(listener);
  }

  /**
   * A committed change the cache applied: parsed once for the listeners that want that object, if
   * any. A large object is parsed in slices (parseText), and the changes after it wait for it, so
   * every listener still sees the changes in commit order.
   */
  notify(ev: CacheEvent, rc: ResourceCache): void {
    const listeners = this.byPrefix.get(resourcePrefix(rc.type));
    if (!listeners?.size) return;
    const { name, namespace } = ev.entry;
    const wanted: ObjectListener[] = [];
    for (const [l, only] of listeners) {
      if (!only || ((only.name === undefined || only.name === name) && (only.namespace === undefined || only.namespace === namespace))) wanted.push(l);
    }
    if (!wanted.length) return;
    if (!this.draining && ev.entry.bytes.length < SLICED_PARSE_BYTES) {
      const obj = JSON.parse(ev.entry.bytes.toString('utf8')) as KObject;
      for (const l of wanted) l(ev.type, obj);
      return;
    }
    this.queued.push({ type: ev.type, text: ev.entry.bytes.toString('utf8'), wanted });
    if (!this.draining) void this.drain();
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      for (let q = this.queued.shift(); q; q = this.queued.shift()) {
        const obj = (await parseText(q.text)) as KObject;
        for (const l of q.wanted) {
          try { l(q.type, obj); } catch (e) { process.emitWarning(`a listener of committed objects failed: ${String(e)}`); }
        }
      }
    } finally {
      this.draining = false;
    }
  }
}

/** Creates on the create-only sub-resources plugins serve (ResourceEndpoints.createSubresource). */
export type SubresourceCreate = (type: TypeDef, namespace: string, name: string, sub: string, body: KObject, user: UserInfo) => Promise<KObject>;

export function objectClient(registry: () => Registry, watchers: ObjectWatchers, createSub: SubresourceCreate): ObjectClient {
  const target = (type: TypeDef, namespace: string, name: string, subresource = ''): Target => ({ type, namespace: type.namespaced ? namespace : '', name, subresource });
  const parse = (b: Buffer | string) => JSON.parse(typeof b === 'string' ? b : b.toString('utf8')) as KObject;
  return {
    get: async (type, namespace, name) => {
      const e = registry().current(type, namespace, name);
      return e ? parse(e.bytes) : undefined;
    },
    list: async (type, namespace) => [...registry().rc(type).range(namespace ?? '')].map((e: Entry) => parse(e.bytes)),
    scan: (type, visit) => {
      // One search for all the texts, over the bytes read as latin1: each UTF-8 byte one character,
      // so a text matches exactly where its UTF-8 bytes occur (a million objects at a start-up: a
      // regular expression over the string took a third of the time of one Buffer search per text).
      const patterns = new Map<string, RegExp>();
      const pattern = (texts: string[]) => {
        const k = texts.join('\0');
        let re = patterns.get(k);
        if (!re) patterns.set(k, (re = new RegExp(texts.map((t) => Buffer.from(t).toString('latin1').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'))));
        return re;
      };
      for (const e of registry().rc(type).range('')) {
        visit({ namespace: e.namespace, name: e.name, mentions: (...texts) => texts.length > 0 && pattern(texts).test(e.bytes.toString('latin1')), object: () => parse(e.bytes) });
      }
    },
    create: async (type, obj, subresource) => subresource
      ? createSub(type, obj.metadata?.namespace ?? '', obj.metadata?.name ?? '', subresource, obj, SYSTEM_USER)
      : parse(await registry().createObject(target(type, obj.metadata?.namespace ?? '', obj.metadata?.name ?? ''), obj, SYSTEM_USER, false)),
    update: async (type, obj, subresource = '') => {
      const t = target(type, obj.metadata?.namespace ?? '', obj.metadata?.name ?? '', subresource);
      const { bytes } = await registry().updateObject(t, SYSTEM_USER, false, () => JSON.parse(JSON.stringify(obj)), obj.metadata?.resourceVersion);
      return parse(bytes);
    },
    delete: async (type, namespace, name, opts = {}) => {
      try {
        const r = await registry().deleteObject(target(type, namespace, name), SYSTEM_USER, opts);
        return r.obj;
      } catch (e) {
        if (isStatusError(e) && e.code === 404) return undefined;
        throw e;
      }
    },
    watch: (type, listener, only) => watchers.add(type, listener, only),
  };
}
