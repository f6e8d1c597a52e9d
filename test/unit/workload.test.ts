// The workload controllers' pure helpers: the ActivePods-like order of surplus pods, int-or-percent
// scaling, the Indexed job's completedIndexes format, and the hashes' alphabet and stability.
import t from 'tap';
import { byLeastValuable, fnv32, safeEncode, scaledValue } from '../../plugins/lib/workload.js';
import { formatIndexes, parseIndexes } from '../../plugins/controllers/job/index.js';
import { templateHash } from '../../plugins/controllers/deployment/index.js';

const pod = (name: string, o: { node?: string; phase?: string; readySince?: string; created?: string; restarts?: number } = {}) => ({
  metadata: { name, creationTimestamp: o.created ?? '2024-01-01T00:00:00Z' },
  spec: o.node ? { nodeName: o.node } : {},
  status: {
    phase: o.phase ?? 'Pending',
    conditions: o.readySince ? [{ type: 'Ready', status: 'True', lastTransitionTime: o.readySince }] : [],
    containerStatuses: [{ restartCount: o.restarts ?? 0 }],
  },
});

t.test('surplus pods go least valuable first', async (t) => {
  const pods = [
    pod('ready-long', { node: 'n', phase: 'Running', readySince: '2024-01-01T00:00:00Z' }),
    pod('ready-recent', { node: 'n', phase: 'Running', readySince: '2024-01-02T00:00:00Z' }),
    pod('running-not-ready', { node: 'n', phase: 'Running' }),
    pod('pending-scheduled', { node: 'n' }),
    pod('unscheduled'),
    pod('restarting', { node: 'n', phase: 'Running', restarts: 3 }),
  ];
  t.same([...pods].sort(byLeastValuable).map((p) => p.metadata.name), ['unscheduled', 'pending-scheduled', 'restarting', 'running-not-ready', 'ready-recent', 'ready-long']);
});

t.test('int-or-percent values scale with their rounding', async (t) => {
  t.equal(scaledValue('25%', 3, true), 1);
  t.equal(scaledValue('25%', 3, false), 0);
  t.equal(scaledValue(2, 10, false), 2);
});

t.test('completedIndexes', async (t) => {
  t.equal(formatIndexes([5, 0, 1, 2, 7, 8, 1]), '0-2,5,7-8');
  t.same(parseIndexes('0-2,5,7-8'), [0, 1, 2, 5, 7, 8]);
  t.same(parseIndexes(''), []);
});

t.test('hashes', async (t) => {
  t.equal(fnv32(Buffer.from(''), true), 0x811c9dc5);
  t.equal(fnv32(Buffer.from('a'), true), 0xe40c292c, 'FNV-1a test vector');
  t.equal(fnv32(Buffer.from('a'), false), 0x050c5d7e, 'FNV-1 test vector');
  t.match(safeEncode(1234567890), /^[bcdfghjklmnpqrstvwxz2456789]{10}$/);
  const a = templateHash({ metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } });
  const b = templateHash({ spec: { containers: [{ image: 'i', name: 'c' }] }, metadata: { labels: { app: 'x' } } });
  t.equal(a, b, 'key order does not matter');
  t.not(templateHash({ spec: {} }), templateHash({ spec: {} }, 1), 'a collision count changes the hash');
});
