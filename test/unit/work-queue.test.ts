// The controllers' WorkQueue: a key added for later (a look-again delay) does not hold back a key
// added afterwards for now.
import t from 'tap';
import { WorkQueue } from '../../plugins/lib/work-queue.js';

t.test('a sooner add brings a later batch forward', async (t) => {
  const seen: string[] = [];
  let got: () => void = () => undefined;
  const done = new Promise<void>((r) => { got = r; });
  const q = new WorkQueue(async (k) => { seen.push(k); if (k === 'now') got(); }, (k, e) => t.fail(`${k}: ${e}`));
  q.add('later', 600_000);
  q.add('now', 0);
  await done;
  t.ok(seen.includes('now'), 'the key wanted now ran without waiting ten minutes');
  await q.stop();
});
