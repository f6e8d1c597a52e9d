// The memory-only store (plugins/storage/memory) against the storage conformance suite. Reopening
// "the same dir" reopens the same in-process data, as a store closed and opened within one process.
import t from 'tap';
import { MemoryData, MemoryStore, compareKeys } from '../../plugins/storage/memory/store.js';
import { storageConformance } from '../lib/storage-conformance.js';

const data = new Map<string, MemoryData>();
const dataFor = (dir: string) => data.get(dir) ?? data.set(dir, new MemoryData()).get(dir)!;
await storageConformance(t, 'memory', (dir) => new MemoryStore(dataFor(dir)));

t.test('keys sort in UTF-8 byte order, as in the other backends', async (t) => {
  const keys = ['/a/\u{1F600}', '/a/\uFF21', '/a/z', '/a/\u00e9', '/a/'];
  const bytes = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
  t.same([...keys].sort(compareKeys), bytes, 'a code point above U+FFFF sorts after U+FF21, unlike plain string order');
  t.not([...keys].sort().join(), bytes.join(), 'plain string order differs here, so the test can fail');
});

t.test('a new store object on fresh data starts empty: nothing outlives the data it was given', async (t) => {
  const s = new MemoryStore();
  await s.open();
  await s.write({ type: 'create', key: '/x', value: () => Buffer.from('v') });
  await s.close();
  const again = new MemoryStore();
  await again.open();
  t.equal(await again.get('/x'), undefined);
  t.equal(again.currentRevision(), 0);
});
