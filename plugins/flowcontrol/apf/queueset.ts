// Fair queuing for one priority level: a number of seats, and queues that requests wait in when the
// seats are taken. A flow (flow schema + distinguisher) is dealt a hand of queues by shuffle sharding
// and joins the shortest of them, so one heavy flow fills only its own hand; seats are handed out in
// order of virtual start time (start-time fair queuing, counted in seats), so each non-empty queue
// gets its turn in proportion to the seats its requests take. Pure logic: no I/O, time is passed in.

export interface QueueConfig {
  /** Seats this level may use at once. */
  seats: number;
  /** 0 queues: the Reject limit response (refuse as soon as the seats are taken). */
  queues: number;
  handSize: number;
  /** Requests one queue may hold. */
  queueLengthLimit: number;
}

interface Waiter {
  seats: number;
  queue: number;
  /** Virtual start tag (seats), fixed when the request joins its queue. */
  start: number;
  resolve(ok: boolean): void;
  timer?: ReturnType<typeof setTimeout>;
}

/** `width`: the seats the request takes (and gives back to release), its seats capped at the level's limit when it asked. */
export type Admission = { now: true; width: number } | { now: false; wait: Promise<boolean>; width: number } | { rejected: true };

/** A level's seat demand (seats executing plus seats queued) over one adjustment period. */
export interface DemandStats {
  /** Time-weighted mean. */
  avg: number;
  /** Time-weighted standard deviation. */
  stdDev: number;
  /** The most seats demanded at any moment. */
  high: number;
}

export class QueueSet {
  private inUse = 0;
  private waiting = 0;
  /** Seats the queued requests will take. */
  private waitingSeats = 0;
  // The seat demand's integral (and of its square) since the period began, for DemandStats.
  private demandSince: number;
  private demandAt: number;
  private demandNow = 0;
  private demandSum = 0;
  private demandSumSq = 0;
  private demandHigh = 0;
  private queues: Waiter[][];
  /** Virtual finish tag of each queue's last request. */
  private finish: number[];
  /** Virtual time: the start tag of the last request given seats. */
  private vt = 0;

  constructor(private cfg: QueueConfig, private readonly clock: () => number = () => performance.now()) {
    this.queues = Array.from({ length: cfg.queues }, () => []);
    this.finish = new Array(cfg.queues).fill(0);
    this.demandSince = this.demandAt = clock();
  }

  /** Seats this level may use now (its current concurrency limit). */
  get seats(): number { return this.cfg.seats; }

  /** Records the seat demand after a change (call after every change to inUse or waitingSeats). */
  private noteDemand(): void {
    const now = this.clock();
    const dt = now - this.demandAt;
    this.demandSum += this.demandNow * dt;
    this.demandSumSq += this.demandNow * this.demandNow * dt;
    this.demandAt = now;
    this.demandNow = this.inUse + this.waitingSeats;
    if (this.demandNow > this.demandHigh) this.demandHigh = this.demandNow;
  }

  /** The seat demand since the last call (or since the start), and a new period begins. */
  takeDemandStats(): DemandStats {
    this.noteDemand();
    const span = this.demandAt - this.demandSince;
    const avg = span > 0 ? this.demandSum / span : this.demandNow;
    const variance = span > 0 ? Math.max(0, this.demandSumSq / span - avg * avg) : 0;
    const stats = { avg, stdDev: Math.sqrt(variance), high: this.demandHigh };
    this.demandSince = this.demandAt;
    this.demandSum = this.demandSumSq = 0;
    this.demandHigh = this.demandNow;
    return stats;
  }

  get executing(): number { return this.inUse; }
  get queued(): number { return this.waiting; }

  /** A new concurrency limit (seats borrowed or lent); waiting requests take seats that became free. */
  setSeats(seats: number): void {
    this.cfg = { ...this.cfg, seats };
    this.dispatch();
  }

  /** New limits (a changed priority level); queued requests stay where they are. */
  reconfigure(cfg: QueueConfig): void {
    if (cfg.queues !== this.cfg.queues) {
      // a different number of queues deals different hands: requeue what waits, keeping arrival order
      const all = this.queues.flat().sort((a, b) => a.start - b.start);
      this.queues = Array.from({ length: cfg.queues }, () => []);
      this.finish = new Array(cfg.queues).fill(this.vt);
      this.cfg = cfg;
      this.waiting = 0;
      this.waitingSeats = 0;
      for (const w of all) {
        if (cfg.queues === 0) { clearTimeout(w.timer); w.resolve(false); continue; }
        w.queue = w.queue % cfg.queues;
        this.queues[w.queue].push(w);
        this.waiting++;
        this.waitingSeats += w.seats;
      }
      this.noteDemand();
    } else {
      this.cfg = cfg;
    }
    this.dispatch();
  }

  /**
   * A request of `seats` from the flow `flowHash` asks to run. It runs now when seats are free and
   * nobody waits; else it queues (or is rejected: Reject level, or its queue is full). A queued
   * request that has not run within waitMs is rejected.
   */
  admit(flowHash: number, seats: number, waitMs: number): Admission {
    // a request wider than the level still runs alone, as the reference caps it at the level's limit
    const width = Math.min(seats, Math.max(1, this.cfg.seats));
    if (this.waiting === 0 && this.inUse + width <= this.cfg.seats) {
      this.inUse += width;
      this.noteDemand();
      return { now: true, width };
    }
    if (this.cfg.queues === 0) return { rejected: true };
    const q = this.shortestInHand(flowHash);
    if (this.queues[q].length >= this.cfg.queueLengthLimit) return { rejected: true };
    const start = Math.max(this.vt, this.finish[q]);
    this.finish[q] = start + width;
    let waiter!: Waiter;
    const wait = new Promise<boolean>((resolve) => {
      waiter = { seats: width, queue: q, start, resolve };
    });
    waiter.timer = setTimeout(() => this.timeout(waiter), waitMs);
    waiter.timer.unref?.();
    this.queues[q].push(waiter);
    this.waiting++;
    this.waitingSeats += width;
    this.noteDemand();
    return { now: false, wait, width };
  }

  /** A request that ran gives its seats back (the width it was admitted with); waiting requests take them in fair order. */
  release(width: number): void {
    this.inUse -= width;
    if (this.inUse < 0) this.inUse = 0;
    this.noteDemand();
    this.dispatch();
  }

  private timeout(w: Waiter): void {
    const q = this.queues[w.queue];
    const i = q.indexOf(w);
    if (i < 0) return;
    q.splice(i, 1);
    this.waiting--;
    this.waitingSeats -= w.seats;
    this.noteDemand();
    w.resolve(false);
  }

  private dispatch(): void {
    while (this.waiting > 0) {
      let best = -1;
      for (let i = 0; i < this.queues.length; i++) {
        const head = this.queues[i][0];
        if (head && (best < 0 || head.start < this.queues[best][0].start)) best = i;
      }
      const w = this.queues[best][0];
      if (this.inUse + w.seats > this.cfg.seats && this.inUse > 0) return;
      this.queues[best].shift();
      this.waiting--;
      this.waitingSeats -= w.seats;
      this.inUse += w.seats;
      this.noteDemand();
      this.vt = Math.max(this.vt, w.start);
      clearTimeout(w.timer);
      w.resolve(true);
    }
  }

  /** Shuffle sharding: the flow's hash deals `handSize` distinct queues; the one with the fewest waiting seats wins. */
  private shortestInHand(hash: number): number {
    const n = this.cfg.queues;
    const hand = Math.min(this.cfg.handSize, n);
    const dealt: number[] = [];
    let h = hash >>> 0;
    let best = -1;
    let bestLen = Infinity;
    for (let i = 0; i < hand; i++) {
      // deal card i from the queues not dealt yet, drawing digits of the hash in base (n - i)
      const left = n - i;
      let pick = h % left;
      h = (Math.floor(h / left) ^ (Math.imul(h, 0x9e3779b1) >>> 7)) >>> 0;
      for (const d of [...dealt].sort((a, b) => a - b)) if (pick >= d) pick++;
      dealt.push(pick);
      const len = this.queues[pick].reduce((a, w) => a + w.seats, 0);
      if (len < bestLen) { best = pick; bestLen = len; }
    }
    return best;
  }
}

/** FNV-1a over a string: the flow's hash for shuffle sharding. */
export function flowHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
