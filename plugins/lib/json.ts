/** Loosely typed JSON object: API objects are untyped data to the hooks that read them. */
export type J = Record<string, any>;

/** A JSON object (not null, not an array): the check every reader of untyped objects starts with. */
export const isObj = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The object elements of a list field; [] when absent or not a list. */
export function list(v: unknown): J[] {
  return Array.isArray(v) ? v.filter(isObj) : [];
}

/** Follow a dotted path ("status.podIP"); undefined when any step is missing. */
export function at(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const k of path.split('.')) {
    if (!isObj(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}
