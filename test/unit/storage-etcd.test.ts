// The etcd3 backend against the storage conformance suite, on a real etcd started for each sub-test
// (its data in the sub-test's directory, so reopening the backend reopens the same data).
import t from 'tap';
import { EtcdBackend } from '../../plugins/storage/etcd3/backend.js';
import { etcdMissing, startEtcd, type EtcdCluster } from '../lib/etcd.js';
import { storageConformance } from '../lib/storage-conformance.js';

if (etcdMissing) {
  t.test('etcd3 storage conformance', { skip: etcdMissing }, () => {});
} else {
  // One etcd at a time: a new directory means the previous sub-test is over.
  let current: { dir: string; etcd: EtcdCluster } | undefined;
  t.teardown(() => current?.etcd.stop());
  await storageConformance(t, 'etcd3', async (dir) => {
    if (current?.dir !== dir) {
      await current?.etcd.stop();
      current = { dir, etcd: await startEtcd({ dataDir: dir }) };
    }
    return new EtcdBackend({ servers: [current.etcd.servers], prefix: '/registry', timeoutMs: 5000 });
  });
}
