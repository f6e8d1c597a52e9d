// An ephemeral volume's claim template may carry no metadata but labels and annotations, and the
// reference counts an empty list there (`finalizers: []`) as set: it validates the body as decoded.
// Our server shapes a body as the reference's storage would (empty omitempty lists dropped) before
// it validates, so for the types holding pod specs the shaping keeps those empty lists. Validation
// then refuses them, as the reference does: no object holding them is ever stored.
import type { TypeDef } from '../../../kernel/contracts/index.js';
import { at, isObj, list, type J } from '../../lib/json.js';
import { POD_SPEC_AT } from './pod-spec-paths.js';

/** ObjectMeta's lists a claim template may not set. */
const LISTS = ['ownerReferences', 'finalizers', 'managedFields'];

export function keepClaimTemplateLists(t: TypeDef, key: string): void {
  const specPath = POD_SPEC_AT[key]?.join('.'), shape = t.storedShape;
  if (!specPath || !shape) return;
  // (shaping the top metadata alone, or finishing a typed shape, leaves the templates as they are)
  t.storedShape = ((o: J, how?: 'typed' | 'metadata') => {
    if (how === 'metadata') return shape(o, how);
    const metas = list(at(o, `${specPath}.volumes`)).map((v) => at(v, 'ephemeral.volumeClaimTemplate.metadata')).filter(isObj);
    const kept: [J, string][] = metas.flatMap((m) => LISTS.filter((k) => Array.isArray(m[k]) && m[k].length === 0).map((k): [J, string] => [m, k]));
    const done = how === 'typed' ? shape(o, how) : shape(o);
    for (const [m, k] of kept) m[k] = [];
    return done;
  }) as TypeDef['storedShape'];
}
