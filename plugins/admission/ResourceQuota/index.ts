// ResourceQuota: every create (and usage-raising update) of a namespaced object is checked against the
// namespace's ResourceQuota objects and charged to their status.used before the object is stored.
// Charges are serialized per namespace and written through the status sub-resource with the quota's
// resourceVersion, so two concurrent requests can never both take the last unit. Dry-run requests are
// checked but not charged. A small controller loop inside the plugin recomputes status.used from the
// stored objects (when a quota is created or its spec changes, when tracked objects are deleted or
// modified, and every resyncPeriodSeconds), which also undoes charges of creates that failed later.
import { CONTRACT_VERSION, type AdmissionAttributes, type KObject, type PluginHost, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';
import { qosClass } from '../../types/builtin/defaults.js';
import {
  addLists, addQuantity, count, mask, podTotal, prettyPrint, resourceList, toJSON, zero, type Quantity, type ResourceList,
} from './quantity.js';

type J = Record<string, any>;


const list = (v: unknown): J[] => (Array.isArray(v) ? v.filter((x) => x && typeof x === 'object') : []);
const COMPUTE = ['cpu', 'memory', 'ephemeral-storage'];
/** Core resources the reference also counts under their bare name. */
const LEGACY_COUNTS = ['pods', 'services', 'configmaps', 'secrets', 'replicationcontrollers', 'resourcequotas', 'persistentvolumeclaims'];
/** Resources a pod's containers must each request (or limit) when a quota limits them. */
const MUST_SPECIFY = ['cpu', 'limits.cpu', 'limits.memory', 'memory', 'requests.cpu', 'requests.memory'];

// ---------------------------------------------------------------- usage of one object


/** The reference's podComputeUsageHelper: compute resources under their quota names. */
function computeUsage(requests: ResourceList, limits: ResourceList, extendedResource: (name: string) => boolean): ResourceList {
  const out: ResourceList = new Map();
  for (const r of COMPUTE) {
    const req = requests.get(r);
    if (req) out.set(r, req).set(`requests.${r}`, req);
    const lim = limits.get(r);
    if (lim) out.set(`limits.${r}`, lim);
  }
  for (const [r, q] of requests) {
    if (r.startsWith('hugepages-')) out.set(r, q).set(`requests.${r}`, q);
    else if (extendedResource(r)) out.set(`requests.${r}`, q);
  }
  return out;
}

/** Pods that have finished (or whose deletion grace has passed) use nothing but their count/pods. */
function terminal(pod: J): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return true;
  const del = pod.metadata?.deletionTimestamp;
  const grace = pod.metadata?.deletionGracePeriodSeconds;
  return !!del && grace != null && Date.parse(del) + grace * 1000 < Date.now();
}

// ---------------------------------------------------------------- scopes

function scopeMatches(s: J, pod: J): boolean {
  const spec: J = pod.spec ?? {};
  const terminating = typeof spec.activeDeadlineSeconds === 'number' && spec.activeDeadlineSeconds >= 0;
  const pc: string = spec.priorityClassName ?? '';
  const values: string[] = Array.isArray(s.values) ? s.values : [];
  switch (s.scopeName) {
    case 'Terminating': return terminating;
    case 'NotTerminating': return !terminating;
    case 'BestEffort': return qosClass(spec) === 'BestEffort';
    case 'NotBestEffort': return qosClass(spec) !== 'BestEffort';
    case 'PriorityClass':
      if (s.operator === 'In') return values.includes(pc);
      if (s.operator === 'NotIn') return !values.includes(pc);
      if (s.operator === 'DoesNotExist') return pc === '';
      return pc !== '';
    case 'CrossNamespacePodAffinity': {
      const terms = ['podAffinity', 'podAntiAffinity'].flatMap((k) => {
        const a = spec.affinity?.[k] ?? {};
        return [...list(a.requiredDuringSchedulingIgnoredDuringExecution), ...list(a.preferredDuringSchedulingIgnoredDuringExecution).map((w) => w.podAffinityTerm ?? {})];
      });
      return terms.some((t) => (Array.isArray(t.namespaces) && t.namespaces.length > 0) || t.namespaceSelector != null);
    }
    default: return false;
  }
}

/** Whether a quota applies to an object: always without scopes; with scopes, only to pods in all of them. */
function quotaMatches(quota: J, type: TypeDef, obj: J): boolean {
  const scopes = [
    ...(Array.isArray(quota.spec?.scopes) ? quota.spec.scopes : []).map((scopeName: string) => ({ scopeName, operator: 'Exists' })),
    ...list(quota.spec?.scopeSelector?.matchExpressions),
  ];
  if (!scopes.length) return true;
  return type.group === '' && type.resource === 'pods' && scopes.every((s) => scopeMatches(s, obj));
}

/** The reference's pod Constraints: "must specify limits.cpu for: a,b; requests.cpu for: a". */
export function podConstraints(pod: J, hardKeys: Set<string>): string | undefined {
  const required = MUST_SPECIFY.filter((k) => hardKeys.has(k));
  if (!required.length) return undefined;
  const missing = new Map<string, Set<string>>();
  for (const c of [...list(pod.spec?.containers), ...list(pod.spec?.initContainers)]) {
    const have = computeUsage(resourceList(c.resources?.requests), resourceList(c.resources?.limits), () => false);
    for (const r of required) if (!have.has(r)) missing.set(r, (missing.get(r) ?? new Set()).add(String(c.name)));
  }
  if (!missing.size) return undefined;
  return 'must specify ' + [...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`).join('; ');
}

// ---------------------------------------------------------------- the plugin

interface Pending { resource: string; name: string; usage: ResourceList; quotas: Set<string>; expires: number }

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'ResourceQuota',
  create(options, host) {
    const resyncMs = Math.max(1, Number(options.resyncPeriodSeconds ?? 30)) * 1000;
    const pendingMs = Math.max(1, Number(options.pendingChargeSeconds ?? 10)) * 1000;
    const kd = host.brand.keyDomain;
    const scSuffix = `.storageclass.storage.${host.brand.domain}/`;
    const quotaType = () => host.type('', 'resourcequotas');
    const extended = (r: string) => r.includes('/') && !r.includes(`${kd}/`) && !r.startsWith('requests.');
    const gr = (t: TypeDef) => (t.group ? `${t.resource}.${t.group}` : t.resource);

    /** What one object uses, under every quota name that applies to it. */
    function usageOf(type: TypeDef, obj: J): ResourceList {
      const out: ResourceList = new Map([[`count/${gr(type)}`, count(1)]]);
      if (type.group !== '') return out;
      const r = type.resource;
      if (r === 'pods') {
        if (terminal(obj)) return out;
        out.set('pods', count(1));
        for (const [k, q] of computeUsage(podTotal(obj.spec ?? {}, 'requests'), podTotal(obj.spec ?? {}, 'limits'), extended)) out.set(k, q);
        return out;
      }
      if (LEGACY_COUNTS.includes(r)) out.set(r, count(1));
      if (r === 'services') {
        const ports = list(obj.spec?.ports).length;
        if (obj.spec?.type === 'NodePort') out.set('services.nodeports', count(ports));
        if (obj.spec?.type === 'LoadBalancer') {
          out.set('services.loadbalancers', count(1));
          if (obj.spec?.allocateLoadBalancerNodePorts !== false) out.set('services.nodeports', count(ports));
        }
      }
      if (r === 'persistentvolumeclaims') {
        const cls: string = obj.metadata?.annotations?.[`volume.beta.${kd}/storage-class`] ?? obj.spec?.storageClassName ?? '';
        if (cls) out.set(`${cls}${scSuffix}persistentvolumeclaims`, count(1));
        const req = resourceList(obj.spec?.resources?.requests).get('storage');
        const alloc = resourceList(obj.status?.allocatedResources).get('storage');
        const storage = alloc && (!req || alloc.nano > req.nano) ? alloc : req;
        if (storage) {
          out.set('requests.storage', storage);
          if (cls) out.set(`${cls}${scSuffix}requests.storage`, storage);
        }
      }
      return out;
    }

    /** The type whose objects a quota name counts. */
    function typeOfKey(k: string): TypeDef | undefined {
      if (k.startsWith('count/')) {
        const g = k.slice(6);
        const dot = g.indexOf('.');
        return dot < 0 ? host.type('', g) : host.type(g.slice(dot + 1), g.slice(0, dot));
      }
      if (k === 'requests.storage' || k === 'persistentvolumeclaims' || k.includes(scSuffix)) return host.type('', 'persistentvolumeclaims');
      if (k.startsWith('services')) return host.type('', 'services');
      if (LEGACY_COUNTS.includes(k)) return host.type('', k);
      if (k === 'pods' || COMPUTE.includes(k) || k.startsWith('requests.') || k.startsWith('limits.') || k.startsWith('hugepages-')) return host.type('', 'pods');
      return undefined;
    }

    // ------------------------------------------------ per-namespace serialization

    const chains = new Map<string, Promise<unknown>>();
    function serialize<T>(ns: string, fn: () => Promise<T>): Promise<T> {
      const run = (chains.get(ns) ?? Promise.resolve()).then(fn, fn);
      const tail = run.then(() => undefined, () => undefined);
      chains.set(ns, tail);
      void tail.then(() => { if (chains.get(ns) === tail) chains.delete(ns); });
      return run;
    }

    // ------------------------------------------------ status

    const pending = new Map<string, Pending[]>();
    const hardOf = (q: J) => resourceList(q.spec?.hard);
    /** status.hard equals spec.hard and status.used has every hard resource. */
    function current(q: J): boolean {
      const want = toJSON(hardOf(q));
      const have = toJSON(resourceList(q.status?.hard));
      const used = resourceList(q.status?.used);
      return JSON.stringify(want) === JSON.stringify(have) && Object.keys(want).every((k) => used.has(k));
    }

    /** Usage from the stored objects plus charges of creates not stored yet. */
    async function computeUsed(q: J, ns: string): Promise<ResourceList> {
      const keys = [...hardOf(q).keys()];
      const used: ResourceList = new Map(keys.map((k) => [k, zero()]));
      const types = new Map<string, TypeDef>();
      for (const k of keys) {
        const t = typeOfKey(k);
        if (t) types.set(gr(t), t);
      }
      const waiting = pending.get(ns) ?? [];
      for (const [key, t] of types) {
        watchType(t);
        const names = new Set<string>();
        for (const o of await host.objects.list(t, ns)) {
          names.add(o.metadata?.name ?? '');
          if (quotaMatches(q, t, o)) for (const [k, v] of mask(usageOf(t, o), keys)) used.set(k, addQuantity(used.get(k), v));
        }
        for (const p of waiting) {
          if (p.resource !== key || names.has(p.name) || p.expires < Date.now() || !p.quotas.has(q.metadata?.name)) continue;
          for (const [k, v] of mask(p.usage, keys)) used.set(k, addQuantity(used.get(k), v));
        }
      }
      return used;
    }

    function prunePending(ns: string) {
      const left = (pending.get(ns) ?? []).filter((p) => p.expires >= Date.now());
      if (left.length) pending.set(ns, left);
      else pending.delete(ns);
    }

    const isConflict = (e: unknown) => (e as { code?: number })?.code === 409;

    /** Recomputes and stores one quota's status (caller holds the namespace); returns the stored quota. */
    async function recompute(q: J, ns: string): Promise<J> {
      const qt = quotaType()!;
      for (let attempt = 0; ; attempt++) {
        const status = { hard: toJSON(hardOf(q)), used: toJSON(await computeUsed(q, ns)) };
        if (JSON.stringify(status) === JSON.stringify({ hard: q.status?.hard, used: q.status?.used })) return q;
        try {
          return await host.objects.update(qt, { ...q, status: { ...q.status, ...status } } as KObject, 'status');
        } catch (e) {
          const fresh = isConflict(e) && attempt < 5 ? await host.objects.get(qt, ns, q.metadata.name) : undefined;
          if (!fresh) throw e;
          q = fresh;
        }
      }
    }

    async function recomputeNamespace(ns: string) {
      const qt = quotaType();
      if (!qt) return;
      await serialize(ns, async () => {
        prunePending(ns);
        for (const q of await host.objects.list(qt, ns)) await recompute(q, ns);
      });
      // charges still waiting for their object: look again when they expire
      const left = pending.get(ns);
      if (left?.length) soon(ns, Math.max(0, Math.min(...left.map((p) => p.expires)) - Date.now()) + 100);
    }

    // ------------------------------------------------ the controller loop

    const timers = new Map<string, { timer: NodeJS.Timeout; at: number }>();
    /** Recompute a namespace in `ms` (debounced: an earlier request replaces a later one). */
    function soon(ns: string, ms = 50) {
      const at = Date.now() + ms;
      const prev = timers.get(ns);
      if (prev && prev.at <= at) return;
      if (prev) clearTimeout(prev.timer);
      const timer = setTimeout(() => {
        timers.delete(ns);
        recomputeNamespace(ns).catch((e) => {
          // Lost every race with another status writer (an external quota controller keeps it busy):
          // not a failure; look again a little later.
          if (isConflict(e)) {
            host.log.v(2, 'resource quota recompute lost a write race; retrying', { namespace: ns });
            soon(ns, 1000);
          } else host.log.warn('resource quota recompute failed', { namespace: ns, error: String(e) });
        });
      }, ms);
      timer.unref();
      timers.set(ns, { timer, at });
    }

    const watched = new Map<string, () => void>();
    /**
     * Replenishment: deletions and changes of counted objects free or change usage. A stored object
     * ends its pending charge (from then on it is counted as itself).
     */
    function watchType(t: TypeDef) {
      const key = gr(t);
      if (watched.has(key)) return;
      watched.set(key, host.objects.watch(t, (ev, o) => {
        const ns = o.metadata?.namespace;
        if (!ns) return;
        if (ev !== 'ADDED') return soon(ns);
        const waiting = pending.get(ns);
        const i = waiting?.findIndex((p) => p.resource === key && p.name === o.metadata?.name) ?? -1;
        if (i >= 0) waiting!.splice(i, 1);
      }));
    }

    // The quotas of each namespace by name, kept from the notifications of quota changes and filled
    // by a synchronous scan in the same turn as the subscription: a write to a namespace without a
    // quota (most writes) neither lists nor parses anything (about 1 % of the server's main thread in
    // the create benchmark). The notifications come as the object cache applies a change, so this
    // agrees with a list of the cache at any moment.
    const quotaNames = new Map<string, Set<string>>();
    let quotasKnown = false;
    const noteQuota = (ev: string, ns: string | undefined, name: string | undefined) => {
      if (!ns || !name) return;
      let names = quotaNames.get(ns);
      if (ev === 'DELETED') {
        if (names?.delete(name) && !names.size) quotaNames.delete(ns);
        return;
      }
      if (!names) quotaNames.set(ns, (names = new Set()));
      names.add(name);
    };
    const qt0 = quotaType();
    if (qt0) {
      if (host.objects.scan) {
        host.objects.scan(qt0, (o) => noteQuota('ADDED', o.namespace, o.name));
        quotasKnown = true;
      }
      watched.set('resourcequotas', host.objects.watch(qt0, (ev, q) => {
        noteQuota(ev, q.metadata?.namespace, q.metadata?.name);
        if (ev !== 'DELETED' && q.metadata?.namespace && !current(q)) soon(q.metadata.namespace, 0);
      }));
    }

    async function resync() {
      const qt = quotaType();
      if (!qt) return;
      const namespaces = new Set((await host.objects.list(qt)).map((q) => q.metadata?.namespace ?? ''));
      for (const ns of namespaces) await recomputeNamespace(ns);
    }
    const loop = setInterval(() => void resync().catch(() => undefined), resyncMs);
    loop.unref();
    const first = setTimeout(() => void resync().catch(() => undefined), 1000);
    first.unref();

    // ------------------------------------------------ admission

    /** Refuses with the reference's message when the request would exceed a quota. */
    function check(a: AdmissionAttributes, q: J, requested: ResourceList) {
      const hard = hardOf(q);
      const used = resourceList(q.status?.used);
      const next = mask(addLists(used, requested), requested.keys());
      const exceeded = [...next].filter(([k, v]) => v.nano > hard.get(k)!.nano).map(([k]) => k);
      if (!exceeded.length) return;
      throw host.errors.admissionForbidden(a, `exceeded quota: ${q.metadata.name}, requested: ${prettyPrint(mask(requested, exceeded))}, used: ${prettyPrint(mask(used, exceeded))}, limited: ${prettyPrint(mask(hard, exceeded))}`);
    }

    async function charge(a: AdmissionAttributes, delta: ResourceList) {
      const qt = quotaType()!;
      watchType(a.type);
      const plans: { q: J; requested: ResourceList }[] = [];
      for (let q of (await host.objects.list(qt, a.namespace)) as J[]) {
        if (!quotaMatches(q, a.type, a.object as J)) continue;
        const hard = hardOf(q);
        if (a.resource.group === '' && a.resource.resource === 'pods') {
          const err = podConstraints(a.object as J, new Set(hard.keys()));
          if (err) throw host.errors.admissionForbidden(a, `failed quota: ${q.metadata.name}: ${err}`);
        }
        const requested = mask(delta, hard.keys());
        if (!requested.size) continue;
        if (!current(q)) q = await recompute(q, a.namespace);
        check(a, q, requested);
        plans.push({ q, requested });
      }
      if (a.dryRun || !plans.length) return;
      for (const plan of plans) {
        let q = plan.q;
        for (let attempt = 0; ; attempt++) {
          const used = addLists(resourceList(q.status?.used), plan.requested);
          try {
            await host.objects.update(qt, { ...q, status: { ...q.status, used: toJSON(used) } } as KObject, 'status');
            break;
          } catch (e) {
            const fresh = isConflict(e) && attempt < 5 ? await host.objects.get(qt, a.namespace, q.metadata.name) : undefined;
            if (!fresh) throw e;
            q = current(fresh) ? fresh : await recompute(fresh, a.namespace);
            check(a, q, plan.requested);
          }
        }
      }
      if (a.operation === 'CREATE') {
        const entry: Pending = { resource: gr(a.type), name: a.name || a.object?.metadata?.name || '', usage: delta, quotas: new Set(plans.map((p) => p.q.metadata.name)), expires: Date.now() + pendingMs };
        pending.set(a.namespace, [...(pending.get(a.namespace) ?? []), entry]);
        soon(a.namespace, pendingMs + 100); // a create that failed after admission is uncharged then
      }
    }

    return {
      handles: (op, a) => (op === 'CREATE' || op === 'UPDATE') && !a.subresource && a.type.namespaced && !!a.namespace && !!a.object,
      async validate(a) {
        const qt = quotaType();
        if (!qt || (quotasKnown && qt === qt0 && !quotaNames.has(a.namespace))) return;
        if (!(await host.objects.list(qt, a.namespace)).length) return;
        let delta = usageOf(a.type, a.object as J);
        if (a.operation === 'UPDATE') {
          const old = usageOf(a.type, (a.oldObject ?? {}) as J);
          const raised: ResourceList = new Map();
          for (const [k, q] of delta) {
            const d = q.nano - (old.get(k)?.nano ?? 0n);
            if (d > 0n) raised.set(k, { nano: d, format: q.format } as Quantity);
          }
          if (!raised.size) return;
          delta = raised;
        }
        await serialize(a.namespace, () => charge(a, delta));
      },
      close() {
        clearInterval(loop);
        clearTimeout(first);
        for (const t of timers.values()) clearTimeout(t.timer);
        for (const stop of watched.values()) stop();
        return Promise.resolve();
      },
    };
  },
};
export default plugin;
