// The etcd3 backend against the storage conformance suite, on a real etcd started for each sub-test
// (its data in the sub-test's directory, so reopening the backend reopens the same data); again with
// encryption at rest; and what the encrypted values look like in etcd.
import t from 'tap';
import { parseEncryptionConfig } from '../../kernel/ops/encryption.js';
import { EtcdBackend } from '../../plugins/storage/etcd3/backend.js';
import { etcdMissing, startEtcd, type EtcdCluster } from '../lib/etcd.js';
import { storageConformance } from '../lib/storage-conformance.js';

const encryption = parseEncryptionConfig(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: ['*.*']
    providers:
      - aesgcm:
          keys:
            - name: k1
              secret: ${Buffer.alloc(32, 7).toString('base64')}
`, 'test.yaml');

if (etcdMissing) {
  t.test('etcd3 storage conformance', { skip: etcdMissing }, () => {});
} else {
  // One etcd at a time: a new directory means the previous sub-test is over.
  let current: { dir: string; etcd: EtcdCluster } | undefined;
  t.teardown(() => current?.etcd.stop());
  const on = async (dir: string) => {
    if (current?.dir !== dir) {
      await current?.etcd.stop();
      current = { dir, etcd: await startEtcd({ dataDir: dir }) };
    }
    return current.etcd.servers;
  };
  await storageConformance(t, 'etcd3', async (dir) => new EtcdBackend({ servers: [await on(dir)], prefix: '/registry', timeoutMs: 5000 }));
  await storageConformance(t, 'etcd3 with encryption at rest', async (dir) => new EtcdBackend({ servers: [await on(dir)], prefix: '/registry', timeoutMs: 5000, transformer: encryption }));

  t.test('encrypted values in etcd', async (t) => {
    const etcd = await startEtcd();
    t.teardown(() => etcd.stop());
    const enc = new EtcdBackend({ servers: [etcd.servers], prefix: '/registry', timeoutMs: 5000, transformer: encryption });
    const raw = new EtcdBackend({ servers: [etcd.servers], prefix: '/registry', timeoutMs: 5000 });
    await enc.open();
    await raw.open();
    t.teardown(async () => { await enc.close(); await raw.close(); });
    const w = await enc.write({ type: 'create', key: '/core/secrets/default/s', value: (rev) => Buffer.from(`{"data":"top-secret","rv":"${rev}"}`) });
    t.ok(w.ok);
    const rev = w.ok ? w.revision : 0;
    t.equal(Buffer.from((await enc.get('/core/secrets/default/s'))!.value).toString(), `{"data":"top-secret","rv":"${rev}"}`, 'read back with its revision');
    const stored = Buffer.from((await raw.get('/core/secrets/default/s'))!.value).toString('latin1');
    t.match(stored, /^k8s:enc:aesgcm:v1:k1:/, 'stored with the reference\'s envelope prefix');
    t.notMatch(stored, /top-secret/, 'no plaintext in etcd');
  });
}
