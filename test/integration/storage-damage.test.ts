// A damaged write-ahead log is refused at start with a message naming the file and the repair command;
// repair keeps every intact object, and no resourceVersion is ever issued twice (a watch resumed from
// before the repair gets 410 and relists). Table files, cut records and SIGKILL: storage-damage-more.
import { statSync } from 'node:fs';
import t from 'tap';
import { expectRefused, garbage, newestLog, overwrite, populate, repairAndCheck } from '../lib/store-damage.js';

t.test('the tail of the write-ahead log overwritten', async (t) => {
  const { s, acked, maxRv } = await populate(t, 40);
  const log = newestLog(s.dataDir);
  overwrite(log, statSync(log).size - 64, garbage(64));
  expectRefused(t, s.dataDir, /store\/\d+\.log.*fails its checksum/);
  await repairAndCheck(t, s, acked, maxRv, (n) => Number(n.slice(3)) < 39);
});

t.test('256 bytes in the middle of the write-ahead log overwritten', async (t) => {
  const { s, acked, maxRv } = await populate(t, 300);
  const log = newestLog(s.dataDir);
  const size = statSync(log).size;
  overwrite(log, Math.floor(size / 2), garbage(256));
  expectRefused(t, s.dataDir, /store\/\d+\.log.*(fails its checksum|runs past|unknown type)/);
  // LevelDB drops the rest of the damaged 32 KiB block; objects written well before and after survive.
  await repairAndCheck(t, s, acked, maxRv, (n) => Number(n.slice(3)) < 60 || Number(n.slice(3)) > 260);
});
