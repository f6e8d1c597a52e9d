// Cooperative time slicing for loops over many items on the event loop (Table rows, list items):
// the loop gives other requests a turn whenever it has run for `budgetMs`, so one large answer never
// holds the event loop for long.
export class Slicer {
  private since = performance.now();
  constructor(private readonly budgetMs = 8) {}

  /** Whether the loop has used its slice; cheap enough to ask on every item. */
  due(): boolean { return performance.now() - this.since >= this.budgetMs; }

  /** Lets the event loop run (timers, I/O, other requests), then starts a new slice. */
  async pause(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

/** Lets the event loop run once (timers, I/O, other requests): between long steps of one large write. */
export const giveTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Joins pieces into one buffer of its own memory (so it can be moved to a worker), copying in time slices. */
export async function joinSliced(pieces: Iterable<Uint8Array>, total: number, slicer = new Slicer()): Promise<Buffer> {
  const out = Buffer.allocUnsafeSlow(total);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
    if (slicer.due()) await slicer.pause();
  }
  return out;
}

/**
 * JSON.stringify of a decoded JSON value (plain objects, arrays, strings, numbers, booleans, null),
 * written in time slices: the same text, but an object of tens of thousands of keys no longer holds
 * the event loop while it is written. Anything else (toJSON, a Date) is left to JSON.stringify whole.
 */
export async function stringifySliced(value: unknown, slicer = new Slicer()): Promise<string> {
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
