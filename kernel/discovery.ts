// Discovery documents: /api, /apis, /api/v1, /apis/{group}, /apis/{group}/{version}.
import type { TypeDef } from './contracts.js';
import type { TypeRegistry } from './types.js';

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
  return e;
}
