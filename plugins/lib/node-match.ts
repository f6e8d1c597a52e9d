// Whether a pod may run on a node as far as its spec says: nodeSelector, required node affinity and
// tolerations of the node's taints, by the reference's rules. The scheduler's filters and the
// daemonset controller's choice of nodes both read them.
import type { KObject } from '../../kernel/contracts/index.js';
import { isObj, list, type J } from './json.js';
import { requirementMatches } from './label-selector.js';

/** One toleration against one taint (the reference's ToleratesTaint): empty effect and empty key match any; Exists any value. */
export function tolerates(t: J, taint: J): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (t.operator === 'Exists') return true;
  return (t.operator ?? 'Equal') === 'Equal' && (t.value ?? '') === (taint.value ?? '');
}

/** One node-selector term: every expression on the labels and every field (metadata.name) must match; an empty term matches nothing. */
function termMatches(term: J, node: KObject): boolean {
  const exprs = list(term.matchExpressions);
  const fields = list(term.matchFields);
  if (!exprs.length && !fields.length) return false;
  const labels = node.metadata?.labels ?? {};
  return exprs.every((r) => requirementMatches(r, labels)) && fields.every((r) => r.key === 'metadata.name' && requirementMatches(r, { 'metadata.name': node.metadata!.name! }));
}

/** Whether the node satisfies the pod's nodeSelector and required node affinity (its terms ORed). */
export function fitsNode(podSpec: J, node: KObject): boolean {
  const labels = node.metadata?.labels ?? {};
  const sel: J = isObj(podSpec.nodeSelector) ? podSpec.nodeSelector : {};
  if (Object.entries(sel).some(([k, v]) => labels[k] !== v)) return false;
  const required = podSpec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return !isObj(required) || list(required.nodeSelectorTerms).some((t) => termMatches(t, node));
}

/** The node's taints of these effects that none of the tolerations tolerates. */
export function untoleratedTaints(node: KObject, tolerations: J[], effects: string[]): J[] {
  return list((node.spec as J | undefined)?.taints).filter((taint) => effects.includes(taint.effect) && !tolerations.some((t) => tolerates(t, taint)));
}
