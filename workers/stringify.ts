// JSON.stringify in time slices, for the event loop (a large write's stored text) and for what it
// sends the worker pool (a large task as text): the same text, with turns for other requests between.

/** When to give the event loop a turn (kernel/watch/slicer.ts's Slicer is one). */
export interface SliceClock { due(): boolean; pause(): Promise<void> }

/** A clock of 8 ms slices. */
export function timeSlices(budgetMs = 8): SliceClock {
  let since = performance.now();
  return {
    due: () => performance.now() - since >= budgetMs,
    pause: async () => { await new Promise((resolve) => setImmediate(resolve)); since = performance.now(); },
  };
}

/**
 * JSON.stringify of a decoded JSON value (plain objects, arrays, strings, numbers, booleans, null),
 * written in time slices: the same text, but an object of tens of thousands of keys no longer holds
 * the event loop while it is written. Anything else (toJSON, a Date) is left to JSON.stringify whole.
 */
export async function stringifySliced(value: unknown, slicer: SliceClock = timeSlices()): Promise<string> {
  const out: string[] = [];
  let since = 0;
  // Every member is written by JSON.stringify, but for plain objects and arrays, which are walked here.
  const walked = (v: unknown): v is object => v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
  const write = async (v: unknown): Promise<void> => {
    if (!walked(v)) {
      out.push(JSON.stringify(v) ?? 'null');
    } else if (Array.isArray(v)) {
      out.push('[');
      for (let i = 0; i < v.length; i++) {
        if (i) out.push(',');
        // As JSON.stringify: what has no JSON form is null inside an array.
        if (walked(v[i])) await write(v[i]);
        else out.push(JSON.stringify(v[i]) ?? 'null');
        if (++since % 256 === 0 && slicer.due()) await slicer.pause();
      }
      out.push(']');
    } else {
      // Runs of members that are not walked are written by JSON.stringify in batches (a contiguous
      // run keeps the object's key order); a batch object without a prototype takes "__proto__" as a key.
      out.push('{');
      let sep = '';
      let batch: Record<string, unknown> = Object.create(null);
      let count = 0;
      const flush = () => {
        const text = JSON.stringify(batch);
        if (text.length > 2) { out.push(sep, text.slice(1, -1)); sep = ','; }
        batch = Object.create(null);
        count = 0;
      };
      for (const k of Object.keys(v)) {
        const item = (v as Record<string, unknown>)[k];
        if (!walked(item)) {
          batch[k] = item;
          if (++count === 512) { flush(); if (slicer.due()) await slicer.pause(); }
          continue;
        }
        flush();
        out.push(sep, JSON.stringify(k), ':');
        sep = ',';
        await write(item);
        if (++since % 256 === 0 && slicer.due()) await slicer.pause();
      }
      flush();
      out.push('}');
    }
  };
  await write(value);
  return out.join('');
}
