// The documents: the catalog every document is built from (definitions, kinds, group-versions), the
// OpenAPI 3.0 document of one group-version, and the Swagger 2.0 document of all, kept as pieces.
import { createHash } from 'node:crypto';
import type { Brand } from '../../contracts/brand.js';
import type { DefinitionDoc, Schema, TypeDef } from '../../contracts/types.js';
import { opRefs, P, paramV2, pathV2, pathV3, typePaths, upper, type Context, type PathItem } from './paths.js';
import { definitionName, definitionRoot, kernelDefinitions, obj, refsOf, toOpenAPI, TYPE_FIELDS, type Flavor, type Json } from './schema.js';
import { pbDefinitionEntry, pbDocument, pbPathEntry } from './v2proto.js';

// ---------------------------------------------------------------- documents

export interface OpenAPIDocuments {
  /** Swagger 2.0 document of every served group-version. */
  v2: Json;
  /** OpenAPI 3.0 document per group-version, keyed "api/v1", "apis/apps/v1". */
  v3: Record<string, Json>;
  /** The /openapi/v3 discovery document (hashes of the serialised v3 documents). */
  v3Discovery: { paths: Record<string, { serverRelativeURL: string }> };
}

export function sha512Hex(body: string | Uint8Array): string {
  return createHash('sha512').update(body).digest('hex').toUpperCase();
}

/** Key of a type's group-version in the v3 documents: "api/v1", "apis/apps/v1". */
export function groupVersionPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

/**
 * What every document is built from: the definitions by name, each type's kind definition, the
 * group-version-kinds each definition carries, and the types of each group-version.
 */
export interface Catalog {
  types: TypeDef[];
  defs: Record<string, Schema>;
  kindDef: Map<TypeDef, string>;
  /** Definitions a type publishes as they are (custom resources), by name and flavor. */
  published: Map<string, { 2: Json; 3: Json }>;
  gvks: Map<string, { group: string; kind: string; version: string }[]>;
  gvs: Map<string, TypeDef[]>;
  ctx: Context;
  ext: string;
  info: Json;
  /** A definition's documentation, from the types that document theirs (TypeDef.describe). */
  doc: (name: string) => DefinitionDoc | undefined;
}

const SECURITY = { BearerToken: { description: 'Bearer token authentication', in: 'header', name: 'authorization', type: 'apiKey' } };
const listNameOf = (c: Catalog, t: TypeDef) => c.kindDef.get(t)! + 'List';

/** A type publishes its own definitions (a custom resource); the others are the server's built-in API. */
export const builtIn = (t: TypeDef) => !t.openapi;

export function catalog(types: TypeDef[], brand: Brand, version: { gitVersion: string }): Catalog {
  const root = definitionRoot(brand);
  const meta = (n: string) => definitionName(brand, n);

  // All definitions: the kernel's, then each provider's map (shared maps are read once).
  const defs: Record<string, Schema> = { ...kernelDefinitions(brand) };
  const seenMaps = new Set<object>();
  for (const t of types) {
    if (!t.definitions || seenMaps.has(t.definitions)) continue;
    seenMaps.add(t.definitions);
    Object.assign(defs, t.definitions);
  }
  // A definition for each kind; types without one get an open object with the type fields.
  const kindDef = new Map<TypeDef, string>();
  for (const t of types) {
    let name = t.definitionName ?? (t.schema?.type === 'ref' ? t.schema.ref : undefined);
    if (!name) {
      const g = t.group ? t.group.split('.').reverse().join('.') : `${root}.api.core`;
      name = `${g}.${t.version}.${t.kind}`;
    }
    if (!defs[name]) {
      defs[name] = t.schema && t.schema.type !== 'ref'
        ? t.schema
        : obj({ ...TYPE_FIELDS, metadata: { type: 'ref', ref: meta('meta.v1.ObjectMeta') } }, { preserveUnknown: true });
    }
    kindDef.set(t, name);
  }
  const listName = (t: TypeDef) => kindDef.get(t)! + 'List';
  const published = new Map<string, { 2: Json; 3: Json }>();
  for (const t of types) {
    if (!t.openapi) continue;
    published.set(kindDef.get(t)!, { 2: t.openapi.v2 as Json, 3: t.openapi.v3 as Json });
    published.set(listName(t), { 2: t.openapi.listV2 as Json, 3: t.openapi.listV3 as Json });
  }
  for (const t of types) {
    const ln = listName(t);
    if (!defs[ln]) {
      defs[ln] = obj({ ...TYPE_FIELDS, items: { type: 'array', items: { type: 'ref', ref: kindDef.get(t)! } }, metadata: { type: 'ref', ref: meta('meta.v1.ListMeta') } }, { required: ['items'] });
    }
  }

  // group-version-kind extensions: each kind and its list; DeleteOptions and WatchEvent in every
  // group-version of the built-in API. As in the reference, custom resources' group-versions are not
  // listed there (its list comes from the built-in scheme): a new definition changes no other document.
  const gvks = new Map<string, { group: string; kind: string; version: string }[]>();
  const addGvk = (name: string, group: string, version: string, kind: string) => {
    const l = gvks.get(name) ?? [];
    if (!l.some((g) => g.group === group && g.version === version && g.kind === kind)) l.push({ group, kind, version });
    gvks.set(name, l);
  };
  const gvs = new Map<string, TypeDef[]>();
  for (const t of types) {
    addGvk(kindDef.get(t)!, t.group, t.version, t.kind);
    addGvk(listName(t), t.group, t.version, t.kind + 'List');
    const k = groupVersionPath(t.group, t.version);
    if (!gvs.has(k)) gvs.set(k, []);
    gvs.get(k)!.push(t);
  }
  addGvk(meta('meta.v1.Status'), '', 'v1', 'Status');
  for (const ts of gvs.values()) {
    if (!ts.some(builtIn)) continue;
    addGvk(meta('meta.v1.DeleteOptions'), ts[0].group, ts[0].version, 'DeleteOptions');
    addGvk(meta('meta.v1.WatchEvent'), ts[0].group, ts[0].version, 'WatchEvent');
  }
  if (types.some((t) => t.subresources?.includes('scale'))) addGvk(meta('autoscaling.v1.Scale'), 'autoscaling', 'v1', 'Scale');

  const ctx: Context = {
    brand, list: listName, def: (t) => kindDef.get(t)!, status: meta('meta.v1.Status'), deleteOptions: meta('meta.v1.DeleteOptions'),
    watchEvent: meta('meta.v1.WatchEvent'), patch: meta('meta.v1.Patch'), scale: meta('autoscaling.v1.Scale'),
  };
  const describers = [...new Set(types.map((t) => t.describe).filter((d) => d !== undefined))];
  const doc = (name: string) => {
    for (const d of describers) {
      const found = d(name);
      if (found) return found;
    }
    return undefined;
  };
  return { types, defs, kindDef, published, gvks, gvs, ctx, ext: brand.ext, info: { title: upper(brand.name), version: version.gitVersion }, doc };
}

/**
 * The definitions reachable from `start`. Anything referred to but defined nowhere reads as an open
 * object rather than a dangling $ref.
 */
function closure(c: Catalog, start: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const stack = [...start];
  while (stack.length) {
    const n = stack.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    if (!c.defs[n]) {
      c.defs[n] = { type: 'object', preserveUnknown: true };
      continue;
    }
    const refs = new Set<string>();
    refsOf(c.defs[n], refs);
    stack.push(...refs);
  }
  return seen;
}

/** A definition with its documentation's descriptions of itself and of its fields, and its string fields' enums, where it carries none of its own. */
function documented(s: Schema, doc: DefinitionDoc | undefined): Schema {
  if (!doc) return s;
  const out = { ...s } as Schema;
  if (doc.description && !out.description) out.description = doc.description;
  if (out.type === 'object' && out.fields) {
    out.fields = Object.fromEntries(Object.entries(out.fields).map(([k, f]) => {
      let g = doc.fields[k] && !f.description ? { ...f, description: doc.fields[k] } : f;
      const values = doc.enums?.[k];
      if (values && g.type === 'string' && !g.enum) g = { ...g, enum: values };
      return [k, g];
    }));
  }
  return out;
}

/** One definition as published: the type's own (custom resources) or rendered from its schema, with its group-version-kinds. */
function renderDef(c: Catalog, n: string, flavor: Flavor): Json {
  const own = c.published.get(n);
  const d = own ? { ...(flavor === 2 ? own[2] : own[3]) } : toOpenAPI(documented(c.defs[n], c.doc(n)), flavor, c.ext);
  const g = c.gvks.get(n);
  if (g) d[`x-${c.ext}-group-version-kind`] = g.map((x) => ({ ...x }));
  return d;
}

function renderDefs(c: Catalog, names: Iterable<string>, flavor: Flavor): Json {
  const out: Json = {};
  for (const n of [...names].sort()) out[n] = renderDef(c, n, flavor);
  return out;
}

function gvPaths(c: Catalog, gv: string): Record<string, PathItem> {
  const paths: Record<string, PathItem> = {};
  for (const t of c.gvs.get(gv)!) Object.assign(paths, typePaths(t, c.ctx));
  return paths;
}

/** The OpenAPI 3.0 document of one group-version ("api/v1", "apis/apps/v1"). */
export function v3Document(c: Catalog, gv: string): Json {
  const paths = gvPaths(c, gv);
  const ts = c.gvs.get(gv)!;
  const keys = Object.keys(paths).sort();
  const schemas = renderDefs(c, closure(c, [...opRefs(keys.map((p) => paths[p])), ...ts.map((t) => c.kindDef.get(t)!), ...ts.map((t) => listNameOf(c, t))]), 3);
  return {
    components: { schemas, securitySchemes: SECURITY }, info: c.info, openapi: '3.0.0',
    paths: Object.fromEntries(keys.map((p) => [p, pathV3(paths[p], c.ext)])),
  };
}

const V2_PARAMETERS = Object.fromEntries(Object.values(P).filter((p) => p.name !== 'fieldValidation').sort((a, b) => (a.name < b.name ? -1 : 1)).map((p) => [p.name, paramV2(p)]));
const V2_SECURITY = [{ BearerToken: [] }];

/** A piece of the v2 document, kept between builds, rendered in each form when first needed. */
interface Piece { json?: string; pb?: Uint8Array }
interface PathPiece extends Piece { path: string; item: PathItem }
interface DefPiece extends Piece { name: string; src: object; gvk: string }

/**
 * The Swagger 2.0 document of every group-version, assembled from pieces kept between builds: each
 * type's paths and each definition, as JSON text and as protobuf entries. A change renders only the
 * pieces whose inputs changed (the type objects, a definition's schema, its group-version-kinds):
 * with a few hundred custom resources the document is ~20 MB, and rendering it whole after each new
 * definition held the event loop for seconds on every kubectl apply.
 */
export class V2Document {
  private byType = new WeakMap<TypeDef, PathPiece[]>();
  private byDef = new Map<string, DefPiece>();

  /** The pieces of catalog `c`'s document, in document order. */
  select(c: Catalog): { c: Catalog; paths: PathPiece[]; defs: DefPiece[] } {
    // A later type's path wins, as in the per-group-version documents; then in path order.
    const byPath = new Map<string, PathPiece>();
    for (const gv of [...c.gvs.keys()].sort()) {
      for (const t of c.gvs.get(gv)!) {
        let ps = this.byType.get(t);
        if (!ps) this.byType.set(t, (ps = Object.entries(typePaths(t, c.ctx)).map(([path, item]) => ({ path, item }))));
        for (const p of ps) byPath.set(p.path, p);
      }
    }
    const paths = [...byPath.values()].sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
    const names = [...closure(c, [...opRefs(paths.map((p) => p.item)), ...c.kindDef.values(), ...c.types.map((t) => listNameOf(c, t))])].sort();
    const defs = names.map((name) => {
      const src = c.published.get(name)?.[2] ?? c.defs[name];
      const gvks = c.gvks.get(name);
      const gvk = gvks ? JSON.stringify(gvks) : '';
      let d = this.byDef.get(name);
      if (d?.src !== src || d.gvk !== gvk) this.byDef.set(name, (d = { name, src, gvk }));
      return d;
    });
    if (this.byDef.size > defs.length) {
      const live = new Set(names);
      for (const n of this.byDef.keys()) if (!live.has(n)) this.byDef.delete(n);
    }
    return { c, paths, defs };
  }

  static json(d: { c: Catalog; paths: PathPiece[]; defs: DefPiece[] }): string {
    const { c } = d;
    const defs = d.defs.map((x) => (x.json ??= `${JSON.stringify(x.name)}:${JSON.stringify(renderDef(c, x.name, 2))}`));
    const paths = d.paths.map((x) => (x.json ??= `${JSON.stringify(x.path)}:${JSON.stringify(pathV2(x.item, c.ext))}`));
    // the key order of JSON.stringify on the whole document: sorted
    return `{"definitions":{${defs.join(',')}},"info":${JSON.stringify(c.info)},"parameters":${JSON.stringify(V2_PARAMETERS)},`
      + `"paths":{${paths.join(',')}},"security":${JSON.stringify(V2_SECURITY)},"securityDefinitions":${JSON.stringify(SECURITY)},"swagger":"2.0"}`;
  }

  static protobuf(d: { c: Catalog; paths: PathPiece[]; defs: DefPiece[] }): Uint8Array {
    const { c } = d;
    return pbDocument(
      { info: c.info, parameters: V2_PARAMETERS, security: V2_SECURITY, securityDefinitions: SECURITY, swagger: '2.0' },
      d.paths.map((x) => (x.pb ??= pbPathEntry(x.path, pathV2(x.item, c.ext)))),
      d.defs.map((x) => (x.pb ??= pbDefinitionEntry(x.name, renderDef(c, x.name, 2)))),
    );
  }
}

/** Builds all documents from the served types. Pure: same types in, same bytes out. */
export function buildOpenAPI(types: TypeDef[], brand: Brand, version: { gitVersion: string }): OpenAPIDocuments {
  const c = catalog(types, brand, version);
  const v3: Record<string, Json> = {};
  const discovery: OpenAPIDocuments['v3Discovery'] = { paths: {} };
  for (const gv of [...c.gvs.keys()].sort()) {
    v3[gv] = v3Document(c, gv);
    discovery.paths[gv] = { serverRelativeURL: `/openapi/v3/${gv}?hash=${sha512Hex(JSON.stringify(v3[gv]))}` };
  }
  return { v2: JSON.parse(V2Document.json(new V2Document().select(c))), v3, v3Discovery: discovery };
}
