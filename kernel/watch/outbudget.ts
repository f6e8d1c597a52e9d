// The server-wide budget for queued output: bytes written to clients that are not reading (a
// stalled watch, a large list answer to a client that stopped) stay in memory until the socket
// drains. Each watch has its own cap; this bounds their sum. Over the budget, the streams holding
// the most are closed first until the total is back under three quarters of it (a watch's client
// resumes from the last revision it received, as after any closed watch; a list's client retries).
// Streams backed up for at least STALLED_MS are closed first: a client that reads, but whose socket
// was momentarily full when a large piece was written, is not taken for one that stopped. Younger
// watches are closed when those are not enough, so what watches queue never stays above the budget.

import type { KResponse } from '../http/types.js';
import { Slicer } from './slicer.js';

export interface OutputHolder {
  /** What it is, for the log: "watch /api/v1/pods", "list /api/v1/configmaps", ... */
  readonly what: string;
  readonly kind: 'watch' | 'list';
  readonly group: string;
  readonly resource: string;
  /** Bytes queued on its socket now. */
  queued: number;
  /** When its socket became backed up (performance.now()), 0 while it is not. */
  since?: number;
  close(): void;
}

/** How long a stream's socket must have been backed up before the server budget may close it. */
export const STALLED_MS = 1000;

export interface ShedReport { holder: OutputHolder; queued: number; total: number; reason: 'stream budget' | 'server budget' }

export class OutputBudget {
  private holders = new Set<OutputHolder>();
  /** Bytes queued across all holders. */
  total = 0;
  private recheck: ReturnType<typeof setTimeout> | undefined;

  constructor(readonly limitBytes: number, private readonly onShed: (r: ShedReport) => void = () => {}, private readonly stalledMs = STALLED_MS) {}

  add(h: OutputHolder): void { this.holders.add(h); }

  /** How many holders have bytes queued now. */
  backedUp(): number {
    let n = 0;
    for (const h of this.holders) if (h.queued > 0) n++;
    return n;
  }

  /** Counts bytes a holder's socket did not take; sheds the largest stalled holders when over the budget. */
  queue(h: OutputHolder, bytes: number): void {
    if (!h.since) h.since = performance.now();
    h.queued += bytes;
    this.total += bytes;
    // Shedding goes down to three quarters of the budget, so the holders are sorted once per quarter
    // of the budget queued, not once per event per stalled stream (nor while young lists wait for a recheck).
    if (this.total > this.limitBytes && !this.recheck) this.shed();
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
    h.since = 0;
  }

  remove(h: OutputHolder): void {
    if (!this.holders.delete(h)) return;
    this.drained(h);
  }

  private shed(): void {
    const total = this.total;
    const target = this.limitBytes * 0.75;
    const now = performance.now();
    const worst = [...this.holders].filter((h) => h.queued > 0).sort((a, b) => b.queued - a.queued);
    const close = (h: OutputHolder) => {
      const queued = h.queued;
      this.remove(h);
      this.onShed({ holder: h, queued, total, reason: 'server budget' });
      h.close();
    };
    const spared: OutputHolder[] = [];
    let wait = Infinity;
    for (const h of worst) {
      if (this.total <= target) break;
      const stalledFor = now - (h.since || now);
      if (stalledFor < this.stalledMs) { spared.push(h); wait = Math.min(wait, this.stalledMs - stalledFor); continue; }
      close(h);
    }
    // Not enough streams backed up for STALLED_MS: the largest younger watches go too, since what a
    // watch queues grows with every event (its client resumes from its last revision, as after any
    // closed watch). A list's answer is only as large as it is, and is left its STALLED_MS.
    for (const h of spared) {
      if (this.total <= target) break;
      if (h.kind === 'watch') close(h);
    }
    // Still over with young lists only: look again when the first of them has had its time.
    if (this.total > this.limitBytes && wait < Infinity && !this.recheck) {
      this.recheck = setTimeout(() => { this.recheck = undefined; if (this.total > this.limitBytes) this.shed(); }, Math.ceil(wait) + 1);
      this.recheck.unref?.();
    }
  }
}

/** Bytes handed to the socket at once when an answer is sent in pieces. */
export const PIECE_BYTES = 256 * 1024;

export interface SizedAnswer {
  code: number;
  headers: Record<string, string>;
  /** The body's length: the sum of the pieces. */
  total: number;
  /** The body: pieces made as they are needed (from the cached bytes of each object), or ... */
  pieces: Iterable<Uint8Array>;
  /**
   * ... true when the pieces were built for this answer alone (a YAML or Table list): then what has
   * not gone out yet is memory this client holds, counted while its socket is backed up. Pieces that
   * are the cache's own bytes cost nothing more than the one piece on its way.
   */
  built: boolean;
}

/**
 * Sends a large answer with backpressure: pieces are joined up to PIECE_BYTES and the next is taken
 * only once the socket took the last, in time slices so other requests get their turn. While the
 * socket is backed up, what this client holds counts in the server's output budget like a stalled
 * watch, and under pressure the largest holders are closed (the connection dropped: the answer is
 * cut short, which its client sees as an error and retries).
 */
export async function sendSized(res: KResponse, budget: OutputBudget, info: Pick<OutputHolder, 'what' | 'kind' | 'group' | 'resource'>, a: SizedAnswer): Promise<void> {
  let closed = res.aborted;
  let wake: () => void = () => {};
  const holder: OutputHolder = { ...info, queued: 0, close: () => { closed = true; res.close(); wake(); } };
  res.onClose(() => { closed = true; wake(); });
  res.onDrain(() => { budget.drained(holder); wake(); });
  if (closed) return;
  budget.add(holder);
  res.startSized(a.code, a.headers, a.total);
  let left = a.total;
  const slicer = new Slicer();
  const batch: Uint8Array[] = [];
  let batchBytes = 0;
  const flush = async () => {
    const out = batch.length === 1 ? batch[0] : Buffer.concat(batch, batchBytes);
    batch.length = 0;
    batchBytes = 0;
    left -= out.length;
    if (res.write(out)) return;
    // Backed up: what this client holds until the socket drains.
    budget.queue(holder, a.built ? out.length + left : out.length);
    if (closed) return;
    await new Promise<void>((resolve) => { wake = resolve; });
  };
  try {
    for (const p of a.pieces) {
      // A large piece goes out in PIECE_BYTES parts, so the socket is never handed more than that.
      for (let at = 0; at < p.length; at += PIECE_BYTES) {
        if (closed) return;
        const part = p.length <= PIECE_BYTES ? p : p.subarray(at, at + PIECE_BYTES);
        batch.push(part);
        batchBytes += part.length;
        if (batchBytes >= PIECE_BYTES) await flush();
        if (slicer.due()) await slicer.pause();
      }
    }
    if (batchBytes && !closed) await flush();
  } finally {
    budget.remove(holder);
  }
}
