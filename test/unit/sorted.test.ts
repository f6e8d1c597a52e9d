// The cache's blocked sorted list against a plain sorted array, over random inserts, replaces and removals.
import t from 'tap';
import { SortedEntries } from '../../kernel/store/sorted.js';
import type { Entry } from '../../kernel/store/cache.js';

const entry = (namespace: string, name: string, rev = 1): Entry => ({ key: `${namespace}/${name}`, namespace, name, uid: '', rev, createRev: rev, bytes: Buffer.alloc(0), labels: undefined, fields: {} });

t.test('matches a sorted array under random operations', async (t) => {
  const s = new SortedEntries();
  const ref = new Map<string, Entry>();
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
  for (let i = 0; i < 20000; i++) {
    const ns = `ns${rnd(5)}`;
    const name = `n${rnd(3000)}`;
    if (rnd(4) === 0) { s.remove(ns, name); ref.delete(`${ns}/${name}`); }
    else { const e = entry(ns, name, i); s.put(e); ref.set(e.key, e); }
  }
  const want = [...ref.values()].sort((a, b) => (a.namespace === b.namespace ? (a.name < b.name ? -1 : 1) : a.namespace < b.namespace ? -1 : 1));
  const got = [...s.from()];
  t.equal(s.size, want.length, 'size');
  t.same(got.map((e) => e.key), want.map((e) => e.key), 'order');
  t.same(got.map((e) => e.rev), want.map((e) => e.rev), 'replaced entries are the newest');
  for (const [ns, name] of [['', ''], ['ns0', ''], ['ns2', 'n5'], ['ns4', 'n9999'], ['ns9', ''], ['ns3', 'n1\0']]) {
    const before = want.filter((e) => e.namespace < ns || (e.namespace === ns && e.name < name)).length;
    t.equal(s.rank(ns, name), before, `rank of (${ns}, ${JSON.stringify(name)})`);
  }
  const from = [...s.from('ns2', 'n5')];
  t.same(from.map((e) => e.key), want.filter((e) => e.namespace > 'ns2' || (e.namespace === 'ns2' && e.name >= 'n5')).map((e) => e.key), 'iteration from a position');
});

t.test('namespace order is by namespace, then name (not by key string)', async (t) => {
  const s = new SortedEntries();
  for (const [ns, n] of [['a-b', 'x'], ['a', 'z'], ['a', 'y']]) s.put(entry(ns, n));
  t.same([...s.from()].map((e) => `${e.namespace}/${e.name}`), ['a/y', 'a/z', 'a-b/x']);
});

t.test('entries put in order (a start-up) are appended, and the list stays whole for later inserts and removals', async (t) => {
  const s = new SortedEntries();
  const names = Array.from({ length: 5000 }, (_, i) => `n${String(i).padStart(5, '0')}`);
  for (const n of names) s.put(entry('ns', n));
  s.put(entry('ns', names[10], 2)); // a replace of an appended entry
  t.equal(s.size, 5000, 'size');
  t.same([...s.from()].map((e) => e.name), names, 'order');
  t.equal([...s.from('ns', names[10])][0].rev, 2, 'the replace took');
  t.equal(s.rank('ns', names[4321]), 4321, 'rank across blocks');
  s.put(entry('ns', 'n02500a'));
  s.remove('ns', names[0]);
  const want = [...names.slice(1, 2501), 'n02500a', ...names.slice(2501)];
  t.same([...s.from()].map((e) => e.name), want, 'an insert in the middle and a removal at the front');
  t.equal(s.rank('ns', 'n02500a'), 2500);
});
