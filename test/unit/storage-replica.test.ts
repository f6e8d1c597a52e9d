// A read loop's storage (kernel/replicas/replica.ts) against the storage conformance suite: a replica
// over a real MessageChannel of an embedded log on disk, the writer side answering as the writer
// loop does. The same suite every backend runs, so a read loop's server sees a store like any other.
import t from 'tap';
import { MessageChannel } from 'node:worker_threads';
import { StorageLog } from '../../kernel/store/log.js';
import { ReplicaBackend, ReplicaSource, SharedRevisions } from '../../kernel/replicas/replica.js';
import { storageConformance } from '../lib/storage-conformance.js';
import type { KV } from '../../kernel/contracts/index.js';

await storageConformance(t, 'read-loop replica of the embedded log', (dir) => {
  const log = new StorageLog(dir, { groupCommit: true });
  const { port1, port2 } = new MessageChannel();
  const revisions = new SharedRevisions();
  // the writer's current values, kept as the writer's cache keeps them: from the log at open, then from its commits
  const current = new Map<string, KV>();
  const source = new ReplicaSource(port1, log, () => ({ rev: log.currentRevision(), kvs: [...current.values()] }));
  log.onCommit((events, rev) => {
    for (const e of events) {
      if (e.type === 'DELETED') current.delete(e.key);
      else current.set(e.key, { key: e.key, value: e.value, modRevision: e.revision, createRevision: e.createRevision });
    }
    revisions.publish(log.currentRevision(), log.compactedRevision());
    source.commit(events, rev);
  });
  const replica = new ReplicaBackend(port2, revisions);
  const open = replica.open.bind(replica);
  const close = replica.close.bind(replica);
  replica.open = async () => {
    await log.open();
    for await (const kv of log.all()) current.set(kv.key, kv);
    revisions.publish(log.currentRevision(), log.compactedRevision());
    await open();
  };
  replica.close = async () => { await close(); port1.close(); await log.close(); };
  return replica;
});
