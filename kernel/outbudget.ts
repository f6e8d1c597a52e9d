// The server-wide budget for queued output: bytes written to clients that are not reading (a
// stalled watch, an initial-state replay to a client that stopped) stay in memory until the socket
// drains. Each stream has its own cap; this bounds their sum. Over the budget, the streams holding
// the most are closed first until the total is back under three quarters of it (the client resumes
// from the last revision it received, as after any closed watch).

export interface OutputHolder {
  /** What it is, for the log: "watch /api/v1/pods", ... */
  readonly what: string;
  readonly group: string;
  readonly resource: string;
  /** Bytes queued on its socket now. */
  queued: number;
  close(): void;
}

export interface ShedReport { holder: OutputHolder; queued: number; total: number; reason: 'stream budget' | 'server budget' }

export class OutputBudget {
  private holders = new Set<OutputHolder>();
  /** Bytes queued across all holders. */
  total = 0;

  constructor(readonly limitBytes: number, private readonly onShed: (r: ShedReport) => void = () => {}) {}

  add(h: OutputHolder): void { this.holders.add(h); }

  /** Counts bytes a holder's socket did not take; sheds the largest holders when over the budget. */
  queue(h: OutputHolder, bytes: number): void {
    h.queued += bytes;
    this.total += bytes;
    if (this.total > this.limitBytes) this.shed();
  }

  /** Closes one holder that went over its own cap (reported like a shed one). */
  closeOver(h: OutputHolder): void {
    const queued = h.queued;
    this.remove(h);
    this.onShed({ holder: h, queued, total: this.total, reason: 'stream budget' });
    h.close();
  }

  /** The holder's socket drained. */
  drained(h: OutputHolder): void {
    this.total -= h.queued;
    h.queued = 0;
  }

  remove(h: OutputHolder): void {
    if (!this.holders.delete(h)) return;
    this.drained(h);
  }

  private shed(): void {
    const total = this.total;
    const target = this.limitBytes * 0.75;
    const worst = [...this.holders].sort((a, b) => b.queued - a.queued);
    for (const h of worst) {
      if (this.total <= target || h.queued === 0) break;
      const queued = h.queued;
      this.remove(h);
      this.onShed({ holder: h, queued, total, reason: 'server budget' });
      h.close();
    }
  }
}
