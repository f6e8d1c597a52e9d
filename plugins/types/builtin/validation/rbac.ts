// rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding, ClusterRoleBinding, as the
// reference validates them. Their strategies validate an update as the object twice (ValidateX and
// ValidateXUpdate, which calls ValidateX again) plus the metadata update rules: every rule of the
// object is reported twice then (its metadata's as often as the catalog row says).
import type { Brand } from '../../../../kernel/contracts/brand.js';
import type { FieldCause, KObject } from '../../../../kernel/contracts/index.js';
import { isDNS1123Subdomain, isPathSegmentName, validateLabelSelector } from '../../../../kernel/api/validation.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { canon, goStrings, invalid, notSupported, required, type Validator } from './causes.js';

const str = (v: unknown) => (typeof v === 'string' ? v : '');
const len = (v: unknown) => (Array.isArray(v) ? v.length : 0);

function ruleCauses(rule: J, namespaced: boolean, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (!len(rule.verbs)) out.push(required(`${p}.verbs`, 'verbs must contain at least one value'));
  if (len(rule.nonResourceURLs)) {
    if (namespaced) out.push(invalid(`${p}.nonResourceURLs`, rule.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs', goStrings(rule.nonResourceURLs)));
    if (len(rule.apiGroups) || len(rule.resources) || len(rule.resourceNames)) out.push(invalid(`${p}.nonResourceURLs`, rule.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs', goStrings(rule.nonResourceURLs)));
    return out;
  }
  if (!len(rule.apiGroups)) out.push(required(`${p}.apiGroups`, 'resource rules must supply at least one api group'));
  if (!len(rule.resources)) out.push(required(`${p}.resources`, 'resource rules must supply at least one resource'));
  return out;
}

function roleCauses(o: KObject, namespaced: boolean): FieldCause[] {
  const out: FieldCause[] = [];
  list(o.rules).forEach((r, i) => out.push(...ruleCauses(r, namespaced, `rules[${i}]`)));
  if (!namespaced && isObj(o.aggregationRule)) {
    const sels = list(o.aggregationRule.clusterRoleSelectors);
    if (!sels.length) out.push(required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
    sels.forEach((s, i) => {
      const p = `aggregationRule.clusterRoleSelectors[${i}]`;
      const causes = validateLabelSelector(s, p);
      out.push(...causes);
      // and the selector that cannot be built from it (the reference converts it as well)
      if (causes.length) out.push(invalid(p, s, 'invalid label selector.', '<nil>'));
    });
  }
  return out;
}

function subjectCauses(s: J, namespaced: boolean, p: string, GROUP: string): FieldCause[] {
  const out: FieldCause[] = [];
  const name = str(s.name), group = str(s.apiGroup);
  if (!name) out.push(required(`${p}.name`));
  switch (s.kind) {
    case 'ServiceAccount':
      if (name) for (const m of isDNS1123Subdomain(name)) out.push(invalid(`${p}.name`, name, m));
      if (group) out.push(notSupported(`${p}.apiGroup`, group, ['']));
      if (!namespaced && !str(s.namespace)) out.push(required(`${p}.namespace`));
      break;
    case 'User': case 'Group':
      if (group !== GROUP) out.push(notSupported(`${p}.apiGroup`, group, [GROUP]));
      break;
    default:
      out.push(notSupported(`${p}.kind`, s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
  }
  return out;
}

function bindingCauses(o: KObject, namespaced: boolean, brand: Brand): FieldCause[] {
  const GROUP = `rbac.authorization.${brand.domain}`;
  const out: FieldCause[] = [];
  const ref = isObj(o.roleRef) ? o.roleRef : {};
  if (str(ref.apiGroup) !== GROUP) out.push(notSupported('roleRef.apiGroup', str(ref.apiGroup), [GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(str(ref.kind))) out.push(notSupported('roleRef.kind', str(ref.kind), kinds));
  if (!str(ref.name)) out.push(required('roleRef.name'));
  else for (const m of isPathSegmentName(str(ref.name))) out.push(invalid('roleRef.name', ref.name, m));
  list(o.subjects).forEach((s, i) => out.push(...subjectCauses(s, namespaced, `subjects[${i}]`, GROUP)));
  return out;
}

/** On update: the object's rules once more (its metadata's repeats are the catalog's metadataChecksOnUpdate). */
function twiceOnUpdate(causes: (o: KObject, brand: Brand) => FieldCause[]): Validator {
  return (o, old, brand) => {
    const own = causes(o, brand);
    return old ? [...own, ...own] : own;
  };
}

/** A binding's roleRef cannot change (the reference prints it as its Go struct). */
function roleRefChange(o: KObject, old: KObject | undefined): FieldCause[] {
  if (!old || canon(o.roleRef ?? null) === canon(old.roleRef ?? null)) return [];
  const r = isObj(o.roleRef) ? o.roleRef : {};
  return [invalid('roleRef', o.roleRef, 'cannot change roleRef', `rbac.RoleRef{APIGroup:${JSON.stringify(str(r.apiGroup))}, Kind:${JSON.stringify(str(r.kind))}, Name:${JSON.stringify(str(r.name))}}`)];
}

const withRoleRef = (v: Validator): Validator => (o, old, brand, sub) => [...v(o, old, brand, sub), ...roleRefChange(o, old)];

export const role = twiceOnUpdate((o) => roleCauses(o, true));
export const clusterRole = twiceOnUpdate((o) => roleCauses(o, false));
export const roleBinding = withRoleRef(twiceOnUpdate((o, b) => bindingCauses(o, true, b)));
export const clusterRoleBinding = withRoleRef(twiceOnUpdate((o, b) => bindingCauses(o, false, b)));
