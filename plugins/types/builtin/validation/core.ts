// Endpoints, Nodes and Namespaces, as the reference validates them: endpoint addresses (valid,
// non-special IPs), hostnames, node names and ports; node taints, pod CIDRs and resource amounts,
// with the update rules of pod CIDRs and provider IDs; namespace finalizer names. The node strategy
// validates an update as the object and then the update, which checks taints and resources again.
import type { Brand } from '../../../../kernel/contracts/brand.js';
import type { FieldCause, KObject } from '../../../../kernel/contracts/index.js';
import { isDNS1123Label, isDNS1123Subdomain, isValidLabelValue, validateQualifiedName } from '../../../../kernel/api/validation.js';
import { parseQuantity } from '../../../../workers/body/quantity.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { canon, goStrings, invalid, notSupported, required, PORT_RANGE, validPort, type Validator } from './causes.js';
import { ipBytes, nonSpecialIPErrors, parseCidr } from './net.js';
import { str } from './pod-env.js';
import { quantityValueCauses } from './pod-resources.js';

// ---------------------------------------------------------------- Endpoints

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const VALID_IP = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';

/** ValidateNonSpecialIP, a loopback address allowed (see net.ts). */
export function nonSpecialIPCauses(ip: string, f: string): FieldCause[] {
  return ipBytes(ip) ? nonSpecialIPErrors(ip, true).map((m) => invalid(f, ip, m)) : [invalid(f, ip, 'must be a valid IP address')];
}

function endpointAddressCauses(a: J, p: string): FieldCause[] {
  const ip = str(a.ip);
  const out = ipBytes(ip) ? [] : [invalid(`${p}.ip`, ip, VALID_IP)];
  if (str(a.hostname)) out.push(...isDNS1123Label(str(a.hostname)).map((m) => invalid(`${p}.hostname`, a.hostname, m)));
  if (a.nodeName !== undefined && a.nodeName !== null) out.push(...isDNS1123Subdomain(str(a.nodeName)).map((m) => invalid(`${p}.nodeName`, a.nodeName, m)));
  out.push(...nonSpecialIPCauses(ip, `${p}.ip`));
  return out;
}

function endpointPortCauses(port: J, requireName: boolean, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const name = str(port.name);
  if (requireName && !name) out.push(required(`${p}.name`));
  else if (name) out.push(...isDNS1123Label(name).map((m) => invalid(`${p}.name`, name, m)));
  if (!validPort(port.port)) out.push(invalid(`${p}.port`, typeof port.port === 'number' ? port.port : 0, PORT_RANGE));
  if (!str(port.protocol)) out.push(required(`${p}.protocol`));
  else if (!PROTOCOLS.includes(str(port.protocol))) out.push(notSupported(`${p}.protocol`, port.protocol, PROTOCOLS));
  if (port.appProtocol !== undefined && port.appProtocol !== null) out.push(...validateQualifiedName(str(port.appProtocol), `${p}.appProtocol`));
  return out;
}

export const endpoints: Validator = (o) => {
  const out: FieldCause[] = [];
  list(o.subsets).forEach((s, i) => {
    const p = `subsets[${i}]`;
    const ready = list(s.addresses), notReady = list(s.notReadyAddresses), ports = list(s.ports);
    if (!ready.length && !notReady.length) out.push(required(p, 'must specify `addresses` or `notReadyAddresses`'));
    ready.forEach((a, j) => out.push(...endpointAddressCauses(a, `${p}.addresses[${j}]`)));
    notReady.forEach((a, j) => out.push(...endpointAddressCauses(a, `${p}.notReadyAddresses[${j}]`)));
    ports.forEach((port, j) => out.push(...endpointPortCauses(port, ports.length > 1, `${p}.ports[${j}]`)));
  });
  return out;
};

// ---------------------------------------------------------------- Node

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const CIDR_UPDATE = 'node updates may not change podCIDR except from "" to valid';

/** Go's %v of a core.Taint, as a duplicate's message prints it. */
const goTaint = (t: J) => `core.Taint{Key:${JSON.stringify(str(t.key))}, Value:${JSON.stringify(str(t.value))}, Effect:${JSON.stringify(str(t.effect))}, TimeAdded:${t.timeAdded ? str(t.timeAdded) : '<nil>'}}`;

/** Taints (reported under metadata.taints, as the reference's path has them): key, value, effect, unique by key and effect. */
function taintCauses(taints: unknown): FieldCause[] {
  const out: FieldCause[] = [];
  const seen = new Set<string>();
  list(taints).forEach((t, i) => {
    const p = `metadata.taints[${i}]`;
    out.push(...validateQualifiedName(str(t.key), `${p}.key`));
    const valueErrs = isValidLabelValue(str(t.value));
    if (valueErrs.length) out.push(invalid(`${p}.value`, str(t.value), valueErrs.join(';')));
    if (!str(t.effect)) out.push(required(`${p}.effect`));
    else if (!TAINT_EFFECTS.includes(str(t.effect))) out.push(notSupported(`${p}.effect`, t.effect, TAINT_EFFECTS));
    const id = `${str(t.effect)}\n${str(t.key)}`;
    if (seen.has(id)) out.push({ reason: 'FieldValueDuplicate', field: p, message: `Duplicate value: ${goTaint(t)}: taints must be unique by key and effect pair` });
    else seen.add(id);
  });
  return out;
}

/** ValidateNodeResources: capacity and allocatable amounts. */
function nodeResourceCauses(status: J): FieldCause[] {
  const out: FieldCause[] = [];
  for (const field of ['capacity', 'allocatable']) {
    for (const [name, v] of Object.entries(isObj(status[field]) ? status[field] : {})) {
      const q = parseQuantity(v);
      if (typeof q !== 'string') out.push(...quantityValueCauses(name, q, `status.${field}.${name}`));
    }
  }
  return out;
}

function podCidrCauses(cidrs: unknown[]): FieldCause[] {
  const out: FieldCause[] = [];
  const shown = goStrings(cidrs);
  const parsed = cidrs.map((c) => parseCidr(str(c)));
  parsed.forEach((c, i) => { if (!c) out.push(invalid(`spec.podCIDRs[${i}]`, null, 'must be valid CIDR', shown)); });
  if (cidrs.length > 1) {
    const families = new Set(parsed.map((c) => c?.ip.length));
    if (cidrs.length > 2 || families.size !== 2) out.push(invalid('spec.podCIDRs', null, 'may specify no more than one CIDR for each IP family', shown));
    const seen = new Set<unknown>();
    cidrs.forEach((c, i) => { if (seen.has(c)) out.push({ reason: 'FieldValueDuplicate', field: `spec.podCIDRs[${i}]`, message: `Duplicate value: ${JSON.stringify(str(c))}` }); seen.add(c); });
  }
  return out;
}

function nodeCauses(o: KObject): FieldCause[] {
  const spec = isObj(o.spec) ? o.spec : {};
  const cidrs: unknown[] = Array.isArray(spec.podCIDRs) ? spec.podCIDRs : [];
  return [...taintCauses(spec.taints), ...nodeResourceCauses(isObj(o.status) ? o.status : {}), ...(cidrs.length ? podCidrCauses(cidrs) : [])];
}

function nodeUpdateCauses(o: KObject, old: KObject): FieldCause[] {
  const spec = isObj(o.spec) ? o.spec : {}, was = isObj(old.spec) ? old.spec : {};
  const out = nodeResourceCauses(isObj(o.status) ? o.status : {});
  const addresses = new Set<string>();
  list(isObj(o.status) ? o.status.addresses : undefined).forEach((a, i) => {
    const key = canon({ type: str(a.type), address: str(a.address) });
    if (addresses.has(key)) out.push({ reason: 'FieldValueDuplicate', field: `status.addresses[${i}]`, message: `Duplicate value: core.NodeAddress{Type:${JSON.stringify(str(a.type))}, Address:${JSON.stringify(str(a.address))}}` });
    addresses.add(key);
  });
  const oldCidrs: unknown[] = Array.isArray(was.podCIDRs) ? was.podCIDRs : [];
  const newCidrs: unknown[] = Array.isArray(spec.podCIDRs) ? spec.podCIDRs : [];
  if (oldCidrs.length) {
    if (oldCidrs.length !== newCidrs.length) out.push({ reason: 'FieldValueForbidden', field: 'spec.podCIDRs', message: `Forbidden: ${CIDR_UPDATE}` });
    else oldCidrs.forEach((c, i) => { if (c !== newCidrs[i]) out.push({ reason: 'FieldValueForbidden', field: 'spec.podCIDRs', message: `Forbidden: ${CIDR_UPDATE}` }); });
  }
  if (str(was.providerID) && str(was.providerID) !== str(spec.providerID)) {
    out.push({ reason: 'FieldValueForbidden', field: 'spec.providerID', message: 'Forbidden: node updates may not change providerID except from "" to valid' });
  }
  out.push(...taintCauses(spec.taints));
  if (str(spec.externalID) !== str(was.externalID)) out.push({ reason: 'FieldValueForbidden', field: 'spec.externalID', message: 'Forbidden: may not be updated' });
  return out;
}

export const node: Validator = (o, old, _brand, subresource) => {
  // the status strategy runs only the update rules
  if (old && subresource === 'status') return nodeUpdateCauses(o, old);
  return old ? [...nodeCauses(o), ...nodeUpdateCauses(o, old)] : nodeCauses(o);
};

// ---------------------------------------------------------------- Namespace

/** Finalizer names on a namespace's spec: qualified names, and without a domain a standard one (all reported at the list's path). */
function namespaceFinalizerCauses(finalizers: unknown, brand: Brand): FieldCause[] {
  const standard = [brand.namespaceFinalizer, 'orphan', 'foregroundDeletion'];
  const out: FieldCause[] = [];
  for (const f of Array.isArray(finalizers) ? finalizers : []) {
    const name = str(f);
    out.push(...validateQualifiedName(name, 'spec.finalizers'));
    if (!name.includes('/') && !standard.includes(name)) out.push(invalid('spec.finalizers', name, 'name is neither a standard finalizer name nor is it fully qualified'));
  }
  return out;
}

export const namespace: Validator = (o, old, brand, subresource) => {
  if (subresource === 'status' || subresource === 'finalize') return [];
  return namespaceFinalizerCauses(isObj(o.spec) ? o.spec.finalizers : undefined, brand);
};
