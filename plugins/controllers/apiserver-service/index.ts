// The server's own Service: `<brand name>` (kubernetes) in `default`, with its Endpoints and
// EndpointSlice listing the advertised addresses and the port this server serves on, as the
// reference's bootstrap controller keeps them. Recreated or reset whenever they drift, and checked
// every few seconds.
//
// Several replicas (a shared store) each keep a Lease of their own in the system namespace, renewed
// at every check, as the reference's lease endpoint reconciler keeps its master leases: the Endpoints
// list every replica whose Lease is live (renewed within its duration), so a replica that dies leaves
// them within about the lease duration, and one that stops cleanly leaves them at once.
import { createHash } from 'node:crypto';
import os from 'node:os';
import { isIP } from 'node:net';
import { CONTRACT_VERSION, type KObject, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';
import { firstAddress } from '../../../kernel/ops/ipnet.js';

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

/** The reference's master lease TTL: a replica not renewed for this long leaves the endpoints. */
const LEASE_SECONDS = 15;

interface Member { addresses: string[]; port: number }

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
    const leaseType = host.type(`coordination.${host.brand.domain}`, 'leases');
    const nsType = host.type('', 'namespaces');
    const component = host.brand.name === 'kubernetes' ? 'kube-apiserver' : `${host.brand.name}-apiserver`;
    const identityLabel = `apiserver.${keyDomain}/identity`;
    const endpointAnnotation = `endpoints.${keyDomain}/apiserver`;
    const sysNs = host.brand.systemNamespace;
    const leaseName = () => `${component}-endpoint-${createHash('sha256').update(`${addresses.join(',')}:${port}`).digest('hex').slice(0, 16)}`;
    const microTime = (d: Date) => d.toISOString().replace(/Z$/, '000Z');

    /** Renews this server's Lease and returns the live members (this one always among them). */
    async function members(): Promise<Member[]> {
      const self: Member = { addresses, port };
      if (!leaseType) return [self];
      const now = new Date();
      const spec = { holderIdentity: leaseName(), leaseDurationSeconds: LEASE_SECONDS, renewTime: microTime(now) };
      const metadata = { name: leaseName(), namespace: sysNs, labels: { [identityLabel]: component }, annotations: { [endpointAnnotation]: JSON.stringify(self) } };
      try {
        const cur = await host.objects.get(leaseType, sysNs, leaseName());
        if (cur) await host.objects.update(leaseType, { ...cur, metadata: { ...cur.metadata, ...metadata }, spec });
        else {
          if (nsType && !(await host.objects.get(nsType, '', sysNs))) {
            try { await host.objects.create(nsType, { metadata: { name: sysNs } }); } catch (e) { if ((e as { code?: number }).code !== 409) throw e; }
          }
          await host.objects.create(leaseType, { metadata, spec });
        }
      } catch (e) {
        host.log.warn('apiserver-service: lease not renewed', { error: String(e) });
      }
      return [self, ...(await others())];
    }

    /** The other live members, by their Leases. */
    async function others(): Promise<Member[]> {
      if (!leaseType) return [];
      const now = Date.now();
      const live: Member[] = [];
      for (const l of await host.objects.list(leaseType, sysNs)) {
        if (l.metadata?.labels?.[identityLabel] !== component || l.metadata?.name === leaseName()) continue;
        const ls = (l.spec ?? {}) as { renewTime?: string; leaseDurationSeconds?: number };
        if (!ls.renewTime || Date.parse(ls.renewTime) + (ls.leaseDurationSeconds ?? LEASE_SECONDS) * 1000 < now) continue;
        try {
          const m = JSON.parse(l.metadata?.annotations?.[endpointAnnotation] ?? '') as Member;
          if (Array.isArray(m.addresses) && m.addresses.every((a) => isIP(a)) && Number.isInteger(m.port)) live.push(m);
        } catch { /* not a member record */ }
      }
      return live;
    }

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

    async function reconcile(leaving = false) {
      if (!port || (stopped && !leaving)) return;
      // Every replica computes the same answer from the same Leases: ports ascending, addresses sorted.
      const all = leaving ? await others() : await members();
      if (!all.length) return;
      const ports = [...new Set(all.map((m) => m.port))].sort((a, b) => a - b);
      const ipsAt = (p: number) => [...new Set(all.filter((m) => m.port === p).flatMap((m) => m.addresses))].sort();
      const svcPorts = [{ name: 'https', protocol: 'TCP', port: 443, targetPort: ports[0] }];
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
      const subsets = ports.map((p) => ({ addresses: ipsAt(p).map((ip) => ({ ip })), ports: [{ name: 'https', port: p, protocol: 'TCP' }] }));
      // The Endpoints and the EndpointSlice are written together (one commit of the log, not two).
      const endpointsWritten = ensure(host.type('', 'endpoints'), {
        apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace: ns, labels: { [`endpointslice.${keyDomain}/skip-mirror`]: 'true' } }, subsets,
      }, (e) => e.subsets, (e) => { e.subsets = subsets; });
      // One slice per family, as the reference's endpoint reconciler writes them; the first family's keeps the service's name.
      // (its own copies: the two writes run together, and each shapes its object in place in its type's field order)
      const epPorts = subsets[0].ports.map((p) => ({ ...p }));
      const first = ipsAt(ports[0]);
      const v4 = first.filter((a) => isIP(a) === 4);
      const primary = v4.length && isIP(addresses[0]) === 4 ? v4 : first.filter((a) => isIP(a) === 6);
      const endpoints = primary.map((ip) => ({ addresses: [ip], conditions: { ready: true } }));
      await Promise.all([endpointsWritten, ensure(host.type(`discovery.${host.brand.domain}`, 'endpointslices'), {
        apiVersion: `discovery.${host.brand.domain}/v1`, kind: 'EndpointSlice',
        metadata: { name, namespace: ns, labels: { [`${keyDomain}/service-name`]: name } },
        addressType: isIP(primary[0]) === 6 ? 'IPv6' : 'IPv4', endpoints, ports: epPorts,
      }, (s) => [s.endpoints, s.ports], (s) => { s.endpoints = endpoints; s.ports = epPorts; })]);
    }

    function kick(delay = 0) {
      if (stopped || pending) return;
      pending = setTimeout(() => {
        pending = undefined;
        running = (running ?? Promise.resolve()).then(() => reconcile()).catch((e) => host.log.warn('apiserver-service', { error: String(e) }));
      }, delay);
    }

    return {
      perServer: true,
      // one endpoint per server process, not per read loop
      oncePerProcess: true,
      // the server's own Service and endpoints, and its identity Lease
      postStartHooks: ['bootstrap-controller', 'start-kube-apiserver-identity-lease-controller'],
      start() {},
      async listening(info) {
        port = info.port;
        for (const [g, r] of [['', 'services'], ['', 'endpoints'], [`discovery.${host.brand.domain}`, 'endpointslices']]) {
          const t = host.type(g, r);
          if (t) unwatch.push(host.objects.watch(t, () => kick(50), { namespace: ns, name }));
        }
        // another replica's Lease appearing or going
        if (leaseType) unwatch.push(host.objects.watch(leaseType, (ev, obj) => { if (ev !== 'MODIFIED' && obj.metadata?.labels?.[identityLabel] === component) kick(50); }));
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
        // Leave at once: drop this server's Lease and its address from the endpoints.
        if (leaseType && port) {
          await host.objects.delete(leaseType, sysNs, leaseName()).catch(() => undefined);
          await reconcile(true).catch((e) => host.log.warn('apiserver-service', { error: String(e) }));
        }
      },
    };
  },
};
export default plugin;
