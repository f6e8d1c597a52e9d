// The APIService controller: one local APIService per group-version this server serves (built-in
// ones at start, custom resource groups as their types appear and go), and the Available condition
// of every APIService: local ones are always available; for ones naming a service, this server has
// no aggregation proxy yet, so they are reported unavailable with the reason.
import { CONTRACT_VERSION, type KObject, type PluginModule, type TypeDef } from '../../../kernel/contracts.js';
import { apiregistrationGroup } from '../../types/apiregistration/index.js';

type J = Record<string, any>;
const now = () => new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** The reference's ordering idea: the core group first, GA before beta before alpha. */
function priorities(group: string, version: string): { groupPriorityMinimum: number; versionPriority: number } {
  const level = /alpha/.test(version) ? 1 : /beta/.test(version) ? 9 : 15;
  return { groupPriorityMinimum: group === '' ? 18000 : 17000, versionPriority: level };
}

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'apiservice',
  create: (_options, host) => {
    const type = host.type(apiregistrationGroup(host.brand), 'apiservices');
    // A configuration without the apiregistration types (its own `types` list, or --runtime-config
    // switching the group off) has no APIServices to keep: nothing to do.
    if (!type) {
      host.log.info('apiservice controller idle: APIService is not served');
      return { perServer: true, start() {}, stop() {} };
    }
    const label = `kube-aggregator.${host.brand.keyDomain}/automanaged`;
    let unwatch: (() => void) | undefined;
    let stopped = false;
    let pending = Promise.resolve();
    const serial = (f: () => Promise<void>) => { pending = pending.then(f).catch((e) => host.log.warn('apiservice controller', { error: String((e as Error)?.message ?? e) })); };

    const available = (o: KObject): J => {
      const spec = (o.spec ?? {}) as J;
      if (!spec.service) return { type: 'Available', status: 'True', reason: 'Local', message: 'Local APIServices are always available' };
      return { type: 'Available', status: 'False', reason: 'FailedDiscoveryCheck', message: 'this server does not proxy to extension API servers' };
    };

    const setStatus = async (o: KObject) => {
      const want = available(o);
      const conds = (((o.status as J | undefined)?.conditions ?? []) as J[]);
      const cur = conds.find((c) => c?.type === 'Available');
      if (cur && cur.status === want.status && cur.reason === want.reason && cur.message === want.message) return;
      o.status = { ...(o.status as J | undefined), conditions: [...conds.filter((c) => c?.type !== 'Available'), { ...want, lastTransitionTime: cur && cur.status === want.status ? cur.lastTransitionTime : now() }] };
      try { await host.objects.update(type, o, 'status'); } catch (e) { if ((e as { code?: number }).code !== 409 && (e as { code?: number }).code !== 404) throw e; }
    };

    /** Local APIServices for every served group-version; `true`-managed ones whose group-version went away are removed. */
    const reconcileLocal = async (initial: boolean) => {
      const served = new Map<string, TypeDef>();
      for (const t of host.allTypes()) served.set(`${t.version}.${t.group}`, t);
      const existing = new Map((await host.objects.list(type)).map((o) => [o.metadata!.name!, o]));
      for (const [name, t] of served) {
        if (existing.has(name)) continue;
        const dynamic = !initial;
        try {
          await host.objects.create(type, { apiVersion: `${type.group}/v1`, kind: 'APIService', metadata: { name, labels: { [label]: dynamic ? 'true' : 'onstart' } }, spec: { group: t.group, version: t.version, ...priorities(t.group, t.version) } });
        } catch (e) { if ((e as { code?: number }).code !== 409) throw e; }
      }
      for (const [name, o] of existing) {
        if (o.metadata?.labels?.[label] === 'true' && !served.has(name) && !(o.spec as J)?.service) await host.objects.delete(type, '', name);
      }
    };

    return {
      // Every server keeps these, as the reference's aggregator does in each apiserver.
      perServer: true,
      async start() {
        await reconcileLocal(true);
        for (const o of await host.objects.list(type)) await setStatus(o);
        unwatch = host.objects.watch(type, (ev, o) => { if (ev !== 'DELETED' && !stopped) serial(() => setStatus(o)); });
        host.onTypesChanged(() => { if (!stopped) serial(() => reconcileLocal(false)); });
      },
      async stop() {
        stopped = true;
        unwatch?.();
        await pending;
      },
    };
  },
};

export default plugin;
