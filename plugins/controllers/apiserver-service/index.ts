// The server's own Service: `<brand name>` (kubernetes) in `default`, with its Endpoints and
// EndpointSlice listing the advertised addresses and the port this server serves on, as the
// reference's bootstrap controller keeps them. Recreated or reset whenever they drift, and checked
// every few seconds.
import os from 'node:os';
import { isIP } from 'node:net';
import { CONTRACT_VERSION, type KObject, type PluginModule, type TypeDef } from '../../../kernel/contracts.js';
import { firstAddress } from '../../../kernel/ipnet.js';

interface Options {
  /** --advertise-address: one address, or one per IP family. */
  advertiseAddresses?: string[];
  /** The bind address, used when no address is advertised (and it is not a wildcard). */
  bindAddress?: string;
  serviceClusterIPRange?: string;
  /** How often the objects are checked (ms). */
  intervalMs?: number;
}

/** The reference's choice without --advertise-address: the bind address, else the host's first non-loopback address. */
export function defaultAdvertiseAddress(bind = '127.0.0.1'): string {
  if (bind && bind !== '0.0.0.0' && bind !== '::') return bind;
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (!a.internal && a.family === 'IPv4') return a.address;
  }
  return '127.0.0.1';
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'apiserver-service',
  create(options, host) {
    const o = options as Options;
    const addresses = o.advertiseAddresses?.length ? o.advertiseAddresses : [defaultAdvertiseAddress(o.bindAddress)];
    for (const a of addresses) if (!isIP(a)) throw new Error(`apiserver-service: --advertise-address "${a}" is not an IP address`);
    const name = host.brand.name;
    const ns = 'default';
    const clusterIP = firstAddress(o.serviceClusterIPRange ?? '10.96.0.0/12');
    const keyDomain = host.brand.keyDomain;
    let port = 0;
    let timer: NodeJS.Timeout | undefined;
    let pending: NodeJS.Timeout | undefined;
    let running: Promise<void> | undefined;
    let stopped = false;
    const unwatch: (() => void)[] = [];

    /** Creates the object, or resets the fields this controller owns when they differ. */
    async function ensure(type: TypeDef | undefined, want: KObject, owned: (o: KObject) => unknown, apply: (cur: KObject) => void) {
      if (!type) return;
      const cur = await host.objects.get(type, ns, name);
      if (!cur) {
        try { await host.objects.create(type, want); } catch (e) { if ((e as { code?: number }).code !== 409) throw e; }
        return;
      }
      if (same(owned(cur), owned(want))) return;
      apply(cur);
      await host.objects.update(type, cur);
    }

    async function reconcile() {
      if (!port || stopped) return;
      const svcPorts = [{ name: 'https', protocol: 'TCP', port: 443, targetPort: port }];
      const labels = { component: 'apiserver', provider: name };
      await ensure(host.type('', 'services'), {
        apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns, labels },
        spec: { type: 'ClusterIP', clusterIP, ports: svcPorts, sessionAffinity: 'None' },
      }, (s) => [(s.spec as { ports?: unknown })?.ports, (s.spec as { type?: unknown })?.type, s.metadata?.labels?.component],
      (s) => {
        const spec = s.spec as Record<string, unknown>;
        spec.ports = svcPorts;
        spec.type = 'ClusterIP';
        s.metadata!.labels = { ...s.metadata!.labels, ...labels };
      });
      const epPorts = [{ name: 'https', port, protocol: 'TCP' }];
      const subsets = [{ addresses: addresses.map((ip) => ({ ip })), ports: epPorts }];
      await ensure(host.type('', 'endpoints'), {
        apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace: ns, labels: { [`endpointslice.${keyDomain}/skip-mirror`]: 'true' } }, subsets,
      }, (e) => e.subsets, (e) => { e.subsets = subsets; });
      // One slice per family, as the reference's endpoint reconciler writes them; the first family's keeps the service's name.
      const v4 = addresses.filter((a) => isIP(a) === 4);
      const primary = v4.length && isIP(addresses[0]) === 4 ? v4 : addresses.filter((a) => isIP(a) === 6);
      const endpoints = primary.map((ip) => ({ addresses: [ip], conditions: { ready: true } }));
      await ensure(host.type(`discovery.${host.brand.domain}`, 'endpointslices'), {
        apiVersion: `discovery.${host.brand.domain}/v1`, kind: 'EndpointSlice',
        metadata: { name, namespace: ns, labels: { [`${keyDomain}/service-name`]: name } },
        addressType: isIP(primary[0]) === 6 ? 'IPv6' : 'IPv4', endpoints, ports: epPorts,
      }, (s) => [s.endpoints, s.ports], (s) => { s.endpoints = endpoints; s.ports = epPorts; });
    }

    function kick(delay = 0) {
      if (stopped || pending) return;
      pending = setTimeout(() => {
        pending = undefined;
        running = (running ?? Promise.resolve()).then(reconcile).catch((e) => host.log.warn('apiserver-service', { error: String(e) }));
      }, delay);
    }

    return {
      perServer: true,
      start() {},
      async listening(info) {
        port = info.port;
        for (const [g, r] of [['', 'services'], ['', 'endpoints'], [`discovery.${host.brand.domain}`, 'endpointslices']]) {
          const t = host.type(g, r);
          if (t) unwatch.push(host.objects.watch(t, (_ev, obj) => { if (obj.metadata?.namespace === ns && obj.metadata?.name === name) kick(50); }));
        }
        timer = setInterval(() => kick(), o.intervalMs ?? 10_000);
        timer.unref();
        // The objects exist by the time the server reports it is serving.
        running = reconcile().catch((e) => host.log.warn('apiserver-service', { error: String(e) }));
        await running;
      },
      async stop() {
        stopped = true;
        if (timer) clearInterval(timer);
        if (pending) clearTimeout(pending);
        for (const u of unwatch) u();
        await running;
      },
    };
  },
};
export default plugin;
