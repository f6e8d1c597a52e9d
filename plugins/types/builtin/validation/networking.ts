// networking.k8s.io/v1: NetworkPolicy, Ingress and IngressClass, as the reference's networking
// validation and registry strategies check them (field paths, reasons, order; on update a network
// policy's spec is checked twice, as its strategy validates the object and then the update).
import type { FieldCause, KObject } from '../../../../kernel/contracts/index.js';
import { FIELD_IMMUTABLE, isDNS1123Label, isDNS1123Subdomain, isPathSegmentName, validateLabelSelector } from '../../../../kernel/api/validation.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { forbidden, invalid, notSupported, PORT_RANGE, portNameErrors, regexError, required, tooLong, type Validator } from './causes.js';
import { cidrContains, hostErrors, isIP, parseCidr } from './net.js';

const obj = (v: unknown): J => (isObj(v) ? v : {});
const isSet = (v: unknown): boolean => v !== undefined && v !== null;
const portNumErrors = (n: number) => (Number.isInteger(n) && n >= 1 && n <= 65535 ? [] : [PORT_RANGE]);

// ---------------------------------------------------------------- NetworkPolicy

function policyPortCauses(port: Record<string, any>, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (isSet(port.protocol) && !['TCP', 'UDP', 'SCTP'].includes(port.protocol)) out.push(notSupported(`${p}.protocol`, port.protocol, ['TCP', 'UDP', 'SCTP']));
  if (isSet(port.port)) {
    if (typeof port.port === 'number') {
      for (const m of portNumErrors(port.port)) out.push(invalid(`${p}.port`, port.port, m));
      if (isSet(port.endPort)) {
        if (port.endPort < port.port) out.push(invalid(`${p}.endPort`, port.port, 'must be greater than or equal to `port`'));
        for (const m of portNumErrors(port.endPort)) out.push(invalid(`${p}.endPort`, port.endPort, m));
      }
    } else {
      if (isSet(port.endPort)) out.push(invalid(`${p}.endPort`, port.endPort, 'may not be specified when `port` is non-numeric'));
      for (const m of portNameErrors(String(port.port))) out.push(invalid(`${p}.port`, port.port, m));
    }
  } else if (isSet(port.endPort)) out.push(invalid(`${p}.endPort`, port.endPort, 'may not be specified when `port` is not specified'));
  return out;
}

function ipBlockCauses(b: J, p: string): FieldCause[] {
  if (!b.cidr) return [required(`${p}.cidr`)];
  const cidr = parseCidr(String(b.cidr));
  if (!cidr) return [invalid(`${p}.cidr`, b.cidr, 'not a valid CIDR')];
  const out: FieldCause[] = [];
  const except: unknown[] = Array.isArray(b.except) ? b.except : [];
  for (let i = 0; i < except.length; i++) {
    const e = parseCidr(String(except[i]));
    if (!e) return [...out, invalid(`${p}.except[${i}]`, except[i], 'not a valid CIDR')];
    if (!cidrContains(cidr, e.ip) || cidr.prefix >= e.prefix) out.push(invalid(`${p}.except[${i}]`, except[i], 'must be a strict subset of `cidr`'));
  }
  return out;
}

function peerCauses(peer: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  let n = 0;
  if (isSet(peer.podSelector)) { n++; out.push(...validateLabelSelector(peer.podSelector, `${p}.podSelector`)); }
  if (isSet(peer.namespaceSelector)) { n++; out.push(...validateLabelSelector(peer.namespaceSelector, `${p}.namespaceSelector`)); }
  if (isSet(peer.ipBlock)) { n++; out.push(...ipBlockCauses(obj(peer.ipBlock), `${p}.ipBlock`)); }
  if (n === 0) out.push(required(p, 'must specify a peer'));
  else if (n > 1 && isSet(peer.ipBlock)) out.push(forbidden(p, 'may not specify both ipBlock and another peer'));
  return out;
}

function networkPolicySpecCauses(spec: J): FieldCause[] {
  const out = validateLabelSelector(spec.podSelector ?? {}, 'spec.podSelector');
  for (const [dir, peers] of [['ingress', 'from'], ['egress', 'to']] as const) {
    list(spec[dir]).forEach((rule, i) => {
      list(rule.ports).forEach((port, j) => out.push(...policyPortCauses(port, `spec.${dir}[${i}].ports[${j}]`)));
      list(rule[peers]).forEach((peer, j) => out.push(...peerCauses(peer, `spec.${dir}[${i}].${peers}[${j}]`)));
    });
  }
  const types = Array.isArray(spec.policyTypes) ? spec.policyTypes : [];
  if (types.length > 2) return [...out, invalid('spec.policyTypes', types, 'may not specify more than two policyTypes')];
  types.forEach((t: unknown, i: number) => { if (t !== 'Ingress' && t !== 'Egress') out.push(notSupported(`spec.policyTypes[${i}]`, t, ['Ingress', 'Egress'])); });
  return out;
}

export const networkPolicy: Validator = (o, old) => {
  const spec = networkPolicySpecCauses(obj(o.spec));
  return old ? [...spec, ...spec] : spec;
};

// ---------------------------------------------------------------- Ingress

function typedRefCauses(r: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (isSet(r.apiGroup)) for (const m of isDNS1123Subdomain(String(r.apiGroup))) out.push(invalid(`${p}.apiGroup`, r.apiGroup, m));
  if (!r.kind) out.push(required(`${p}.kind`, 'kind is required'));
  else for (const m of isPathSegmentName(String(r.kind))) out.push(invalid(`${p}.kind`, r.kind, m));
  if (!r.name) out.push(required(`${p}.name`, 'name is required'));
  else for (const m of isPathSegmentName(String(r.name))) out.push(invalid(`${p}.name`, r.name, m));
  return out;
}

function backendCauses(b: J, p: string): FieldCause[] {
  const hasResource = isSet(b.resource), hasService = isSet(b.service);
  if (hasResource && hasService) return [invalid(p, '', 'cannot set both resource and service backends')];
  if (hasResource) return typedRefCauses(obj(b.resource), `${p}.resource`);
  if (!hasService) return [invalid(p, '', 'resource or service backend is required')];
  const out: FieldCause[] = [];
  const svc = obj(b.service);
  if (!svc.name) out.push(required(`${p}.service.name`));
  else for (const m of serviceNameErrors(String(svc.name))) out.push(invalid(`${p}.service.name`, svc.name, m));
  const port = obj(svc.port);
  const hasName = !!port.name, hasNumber = !!port.number;
  if (hasName && hasNumber) out.push(invalid(p, '', 'cannot set both port name & port number'));
  else if (hasName) for (const m of portNameErrors(String(port.name))) out.push(invalid(`${p}.service.port.name`, port.name, m));
  else if (hasNumber) for (const m of portNumErrors(port.number)) out.push(invalid(`${p}.service.port.number`, port.number, m));
  else out.push(required(p, 'port name or number is required'));
  return out;
}

/** A Service's name: a DNS-1035 label. */
function serviceNameErrors(v: string): string[] {
  const errs = isDNS1123Label(v).filter((m) => m.startsWith('must be no more'));
  if (!/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(v)) {
    errs.push(regexError("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character", '[a-z]([-a-z0-9]*[a-z0-9])?', 'my-name', 'abc-123'));
  }
  return errs;
}

const BAD_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const BAD_SUFFIXES = ['/..', '/.'];
const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];

function ingressPathCauses(path: J, p: string): FieldCause[] {
  if (!isSet(path.pathType)) return [required(`${p}.pathType`, 'pathType must be specified')];
  const out: FieldCause[] = [];
  const text = typeof path.path === 'string' ? path.path : '';
  if (path.pathType === 'Exact' || path.pathType === 'Prefix') {
    if (!text.startsWith('/')) out.push(invalid(`${p}.path`, text, 'must be an absolute path'));
    if (text) {
      for (const s of BAD_SEQUENCES) if (text.includes(s)) out.push(invalid(`${p}.path`, text, `must not contain '${s}'`));
      for (const s of BAD_SUFFIXES) if (text.endsWith(s)) out.push(invalid(`${p}.path`, text, `cannot end with '${s}'`));
    }
  } else if (path.pathType === 'ImplementationSpecific') {
    if (text && !text.startsWith('/')) out.push(invalid(`${p}.path`, text, 'must be an absolute path'));
  } else out.push(notSupported(`${p}.pathType`, path.pathType, PATH_TYPES));
  out.push(...backendCauses(obj(path.backend), `${p}.backend`));
  return out;
}

function ingressSpecCauses(spec: J): FieldCause[] {
  const out: FieldCause[] = [];
  const rules = list(spec.rules);
  if (rules.length === 0 && !isSet(spec.defaultBackend)) out.push(invalid('spec', spec.rules ?? null, 'either `defaultBackend` or `rules` must be specified', '[]networking.IngressRule(nil)'));
  if (isSet(spec.defaultBackend)) out.push(...backendCauses(obj(spec.defaultBackend), 'spec.defaultBackend'));
  rules.forEach((rule, i) => {
    const p = `spec.rules[${i}]`;
    if (rule.host) {
      const host = String(rule.host);
      if (isIP(host)) out.push(invalid(`${p}.host`, host, 'must be a DNS name, not an IP address'));
      for (const m of hostErrors(host)) out.push(invalid(`${p}.host`, host, m));
    }
    if (isSet(rule.http)) {
      const paths = list(obj(rule.http).paths);
      if (!paths.length) out.push(required(`${p}.http.paths`));
      paths.forEach((path, j) => out.push(...ingressPathCauses(path, `${p}.http.paths[${j}]`)));
    }
  });
  list(spec.tls).forEach((tls, i) => {
    (Array.isArray(tls.hosts) ? tls.hosts : []).forEach((h: unknown, j: number) => {
      for (const m of hostErrors(String(h))) out.push(invalid(`spec.tls[${i}].hosts[${j}]`, h, m));
    });
    if (tls.secretName) for (const m of isDNS1123Subdomain(String(tls.secretName))) out.push(invalid(`spec.tls[${i}].secretName`, tls.secretName, m));
  });
  if (isSet(spec.ingressClassName)) for (const m of isDNS1123Subdomain(String(spec.ingressClassName))) out.push(invalid('spec.ingressClassName', spec.ingressClassName, m));
  return out;
}

export const ingress: Validator = (o, old, brand) => {
  const out = ingressSpecCauses(obj(o.spec));
  // On create, the legacy class annotation must agree with the class name.
  const key = `${brand.keyDomain}/ingress.class`;
  const annotation = o.metadata?.annotations?.[key];
  const cls = obj(o.spec).ingressClassName;
  if (!old && annotation !== undefined && isSet(cls) && annotation !== cls) out.push(invalid(`annotations.${key}`, annotation, 'must match `ingressClassName` when both are specified'));
  return out;
};

// ---------------------------------------------------------------- IngressClass

const HTTP_PATH = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";

/** The reference's IsDomainPrefixedPath: "acme.io/foo". */
export function domainPrefixedPathCauses(v: string, p: string): FieldCause[] {
  if (!v) return [required(p)];
  const slash = v.indexOf('/');
  if (slash <= 0 || slash === v.length - 1) return [invalid(p, v, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const host = v.slice(0, slash), path = v.slice(slash + 1);
  const out = isDNS1123Subdomain(host).map((m) => invalid(p, host, m));
  if (!new RegExp(`^${HTTP_PATH}$`).test(path)) out.push(invalid(p, path, `Invalid path (regex used for validation is '${HTTP_PATH}')`));
  return out;
}

function ingressClassSpecCauses(spec: J): FieldCause[] {
  const out: FieldCause[] = [];
  const controller = typeof spec.controller === 'string' ? spec.controller : '';
  if (controller.length > 250) out.push(tooLong('spec.controller', 250));
  out.push(...domainPrefixedPathCauses(controller, 'spec.controller'));
  if (isSet(spec.parameters)) {
    const params = obj(spec.parameters);
    const p = 'spec.parameters';
    out.push(...typedRefCauses(params, p));
    if (!isSet(params.scope)) return [...out, required(`${p}.scope`)];
    if (params.scope !== 'Cluster' && params.scope !== 'Namespace') out.push(notSupported(`${p}.scope`, params.scope, ['Cluster', 'Namespace']));
    else if (params.scope === 'Namespace') {
      if (!isSet(params.namespace)) out.push(required(`${p}.namespace`, "`parameters.scope` is set to 'Namespace'"));
      else for (const m of isDNS1123Label(String(params.namespace))) out.push(invalid(`${p}.namespace`, params.namespace, m));
    } else if (isSet(params.namespace)) out.push(forbidden(`${p}.namespace`, "`parameters.scope` is set to 'Cluster'"));
  }
  return out;
}

export const ingressClass: Validator = (o: KObject, old: KObject | undefined) => {
  const out: FieldCause[] = [];
  const spec = obj(o.spec);
  if (old && (spec.controller ?? '') !== (obj(old.spec).controller ?? '')) out.push(invalid('spec.controller', spec.controller ?? '', FIELD_IMMUTABLE));
  return [...out, ...ingressClassSpecCauses(spec)];
};
