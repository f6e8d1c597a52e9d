// The embedded revision log (kernel/store/log.ts) against the storage conformance suite,
// with group commit on (the default) and off (one synced batch per write).
import t from 'tap';
import { StorageLog } from '../../kernel/store/log.js';
import { storageConformance } from '../lib/storage-conformance.js';

await storageConformance(t, 'embedded log, group commit', (dir) => new StorageLog(dir, { groupCommit: true }));
await storageConformance(t, 'embedded log, one sync per write', (dir) => new StorageLog(dir, { groupCommit: false }));
