// Discovery documents: /api, /apis, /api/v1, /apis/{group}, /apis/{group}/{version}.
import { createHash } from 'node:crypto';
import type { RemoteGroupVersion, TypeDef } from '../contracts/index.js';
import type { TypeRegistry } from './catalog.js';

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const SUB_VERBS: Record<string, string[]> = { status: ['get', 'patch', 'update'], scale: ['get', 'patch', 'update'], finalize: ['update'] };

/** Version priority as the reference sorts it: GA > beta > alpha, higher numbers first. */
function versionRank(v: string): number[] {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return [0, 0, 0];
  return [m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1, Number(m[1]), Number(m[3] ?? 0)];
}
export function sortVersions(vs: string[]): string[] {
  return [...vs].sort((a, b) => {
    const ra = versionRank(a), rb = versionRank(b);
    for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return rb[i] - ra[i];
    return a < b ? -1 : 1;
  });
}

export function apiVersions(serverAddress: string) {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function group(types: TypeRegistry, name: string) {
  const versions = sortVersions(types.groups().get(name) ?? []);
  const gvs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: gvs, preferredVersion: gvs[0] };
}

export function apiGroupList(types: TypeRegistry) {
  const groups = [...types.groups().keys()].filter((g) => g !== '').map((g) => group(types, g));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

type GroupEntry = { name: string; versions: { groupVersion: string; version: string }[]; preferredVersion?: { groupVersion: string; version: string } };

/**
 * Group-versions other servers serve (APIServices naming a service), added to a group list: versions
 * of a group served here too are appended; other groups follow, by priority as the reference orders
 * them (groupPriorityMinimum, then versionPriority, highest first). `only` keeps one group.
 */
export function withRemoteGroups<T extends { groups: GroupEntry[] }>(list: T, remotes: RemoteGroupVersion[], only?: string): T {
  const groups = list.groups.map((g) => ({ ...g, versions: [...g.versions] }));
  const sorted = [...remotes].filter((r) => only === undefined || r.group === only)
    .sort((a, b) => b.groupPriorityMinimum - a.groupPriorityMinimum || (a.group < b.group ? -1 : a.group > b.group ? 1 : 0) || b.versionPriority - a.versionPriority || (sortVersions([a.version, b.version])[0] === a.version ? -1 : 1));
  for (const r of sorted) {
    let g = groups.find((x) => x.name === r.group);
    if (!g) groups.push((g = { name: r.group, versions: [] }));
    if (g.versions.some((v) => v.version === r.version)) continue;
    g.versions.push({ groupVersion: `${r.group}/${r.version}`, version: r.version });
    g.preferredVersion ??= g.versions[0];
  }
  return { ...list, groups };
}

export function apiGroup(types: TypeRegistry, name: string) {
  if (!types.groups().has(name) || name === '') return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...group(types, name) };
}

export function apiResourceList(types: TypeRegistry, grp: string, version: string) {
  const ts = types.all.filter((t) => t.group === grp && t.version === version);
  if (!ts.length) return undefined;
  const resources: Record<string, unknown>[] = [];
  for (const t of ts) {
    resources.push(resourceEntry(t));
    for (const sub of t.subresources ?? []) {
      const info = t.subresourceInfo?.[sub];
      resources.push({
        name: `${t.resource}/${sub}`, singularName: '', namespaced: t.namespaced,
        ...(info?.group !== undefined ? { group: info.group, version: info.version } : sub === 'scale' ? { group: 'autoscaling', version: 'v1' } : {}),
        kind: info?.kind ?? (sub === 'scale' ? 'Scale' : t.kind),
        verbs: info?.verbs ?? SUB_VERBS[sub] ?? ['get'],
      });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: grp ? `${grp}/${version}` : version, resources };
}

function resourceEntry(t: TypeDef) {
  const e: Record<string, unknown> = { name: t.resource, singularName: t.singular, namespaced: t.namespaced, kind: t.kind, verbs: t.verbs ?? (t.virtual ? ['create'] : ALL_VERBS) };
  if (t.shortNames?.length) e.shortNames = t.shortNames;
  if (t.categories?.length) e.categories = t.categories;
  // Stored types only: clients compare it to tell whether the stored form changed (a storage migration).
  if (!t.virtual && !t.computed) e.storageVersionHash = storageVersionHash(t.storageGroup ?? t.group, t.storageVersion ?? t.version, t.kind);
  return e;
}

/** The reference's hash of a storage group/version/kind: base64 of the first 8 bytes of its SHA-256. */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

// ---------------------------------------------------------------- aggregated discovery

/** The aggregated discovery versions this server speaks: v2beta1 (the reference's at 1.26–1.29) and v2 (1.30+). */
export type AggregatedVersion = 'v2' | 'v2beta1';

/**
 * Whether the Accept header asks for aggregated discovery, and which version: the first media range
 * (in the client's order) naming g=apidiscovery.k8s.io, as=APIGroupDiscoveryList and a known v in
 * JSON. Protobuf variants are passed over (a later JSON one may follow). undefined: the legacy documents.
 */
export function aggregatedAccept(accept: string | undefined): AggregatedVersion | undefined {
  if (!accept || !accept.includes('apidiscovery')) return undefined;
  for (const range of accept.split(',')) {
    const [type, ...params] = range.split(';').map((x) => x.trim());
    if (type.toLowerCase() !== 'application/json') continue;
    const p = Object.fromEntries(params.map((x) => { const i = x.indexOf('='); return [x.slice(0, i).trim(), x.slice(i + 1).trim()]; }));
    if (p.g !== 'apidiscovery.k8s.io' || p.as !== 'APIGroupDiscoveryList') continue;
    if (p.v === 'v2' || p.v === 'v2beta1') return p.v;
  }
  return undefined;
}

type LegacyResource = { name: string; singularName?: string; namespaced?: boolean; group?: string; version?: string; kind: string; verbs?: string[]; shortNames?: string[]; categories?: string[] };

/** One version of a group in the aggregated shape, from its APIResourceList (sub-resources nested under their resource). */
export function aggregatedVersion(version: string, doc: unknown, freshness: 'Current' | 'Stale' = 'Current') {
  const list = doc as { resources?: LegacyResource[] } | undefined;
  const out: Record<string, unknown>[] = [];
  const byName = new Map<string, Record<string, unknown>>();
  for (const r of list?.resources ?? []) {
    if (typeof r?.name !== 'string' || r.name.includes('/')) continue;
    const e: Record<string, unknown> = {
      resource: r.name, responseKind: { group: r.group ?? '', version: r.version ?? '', kind: r.kind }, scope: r.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: r.singularName ?? '', verbs: r.verbs ?? [],
    };
    if (r.shortNames?.length) e.shortNames = r.shortNames;
    if (r.categories?.length) e.categories = r.categories;
    byName.set(r.name, e);
    out.push(e);
  }
  for (const r of list?.resources ?? []) {
    if (typeof r?.name !== 'string' || !r.name.includes('/')) continue;
    const [parent, sub] = r.name.split('/', 2);
    const p = byName.get(parent);
    if (!p) continue;
    ((p.subresources ??= []) as unknown[]).push({ subresource: sub, responseKind: { group: r.group ?? '', version: r.version ?? '', kind: r.kind }, verbs: r.verbs ?? [] });
  }
  out.sort((a, b) => (String(a.resource) < String(b.resource) ? -1 : 1));
  return { version, resources: out, freshness };
}

/**
 * The APIGroupDiscoveryList for /api (the core group) or /apis (every other group, built-in,
 * custom and those of other servers, in the order /apis lists them). A remote group-version whose
 * resources were never fetched is left out; one not fetched lately is "Stale".
 */
export function aggregatedDiscovery(types: TypeRegistry, remotes: RemoteGroupVersion[], core: boolean, v: AggregatedVersion) {
  const items: Record<string, unknown>[] = [];
  if (core) {
    items.push({ metadata: { creationTimestamp: null }, versions: [aggregatedVersion('v1', apiResourceList(types, '', 'v1'))] });
  } else {
    for (const g of withRemoteGroups(apiGroupList(types), remotes).groups) {
      const versions: unknown[] = [];
      for (const gv of g.versions) {
        const remote = remotes.find((r) => r.group === g.name && r.version === gv.version);
        if (remote) {
          const fetched = remote.resources?.();
          if (fetched) versions.push(aggregatedVersion(gv.version, fetched, remote.fresh?.() === false ? 'Stale' : 'Current'));
          continue;
        }
        versions.push(aggregatedVersion(gv.version, apiResourceList(types, g.name, gv.version)));
      }
      if (versions.length) items.push({ metadata: { name: g.name, creationTimestamp: null }, versions });
    }
  }
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${v}`, metadata: {}, items };
}
