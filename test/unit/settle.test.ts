// The collections after a burst of writes (kernel/ops/settle.ts): two passes once the revision
// stops after a burst (start-up counts as one), none for a trickle, and each a real full collection.
import t from 'tap';
import { settleAfterWrites, type Settled } from '../../kernel/ops/settle.js';

const TICK = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(f: () => boolean) {
  while (!f()) await sleep(TICK);
}

t.test('a burst, then quiet: two passes; a trickle: none', async (t) => {
  let rev = 0;
  const passes: Settled[] = [];
  const stop = settleAfterWrites(() => rev, (s) => passes.push(s), TICK);
  t.teardown(stop);
  // start-up counts as a burst
  await until(() => passes.length === 2);
  await sleep(TICK * 10);
  t.equal(passes.length, 2, 'no more passes while nothing is written');

  // a trickle of writes (fewer than 1,000 revisions) starts none
  for (let i = 0; i < 20; i++) { rev++; await sleep(TICK * 1.5); }
  await sleep(TICK * 10);
  t.equal(passes.length, 2, 'no pass for a trickle of writes');

  // a burst leaves garbage; once it stops, its first pass collects it
  let garbage: unknown[] | undefined = Array.from({ length: 200_000 }, (_, i) => ({ i, s: `object ${i}` }));
  rev += 1_000;
  garbage = undefined;
  await until(() => passes.length === 4);
  t.equal(garbage, undefined);
  t.ok(passes[2].heapAfter < passes[2].heapBefore - 8 * 1048576, `the burst's garbage is collected (${passes[2].heapBefore} -> ${passes[2].heapAfter} bytes)`);
  await sleep(TICK * 10);
  t.equal(passes.length, 4, 'two passes a burst');
});

t.test('a pass needs no file descriptor (the server may have none left)', async (t) => {
  // process.memoryUsage() opens /proc/self/stat, and threw EMFILE here with 10,000 watchers open
  const real = process.memoryUsage;
  process.memoryUsage = Object.assign(() => { throw Object.assign(new Error('EMFILE: too many open files, uv_resident_set_memory'), { code: 'EMFILE' }); }, { rss: real.rss });
  t.teardown(() => { process.memoryUsage = real; });
  const passes: Settled[] = [];
  const stop = settleAfterWrites(() => 0, (s) => passes.push(s), TICK);
  t.teardown(stop);
  await until(() => passes.length === 2);
  t.ok(passes[0].heapBefore > 0, 'the heap figures still come');
});

t.test('no pass when the live heap is over the bound (its pause would be too long)', async (t) => {
  const passes: Settled[] = [];
  // a bound below any heap: start-up's burst would settle, but every pass is skipped
  const stop = settleAfterWrites(() => 0, (s) => passes.push(s), TICK, 1);
  t.teardown(stop);
  await sleep(TICK * 12);
  t.equal(passes.length, 0, 'no collection taken');
});
