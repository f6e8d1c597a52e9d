// DefaultStorageClass: a PersistentVolumeClaim created without a class (neither spec.storageClassName
// nor the beta volume.beta.<keyDomain>/storage-class annotation) gets the class annotated
// storageclass.<keyDomain>/is-default-class "true" (or the beta form). No default: nothing changes;
// more than one: the claim is refused, as the reference does.
import { CONTRACT_VERSION, type AdmissionAttributes, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;


const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'DefaultStorageClass',
  create(_options, host) {
    const kd = host.brand.keyDomain;
    const isDefault = (sc: J) => sc.metadata?.annotations?.[`storageclass.${kd}/is-default-class`] === 'true'
      || sc.metadata?.annotations?.[`storageclass.beta.${kd}/is-default-class`] === 'true';
    return {
      handles: (op, a) => op === 'CREATE' && a.resource.group === '' && a.resource.resource === 'persistentvolumeclaims' && !a.subresource,
      async admit(a) {
        const pvc = a.object as J;
        const spec: J = pvc.spec ?? (pvc.spec = {});
        if (spec.storageClassName !== undefined && spec.storageClassName !== null) return; // "" is a class too: "no class"
        if (pvc.metadata?.annotations?.[`volume.beta.${kd}/storage-class`] !== undefined) return;
        const scType = host.type(`storage.${host.brand.domain}`, 'storageclasses');
        if (!scType) return;
        const defaults = (await host.objects.list(scType)).filter(isDefault);
        if (defaults.length > 1) throw host.errors.admissionForbidden(a, `Internal error occurred: ${defaults.length} default StorageClasses were found`);
        if (defaults.length === 1) spec.storageClassName = defaults[0].metadata!.name;
      },
    };
  },
};
export default plugin;
