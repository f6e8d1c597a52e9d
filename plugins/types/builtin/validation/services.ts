// core/v1 Service, as the reference's ValidateService checks it (the cluster IP and family rules that
// depend on allocation are the service strategy's, strategies/services.ts): name, type, ports
// (names, numbers, protocols, target ports, duplicates), selector, session affinity, external IPs,
// source ranges, load balancer class, traffic policies.
import type { FieldCause, KObject } from '../../../../kernel/contracts/index.js';
import { validateLabels, validateQualifiedName } from '../../../../kernel/api/validation.js';
import { isObj, list } from '../../../lib/json.js';
import { dns1035Errors, dnsLabelErrors, dnsSubdomainErrors, duplicate, forbidden, invalid, notSupported, oneOf, PORT_RANGE, portNameErrors, required, validPort } from './causes.js';
import { isIP, nonSpecialIPErrors, parseCidr } from './net.js';

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP']; // sorted, as the reference lists them
const MAX_AFFINITY_SECONDS = 86400;
const isSet = (v: unknown): boolean => v !== undefined && v !== null;

function portCauses(port: Record<string, any>, pp: string, requireName: boolean, names: Set<string>): FieldCause[] {
  const out: FieldCause[] = [];
  if (typeof port.name !== 'string' || port.name === '') {
    if (requireName) out.push(required(`${pp}.name`));
  } else {
    for (const m of dnsLabelErrors(port.name)) out.push(invalid(`${pp}.name`, port.name, m));
    if (names.has(port.name)) out.push(duplicate(`${pp}.name`, port.name));
    names.add(port.name);
  }
  if (!validPort(port.port)) out.push(invalid(`${pp}.port`, port.port ?? 0, PORT_RANGE));
  oneOf(out, `${pp}.protocol`, port.protocol, PROTOCOLS, true);
  // an unset target port is the port (defaulting), so a missing port shows here too
  const tp = port.targetPort ?? port.port ?? 0;
  if (typeof tp === 'number' && !validPort(tp)) out.push(invalid(`${pp}.targetPort`, tp, PORT_RANGE));
  if (typeof tp === 'string') for (const m of portNameErrors(tp)) out.push(invalid(`${pp}.targetPort`, tp, m));
  if (isSet(port.appProtocol)) out.push(...validateQualifiedName(String(port.appProtocol), `${pp}.appProtocol`));
  return out;
}

export function service(o: KObject, old?: KObject): FieldCause[] {
  const out: FieldCause[] = [];
  // Services need DNS-1035 labels (a letter first). The catalog's 'label' rule lets the kernel check
  // DNS-1123 labels; this adds only what 1035 forbids beyond that, so nothing is reported twice.
  const name = o.metadata?.name;
  if (typeof name === 'string' && name && dnsLabelErrors(name).length === 0) {
    for (const m of dns1035Errors(name)) out.push(invalid('metadata.name', name, m));
  }
  const spec = isObj(o.spec) ? o.spec : {};
  const headless = spec.clusterIP === 'None';
  const ports = list(spec.ports);
  if (ports.length === 0 && !headless && spec.type !== 'ExternalName') out.push(required('spec.ports'));
  if (spec.type === 'ExternalName') {
    const cname = typeof spec.externalName === 'string' ? spec.externalName.replace(/\.$/, '') : '';
    if (cname) for (const m of dnsSubdomainErrors(cname)) out.push(invalid('spec.externalName', cname, m));
    else out.push(required('spec.externalName'));
  }
  const names = new Set<string>();
  ports.forEach((port, i) => out.push(...portCauses(port, `spec.ports[${i}]`, ports.length > 1, names)));
  if (isSet(spec.selector)) out.push(...validateLabels(spec.selector, 'spec.selector'));
  oneOf(out, 'spec.sessionAffinity', spec.sessionAffinity, ['ClientIP', 'None'], true);
  if (spec.sessionAffinity === 'ClientIP') {
    const cfg = spec.sessionAffinityConfig;
    const when = 'when session affinity type is ClientIP';
    if (!isObj(cfg)) out.push(required('spec.sessionAffinityConfig', when));
    else if (!isObj(cfg.clientIP)) out.push(required('spec.sessionAffinityConfig.clientIP', when));
    else if (!isSet(cfg.clientIP.timeoutSeconds)) out.push(required('spec.sessionAffinityConfig.clientIP.timeoutSeconds', when));
    else {
      const t = cfg.clientIP.timeoutSeconds;
      if (typeof t === 'number' && (t <= 0 || t > MAX_AFFINITY_SECONDS)) out.push(invalid('spec.sessionAffinityConfig.clientIP.timeoutSeconds', t, `must be greater than 0 and less than ${MAX_AFFINITY_SECONDS}`));
    }
  } else if (spec.sessionAffinity === 'None' && isSet(spec.sessionAffinityConfig)) {
    out.push(forbidden('spec.sessionAffinityConfig', 'must not be set when session affinity is None'));
  }
  (Array.isArray(spec.externalIPs) ? spec.externalIPs : []).forEach((ip: unknown, i: number) => {
    const text = String(ip);
    if (!isIP(text)) out.push(invalid(`spec.externalIPs[${i}]`, text, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
    else for (const m of nonSpecialIPErrors(text)) out.push(invalid(`spec.externalIPs[${i}]`, text, m));
  });
  oneOf(out, 'spec.type', spec.type, SERVICE_TYPES, true);
  if (spec.type === 'ClusterIP') ports.forEach((port, i) => { if (port.nodePort) out.push(forbidden(`spec.ports[${i}].nodePort`, "may not be used when `type` is 'ClusterIP'")); });
  const nodePorts = new Set<string>();
  ports.forEach((port, i) => {
    if (!port.nodePort) return;
    const k = `${port.protocol}/${port.nodePort}`;
    if (nodePorts.has(k)) out.push(duplicate(`spec.ports[${i}].nodePort`, port.nodePort));
    nodePorts.add(k);
  });
  const seen = new Set<string>();
  ports.forEach((port, i) => {
    const k = `${port.protocol ?? ''}/${port.port ?? 0}`;
    // the duplicate is the (protocol, port) key, printed as the Go struct it is in the reference
    if (seen.has(k)) out.push({ reason: 'FieldValueDuplicate', field: `spec.ports[${i}]`, message: `Duplicate value: core.ServicePort{Name:"", Protocol:${JSON.stringify(String(port.protocol ?? ''))}, AppProtocol:(*string)(nil), Port:${port.port ?? 0}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}` });
    seen.add(k);
  });
  const ranges: unknown[] = Array.isArray(spec.loadBalancerSourceRanges) ? spec.loadBalancerSourceRanges : [];
  if (ranges.length) {
    // the reference names this field with a capital L
    const field = 'spec.LoadBalancerSourceRanges';
    const val = `[${ranges.map(String).join(' ')}]`;
    if (spec.type !== 'LoadBalancer') out.push(forbidden(field, "may only be used when `type` is 'LoadBalancer'"));
    if (ranges.some((r) => !parseCidr(String(r).trim()))) out.push(invalid(field, val, 'must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24 '));
  }
  if (isSet(spec.allocateLoadBalancerNodePorts) && spec.type !== 'LoadBalancer') out.push(forbidden('spec.allocateLoadBalancerNodePorts', "may only be used when `type` is 'LoadBalancer'"));
  if (spec.type === 'LoadBalancer' && !isSet(spec.allocateLoadBalancerNodePorts)) out.push(required('allocateLoadBalancerNodePorts'));
  if (isSet(spec.loadBalancerClass)) {
    if (spec.type === 'LoadBalancer') out.push(...validateQualifiedName(String(spec.loadBalancerClass), 'spec.loadBalancerClass'));
    else out.push(forbidden('spec.loadBalancerClass', "may only be used when `type` is 'LoadBalancer'"));
  }
  // An update checks the class against the old one (and its name once more, as the reference's second call does).
  const ospec = old && isObj(old.spec) ? old.spec : undefined;
  if (ospec && ospec.type === 'LoadBalancer' && spec.type === 'LoadBalancer') {
    if ((ospec.loadBalancerClass ?? null) !== (spec.loadBalancerClass ?? null)) out.push(invalid('spec.loadBalancerClass', spec.loadBalancerClass ?? 'null', 'may not change once set'));
    if (isSet(spec.loadBalancerClass)) out.push(...validateQualifiedName(String(spec.loadBalancerClass), 'spec.loadBalancerClass'));
  }
  const external = spec.type === 'NodePort' || spec.type === 'LoadBalancer';
  const etp = spec.externalTrafficPolicy;
  if (!external) {
    if (etp) out.push(invalid('spec.externalTrafficPolicy', etp, "may only be set when `type` is 'NodePort' or 'LoadBalancer'"));
  } else if (!etp) out.push(required('spec.externalTrafficPolicy'));
  else if (etp !== 'Cluster' && etp !== 'Local') out.push(notSupported('spec.externalTrafficPolicy', etp, ['Cluster', 'Local']));
  const itp = spec.internalTrafficPolicy;
  if (!isSet(itp)) { if (spec.type === 'NodePort' || spec.type === 'LoadBalancer' || spec.type === 'ClusterIP') out.push(required('spec.internalTrafficPolicy')); }
  else if (itp !== 'Cluster' && itp !== 'Local') out.push(notSupported('spec.internalTrafficPolicy', itp, ['Cluster', 'Local']));
  return out;
}
