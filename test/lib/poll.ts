// Polling for tests: wait until the server shows what it eventually must, or a deadline passes.
// The default deadline is generous: it only bounds a failing test, and a busy machine is slow.

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls `fn` until `ok` holds for its value or `ms` pass; returns the last value. */
export async function until<T>(fn: () => T | Promise<T>, ok: (v: T) => boolean, ms = 60_000, step = 50): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await pause(step);
  }
}

/** Calls `fn` until it returns something other than undefined, or `ms` pass. */
export const untilDefined = <T>(fn: () => Promise<T | undefined>, ms = 60_000): Promise<T | undefined> => until(fn, (v) => v !== undefined, ms);

/** Whether `check` came to hold within `ms` (an in-memory predicate or a request). */
export const eventually = (check: () => boolean | Promise<boolean>, ms = 60_000, step = 20): Promise<boolean> => until(check, Boolean, ms, step);
