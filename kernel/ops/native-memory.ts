// Memory the C heap holds free goes back to the system. Each TLS connection's OpenSSL state (about
// 50 KiB on Node's own TLS stack) is malloc'd; when the connection closes glibc keeps what it freed
// unless it lies at the top of its heap, so 10,000 idle connections that came and went left an empty
// server at 580 MiB instead of 115 (docs/operations.md, "Idle connections"). glibc's malloc_trim
// gives back every free page; the native helper (native/malloc-trim.c) runs it on a thread of its
// own, every PERIOD_MS, when the heap holds at least MIN_FREE_BYTES free. One schedule per process:
// the C heap is the process's, whatever number of servers it runs.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** How often the C heap is looked at (a look with little free costs ~1 ms on its thread; a trim of 250 MiB, ~20 ms). */
const PERIOD_MS = Number(process.env.CAPI_TRIM_PERIOD_MS) || 10_000;
/** Free bytes in the C heap below which nothing is given back (a few MiB come and go with ordinary requests). */
const MIN_FREE_BYTES = 16 * 1024 * 1024;

interface TrimModule { trim(minFreeBytes: number): boolean; lastPass(): [number, number, number] }

/** The last finished pass: what it found free, how long it took, whether it gave memory back. */
export interface TrimPass { freeBytes: number; micros: number; trimmed: boolean }

const file = new URL('./native/malloc-trim.node', import.meta.url);
let mod: TrimModule | undefined | null;
/** The native helper, or why it is absent (not built: no C compiler or no glibc at build time). */
export function nativeTrim(): TrimModule | string {
  if (mod === undefined) {
    try {
      mod = existsSync(file) ? (createRequire(import.meta.url)(fileURLToPath(file)) as TrimModule) : null;
    } catch (e) {
      mod = null;
      return `it does not load: ${(e as Error).message}`;
    }
  }
  return mod ?? 'it was not built (npm run build needs a C compiler and glibc)';
}

let users = 0;
let timer: NodeJS.Timeout | undefined;
let report: ((p: TrimPass) => void) | undefined;

/**
 * Starts the process's schedule (the first caller's `onPass` hears of each pass that gave memory
 * back); returns its stop, or why the helper is absent.
 */
export function returnFreedMemory(onPass?: (p: TrimPass) => void, periodMs = PERIOD_MS, minFreeBytes = MIN_FREE_BYTES): (() => void) | string {
  const m = nativeTrim();
  if (typeof m === 'string') return m;
  users++;
  report ??= onPass;
  let reported = 0;
  timer ??= setInterval(() => {
    // the previous pass has finished by now (or still runs: then this look is skipped)
    const [freeBytes, micros, trimmed] = m.lastPass();
    if (trimmed && micros !== reported) {
      reported = micros;
      try { report?.({ freeBytes, micros, trimmed: true }); } catch { /* a report never stops the schedule */ }
    }
    m.trim(minFreeBytes);
  }, periodMs).unref();
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    if (--users > 0) return;
    clearInterval(timer);
    timer = undefined;
    report = undefined;
  };
}
