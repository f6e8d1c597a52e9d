// The APIService controller: one local APIService per group-version this server serves (built-in
// ones at start, custom resource groups as their types appear and go), and the Available condition
// of every APIService: local ones are always available; remote ones (spec.service) are proxied to
// (PluginHost.serveRemote) and checked as the reference's availability controller checks them: the
// Service, its port and Endpoints, then a discovery GET, again on every Service or Endpoints change
// and every `probeIntervalSeconds` (default 30, the reference's resync).
import { CONTRACT_VERSION, type KObject, type PluginModule, type RemoteGroupVersion, type TypeDef } from '../../../kernel/contracts/index.js';
import { apiregistrationGroup } from '../../types/apiregistration/index.js';
import { WorkQueue } from '../../lib/work-queue.js';
import { openapiV3, probe, resolve, serviceCondition, upstream, type Condition, type RemoteEnv } from './remote.js';

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
  create: (options, host) => {
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

    const services = host.type('', 'services');
    const env: RemoteEnv | undefined = services && { objects: host.objects, services, endpoints: host.type('', 'endpoints'), endpointRouting: options.enableAggregatorRouting === true };
    const probeMs = Number(process.env.CAPI_APISERVICE_PROBE_MS ?? Number(options.probeIntervalSeconds ?? 30) * 1000);
    /** Last known state of each remote APIService: its condition and the resources its discovery check read. */
    const remote = new Map<string, { obj: KObject; available: boolean; resources?: J; openapi?: { address: string; text: string } }>();

    const available = async (o: KObject): Promise<Condition & { type: string }> => {
      const spec = (o.spec ?? {}) as J;
      if (!spec.service) return { type: 'Available', status: 'True', reason: 'Local', message: 'Local APIServices are always available' };
      if (!env) return { type: 'Available', status: 'False', reason: 'ServiceNotFound', message: `service/${spec.service.name} in ${JSON.stringify(spec.service.namespace)} is not present` };
      const bad = await serviceCondition(env, spec.service);
      if (bad) return { type: 'Available', ...bad };
      const at = await resolve(env, spec.service);
      if (!at) return { type: 'Available', status: 'False', reason: 'FailedDiscoveryCheck', message: `service/${spec.service.name} in ${JSON.stringify(spec.service.namespace)} has no address to send to` };
      const target = upstream(spec, at, host.frontProxyClient());
      const r = await probe(target, spec.group, spec.version);
      if ('error' in r) return { type: 'Available', status: 'False', reason: 'FailedDiscoveryCheck', message: r.error };
      const st = remote.get(o.metadata!.name!);
      if (st && r.body?.kind === 'APIResourceList') st.resources = r.body;
      // The server's OpenAPI v3 document, for /openapi/v3 (fetched again only when its address, which carries its hash, changes).
      if (st) {
        const doc = await openapiV3(target, spec.group, spec.version, st.openapi?.address);
        if (doc?.text && doc.text !== st.openapi?.text) { st.openapi = { address: doc.address, text: doc.text }; publish(); }
      }
      return { type: 'Available', status: 'True', reason: 'Passed', message: 'all checks passed' };
    };

    /** What the kernel proxies: every APIService naming a service, answered 503 while it is not available. */
    const publish = () => {
      const list: RemoteGroupVersion[] = [];
      for (const [name, st] of remote) {
        const spec = st.obj.spec as J;
        list.push({
          group: spec.group, version: spec.version, groupPriorityMinimum: Number(spec.groupPriorityMinimum), versionPriority: Number(spec.versionPriority),
          resources: () => remote.get(name)?.resources,
          fresh: () => remote.get(name)?.available ?? false,
          openapiV3: () => remote.get(name)?.openapi?.text,
          target: async () => {
            const cur = remote.get(name);
            const at = cur?.available && env ? await resolve(env, (cur.obj.spec as J).service) : undefined;
            if (!cur || !at) throw serviceUnavailable();
            return upstream(cur.obj.spec as J, at, host.frontProxyClient());
          },
        });
      }
      host.serveRemote('apiservice', list);
    };
    const serviceUnavailable = () => {
      // The reference's aggregation proxy answers in plain text here, not with a Status.
      const e = host.errors.status(503, 'ServiceUnavailable', 'service unavailable');
      e.plainText = 'service unavailable\n';
      return e;
    };

    // The reference aggregator's availability metrics.
    const unavailableGauge = host.metrics.gauge('aggregator_unavailable_apiservice', 'Gauge of APIServices which are marked as unavailable broken down by APIService name.', ['name']);
    const unavailableTotal = host.metrics.counter('aggregator_unavailable_apiservice_total', 'Counter of APIServices which are marked as unavailable broken down by APIService name and reason.', ['name', 'reason']);
    const setStatus = async (o: KObject) => {
      const name = o.metadata!.name!;
      if ((o.spec as J | undefined)?.service) {
        // Until checked again, the stored condition says whether requests go through (as in the reference).
        const stored = (((o.status as J | undefined)?.conditions ?? []) as J[]).find((c) => c?.type === 'Available');
        if (!remote.has(name)) { remote.set(name, { obj: o, available: stored?.status === 'True' }); publish(); }
        remote.get(name)!.obj = o;
      } else if (remote.delete(name)) publish();
      const want = await available(o);
      const st = remote.get(name);
      if (st) st.available = want.status === 'True';
      const conds = (((o.status as J | undefined)?.conditions ?? []) as J[]);
      const cur = conds.find((c) => c?.type === 'Available');
      unavailableGauge.set({ name }, want.status === 'True' ? 0 : 1);
      if (want.status !== 'True' && cur?.status !== want.status) unavailableTotal.inc({ name, reason: want.reason });
      if (cur && cur.status === want.status && cur.reason === want.reason && cur.message === want.message) return;
      if (cur?.status !== want.status) host.log.v(2, 'changing APIService availability', { name, oldStatus: cur?.status ?? 'Unknown', newStatus: want.status, reason: want.reason, message: want.message });
      o.status = { ...(o.status as J | undefined), conditions: [...conds.filter((c) => c?.type !== 'Available'), { ...want, lastTransitionTime: cur && cur.status === want.status ? cur.lastTransitionTime : now() }] };
      try { await host.objects.update(type, o, 'status'); } catch (e) { if ((e as { code?: number }).code !== 409 && (e as { code?: number }).code !== 404) throw e; }
    };
    const queue = new WorkQueue(async (name) => {
      if (stopped) return;
      const o = await host.objects.get(type, '', name);
      if (o) return setStatus(o);
      unavailableGauge.set({ name }, 0);
      if (remote.delete(name)) publish();
    }, (name, e) => host.log.warn('apiservice controller', { name, error: String((e as Error)?.message ?? e) }));
    /** APIServices naming a service in this namespace with this name. */
    const naming = (namespace: string, svcName: string) => {
      for (const [name, st] of remote) {
        const svc = (st.obj.spec as J).service;
        if (svc?.namespace === namespace && svc?.name === svcName) queue.add(name);
      }
    };
    let resync: NodeJS.Timeout | undefined;
    const unwatchOthers: (() => void)[] = [];

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
      postStartHooks: ['start-kube-aggregator-informers', 'apiservice-registration-controller', 'apiservice-status-available-controller', 'kube-apiserver-autoregistration', 'apiservice-openapi-controller', 'apiservice-openapiv3-controller', 'apiservice-discovery-controller'],
      // The reference's check that every local group-version has its APIService: done by start().
      healthChecks: ['autoregister-completion'],
      async start() {
        await reconcileLocal(true);
        for (const o of await host.objects.list(type)) {
          if ((o.spec as J | undefined)?.service) queue.add(o.metadata!.name!);
          else await setStatus(o);
        }
        unwatch = host.objects.watch(type, (_ev, o) => { if (!stopped) queue.add(o.metadata!.name!); });
        for (const t of [services, env?.endpoints]) if (t) unwatchOthers.push(host.objects.watch(t, (_ev, o) => naming(o.metadata?.namespace ?? '', o.metadata?.name ?? '')));
        resync = setInterval(() => { for (const name of remote.keys()) queue.add(name); }, probeMs);
        resync.unref();
        host.onTypesChanged(() => { if (!stopped) serial(() => reconcileLocal(false)); });
      },
      async stop() {
        stopped = true;
        unwatch?.();
        for (const u of unwatchOthers) u();
        if (resync) clearInterval(resync);
        await queue.stop();
        await pending;
      },
    };
  },
};

export default plugin;
