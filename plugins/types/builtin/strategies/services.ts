// The Service strategy: cluster IPs from --service-cluster-ip-range (one range per IP family, so
// dual-stack), node ports from --service-node-port-range, the reference's ipFamilies/ipFamilyPolicy
// defaulting, release on delete and type change. Every reservation is a durable record in the plugin
// state (one key per address or port, created atomically), taken in memory first so concurrent
// creates never pick the same value; records and services are reconciled at start.
import type { FieldCause, KObject, PluginHost, PluginState, TypeStrategy, WriteFinisher } from '../../../../kernel/contracts/index.js';
import { StatusError } from '../../../../kernel/contracts/status.js';
import { bigIntToIp, canonicalIp, contains, familyOf, ipToBigInt, parseCidr, type Cidr, type Family } from '../../../../kernel/ops/ipnet.js';
import { isObj, list, type J } from '../../../lib/json.js';

export interface ServiceOptions {
  /** One or two comma-separated CIDRs (the first is the primary family). */
  serviceClusterIPRange?: string;
  /** "30000-32767". */
  serviceNodePortRange?: string;
}

export const DEFAULT_SERVICE_CIDR = '10.96.0.0/12';
export const DEFAULT_NODE_PORT_RANGE = '30000-32767';

/** Largest range the allocator serves: 2^20 addresses (the reference's /108 limit for IPv6, /12 for IPv4). */
const MAX_RANGE = 1n << 20n;

/** Parses --service-cluster-ip-range: one CIDR, or two of different families. */
export function parseServiceCidrs(text: string): Cidr[] {
  const cidrs = text.split(',').map((s) => s.trim()).filter(Boolean).map(parseCidr);
  if (!cidrs.length || cidrs.length > 2) throw new Error(`--service-cluster-ip-range: expected one or two CIDRs, got "${text}"`);
  if (cidrs.length === 2 && cidrs[0].family === cidrs[1].family) throw new Error('--service-cluster-ip-range: a dual-stack range needs one IPv4 and one IPv6 CIDR');
  for (const c of cidrs) {
    if (c.size > MAX_RANGE) throw new Error(`--service-cluster-ip-range: ${c.text} is too large (at most 2^20 addresses: /12 for IPv4, /108 for IPv6)`);
    if (c.size < 4n) throw new Error(`--service-cluster-ip-range: ${c.text} is too small`);
  }
  return cidrs;
}

export function parsePortRange(text: string): { base: number; size: number; text: string } {
  const m = /^(\d+)(?:-(\d+)|\+(\d+))$/.exec(text.trim());
  if (!m) throw new Error(`--service-node-port-range: invalid port range "${text}" (expected e.g. 30000-32767)`);
  const base = Number(m[1]);
  const last = m[2] !== undefined ? Number(m[2]) : base + Number(m[3]);
  if (base < 1 || last > 65535 || last < base) throw new Error(`--service-node-port-range: invalid port range "${text}"`);
  return { base, size: last - base + 1, text: `${base}-${last}` };
}


// ---------------------------------------------------------------- the allocation tables

/** Dynamic picks prefer the upper part of a range, leaving the lower band for static requests (the reference's KEP 3070/3668 bands). */
function staticBand(size: number, min: number, div: number, max: number): number {
  return Math.min(Math.max(min, Math.floor(size / div)), max);
}

/** A range of reservable values (IP offsets or ports) with their owners, mirrored into durable records. */
class Table {
  /** value → owner ("namespace/name"). */
  readonly used = new Map<string, string>();
  constructor(readonly prefix: string, readonly first: number, readonly count: number, readonly band: number, readonly key: (offset: number) => string) {}

  /** A free value, preferring the dynamic band; `also` holds values a dry run already picked. */
  pick(also?: Set<string>): string | undefined {
    const free = (i: number) => !this.used.has(this.key(i)) && !also?.has(this.key(i));
    const scan = (lo: number, hi: number) => {
      if (hi <= lo) return undefined;
      const start = lo + Math.floor(Math.random() * (hi - lo));
      for (let k = 0; k < hi - lo; k++) {
        const i = lo + ((start - lo + k) % (hi - lo));
        if (free(i)) return this.key(i);
      }
      return undefined;
    };
    const split = this.first + Math.min(this.band, this.count);
    return scan(split, this.first + this.count) ?? scan(this.first, split);
  }
}

interface Reservation { table: Table; value: string }

export class ServiceAllocator {
  readonly cidrs: Cidr[];
  readonly ports: { base: number; size: number; text: string };
  private ipTables = new Map<Family, Table>();
  private portTable: Table;
  private stateStore?: PluginState;
  /** Asked for at first use: the host's storage is open only once the server starts. */
  private get state(): PluginState { return (this.stateStore ??= this.host.state('services')); }

  constructor(private host: PluginHost, opts: ServiceOptions) {
    this.cidrs = parseServiceCidrs(opts.serviceClusterIPRange ?? DEFAULT_SERVICE_CIDR);
    this.ports = parsePortRange(opts.serviceNodePortRange ?? DEFAULT_NODE_PORT_RANGE);
    for (const c of this.cidrs) {
      // IPv4 leaves out the network and broadcast addresses; IPv6 the subnet-router anycast address.
      const count = Number(c.size) - (c.family === 'IPv4' ? 2 : 1);
      this.ipTables.set(c.family, new Table('ip/', 1, count, staticBand(count, 16, 16, 256), (i) => bigIntToIp(c.base + BigInt(i), c.family)));
    }
    this.portTable = new Table('port/', this.ports.base, this.ports.size, staticBand(this.ports.size, 16, 32, 128), (i) => String(i));
  }

  get families(): Family[] { return this.cidrs.map((c) => c.family); }

  private cidr(f: Family): Cidr | undefined { return this.cidrs.find((c) => c.family === f); }

  /** Reconciles the durable records with the services: records without a service are released, services without records re-marked. */
  async repair(services: KObject[]): Promise<{ released: number; marked: number }> {
    const wanted = new Map<string, string>();
    for (const s of services) {
      const owner = ownerOf(s);
      for (const ip of serviceIPs(s)) {
        const f = familyOf(ip);
        if (f && this.cidr(f) && contains(this.cidr(f)!, ip)) wanted.set(`ip/${canonicalIp(ip)}`, owner);
      }
      for (const p of serviceNodePorts(s)) if (p >= this.ports.base && p < this.ports.base + this.ports.size) wanted.set(`port/${p}`, owner);
    }
    let released = 0, marked = 0;
    for (const r of await this.state.list()) {
      if (wanted.get(r.key) === r.value) continue;
      await this.state.delete(r.key);
      released++;
    }
    const now = new Map((await this.state.list()).map((r) => [r.key, r.value]));
    for (const [key, owner] of wanted) {
      const table = key.startsWith('port/') ? this.portTable : this.ipTables.get(familyOf(key.slice(3))!)!;
      table.used.set(key.slice(table.prefix.length), owner);
      if (!now.has(key)) { await this.state.create(key, owner); marked++; }
    }
    return { released, marked };
  }

  /** Takes one value; `value` undefined picks a free one. Throws the reference's allocation errors. */
  private async take(table: Table, owner: string, value: string | undefined, dryRun: boolean, picked: Set<string>, onTaken: (reason: string) => StatusError): Promise<string> {
    for (;;) {
      const v = value ?? table.pick(dryRun ? picked : undefined);
      if (v === undefined) throw onTaken('range is full');
      if (table.used.has(v) || picked.has(v)) {
        if (value !== undefined) throw onTaken(table === this.portTable ? 'provided port is already allocated' : 'provided IP is already allocated');
        continue;
      }
      picked.add(v);
      if (dryRun) return v;
      table.used.set(v, owner);
      // The durable record is the reservation; a record some other writer holds means try another.
      if (await this.state.create(table.prefix + v, owner)) return v;
      if (value !== undefined) throw onTaken(table === this.portTable ? 'provided port is already allocated' : 'provided IP is already allocated');
    }
  }

  async release(items: Reservation[]): Promise<void> {
    for (const { table, value } of items) {
      table.used.delete(value);
      await this.state.delete(table.prefix + value);
    }
  }

  // ---------------------------------------------------------------- one write

  /** A write's reservations: kept on commit, released on failure; `deferred` is released on commit. */
  transaction(svc: KObject, dryRun: boolean) {
    const owner = ownerOf(svc);
    const taken: Reservation[] = [];
    const deferred: Reservation[] = [];
    const picked = new Set<string>();
    const ip = async (family: Family, requested: string | undefined, all: unknown): Promise<string> => {
      const table = this.ipTables.get(family)!;
      const cidr = this.cidr(family)!;
      if (requested !== undefined) {
        const c = canonicalIp(requested)!;
        const n = ipToBigInt(c);
        if (!contains(cidr, c) || n === cidr.base || (family === 'IPv4' && n === cidr.base + cidr.size - 1n)) {
          throw invalidService(svc, [{ reason: 'FieldValueInvalid', field: 'spec.clusterIPs', message: `Invalid value: ${goStrings(all)}: failed to allocate IP ${requested}: the provided IP (${requested}) is not in the valid range. The range of valid IPs is ${cidr.text}` }]);
        }
        const v = await this.take(table, owner, c, dryRun, picked, (reason) => invalidService(svc, [{ reason: 'FieldValueInvalid', field: 'spec.clusterIPs', message: `Invalid value: ${goStrings(all)}: failed to allocate IP ${requested}: ${reason}` }]));
        if (!dryRun) taken.push({ table, value: v });
        return requested;
      }
      const v = await this.take(table, owner, undefined, dryRun, picked, (reason) => internal(`failed to allocate a serviceIP: ${reason}`));
      if (!dryRun) taken.push({ table, value: v });
      return v;
    };
    const port = async (requested: number | undefined, field: string): Promise<number> => {
      const t = this.portTable;
      if (requested !== undefined) {
        if (requested < this.ports.base || requested >= this.ports.base + this.ports.size) {
          throw invalidService(svc, [{ reason: 'FieldValueInvalid', field, message: `Invalid value: ${requested}: provided port is not in the valid range. The range of valid ports is ${this.ports.text}` }]);
        }
        await this.take(t, owner, String(requested), dryRun, picked, (reason) => invalidService(svc, [{ reason: 'FieldValueInvalid', field, message: `Invalid value: ${requested}: ${reason}` }]));
        if (!dryRun) taken.push({ table: t, value: String(requested) });
        return requested;
      }
      const v = await this.take(t, owner, undefined, dryRun, picked, (reason) => internal(`failed to allocate a nodePort: ${reason}`));
      if (!dryRun) taken.push({ table: t, value: v });
      return Number(v);
    };
    const releaseLater = (kind: 'ip' | 'port', value: string) => {
      const table = kind === 'port' ? this.portTable : this.ipTables.get(familyOf(value)!);
      const v = kind === 'ip' ? canonicalIp(value) : value;
      if (table && v && table.used.has(v)) deferred.push({ table, value: v });
    };
    const finish: WriteFinisher = async (committed) => {
      if (dryRun) return;
      if (committed) await this.release(deferred);
      else await this.release(taken);
    };
    return { ip, port, releaseLater, finish };
  }
}

// ---------------------------------------------------------------- the strategy

const needsNodePorts = (spec: J) => spec.type === 'NodePort' || spec.type === 'LoadBalancer';
const shouldAllocateNodePorts = (spec: J) => spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
const needsHealthCheck = (spec: J) => spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';
const isHeadless = (spec: J) => spec.clusterIP === 'None' || (Array.isArray(spec.clusterIPs) && spec.clusterIPs[0] === 'None');
const empty = (v: unknown) => v === undefined || v === null || v === '';
const specOf = (o: KObject): J => (isObj(o.spec) ? o.spec : (o.spec = {}) as J);

function ownerOf(s: KObject): string {
  return `${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''}`;
}

function serviceIPs(s: KObject): string[] {
  const spec = isObj(s.spec) ? s.spec : {};
  if (spec.type === 'ExternalName') return [];
  const ips = Array.isArray(spec.clusterIPs) && spec.clusterIPs.length ? spec.clusterIPs : empty(spec.clusterIP) ? [] : [spec.clusterIP];
  return ips.filter((ip: unknown): ip is string => typeof ip === 'string' && ip !== 'None' && !!familyOf(ip));
}

function serviceNodePorts(s: KObject): number[] {
  const spec = isObj(s.spec) ? s.spec : {};
  const out = new Set<number>();
  for (const p of list(spec.ports)) if (typeof p.nodePort === 'number' && p.nodePort > 0) out.add(p.nodePort);
  if (typeof spec.healthCheckNodePort === 'number' && spec.healthCheckNodePort > 0) out.add(spec.healthCheckNodePort);
  return [...out];
}

function goStrings(v: unknown): string {
  return Array.isArray(v) ? `[]string{${v.map((x) => JSON.stringify(String(x))).join(', ')}}` : '[]string(nil)';
}

function invalidService(s: KObject, causes: FieldCause[]): StatusError {
  const name = s.metadata?.name ?? '';
  const e = new StatusError(422, 'Invalid', `Service "${name}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`, { name, kind: 'Service', causes });
  return e;
}

/**
 * The reference's node-port update allocates before it validates, and meets a port listed twice
 * (the same protocol and node port, as a duplicated list item carries) as a plain error: 500.
 */
function duplicateNodePort(spec: J): void {
  const seen = new Set<string>();
  for (const p of list(spec.ports)) {
    if (typeof p.nodePort !== 'number' || p.nodePort <= 0) continue;
    const key = `${p.protocol ?? 'TCP'} ${p.nodePort}`;
    if (seen.has(key)) throw new StatusError(500, '', `duplicate nodePort: {${key}}`);
    seen.add(key);
  }
}

function internal(msg: string): StatusError {
  return new StatusError(500, 'InternalError', `Internal error occurred: ${msg}`, { causes: [{ message: msg }] });
}

/** spec.clusterIP and spec.clusterIPs[0] say the same thing: fill whichever is missing from the other. */
function normalizeClusterIPs(spec: J): void {
  const ips = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [];
  if (!empty(spec.clusterIP) && ips.length === 0) spec.clusterIPs = [spec.clusterIP];
  else if (empty(spec.clusterIP) && ips.length > 0) spec.clusterIP = ips[0];
}

/**
 * A type change leaves behind what only the old type used, as the reference's dropTypeDependentFields
 * does, when the client kept it unchanged: the external traffic policy (NodePort and LoadBalancer),
 * the load balancer's node-port allocation switch and class.
 */
function dropTypeDependentFields(spec: J, ospec: J): void {
  const external = (t: unknown) => t === 'NodePort' || t === 'LoadBalancer';
  if (external(ospec.type) && !external(spec.type) && spec.externalTrafficPolicy === ospec.externalTrafficPolicy) delete spec.externalTrafficPolicy;
  if (ospec.type === 'LoadBalancer' && spec.type !== 'LoadBalancer') {
    for (const k of ['allocateLoadBalancerNodePorts', 'loadBalancerClass']) if (JSON.stringify(spec[k]) === JSON.stringify(ospec[k])) delete spec[k];
  }
}

/**
 * The reference's initIPFamilyFields: ipFamilyPolicy (from the old object on update, else
 * RequireDualStack for headless selector-less services, else SingleStack), ipFamilies inferred from
 * clusterIPs and completed from the cluster's families, with its refusals.
 */
function initFamilies(al: ServiceAllocator, svc: KObject, old: KObject | undefined): void {
  const spec = specOf(svc);
  if (spec.type === 'ExternalName') return;
  // The reference validates what the client sent before it allocates: set values ("" included) must be known.
  const sent: FieldCause[] = [];
  const POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];
  if (spec.ipFamilyPolicy !== undefined && spec.ipFamilyPolicy !== null && !POLICIES.includes(spec.ipFamilyPolicy)) sent.push({ reason: 'FieldValueNotSupported', field: 'spec.ipFamilyPolicy', message: `Unsupported value: ${JSON.stringify(spec.ipFamilyPolicy)}: supported values: ${POLICIES.map((p) => JSON.stringify(p)).join(', ')}` });
  const seen = new Set<unknown>();
  (Array.isArray(spec.ipFamilies) ? spec.ipFamilies : []).forEach((f: unknown, i: number) => {
    if (f !== 'IPv4' && f !== 'IPv6') sent.push({ reason: 'FieldValueNotSupported', field: `spec.ipFamilies[${i}]`, message: `Unsupported value: ${JSON.stringify(f)}: supported values: "IPv4", "IPv6"` });
    else if (seen.has(f)) sent.push({ reason: 'FieldValueDuplicate', field: `spec.ipFamilies[${i}]`, message: `Duplicate value: ${JSON.stringify(f)}` });
    seen.add(f);
  });
  if (sent.length) throw invalidService(svc, sent);
  const ospec = old && isObj(old.spec) ? old.spec : undefined;
  if (empty(spec.ipFamilyPolicy)) {
    if (ospec && !empty(ospec.ipFamilyPolicy)) spec.ipFamilyPolicy = ospec.ipFamilyPolicy;
    else spec.ipFamilyPolicy = spec.clusterIP === 'None' && !Object.keys(isObj(spec.selector) ? spec.selector : {}).length ? 'RequireDualStack' : 'SingleStack';
  }
  const causes: FieldCause[] = [];
  const ips: unknown[] = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [];
  let families: string[] = Array.isArray(spec.ipFamilies) ? [...spec.ipFamilies] : [];
  ips.forEach((ip, i) => {
    if (i === 0 && ip === 'None') return;
    if (typeof ip !== 'string' || !familyOf(ip)) causes.push({ reason: 'FieldValueInvalid', field: `spec.clusterIPs[${i}]`, message: `Invalid value: ${JSON.stringify(ip)}: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)` });
  });
  if (causes.length) throw invalidService(svc, causes);
  // Update: SingleStack with the old IPs unchanged drops the secondary; otherwise reducing needs SingleStack.
  if (ospec) {
    const same = (a: unknown, b: unknown) => JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
    const oldIPs: unknown[] = Array.isArray(ospec.clusterIPs) ? ospec.clusterIPs : [];
    const oldFamilies: unknown[] = Array.isArray(ospec.ipFamilies) ? ospec.ipFamilies : [];
    if (spec.ipFamilyPolicy === 'SingleStack') {
      if (same(spec.clusterIPs, ospec.clusterIPs) && ips.length > 1) spec.clusterIPs = ips.slice(0, 1);
      if (same(spec.ipFamilies, ospec.ipFamilies) && families.length > 1) families = families.slice(0, 1);
    } else {
      if (oldIPs.length > ips.length && ips.length > 0) causes.push({ reason: 'FieldValueInvalid', field: 'spec.ipFamilyPolicy', message: `Invalid value: ${JSON.stringify(spec.ipFamilyPolicy)}: must be 'SingleStack' to release the secondary cluster IP` });
      if (oldFamilies.length > families.length && families.length > 0) causes.push({ reason: 'FieldValueInvalid', field: 'spec.ipFamilyPolicy', message: `Invalid value: ${JSON.stringify(spec.ipFamilyPolicy)}: must be 'SingleStack' to release the secondary IP family` });
    }
  }
  const curIPs: unknown[] = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [];
  if (spec.ipFamilyPolicy === 'SingleStack') {
    if (curIPs.length === 2) causes.push({ reason: 'FieldValueInvalid', field: 'spec.ipFamilyPolicy', message: `Invalid value: "SingleStack": must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified` });
    if (families.length === 2) causes.push({ reason: 'FieldValueInvalid', field: 'spec.ipFamilyPolicy', message: `Invalid value: "SingleStack": must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified` });
  }
  curIPs.forEach((ip, i) => {
    if (ip === 'None' || typeof ip !== 'string') return;
    const fam = familyOf(ip)!;
    if (i < families.length) return;
    if (!al.families.includes(fam)) causes.push({ reason: 'FieldValueInvalid', field: `spec.clusterIPs[${i}]`, message: `Invalid value: ${goStrings(curIPs)}: ${fam} is not configured on this cluster` });
    else families.push(fam);
  });
  if (causes.length) throw invalidService(svc, causes);
  const alt = (f: string) => (f === 'IPv4' ? 'IPv6' : 'IPv4');
  if (spec.clusterIP === 'None' && !Object.keys(isObj(spec.selector) ? spec.selector : {}).length) {
    // Headless without a selector: any family goes, even ones the cluster lacks.
    if (!families.length) families = [al.families[0]];
    if (families.length < 2 && spec.ipFamilyPolicy !== 'SingleStack') families.push(alt(families[0]));
    spec.ipFamilies = families;
    return;
  }
  if (spec.ipFamilyPolicy === 'RequireDualStack' && al.families.length < 2) {
    causes.push({ reason: 'FieldValueInvalid', field: 'spec.ipFamilyPolicy', message: 'Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services' });
  }
  families.forEach((f, i) => {
    if (!al.families.includes(f as Family)) causes.push({ reason: 'FieldValueInvalid', field: `spec.ipFamilies[${i}]`, message: `Invalid value: ${JSON.stringify(f)}: not configured on this cluster` });
  });
  if (causes.length) throw invalidService(svc, causes);
  if (!families.length) families = [al.families[0]];
  if (spec.ipFamilyPolicy !== 'SingleStack' && families.length === 1 && al.families.length === 2) families.push(alt(families[0]));
  spec.ipFamilies = families;
}

/** Allocates cluster IPs for every family the service has without one. */
async function allocClusterIPs(spec: J, txn: ReturnType<ServiceAllocator['transaction']>, from = 0): Promise<void> {
  if (spec.type === 'ExternalName' || isHeadless(spec)) return;
  const families: Family[] = spec.ipFamilies ?? [];
  const ips: string[] = Array.isArray(spec.clusterIPs) ? [...spec.clusterIPs] : [];
  const requested = [...ips];
  for (let i = from; i < families.length; i++) ips[i] = await txn.ip(families[i], empty(ips[i]) ? undefined : ips[i], requested);
  spec.clusterIPs = ips;
  spec.clusterIP = ips[0];
}

/** Node ports for a NodePort or LoadBalancer service: requests honoured, ports sharing a service port share a node port. */
async function allocNodePorts(spec: J, txn: ReturnType<ServiceAllocator['transaction']>, oldPorts: Set<number>): Promise<void> {
  const ports = list(spec.ports);
  const byServicePort = new Map<number, number>();
  const taken = new Set<number>();
  for (let i = 0; i < ports.length; i++) {
    const p = ports[i];
    const requested = typeof p.nodePort === 'number' && p.nodePort > 0 ? p.nodePort : undefined;
    if (requested === undefined && !shouldAllocateNodePorts(spec)) continue;
    const shared = byServicePort.get(p.port);
    if (requested === undefined && shared !== undefined) { p.nodePort = shared; continue; }
    if (requested !== undefined && (oldPorts.has(requested) || taken.has(requested))) { byServicePort.set(p.port, requested); continue; }
    p.nodePort = await txn.port(requested, `spec.ports[${i}].nodePort`);
    taken.add(p.nodePort);
    byServicePort.set(p.port, p.nodePort);
  }
}

export function serviceStrategy(al: ServiceAllocator): TypeStrategy {
  return {
    async beginCreate(obj, ctx) {
      const spec = specOf(obj);
      normalizeClusterIPs(spec);
      initFamilies(al, obj, undefined);
      const txn = al.transaction(obj, ctx.dryRun);
      try {
        await allocClusterIPs(spec, txn);
        if (needsNodePorts(spec)) await allocNodePorts(spec, txn, new Set());
        if (needsHealthCheck(spec)) spec.healthCheckNodePort = await txn.port(spec.healthCheckNodePort || undefined, 'spec.healthCheckNodePort');
      } catch (e) {
        await txn.finish(false);
        throw e;
      }
      return txn.finish;
    },

    async beginUpdate(obj, old, ctx) {
      if (ctx.subresource) return; // status writes keep the old spec
      const spec = specOf(obj);
      const ospec: J = isObj(old.spec) ? old.spec : {};
      dropTypeDependentFields(spec, ospec);
      const wasExternal = ospec.type === 'ExternalName';
      // A PUT that leaves out what was allocated keeps it (the reference's patchAllocatedValues).
      if (!wasExternal && spec.type !== 'ExternalName' && empty(spec.clusterIP) && !(Array.isArray(spec.clusterIPs) && spec.clusterIPs.length)) {
        if (ospec.clusterIP !== undefined) spec.clusterIP = ospec.clusterIP;
        if (ospec.clusterIPs !== undefined) spec.clusterIPs = [...ospec.clusterIPs];
      }
      if (needsNodePorts(spec) && needsNodePorts(ospec)) {
        const oldPorts = list(ospec.ports);
        for (const p of list(spec.ports)) {
          if (p.nodePort) continue;
          const match = oldPorts.find((q) => q.port === p.port && (q.protocol ?? 'TCP') === (p.protocol ?? 'TCP')) ?? oldPorts.find((q) => q.port === p.port);
          if (match?.nodePort) p.nodePort = match.nodePort;
        }
      }
      if (needsHealthCheck(spec) && needsHealthCheck(ospec) && !spec.healthCheckNodePort) spec.healthCheckNodePort = ospec.healthCheckNodePort;
      // Fields the new type does not have are dropped when they were only carried over.
      if (spec.type === 'ExternalName' && !wasExternal) {
        for (const f of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy']) if (JSON.stringify(spec[f]) === JSON.stringify(ospec[f])) delete spec[f];
      }
      if (!needsNodePorts(spec)) {
        const oldByPort = new Map(list(ospec.ports).map((q) => [q.port, q.nodePort]));
        for (const p of list(spec.ports)) if (p.nodePort && oldByPort.get(p.port) === p.nodePort) delete p.nodePort;
      }
      if (!needsHealthCheck(spec) && spec.healthCheckNodePort === ospec.healthCheckNodePort) delete spec.healthCheckNodePort;
      normalizeClusterIPs(spec);
      const oldIPs = serviceIPs(old);
      if (!wasExternal && spec.type !== 'ExternalName' && oldIPs.length && !isHeadless(ospec)) {
        const now: unknown[] = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [];
        if (now[0] !== oldIPs[0]) {
          throw invalidService(obj, [{ reason: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', message: `Invalid value: ${goStrings(now)}: may not change once set` }]);
        }
      }
      initFamilies(al, obj, old);
      const txn = al.transaction(obj, ctx.dryRun);
      try {
        if (spec.type === 'ExternalName') {
          for (const ip of oldIPs) txn.releaseLater('ip', ip);
        } else if (wasExternal) {
          await allocClusterIPs(spec, txn);
        } else if (!isHeadless(ospec)) {
          const was = Array.isArray(ospec.ipFamilies) ? ospec.ipFamilies.length : 1;
          const is = Array.isArray(spec.ipFamilies) ? spec.ipFamilies.length : 1;
          if (was === 1 && is === 2) await allocClusterIPs(spec, txn, 1);
          if (was === 2 && is === 1 && oldIPs[1]) {
            txn.releaseLater('ip', oldIPs[1]);
            if (Array.isArray(spec.clusterIPs)) spec.clusterIPs = spec.clusterIPs.slice(0, 1);
          }
        }
        const oldNodePorts = new Set(list(ospec.ports).map((q) => q.nodePort).filter((n): n is number => typeof n === 'number' && n > 0));
        if (needsNodePorts(spec)) {
          duplicateNodePort(spec);
          await allocNodePorts(spec, txn, oldNodePorts);
        }
        const keep = new Set(list(spec.ports).map((p) => p.nodePort));
        for (const n of oldNodePorts) if (!keep.has(n)) txn.releaseLater('port', String(n));
        const hc = ospec.healthCheckNodePort;
        if (needsHealthCheck(spec) && spec.healthCheckNodePort !== hc) {
          spec.healthCheckNodePort = await txn.port(spec.healthCheckNodePort || undefined, 'spec.healthCheckNodePort');
        }
        if (hc && spec.healthCheckNodePort !== hc && !keep.has(hc)) txn.releaseLater('port', String(hc));
      } catch (e) {
        await txn.finish(false);
        throw e;
      }
      return txn.finish;
    },

    async afterDelete(obj) {
      const txn = al.transaction(obj, false);
      for (const ip of serviceIPs(obj)) txn.releaseLater('ip', ip);
      for (const p of serviceNodePorts(obj)) txn.releaseLater('port', String(p));
      await txn.finish(true);
    },
  };
}

/** Repairs the allocation records against the stored services (at start). */
export async function repairServices(host: PluginHost, al: ServiceAllocator): Promise<void> {
  const type = host.type('', 'services');
  if (!type) return;
  const r = await al.repair(await host.objects.list(type));
  if (r.released || r.marked) host.log.info('service allocations repaired', r);
}
