// The bounds on the V8 heap while writes come (kernel/ops/settle.ts, boundYoungGeneration): the young
// generation stops growing at its bound, even after a worker thread's heap is made (which puts V8's
// growth factor back). Measured in a fresh process each: the bound is for the whole process, and
// loading the test harness alone grows the young generation to V8's largest.
import { execFileSync } from 'node:child_process';
import t from 'tap';

const settle = new URL('../../kernel/ops/settle.js', import.meta.url).href;
const BOUND = 2 * 1048576;

/** The young generation's largest size (bytes) in a fresh process that keeps 300,000 small objects, bounded or not. */
function largestYoung(bounded: boolean): number {
  const script = `
    import v8 from 'node:v8';
    import { Worker } from 'node:worker_threads';
    import { boundYoungGeneration } from ${JSON.stringify(settle)};
    const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    if (${bounded}) boundYoungGeneration(${BOUND});
    const w = new Worker('setTimeout(() => {}, 50)', { eval: true });
    await new Promise((r) => w.once('exit', r));
    let most = 0;
    const kept = [];
    for (let round = 0; round < 60; round++) {
      for (let i = 0; i < 5000; i++) kept.push({ i, s: 'object ' + round + '/' + i, a: [i, round] });
      await new Promise((r) => setImmediate(r));
      most = Math.max(most, young());
    }
    process.stdout.write(String(most));`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
}

t.test('the young generation stops at its bound, a worker thread notwithstanding', async (t) => {
  const free = largestYoung(false);
  t.ok(free > 2 * BOUND, `unbounded, it grows past ${2 * BOUND} bytes (to ${free})`);
  const bounded = largestYoung(true);
  t.ok(bounded <= 2 * BOUND, `bounded, it stays at ${2 * BOUND} bytes (at most ${bounded})`);
});
