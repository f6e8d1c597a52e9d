// Memory after a burst of writes. Each write leaves garbage (its request, its records, the objects
// that were in flight while its batch synced) and the V8 heap grows into room for it; an idle Node
// process keeps both: V8's own memory reducer did not run in 30 s of idleness (measured), the young
// generation stays at its largest and the old one half empty. Two full collections once the writes
// have stopped give them back: `npm run bench -- memory`, 20 s after the fill, 10,000 ConfigMaps of
// 1 KiB 132-139 MiB and 100,000 321-350 MiB, against 170-195 and 385-502 read at once (docs/benchmarks.md).
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Logger } from '../contracts/observe.js';
import { returnFreedMemory } from './native-memory.js';

/** The writes stop for this long before the collection runs. */
const QUIET_MS = 2_000;
/** Revisions since the last collection that make one worth its pause (start-up counts as a burst). */
const MIN_REVISIONS = 1_000;
/**
 * The quiet ticks at which a burst's collections run. The first frees the garbage. The last also
 * compacts the old generation (V8 otherwise leaves pages half empty: 85 MiB live in 174 MiB at
 * 100,000 objects), and comes more than 5 s after the first: V8 shrinks the young generation only
 * in a collection that finds allocation slow over its last 5 s.
 */
const PASSES_AT = [1, 4];
/**
 * Above this much live heap a full collection holds the event loop too long to take unasked (the
 * pause grows with the heap: 38-123 ms at 10,000 objects, 114-284 ms at 100,000 on this 2-core
 * machine under load): then V8 is left to its own pace. About 250,000 objects of 1 KiB.
 */
const MAX_HEAP_BYTES = 256 * 1024 * 1024;

/**
 * The bound of a semi-space of the young generation (V8's own: 16 MiB on 64-bit machines). Loading
 * the modules at start-up grows it to 8 MiB already, before any code could bound it.
 */
const MAX_SEMI_SPACE_BYTES = 8 * 1024 * 1024;
/** A full collection's next one comes once the old generation has grown by this share of what it kept (V8: 10-300 %, by its own measure of speed). */
const HEAP_GROWING_PERCENT = 50;

let collect: (() => void) | undefined;
/** V8's gc() without starting Node with --expose-gc: the flag exposes it to contexts made after it is set. */
function fullGc(): () => void {
  if (!collect) {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('typeof gc === "function" ? gc : undefined') as (() => void) | undefined;
    // a Node.js whose V8 refuses the flag at run time: no collections, never a failure
    collect = gc ?? (() => {});
  }
  return collect;
}

export interface Settled { ms: number; heapBefore: number; heapAfter: number; compact: boolean }

/**
 * Watches the store's revision (`rev`) once per QUIET_MS: once it has moved by at least
 * MIN_REVISIONS since the last collections (or none ran since start-up) and then stopped, runs the
 * PASSES_AT full garbage collections while no write comes. Each pause is one collection's (see
 * docs/operations.md, "Memory after writes"); they come only after QUIET_MS without a write, once
 * per burst.
 */
export function settleAfterWrites(rev: () => number, done: (s: Settled) => void = () => {}, quietMs = QUIET_MS, maxHeapBytes = MAX_HEAP_BYTES): () => void {
  let last = rev();
  /** Ticks since the revision last moved. */
  let quiet = 0;
  /** The revision at which the last settling began (none yet: start-up counts as a burst). */
  let base: number | undefined;
  /** Index in PASSES_AT of the next pass of the settling under way; -1 when none is. */
  let next = -1;
  const timer = setInterval(() => {
    const now = rev();
    if (now !== last) { last = now; quiet = 0; return; }
    quiet++;
    // a new burst (re)starts the passes; a trickle of writes never does, nor repeats one
    if (base === undefined || now - base >= MIN_REVISIONS) { base = now; next = 0; }
    if (next < 0 || quiet < PASSES_AT[next]) return;
    next = next + 1 < PASSES_AT.length ? next + 1 : -1;
    // the heap's own figures: process.memoryUsage() opens /proc/self/stat for RSS, and throws
    // EMFILE when connections have taken every file descriptor
    const heapBefore = v8.getHeapStatistics().used_heap_size;
    if (heapBefore > maxHeapBytes) { next = -1; return; }
    const t0 = performance.now();
    const compact = next < 0;
    if (compact) v8.setFlagsFromString('--compact-on-every-full-gc');
    try { fullGc()(); } finally { if (compact) v8.setFlagsFromString('--no-compact-on-every-full-gc'); }
    try { done({ ms: performance.now() - t0, heapBefore, heapAfter: v8.getHeapStatistics().used_heap_size, compact }); } catch { /* a report must never stop the server */ }
  }, quietMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Bounds on the V8 heap while writes come (the collections above run only once they stop). At V8's
 * own pace, right at the end of a fill of 10,000 ConfigMaps of 1 KiB (31 MiB live): the young
 * generation at its largest (2 x 16 MiB, 1 MiB once settled) and the old one at 75 MiB (promoted
 * garbage is let grow to about 2.5 times the live heap before a full collection). Both bounds hold
 * for the whole process: the entry point sets them, once. Each returns its undoing.
 */

/**
 * The old generation's limit after a full collection is what it kept plus `growingPercent`. Set once
 * start-up is done: loading a large store grows the live heap, and with the bound it took 10 % more
 * CPU (100,000 objects; start-up's garbage is collected once it is loaded, above).
 */
export function boundOldGeneration(growingPercent = HEAP_GROWING_PERCENT): () => void {
  v8.setFlagsFromString(`--heap-growing-percent=${growingPercent}`);
  return () => v8.setFlagsFromString('--heap-growing-percent=0');
}

/**
 * A semi-space of the young generation grows to at most `maxSemiSpaceBytes` (requests in flight take
 * far less: short-lived garbage still dies there).
 */
export function boundYoungGeneration(maxSemiSpaceBytes = MAX_SEMI_SPACE_BYTES): () => void {
  // --max-semi-space-size only counts when the heap is made, before any script runs; the growth
  // factor is read at each growth: it is 1 (no growth) while a semi-space is at the bound, and V8's
  // 2 once a collection shrank it (V8 shrinks it when allocation slows down). It is looked at after
  // each collection, between turns of the event loop: one long synchronous stretch can still grow
  // it past the bound (the start-up's, before this runs). V8 puts the factor back to 2 when a
  // thread's heap is made (a worker thread: measured), so it is set again after every collection
  // at the bound: at most one growth slips through.
  let growing: boolean | undefined;
  const check = () => {
    const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (!young) return;
    // space_size is both semi-spaces' committed memory
    const grow = young.space_size / 2 < maxSemiSpaceBytes;
    if (grow && growing) return;
    growing = grow;
    v8.setFlagsFromString(`--semi-space-growth-factor=${grow ? 2 : 1}`);
  };
  const gcs = new PerformanceObserver(check);
  gcs.observe({ entryTypes: ['gc'] });
  check();
  return () => {
    gcs.disconnect();
    v8.setFlagsFromString('--semi-space-growth-factor=2');
  };
}

/**
 * The writer loop's memory upkeep: the collections after a burst of writes (above; `settleFront`
 * collects the TLS front thread's heap with each) and the C heap's free memory given back to the
 * system (native-memory.ts). Returns the stop of both.
 */
export function upkeepMemory(rev: () => number, log: Logger, settleFront?: (compact: boolean) => void): () => void {
  const stopSettling = settleAfterWrites(rev, (m) => {
    settleFront?.(m.compact);
    log.v(2, 'memory settled after writes', { ms: Math.round(m.ms), heapUsedMiB: [m.heapBefore, m.heapAfter].map((b) => Math.round(b / 1048576)) });
  });
  const stopTrimming = returnFreedMemory((p) => log.v(2, 'freed C memory returned to the system', { freeMiB: Math.round(p.freeBytes / 1048576), ms: Math.round(p.micros / 1000) }));
  if (typeof stopTrimming === 'string') log.info(`memory the C heap frees (closed connections' TLS state) stays in the process: the native helper kernel/ops/native/malloc-trim.c ${stopTrimming.replace(/^it /, '')}`);
  return () => { stopSettling(); if (typeof stopTrimming !== 'string') stopTrimming(); };
}
