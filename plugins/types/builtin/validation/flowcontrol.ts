// flowcontrol.apiserver.k8s.io (v1beta3, and v1 served beside it): FlowSchema and
// PriorityLevelConfiguration, as the reference's API Priority and Fairness validation checks them.
// An update is validated as a create (the reference's update validators call the create's).
import type { FieldCause, KObject } from '../../../../kernel/contracts/index.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../../../kernel/api/validation.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { duplicate, forbidden, goStrings, invalid, notSupported, required, type Validator } from './causes.js';

const str = (v: unknown) => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(str) : []);
const isSet = (v: unknown): boolean => v !== undefined && v !== null;
const obj = (v: unknown): J => (isObj(v) ? v : {});
const num = (v: unknown) => (typeof v === 'number' ? v : 0);

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'proxy', 'update', 'watch'];
const SUBJECT_KINDS = ['Group', 'ServiceAccount', 'User'];
const MAX_PRECEDENCE = 10000;
const MAX_QUEUES = 10_000_000;
const MAX_HASH_BITS = 60;
const NS_INTRO = "each member of this list must be '*' or a DNS-1123 label; ";

function wildcardList(out: FieldCause[], field: string, v: string[], what: string): boolean {
  if (v.includes('*')) {
    if (v.length > 1) out.push(invalid(field, v, `if '*' is present, must not specify other ${what}`, goStrings(v)));
    return true;
  }
  return false;
}

function verbCauses(out: FieldCause[], field: string, verbs: string[]): void {
  if (!verbs.length) out.push(required(field, 'verbs must contain at least one value'));
  else if (!wildcardList(out, field, verbs, 'verbs') && !verbs.every((v) => VERBS.includes(v))) out.push(notSupported(field, verbs, VERBS));
}

function nonResourceURLError(path: string): string | undefined {
  if (!path) return 'must not be empty';
  if (path === '/') return undefined;
  if (!path.startsWith('/')) return 'must start with slash';
  if (path.includes(' ')) return 'must not contain white-space';
  if (path.includes('//')) return 'must not contain double slash';
  const stars = path.split('*').length - 1;
  if (stars > 1 || (stars === 1 && !path.endsWith('/*'))) return 'wildcard can only do suffix matching';
  return undefined;
}

function subjectCauses(s: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  const others = (allowed: string) => {
    for (const [k, what] of [['serviceAccount', "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"], ['user', "user is forbidden when subject kind is not 'User'"], ['group', "group is forbidden when subject kind is not 'Group'"]] as const) {
      if (k !== allowed && isSet(s[k])) out.push(forbidden(`${p}.${k}`, what));
    }
  };
  switch (s.kind) {
    case 'ServiceAccount': {
      const sa = s.serviceAccount;
      if (!isSet(sa)) out.push(required(`${p}.serviceAccount`, "serviceAccount is required when subject kind is 'ServiceAccount'"));
      else {
        const name = str(obj(sa).name), ns = str(obj(sa).namespace);
        if (!name) out.push(required(`${p}.serviceAccount.name`));
        else if (name !== '*') for (const m of isDNS1123Subdomain(name)) out.push(invalid(`${p}.serviceAccount.name`, name, m));
        if (ns) for (const m of isDNS1123Label(ns)) out.push(invalid(`${p}.serviceAccount.namespace`, ns, m));
        else out.push(required(`${p}.serviceAccount.namespace`, 'must specify namespace for service account'));
      }
      others('serviceAccount');
      break;
    }
    case 'User': case 'Group': {
      const k = s.kind === 'User' ? 'user' : 'group';
      if (!isSet(s[k])) out.push(required(`${p}.${k}`, `${k} is required when subject kind is '${s.kind}'`));
      else if (!str(obj(s[k]).name)) out.push(required(`${p}.${k}.name`));
      others(k);
      break;
    }
    default:
      out.push(notSupported(`${p}.kind`, s.kind ?? '', SUBJECT_KINDS));
  }
  return out;
}

function resourceRuleCauses(r: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  verbCauses(out, `${p}.verbs`, strings(r.verbs));
  const groups = strings(r.apiGroups), resources = strings(r.resources), namespaces = strings(r.namespaces);
  if (!groups.length) out.push(required(`${p}.apiGroups`, 'resource rules must supply at least one api group'));
  else if (groups.length > 1) wildcardList(out, `${p}.apiGroups`, groups, 'api groups');
  if (!resources.length) out.push(required(`${p}.resources`, 'resource rules must supply at least one resource'));
  else if (resources.length > 1) wildcardList(out, `${p}.resources`, resources, 'resources');
  if (!namespaces.length && r.clusterScope !== true) out.push(required(`${p}.namespaces`, 'resource rules that are not cluster scoped must supply at least one namespace'));
  else if (!wildcardList(out, `${p}.namespaces`, namespaces, 'namespaces')) {
    namespaces.forEach((ns, i) => { for (const m of isDNS1123Label(ns)) out.push(invalid(`${p}.namespaces[${i}]`, ns, NS_INTRO + m)); });
  }
  return out;
}

function nonResourceRuleCauses(r: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  verbCauses(out, `${p}.verbs`, strings(r.verbs));
  const urls = strings(r.nonResourceURLs);
  if (!urls.length) out.push(required(`${p}.nonResourceURLs`, 'nonResourceURLs must contain at least one value'));
  else if (!wildcardList(out, `${p}.nonResourceURLs`, urls, 'non-resource URLs')) {
    urls.forEach((u, i) => { const e = nonResourceURLError(u); if (e) out.push(invalid(`${p}.nonResourceURLs[${i}]`, u, e)); });
  }
  return out;
}

function conditionsCauses(status: unknown): FieldCause[] {
  const out: FieldCause[] = [];
  const types = new Set<string>();
  list(obj(status).conditions).forEach((c, i) => {
    const t = str(c.type);
    if (types.has(t)) out.push(duplicate(`status.conditions[${i}].type`, t));
    types.add(t);
    if (!t) out.push(required(`status.conditions[${i}].type`, 'must not be empty'));
  });
  return out;
}

export const flowSchema: Validator = (o: KObject) => {
  const out: FieldCause[] = [];
  const spec = obj(o.spec);
  const precedence = num(spec.matchingPrecedence);
  if (precedence <= 0) out.push(invalid('spec.matchingPrecedence', precedence, 'must be a positive value'));
  if (precedence > MAX_PRECEDENCE) out.push(invalid('spec.matchingPrecedence', precedence, `must not be greater than ${MAX_PRECEDENCE}`));
  if (precedence === 1 && o.metadata?.name !== 'exempt') out.push(invalid('spec.matchingPrecedence', precedence, "only the schema named 'exempt' may have matchingPrecedence 1"));
  if (isSet(spec.distinguisherMethod) && !['ByNamespace', 'ByUser'].includes(str(obj(spec.distinguisherMethod).type))) {
    out.push(notSupported('spec.distinguisherMethod.type', obj(spec.distinguisherMethod).type ?? '', ['ByNamespace', 'ByUser']));
  }
  const pl = str(obj(spec.priorityLevelConfiguration).name);
  if (pl) for (const m of isDNS1123Subdomain(pl)) out.push(invalid('spec.priorityLevelConfiguration.name', pl, m));
  else out.push(required('spec.priorityLevelConfiguration.name', 'must reference a priority level'));
  list(spec.rules).forEach((rule, i) => {
    const p = `spec.rules[${i}]`;
    const subjects = list(rule.subjects);
    if (subjects.length) subjects.forEach((s, j) => out.push(...subjectCauses(s, `${p}.subjects[${j}]`)));
    else out.push(required(`${p}.subjects`, 'subjects must contain at least one value'));
    const rr = list(rule.resourceRules), nr = list(rule.nonResourceRules);
    if (!rr.length && !nr.length) out.push(required(p, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
    rr.forEach((r, j) => out.push(...resourceRuleCauses(r, `${p}.resourceRules[${j}]`)));
    nr.forEach((r, j) => out.push(...nonResourceRuleCauses(r, `${p}.nonResourceRules[${j}]`)));
  });
  return [...out, ...conditionsCauses(o.status)];
};

/** Bits of entropy a shuffle-sharding hand needs: ceil(log2(deck) × hand). */
const entropyBits = (deck: number, hand: number) => Math.ceil(Math.log2(deck) * hand);

function limitedCauses(l: J, p: string, zeroAllowed: boolean): FieldCause[] {
  const out: FieldCause[] = [];
  const shares = num(l.nominalConcurrencyShares);
  // v1 (a later release's) takes a zero share; v1beta3 reads a zero as unset (defaulting) and wants a positive one
  if (zeroAllowed ? shares < 0 : shares <= 0) out.push(invalid(`${p}.nominalConcurrencyShares`, shares, zeroAllowed ? 'must be a non-negative integer' : 'must be positive'));
  const lr = obj(l.limitResponse);
  const lp = `${p}.limitResponse`;
  if (lr.type === 'Reject') {
    if (isSet(lr.queuing)) out.push(forbidden(`${lp}.queuing`, 'must be nil if limited.limitResponse.type is not Limited'));
  } else if (lr.type === 'Queue') {
    if (!isSet(lr.queuing)) out.push(required(`${lp}.queuing`, 'must not be empty if limited.limitResponse.type is Limited'));
    else {
      const q = obj(lr.queuing), qp = `${lp}.queuing`;
      const limit = num(q.queueLengthLimit), queues = num(q.queues), hand = num(q.handSize);
      if (limit <= 0) out.push(invalid(`${qp}.queueLengthLimit`, limit, 'must be positive'));
      if (queues <= 0) out.push(invalid(`${qp}.queues`, queues, 'must be positive'));
      else if (queues > MAX_QUEUES) out.push(invalid(`${qp}.queues`, queues, `must not be greater than ${MAX_QUEUES}`));
      if (hand <= 0) out.push(invalid(`${qp}.handSize`, hand, 'must be positive'));
      else if (hand > queues) out.push(invalid(`${qp}.handSize`, hand, `should not be greater than queues (${queues})`));
      else if (entropyBits(queues, hand) > MAX_HASH_BITS) out.push(invalid(`${qp}.handSize`, hand, `required entropy bits of deckSize ${queues} and handSize ${hand} should not be greater than ${MAX_HASH_BITS}`));
    }
  } else out.push(notSupported(`${lp}.type`, lr.type ?? '', ['Queue', 'Reject']));
  if (isSet(l.lendablePercent) && !(num(l.lendablePercent) >= 0 && num(l.lendablePercent) <= 100)) out.push(invalid(`${p}.lendablePercent`, l.lendablePercent, 'must be between 0 and 100, inclusive'));
  if (isSet(l.borrowingLimitPercent) && num(l.borrowingLimitPercent) < 0) out.push(invalid(`${p}.borrowingLimitPercent`, l.borrowingLimitPercent, 'if specified, must be a non-negative integer'));
  return out;
}

export const priorityLevelConfiguration: Validator = (o: KObject) => {
  const out: FieldCause[] = [];
  const spec = obj(o.spec);
  if ((o.metadata?.name === 'exempt') !== (spec.type === 'Exempt')) out.push(invalid('spec.type', spec.type ?? '', "type must be 'Exempt' if and only if name is 'exempt'"));
  if (spec.type === 'Exempt') {
    if (isSet(spec.limited)) out.push(forbidden('spec.limited', 'must be nil if the type is not Limited'));
    if (isSet(spec.exempt)) {
      const e = obj(spec.exempt);
      if (isSet(e.nominalConcurrencyShares) && num(e.nominalConcurrencyShares) < 0) out.push(invalid('spec.exempt.nominalConcurrencyShares', e.nominalConcurrencyShares, 'must be a non-negative integer'));
      if (isSet(e.lendablePercent) && !(num(e.lendablePercent) >= 0 && num(e.lendablePercent) <= 100)) out.push(invalid('spec.exempt.lendablePercent', e.lendablePercent, 'must be between 0 and 100, inclusive'));
    }
  } else if (spec.type === 'Limited') {
    if (isSet(spec.exempt)) out.push(forbidden('spec.exempt', 'must be nil if the type is Limited'));
    if (!isSet(spec.limited)) out.push(required('spec.limited', 'must not be empty when type is Limited'));
    else {
      // a zero share is a value in v1, and in v1beta3 on an object a v1 writer left one in (its preserve-zero annotation)
      const zeroAllowed = (typeof o.apiVersion === 'string' && o.apiVersion.endsWith('/v1'))
        || Object.keys(o.metadata?.annotations ?? {}).some((k) => k.endsWith('/v1beta3-preserve-zero-concurrency-shares'));
      out.push(...limitedCauses(obj(spec.limited), 'spec.limited', zeroAllowed));
    }
  } else out.push(notSupported('spec.type', spec.type ?? '', ['Exempt', 'Limited']));
  return [...out, ...conditionsCauses(o.status)];
};
