// The embedded log's whole-range reads (start-up's load of every object and of the history) leave
// LevelDB's block cache alone (kernel/store/leveldb.ts, BULK): the cache and the history hold what
// they read from then on, and filling the block cache kept 8 MiB of blocks nothing read again.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { StorageLog } from '../../kernel/store/log.js';

t.test('opening a filled store and reading it all fills no block cache', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'block-cache-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const value = new Uint8Array(1024).fill(0x61);
  const first = new StorageLog(dir, { sync: false });
  await first.open();
  const writes = [];
  for (let i = 0; i < 6000; i++) writes.push(first.write({ type: 'create', key: `/configmaps/default/m-${i}`, value: () => value }));
  await Promise.all(writes);
  await first.close();

  const log = new StorageLog(dir, { sync: false });
  await log.open();
  t.teardown(() => log.close());
  let objects = 0;
  for await (const kv of log.all()) objects += kv.value.length > 0 ? 1 : 0;
  let events = 0;
  for await (const ev of log.history(log.compactedRevision())) events += ev.revision > 0 ? 1 : 0;
  t.equal(objects, 6000, 'every object read');
  t.equal(events, 6000, 'and every event');
  // LevelDB's own count of its memory: the block cache and the memtables (12 MiB of records were read)
  const db = (log as unknown as { db: { getProperty(p: string): string } }).db;
  const bytes = Number(db.getProperty('leveldb.approximate-memory-usage'));
  t.ok(bytes < 1024 * 1024, `LevelDB holds ${bytes} bytes after the reads`);
});
