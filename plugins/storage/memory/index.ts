// The memory-only storage backend (`storage: { plugin: memory }`, --ephemeral): the revision log of
// store.ts, for throwaway servers in tests. Every stop loses everything, by design.
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';
import { MemoryStore } from './store.js';

const plugin: PluginModule<'storage'> = {
  kind: 'storage',
  contract: CONTRACT_VERSION,
  name: 'memory',
  create(_options, host) {
    // nothing is at rest, so there is nothing to encrypt
    if (host.valueTransformer) host.log.warn('the memory store keeps values in this process only: the encryption configuration has nothing to encrypt');
    return new MemoryStore();
  },
};
export default plugin;
