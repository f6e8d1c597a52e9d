// With read loops (--read-loops), the flow-control limits are the server's: each loop admits its share,
// so the loops together admit what one loop alone would (test/integration/read-loops.test.ts runs the loops).
import t from 'tap';
import maxInflight from '../../plugins/flowcontrol/max-inflight/index.js';
import type { FlowRequest, PluginHost } from '../../kernel/contracts/index.js';

const host = (loops: number) => ({ loops, metrics: { counter: () => ({ inc() {} }) } }) as unknown as PluginHost;
const write = { longRunning: false, user: { username: 'alice', groups: [] }, info: { isResourceRequest: true, verb: 'create' } } as unknown as FlowRequest;

async function admitted(loops: number, limit: number): Promise<number> {
  const fc = await maxInflight.create({ maxMutatingRequestsInflight: limit }, host(loops));
  let n = 0;
  while (n < 100 && (await fc.admit(write)).run) n++;
  return n;
}

t.test('max-inflight: each loop admits its share of the server\'s limit', async (t) => {
  t.equal(await admitted(1, 6), 6, 'one loop: the whole limit');
  t.equal(await admitted(3, 6), 2, 'three loops: a third each');
  t.equal(await admitted(4, 6), 2, 'a share is rounded up: no loop admits none');
  t.equal(await admitted(3, 0), 100, '0 stays no limit');
});
