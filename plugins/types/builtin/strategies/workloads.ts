// The StatefulSet strategy: fields of features 1.28 leaves off are dropped as the reference's
// strategy drops them, on create and on an update of an object that did not use them already.
import type { KObject, TypeStrategy } from '../../../../kernel/contracts/index.js';
import { at, isObj } from '../../../lib/json.js';

/** MaxUnavailableStatefulSet is off: spec.updateStrategy.rollingUpdate.maxUnavailable is not kept. */
function dropMaxUnavailable(obj: KObject, old: KObject | undefined): void {
  if (old && at(old, 'spec.updateStrategy.rollingUpdate.maxUnavailable') !== undefined) return;
  const ru = at(obj, 'spec.updateStrategy.rollingUpdate');
  if (isObj(ru)) delete ru.maxUnavailable;
}

export const statefulSetStrategy: TypeStrategy = {
  beginCreate: (obj) => dropMaxUnavailable(obj, undefined),
  beginUpdate: (obj, old) => dropMaxUnavailable(obj, old),
};
