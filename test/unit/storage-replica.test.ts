// A read loop's storage (kernel/replicas/replica.ts) against the storage conformance suite: a replica
// over a real MessageChannel of an embedded log on disk, the writer side answering as the writer
// loop does. The same suite every backend runs, so a read loop's server sees a store like any other.
import t from 'tap';
import { MessageChannel } from 'node:worker_threads';
import { StorageLog } from '../../kernel/store/log.js';
import { ReplicaBackend, ReplicaSource, SharedRevisions } from '../../kernel/replicas/replica.js';
import { storageConformance } from '../lib/storage-conformance.js';

await storageConformance(t, 'read-loop replica of the embedded log', (dir) => {
  const log = new StorageLog(dir, { groupCommit: true });
  const { port1, port2 } = new MessageChannel();
  const revisions = new SharedRevisions();
  const source = new ReplicaSource(port1, log, () => ({ rev: log.currentRevision(), kvs: log.all() }));
  log.onCommit((events, rev) => {
    revisions.publish(log.currentRevision(), log.compactedRevision());
    source.commit(events, rev);
  });
  const replica = new ReplicaBackend(port2, revisions);
  const open = replica.open.bind(replica);
  const close = replica.close.bind(replica);
  replica.open = async () => { await log.open(); revisions.publish(log.currentRevision(), log.compactedRevision()); await open(); };
  replica.close = async () => { await close(); port1.close(); await log.close(); };
  return replica;
});
