// StorageObjectInUseProtection: new PersistentVolumeClaims get the <keyDomain>/pvc-protection finalizer
// and new PersistentVolumes <keyDomain>/pv-protection, so they are not removed while in use.
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'StorageObjectInUseProtection',
  create(_options, host) {
    const finalizers: Record<string, string> = {
      persistentvolumeclaims: `${host.brand.keyDomain}/pvc-protection`,
      persistentvolumes: `${host.brand.keyDomain}/pv-protection`,
    };
    return {
      handles: (op, a) => op === 'CREATE' && a.resource.group === '' && !!finalizers[a.resource.resource] && !a.subresource,
      admit(a) {
        const f = finalizers[a.resource.resource];
        const md = (a.object!.metadata ??= {});
        const list = Array.isArray(md.finalizers) ? md.finalizers : [];
        if (!list.includes(f)) md.finalizers = [...list, f];
      },
    };
  },
};
export default plugin;
