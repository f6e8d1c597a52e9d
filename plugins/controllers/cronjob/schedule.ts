// Cron schedules as the reference's controller reads them (its cron library's standard parser):
// five fields (minute hour day-of-month month day-of-week) with `*`/`?`, lists, ranges, steps and
// the JAN–DEC / SUN–SAT names; the @yearly … @hourly descriptors and `@every <duration>`; an
// optional CRON_TZ= or TZ= prefix. Times are found in the schedule's time zone (UTC when none).

/** A parsed schedule: the first time (ms since the epoch) strictly after `afterMs`, or undefined when none within five years. */
export interface Schedule { next(afterMs: number): number | undefined }

interface Bounds { min: number; max: number; names?: Record<string, number> }

const MONTH_NAMES = Object.fromEntries(['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'].map((n, i) => [n, i + 1]));
const DAY_NAMES = Object.fromEntries(['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'].map((n, i) => [n, i]));
const FIELDS: Bounds[] = [
  { min: 0, max: 59 }, { min: 0, max: 23 }, { min: 1, max: 31 }, { min: 1, max: 12, names: MONTH_NAMES }, { min: 0, max: 6, names: DAY_NAMES },
];

const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *', '@monthly': '0 0 1 * *', '@weekly': '0 0 * * 0', '@daily': '0 0 * * *', '@midnight': '0 0 * * *', '@hourly': '0 * * * *',
};

/** A field's allowed values, and whether it was written as a plain `*` or `?` (which matters for the day fields). */
interface Field { values: Set<number>; star: boolean }

function parseValue(s: string, b: Bounds): number {
  const named = b.names?.[s.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^\d+$/.test(s)) throw new Error(`failed to parse int from ${s}`);
  return Number(s);
}

/** One comma-separated part: `*`, `a`, `a-b`, each optionally `/step` (`a/step` runs to the maximum). */
function parseRange(part: string, b: Bounds, into: Set<number>): boolean {
  const [range, stepText, extra] = part.split('/');
  if (extra !== undefined) throw new Error(`too many slashes: ${part}`);
  const ends = range.split('-');
  if (ends.length > 2) throw new Error(`too many hyphens: ${part}`);
  let star = false;
  let lo: number, hi: number;
  if (ends[0] === '*' || ends[0] === '?') {
    if (ends.length > 1) throw new Error(`too many hyphens: ${part}`);
    [lo, hi, star] = [b.min, b.max, true];
  } else {
    lo = parseValue(ends[0], b);
    hi = ends.length === 2 ? parseValue(ends[1], b) : lo;
  }
  let step = 1;
  if (stepText !== undefined) {
    step = parseValue(stepText, { min: 0, max: 0 });
    if (step <= 0) throw new Error(`step of range should be a positive number: ${part}`);
    if (ends.length === 1 && !star) hi = b.max;
    // a stepped star is no longer "every value" for the day-matching rule
    if (step > 1) star = false;
  }
  if (lo < b.min) throw new Error(`beginning of range (${lo}) below minimum (${b.min}): ${part}`);
  if (hi > b.max) throw new Error(`end of range (${hi}) above maximum (${b.max}): ${part}`);
  if (lo > hi) throw new Error(`beginning of range (${lo}) beyond end of range (${hi}): ${part}`);
  for (let v = lo; v <= hi; v += step) into.add(v);
  return star;
}

function parseField(text: string, b: Bounds): Field {
  const values = new Set<number>();
  let star = false;
  for (const part of text.split(',')) star = parseRange(part, b, values) || star;
  return { values, star };
}

/** Wall-clock parts of an instant in a zone, read back as if UTC: the zone's local time in ms. */
function wallClock(tz: string): (ms: number) => number {
  if (tz === 'UTC') return (ms) => ms;
  const f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
  return (ms) => {
    const p = Object.fromEntries(f.formatToParts(ms).map((x) => [x.type, Number(x.value)]));
    return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) + (ms % 1000 + 1000) % 1000;
  };
}

/** The zone's offset from UTC at an instant (ms). */
export function zoneOffset(tz: string, ms: number): number {
  return wallClock(tz)(ms) - ms;
}

/** RFC 3339 (seconds) of an instant in a zone, with its offset (`Z` when zero), as Go formats it. */
export function formatInZone(ms: number, tz = 'UTC'): string {
  const s = Math.floor(ms / 1000) * 1000;
  const off = Math.round(zoneOffset(tz, s) / 60_000);
  const wall = new Date(s + off * 60_000).toISOString().slice(0, 19);
  if (off === 0) return `${wall}Z`;
  const a = Math.abs(off);
  return `${wall}${off < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const SEARCH_LIMIT = 5 * 366 * DAY;

/** The five-field schedule, searched field by field in the zone's wall-clock time. */
function fieldSchedule(fields: Field[], tz: string): Schedule {
  const [minutes, hours, dom, months, dow] = fields;
  const wall = wallClock(tz);
  // local time back to an instant: the offset at the guess, corrected once (a time in a DST gap moves forward by the gap)
  const toInstant = (w: number) => {
    const guess = w - (wall(w) - w);
    return w - (wall(guess) - guess);
  };
  const dayMatches = (d: Date) => {
    const a = dom.values.has(d.getUTCDate());
    const b = dow.values.has(d.getUTCDay());
    return dom.star || dow.star ? a && b : a || b;
  };
  return {
    next(afterMs) {
      const start = wall(afterMs);
      let w = Math.floor(start / MINUTE) * MINUTE + MINUTE;
      while (w - start <= SEARCH_LIMIT) {
        const d = new Date(w);
        if (!months.values.has(d.getUTCMonth() + 1)) { w = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1); continue; }
        if (!dayMatches(d)) { w = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1); continue; }
        if (!hours.values.has(d.getUTCHours())) { w = Math.floor(w / HOUR) * HOUR + HOUR; continue; }
        if (!minutes.values.has(d.getUTCMinutes())) { w += MINUTE; continue; }
        const at = toInstant(w);
        if (at > afterMs) return at;
        w += MINUTE;
      }
      return undefined;
    },
  };
}

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: MINUTE, h: HOUR };

/** A Go duration ("1h30m", "90s") in ms. */
export function parseDuration(s: string): number {
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/gy;
  let total = 0;
  let m: RegExpExecArray | null;
  let end = 0;
  while ((m = re.exec(s))) {
    total += Number(m[1]) * UNITS[m[2]];
    end = re.lastIndex;
  }
  if (!s || end !== s.length) throw new Error(`time: invalid duration "${s}"`);
  return total;
}

/** `@every d`: d after the previous time, at whole seconds (at least one second). */
function everySchedule(text: string): Schedule {
  const delay = Math.max(1000, Math.floor(parseDuration(text) / 1000) * 1000);
  return { next: (afterMs) => Math.floor(afterMs / 1000) * 1000 + delay };
}

/** Parses a schedule; `timeZone` (spec.timeZone) wins over UTC, a CRON_TZ=/TZ= prefix over both. Throws with the reason when it cannot. */
export function parseSchedule(spec: string, timeZone?: string): Schedule {
  let text = spec.trim();
  let tz = timeZone || 'UTC';
  const prefix = /^(?:CRON_)?TZ=(\S+)\s+/.exec(text);
  if (prefix) {
    tz = prefix[1];
    text = text.slice(prefix[0].length).trim();
  }
  try {
    wallClock(tz)(0);
  } catch {
    throw new Error(`provided bad location ${tz}: unknown time zone ${tz}`);
  }
  if (text.startsWith('@every ')) return everySchedule(text.slice(7).trim());
  if (text.startsWith('@')) {
    const d = DESCRIPTORS[text.toLowerCase()];
    if (!d) throw new Error(`unrecognized descriptor: ${text}`);
    text = d;
  }
  const parts = text.split(/\s+/).filter(Boolean);
  if (parts.length !== 5) throw new Error(`expected exactly 5 fields, found ${parts.length}: [${parts.join(' ')}]`);
  return fieldSchedule(parts.map((p, i) => parseField(p, FIELDS[i])), tz);
}
