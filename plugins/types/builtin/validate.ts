// Type-specific validation for the built-in types: a modest subset of the reference's rules, with
// its field paths ("spec.containers[0].image") and error bodies ("Required value",
// "Invalid value: <v>: <detail>") so that clients see the same 422 causes. Name syntax and object
// metadata are the kernel's job; these run after defaulting.
import { validateHpa } from './autoscaling.js';
import { validateCoreEvent, validateEventsV1 } from './events.js';
import type { Brand } from '../../../kernel/contracts/brand.js';
import type { FieldCause, KObject } from '../../../kernel/contracts/index.js';
import { labelDomain } from './catalog.js';
import { at, isObj, list, type J } from '../../lib/json.js';
import { dnsSubdomainErrors, type Validator, goStrings, required, forbidden, duplicate, tooLong, invalid, notSupported, oneOf, PORT_RANGE, regexError, dnsLabelErrors, dns1035Errors, portNameErrors, configKeyErrors, validPort, base64Length, selectorCauses, canon, labelsOf } from './causes.js';
import { podSpecCauses } from './validation/pod.js';
import { WORKLOAD_VALIDATORS } from './validation/workloads.js';
import { JOB_VALIDATORS } from './validation/jobs.js';


// ---------------------------------------------------------------- pods

const PROTOCOLS = ['SCTP', 'TCP', 'UDP']; // sorted, as the reference lists them

// ---------------------------------------------------------------- services

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

function service(o: KObject): FieldCause[] {
  const out: FieldCause[] = [];
  // Services need DNS-1035 labels (a letter first). The catalog's 'label' rule lets the kernel check
  // DNS-1123 labels; this adds only what 1035 forbids beyond that, so nothing is reported twice.
  const name = o.metadata?.name;
  if (typeof name === 'string' && name && dnsLabelErrors(name).length === 0) {
    for (const m of dns1035Errors(name)) out.push(invalid('metadata.name', name, m));
  }
  const spec = isObj(o.spec) ? o.spec : {};
  oneOf(out, 'spec.type', spec.type, SERVICE_TYPES, true);
  oneOf(out, 'spec.sessionAffinity', spec.sessionAffinity, ['ClientIP', 'None'], true);
  const headless = spec.clusterIP === 'None';
  const ports = list(spec.ports);
  if (ports.length === 0 && !headless && spec.type !== 'ExternalName') out.push(required('spec.ports'));
  if (spec.type === 'ExternalName' && !spec.externalName) out.push(required('spec.externalName'));
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const pp = `spec.ports[${i}]`;
    if (typeof port.name !== 'string' || port.name === '') {
      if (ports.length > 1) out.push(required(`${pp}.name`));
    } else {
      for (const m of dnsLabelErrors(port.name)) out.push(invalid(`${pp}.name`, port.name, m));
      if (names.has(port.name)) out.push(duplicate(`${pp}.name`, port.name));
      names.add(port.name);
    }
    if (!validPort(port.port)) out.push(invalid(`${pp}.port`, port.port, PORT_RANGE));
    oneOf(out, `${pp}.protocol`, port.protocol, PROTOCOLS, true);
    const tp = port.targetPort;
    if (typeof tp === 'number' && !validPort(tp)) out.push(invalid(`${pp}.targetPort`, tp, PORT_RANGE));
    if (typeof tp === 'string') for (const m of portNameErrors(tp)) out.push(invalid(`${pp}.targetPort`, tp, m));
    if (spec.type === 'ClusterIP' && port.nodePort) out.push(forbidden(`${pp}.nodePort`, "may not be used when `type` is 'ClusterIP'"));
  });
  return out;
}

// ---------------------------------------------------------------- config maps and secrets

const MAX_SIZE = 1024 * 1024;

function keyCauses(out: FieldCause[], map: unknown, p: string): void {
  for (const k of Object.keys(labelsOf(map))) for (const m of configKeyErrors(k)) out.push(invalid(`${p}[${k}]`, k, m));
}

/** Once `immutable` is true, neither the data nor the flag may change. */
function immutableCauses(out: FieldCause[], o: KObject, old: KObject | undefined, dataKeys: string[]): void {
  if (!old || old.immutable !== true) return;
  const msg = 'field is immutable when `immutable` is set';
  if (o.immutable !== true) out.push(forbidden('immutable', msg));
  for (const k of dataKeys) if (canon(o[k] ?? {}) !== canon(old[k] ?? {})) out.push(forbidden(k, msg));
}

function configMap(o: KObject, old: KObject | undefined): FieldCause[] {
  const out: FieldCause[] = [];
  keyCauses(out, o.data, 'data');
  keyCauses(out, o.binaryData, 'binaryData');
  let size = 0;
  for (const [k, v] of Object.entries(labelsOf(o.data))) {
    size += k.length + Buffer.byteLength(String(v));
    if (isObj(o.binaryData) && k in o.binaryData) out.push(invalid(`binaryData[${k}]`, k, 'duplicate of key present in data'));
  }
  for (const [k, v] of Object.entries(labelsOf(o.binaryData))) {
    const b = base64Length(String(v));
    size += k.length + ('bytes' in b ? b.bytes : 0);
  }
  // The reference's path is the empty one, which it prints as "[]".
  if (size > MAX_SIZE) out.push(tooLong('[]', MAX_SIZE));
  immutableCauses(out, o, old, ['data', 'binaryData']);
  return out;
}

function secret(o: KObject, old: KObject | undefined, brand: Brand): FieldCause[] {
  const out: FieldCause[] = [];
  const data = labelsOf(o.data);
  keyCauses(out, data, 'data');
  let size = 0;
  for (const [k, v] of Object.entries(data)) {
    const b = base64Length(String(v));
    // Never echo secret data back in an error.
    if ('bad' in b) out.push(invalid(`data[${k}]`, v, `illegal base64 data at input byte ${b.bad}`, '"<secret contents redacted>"'));
    else size += b.bytes;
  }
  if (size > MAX_SIZE) out.push(tooLong('data', MAX_SIZE));
  // Typed secrets must carry their keys.
  const d = labelDomain(brand);
  const needs: Record<string, string[]> = {
    [`${d}/tls`]: ['tls.crt', 'tls.key'],
    [`${d}/dockercfg`]: ['.dockercfg'],
    [`${d}/dockerconfigjson`]: ['.dockerconfigjson'],
    [`${d}/ssh-auth`]: ['ssh-privatekey'],
  };
  const keys = { ...data, ...labelsOf(o.stringData) };
  for (const k of needs[o.type as string] ?? []) if (!(k in keys)) out.push(required(`data[${k}]`));
  if (o.type === `${d}/service-account-token` && !labelsOf(o.metadata?.annotations)[`${d}/service-account.name`]) {
    out.push(required(`metadata.annotations[${d}/service-account.name]`));
  }
  if (old && (old.type ?? 'Opaque') !== (o.type ?? 'Opaque')) out.push(invalid('type', o.type, 'field is immutable'));
  immutableCauses(out, o, old, ['data']);
  return out;
}

// ---------------------------------------------------------------- storage and networking

function persistentVolumeClaim(o: KObject): FieldCause[] {
  const out: FieldCause[] = [];
  const spec = isObj(o.spec) ? o.spec : {};
  if (!Array.isArray(spec.accessModes) || spec.accessModes.length === 0) out.push(required('spec.accessModes', 'at least 1 access mode is required'));
  if (at(spec, 'resources.requests.storage') === undefined) out.push(required('spec.resources[storage]'));
  return out;
}

function ingress(o: KObject): FieldCause[] {
  const out: FieldCause[] = [];
  list(at(o, 'spec.rules')).forEach((rule, i) => list(at(rule, 'http.paths')).forEach((path, j) => {
    const f = `spec.rules[${i}].http.paths[${j}].pathType`;
    if (path.pathType === undefined || path.pathType === null || path.pathType === '') out.push(required(f, 'pathType must be specified'));
    else oneOf(out, f, path.pathType, ['Exact', 'ImplementationSpecific', 'Prefix']);
  }));
  return out;
}

// ---------------------------------------------------------------- admission webhook configurations

/** AdmissionReview versions this server can send. */
const REVIEW_VERSIONS = ['v1', 'v1beta1'];
const WEBHOOK_OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const ALL_SIDE_EFFECTS = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];


function wildcardMixed(out: FieldCause[], field: string, v: unknown, what: string): void {
  if (Array.isArray(v) && v.length > 1 && v.includes('*')) out.push(invalid(field, v, `if '*' is present, must not specify other ${what}`, goStrings(v)));
}

function webhookRuleCauses(r: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const ops = Array.isArray(r.operations) ? r.operations : [];
  if (!ops.length) out.push(required(`${p}.operations`));
  wildcardMixed(out, `${p}.operations`, ops, 'operations');
  ops.forEach((op: unknown, i: number) => { if (!WEBHOOK_OPERATIONS.includes(op as string)) out.push(notSupported(`${p}.operations[${i}]`, op, WEBHOOK_OPERATIONS)); });
  const groups = Array.isArray(r.apiGroups) ? r.apiGroups : [];
  if (!groups.length) out.push(required(`${p}.apiGroups`));
  wildcardMixed(out, `${p}.apiGroups`, groups, 'API groups');
  const versions = Array.isArray(r.apiVersions) ? r.apiVersions : [];
  if (!versions.length) out.push(required(`${p}.apiVersions`));
  wildcardMixed(out, `${p}.apiVersions`, versions, 'API versions');
  versions.forEach((v: unknown, i: number) => { if (v === '' || v === null) out.push(required(`${p}.apiVersions[${i}]`)); });
  const res = Array.isArray(r.resources) ? r.resources : [];
  const rp = `${p}.resources`;
  if (!res.length) out.push(required(rp));
  const wildSub = new Set<string>(); // "x/*" seen
  const wildRes = new Set<string>(); // "*/x" seen
  let doubleWild = false, singleWild = false, plain = false;
  res.forEach((rs: unknown, i: number) => {
    if (rs === '' || typeof rs !== 'string') { out.push(required(`${rp}[${i}]`)); return; }
    if (rs === '*/*') doubleWild = true;
    if (rs === '*') singleWild = true;
    const slash = rs.indexOf('/');
    if (slash < 0) { plain = rs !== '*'; return; }
    const name = rs.slice(0, slash), sub = rs.slice(slash + 1);
    if (wildSub.has(name)) out.push(invalid(`${rp}[${i}]`, rs, `if '${name}/*' is present, must not specify ${rs}`));
    if (wildRes.has(sub)) out.push(invalid(`${rp}[${i}]`, rs, `if '*/${sub}' is present, must not specify ${rs}`));
    if (sub === '*') wildSub.add(name);
    if (name === '*') wildRes.add(sub);
  });
  if (res.length > 1 && doubleWild) out.push(invalid(rp, res, "if '*/*' is present, must not specify other resources", goStrings(res)));
  if (singleWild && plain) out.push(invalid(rp, res, "if '*' is present, must not specify other resources without subresources", goStrings(res)));
  if (r.scope !== undefined && r.scope !== null) oneOf(out, `${p}.scope`, r.scope, ['*', 'Cluster', 'Namespaced']);
  return out;
}

const URL_FORM = '; desired format: https://host[/path]';

function webhookClientCauses(cc: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const hasUrl = cc.url !== undefined && cc.url !== null;
  const hasSvc = isObj(cc.service);
  if (hasUrl === hasSvc) return [required(p, 'exactly one of url or service is required')];
  if (hasUrl) {
    const up = `${p}.url`;
    let u: URL;
    try { u = new URL(String(cc.url)); } catch (e) { return [required(up, `url must be a valid URL: ${(e as Error).message}${URL_FORM}`)]; }
    if (u.protocol !== 'https:') out.push(invalid(up, u.protocol.replace(/:$/, ''), `'https' is the only allowed URL scheme${URL_FORM}`));
    if (!u.host) out.push(invalid(up, u.host, `host must be specified${URL_FORM}`));
    if (u.username || u.password) out.push(invalid(up, u.password ? `${u.username}:${u.password}` : u.username, 'user information is not permitted in the URL'));
    if (u.hash) out.push(invalid(up, u.hash.slice(1), 'fragments are not permitted in the URL'));
    if (u.search) out.push(invalid(up, u.search.slice(1), 'query parameters are not permitted in the URL'));
    return out;
  }
  const svc = cc.service as J;
  const sp = `${p}.service`;
  if (!svc.name) out.push(required(`${sp}.name`, 'service name is required'));
  if (!svc.namespace) out.push(required(`${sp}.namespace`, 'service namespace is required'));
  if (!validPort(svc.port)) out.push(invalid(`${sp}.port`, svc.port, `port is not valid: ${PORT_RANGE}`));
  const path = svc.path;
  if (typeof path === 'string' && path !== '' && path !== '/') {
    if (path === '//') out.push(invalid(`${sp}.path`, path, 'segment[0] may not be empty'));
    else {
      if (!path.startsWith('/')) out.push(invalid(`${sp}.path`, path, "must start with a '/'"));
      let rest = path.startsWith('/') ? path.slice(1) : path;
      if (rest.endsWith('/')) rest = rest.slice(0, -1);
      rest.split('/').forEach((step, i) => {
        if (!step) out.push(invalid(`${sp}.path`, path, `segment[${i}] may not be empty`));
        else for (const f of dnsSubdomainErrors(step)) out.push(invalid(`${sp}.path`, path, `segment[${i}]: ${f}`));
      });
    }
  }
  return out;
}

/** Whether every webhook of a configuration names only review versions this server knows. */
function allReviewVersionsKnown(o: KObject | undefined): boolean {
  return list(o?.webhooks).every((w) => Array.isArray(w.admissionReviewVersions) && w.admissionReviewVersions.some((v: unknown) => REVIEW_VERSIONS.includes(v as string)));
}

/**
 * Mutating and validating webhook configurations, v1 and v1beta1 (told apart by apiVersion): v1
 * wants unique webhook names, sideEffects None or NoneOnDryRun, and admissionReviewVersions set.
 */
function webhookConfiguration(mutating: boolean): Validator {
  return (o, old) => {
    const out: FieldCause[] = [];
    const v1 = !(typeof o.apiVersion === 'string' && o.apiVersion.endsWith('/v1beta1'));
    // On update, a configuration that already named an unknown version may keep it (as the reference allows).
    const requireKnownVersion = !old || allReviewVersionsKnown(old);
    const names = new Set<string>();
    list(o.webhooks).forEach((w, i) => {
      const p = `webhooks[${i}]`;
      const name = typeof w.name === 'string' ? w.name : '';
      if (!name) out.push(required(`${p}.name`));
      else {
        const errs = dnsSubdomainErrors(name);
        if (errs.length) out.push(invalid(`${p}.name`, name, errs.join(',')));
        else if (name.split('.').length < 3) out.push(invalid(`${p}.name`, name, 'should be a domain with at least three segments separated by dots'));
      }
      list(w.rules).forEach((r, j) => out.push(...webhookRuleCauses(r, `${p}.rules[${j}]`)));
      if (w.failurePolicy !== undefined && w.failurePolicy !== null) oneOf(out, `${p}.failurePolicy`, w.failurePolicy, ['Fail', 'Ignore']);
      if (w.matchPolicy !== undefined && w.matchPolicy !== null) oneOf(out, `${p}.matchPolicy`, w.matchPolicy, ['Equivalent', 'Exact']);
      if (isObj(w.namespaceSelector)) out.push(...selectorCauses(w.namespaceSelector, `${p}.namespaceSelector`));
      if (isObj(w.objectSelector)) out.push(...selectorCauses(w.objectSelector, `${p}.objectSelector`));
      out.push(...webhookClientCauses(isObj(w.clientConfig) ? w.clientConfig : {}, `${p}.clientConfig`));
      const se = w.sideEffects;
      if (se === undefined || se === null || se === '') out.push(required(`${p}.sideEffects`, `must specify one of ${(v1 ? NO_SIDE_EFFECTS : ALL_SIDE_EFFECTS).join(', ')}`));
      else oneOf(out, `${p}.sideEffects`, se, v1 ? NO_SIDE_EFFECTS : ALL_SIDE_EFFECTS);
      const t = w.timeoutSeconds;
      if (t !== undefined && t !== null && (typeof t !== 'number' || t < 1 || t > 30)) out.push(invalid(`${p}.timeoutSeconds`, t, 'the timeout value must be between 1 and 30 seconds'));
      if (mutating && w.reinvocationPolicy !== undefined && w.reinvocationPolicy !== null) oneOf(out, `${p}.reinvocationPolicy`, w.reinvocationPolicy, ['IfNeeded', 'Never']);
      const arv = `${p}.admissionReviewVersions`;
      const versions: unknown[] = Array.isArray(w.admissionReviewVersions) ? w.admissionReviewVersions : [];
      if (!versions.length) out.push(required(arv, `must specify one of ${REVIEW_VERSIONS.join(', ')}`));
      else {
        const seen = new Set<unknown>();
        let known = false;
        versions.forEach((v, k) => {
          if (seen.has(v)) { out.push(invalid(`${arv}[${k}]`, v, 'duplicate version')); return; }
          seen.add(v);
          for (const e of dns1035Errors(String(v))) out.push(invalid(`${arv}[${k}]`, v, e));
          if (REVIEW_VERSIONS.includes(v as string)) known = true;
        });
        if (!known && requireKnownVersion) out.push(invalid(arv, versions, `must include at least one of ${REVIEW_VERSIONS.join(', ')}`, goStrings(versions)));
      }
      if (v1 && name) {
        if (names.has(name)) out.push(duplicate(`${p}.name`, name));
        names.add(name);
      }
    });
    return out;
  };
}

/** Validators by row key (see catalog.ts rowKey). */
export const VALIDATORS: Record<string, Validator> = {
  pods: (o) => podSpecCauses(o.spec, 'spec', true, o.metadata?.name),
  ...WORKLOAD_VALIDATORS,
  ...JOB_VALIDATORS,
  services: service,
  configmaps: configMap,
  secrets: secret,
  persistentvolumeclaims: persistentVolumeClaim,
  'horizontalpodautoscalers.autoscaling': validateHpa,
  events: validateCoreEvent,
  'events.events.cluster.io': validateEventsV1,
  'ingresses.networking.cluster.io': ingress,
  'mutatingwebhookconfigurations.admissionregistration.cluster.io': webhookConfiguration(true),
  'validatingwebhookconfigurations.admissionregistration.cluster.io': webhookConfiguration(false),
};
