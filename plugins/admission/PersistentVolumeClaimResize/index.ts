// PersistentVolumeClaimResize: an update that grows spec.resources.requests.storage is allowed only for
// a bound claim whose StorageClass (unchanged by the update) has allowVolumeExpansion: true. A claim
// never shrinks below its previous request.
import { CONTRACT_VERSION, type AdmissionAttributes, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';
import { parseQuantity } from '../ResourceQuota/quantity.js';

type J = Record<string, any>;

function forbidden(host: PluginHost, a: AdmissionAttributes, msg: string) {
  const gr = a.resource.group ? `${a.resource.resource}.${a.resource.group}` : a.resource.resource;
  const e = host.errors.status(403, 'Forbidden', `${gr}${a.name ? ` "${a.name}"` : ''} is forbidden: ${msg}`);
  e.details = { name: a.name || undefined, group: a.resource.group || undefined, kind: a.resource.resource };
  return e;
}

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'PersistentVolumeClaimResize',
  create(_options, host) {
    const kd = host.brand.keyDomain;
    // the class as the reference reads it: the beta annotation wins over the field
    const classOf = (pvc: J): string => pvc.metadata?.annotations?.[`volume.beta.${kd}/storage-class`] ?? pvc.spec?.storageClassName ?? '';
    const allowResize = async (pvc: J, old: J) => {
      const name = classOf(pvc);
      if (!name || name !== classOf(old)) return false;
      const scType = host.type(`storage.${host.brand.domain}`, 'storageclasses');
      const sc = scType && (await host.objects.get(scType, '', name));
      return sc?.allowVolumeExpansion === true;
    };
    return {
      handles: (op, a) => op === 'UPDATE' && a.resource.group === '' && a.resource.resource === 'persistentvolumeclaims' && !a.subresource,
      async validate(a) {
        const pvc = a.object as J;
        const old = a.oldObject as J;
        const size = parseQuantity(pvc.spec?.resources?.requests?.storage);
        const oldSize = parseQuantity(old.spec?.resources?.requests?.storage);
        if (!size || !oldSize || size.nano === oldSize.nano) return;
        if (size.nano < oldSize.nano) {
          throw host.errors.invalid('PersistentVolumeClaim', a.name, [{ reason: 'FieldValueForbidden', field: 'spec.resources.requests.storage', message: 'Forbidden: field can not be less than previous value' }]);
        }
        if (old.status?.phase !== 'Bound') throw forbidden(host, a, 'Only bound persistent volume claims can be expanded');
        if (!(await allowResize(pvc, old))) {
          throw forbidden(host, a, 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
        }
      },
    };
  },
};
export default plugin;
