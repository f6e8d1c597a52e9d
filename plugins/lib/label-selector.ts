// Label selectors as objects carry them (matchLabels, matchExpressions), read by plugins that
// select other objects (pod disruption budgets, pod eviction).
import { isObj, list, type J } from './json.js';

/** Whether a label selector (matchLabels and matchExpressions) selects these labels. */
export function selectorMatches(sel: J, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(isObj(sel.matchLabels) ? sel.matchLabels : {})) if (labels[k] !== v) return false;
  for (const r of list(sel.matchExpressions)) {
    const has = Object.prototype.hasOwnProperty.call(labels, r.key);
    const vals: unknown[] = Array.isArray(r.values) ? r.values : [];
    const hit = has && vals.includes(labels[r.key]);
    const ok = r.operator === 'In' ? hit : r.operator === 'NotIn' ? !hit : r.operator === 'Exists' ? has : r.operator === 'DoesNotExist' ? !has : false;
    if (!ok) return false;
  }
  return true;
}
