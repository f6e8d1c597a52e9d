// Whether a pod may run on a node as far as its spec says: nodeSelector, required node affinity
// and tolerations of the node's taints (read by the daemonset controller to pick its nodes).
import type { KObject } from '../../kernel/contracts/index.js';
import { isObj, list, type J } from './json.js';

/** Whether one toleration tolerates one taint (empty effect: every effect; Exists: any value; empty key with Exists: every taint). */
export function tolerates(t: J, taint: J): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (!t.key) return t.operator === 'Exists';
  if (t.key !== taint.key) return false;
  return t.operator === 'Exists' || (t.value ?? '') === (taint.value ?? '');
}

/** A node selector requirement (matchExpressions on labels, matchFields on metadata.name). */
function requirementMatches(r: J, value: string | undefined): boolean {
  const vals: string[] = Array.isArray(r.values) ? r.values : [];
  switch (r.operator) {
    case 'In': return value !== undefined && vals.includes(value);
    case 'NotIn': return value === undefined || !vals.includes(value);
    case 'Exists': return value !== undefined;
    case 'DoesNotExist': return value === undefined;
    case 'Gt': return value !== undefined && /^-?\d+$/.test(value) && Number(value) > Number(vals[0]);
    case 'Lt': return value !== undefined && /^-?\d+$/.test(value) && Number(value) < Number(vals[0]);
    default: return false;
  }
}

/** Whether the node satisfies the pod's nodeSelector and required node affinity (any term, every requirement of it). */
export function fitsNode(podSpec: J, node: KObject): boolean {
  const labels = (node.metadata?.labels ?? {}) as Record<string, string>;
  for (const [k, v] of Object.entries(isObj(podSpec.nodeSelector) ? podSpec.nodeSelector : {})) if (labels[k] !== v) return false;
  const terms = list(podSpec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms);
  if (!terms.length) return true;
  return terms.some((term) => {
    const exprs = list(term.matchExpressions);
    const fields = list(term.matchFields);
    if (!exprs.length && !fields.length) return false;
    return exprs.every((r) => requirementMatches(r, labels[r.key])) && fields.every((r) => r.key === 'metadata.name' && requirementMatches(r, node.metadata?.name));
  });
}

/** The node's taints of these effects that none of the tolerations tolerates. */
export function untoleratedTaints(node: KObject, tolerations: J[], effects: string[]): J[] {
  return list((node.spec as J | undefined)?.taints).filter((taint) => effects.includes(taint.effect) && !tolerations.some((t) => tolerates(t, taint)));
}
