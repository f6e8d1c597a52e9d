// NodeRestriction: limits what a node agent (user system:node:<name> in group system:nodes) may write:
// only its own Node object (not its taints, not its removal, only kubelet-owned labels and never
// node-restriction.<keyDomain>/ ones), mirror pods bound to itself (create, delete, status updates),
// claim status, its own Lease in the node-lease namespace and its own CSINode; it evicts only pods bound
// to itself and gets service-account tokens only bound to such a pod.
import { CONTRACT_VERSION, type AdmissionAttributes, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;


/** The node a user speaks for, if it is a node agent. */
export function nodeIdentity(user: { username: string; groups: string[] }): string | undefined {
  if (!user.username.startsWith('system:node:') || !user.groups.includes('system:nodes')) return undefined;
  return user.username.slice('system:node:'.length);
}

const labelDomain = (key: string) => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const under = (domain: string, root: string) => domain === root || domain.endsWith('.' + root);

/** Label keys a node agent may not set, change or remove (sorted). */
export function forbiddenLabels(labels: Record<string, string>, old: Record<string, string>, keyDomain: string, groupDomain: string): string[] {
  const changed = new Set<string>();
  for (const k of new Set([...Object.keys(labels), ...Object.keys(old)])) if (labels[k] !== old[k]) changed.add(k);
  const wellKnown = new Set([
    `${keyDomain}/hostname`, `${keyDomain}/os`, `${keyDomain}/arch`, `beta.${keyDomain}/os`, `beta.${keyDomain}/arch`,
    `beta.${keyDomain}/instance-type`, `node.${keyDomain}/instance-type`, `topology.${keyDomain}/region`, `topology.${keyDomain}/zone`,
    `failure-domain.beta.${keyDomain}/region`, `failure-domain.beta.${keyDomain}/zone`,
  ]);
  const kubeletOwned = (k: string) => wellKnown.has(k) || under(labelDomain(k), `kubelet.${keyDomain}`) || under(labelDomain(k), `node.${keyDomain}`);
  return [...changed].filter((k) => {
    const d = labelDomain(k);
    if (under(d, `node-restriction.${keyDomain}`)) return true;
    return (under(d, keyDomain) || under(d, groupDomain)) && !kubeletOwned(k);
  }).sort();
}

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'NodeRestriction',
  create(_options, host) {
    const kd = host.brand.keyDomain;
    const mirrorKey = `${kd}/config.mirror`;
    const leaseNamespace = host.brand.systemNamespace.replace(/-system$/, '') + '-node-lease';
    const coordination = `coordination.${host.brand.domain}`;
    const storage = `storage.${host.brand.domain}`;

    async function podCreate(node: string, a: AdmissionAttributes) {
      const pod = a.object as J;
      const spec: J = pod.spec ?? {};
      if (pod.metadata?.annotations?.[mirrorKey] === undefined) throw host.errors.admissionForbidden(a, `pod does not have "${mirrorKey}" annotation, node "${node}" can only create mirror pods`);
      if (spec.nodeName !== node) throw host.errors.admissionForbidden(a, `node "${node}" can only create pods with spec.nodeName set to itself`);
      const owners: J[] = pod.metadata?.ownerReferences ?? [];
      if (owners.length > 1) throw host.errors.admissionForbidden(a, `node "${node}" can only create pods with a single owner reference set to itself`);
      const owner = owners[0];
      if (!owner || owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node) throw host.errors.admissionForbidden(a, `node "${node}" can only create pods with an owner reference set to itself`);
      if (owner.controller !== true) throw host.errors.admissionForbidden(a, `node "${node}" can only create pods with a controller owner reference set to itself`);
      if (owner.blockOwnerDeletion === true) throw host.errors.admissionForbidden(a, `node "${node}" must not set blockOwnerDeletion on an owner reference`);
      const nodes = host.type('', 'nodes');
      const self = nodes && (await host.objects.get(nodes, '', node));
      if (!self) throw host.errors.notFound('', 'nodes', node);
      if (owner.uid !== self.metadata?.uid) throw host.errors.admissionForbidden(a, `node ${node} UID mismatch: expected ${self.metadata?.uid} got ${owner.uid ?? ''}`);
      if (spec.serviceAccountName) throw host.errors.admissionForbidden(a, `node "${node}" can not create pods that reference a service account`);
      const volumes: J[] = spec.volumes ?? [];
      const containers: J[] = ['initContainers', 'containers', 'ephemeralContainers'].flatMap((k) => spec[k] ?? []);
      const envRefs = (kind: 'secret' | 'configMap') => containers.some((c) =>
        (c?.env ?? []).some((e: J) => e?.valueFrom?.[`${kind}KeyRef`]) || (c?.envFrom ?? []).some((e: J) => e?.[`${kind}Ref`]));
      const secrets = spec.imagePullSecrets?.length || envRefs('secret') || volumes.some((v) => v?.secret || (v?.projected?.sources ?? []).some((s: J) => s?.secret)
        || Object.values(v ?? {}).some((src) => (src as J)?.secretRef || (src as J)?.nodePublishSecretRef));
      if (secrets) throw host.errors.admissionForbidden(a, `node "${node}" can not create pods that reference secrets`);
      if (envRefs('configMap') || volumes.some((v) => v?.configMap || (v?.projected?.sources ?? []).some((s: J) => s?.configMap))) {
        throw host.errors.admissionForbidden(a, `node "${node}" can not create pods that reference configmaps`);
      }
      if (volumes.some((v) => (v?.projected?.sources ?? []).some((s: J) => s?.clusterTrustBundle))) throw host.errors.admissionForbidden(a, `node "${node}" can not create pods that reference clustertrustbundles`);
      if (volumes.some((v) => v?.persistentVolumeClaim)) throw host.errors.admissionForbidden(a, `node "${node}" can not create pods that reference persistentvolumeclaims`);
    }

    /** A pod the node names, read as the reference reads it from its pod cache (a miss is its lister's NotFound). */
    async function existingPod(a: AdmissionAttributes, name: string): Promise<J> {
      const podType = host.type('', 'pods');
      const pod = podType && (await host.objects.get(podType, a.namespace, name));
      if (!pod) throw host.errors.notFound('', 'pod', name);
      return pod;
    }

    async function podEviction(node: string, a: AdmissionAttributes) {
      if (a.operation !== 'CREATE') throw host.errors.admissionForbidden(a, `unexpected operation ${a.operation}`);
      const name = a.name || (a.object as J)?.metadata?.name;
      if (!name) throw host.errors.admissionForbidden(a, 'could not determine pod from request data');
      const pod = await existingPod(a, name);
      if (pod.spec?.nodeName !== node) throw host.errors.admissionForbidden(a, `node ${node} can only evict pods with spec.nodeName set to itself`);
    }

    /** A node's service-account token must be bound to a pod scheduled on that node. */
    async function serviceAccountToken(node: string, a: AdmissionAttributes) {
      if (a.operation !== 'CREATE' || a.subresource !== 'token') return;
      const ref: J | undefined = (a.object as J)?.spec?.boundObjectRef ?? undefined;
      if (!ref || ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || !ref.name) throw host.errors.admissionForbidden(a, 'node requested token not bound to a pod');
      if (!ref.uid) throw host.errors.admissionForbidden(a, 'node requested token with a pod binding without a uid');
      const pod = await existingPod(a, ref.name);
      if (ref.uid !== pod.metadata?.uid) throw host.errors.admissionForbidden(a, `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
      if (pod.spec?.nodeName !== node) throw host.errors.admissionForbidden(a, 'node requested token bound to a pod scheduled on a different node');
    }

    async function pods(node: string, a: AdmissionAttributes) {
      if (a.subresource === 'status') {
        if (a.operation !== 'UPDATE') throw host.errors.admissionForbidden(a, `unexpected operation "${a.operation}"`);
        if ((a.oldObject as J)?.spec?.nodeName !== node) throw host.errors.admissionForbidden(a, `node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
        if (JSON.stringify((a.oldObject as J)?.metadata?.labels ?? {}) !== JSON.stringify((a.object as J)?.metadata?.labels ?? {})) {
          throw host.errors.admissionForbidden(a, `node "${node}" cannot update labels through pod status`);
        }
        return;
      }
      if (a.subresource === 'eviction') return podEviction(node, a);
      if (a.subresource) throw host.errors.admissionForbidden(a, `unexpected pod subresource "${a.subresource}", only 'status' and 'eviction' are allowed`);
      if (a.operation === 'CREATE') return podCreate(node, a);
      if (a.operation === 'DELETE') {
        if ((a.oldObject as J)?.spec?.nodeName !== node) throw host.errors.admissionForbidden(a, `node "${node}" can only delete pods with spec.nodeName set to itself`);
        return;
      }
      throw host.errors.admissionForbidden(a, `unexpected operation "${a.operation}", node "${node}" can only create and delete mirror pods`);
    }

    function nodes(node: string, a: AdmissionAttributes) {
      const target = a.name || (a.object as J)?.metadata?.name || '';
      if (target !== node) throw host.errors.admissionForbidden(a, `node "${node}" is not allowed to modify node "${target}"`);
      const obj = a.object as J;
      if (a.operation === 'DELETE') throw host.errors.admissionForbidden(a, `node "${node}" is not allowed to delete its own Node object`);
      if (a.operation === 'CREATE') {
        if (obj.spec?.configSource != null) throw host.errors.admissionForbidden(a, `node "${node}" is not allowed to create pods with a non-nil configSource`);
        const bad = forbiddenLabels(obj.metadata?.labels ?? {}, {}, kd, host.brand.domain);
        if (bad.length) throw host.errors.admissionForbidden(a, `node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`);
      }
      if (a.operation === 'UPDATE') {
        const old = a.oldObject as J;
        if (obj.spec?.configSource != null && JSON.stringify(obj.spec.configSource) !== JSON.stringify(old.spec?.configSource)) {
          throw host.errors.admissionForbidden(a, `node "${node}" is not allowed to update configSource to a new non-nil configSource`);
        }
        if (JSON.stringify(obj.spec?.taints ?? []) !== JSON.stringify(old.spec?.taints ?? [])) throw host.errors.admissionForbidden(a, `node "${node}" is not allowed to modify taints`);
        const bad = forbiddenLabels(obj.metadata?.labels ?? {}, old.metadata?.labels ?? {}, kd, host.brand.domain);
        if (bad.length) throw host.errors.admissionForbidden(a, `is not allowed to modify labels: ${bad.join(', ')}`);
      }
    }

    function claimStatus(node: string, a: AdmissionAttributes) {
      if (a.subresource !== 'status') throw host.errors.admissionForbidden(a, 'may only update PVC status');
      if (a.operation !== 'UPDATE') throw host.errors.admissionForbidden(a, `unexpected operation "${a.operation}"`);
      const strip = (o: J) => {
        const { capacity: _c, conditions: _k, ...status } = o.status ?? {};
        const { resourceVersion: _r, managedFields: _m, ...metadata } = o.metadata ?? {};
        return JSON.stringify({ ...o, metadata, status });
      };
      if (strip(a.object as J) !== strip(a.oldObject as J)) {
        throw host.errors.admissionForbidden(a, `node "${node}" is not allowed to update fields other than status.quantity and status.conditions`);
      }
    }

    function sameName(node: string, a: AdmissionAttributes, what: string) {
      const name = a.operation === 'CREATE' ? (a.object as J)?.metadata?.name : a.name;
      if (name !== node) throw host.errors.admissionForbidden(a, `can only access ${what} with the same name as the requesting node`);
    }

    return {
      // only a node's own requests (the write path then knows no other request was changed here)
      handles: (op, a) => op !== 'CONNECT' && nodeIdentity(a.user) !== undefined,
      async admit(a) {
        const node = nodeIdentity(a.user);
        if (node === undefined) return;
        if (!node) throw host.errors.admissionForbidden(a, `could not determine node from user "${a.user.username}"`);
        const { group, resource } = a.resource;
        if (group === '' && resource === 'pods') return pods(node, a);
        if (group === '' && resource === 'nodes') return nodes(node, a);
        if (group === '' && resource === 'persistentvolumeclaims') return claimStatus(node, a);
        if (group === '' && resource === 'serviceaccounts') return serviceAccountToken(node, a);
        if (group === coordination && resource === 'leases') {
          if (a.namespace !== leaseNamespace) throw host.errors.admissionForbidden(a, `can only access leases in the "${leaseNamespace}" system namespace`);
          return sameName(node, a, 'node lease');
        }
        if (group === storage && resource === 'csinodes') return sameName(node, a, 'CSINode');
      },
    };
  },
};
export default plugin;
