// Node (--authorization-mode=Node): what a node agent (user system:node:<name> in group
// system:nodes) may do because of the pods bound to it. A graph kept by watches links each node to
// its pods and each pod to the secrets, config maps, claims and service account it references (and
// claims to their volumes). A node may read those objects, get/update/patch its own Node (and its
// status) and update the status of its pods. Anything else a node asks, and every request of a
// non-node user, gets no opinion, so a later authorizer (RBAC's system:node role) may still allow it.
import { CONTRACT_VERSION, type AuthorizationAttributes, type AuthorizationDecision, type Authorizer, type KObject, type PluginModule, type UserInfo } from '../../../kernel/contracts.js';
import { registerRulesResolver } from '../rbac/resolvers.js';

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

const READ_VERBS = new Set(['get', 'list', 'watch']);
/** Namespaced objects a node may read when one of its pods references them. */
const GRAPH_RESOURCES = new Set(['secrets', 'configmaps', 'persistentvolumeclaims', 'serviceaccounts', 'persistentvolumes']);

export function nodeDecision(graph: NodeGraph, a: AuthorizationAttributes): AuthorizationDecision {
  const node = nodeName(a.user);
  if (!node) return { decision: 'no-opinion' };
  if (!a.isResourceRequest || a.apiGroup !== '') return { decision: 'no-opinion' };
  const noRelation = { decision: 'no-opinion' as const, reason: `no relationship found between node '${node}' and this object` };
  if (GRAPH_RESOURCES.has(a.resource)) {
    if (a.resource === 'serviceaccounts' && a.subresource === 'token') {
      if (a.verb !== 'create') return { decision: 'no-opinion', reason: 'can only create tokens for individual service accounts' };
    } else if (!READ_VERBS.has(a.verb)) {
      return { decision: 'no-opinion', reason: 'can only read resources of this type' };
    } else if (a.subresource) {
      return { decision: 'no-opinion', reason: 'cannot read subresource' };
    }
    if (!a.name) return { decision: 'no-opinion', reason: 'No Object name found' };
    return graph.related(node, a.resource, a.namespace, a.name) ? { decision: 'allow' } : noRelation;
  }
  if (a.resource === 'nodes') {
    if (a.name !== node) return { decision: 'no-opinion' };
    if (a.subresource === '' && ['get', 'update', 'patch'].includes(a.verb)) return { decision: 'allow' };
    if (a.subresource === 'status' && ['get', 'update', 'patch'].includes(a.verb)) return { decision: 'allow' };
    return { decision: 'no-opinion' };
  }
  if (a.resource === 'pods' && a.subresource === 'status' && ['get', 'update', 'patch'].includes(a.verb) && a.name) {
    return graph.related(node, 'pods', a.namespace, a.name) ? { decision: 'allow' } : noRelation;
  }
  return { decision: 'no-opinion' };
}

const plugin: PluginModule<'authorizer'> = {
  kind: 'authorizer',
  contract: CONTRACT_VERSION,
  name: 'node',
  create(_options, host): Authorizer {
    const graph = new NodeGraph();
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
        if (!nodeName(attrs.user)) return { decision: 'no-opinion' };
        if (initialized) return nodeDecision(graph, attrs);
        return init.then(() => nodeDecision(graph, attrs));
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
