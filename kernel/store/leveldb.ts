// The embedded log's use of LevelDB, shared by the log (log.ts) and its repair (repair.ts): the
// store format, key bounds, bulk reads, opening with clear errors, and values kept in memory of their own.
import { ClassicLevel } from 'classic-level';
import { StoreDamageError } from './integrity.js';

/** 3: the state digest of integrity.ts; 2 had a sha256 one (its digest is recomputed at open). */
export const FORMAT = '3';

/**
 * The least string above every string that starts with s, in the store's (UTF-8 byte) key order:
 * s with its last code point raised by one (a last U+10FFFF is dropped and the one before raised).
 * Appending '\uffff' is not such a bound: characters outside the BMP encode above it.
 */
export function prefixEnd(s: string): string {
  const cps = Array.from(s);
  while (cps.length) {
    const cp = cps.pop()!.codePointAt(0)!;
    if (cp < 0x10ffff) return cps.join('') + String.fromCodePoint(cp === 0xd7ff ? 0xe000 : cp + 1);
  }
  return '\u{10ffff}';
}

/** The damage of acknowledged revisions missing from the end of the store. */
export function lostWrites(rev: number, acked: number): string {
  const n = acked - rev;
  return `${n} acknowledged write${n > 1 ? 's are' : ' is'} missing: ${revisionRange(rev + 1, acked)} ${n > 1 ? 'were' : 'was'} acknowledged, but the store ends at revision ${rev} (the end of its write-ahead log is lost)`;
}

/** Meta records (m:rev, m:count, ...) hold numbers as text. */
export const num = (v: Uint8Array | undefined) => (v === undefined ? undefined : Number(Buffer.from(v).toString()));
export const str = (v: string | number) => Buffer.from(String(v));

/** Revisions from..to as words: "revision 7", "revisions 5 to 7". */
export const revisionRange = (from: number, to: number) => (from === to ? `revision ${to}` : `revisions ${from} to ${to}`);

export type Db = ClassicLevel<string, Uint8Array>;

/**
 * A value the index, the cache and the history keep for as long as it is current, in memory of its
 * own: a small Buffer made from a string is a slice of Node's shared 8 KiB pool, and one kept slice
 * keeps the whole pool chunk, with every short-lived buffer cut from it (request bodies, answers,
 * records): measured, 2.4 KiB of buffers held per 1-KiB object.
 */
export function ownBuffer(v: Uint8Array): Uint8Array {
  if (v.byteLength === v.buffer.byteLength) return v;
  const own = Buffer.allocUnsafeSlow(v.byteLength);
  own.set(v);
  return own;
}

/** Values read at open are copied into slabs of this size (smaller than a slab's quarter: one each). */
const SLAB_BYTES = 64 << 10;

/**
 * The current values read at open, copied into shared slabs: LevelDB hands each value over in a
 * buffer of its own, and a million such buffers cost ~200 bytes each beside their bytes (the
 * ArrayBuffer, its backing store's bookkeeping, its allocation) and make every full garbage
 * collection walk a million of them. A slab lives while any of its values does; a slab holds about
 * 1,000 values of 1 KiB, and never more bytes than the store held at open.
 */
export class Slabs {
  private slab: Buffer | undefined;
  private used = 0;
  copy(v: Uint8Array): Buffer {
    if (v.length > SLAB_BYTES >>> 2) return Buffer.from(v.buffer, v.byteOffset, v.byteLength); // a large value keeps its own
    if (!this.slab || this.used + v.length > SLAB_BYTES) { this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES); this.used = 0; }
    const out = this.slab.subarray(this.used, this.used + v.length);
    out.set(v);
    // 8-byte aligned starts, as allocations are
    this.used = (this.used + v.length + 7) & ~7;
    return out;
  }
}
/**
 * Iterators that read whole ranges fetch up to 4 MiB per trip to LevelDB's thread (classic-level's
 * default, 16 KiB, is about 16 objects: thousands of round trips for a start-up of 100,000), and
 * leave LevelDB's block cache alone: what they read is held in memory by the cache and the history
 * from then on, and filling it kept 8 MiB of blocks nothing reads again.
 */
export const BULK = { highWaterMarkBytes: 4 << 20, fillCache: false };

/**
 * Every entry of a range, in order, one batch (one trip to LevelDB's thread) at a time: a for-await
 * over the iterator costs a promise and an async resumption per entry, which at a million entries
 * was seconds of start-up.
 */
export async function eachEntry(db: Db, range: { gt?: string; lt?: string; lte?: string }, f: (k: string, v: Uint8Array) => void): Promise<void> {
  const it = db.iterator({ ...range, ...BULK });
  let next = it.nextv(10_000);
  try {
    // LevelDB's thread reads the next batch while this one is checked
    for (let batch = await next; batch.length; batch = await next) {
      next = it.nextv(10_000);
      for (const [k, v] of batch) f(k, v);
    }
  } finally {
    await next.catch(() => undefined);
    await it.close();
  }
}
/**
 * A ClassicLevel opens itself in the tick after it is constructed, with the options given here: it is
 * constructed only once the store's files are checked, and never allowed to create a store over an
 * existing one (it would take a store without CURRENT for a new one, and delete its tables).
 */
export const openDb = async (dir: string, isNew: boolean): Promise<Db> => {
  const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view', createIfMissing: isNew, errorIfExists: isNew });
  try {
    await db.open();
  } catch (e) {
    throw openError(dir, e);
  }
  return db;
};

/** LevelDB refuses a second opener with its LOCK; say so plainly. */
function openError(dir: string, e: unknown): Error {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  if (err.cause?.code === 'LEVEL_LOCKED') return new Error(`the store ${dir} is in use by another process (${err.cause.message})`);
  return levelDbDamage(dir, err.cause ?? err) ?? new Error(`cannot open the store ${dir}: ${err.cause?.message ?? err.message}`);
}

/** LevelDB's reports of damage: a block it cannot read, or a store file it cannot read at all (a table cut short: "IO error: <file>.ldb: Invalid argument"). */
export function levelDbDamage(dir: string, e: unknown): StoreDamageError | undefined {
  const { code, message = '' } = (e ?? {}) as { code?: string; message?: string };
  if (code === 'LEVEL_CORRUPTION') return new StoreDamageError(dir, message || 'corrupt');
  const file = code === 'LEVEL_IO_ERROR' ? /IO error: (\S+\/(?:\d+\.(?:ldb|sst|log)|MANIFEST-\d+)): (.*)$/.exec(message) : null;
  return file?.[1].startsWith(dir) ? new StoreDamageError(file[1], `LevelDB cannot read it (${file[2]}): the file is cut short or damaged`) : undefined;
}
