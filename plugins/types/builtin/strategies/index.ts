// The per-type strategies of the built-in catalog, by row key ("services", "pods", "jobs.batch"):
// the hooks that need state or other objects, which rows of data cannot express, and the
// create-only sub-resources (pods/binding, pods/eviction) they serve.
import { randomUUID } from 'node:crypto';
import type { Brand } from '../../../../kernel/contracts/brand.js';
import type { KObject, PluginHost, TypeDef, TypeStrategy } from '../../../../kernel/contracts/index.js';
import { componentStatuses } from './componentstatus.js';
import { hpaStrategy } from './autoscaling.js';
import { jobStrategy } from './jobs.js';
import { statefulSetStrategy } from './workloads.js';
import { nodeAgent, schemeNamePort, type NodeAgentOptions } from './nodeagent.js';
import { podHandlers, podStrategy } from './pods.js';
import { withProtobuf } from '../../../lib/protobuf-catalog.js';
import { repairServices, ServiceAllocator, serviceStrategy, type ServiceOptions } from './services.js';
import { SYSTEM_PRIORITY_CLASSES } from '../../../lib/system-priority-classes.js';

export type StrategyOptions = ServiceOptions & NodeAgentOptions;

export function strategies(host: PluginHost, options: StrategyOptions = {}) {
  const services = new ServiceAllocator(host, options);
  const pods = podHandlers(host);
  const table: Record<string, TypeStrategy> = {
    services: serviceStrategy(services),
    pods: podStrategy(host),
    'jobs.batch': jobStrategy(host),
    'statefulsets.apps': statefulSetStrategy,
    'horizontalpodautoscalers.autoscaling': hpaStrategy,
    // the reference names a LimitRange created without a name (or generateName) with a fresh UUID
    limitranges: { beginCreate: (obj) => { if (obj.metadata && !obj.metadata.name) obj.metadata.name = randomUUID(); } },
  };
  return {
    byKey: (key: string): TypeStrategy | undefined => table[key],
    /** Types computed on every read. */
    computed: { componentstatuses: () => componentStatuses(host) } as Record<string, () => Promise<KObject[]>>,
    /** Writes the strategies make through a sub-resource that changes only some fields. */
    subresourceFields: { pods: { binding: ['spec.nodeName', 'metadata.annotations', 'status.conditions'], ephemeralcontainers: 'spec.ephemeralContainers', resize: 'spec.containers' } } as Record<string, Record<string, string | string[]>>,
    /** Types that are only an endpoint: the legacy `bindings` (POST a Binding named after the pod). */
    virtualTypes: (brand: Brand): TypeDef[] => [
      withProtobuf({ group: '', version: 'v1', kind: 'Binding', resource: 'bindings', singular: 'binding', namespaced: true, verbs: ['create'], virtual: pods.legacyBinding }, brand),
    ],
    /** Objects are readable: reconcile allocations with what is stored; serve the sub-resources. */
    start: async () => {
      if (host.type('', 'pods')) {
        host.serve({ group: '', resource: 'pods', subresource: 'binding', kind: 'Binding' }, pods.binding);
        host.serve({ group: '', resource: 'pods', subresource: 'eviction', kind: 'Eviction', subresourceGroup: 'policy', subresourceVersion: 'v1' }, pods.eviction);
        const agent = nodeAgent(host, options);
        host.serveStream({ group: '', resource: 'pods', subresource: 'log', kind: 'Pod' }, agent.logs);
        host.serveConnect({ group: '', resource: 'pods', subresource: 'exec', upgradeRequired: true }, agent.exec);
        host.serveConnect({ group: '', resource: 'pods', subresource: 'attach', upgradeRequired: true }, agent.attach);
        host.serveConnect({ group: '', resource: 'pods', subresource: 'portforward', upgradeRequired: true }, agent.portForward);
        host.serveConnect({ group: '', resource: 'pods', subresource: 'proxy', path: true, objectName: (n) => schemeNamePort(n, 'pod').name }, agent.podProxy);
        if (host.type('', 'nodes')) host.serveConnect({ group: '', resource: 'nodes', subresource: 'proxy', path: true, objectName: (n) => schemeNamePort(n, 'node').name }, agent.nodeProxy);
        if (host.type('', 'services')) host.serveConnect({ group: '', resource: 'services', subresource: 'proxy', path: true, objectName: (n) => schemeNamePort(n, 'service').name }, agent.serviceProxy);
      }
      await repairServices(host, services);
      await ensureSystemPriorityClasses(host);
    },
    stop: () => {},
  };
}

/** The system PriorityClasses exist from the first start, as the reference's scheduling registry makes them. */
async function ensureSystemPriorityClasses(host: PluginHost): Promise<void> {
  const pc = host.type(`scheduling.${host.brand.domain}`, 'priorityclasses');
  if (!pc) return;
  for (const c of SYSTEM_PRIORITY_CLASSES) {
    if (await host.objects.get(pc, '', c.name)) continue;
    try {
      await host.objects.create(pc, { apiVersion: `${pc.group}/${pc.version}`, kind: 'PriorityClass', metadata: { name: c.name }, value: c.value, description: c.description });
    } catch (e) {
      if ((e as { code?: number }).code !== 409) host.log.warn('system priority class', { name: c.name, error: String(e) });
    }
  }
}
