// Damage detection for the embedded store, outside LevelDB.
//
// classic-level does not expose LevelDB's paranoid_checks, so LevelDB recovers from a damaged write-ahead
// log by silently dropping the records it cannot read. Before the store is opened we therefore read each
// *.log file ourselves and check every record's CRC-32C the way LevelDB's log reader would, but report
// what it would skip. The high-water file keeps, outside LevelDB, the highest revision the log may have
// handed out (reserved ahead in blocks) and, after a clean stop, the exact revision the store ended at.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { open, rename, writeFile, type FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import path from 'node:path';

/** The store cannot be trusted: names the file and what is wrong with it. */
export class StoreDamageError extends Error {
  constructor(readonly file: string, readonly problem: string) {
    super(`${file}: ${problem}`);
    this.name = 'StoreDamageError';
  }
}

// ---------------------------------------------------------------- CRC-32C (Castagnoli), as LevelDB uses it

const CRC32C_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

export function crc32c(buf: Uint8Array, start = 0, end = buf.length): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC32C_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** LevelDB stores CRCs masked (rotated and offset) so that CRCs of CRCs stay well spread. */
const unmask = (m: number) => {
  const rot = (m - 0xa282ead8) >>> 0;
  return ((rot >>> 17) | (rot << 15)) >>> 0;
};

// ---------------------------------------------------------------- LevelDB write-ahead log

const BLOCK = 32768;
const HEADER = 7;
const FULL = 1, FIRST = 2, MIDDLE = 3, LAST = 4;

/**
 * The first problem in one LevelDB log file, or undefined when every record is whole. A record cut off
 * at the very end of the file is a write that never completed (so never acknowledged) and is not damage;
 * zero bytes from some point to the end are unwritten space, also not damage.
 */
export function checkLogFile(buf: Uint8Array): string | undefined {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const restIsZero = (from: number) => { for (let i = from; i < buf.length; i++) if (buf[i] !== 0) return false; return true; };
  let pos = 0;
  let inRecord = false;
  while (pos < buf.length) {
    const left = BLOCK - (pos % BLOCK);
    if (left < HEADER) { pos += left; continue; } // block trailer
    if (pos + HEADER > buf.length) return undefined; // a header cut off by the end of the file
    const stored = dv.getUint32(pos, true);
    const len = dv.getUint16(pos + 4, true);
    const type = buf[pos + 6];
    if (type === 0 && len === 0 && stored === 0) {
      if (restIsZero(pos)) return undefined;
      return `zeroed record header at byte ${pos} followed by data`;
    }
    if (pos + HEADER + len > buf.length) return undefined; // torn final write
    if (HEADER + len > left) return `record at byte ${pos} runs past its 32 KiB block (length ${len})`;
    if (type < FULL || type > LAST) return `record at byte ${pos} has unknown type ${type}`;
    if (unmask(stored) !== crc32c(buf, pos + 6, pos + HEADER + len)) return `record at byte ${pos} (${len} bytes) fails its checksum`;
    if ((type === FULL || type === FIRST) && inRecord) return `record at byte ${pos} starts while the previous one is unfinished`;
    if ((type === MIDDLE || type === LAST) && !inRecord) return `record fragment at byte ${pos} without a beginning`;
    inRecord = type === FIRST || type === MIDDLE;
    pos += HEADER + len;
  }
  return undefined;
}

/** Every LevelDB log file in dir checked; throws StoreDamageError for the first damaged one. */
export function checkLogs(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.log') && /^\d+\.log$/.test(n)).sort();
  } catch {
    return; // no store yet
  }
  for (const n of names) {
    const file = path.join(dir, n);
    const problem = checkLogFile(readFileSync(file));
    if (problem) throw new StoreDamageError(file, problem);
  }
}

// ---------------------------------------------------------------- the store's files, before LevelDB opens them

/** Files that only a store that was opened has: LevelDB's, and the two kept beside it. */
const STORE_FILE = /^(CURRENT|MANIFEST-\d+|\d+\.(log|ldb|sst)|HIGHWATER|ACKED)$/;

/**
 * Whether dir holds a store, checked before LevelDB opens it ('new' when it holds no store file). LevelDB
 * takes a store without CURRENT for a new one when allowed to create one: it writes an empty store over
 * the old files and deletes the old tables. So a store with any of its files but no CURRENT, or whose
 * CURRENT names a manifest that is not there, is damaged, never new; LevelDB's repair rebuilds it.
 */
export function checkStoreFiles(dir: string): 'new' | 'existing' {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => STORE_FILE.test(n)).sort();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'new';
    throw e;
  }
  if (!names.length) return 'new';
  const current = path.join(dir, 'CURRENT');
  if (!names.includes('CURRENT')) {
    const count = (re: RegExp, what: string) => { const n = names.filter((f) => re.test(f)).length; return n ? [`${n} ${what}${n > 1 ? 's' : ''}`] : []; };
    const has = [...count(/^MANIFEST-/, 'manifest'), ...count(/\.(ldb|sst)$/, 'table file'), ...count(/\.log$/, 'log file'), ...names.filter((n) => /^[A-Z]+$/.test(n))];
    throw new StoreDamageError(current, `is missing, while the store still has ${has.join(', ')}: opening it would start an empty store over them`);
  }
  const manifest = readFileSync(current, 'utf8');
  if (!/^MANIFEST-\d+\n$/.test(manifest)) throw new StoreDamageError(current, 'does not name a manifest');
  if (!existsSync(path.join(dir, manifest.trim()))) throw new StoreDamageError(path.join(dir, manifest.trim()), 'is missing (CURRENT names it)');
  return 'existing';
}

// ---------------------------------------------------------------- per-record checksums and the state digest

/** A string part counts as its UTF-8 bytes (zlib's crc32 encodes it): no Buffer made for a key. */
export const recordCrc = (parts: (Uint8Array | string)[]): number => parts.reduce((c: number, p) => crc32(p, c), 0);

/** murmur3's 32-bit finalizer: every input bit affects every output bit. */
function fmix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * An order-free digest of the current state: the XOR of one 64-bit fingerprint per (key, modRevision).
 * Kept up to date write by write and stored with each batch, it tells at open whether the records
 * LevelDB returns are the records that were written (a lost or stale record changes it). The
 * fingerprint is two multiplicative hashes computed in place: this runs on every write, and a
 * cryptographic hash cost several times more there (allocation and garbage collection included).
 */
export class StateDigest {
  private a = 0;
  private b = 0;
  toggle(key: string, modRevision: number): void {
    let h1 = 0x811c9dc5;
    let h2 = 0x9747b28c;
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    const lo = modRevision >>> 0;
    const hi = Math.floor(modRevision / 0x100000000) >>> 0;
    this.a = (this.a ^ fmix(h1 ^ Math.imul(lo, 0xcc9e2d51) ^ hi)) >>> 0;
    this.b = (this.b ^ fmix(h2 ^ lo ^ Math.imul(hi, 0x1b873593))) >>> 0;
  }
  toString(): string {
    return this.a.toString(16).padStart(8, '0') + this.b.toString(16).padStart(8, '0');
  }
}

// ---------------------------------------------------------------- the high-water file

export interface HighWater {
  /** No revision above this was handed out; the log reserves ahead before it uses one. */
  reserved: number;
  /** Set by a clean stop: the store's revision at that moment. Absent while the server runs. */
  closedAt?: number;
  /** The ACKED file is kept (stores from before it have none, and get one at their first open). */
  acked?: boolean;
}

export const HIGH_WATER_FILE = 'HIGHWATER';

/** The high-water file of a store dir: undefined when absent; StoreDamageError when unreadable. */
export function readHighWater(dir: string): HighWater | undefined {
  const file = path.join(dir, HIGH_WATER_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StoreDamageError(file, (e as Error).message);
  }
  const [body, sum] = text.trimEnd().split('\n');
  if (!body || sum !== String(crc32(body))) throw new StoreDamageError(file, 'fails its checksum');
  const hw = JSON.parse(body) as HighWater;
  if (!Number.isSafeInteger(hw.reserved)) throw new StoreDamageError(file, 'has no reserved revision');
  return hw;
}

/** Replace the high-water file durably: written aside, synced, renamed, and the directory synced (sync=false: a log that does not sync, for benchmarks). */
export async function writeHighWater(dir: string, hw: HighWater, sync = true): Promise<void> {
  const file = path.join(dir, HIGH_WATER_FILE);
  const body = JSON.stringify({ ...hw, acked: true });
  await replaceFile(dir, file, `${body}\n${crc32(body)}\n`, sync);
}

/** Written aside, synced, renamed over file, and the directory synced. */
async function replaceFile(dir: string, file: string, data: string | Uint8Array, sync: boolean): Promise<void> {
  const tmp = file + '.tmp';
  await writeFile(tmp, data, { mode: 0o600 });
  if (sync) await syncPath(tmp);
  await rename(tmp, file);
  if (sync) await syncPath(dir);
}

async function syncPath(p: string): Promise<void> {
  const fh = await open(p, 'r');
  try { await fh.sync(); } finally { await fh.close(); }
}

// ---------------------------------------------------------------- the acknowledged revision

// A write-ahead log cut at a record boundary after an unclean stop reads as a log whose last writes
// never completed: nothing in LevelDB, and nothing in HIGHWATER (it is written ahead once per 1,000
// revisions, and says where the store ended only after a clean stop), tells it from an acknowledged
// write that is gone. So the log records, after each synced batch and before answering any write in
// it, the batch's revision in ACKED: two 512-byte slots written in turn in place and fdatasynced (no
// rename, no metadata), so a torn write of one slot leaves the other, one revision older, readable.

export const ACK_FILE = 'ACKED';
const SLOT = 512;

function ackSlot(revision: number): Buffer {
  const buf = Buffer.alloc(SLOT);
  buf.write(`${revision} ${crc32(String(revision))}\n`);
  return buf;
}

function parseSlot(buf: Buffer): number | undefined {
  const m = /^(\d+) (\d+)\n/.exec(buf.toString('latin1'));
  return m && String(crc32(m[1])) === m[2] && Number.isSafeInteger(Number(m[1])) ? Number(m[1]) : undefined;
}

/** The last revision acknowledged, and the slot holding it: undefined when there is no ACKED file. */
export function readAcked(dir: string): { revision: number; slot: number } | undefined {
  const file = path.join(dir, ACK_FILE);
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StoreDamageError(file, (e as Error).message);
  }
  const slots = [0, 1].map((i) => (buf.length >= (i + 1) * SLOT ? parseSlot(buf.subarray(i * SLOT, (i + 1) * SLOT)) : undefined));
  if (slots[0] === undefined && slots[1] === undefined) throw new StoreDamageError(file, 'fails its checksum');
  const slot = (slots[1] ?? -1) > (slots[0] ?? -1) ? 1 : 0;
  return { revision: slots[slot]!, slot };
}

/** Replaces the ACKED file (both slots) durably: a new store, one from before the file, a repair. */
export async function writeAcked(dir: string, revision: number, sync = true): Promise<void> {
  await replaceFile(dir, path.join(dir, ACK_FILE), Buffer.concat([ackSlot(revision), ackSlot(revision)]), sync);
}

/** The open ACKED file of a running log. advance() calls that queue during a write share one. */
export class AckMark {
  private durable: number;
  private wanted: number;
  private chain: Promise<void> = Promise.resolve();

  private constructor(private readonly fh: FileHandle, revision: number, private slot: number, private readonly sync: boolean) {
    this.durable = this.wanted = revision;
  }

  static async open(dir: string, sync: boolean): Promise<AckMark> {
    const at = readAcked(dir);
    if (!at) throw new StoreDamageError(path.join(dir, ACK_FILE), 'is missing');
    return new AckMark(await open(path.join(dir, ACK_FILE), 'r+'), at.revision, at.slot, sync);
  }

  /** Resolves once ACKED durably holds revision (or a later one). */
  advance(revision: number): Promise<void> {
    this.wanted = Math.max(this.wanted, revision);
    this.chain = this.chain.then(async () => {
      if (this.durable >= revision) return;
      const next = this.wanted;
      this.slot ^= 1;
      await this.fh.write(ackSlot(next), 0, SLOT, this.slot * SLOT);
      if (this.sync) await this.fh.datasync();
      this.durable = next;
    });
    return this.chain;
  }

  async close(): Promise<void> {
    await this.chain.catch(() => {});
    await this.fh.close();
  }
}
