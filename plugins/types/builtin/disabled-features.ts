// Fields of features the reference release (v1.28) leaves off by default. Its strategies drop them
// from a create, and from an update when the stored object does not use them, after mutating
// admission and before validation (PrepareForCreate / PrepareForUpdate): they are neither checked
// nor stored, and a client that sets them sees them gone, as there.
import type { KObject, TypeStrategy } from '../../../kernel/contracts/index.js';
import { isObj } from '../../lib/json.js';
import { POD_SPEC_AT } from './pod-spec-paths.js';

/** A field's path; '*' stands for every item of a list. */
type Path = readonly string[];

const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'];

/** In a pod spec: user namespaces, dynamic resource allocation, in-place resize, sidecar containers. */
const POD_SPEC_FIELDS: Path[] = [
  ['hostUsers'], ['resourceClaims'],
  ...CONTAINER_LISTS.flatMap((l) => [[l, '*', 'resizePolicy'], [l, '*', 'resources', 'claims']]),
  ['initContainers', '*', 'restartPolicy'],
  ['volumes', '*', 'ephemeral', 'volumeClaimTemplate', 'spec', 'resources', 'claims'],
];


/** A kind's own fields of disabled features: Jobs' backoff per index and pod replacement policy. */
const OWN_FIELDS: Record<string, Path[]> = {
  'jobs.batch': [['spec', 'backoffLimitPerIndex'], ['spec', 'maxFailedIndexes'], ['spec', 'podReplacementPolicy']],
};

/** The containers of one path: [parent, key] pairs where the field lives. */
function* holders(o: unknown, path: Path): Generator<[Record<string, unknown>, string]> {
  if (!isObj(o) && !Array.isArray(o)) return;
  const [head, ...rest] = path;
  if (head === '*') {
    if (Array.isArray(o)) for (const item of o) yield* holders(item, rest);
    return;
  }
  if (!isObj(o) || Array.isArray(o)) return;
  const rec = o as Record<string, unknown>;
  if (!rest.length) { if (head! in rec) yield [rec, head!]; return; }
  yield* holders(rec[head!], rest);
}

const inUse = (o: unknown, paths: Path[]) => paths.some((p) => !holders(o, p).next().done);

/** The paths of a kind, rooted at the object. */
function pathsOf(key: string): Path[] {
  const at = POD_SPEC_AT[key];
  return [...(at ? POD_SPEC_FIELDS.map((p) => [...at, ...p]) : []), ...(OWN_FIELDS[key] ?? [])];
}

/** Drops each disabled field the old object (an update's) does not use; procMount goes back to Default. */
function drop(key: string, obj: KObject, old: KObject | undefined): void {
  for (const p of pathsOf(key)) {
    if (old && inUse(old, [p])) continue;
    for (const [parent, k] of [...holders(obj, p)]) delete parent[k];
  }
  const at = POD_SPEC_AT[key];
  if (at) {
    const procMount = CONTAINER_LISTS.map((l) => [...at, l, '*', 'securityContext', 'procMount']);
    if (!(old && inUse(old, procMount))) for (const p of procMount) for (const [parent, k] of [...holders(obj, p)]) parent[k] = 'Default';
  }
  // a Job's pod failure rules that fail one index need backoff per index: gone with it, on create
  if (key === 'jobs.batch' && !old) {
    const pfp = (obj.spec as Record<string, any> | undefined)?.podFailurePolicy;
    if (isObj(pfp) && Array.isArray(pfp.rules)) pfp.rules = pfp.rules.filter((r: unknown) => !(isObj(r) && r.action === 'FailIndex'));
  }
}

/** The kind's strategy with the drop first in its create and update hooks (undefined: nothing to drop). */
export function withDisabledFieldsDropped(key: string, st: TypeStrategy | undefined): TypeStrategy | undefined {
  if (!POD_SPEC_AT[key] && !OWN_FIELDS[key]) return st;
  return {
    ...st,
    beginCreate: (obj, ctx) => { drop(key, obj, undefined); return st?.beginCreate?.(obj, ctx); },
    beginUpdate: (obj, old, ctx) => { if (!ctx.subresource) drop(key, obj, old); return st?.beginUpdate?.(obj, old, ctx); },
  };
}
