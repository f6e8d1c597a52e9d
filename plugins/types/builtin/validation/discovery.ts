// discovery.k8s.io/v1 EndpointSlice, as the reference validates it: address type, endpoints
// (addresses by type, node names, host names, zone hints), ports. The address type is immutable.
import type { FieldCause, KObject } from '../../../../kernel/contracts/index.js';
import { isDNS1123Label, isDNS1123Subdomain, isValidLabelValue, validateLabels, validateQualifiedName } from '../../../../kernel/api/validation.js';
import { isObj, list } from '../../../lib/json.js';
import { duplicate, invalid, notSupported, required, type Validator } from './causes.js';
import { ipBytes, nonSpecialIPErrors } from './net.js';

const str = (v: unknown) => (typeof v === 'string' ? v : '');
const isSet = (v: unknown): boolean => v !== undefined && v !== null;
const tooMany = (field: string, n: number, max: number): FieldCause => ({ reason: 'FieldValueTooMany', field, message: `Too many: ${n}: must have at most ${max} items` });

/** The reference's IsFullyQualifiedDomainName. */
function fqdnErrors(v: string, p: string): FieldCause[] {
  const name = v.endsWith('.') ? v.slice(0, -1) : v;
  if (!name) return [required(p)];
  if (name.split('.').length < 2) return [invalid(p, name, 'should be a domain with at least two segments separated by dots')];
  return isDNS1123Subdomain(name).map((m) => invalid(p, name, m));
}

function sliceCauses(o: KObject): FieldCause[] {
  const out: FieldCause[] = [];
  const type = str(o.addressType);
  if (!type) out.push(required('addressType'));
  else if (!['FQDN', 'IPv4', 'IPv6'].includes(type)) out.push(notSupported('addressType', type, ['FQDN', 'IPv4', 'IPv6']));
  const endpoints = list(o.endpoints);
  if (endpoints.length > 1000) out.push(tooMany('endpoints', endpoints.length, 1000));
  else endpoints.forEach((e, i) => {
    const p = `endpoints[${i}]`;
    const addresses: unknown[] = Array.isArray(e.addresses) ? e.addresses : [];
    if (!addresses.length) out.push(required(`${p}.addresses`, 'must contain at least 1 address'));
    else if (addresses.length > 100) out.push(tooMany(`${p}.addresses`, addresses.length, 100));
    addresses.forEach((a, j) => {
      const ap = `${p}.addresses[${j}]`, text = str(a);
      if (type === 'IPv4' || type === 'IPv6') {
        const b = ipBytes(text);
        if (!b || (type === 'IPv4') !== (b.length === 4 || (b.slice(0, 10).every((x) => x === 0) && b[10] === 255 && b[11] === 255))) out.push(invalid(ap, text, `must be a valid ${type} address`));
        for (const m of nonSpecialIPErrors(text, true)) out.push(invalid(ap, text, m));
      } else if (type === 'FQDN') out.push(...fqdnErrors(text, ap));
    });
    if (isSet(e.nodeName)) for (const m of isDNS1123Subdomain(str(e.nodeName))) out.push(invalid(`${p}.nodeName`, str(e.nodeName), m));
    const topology = isObj(e.deprecatedTopology) ? e.deprecatedTopology : {};
    if (Object.keys(topology).length > 16) out.push(tooMany(`${p}.deprecatedTopology`, Object.keys(topology).length, 16));
    out.push(...validateLabels(topology, `${p}.deprecatedTopology`));
    if (isSet(e.hostname)) for (const m of isDNS1123Label(str(e.hostname))) out.push(invalid(`${p}.hostname`, str(e.hostname), m));
    if (isObj(e.hints)) {
      const zones = list(e.hints.forZones);
      if (zones.length > 8) out.push(tooMany(`${p}.hints.forZones`, zones.length, 8));
      else {
        const seen = new Set<string>();
        zones.forEach((z, k) => {
          const zp = `${p}.hints.forZones[${k}].name`, name = str(z.name);
          if (seen.has(name)) out.push(duplicate(zp, name)); else seen.add(name);
          for (const m of isValidLabelValue(name)) out.push(invalid(zp, name, m));
        });
      }
    }
  });
  const ports = list(o.ports);
  if (ports.length > 20000) out.push(tooMany('ports', ports.length, 20000));
  else {
    const names = new Set<string>();
    ports.forEach((port, i) => {
      const p = `ports[${i}]`, name = str(port.name);
      if (name) for (const m of isDNS1123Label(name)) out.push(invalid(`${p}.name`, name, m));
      if (names.has(name)) out.push(duplicate(`${p}.name`, name)); else names.add(name);
      if (!isSet(port.protocol)) out.push(required(`${p}.protocol`));
      else if (!['SCTP', 'TCP', 'UDP'].includes(str(port.protocol))) out.push(notSupported(`${p}.protocol`, port.protocol, ['SCTP', 'TCP', 'UDP']));
      if (isSet(port.appProtocol)) out.push(...validateQualifiedName(str(port.appProtocol), `${p}.appProtocol`));
    });
  }
  return out;
}

export const endpointSlice: Validator = (o, old) => {
  const out = sliceCauses(o);
  if (!old) return out;
  if (str(o.addressType) !== str(old.addressType)) out.push(invalid('addressType', str(o.addressType), 'field is immutable'));
  return out;
};
