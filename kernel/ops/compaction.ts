// History past the retention window (--etcd-compaction-interval, storage option retentionSeconds,
// default 5 minutes; 0 turns it off, as in the reference): the cache's in-memory history is trimmed,
// and the store is compacted to the revision it had reached a window ago. Runs every quarter of the
// window, between 250 ms and 10 s. History the cache dropped to keep within its bounds (bytes and
// events, kernel/store/cache.ts) is compacted away in the store at once, so a watch from before it
// gets 410 Expired rather than a replay from disk.
import type { StorageBackend } from '../contracts/index.js';
import { HISTORY_DEFAULTS } from '../store/cache.js';

const MAX_INTERVAL_MS = 10_000;

export interface CompactionOptions {
  retentionSeconds: number;
  cache: { trim(olderThanMs: number): void; boundFloor: number; onBoundsTrimmed: () => void };
  /** The store to compact; without it (a read loop, whose writer compacts) only the cache is trimmed. */
  backend?: StorageBackend;
  /** After each compaction of the store, or its failure. */
  compacted?: (error?: unknown) => void;
}

/** The history's bounds from the storage options historyMaxEvents and historyMaxBytes (read by the kernel, as retentionSeconds is). */
export function historyBounds(options: Record<string, unknown> = {}): { maxEvents: number; maxEventBytes: number } {
  return { maxEvents: Number(options.historyMaxEvents ?? HISTORY_DEFAULTS.maxEvents), maxEventBytes: Number(options.historyMaxBytes ?? HISTORY_DEFAULTS.maxEventBytes) };
}

/** Starts the timer; returns what stops it. */
export function startCompaction(o: CompactionOptions): () => void {
  const retention = o.retentionSeconds * 1000;
  if (!(retention > 0)) return () => {};
  // the store's revision at each tick: the oldest sample older than the window is the target
  const samples: { at: number; rev: number }[] = [];
  const tick = async () => {
    const t = Date.now();
    o.cache.trim(t - retention);
    const b = o.backend;
    if (!b) return;
    samples.push({ at: t, rev: b.currentRevision() });
    let target = o.cache.boundFloor;
    while (samples.length && samples[0].at <= t - retention) target = Math.max(target, samples.shift()!.rev);
    if (target <= b.compactedRevision()) return;
    try {
      await b.compact(target);
      o.compacted?.();
    } catch (e) {
      o.compacted?.(e);
    }
  };
  // after the commit being applied, not inside it
  o.cache.onBoundsTrimmed = () => void setImmediate(() => void tick());
  const timer = setInterval(() => void tick(), Math.max(250, Math.min(MAX_INTERVAL_MS, retention / 4)));
  timer.unref();
  return () => { clearInterval(timer); o.cache.onBoundsTrimmed = () => {}; };
}
