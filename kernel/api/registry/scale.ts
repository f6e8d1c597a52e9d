// The scale sub-resource's shape: the Scale an object shows (from the type's scale paths, or the
// built-in spec.replicas / spec.selector layout) and the change a written Scale makes to the object.
// The registry's get (read.ts) and its update and patch (write.ts, patch.ts) use these.
import type { KObject, TypeDef } from '../../contracts/index.js';
import { errors } from '../../contracts/status.js';
import { getPath, setPath } from './util.js';

/** The Scale of an object; a type without the scale sub-resource has no such path. */
export function scaleOf(type: TypeDef, obj: KObject): KObject {
  if (!type.subresources?.includes('scale')) throw errors.pathNotFound();
  let replicas: unknown, current: unknown, selector = '';
  if (type.scale) {
    replicas = getPath(obj, type.scale.specReplicasPath);
    current = getPath(obj, type.scale.statusReplicasPath);
    const sel = type.scale.labelSelectorPath ? getPath(obj, type.scale.labelSelectorPath) : undefined;
    if (typeof sel === 'string') selector = sel;
  } else {
    const spec = (obj.spec ?? {}) as Record<string, unknown>;
    const status = (obj.status ?? {}) as Record<string, unknown>;
    const sel = (spec.selector ?? {}) as { matchLabels?: Record<string, string> };
    selector = typeof sel === 'object' && sel.matchLabels ? Object.entries(sel.matchLabels).map(([k, v]) => `${k}=${v}`).join(',') : '';
    replicas = spec.replicas;
    current = status.replicas;
  }
  return {
    kind: 'Scale', apiVersion: 'autoscaling/v1',
    metadata: { name: obj.metadata?.name, namespace: obj.metadata?.namespace, uid: obj.metadata?.uid, resourceVersion: obj.metadata?.resourceVersion, creationTimestamp: obj.metadata?.creationTimestamp },
    spec: { replicas: replicas ?? 0 },
    status: { replicas: current ?? 0, ...(selector ? { selector } : {}) },
  };
}

/**
 * The object `cur` with the replicas of the Scale that `change` makes of its current Scale: replicas
 * must be a non-negative integer, and a resourceVersion in the new Scale is a precondition.
 */
export function applyScale(t: { type: TypeDef; name: string }, cur: KObject, change: (scale: KObject) => KObject): KObject {
  const scale = change(scaleOf(t.type, cur));
  const replicas = (scale.spec as { replicas?: unknown } | undefined)?.replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw errors.invalid('autoscaling', 'Scale', t.name, [{ reason: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0` }]);
  }
  const rv = scale.metadata?.resourceVersion;
  if (rv && rv !== cur.metadata?.resourceVersion) throw errors.conflict(t.type.group, t.type.resource, t.name, 'the object has been modified; please apply your changes to the latest version and try again');
  setPath(cur, t.type.scale?.specReplicasPath ?? 'spec.replicas', replicas);
  return cur;
}
