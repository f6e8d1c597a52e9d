// admissionregistration.k8s.io/v1 (and v1beta1): Mutating and Validating webhook configurations, as
// the reference validates them: names, rules, client configuration, policies (a pointer field set to
// "" is a value to refuse, not unset), selectors, review versions and match conditions (compiled as
// CEL: syntax, declared variables, a boolean result).
import type { FieldCause, KObject } from '../../../../kernel/contracts/index.js';
import { validateLabelSelector, validateQualifiedName } from '../../../../kernel/api/validation.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { cel, celSyntaxError } from '../../../lib/cel-lib.js';
import { dns1035Errors, dnsSubdomainErrors, duplicate, goStrings, invalid, notSupported, PORT_RANGE, required, validPort, type Validator } from './causes.js';

const isSet = (v: unknown): boolean => v !== undefined && v !== null;
/** A pointer enum: absent is fine (defaulted), anything set, "" included, must be one of `valid`. */
function setOneOf(out: FieldCause[], field: string, v: unknown, valid: string[]): void {
  if (isSet(v) && !valid.includes(v as string)) out.push(notSupported(field, v, valid));
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
  setOneOf(out, `${p}.scope`, r.scope, ['*', 'Cluster', 'Namespaced']);
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
    const text = String(cc.url);
    // Go's url.Parse takes a reference without a scheme as a relative URL (no scheme, no host)
    if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(text) && !text.startsWith(':')) {
      return [invalid(up, '', `'https' is the only allowed URL scheme${URL_FORM}`), invalid(up, '', `host must be specified${URL_FORM}`)];
    }
    try { u = new URL(text); } catch (e) { return [required(up, `url must be a valid URL: ${(e as Error).message}${URL_FORM}`)]; }
    if (u.protocol !== 'https:') out.push(invalid(up, u.protocol.replace(/:$/, ''), `'https' is the only allowed URL scheme${URL_FORM}`));
    if (!u.host) out.push(invalid(up, u.host, `host must be specified${URL_FORM}`));
    if (u.username || u.password) out.push(invalid(up, u.password ? `${u.username}:${u.password}` : u.username, 'user information is not permitted in the URL'));
    if (u.hash) out.push(invalid(up, u.hash.slice(1), 'fragments are not permitted in the URL'));
    if (u.search) out.push(invalid(up, u.search.slice(1), 'query parameters are not permitted in the URL'));
    return out;
  }
  const svc = cc.service as J;
  const sp = `${p}.service`;
  // The reference hands name and namespace to its check in each other's place: a missing name is
  // reported as the namespace, and the other way round.
  if (!svc.namespace) out.push(required(`${sp}.name`, 'service name is required'));
  if (!svc.name) out.push(required(`${sp}.namespace`, 'service namespace is required'));
  if (!validPort(svc.port)) out.push(invalid(`${sp}.port`, svc.port, `port is not valid: ${PORT_RANGE}`));
  const path = svc.path;
  if (typeof path === 'string' && path !== '' && path !== '/') {
    if (path === '//') out.push(invalid(`${sp}.path`, path, 'segment[0] may not be empty'));
    else {
      if (!path.startsWith('/')) out.push(invalid(`${sp}.path`, path, "must start with a '/'"));
      // the reference drops the first character whatever it is
      let rest = path.slice(1);
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
export function webhookConfiguration(mutating: boolean): Validator {
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
      setOneOf(out, `${p}.failurePolicy`, w.failurePolicy, ['Fail', 'Ignore']);
      setOneOf(out, `${p}.matchPolicy`, w.matchPolicy, ['Equivalent', 'Exact']);
      if (isSet(w.namespaceSelector)) out.push(...validateLabelSelector(w.namespaceSelector, `${p}.namespaceSelector`));
      if (isSet(w.objectSelector)) out.push(...validateLabelSelector(w.objectSelector, `${p}.objectSelector`));
      out.push(...webhookClientCauses(isObj(w.clientConfig) ? w.clientConfig : {}, `${p}.clientConfig`));
      const se = w.sideEffects;
      if (!isSet(se)) out.push(required(`${p}.sideEffects`, `must specify one of ${(v1 ? NO_SIDE_EFFECTS : ALL_SIDE_EFFECTS).join(', ')}`));
      else setOneOf(out, `${p}.sideEffects`, se, v1 ? NO_SIDE_EFFECTS : ALL_SIDE_EFFECTS);
      const t = w.timeoutSeconds;
      if (t !== undefined && t !== null && (typeof t !== 'number' || t < 1 || t > 30)) out.push(invalid(`${p}.timeoutSeconds`, t, 'the timeout value must be between 1 and 30 seconds'));
      if (mutating) setOneOf(out, `${p}.reinvocationPolicy`, w.reinvocationPolicy, ['IfNeeded', 'Never']);
      if (v1) out.push(...matchConditionCauses(w.matchConditions, `${p}.matchConditions`));
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


// ---------------------------------------------------------------- match conditions

/** What a webhook's match condition may name: the reference's admission CEL variables (no params). */
const MATCH_VARIABLES = new Set(['object', 'oldObject', 'request', 'authorizer', 'namespaceObject']);

interface CelExpr { exprKind: { case: string; value: any } }

/** Identifiers an expression reads that are neither variables nor bound by a comprehension. */
function undeclared(e: CelExpr, bound: Set<string>, out: string[]): void {
  const { case: kind, value } = e.exprKind;
  switch (kind) {
    case 'identExpr': if (!MATCH_VARIABLES.has(value.name) && !bound.has(value.name)) out.push(value.name); return;
    case 'selectExpr': if (value.operand) undeclared(value.operand, bound, out); return;
    case 'callExpr':
      if (value.target) undeclared(value.target, bound, out);
      for (const a of value.args ?? []) undeclared(a, bound, out);
      return;
    case 'listExpr': for (const x of value.elements ?? []) undeclared(x, bound, out); return;
    case 'structExpr': for (const x of value.entries ?? []) { if (x.keyKind?.case === 'mapKey') undeclared(x.keyKind.value, bound, out); if (x.value) undeclared(x.value, bound, out); } return;
    case 'comprehensionExpr': {
      const inner = new Set([...bound, value.iterVar, value.accuVar]);
      if (value.iterRange) undeclared(value.iterRange, bound, out);
      for (const k of ['accuInit', 'loopCondition', 'loopStep', 'result']) if (value[k]) undeclared(value[k], inner, out);
      return;
    }
    default:
  }
}

/** Why a match condition does not compile as the reference's checker would say; undefined when it does. */
function compileError(expression: string): string | undefined {
  let parsed: { expr?: CelExpr };
  try { parsed = cel().parse(expression) as unknown as { expr?: CelExpr }; } catch (e) { return `compilation failed: ERROR: ${celSyntaxError(expression, e)}`; }
  if (!parsed.expr) return 'compilation failed';
  const names: string[] = [];
  undeclared(parsed.expr, new Set(), names);
  if (names.length) return `compilation failed: ERROR: <input>:1:1: undeclared reference to '${names[0]}' (in container '')`;
  // The checker's output type must be bool: a dyn value (a field of object) or any other type is refused.
  return outputKind(parsed.expr, new Map()) === 'other' ? 'must evaluate to bool' : undefined;
}

/** Functions and operators whose result is a bool whatever their arguments. */
const BOOL_FUNCTIONS = new Set(['_==_', '_!=_', '_<_', '_<=_', '_>_', '_>=_', '!_', '_&&_', '_||_', '@in', '@not_strictly_false',
  'startsWith', 'endsWith', 'contains', 'matches', 'has', 'isSorted', 'allowed', 'errored', 'isURL']);
/** Functions and operators whose result is never a bool. */
const OTHER_FUNCTIONS = new Set(['_+_', '_-_', '_*_', '_/_', '_%_', '-_', '_[_]', 'size', 'int', 'uint', 'double', 'string', 'bytes', 'type', 'duration', 'timestamp']);

/**
 * The expression's output type as the reference's checker sees it, as far as it matters here: bool,
 * `other` (dyn, as every field of object or oldObject is, or any other type), or unknown (accepted).
 * `accu` types the comprehension accumulators in scope by their initial value.
 */
function outputKind(e: CelExpr, accu: Map<string, 'bool' | 'other' | 'unknown'>): 'bool' | 'other' | 'unknown' {
  const { case: kind, value } = e.exprKind;
  switch (kind) {
    case 'constExpr': return value?.constantKind?.case === 'boolValue' ? 'bool' : 'other';
    case 'identExpr': return accu.get(value.name) ?? 'other';
    case 'selectExpr':
      if (value.testOnly) return 'bool'; // has()
      // request.dryRun is the one bool field of the typed variables a condition is likely to read alone
      return value.field === 'dryRun' && value.operand?.exprKind.case === 'identExpr' && value.operand.exprKind.value.name === 'request' ? 'bool' : value.operand?.exprKind.case === 'identExpr' && value.operand.exprKind.value.name === 'authorizer' ? 'unknown' : 'other';
    case 'listExpr': case 'structExpr': return 'other';
    case 'callExpr': {
      if (BOOL_FUNCTIONS.has(value.function)) return 'bool';
      if (OTHER_FUNCTIONS.has(value.function)) return 'other';
      if (value.function === '_?_:_') {
        const [a, b] = [outputKind(value.args[1], accu), outputKind(value.args[2], accu)];
        return a === 'bool' && b === 'bool' ? 'bool' : a === 'other' || b === 'other' ? 'other' : 'unknown';
      }
      return 'unknown';
    }
    case 'comprehensionExpr': {
      const inner = new Map(accu);
      inner.set(value.accuVar, value.accuInit ? outputKind(value.accuInit, accu) : 'unknown');
      return value.result ? outputKind(value.result, inner) : 'unknown';
    }
    default: return 'unknown';
  }
}

function matchConditionCauses(conditions: unknown, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const all = list(conditions);
  if (all.length > 64) out.push({ reason: 'FieldValueTooMany', field: p, message: `Too many: ${all.length}: must have at most 64 items` });
  const names = new Set<string>();
  all.forEach((c, i) => {
    const cp = `${p}[${i}]`;
    const expression = typeof c.expression === 'string' ? c.expression.trim() : '';
    if (!expression) out.push(required(`${cp}.expression`));
    else { const err = compileError(expression); if (err) out.push(invalid(`${cp}.expression`, expression, err)); }
    const name = typeof c.name === 'string' ? c.name : '';
    if (!name) out.push(required(`${cp}.name`));
    else out.push(...validateQualifiedName(name, `${cp}.name`));
    if (name) { if (names.has(name)) out.push(duplicate(`${cp}.name`, name)); else names.add(name); }
  });
  return out;
}
