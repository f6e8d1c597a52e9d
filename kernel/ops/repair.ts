// Salvaging a damaged embedded store: the `cluster-apiserver repair` command (the server must be stopped).
import { ClassicLevel } from 'classic-level';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from './configtypes.js';
import { lockDataDir } from './datadir.js';
import { ACK_FILE, checkLogs, checkStoreFiles, HIGH_WATER_FILE, readAcked, readHighWater, StateDigest, writeAcked, writeHighWater, type HighWater } from '../store/integrity.js';
import { FORMAT, lostWrites, num, openDb, revisionRange, str } from '../store/leveldb.js';
import { decodeCurrent, encodeCurrent, validRevisions } from '../store/records.js';

/** When repair cannot know what was handed out (no high-water file), it starts this far above what it finds. */
const UNKNOWN_RESERVATION = 1_000_000;

/** What StorageLog.repair did. */
export interface RepairReport {
  /** The damage found before repairing (file: problem), if any. */
  damage: string[];
  /** Keys whose current record was unreadable and was dropped. */
  dropped: string[];
  /** Objects kept. */
  kept: number;
  /** The store's revision after repair: above every revision handed out before; older ones are expired. */
  revision: number;
  /** The high-water file was missing or damaged, so the revision was raised by a wide margin. */
  highWaterLost: boolean;
  /** Acknowledged revisions no longer in the store (the end of its log was lost), first and last. */
  lost?: { from: number; to: number };
}

/**
 * Salvages a damaged store (the server must be stopped): LevelDB's own repair rebuilds its files from
 * what is readable, then every current record that fails its checksum is dropped and all history is
 * dropped. The store continues above every revision handed out before (the high-water file), with
 * those revisions expired, so a watch resumed from before the repair gets 410 and relists.
 */
export async function repairStore(dir: string): Promise<RepairReport> {
  const report: RepairReport = { damage: [], dropped: [], kept: 0, revision: 0, highWaterLost: false };
  const note = (f: () => unknown) => { try { f(); } catch (e) { report.damage.push((e as Error).message); } };
  note(() => checkStoreFiles(dir));
  note(() => checkLogs(dir));
  let hw: HighWater | undefined;
  note(() => { hw = readHighWater(dir); });
  let acked: number | undefined;
  note(() => { acked = readAcked(dir)?.revision; });
  if (acked === undefined && (hw as HighWater | undefined)?.acked) report.damage.push(`${path.join(dir, ACK_FILE)}: is missing`);
  await ClassicLevel.repair(dir);
  report.damage.push(...levelDbRepairFindings(dir));
  const db = await openDb(dir, false);
  try {
    // Records without checksums only where none has one: a lost m:format alone must not make
    // checksums read as revisions.
    let legacy = (await db.get('m:format')) === undefined;
    if (legacy) for await (const [k, v] of db.iterator({ gt: 'c:', lt: 'c;' })) if (decodeCurrent(k.slice(2), v, false)) { legacy = false; break; }
    const ops: { type: 'put' | 'del'; key: string; value?: Uint8Array }[] = [];
    const digest = new StateDigest();
    const recordedRev = num(await db.get('m:rev')) ?? 0;
    const recordedCount = num(await db.get('m:count'));
    const recordedDigest = await db.get('m:digest');
    let top = recordedRev;
    for await (const [k] of db.iterator({ gt: 'h:', lt: 'h;', values: false })) {
      top = Math.max(top, parseInt(k.slice(2), 16) || 0);
      ops.push({ type: 'del', key: k });
    }
    for await (const [k] of db.iterator({ gt: 'm:gap:', lt: 'm:gap;', values: false })) ops.push({ type: 'del', key: k });
    for await (const [k, v] of db.iterator({ gt: 'c:', lt: 'c;' })) {
      const key = k.slice(2);
      const r = decodeCurrent(key, v, legacy);
      if (!r || !validRevisions(r.modRevision, r.createRevision)) {
        report.dropped.push(key);
        ops.push({ type: 'del', key: k });
        continue;
      }
      if (legacy) ops.push({ type: 'put', key: k, value: encodeCurrent(key, r.modRevision, r.createRevision, r.stored) });
      digest.toggle(key, r.modRevision);
      top = Math.max(top, r.modRevision);
      report.kept++;
    }
    const found = hw as HighWater | undefined;
    // Acknowledged (or, at a clean stop, written) beyond what is left: the end of the log was lost.
    const expected = Math.max(acked ?? 0, found?.closedAt ?? 0);
    if (expected > top) {
      report.lost = { from: top + 1, to: expected };
      report.damage.push(`${dir}: ${lostWrites(top, expected)}`);
    }
    // What LevelDB's repair left, against what the last batch it kept recorded: records it could
    // not read (a damaged table block, the rest of a damaged log block) are gone without a trace.
    if (recordedCount !== undefined && recordedCount > report.kept + report.dropped.length) {
      const gone = recordedCount - report.kept - report.dropped.length;
      report.damage.push(`${dir}: ${gone} of the ${recordedCount} objects recorded at revision ${recordedRev} ${gone > 1 ? 'are' : 'is'} gone`);
    } else if (recordedCount === report.kept && recordedDigest && Buffer.from(recordedDigest).toString() !== digest.toString()) {
      report.damage.push(`${dir}: the objects left differ from those recorded at revision ${recordedRev} (some are gone or at an older version)`);
    }
    report.highWaterLost = !found && top > 0;
    if (report.highWaterLost) report.damage.push(`${path.join(dir, HIGH_WATER_FILE)}: is missing`);
    const revision = Math.max(top, expected, found?.reserved ?? 0) + (report.highWaterLost ? UNKNOWN_RESERVATION : 0);
    report.revision = revision;
    for (const [k, v] of [['rev', revision], ['compacted', revision], ['count', report.kept], ['digest', digest.toString()], ['format', FORMAT]] as const) {
      ops.push({ type: 'put', key: 'm:' + k, value: str(v) });
    }
    await db.batch(ops as never, { sync: true });
  } finally {
    await db.close();
  }
  await writeAcked(dir, report.revision);
  await writeHighWater(dir, { reserved: report.revision, closedAt: report.revision });
  return report;
}

/**
 * What LevelDB's repair found, from the info log it writes into the store (LOG): the files it could
 * not read whole ("Table #5: 1061 entries Corruption: ...", "Log #6: ignoring ..."). It moves such
 * files to store/lost/.
 */
export function levelDbRepairFindings(dir: string): string[] {
  let text: string;
  try { text = readFileSync(path.join(dir, 'LOG'), 'utf8'); } catch { return []; }
  return text.split('\n').map((l) => /^\S+ \S+ (.*(Corruption|ignoring|error).*)$/i.exec(l)?.[1]).filter((l): l is string => !!l)
    .map((l) => `${dir}: LevelDB's repair: ${l}`);
}

/** `cluster-apiserver repair`: salvages the configured embedded store and says what it found and did. */
export async function repairCommand(config: Config): Promise<void> {
  if (config.storage.plugin !== 'embedded') throw new Error(`repair works on the embedded store; this configuration uses the storage plugin "${config.storage.plugin}"`);
  const opt = config.storage.options?.dir;
  const dir = typeof opt === 'string' ? opt : path.join(config.dataDir, 'store');
  process.umask(0o077);
  const lock = lockDataDir(config.dataDir);
  try {
    const r = await repairStore(dir);
    const out = process.stdout;
    out.write(r.damage.length ? `damage found:\n${r.damage.map((d) => `  ${d}\n`).join('')}` : 'no damage found\n');
    if (r.dropped.length) out.write(`dropped ${r.dropped.length} unreadable object record(s):\n${r.dropped.map((k) => `  ${k}\n`).join('')}`);
    if (r.lost) {
      const n = r.lost.to - r.lost.from + 1;
      out.write(`lost ${n} acknowledged write${n > 1 ? 's' : ''}: ${revisionRange(r.lost.from, r.lost.to)} (gone from the end of the write-ahead log); ` +
        (n > 1 ? 'the objects they wrote are back as they were before them (absent if created by them, present again if deleted by them)\n'
          : 'the object it wrote is back as it was before it (absent if created by it, present again if deleted by it)\n'));
    }
    out.write(`kept ${r.kept} object(s); the store continues at resource version ${r.revision}: watches and lists resumed from an older one get 410 Gone and relist\n`);
    if (r.highWaterLost) out.write('the high-water file was missing or damaged: resource versions were raised by a wide margin so none is issued twice\n');
  } finally {
    lock.release();
  }
}
