// A damaged table file and records cut off the end of the log are refused and repaired; SIGKILL is not
// damage and revisions handed out before it are never reused.
import { readdirSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startServer } from '../lib/server.js';
import { CM, expectRefused, garbage, newestLog, overwrite, populate, repairAndCheck } from '../lib/store-damage.js';

t.test('256 bytes in the middle of a table file (.ldb) overwritten', async (t) => {
  const { s, acked, maxRv } = await populate(t, 60);
  // a restart turns the write-ahead log into a table file
  const again = await startServer({ dataDir: s.dataDir, keepDataDir: true });
  await again.stop();
  const dir = path.join(s.dataDir, 'store');
  const tables = readdirSync(dir).filter((n) => n.endsWith('.ldb')).map((n) => path.join(dir, n));
  const biggest = tables.sort((a, b) => statSync(b).size - statSync(a).size)[0];
  overwrite(biggest, Math.floor(statSync(biggest).size / 2), garbage(256));
  expectRefused(t, s.dataDir, /store(\/\d+\.ldb)?: /);
  // which objects share the damaged block depends on LevelDB's layout: only the invariants are checked
  await repairAndCheck(t, s, acked, maxRv, () => false, {
    output: (out) => t.match(out, /LevelDB's repair: Table #\d+: \d+ entries Corruption/, 'repair says what LevelDB could not read'),
  });
});

t.test('a table file (.ldb) cut short', async (t) => {
  const { s, acked, maxRv } = await populate(t, 60);
  const again = await startServer({ dataDir: s.dataDir, keepDataDir: true });
  await again.stop();
  const dir = path.join(s.dataDir, 'store');
  const biggest = readdirSync(dir).filter((n) => n.endsWith('.ldb')).map((n) => path.join(dir, n)).sort((a, b) => statSync(b).size - statSync(a).size)[0];
  truncateSync(biggest, Math.floor(statSync(biggest).size / 2));
  // LevelDB says only "Invalid argument" (the table's footer is gone): the refusal names the file and the repair
  expectRefused(t, s.dataDir, new RegExp(`${path.basename(biggest).replace('.', '\\.')}`));
  await repairAndCheck(t, s, acked, maxRv, () => false);
});

t.test('whole records cut off the end of the log after a clean stop', async (t) => {
  // A cut at a record boundary looks like an unfinished last write to LevelDB; the ACKED file knows
  // the last revision acknowledged.
  const { s, acked, maxRv } = await populate(t, 20);
  const log = newestLog(s.dataDir);
  const buf = readFileSync(log);
  // The last record is the last create's batch; cutting 1 byte into it leaves a torn record that
  // LevelDB would silently drop.
  truncateSync(log, buf.length - 1);
  expectRefused(t, s.dataDir, /1 acknowledged write is missing: revision \d+ was acknowledged, but the store ends at revision \d+/);
  await repairAndCheck(t, s, acked, maxRv, (n) => Number(n.slice(3)) < 19);
});

t.test('SIGKILL is not damage, and revisions handed out before it are not reused', async (t) => {
  const s = await startServer({ keepDataDir: true });
  t.teardown(() => rmSync(s.dataDir, { recursive: true, force: true }));
  const a = await s.request('POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } } });
  t.equal(a.status, 201);
  await s.stop('SIGKILL');
  const s2 = await startServer({ dataDir: s.dataDir, keepDataDir: true });
  t.teardown(() => s2.stop());
  t.equal((await s2.get(`${CM}/a`)).status, 200, 'the acknowledged write is there');
  const b = await s2.request('POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' } } });
  t.equal(b.status, 201);
  t.ok(Number(b.json.metadata.resourceVersion) > Number(a.json.metadata.resourceVersion) + 1, 'the next revision is above the reservation made before the kill');
  // A watch from before the kill still resumes without gaps: the skipped range has no events.
  const events: any[] = [];
  const w = s2.stream(`${CM}?watch=1&resourceVersion=${a.json.metadata.resourceVersion}`, (e) => events.push(e));
  for (let i = 0; i < 50 && !events.some((e) => e.object?.metadata?.name === 'b'); i++) await new Promise((r) => setTimeout(r, 50));
  w.close();
  t.same(events.map((e) => `${e.type} ${e.object?.metadata?.name}`), ['ADDED b'], 'exactly the one event after it');
});
