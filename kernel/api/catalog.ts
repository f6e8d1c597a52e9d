// The served types: what the type plugins provide, less what --runtime-config turns off.
import type { TypeDef } from '../contracts/index.js';

export const gv = (t: Pick<TypeDef, 'group' | 'version'>) => (t.group ? `${t.group}/${t.version}` : t.version);
/** The apiVersion a type's objects are stored in: its own, or another version's (and group's, for a resource stored with another group's). */
export const storedApiVersion = (t: Pick<TypeDef, 'group' | 'version' | 'storageGroup' | 'storageVersion'>) => gv({ group: t.storageGroup ?? t.group, version: t.storageVersion ?? t.version });

export class TypeRegistry {
  private byResource = new Map<string, TypeDef>();
  /** The same by group, version and resource in turn: every request looks its type up, and a joined key was a string to build each time. */
  private tree = new Map<string, Map<string, Map<string, TypeDef>>>();
  private byGroupResource = new Map<string, TypeDef>();
  readonly all: TypeDef[] = [];

  constructor(types: TypeDef[], runtimeConfig: Record<string, boolean> = {}) {
    // Every --runtime-config key must name something this server has.
    const known = new Set(['api/all', 'api/ga', 'api/beta', 'api/alpha']);
    for (const t of types) {
      known.add(gv(t));
      known.add(`${gv(t)}/${t.resource}`);
      if (!t.group) known.add(`api/${t.version}`);
    }
    for (const k of Object.keys(runtimeConfig)) {
      if (!known.has(k)) throw new Error(`--runtime-config: "${k}" is not a group/version or group/version/resource this server serves`);
    }
    for (const t of types) if (enabled(t, runtimeConfig)) this.add(t);
  }

  private index(t: TypeDef): void {
    this.byResource.set(`${t.group}/${t.version}/${t.resource}`, t);
    let versions = this.tree.get(t.group);
    if (!versions) this.tree.set(t.group, (versions = new Map()));
    let resources = versions.get(t.version);
    if (!resources) versions.set(t.version, (resources = new Map()));
    resources.set(t.resource, t);
    // The first version listed for a group-resource is the preferred one.
    if (!this.byGroupResource.has(`${t.group}/${t.resource}`)) this.byGroupResource.set(`${t.group}/${t.resource}`, t);
  }

  /** Adds a type a plugin serves after start-up (virtual types). */
  add(t: TypeDef): void {
    const k = `${t.group}/${t.version}/${t.resource}`;
    if (this.byResource.has(k)) throw new Error(`type ${k} is provided twice`);
    this.index(t);
    this.all.push(t);
  }

  /** Types served at run time, by owner (PluginHost.serveTypes). */
  private dynamic = new Map<string, TypeDef[]>();

  /**
   * Replaces the run-time types of one owner, all or nothing: a type another owner (or the static
   * catalog) serves is refused. Returns one type of each group/resource the owner served before and no longer does.
   */
  replace(owner: string, types: TypeDef[]): TypeDef[] {
    const old = new Set(this.dynamic.get(owner) ?? []);
    const seen = new Set<string>();
    for (const t of types) {
      const k = `${t.group}/${t.version}/${t.resource}`;
      const cur = this.byResource.get(k);
      if (seen.has(k) || (cur && !old.has(cur))) throw new Error(`type ${k} is already served`);
      seen.add(k);
    }
    const kept = this.all.filter((t) => !old.has(t));
    this.all.length = 0;
    this.all.push(...kept, ...types);
    if (types.length) this.dynamic.set(owner, types); else this.dynamic.delete(owner);
    this.byResource.clear();
    this.tree.clear();
    this.byGroupResource.clear();
    for (const t of this.all) this.index(t);
    const gone = new Map<string, TypeDef>();
    for (const t of old) if (!this.byGroupResource.has(`${t.group}/${t.resource}`)) gone.set(`${t.group}/${t.resource}`, t);
    return [...gone.values()];
  }

  /** Every served version of a group-resource. */
  versions(group: string, resource: string): TypeDef[] {
    return this.all.filter((t) => t.group === group && t.resource === resource);
  }

  lookup(group: string, version: string, resource: string): TypeDef | undefined {
    return this.tree.get(group)?.get(version)?.get(resource);
  }

  /** Preferred version of a group-resource (for plugins, which do not care about versions). */
  byGroup(group: string, resource: string): TypeDef | undefined {
    return this.byGroupResource.get(`${group}/${resource}`);
  }

  /** Group → versions in order, for discovery. */
  groups(): Map<string, string[]> {
    const m = new Map<string, string[]>();
    for (const t of this.all) {
      const vs = m.get(t.group) ?? [];
      if (!vs.includes(t.version)) vs.push(t.version);
      m.set(t.group, vs);
    }
    return m;
  }
}

/**
 * --runtime-config keys: "api/all", "api/beta", "api/alpha", "<group>/<version>" ("v1" for the core
 * group), or "<group>/<version>/<resource>". The most specific key wins.
 */
function enabled(t: TypeDef, rc: Record<string, boolean>): boolean {
  const g = gv(t);
  const candidates = [`${g}/${t.resource}`, g, t.group ? '' : `api/${t.version}`];
  for (const k of candidates) if (k && k in rc) return rc[k];
  const level = /alpha/.test(t.version) ? 'api/alpha' : /beta/.test(t.version) ? 'api/beta' : 'api/ga';
  if (level && level in rc) return rc[level];
  if ('api/all' in rc) return rc['api/all'];
  return !/alpha/.test(t.version); // alpha versions are off unless enabled
}
