// The endpointslice controller: for every Service with a selector, EndpointSlices listing the
// selected pods that have an IP (ready, serving and terminating conditions, node, zone, hostname,
// a reference to the pod), grouped by the ports their target ports resolve to, at most 100
// endpoints a slice, labelled and owned as the reference's controller does.
import { CONTRACT_VERSION, type KObject, type PluginHost, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../lib/json.js';
import { canonical, controllerQueue, controllerRef, isConflict, isNotFound, isPodReady, selectorOf } from '../../lib/workload.js';

/** The reference's maxEndpointsPerSlice default. */
const MAX_PER_SLICE = 100;

/** A service port resolved against a pod: a named target port through the pod's container ports, else the number. */
function resolvePort(sp: J, pod: KObject): number | undefined {
  const target = sp.targetPort ?? sp.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(String(target))) return Number(target);
  for (const c of list((pod.spec as J | undefined)?.containers)) {
    const p = list(c.ports).find((x) => x.name === target && (x.protocol ?? 'TCP') === (sp.protocol ?? 'TCP'));
    if (p) return p.containerPort;
  }
  return undefined;
}

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'endpointslice',
  create(_options, host: PluginHost) {
    const kd = host.brand.keyDomain;
    const SERVICE_NAME = `${kd}/service-name`;
    const MANAGED_BY = `endpointslice.${kd}/managed-by`;
    const CONTROLLER = `endpointslice-controller.${host.brand.domain}`;
    const ZONE = `topology.${kd}/zone`;
    const group = `discovery.${host.brand.domain}`;
    let svcType: TypeDef, podType: TypeDef, sliceType: TypeDef, nodeType: TypeDef | undefined;
    const unwatch: (() => void)[] = [];

    const ours = (s: KObject, svc: string) => s.metadata?.labels?.[MANAGED_BY] === CONTROLLER && s.metadata?.labels?.[SERVICE_NAME] === svc;

    /** The endpoint of a pod, or undefined when it has no IP of the family or is finished. */
    async function endpointOf(svc: KObject, pod: KObject, family: string): Promise<J | undefined> {
      const st: J = (pod.status as J) ?? {};
      if (st.phase === 'Succeeded' || st.phase === 'Failed') return undefined;
      const ips = [...list(st.podIPs).map((x) => x.ip as string), st.podIP as string].filter(Boolean);
      const ip = ips.find((a) => (family === 'IPv6') === a.includes(':'));
      if (!ip) return undefined;
      const spec: J = (svc.spec as J) ?? {};
      const terminating = !!pod.metadata?.deletionTimestamp;
      const serving = spec.publishNotReadyAddresses === true || isPodReady(pod);
      const ep: J = { addresses: [ip], conditions: { ready: serving && !terminating, serving, terminating } };
      const ps: J = (pod.spec as J) ?? {};
      if (ps.hostname && ps.subdomain === svc.metadata!.name) ep.hostname = ps.hostname;
      ep.targetRef = { kind: 'Pod', namespace: pod.metadata!.namespace, name: pod.metadata!.name, uid: pod.metadata!.uid };
      if (ps.nodeName) {
        ep.nodeName = ps.nodeName;
        const node = nodeType && (await host.objects.get(nodeType, '', ps.nodeName));
        const zone = node?.metadata?.labels?.[ZONE];
        if (zone) ep.zone = zone;
      }
      return ep;
    }

    async function sync(key: string) {
      const [ns, name] = key.split('/');
      const svc = await host.objects.get(svcType, ns, name);
      const existing = (await host.objects.list(sliceType, ns)).filter((s) => ours(s, name));
      const spec: J = (svc?.spec as J) ?? {};
      const selected = svc && isObj(spec.selector) && Object.keys(spec.selector).length && spec.type !== 'ExternalName';
      // desired slices: pods grouped by resolved ports, chunked
      const desired: J[] = [];
      if (selected) {
        const matches = selectorOf(spec.selector, true);
        const pods = (await host.objects.list(podType, ns)).filter((p) => matches((p.metadata?.labels ?? {}) as Record<string, string>));
        const family = (Array.isArray(spec.ipFamilies) && spec.ipFamilies[0]) || 'IPv4';
        const groups = new Map<string, { ports: J[]; endpoints: J[] }>();
        for (const pod of pods.sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!))) {
          const ep = await endpointOf(svc!, pod, family);
          if (!ep) continue;
          const ports = list(spec.ports).map((sp) => ({ ...(sp.name !== undefined ? { name: sp.name } : { name: '' }), port: resolvePort(sp, pod), protocol: sp.protocol ?? 'TCP', ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) })).filter((p) => p.port !== undefined);
          const k = canonical(ports);
          const g = groups.get(k) ?? { ports, endpoints: [] as J[] };
          g.endpoints.push(ep);
          groups.set(k, g);
        }
        for (const g of groups.values()) for (let i = 0; i < g.endpoints.length; i += MAX_PER_SLICE) desired.push({ addressType: family, endpoints: g.endpoints.slice(i, i + MAX_PER_SLICE), ports: g.ports });
        // a selected service with no endpoints still gets one empty slice, the reference's placeholder
        if (!desired.length) desired.push({ addressType: family, endpoints: [] });
      }
      // reuse slices in order, update the changed, create the missing, delete the rest
      const pool = [...existing].sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
      for (const want of desired) {
        const have = pool.shift();
        const labels = { ...(svc!.metadata?.labels ?? {}), [SERVICE_NAME]: name, [MANAGED_BY]: CONTROLLER };
        if (have) {
          if (canonical([have.addressType, have.endpoints ?? [], have.ports ?? [], have.metadata?.labels]) === canonical([want.addressType, want.endpoints, want.ports ?? [], labels])) continue;
          if (have.addressType !== want.addressType) { await remove(have); await create(svc!, labels, want); continue; }
          await host.objects.update(sliceType, { ...have, metadata: { ...have.metadata!, labels }, endpoints: want.endpoints, ports: want.ports ?? [] });
        } else await create(svc!, labels, want);
      }
      for (const s of pool) await remove(s);
    }

    async function create(svc: KObject, labels: Record<string, string>, want: J): Promise<void> {
      await host.objects.create(sliceType, {
        apiVersion: `${group}/v1`, kind: 'EndpointSlice',
        metadata: { generateName: `${svc.metadata!.name}-`, namespace: svc.metadata!.namespace, labels, ownerReferences: [controllerRef(svc)] },
        ...want,
      });
    }

    const remove = (s: KObject) => host.objects.delete(sliceType, s.metadata!.namespace!, s.metadata!.name!).catch((e) => { if (!isNotFound(e) && !isConflict(e)) throw e; });

    const queue = controllerQueue(host, 'endpointslice', sync);

    /** A pod concerns the services that select it, and those whose slices list it (its labels may have changed). */
    async function podChanged(p: KObject) {
      const ns = p.metadata!.namespace!;
      const labels = (p.metadata?.labels ?? {}) as Record<string, string>;
      for (const s of await host.objects.list(svcType, ns)) if (selectorOf((s.spec as J | undefined)?.selector, true)(labels)) queue.add(`${ns}/${s.metadata!.name}`);
      for (const sl of await host.objects.list(sliceType, ns)) {
        const svc = sl.metadata?.labels?.[SERVICE_NAME];
        if (svc && sl.metadata?.labels?.[MANAGED_BY] === CONTROLLER && list(sl.endpoints).some((e) => e.targetRef?.uid === p.metadata!.uid)) queue.add(`${ns}/${svc}`);
      }
    }

    const warn = (e: unknown) => host.log.warn('endpointslice controller', { error: String(e) });
    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      async start() {
        const t = [host.type('', 'services'), host.type('', 'pods'), host.type(group, 'endpointslices')];
        if (t.some((x) => !x)) return;
        [svcType, podType, sliceType] = t as TypeDef[];
        nodeType = host.type('', 'nodes');
        unwatch.push(host.objects.watch(svcType, (_ev, o) => queue.add(`${o.metadata!.namespace}/${o.metadata!.name}`)));
        unwatch.push(host.objects.watch(podType, (_ev, o) => { podChanged(o).catch(warn); }));
        for (const s of await host.objects.list(svcType)) queue.add(`${s.metadata!.namespace}/${s.metadata!.name}`, 0);
      },
      async stop() {
        for (const u of unwatch) u();
        await queue.stop();
      },
    };
  },
};
export default plugin;
