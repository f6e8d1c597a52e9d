// The default storage backend: the kernel's classic-level revision log under <dataDir>/store.
import path from 'node:path';
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';
import { StorageLog } from '../../../kernel/store/log.js';

/** In the data directory: written once a store opened, so a later start without it is refused (see LogOptions.marker). */
export const STORE_MARKER = 'store-opened';

const plugin: PluginModule<'storage'> = {
  kind: 'storage',
  contract: CONTRACT_VERSION,
  name: 'embedded',
  create(options, host) {
    const dir = typeof options.dir === 'string' ? options.dir : path.join(host.dataDir, 'store');
    return new StorageLog(dir, {
      groupCommit: options.groupCommit !== false, sync: options.sync !== false, transformer: host.valueTransformer, warn: (msg) => host.log.warn(msg),
      marker: path.join(host.dataDir, STORE_MARKER), startEmpty: options.startEmpty === true,
    });
  },
};
export default plugin;
