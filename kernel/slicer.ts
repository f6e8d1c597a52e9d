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
