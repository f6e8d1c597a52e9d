// Pure parts of the etcd3 storage plugin: the value encoding, key ranges, and the flags that select it.
import t from 'tap';
import { defaultConfig } from '../../kernel/ops/config.js';
import { applyFlags, parseFlags } from '../../kernel/ops/flags.js';
import { prefixEnd } from '../../plugins/storage/etcd3/backend.js';
import { encodeTemplate, stamp } from '../../kernel/replicas/template.js';

const apply = (...argv: string[]) => applyFlags(defaultConfig(), parseFlags(argv));

t.test('value encoding: the revision is cut out at write and written back at read', async (t) => {
  let calls = 0;
  const json = (rev: number) => { calls++; return Buffer.from(JSON.stringify({ metadata: { name: 'a', resourceVersion: String(rev) }, data: { copy: `rv=${rev}`, other: '12345' } })); };
  const stored = encodeTemplate(json);
  t.equal(calls, 1, 'the callback runs once');
  t.same([stored[0], stored[1], stored[2]], [0, 1, 2], 'magic, and two occurrences recorded');
  for (const rev of [1, 42, 9_007_199_254]) t.equal(stamp(stored, rev).toString(), json(rev).toString(), `read back at revision ${rev}`);
  const plain = encodeTemplate(() => Buffer.from('{"no":"revision"}'));
  t.equal(plain[2], 0);
  t.equal(stamp(plain, 7).toString(), '{"no":"revision"}', 'a value without the revision');
  t.equal(stamp(Buffer.from('{"foreign":1}'), 7).toString(), '{"foreign":1}', 'values written by others pass through');
  t.equal(stamp(Buffer.alloc(0), 7).length, 0);
  t.throws(() => encodeTemplate(() => { throw new Error('boom'); }), { message: 'boom' });
});

t.test('prefixEnd is the first key after the prefix', async (t) => {
  t.same(prefixEnd(Buffer.from('/registry/')), Buffer.from('/registry0'));
  t.same(prefixEnd(Buffer.from([0x61, 0xff, 0xff])), Buffer.from([0x62]));
  t.same(prefixEnd(Buffer.from([0xff])), Buffer.from([0]), 'no end: the whole keyspace');
});

t.test('flags', async (t) => {
  const c = apply('--storage-backend=etcd3', '--etcd-servers=http://a:2379,https://b:2379', '--etcd-prefix=/x', '--etcd-cafile=/ca', '--etcd-certfile=/c', '--etcd-keyfile=/k', '--etcd-compaction-interval=1m');
  t.same(c.storage, { plugin: 'etcd3', options: { retentionSeconds: 60, servers: ['http://a:2379', 'https://b:2379'], caFile: '/ca', certFile: '/c', keyFile: '/k', prefix: '/x' } });
  t.equal(apply('--storage-backend=etcd3', '--etcd-servers=http://a:2379', '--etcd-compaction-interval=0').storage.options?.retentionSeconds, 0, '0 turns compaction off');
  t.throws(() => apply('--etcd-servers=http://a:2379'), /need --storage-backend=etcd3/, 'etcd flags without the etcd backend');
  t.same(apply().leaderElection, { leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2 }, 'leader election: the reference timings, on by backend');
  t.same(apply('--leader-elect=false', '--leader-elect-lease-duration=4s', '--leader-elect-renew-deadline=3s', '--leader-elect-retry-period=500ms').leaderElection,
    { enabled: false, leaseDurationSeconds: 4, renewDeadlineSeconds: 3, retryPeriodSeconds: 0.5 });
  t.equal(apply('--storage-backend=embedded').storage.plugin, 'embedded');
});
