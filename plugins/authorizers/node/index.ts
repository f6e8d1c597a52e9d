// Node (--authorization-mode=Node): what a node agent (user system:node:<name> in group
// system:nodes) may do because of the pods bound to it. A graph kept by watches links each node to
// its pods and each pod to the secrets, config maps, claims and service account it references (and
// claims to their volumes). As in the reference, a node reads those objects only through the graph,
// its own Lease and CSINode by name, and everything else by the rules of the `system:node` role
// (which the default policy binds to nobody: they are evaluated here), NodeRestriction admission
// keeping its writes to its own Node and pods. Every request of a non-node user gets no opinion.
import { CONTRACT_VERSION, type AuthorizationAttributes, type AuthorizationDecision, type Authorizer, type KObject, type PluginModule, type UserInfo } from '../../../kernel/contracts/index.js';
import { brandGroup } from '../../../kernel/contracts/brand.js';
import { registerRulesResolver } from '../rbac/resolvers.js';
import { defaultPolicy } from '../rbac/defaults.js';
import { rulesAllow, rulesOf, type PolicyRule } from '../rbac/rules.js';

export const NODES_GROUP = 'system:nodes';
export const NODE_PREFIX = 'system:node:';

/** The node name of a node identity, or undefined for anyone else. */
export function nodeName(user: UserInfo): string | undefined {
  if (!user.username.startsWith(NODE_PREFIX) || !(user.groups ?? []).includes(NODES_GROUP)) return undefined;
  const n = user.username.slice(NODE_PREFIX.length);
  return n || undefined;
}

type J = Record<string, any>;
const objs = (v: unknown): J[] => (Array.isArray(v) ? v.filter((x) => x && typeof x === 'object') : []);

/** What a pod references, as "<resource>/<name>" (all in the pod's namespace). */
export function podReferences(pod: KObject): string[] {
  const spec = (pod.spec ?? {}) as J;
  const podName = pod.metadata?.name ?? '';
  const out = new Set<string>();
  const add = (resource: string, name: unknown) => { if (typeof name === 'string' && name) out.add(`${resource}/${name}`); };
  add('serviceaccounts', spec.serviceAccountName || (spec.serviceAccountName === undefined && spec.serviceAccount) || undefined);
  for (const s of objs(spec.imagePullSecrets)) add('secrets', s.name);
  for (const c of [...objs(spec.containers), ...objs(spec.initContainers), ...objs(spec.ephemeralContainers)]) {
    for (const e of objs(c.env)) {
      add('secrets', e.valueFrom?.secretKeyRef?.name);
      add('configmaps', e.valueFrom?.configMapKeyRef?.name);
    }
    for (const e of objs(c.envFrom)) {
      add('secrets', e.secretRef?.name);
      add('configmaps', e.configMapRef?.name);
    }
  }
  for (const v of objs(spec.volumes)) {
    add('secrets', v.secret?.secretName);
    add('configmaps', v.configMap?.name);
    add('persistentvolumeclaims', v.persistentVolumeClaim?.claimName);
    if (v.ephemeral) add('persistentvolumeclaims', `${podName}-${v.name}`);
    for (const p of objs(v.projected?.sources)) {
      add('secrets', p.secret?.name);
      add('configmaps', p.configMap?.name);
    }
    for (const k of ['azureFile', 'cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'storageos', 'iscsi', 'csi']) {
      const src = v[k] as J | undefined;
      if (!src) continue;
      add('secrets', src.secretName ?? src.secretRef?.name ?? src.nodePublishSecretRef?.name);
    }
  }
  return [...out];
}

/** The graph: node → pods → referenced objects, kept as reference counts per (object, node). */
export class NodeGraph {
  private pods = new Map<string, { node: string; refs: string[] }>();
  /** "<resource>/<ns>/<name>" → node → number of pods linking them. */
  private edges = new Map<string, Map<string, number>>();
  /** claim "<ns>/<name>" → bound volume name. */
  private claimVolume = new Map<string, string>();
  /** volume name → claims bound to it. */
  private volumeClaims = new Map<string, Set<string>>();

  private link(key: string, node: string, delta: number) {
    let m = this.edges.get(key);
    if (!m) {
      if (delta < 0) return;
      this.edges.set(key, (m = new Map()));
    }
    const n = (m.get(node) ?? 0) + delta;
    if (n > 0) m.set(node, n);
    else m.delete(node);
    if (!m.size) this.edges.delete(key);
  }

  setPod(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: KObject): void {
    const ns = pod.metadata?.namespace ?? '';
    const key = `${ns}/${pod.metadata?.name ?? ''}`;
    const prev = this.pods.get(key);
    if (prev) {
      for (const r of prev.refs) this.link(r, prev.node, -1);
      this.pods.delete(key);
    }
    const node = (pod.spec as J | undefined)?.nodeName;
    if (type === 'DELETED' || typeof node !== 'string' || !node) return;
    const refs = [`pods/${key}`, ...podReferences(pod).map((r) => { const i = r.indexOf('/'); return `${r.slice(0, i)}/${ns}/${r.slice(i + 1)}`; })];
    for (const r of refs) this.link(r, node, 1);
    this.pods.set(key, { node, refs });
  }

  setClaim(type: 'ADDED' | 'MODIFIED' | 'DELETED', claim: KObject): void {
    const key = `${claim.metadata?.namespace ?? ''}/${claim.metadata?.name ?? ''}`;
    const prev = this.claimVolume.get(key);
    if (prev) {
      this.volumeClaims.get(prev)?.delete(key);
      if (!this.volumeClaims.get(prev)?.size) this.volumeClaims.delete(prev);
      this.claimVolume.delete(key);
    }
    const vol = (claim.spec as J | undefined)?.volumeName;
    if (type === 'DELETED' || typeof vol !== 'string' || !vol) return;
    this.claimVolume.set(key, vol);
    let s = this.volumeClaims.get(vol);
    if (!s) this.volumeClaims.set(vol, (s = new Set()));
    s.add(key);
  }

  /** Whether an object ("secrets", "ns", "name") is linked to a node through one of its pods. */
  related(node: string, resource: string, namespace: string, name: string): boolean {
    if (resource === 'persistentvolumes') {
      for (const claim of this.volumeClaims.get(name) ?? []) if (this.edges.get(`persistentvolumeclaims/${claim}`)?.has(node)) return true;
      return false;
    }
    return this.edges.get(`${resource}/${namespace}/${name}`)?.has(node) ?? false;
  }

  get size(): number {
    return this.pods.size;
  }
}

const no = (reason?: string): AuthorizationDecision => (reason ? { decision: 'no-opinion', reason } : { decision: 'no-opinion' });
const OWN_OBJECT_VERBS = new Set(['get', 'create', 'update', 'patch', 'delete']);

/**
 * The reference's decision for a node identity: reads of what its pods reference through the graph
 * only; its Lease and CSINode by name; everything else by the `system:node` role's rules (the
 * reference binds that role to nobody and evaluates it here, with NodeRestriction admission limiting
 * writes to the node's own objects). `nodeRules` are those rules in the server's brand.
 */
export function nodeDecision(graph: NodeGraph, a: AuthorizationAttributes, nodeRules: PolicyRule[], groups: { coordination: string; storage: string; resource: string; leaseNamespace: string }): AuthorizationDecision {
  if (!a.user.username.startsWith(NODE_PREFIX) || !(a.user.groups ?? []).includes(NODES_GROUP)) return no();
  const node = nodeName(a.user);
  if (!node) return no(`unknown node for user "${a.user.username}"`);
  const related = (resource: string) => {
    if (!a.name) return no('No Object name found');
    return graph.related(node, resource, a.namespace, a.name) ? { decision: 'allow' as const } : no(`no relationship found between node '${node}' and this object`);
  };
  const get = (resource: string) => {
    if (a.verb !== 'get') return no('can only get individual resources of this type');
    if (a.subresource) return no('cannot get subresource');
    return related(resource);
  };
  const ownByName = (what: string, check?: () => AuthorizationDecision | undefined) => {
    if (!OWN_OBJECT_VERBS.has(a.verb)) return no(`can only get, create, update, patch, or delete ${what}`);
    const refused = check?.();
    if (refused) return refused;
    // create is checked by NodeRestriction admission: the name is not known here
    if (a.verb !== 'create' && a.name !== node) return no(`can only access ${what === 'a node lease' ? 'node lease' : what.replace(/^a /, '')} with the same name as the requesting node`);
    return { decision: 'allow' as const };
  };
  if (a.isResourceRequest) {
    const r = `${a.apiGroup}/${a.resource}`;
    switch (r) {
      case '/secrets':
      case '/configmaps':
        if (!['get', 'list', 'watch'].includes(a.verb)) return no('can only read resources of this type');
        if (a.subresource) return no('cannot read subresource');
        if (!a.namespace) return no('can only read namespaced object of this type');
        return related(a.resource);
      case '/persistentvolumeclaims':
        if (a.subresource === 'status') return ['update', 'patch'].includes(a.verb) ? related(a.resource) : no('can only get/update/patch this type');
        return get(a.resource);
      case '/persistentvolumes':
        return get(a.resource);
      case `${groups.resource}/resourceclaims`:
      case `${groups.storage}/volumeattachments`:
        // not in this server's graph: no relationship is known
        return get(a.resource);
      case '/serviceaccounts':
        if (a.verb !== 'create' || !a.name) return no('can only create tokens for individual service accounts');
        if (a.subresource !== 'token') return no('can only create token subresource of serviceaccount');
        return related(a.resource);
      case `${groups.coordination}/leases`:
        return ownByName('a node lease', () => (a.namespace !== groups.leaseNamespace ? no(`can only access leases in the "${groups.leaseNamespace}" system namespace`) : undefined));
      case `${groups.storage}/csinodes`:
        return ownByName('a CSINode', () => (a.subresource ? no('cannot authorize CSINode subresources') : undefined));
    }
  }
  return rulesAllow(a, nodeRules) ? { decision: 'allow' } : no();
}

const plugin: PluginModule<'authorizer'> = {
  kind: 'authorizer',
  contract: CONTRACT_VERSION,
  name: 'node',
  create(_options, host): Authorizer {
    const graph = new NodeGraph();
    const nodeRules = rulesOf(defaultPolicy(host.brand).clusterRoles.find((r) => r.metadata?.name === 'system:node'));
    const groups = { coordination: brandGroup(host.brand, 'coordination.cluster.io'), storage: brandGroup(host.brand, 'storage.cluster.io'), resource: brandGroup(host.brand, 'resource.cluster.io'), leaseNamespace: host.brand.nodeLeaseNamespace };
    const unwatch: (() => void)[] = [];
    let initialized = false;
    const feeds: [string, (t: 'ADDED' | 'MODIFIED' | 'DELETED', o: KObject) => void][] = [
      ['pods', (t, o) => graph.setPod(t, o)],
      ['persistentvolumeclaims', (t, o) => graph.setClaim(t, o)],
    ];
    const touched = new Set<string>();
    const key = (r: string, o: KObject) => `${r}/${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
    for (const [resource, feed] of feeds) {
      const t = host.type('', resource);
      if (t) unwatch.push(host.objects.watch(t, (ev, o) => { touched.add(key(resource, o)); feed(ev, o); }));
    }
    const init = (async () => {
      for (const [resource, feed] of feeds) {
        const t = host.type('', resource);
        if (!t) continue;
        let items: KObject[] | undefined;
        // The kernel's object store exists only after the authorizers are loaded: wait for it.
        for (const deadline = Date.now() + 60_000; !items;) {
          try { items = await host.objects.list(t); } catch (e) {
            if (!(e instanceof TypeError) || Date.now() > deadline) throw e;
            await new Promise((r) => setTimeout(r, 2));
          }
        }
        for (const o of items) if (!touched.has(key(resource, o))) feed('ADDED', o);
      }
      touched.clear();
    })().then(() => { initialized = true; }, (e) => { initialized = true; host.log.error('node authorizer: start-up failed', { error: String(e) }); });

    const unregister = registerRulesResolver(host.dataDir, 'node', (user) => (nodeName(user)
      ? { resourceRules: [], nonResourceRules: [], incomplete: true, error: 'node authorizer does not support user rule resolution' }
      : { resourceRules: [], nonResourceRules: [], incomplete: false }));

    return {
      authorize(attrs) {
        if (!attrs.user.username.startsWith(NODE_PREFIX)) return { decision: 'no-opinion' };
        if (initialized) return nodeDecision(graph, attrs, nodeRules, groups);
        return init.then(() => nodeDecision(graph, attrs, nodeRules, groups));
      },
      ready: () => initialized,
      async close() {
        for (const u of unwatch) u();
        unregister();
      },
    };
  },
};

export default plugin;
