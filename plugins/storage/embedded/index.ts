// The default storage backend: the kernel's classic-level revision log under <dataDir>/store.
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';
import { checkStoreFiles } from '../../../kernel/store/integrity.js';
import { StorageLog, type LogOptions } from '../../../kernel/store/log.js';

/** In the data directory: written once a store opened, so a later start without it is refused (see MarkedStore). */
export const STORE_MARKER = 'store-opened';

/**
 * The log, refusing to start a new store where one was opened before (the marker file exists): a
 * fresh store would issue resource versions again from 1 and clients would see every object
 * vanish. `startEmpty` (--storage-start-empty) starts it anyway.
 */
class MarkedStore extends StorageLog {
  constructor(dir: string, opts: LogOptions, private readonly marker: string, private readonly startEmpty: boolean) { super(dir, opts); }
  override async open(): Promise<void> {
    if (!this.startEmpty && existsSync(this.marker) && checkStoreFiles(this.dir) === 'new') {
      throw new Error(`the store ${this.dir} is missing or empty, but this data directory held one (${this.marker}): an empty store would ` +
        'issue resource versions again from 1 and clients would see every object vanish. Restore the store from a backup, ' +
        'or start with --storage-start-empty to begin again with an empty store');
    }
    await super.open();
    if (!existsSync(this.marker)) writeFileSync(this.marker, `${this.dir}\n`, { mode: 0o600 });
  }
}

const plugin: PluginModule<'storage'> = {
  kind: 'storage',
  contract: CONTRACT_VERSION,
  name: 'embedded',
  create(options, host) {
    const dir = typeof options.dir === 'string' ? options.dir : path.join(host.dataDir, 'store');
    const opts = { groupCommit: options.groupCommit !== false, sync: options.sync !== false, transformer: host.valueTransformer, warn: (msg: string) => host.log.warn(msg) };
    return new MarkedStore(dir, opts, path.join(host.dataDir, STORE_MARKER), options.startEmpty === true);
  },
};
export default plugin;
