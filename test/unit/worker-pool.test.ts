// The worker pool (workers/pool.ts): what a worker answers always reaches the event loop, whatever
// its shape. A result nested deeper than the main thread's structured-clone reader takes (about
// 1,500 levels) used to be dropped as a 'messageerror' that piscina never sees: the task, and the
// write waiting on it, never settled.
import t from 'tap';
import { closeWorkers, runMerge } from '../../workers/pool.js';

t.teardown(closeWorkers);

t.test('a merge whose result nests 2,000 levels settles through the worker', async (t) => {
  let doc: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < 2000; i++) doc = { a: doc };
  const r = await runMerge({ op: 'merge-patch', doc, patch: { b: 1 } }, Number.MAX_SAFE_INTEGER);
  t.equal(r.ok, true);
  let v = (r as { value: Record<string, unknown> }).value;
  t.equal(v.b, 1);
  let depth = 0;
  while (v.a) { v = v.a as Record<string, unknown>; depth++; }
  t.equal(depth, 2000, 'the whole value came back');
  t.equal(v.leaf, true);
});
