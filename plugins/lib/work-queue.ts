// A small keyed work queue for controllers: keys marked dirty are handed to `work` in batches after
// a short delay, one batch at a time; a key that fails with a conflict is tried again.
export class WorkQueue {
  private dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  /** When the pending batch runs (ms): a sooner add brings it forward. */
  private due = 0;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private work: (key: string) => Promise<void>, private onError: (key: string, e: unknown) => void, private delayMs = 20) {}

  add(key: string, delayMs = this.delayMs): void {
    if (this.stopped) return;
    this.dirty.add(key);
    // a key wanted sooner than the pending batch (a long look-again delay) brings the batch forward;
    // keys that run early are looked at again by their own later add
    const due = Date.now() + delayMs;
    if (this.timer && due >= this.due) return;
    if (this.timer) clearTimeout(this.timer);
    this.due = due;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const batch = [...this.dirty];
      this.dirty.clear();
      this.running = this.running.then(async () => {
        for (const k of batch) {
          try { await this.work(k); } catch (e) {
            // Raced with another writer: look again a little later.
            if ((e as { code?: number }).code === 409) this.add(k, 200);
            else this.onError(k, e);
          }
        }
      });
    }, delayMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
