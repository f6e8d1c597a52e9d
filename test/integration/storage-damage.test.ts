// A damaged write-ahead log is refused at start with a message naming the file and the repair command;
// repair keeps every intact object, and no resourceVersion is ever issued twice (a watch resumed from
// before the repair gets 410 and relists). Table files, cut records and SIGKILL: storage-damage-more.
import { readFileSync, statSync } from 'node:fs';
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
  const at = Math.floor(size / 2);
  overwrite(log, at, garbage(256));
  expectRefused(t, s.dataDir, /store\/\d+\.log.*(fails its checksum|runs past|unknown type)/);
  // LevelDB drops the rest of the damaged 32 KiB block (and a record that runs into it): every object
  // whose record lies outside the blocks around the damage survives.
  const bytes = readFileSync(log);
  const from = (Math.floor(at / 32768) - 1) * 32768;
  const to = (Math.floor((at + 256) / 32768) + 1) * 32768;
  const outside = (n: string) => { const i = bytes.indexOf(`"name":"${n}"`); return i >= 0 && (i < from || i > to); };
  t.ok([...acked.keys()].filter(outside).length >= 150, 'most objects lie outside the damaged blocks');
  await repairAndCheck(t, s, acked, maxRv, outside);
});
