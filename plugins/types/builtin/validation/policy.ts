// policy/v1 PodDisruptionBudget, as the reference validates it (its spec only: its metadata gets the
// common path-segment check, see the catalog row): minAvailable xor maxUnavailable, each a
// non-negative int or a percentage up to 100%, the selector, the unhealthy pod eviction policy.
import type { FieldCause } from '../../../../kernel/contracts/index.js';
import { validateLabelSelector } from '../../../../kernel/api/validation.js';
import { isObj } from '../../../lib/json.js';
import { intOrPercentCauses, invalid, notOver100PercentCauses, notSupported, type Validator } from './causes.js';

const POLICIES = ['AlwaysAllow', 'IfHealthyBudget'];
const isSet = (v: unknown): boolean => v !== undefined && v !== null;

export const podDisruptionBudget: Validator = (o) => {
  const out: FieldCause[] = [];
  const spec = isObj(o.spec) ? o.spec : {};
  if (isSet(spec.minAvailable) && isSet(spec.maxUnavailable)) out.push(invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set', 'policy.PodDisruptionBudgetSpec{...}'));
  for (const k of ['minAvailable', 'maxUnavailable']) {
    if (isSet(spec[k])) out.push(...intOrPercentCauses(spec[k], `spec.${k}`), ...notOver100PercentCauses(spec[k], `spec.${k}`));
  }
  if (isSet(spec.selector)) out.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  if (isSet(spec.unhealthyPodEvictionPolicy) && !POLICIES.includes(String(spec.unhealthyPodEvictionPolicy))) out.push(notSupported('spec.unhealthyPodEvictionPolicy', spec.unhealthyPodEvictionPolicy, POLICIES));
  return out;
};
