// Label selectors as objects carry them (matchLabels, matchExpressions), read by plugins that
// select other objects (pod disruption budgets, pod eviction, the scheduler's node affinity).
import { isObj, list, type J } from './json.js';

/**
 * One requirement ({key, operator, values}) against labels: In, NotIn, Exists, DoesNotExist, and the
 * node-selector operators Gt and Lt (the label and the one value compared as integers).
 */
export function requirementMatches(r: J, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const vals: unknown[] = Array.isArray(r.values) ? r.values : [];
  const hit = has && vals.includes(labels[r.key]);
  switch (r.operator) {
    case 'In': return hit;
    case 'NotIn': return !hit;
    case 'Exists': return has;
    case 'DoesNotExist': return !has;
    case 'Gt': case 'Lt': {
      const int = /^-?\d+$/;
      if (!has || vals.length !== 1 || !int.test(labels[r.key]) || !int.test(String(vals[0]))) return false;
      const [a, b] = [BigInt(labels[r.key]), BigInt(String(vals[0]))];
      return r.operator === 'Gt' ? a > b : a < b;
    }
    default: return false;
  }
}

/** Whether a label selector (matchLabels and matchExpressions) selects these labels. */
export function selectorMatches(sel: J, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(isObj(sel.matchLabels) ? sel.matchLabels : {})) if (labels[k] !== v) return false;
  return list(sel.matchExpressions).every((r) => r.operator !== 'Gt' && r.operator !== 'Lt' && requirementMatches(r, labels));
}
