// Damage that loses whole files or whole records rather than corrupting bytes: a store without its
// CURRENT file is refused untouched (LevelDB would start an empty store over it and delete the old
// tables) and repair recovers every object; a write-ahead log cut at its end after an unclean stop is
// refused (the acknowledged revision is kept outside the log) and repair names the revisions lost.
import { readdirSync, rmSync, statSync, truncateSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startServer } from '../lib/server.js';
import { CM, expectRefused, newestLog, populate, repairAndCheck } from '../lib/store-damage.js';

/** The store's files that hold data (LevelDB's own LOCK and info LOG aside). */
const storeFiles = (dataDir: string) => readdirSync(path.join(dataDir, 'store')).filter((n) => !/^(LOCK|LOG(\.old)?)$/.test(n)).sort();

t.test('CURRENT missing: refused without touching a file, and repair recovers every object', async (t) => {
  const { s, acked, maxRv } = await populate(t, 60);
  // a restart turns the write-ahead log into a table file
  const again = await startServer({ dataDir: s.dataDir, keepDataDir: true });
  await again.stop();
  rmSync(path.join(s.dataDir, 'store', 'CURRENT'));
  const before = storeFiles(s.dataDir);
  expectRefused(t, s.dataDir, /store\/CURRENT: is missing/);
  t.same(storeFiles(s.dataDir), before, 'the refused start created and deleted no store file');
  await repairAndCheck(t, s, acked, maxRv, () => true, {
    output: (out) => {
      const rv = Number(/continues at resource version (\d+)/.exec(out)?.[1]);
      t.ok(Number.isSafeInteger(rv) && rv <= maxRv + 2000, `repair continues just above the revisions issued (${rv})`);
      t.match(out, /CURRENT: is missing/, 'repair names the damage it found');
    },
  });
});

for (const cut of ['1 byte', 'all of it'] as const) {
  t.test(`the write-ahead log cut at its end (${cut}) after an unclean stop`, async (t) => {
    const { s, acked } = await populate(t, 20);
    // The updates go to a log of their own: the creates are in a table file by then.
    const s2 = await startServer({ dataDir: s.dataDir, keepDataDir: true });
    for (let i = 0; i < 10; i++) {
      const o = acked.get(`cm-${i}`);
      const r = await s2.request('PUT', `${CM}/cm-${i}`, { body: { ...o, data: { ...o.data, i: `${i}-updated` } } });
      t.equal(r.status, 200);
      acked.set(`cm-${i}`, r.json);
    }
    const maxRv = Number(acked.get('cm-9').metadata.resourceVersion);
    await s2.stop('SIGKILL');
    const log = newestLog(s.dataDir);
    truncateSync(log, cut === '1 byte' ? statSync(log).size - 1 : 0);
    const lost = cut === '1 byte' ? `revision ${maxRv}` : `revisions \\d+ to ${maxRv}`;
    expectRefused(t, s.dataDir, new RegExp(`acknowledged writes? (is|are) missing: ${lost} (was|were) acknowledged, but the store ends at revision`));
    await repairAndCheck(t, s, acked, maxRv, () => true, {
      mayRevert: (n) => Number(n.slice(3)) < 10,
      output: (out) => {
        t.notMatch(out, /no damage found/, 'repair does not claim the store was whole');
        t.match(out, new RegExp(`lost .*acknowledged write.*${lost}`), 'repair names the revisions lost');
        t.match(out, /410/, 'and says watches from before get 410');
      },
    });
  });
}
