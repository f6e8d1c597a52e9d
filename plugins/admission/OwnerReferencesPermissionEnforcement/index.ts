// OwnerReferencesPermissionEnforcement: changing an object's metadata.ownerReferences needs permission
// to delete the object (creating it with owners does not), and setting blockOwnerDeletion on a
// reference needs permission to update the owner's `finalizers` sub-resource, both asked of the
// configured authorizers.
import { CONTRACT_VERSION, type AdmissionAttributes, type AuthorizationAttributes, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;


const refs = (o: unknown): J[] => ((o as J)?.metadata?.ownerReferences ?? []).filter((r: unknown) => r && typeof r === 'object');
/** Comparable form of a reference: same owner, same flags. */
const canon = (r: J) => JSON.stringify([r.apiVersion, r.kind, r.name, r.uid, r.controller ?? null, r.blockOwnerDeletion ?? null]);

/** References that newly block their owner's deletion (new ones, or old ones switched to true). */
export function newBlockingRefs(obj: unknown, old: unknown): J[] {
  const before = new Map(refs(old).map((r) => [r.uid, r]));
  return refs(obj).filter((r) => r.blockOwnerDeletion === true && before.get(r.uid)?.blockOwnerDeletion !== true);
}

export function changingOwners(obj: unknown, old: unknown): boolean {
  if (!old) return refs(obj).length > 0;
  const a = refs(obj).map(canon);
  const b = refs(old).map(canon);
  return a.length !== b.length || a.some((x, i) => x !== b[i]);
}

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'OwnerReferencesPermissionEnforcement',
  create(_options, host) {
    const ask = (a: AdmissionAttributes, verb: string, group: string, version: string, resource: string, subresource: string, namespace: string, name: string) => {
      const attrs: AuthorizationAttributes = {
        user: a.user, isResourceRequest: true, path: '', verb, apiPrefix: group ? 'apis' : 'api', apiGroup: group, apiVersion: version,
        namespace, resource, subresource, name,
      };
      return host.authorize(attrs);
    };
    return {
      // pod status writes by node agents carry owner references they may not delete: exempt, as in the reference
      handles: (op, a) => (op === 'CREATE' || op === 'UPDATE') && !(a.resource.group === '' && a.resource.resource === 'pods' && a.subresource === 'status'),
      async validate(a) {
        if (!changingOwners(a.object, a.oldObject)) return;
        if (a.operation !== 'CREATE') {
          const d = await ask(a, 'delete', a.resource.group, a.resource.version, a.resource.resource, a.subresource, a.namespace, a.name);
          if (d.decision !== 'allow') throw host.errors.admissionForbidden(a, `cannot set an ownerRef on a resource you can't delete: ${d.reason ?? ''}, <nil>`);
        }
        for (const ref of newBlockingRefs(a.object, a.oldObject)) {
          const [g, v] = String(ref.apiVersion ?? '').includes('/') ? String(ref.apiVersion).split('/') : ['', String(ref.apiVersion ?? '')];
          const owners = host.allTypes().filter((t) => t.group === g && t.version === v && t.kind === ref.kind);
          if (!owners.length) {
            throw host.errors.admissionForbidden(a, `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${ref.apiVersion} Kind ${ref.kind}: no matches for kind "${ref.kind}" in version "${ref.apiVersion}"`);
          }
          for (const t of owners) {
            const d = await ask(a, 'update', t.group, t.version, t.resource, 'finalizers', t.namespaced ? a.namespace : '', String(ref.name ?? ''));
            if (d.decision !== 'allow') throw host.errors.admissionForbidden(a, `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: ${d.reason ?? ''}, <nil>`);
          }
        }
      },
    };
  },
};
export default plugin;
