// One queue of pending writes per storage key. Writes to the same object run one after another, each
// reading the object its predecessor committed, so unconditional writers do not all build on the
// same stale version and then lose to each other: a conflict becomes a short wait instead of a
// retry storm. Writes to different keys do not wait for each other.

export class WriteQueue {
  private tails = new Map<string, Promise<void>>();

  /** Runs fn once every write queued before it on this key has finished (succeeded or failed). */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key);
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    this.tails.set(key, mine);
    try {
      if (before) await before;
      return await fn();
    } finally {
      done();
      if (this.tails.get(key) === mine) this.tails.delete(key);
    }
  }

  /** Keys with writes running or waiting (for metrics and tests). */
  get size(): number { return this.tails.size; }
}
