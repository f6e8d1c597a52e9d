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
