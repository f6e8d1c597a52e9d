// stringifySliced (workers/stringify.ts) writes a large object's JSON in time slices: its text must
// be JSON.stringify's, byte for byte, or a stored object would change with its size.
import t from 'tap';
import { Slicer } from '../../kernel/watch/slicer.js';
import { stringifySliced } from '../../workers/stringify.js';

t.test('the same text as JSON.stringify', async (t) => {
  const odd = JSON.parse('{"__proto__":{"x":1},"2":"two","1":"one","b":"b","0":"zero"}');
  const cases: unknown[] = [
    null, 5, -0, 'a "quoted"\u2028 string', true, [], {},
    odd,
    { a: 1, gone: undefined, f: () => 1, s: Symbol('s'), n: NaN, inf: -Infinity, d: new Date(0), own: { toJSON: () => 'mine' } },
    [1, undefined, () => 1, Symbol('s'), { nested: [[], {}, null] }],
    { deep: { er: { est: [{ k: 'v' }, 'x'] } } },
  ];
  for (const c of cases) t.equal(await stringifySliced(c), JSON.stringify(c));
  // Batches of members and walked members interleaved, in runs longer than a batch.
  const mixed: Record<string, unknown> = {};
  for (let i = 0; i < 3000; i++) mixed[i % 7 ? `k${i}` : String(i)] = i % 500 === 0 ? { at: i, list: [i, { i }] } : `v${i}`;
  t.equal(await stringifySliced({ data: mixed, list: Object.values(mixed) }), JSON.stringify({ data: mixed, list: Object.values(mixed) }));
});

t.test('a large object gives the event loop turns while it is written', async (t) => {
  const data = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`key-${i}`, 'v'.repeat(8)]));
  let turns = 0;
  const ticking = setInterval(() => turns++, 0);
  // A slicer whose slice is always used up: every batch is followed by a turn.
  const text = await stringifySliced({ data }, new Slicer(0));
  clearInterval(ticking);
  t.equal(text, JSON.stringify({ data }));
  t.ok(turns > 0, `timers ran while it was written (${turns})`);
});
