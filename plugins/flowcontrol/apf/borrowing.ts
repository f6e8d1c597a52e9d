// Borrowing of seats between priority levels (the reference's KEP-1040 design, 1.28 behaviour):
// each limited level has a nominal concurrency limit from its shares; `lendablePercent` of it may go
// to other levels and `borrowingLimitPercent` of it (no bound when unset) may come from them. Every
// adjustment period the seats are dealt again: a level's seat demand (executing plus queued seats,
// smoothed over periods) is its target, bounded below by what it may not lend (and by its recent
// peak demand, up to its nominal limit) and above by what it may borrow; one fair fraction of every
// target is found so that the levels together keep the server's total. Pure logic: no timers here.

/** Weight of the previous smoothed demand (per period) in the next one. */
export const SMOOTHING = 0.977;

export interface LevelBounds {
  nominal: number;
  /** Seats the level keeps whatever others want: nominal less the lendable part. */
  min: number;
  /** Seats the level may reach by borrowing: nominal plus the borrowing limit (Infinity when unset). */
  max: number;
}

/** A level's bounds from its nominal limit and the spec's lendablePercent / borrowingLimitPercent. */
export function boundsOf(nominal: number, lendablePercent = 0, borrowingLimitPercent?: number): LevelBounds {
  const lendable = Math.round((nominal * Math.min(100, Math.max(0, lendablePercent))) / 100);
  const borrowing = borrowingLimitPercent === undefined || borrowingLimitPercent === null ? Infinity : Math.round((nominal * Math.max(0, borrowingLimitPercent)) / 100);
  return { nominal, min: nominal - lendable, max: nominal + borrowing };
}

export interface AllocItem {
  lower: number;
  upper: number;
  target: number;
}

/**
 * Finds the fair fraction f such that the sum over items of clamp(f × target, lower, upper) is
 * `total`, and returns each item's share at f (not rounded) with f. When even the lower bounds
 * exceed the total, each gets its lower bound; when no f reaches it, each gets all it may use.
 */
export function allocate(total: number, items: AllocItem[]): { shares: number[]; fairFrac: number } {
  const at = (f: number) => items.map((i) => Math.min(i.upper, Math.max(i.lower, f * i.target)));
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  if (sum(items.map((i) => i.lower)) >= total) return { shares: items.map((i) => i.lower), fairFrac: 0 };
  const most = items.map((i) => (i.target > 0 ? i.upper : i.lower));
  if (sum(most) <= total) return { shares: most, fairFrac: Infinity };
  let lo = 0;
  let hi = 1;
  while (sum(at(hi)) < total) hi *= 2;
  for (let n = 0; n < 64 && hi - lo > 1e-9 * hi; n++) {
    const mid = (lo + hi) / 2;
    if (sum(at(mid)) < total) lo = mid;
    else hi = mid;
  }
  return { shares: at(hi), fairFrac: hi };
}

/** One level's input to a round of dealing, and what it keeps between rounds. */
export interface BorrowingLevel {
  bounds: LevelBounds;
  /** Smoothed seat demand, carried from round to round. */
  smoothed: number;
}

/**
 * One round: from each level's demand over the period ending now, its new seat limit (whole
 * seats). `levels[i]` is updated in place (its smoothed demand).
 */
export function dealSeats(levels: BorrowingLevel[], demand: { avg: number; stdDev: number; high: number }[]): { seats: number[]; targets: number[]; fairFrac: number } {
  const items: AllocItem[] = levels.map((l, i) => {
    const d = demand[i];
    const envelope = d.avg + d.stdDev;
    l.smoothed = Math.max(envelope, SMOOTHING * l.smoothed + (1 - SMOOTHING) * envelope);
    // What the level recently needed (up to its nominal limit) is not lent away.
    const lower = Math.max(l.bounds.min, Math.min(l.bounds.nominal, Math.ceil(d.high)));
    return { lower, upper: l.bounds.max, target: Math.max(lower, l.smoothed) };
  });
  const total = levels.reduce((a, l) => a + l.bounds.nominal, 0);
  const { shares, fairFrac } = allocate(total, items);
  return { seats: shares.map((s, i) => Math.max(items[i].lower, Math.round(s))), targets: items.map((i) => i.target), fairFrac };
}
