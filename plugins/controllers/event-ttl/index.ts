// event-ttl: Events are deleted `ttlSeconds` after their last write (default 3600, the reference's
// --event-ttl of 1h, which it keeps as an etcd lease renewed by every write). Writes seen while the
// server runs are timed as they happen; an event found at start counts from the latest time it
// records (its managed fields' times, creation, lastTimestamp, eventTime, series), so a restart
// neither forgets old events nor keeps them alive longer than its own downtime.
//
// One queue ordered by expiry and one timer for its head: writes observed later always expire later,
// so appending keeps the order, and a key written again is recognised as stale when its old entry
// comes up. Deletion goes through the registry (watchers see DELETED) with the resourceVersion that
// expired as a precondition, so an event rewritten at that moment is kept.
import { CONTRACT_VERSION, type KObject, type PluginModule } from '../../../kernel/contracts/index.js';

interface Entry { key: string; at: number; rv: string }

/** The latest write time an event records, in ms (0 when it records none). */
export function recordedWrite(ev: KObject): number {
  const times: unknown[] = [ev.metadata?.creationTimestamp, ev.lastTimestamp, ev.eventTime, (ev.series as { lastObservedTime?: unknown } | undefined)?.lastObservedTime];
  for (const m of (ev.metadata?.managedFields ?? []) as { time?: unknown }[]) times.push(m.time);
  let latest = 0;
  for (const t of times) {
    const ms = typeof t === 'string' ? Date.parse(t) : NaN;
    if (ms > latest) latest = ms;
  }
  return latest;
}

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'event-ttl',
  create(options, host) {
    const events = host.type('', 'events')!;
    const ttl = (typeof options.ttlSeconds === 'number' && options.ttlSeconds > 0 ? options.ttlSeconds : 3600) * 1000;
    /** The expiry that counts for each key; queue entries with another are stale. */
    const current = new Map<string, Entry>();
    let queue: Entry[] = [];
    let head = 0;
    let timer: NodeJS.Timeout | undefined;
    let armedFor = Infinity;
    let unwatch = () => {};
    let stopped = false;
    const keyOf = (o: KObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

    const arm = () => {
      while (head < queue.length && current.get(queue[head].key) !== queue[head]) head++;
      if (head > 1024 && head * 2 > queue.length) { queue = queue.slice(head); head = 0; }
      const next = queue[head];
      if (stopped || !next || next.at >= armedFor) return;
      clearTimeout(timer);
      armedFor = next.at;
      timer = setTimeout(expire, Math.min(Math.max(0, next.at - Date.now()), 2 ** 31 - 1));
      timer.unref();
    };
    const expire = async () => {
      armedFor = Infinity;
      const now = Date.now();
      while (!stopped && head < queue.length && queue[head].at <= now) {
        const e = queue[head++];
        if (current.get(e.key) !== e) continue;
        current.delete(e.key);
        const slash = e.key.indexOf('/');
        try {
          await host.objects.delete(events, e.key.slice(0, slash), e.key.slice(slash + 1), { preconditions: { resourceVersion: e.rv } });
        } catch (err) {
          // 404: gone already; 409: written again, its new write is queued by the watch
          const code = (err as { code?: number }).code;
          if (code !== 404 && code !== 409) host.log.warn('event-ttl: could not delete an expired event', { event: e.key, error: String(err) });
        }
      }
      arm();
    };
    const written = (o: KObject, at: number) => {
      const e: Entry = { key: keyOf(o), at, rv: String(o.metadata?.resourceVersion ?? '') };
      current.set(e.key, e);
      queue.push(e);
    };

    return {
      async start() {
        unwatch = host.objects.watch(events, (type, o) => {
          if (type === 'DELETED') current.delete(keyOf(o));
          else written(o, Date.now() + ttl);
          arm();
        });
        // what is there at start, oldest first (none later than now, so the watch's entries append in order)
        const now = Date.now();
        const found = (await host.objects.list(events)).filter((o) => !current.has(keyOf(o)))
          .map((o) => ({ o, at: Math.min(recordedWrite(o), now) + ttl })).sort((a, b) => a.at - b.at);
        const live = queue.slice(head);
        queue = [];
        head = 0;
        for (const { o, at } of found) written(o, at);
        queue.push(...live);
        arm();
      },
      stop() {
        stopped = true;
        unwatch();
        clearTimeout(timer);
      },
    };
  },
};
export default plugin;
