// The default storage backend: the kernel's classic-level revision log under <dataDir>/store.
import path from 'node:path';
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';
import { StorageLog } from '../../../kernel/store/log.js';

const plugin: PluginModule<'storage'> = {
  kind: 'storage',
  contract: CONTRACT_VERSION,
  name: 'embedded',
  create(options, host) {
    const dir = typeof options.dir === 'string' ? options.dir : path.join(host.dataDir, 'store');
    return new StorageLog(dir, { groupCommit: options.groupCommit !== false, sync: options.sync !== false, transformer: host.valueTransformer, warn: (msg) => host.log.warn(msg) });
  },
};
export default plugin;
