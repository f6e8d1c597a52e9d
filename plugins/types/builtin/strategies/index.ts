// The per-type strategies of the built-in catalog, by row key ("services", "pods", "jobs.batch"):
// the hooks that need state or other objects, which rows of data cannot express.
import type { PluginHost, TypeStrategy } from '../../../../kernel/contracts.js';
import { repairServices, ServiceAllocator, serviceStrategy, type ServiceOptions } from './services.js';

export type StrategyOptions = ServiceOptions;

export function strategies(host: PluginHost, options: StrategyOptions = {}) {
  const services = new ServiceAllocator(host, options);
  const table: Record<string, TypeStrategy> = {
    services: serviceStrategy(services),
  };
  return {
    byKey: (key: string): TypeStrategy | undefined => table[key],
    /** Objects are readable: reconcile allocations with what is stored. */
    start: async () => { await repairServices(host, services); },
    stop: () => {},
  };
}
