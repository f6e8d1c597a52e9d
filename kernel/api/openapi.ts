// Published OpenAPI documents, built from the served TypeDefs alone (no type-specific code):
//   /openapi/v2            one Swagger 2.0 document for every group
//   /openapi/v3            discovery: one entry per group-version with a content-hash URL
//   /openapi/v3/<gv>       one OpenAPI 3.0 document per group-version ("api/v1", "apis/apps/v1")
// Definitions are named in the brand's style ("io.k8s.api.core.v1.Pod" or "io.cluster.api.core.v1.Pod")
// and carry the merge markers as x-<ext>-* extensions. Documents are built on first request and
// reused; every response has a strong ETag (the SHA-512 of its body).
import { createHash } from 'node:crypto';
import YAML from 'yaml';
import type { Brand } from '../contracts/brand.js';
import type { Schema, TypeDef } from '../contracts/index.js';

type Json = Record<string, any>;
type ObjectSchema = Extract<Schema, { type: 'object' }>;

// ---------------------------------------------------------------- definition names

/** Machinery packages by the first segment of a neutral name; everything else lives under "api". */
const MACHINERY: Record<string, string> = {
  meta: 'apimachinery.pkg.apis.meta',
  resource: 'apimachinery.pkg.api.resource',
  intstr: 'apimachinery.pkg.util.intstr',
  runtime: 'apimachinery.pkg.runtime',
};

/** The brand's root of definition names: "k8s.io" → "io.k8s", "cluster.io" → "io.cluster". */
export function definitionRoot(brand: Brand): string {
  return brand.domain.split('.').reverse().join('.');
}

/**
 * A neutral definition name in the brand's style: "core.v1.Pod" → "io.k8s.api.core.v1.Pod";
 * "meta.v1.ObjectMeta" → "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta".
 */
export function definitionName(brand: Brand, neutral: string): string {
  const dot = neutral.indexOf('.');
  const head = dot < 0 ? neutral : neutral.slice(0, dot);
  const pkg = MACHINERY[head];
  return pkg ? `${definitionRoot(brand)}.${pkg}${neutral.slice(head.length)}` : `${definitionRoot(brand)}.api.${neutral}`;
}

// ---------------------------------------------------------------- the kernel's own API objects

const str: Schema = { type: 'string' };
const int32: Schema = { type: 'integer', format: 'int32' };
const int64: Schema = { type: 'integer', format: 'int64' };
const bool: Schema = { type: 'boolean' };
const obj = (fields: Record<string, Schema>, more: Partial<ObjectSchema> = {}): Schema => ({ type: 'object', fields, ...more });
const TYPE_FIELDS = { apiVersion: str, kind: str };

/**
 * Definitions the kernel itself serves (lists, Status, DeleteOptions, watch events, patches and the
 * scale sub-resource), by neutral name. A type provider's definition of the same name wins.
 */
function kernelDefinitions(brand: Brand): Record<string, Schema> {
  const ref = (neutral: string): Schema => ({ type: 'ref', ref: definitionName(brand, neutral) });
  const neutral: Record<string, Schema> = {
    'meta.v1.ListMeta': obj({ continue: str, remainingItemCount: int64, resourceVersion: str, selfLink: str }),
    'meta.v1.Status': obj({ ...TYPE_FIELDS, code: int32, details: ref('meta.v1.StatusDetails'), message: str, metadata: ref('meta.v1.ListMeta'), reason: str, status: str }),
    'meta.v1.StatusDetails': obj({ causes: { type: 'array', items: ref('meta.v1.StatusCause'), listType: 'atomic' }, group: str, kind: str, name: str, retryAfterSeconds: int32, uid: str }),
    'meta.v1.StatusCause': obj({ field: str, message: str, reason: str }),
    'meta.v1.DeleteOptions': obj({
      ...TYPE_FIELDS, dryRun: { type: 'array', items: str, listType: 'atomic' }, gracePeriodSeconds: int64, orphanDependents: bool,
      preconditions: ref('meta.v1.Preconditions'), propagationPolicy: str,
    }),
    'meta.v1.Preconditions': obj({ resourceVersion: str, uid: str }),
    'meta.v1.WatchEvent': obj({ object: ref('runtime.RawExtension'), type: str }, { required: ['type', 'object'] }),
    'meta.v1.Patch': { type: 'object', preserveUnknown: true },
    'runtime.RawExtension': { type: 'object', preserveUnknown: true },
    'autoscaling.v1.Scale': obj({ ...TYPE_FIELDS, metadata: ref('meta.v1.ObjectMeta'), spec: ref('autoscaling.v1.ScaleSpec'), status: ref('autoscaling.v1.ScaleStatus') }),
    'autoscaling.v1.ScaleSpec': obj({ replicas: int32 }),
    'autoscaling.v1.ScaleStatus': obj({ replicas: int32, selector: str }, { required: ['replicas'] }),
  };
  return Object.fromEntries(Object.entries(neutral).map(([k, v]) => [definitionName(brand, k), v]));
}

// ---------------------------------------------------------------- schema conversion

type Flavor = 2 | 3;

/** One Schema as an OpenAPI schema object (v2 or v3), with the brand's x-<ext>-* markers. */
function toOpenAPI(s: Schema, flavor: Flavor, ext: string): Json {
  const refTo = (name: string) => (flavor === 2 ? `#/definitions/${name}` : `#/components/schemas/${name}`);
  const x = (k: string) => `x-${ext}-${k}`;
  let out: Json;
  switch (s.type) {
    case 'ref':
      out = { $ref: refTo(s.ref) };
      // A sibling of $ref is ignored by v3 readers; wrap to keep the description.
      if (s.description) return flavor === 3 ? { allOf: [out], description: s.description } : { ...out, description: s.description };
      return out;
    case 'object': {
      out = { type: 'object' };
      if (s.fields) {
        out.properties = {};
        for (const [k, v] of Object.entries(s.fields)) out.properties[k] = toOpenAPI(v, flavor, ext);
      }
      if (s.additional) out.additionalProperties = toOpenAPI(s.additional, flavor, ext);
      if (s.required?.length) out.required = [...s.required];
      if (s.mapType) out[x('map-type')] = s.mapType;
      if (s.patchStrategy) out[x('patch-strategy')] = s.patchStrategy;
      // A bare object already means "any keys"; say it only where the keys are otherwise described.
      if (s.preserveUnknown && (s.fields || s.additional)) out[x('preserve-unknown-fields')] = true;
      break;
    }
    case 'array':
      out = { type: 'array', items: toOpenAPI(s.items, flavor, ext) };
      if (s.listType) out[x('list-type')] = s.listType;
      if (s.mapKeys?.length) out[x('list-map-keys')] = [...s.mapKeys];
      if (s.patchStrategy) out[x('patch-strategy')] = s.patchStrategy;
      if (s.patchMergeKey) out[x('patch-merge-key')] = s.patchMergeKey;
      break;
    case 'int-or-string':
      out = flavor === 2 ? { type: 'string', format: 'int-or-string' } : { format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] };
      break;
    case 'any':
      out = { [x('preserve-unknown-fields')]: true };
      break;
    default:
      // A quantity is a string or a number on the wire; v2 can only say "string".
      if (s.type === 'string' && s.format === 'quantity') out = flavor === 2 ? { type: 'string' } : { oneOf: [{ type: 'string' }, { type: 'number' }] };
      else {
        out = { type: s.type };
        if (s.format) out.format = s.format;
        if (s.enum?.length) out.enum = [...s.enum];
      }
  }
  if (s.description) out.description = s.description;
  return out;
}

/** Names of the definitions a schema refers to directly. */
function refsOf(s: Schema | undefined, into: Set<string>): void {
  if (!s) return;
  if (s.type === 'ref') into.add(s.ref);
  else if (s.type === 'object') {
    for (const f of Object.values(s.fields ?? {})) refsOf(f, into);
    refsOf(s.additional, into);
  } else if (s.type === 'array') refsOf(s.items, into);
}

// ---------------------------------------------------------------- operations

interface Param { name: string; in: 'path' | 'query'; type: 'string' | 'integer' | 'boolean'; required?: boolean; description?: string }
type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';
interface Op {
  id: string;
  action: string;
  gvk: { group: string; version: string; kind: string };
  tag: string;
  params: Param[];
  body?: { def: string; required: boolean; consumes: string[] };
  /** [code, description, definition name (none for 401)] */
  responses: [string, string, string | undefined][];
  produces: string[];
}
interface PathItem { params: Param[]; ops: Partial<Record<Method, Op>> }

const q = (name: string, type: Param['type'], description?: string): Param => ({ name, in: 'query', type, ...(description ? { description } : {}) });
const P = {
  pretty: q('pretty', 'string', "If 'true', the output is indented."),
  name: { name: 'name', in: 'path', type: 'string', required: true, description: 'Name of the object.' } as Param,
  namespace: { name: 'namespace', in: 'path', type: 'string', required: true, description: 'Namespace of the objects.' } as Param,
  allowWatchBookmarks: q('allowWatchBookmarks', 'boolean', 'Ask for BOOKMARK events on a watch.'),
  continue: q('continue', 'string', 'Token of the next page of a paginated list.'),
  fieldSelector: q('fieldSelector', 'string', 'Select objects by field values.'),
  labelSelector: q('labelSelector', 'string', 'Select objects by labels.'),
  limit: q('limit', 'integer', 'Largest number of items in one page.'),
  resourceVersion: q('resourceVersion', 'string', 'Revision the read starts from.'),
  resourceVersionMatch: q('resourceVersionMatch', 'string', 'How resourceVersion is matched: Exact or NotOlderThan.'),
  sendInitialEvents: q('sendInitialEvents', 'boolean', 'Start a watch with the current state as ADDED events.'),
  timeoutSeconds: q('timeoutSeconds', 'integer', 'Time limit of a list or watch.'),
  watch: q('watch', 'boolean', 'Watch changes instead of listing.'),
  dryRun: q('dryRun', 'string', 'All: run every stage of the request but persist nothing.'),
  fieldManager: q('fieldManager', 'string', 'Name of the actor making the change, for managed fields.'),
  fieldValidation: q('fieldValidation', 'string', 'Handling of unknown and duplicate fields: Ignore, Warn or Strict.'),
  force: q('force', 'boolean', 'Apply requests take over fields owned by other managers.'),
  gracePeriodSeconds: q('gracePeriodSeconds', 'integer', 'Seconds before the object is deleted.'),
  orphanDependents: q('orphanDependents', 'boolean', 'Deprecated: use propagationPolicy.'),
  propagationPolicy: q('propagationPolicy', 'string', 'Garbage collection of dependents: Orphan, Background or Foreground.'),
};
const LIST_PARAMS = [P.allowWatchBookmarks, P.continue, P.fieldSelector, P.labelSelector, P.limit, P.resourceVersion, P.resourceVersionMatch, P.sendInitialEvents, P.timeoutSeconds, P.watch];
const WRITE_PARAMS = [P.dryRun, P.fieldManager, P.fieldValidation];
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];
/** The patch types a type accepts, as the registry does: strategic merge only with a schema that allows it (clients pick their patch type from this). */
const patchTypes = (t: TypeDef) => (t.schema && t.strategicMerge !== false ? PATCH_TYPES : PATCH_TYPES.filter((x) => x !== 'application/strategic-merge-patch+json'));
const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
/** Verbs of a sub-resource (the same table discovery serves). */
const SUB_VERBS: Record<string, string[]> = { status: ['get', 'patch', 'update'], scale: ['get', 'patch', 'update'], finalize: ['update'] };

const upper = (s: string) => (s ? s[0].toUpperCase() + s.slice(1) : s);
const camel = (s: string) => s.split(/[.\-_]/).filter(Boolean).map(upper).join('');

/** Group as written in operation ids and tags: "" → "core", "networking.k8s.io" → "networking", "rbac.authorization.k8s.io" → "rbacAuthorization". */
function groupWord(brand: Brand, group: string): string {
  if (!group) return 'core';
  const short = group.endsWith('.' + brand.domain) ? group.slice(0, -brand.domain.length - 1) : group;
  const c = camel(short);
  return c[0].toLowerCase() + c.slice(1);
}

interface Context { brand: Brand; list: (t: TypeDef) => string; def: (t: TypeDef) => string; status: string; deleteOptions: string; watchEvent: string; patch: string; scale: string }

/** Every path of one type, keyed by path. */
function typePaths(t: TypeDef, c: Context): Record<string, PathItem> {
  const brand = c.brand;
  const prefix = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
  const gw = groupWord(brand, t.group);
  const idBase = upper(gw) + upper(t.version);
  const tag = `${gw}_${t.version}`;
  const gvk = { group: t.group, version: t.version, kind: t.kind };
  const verbs = new Set(t.verbs ?? ALL_VERBS);
  const ns = t.namespaced ? 'Namespaced' : '';
  const def = c.def(t);
  const objTypes = ['application/json', 'application/yaml', brand.protobufType];
  const streamTypes = [...objTypes, 'application/json;stream=watch', `${brand.protobufType};stream=watch`];
  const op = (verb: string, action: string, suffix: string, more: Partial<Op>): Op => ({
    id: `${verb}${idBase}${suffix}`, action, gvk, tag, params: [], produces: objTypes, responses: [], ...more,
  });
  const ok = (d: string): [string, string, string][] => [['200', 'OK', d]];
  const created = (d: string): [string, string, string][] => [['200', 'OK', d], ['201', 'Created', d]];

  const paths: Record<string, PathItem> = {};
  const coll = t.namespaced ? `${prefix}/namespaces/{namespace}/${t.resource}` : `${prefix}/${t.resource}`;
  const item = `${coll}/{name}`;
  const scope = t.namespaced ? [P.namespace] : [];

  const collOps: PathItem['ops'] = {};
  if (verbs.has('list')) collOps.get = op('list', 'list', ns + t.kind, { params: LIST_PARAMS, responses: ok(c.list(t)), produces: streamTypes });
  if (verbs.has('create')) {
    collOps.post = op('create', 'post', ns + t.kind, {
      params: WRITE_PARAMS, body: { def, required: true, consumes: ['*/*'] }, responses: [...created(def), ['202', 'Accepted', def]],
    });
  }
  if (verbs.has('deletecollection')) {
    collOps.delete = op('delete', 'deletecollection', `Collection${ns}${t.kind}`, {
      params: [P.continue, P.dryRun, P.fieldSelector, P.gracePeriodSeconds, P.labelSelector, P.limit, P.orphanDependents, P.propagationPolicy,
        P.resourceVersion, P.resourceVersionMatch, P.sendInitialEvents, P.timeoutSeconds],
      body: { def: c.deleteOptions, required: false, consumes: ['*/*'] }, responses: ok(c.status),
    });
  }
  if (Object.keys(collOps).length) paths[coll] = { params: [...scope, P.pretty], ops: collOps };

  const itemOps: PathItem['ops'] = {};
  if (verbs.has('get')) itemOps.get = op('read', 'get', ns + t.kind, { responses: ok(def) });
  if (verbs.has('update')) itemOps.put = op('replace', 'put', ns + t.kind, { params: WRITE_PARAMS, body: { def, required: true, consumes: ['*/*'] }, responses: created(def) });
  if (verbs.has('patch')) {
    itemOps.patch = op('patch', 'patch', ns + t.kind, {
      params: [...WRITE_PARAMS, P.force], body: { def: c.patch, required: true, consumes: patchTypes(t) }, responses: created(def),
    });
  }
  if (verbs.has('delete')) {
    itemOps.delete = op('delete', 'delete', ns + t.kind, {
      params: [P.dryRun, P.gracePeriodSeconds, P.orphanDependents, P.propagationPolicy],
      body: { def: c.deleteOptions, required: false, consumes: ['*/*'] }, responses: [['200', 'OK', def], ['202', 'Accepted', def]],
    });
  }
  if (Object.keys(itemOps).length) paths[item] = { params: [P.name, ...scope, P.pretty], ops: itemOps };

  // Listing across namespaces, and the watch paths (the ?watch=true forms are the list operations).
  if (t.namespaced && verbs.has('list')) {
    paths[`${prefix}/${t.resource}`] = {
      params: [...LIST_PARAMS, P.pretty],
      ops: { get: op('list', 'list', `${t.kind}ForAllNamespaces`, { responses: ok(c.list(t)), produces: streamTypes }) },
    };
  }
  if (verbs.has('watch')) {
    const watchOp = (action: string, suffix: string) => op('watch', action, suffix, { responses: ok(c.watchEvent), produces: streamTypes });
    const wcoll = t.namespaced ? `${prefix}/watch/namespaces/{namespace}/${t.resource}` : `${prefix}/watch/${t.resource}`;
    paths[wcoll] = { params: [...LIST_PARAMS.filter((p) => p !== P.watch), ...scope, P.pretty, P.watch], ops: { get: watchOp('watchlist', `${ns}${t.kind}List`) } };
    paths[`${wcoll}/{name}`] = { params: [...LIST_PARAMS.filter((p) => p !== P.watch), P.name, ...scope, P.pretty, P.watch], ops: { get: watchOp('watch', ns + t.kind) } };
    if (t.namespaced) paths[`${prefix}/watch/${t.resource}`] = { params: [...LIST_PARAMS, P.pretty], ops: { get: watchOp('watchlist', `${t.kind}ListForAllNamespaces`) } };
  }

  for (const sub of t.subresources ?? []) {
    const subVerbs = new Set(SUB_VERBS[sub] ?? ['get']);
    const isScale = sub === 'scale';
    const subDef = isScale ? c.scale : def;
    const subGvk = isScale ? { group: 'autoscaling', version: 'v1', kind: 'Scale' } : gvk;
    const suffix = ns + t.kind + upper(sub);
    const ops: PathItem['ops'] = {};
    if (subVerbs.has('get')) ops.get = op('read', 'get', suffix, { gvk: subGvk, responses: ok(subDef) });
    if (subVerbs.has('update')) ops.put = op('replace', 'put', suffix, { gvk: subGvk, params: WRITE_PARAMS, body: { def: subDef, required: true, consumes: ['*/*'] }, responses: created(subDef) });
    if (subVerbs.has('patch')) {
      ops.patch = op('patch', 'patch', suffix, { gvk: subGvk, params: [...WRITE_PARAMS, P.force], body: { def: c.patch, required: true, consumes: patchTypes(t) }, responses: created(subDef) });
    }
    paths[`${item}/${sub}`] = { params: [P.name, ...scope, P.pretty], ops };
  }
  return paths;
}

function paramV2(p: Param): Json {
  return { ...(p.description ? { description: p.description } : {}), in: p.in, name: p.name, ...(p.required ? { required: true } : {}), type: p.type, uniqueItems: true };
}
/**
 * v2 operations refer to the shared `parameters` section, except fieldValidation, which stays inline
 * because clients looking for it (kubectl's query-parameter check) do not follow references.
 */
function paramV2Use(p: Param): Json {
  return p.name === 'fieldValidation' ? paramV2(p) : { $ref: `#/parameters/${p.name}` };
}
function paramV3(p: Param): Json {
  return { ...(p.description ? { description: p.description } : {}), in: p.in, name: p.name, ...(p.required ? { required: true } : {}), schema: { type: p.type, uniqueItems: true } };
}

function opV2(o: Op, ext: string): Json {
  const params: Json[] = [];
  if (o.body) params.push({ in: 'body', name: 'body', ...(o.body.required ? { required: true } : {}), schema: { $ref: `#/definitions/${o.body.def}` } });
  params.push(...o.params.map(paramV2Use));
  const responses: Json = {};
  for (const [code, description, d] of o.responses) responses[code] = d ? { description, schema: { $ref: `#/definitions/${d}` } } : { description };
  responses['401'] = { description: 'Unauthorized' };
  return {
    consumes: o.body?.consumes ?? ['*/*'], operationId: o.id, ...(params.length ? { parameters: params } : {}), produces: o.produces, responses,
    schemes: ['https'], tags: [o.tag], [`x-${ext}-action`]: o.action, [`x-${ext}-group-version-kind`]: o.gvk,
  };
}

function opV3(o: Op, ext: string): Json {
  const out: Json = { operationId: o.id };
  if (o.params.length) out.parameters = o.params.map(paramV3);
  if (o.body) {
    const content: Json = {};
    for (const ct of o.body.consumes) content[ct] = { schema: { $ref: `#/components/schemas/${o.body.def}` } };
    out.requestBody = { content, ...(o.body.required ? { required: true } : {}) };
  }
  const responses: Json = {};
  for (const [code, description, d] of o.responses) {
    const content: Json = {};
    if (d) for (const ct of o.produces) content[ct] = { schema: { $ref: `#/components/schemas/${d}` } };
    responses[code] = { description, content };
  }
  responses['401'] = { description: 'Unauthorized' };
  Object.assign(out, { responses, tags: [o.tag], [`x-${ext}-action`]: o.action, [`x-${ext}-group-version-kind`]: o.gvk });
  return out;
}

function pathV2(item: PathItem, ext: string): Json {
  const out: Json = {};
  for (const m of ['delete', 'get', 'patch', 'post', 'put'] as Method[]) if (item.ops[m]) out[m] = opV2(item.ops[m]!, ext);
  out.parameters = item.params.map(paramV2Use);
  return out;
}
function pathV3(item: PathItem, ext: string): Json {
  const out: Json = {};
  for (const m of ['delete', 'get', 'patch', 'post', 'put'] as Method[]) if (item.ops[m]) out[m] = opV3(item.ops[m]!, ext);
  out.parameters = item.params.map(paramV3);
  return out;
}

/** Definition names an operation set refers to. */
function opRefs(items: PathItem[]): Set<string> {
  const out = new Set<string>();
  for (const it of items) {
    for (const o of Object.values(it.ops)) {
      if (o!.body) out.add(o!.body.def);
      for (const r of o!.responses) if (r[2]) out.add(r[2]);
    }
  }
  return out;
}

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
interface Catalog {
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
}

const SECURITY = { BearerToken: { description: 'Bearer token authentication', in: 'header', name: 'authorization', type: 'apiKey' } };
const listNameOf = (c: Catalog, t: TypeDef) => c.kindDef.get(t)! + 'List';

/** A type publishes its own definitions (a custom resource); the others are the server's built-in API. */
const builtIn = (t: TypeDef) => !t.openapi;

function catalog(types: TypeDef[], brand: Brand, version: { gitVersion: string }): Catalog {
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
  return { types, defs, kindDef, published, gvks, gvs, ctx, ext: brand.ext, info: { title: upper(brand.name), version: version.gitVersion } };
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

/** One definition as published: the type's own (custom resources) or rendered from its schema, with its group-version-kinds. */
function renderDef(c: Catalog, n: string, flavor: Flavor): Json {
  const own = c.published.get(n);
  const d = own ? { ...(flavor === 2 ? own[2] : own[3]) } : toOpenAPI(c.defs[n], flavor, c.ext);
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
function v3Document(c: Catalog, gv: string): Json {
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
class V2Document {
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

// ---------------------------------------------------------------- v2 as protobuf

/**
 * The protobuf form of the v2 document (the message openapi.v2.Document of the gnostic models).
 * Clients ask for it with an "@" in the name, which is not a valid media type character, so the
 * response names it with a "." (both spellings are accepted in requests).
 */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const OPENAPI_V2_PROTOBUF_ASKED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

/** A minimal protobuf writer: length-delimited and varint fields, nested messages built bottom-up. */
class PB {
  private parts: Uint8Array[] = [];
  private size = 0;

  private push(b: Uint8Array) {
    this.parts.push(b);
    this.size += b.length;
  }
  private varint(n: number) {
    const bytes: number[] = [];
    while (n > 0x7f) {
      bytes.push((n & 0x7f) | 0x80);
      n = Math.floor(n / 128);
    }
    bytes.push(n);
    this.push(Uint8Array.from(bytes));
  }
  private key(field: number, wire: number) {
    this.varint(field * 8 + wire);
  }
  bytes(field: number, b: Uint8Array) {
    this.key(field, 2);
    this.varint(b.length);
    this.push(b);
  }
  string(field: number, v: string | undefined) {
    if (v) this.bytes(field, Buffer.from(v, 'utf8'));
  }
  strings(field: number, vs: string[] | undefined) {
    for (const v of vs ?? []) this.bytes(field, Buffer.from(v, 'utf8'));
  }
  bool(field: number, v: boolean | undefined) {
    if (!v) return;
    this.key(field, 0);
    this.varint(1);
  }
  message(field: number, build: (w: PB) => void) {
    const w = new PB();
    build(w);
    this.bytes(field, w.finish());
  }
  finish(): Uint8Array {
    return Buffer.concat(this.parts, this.size);
  }
}

/** Vendor extensions (x-*) as NamedAny entries whose value is YAML text, as the gnostic models keep them. */
function pbExtensions(w: PB, field: number, o: Json) {
  for (const [k, v] of Object.entries(o)) {
    if (k.startsWith('x-')) w.message(field, (n) => { n.string(1, k); n.message(2, (a) => a.string(2, YAML.stringify(v))); });
  }
}

function pbSchema(w: PB, s: Json) {
  w.string(1, s.$ref);
  w.string(2, s.format);
  w.string(4, s.description);
  w.strings(19, s.required);
  for (const e of s.enum ?? []) w.message(20, (a) => a.string(2, YAML.stringify(e)));
  if (s.additionalProperties !== undefined) {
    w.message(21, (a) => (typeof s.additionalProperties === 'boolean' ? a.bool(2, s.additionalProperties) : a.message(1, (x) => pbSchema(x, s.additionalProperties))));
  }
  if (s.type) w.message(22, (t) => t.strings(1, [s.type]));
  if (s.items) w.message(23, (it) => it.message(1, (x) => pbSchema(x, s.items)));
  for (const a of s.allOf ?? []) w.message(24, (x) => pbSchema(x, a));
  if (s.properties) {
    w.message(25, (ps) => {
      for (const [k, v] of Object.entries(s.properties as Json)) ps.message(1, (n) => { n.string(1, k); n.message(2, (x) => pbSchema(x, v)); });
    });
  }
  pbExtensions(w, 31, s);
}

/** A v2 parameter or a reference to one (ParametersItem). */
function pbParametersItem(w: PB, p: Json) {
  if (p.$ref) w.message(2, (r) => r.string(1, p.$ref));
  else w.message(1, (x) => pbParameter(x, p));
}

function pbParameter(w: PB, p: Json) {
  if (p.in === 'body') {
    w.message(1, (b) => {
      b.string(1, p.description); b.string(2, p.name); b.string(3, p.in); b.bool(4, p.required);
      if (p.schema) b.message(5, (x) => pbSchema(x, p.schema));
    });
    return;
  }
  // Query parameters are sub-schema 3, path parameters 4; they differ in the later field numbers.
  const query = p.in === 'query';
  w.message(2, (nb) => nb.message(query ? 3 : 4, (q) => {
    q.bool(1, p.required); q.string(2, p.in); q.string(3, p.description); q.string(4, p.name);
    q.string(query ? 6 : 5, p.type);
    q.bool(query ? 20 : 19, p.uniqueItems);
  }));
}

function pbOperation(w: PB, o: Json) {
  w.strings(1, o.tags);
  w.string(3, o.description);
  w.string(5, o.operationId);
  w.strings(6, o.produces);
  w.strings(7, o.consumes);
  for (const p of o.parameters ?? []) w.message(8, (x) => pbParametersItem(x, p));
  w.message(9, (rs) => {
    for (const [code, r] of Object.entries(o.responses as Json)) {
      rs.message(1, (n) => {
        n.string(1, code);
        n.message(2, (rv) => rv.message(1, (x) => { x.string(1, (r as Json).description); if ((r as Json).schema) x.message(2, (si) => si.message(1, (y) => pbSchema(y, (r as Json).schema))); }));
      });
    }
  });
  w.strings(10, o.schemes);
  pbExtensions(w, 13, o);
}

const PATH_OPS: [string, number][] = [['get', 2], ['put', 3], ['post', 4], ['delete', 5], ['patch', 8]];

/** One entry of the Paths message (NamedPathItem, field 2), with its key and length. */
function pbPathEntry(path: string, item: Json): Uint8Array {
  const w = new PB();
  w.message(2, (n) => {
    n.string(1, path);
    n.message(2, (pi) => {
      for (const [m, f] of PATH_OPS) if (item[m]) pi.message(f, (x) => pbOperation(x, item[m]));
      for (const p of item.parameters ?? []) pi.message(9, (x) => pbParametersItem(x, p));
    });
  });
  return w.finish();
}

/** One entry of the Definitions message (NamedSchema, field 1), with its key and length. */
function pbDefinitionEntry(name: string, schema: Json): Uint8Array {
  const w = new PB();
  w.message(1, (n) => { n.string(1, name); n.message(2, (x) => pbSchema(x, schema)); });
  return w.finish();
}

/** The Document message from its head fields and its already encoded path and definition entries. */
function pbDocument(doc: Json, paths: Uint8Array[], definitions: Uint8Array[]): Uint8Array {
  const w = new PB();
  w.string(1, doc.swagger);
  w.message(2, (i) => { i.string(1, doc.info?.title); i.string(2, doc.info?.version); });
  w.bytes(8, Buffer.concat(paths));
  w.bytes(9, Buffer.concat(definitions));
  if (doc.parameters) {
    w.message(10, (pd) => {
      for (const [name, p] of Object.entries(doc.parameters as Json)) pd.message(1, (n) => { n.string(1, name); n.message(2, (x) => pbParameter(x, p)); });
    });
  }
  for (const req of doc.security ?? []) {
    w.message(12, (sr) => {
      for (const [name, scopes] of Object.entries(req as Json)) sr.message(1, (n) => { n.string(1, name); n.message(2, (a) => a.strings(1, scopes as string[])); });
    });
  }
  if (doc.securityDefinitions) {
    w.message(13, (sd) => {
      for (const [name, d] of Object.entries(doc.securityDefinitions as Json)) {
        sd.message(1, (n) => {
          n.string(1, name);
          n.message(2, (item) => item.message(2, (k) => { k.string(1, d.type); k.string(2, d.name); k.string(3, d.in); k.string(4, d.description); }));
        });
      }
    });
  }
  return w.finish();
}

/** The v2 document (as buildOpenAPI writes it) in protobuf. */
export function encodeOpenAPIV2(doc: Json): Uint8Array {
  return pbDocument(
    doc,
    Object.entries(doc.paths as Json).map(([p, item]) => pbPathEntry(p, item)),
    Object.entries(doc.definitions as Json).map(([n, d]) => pbDefinitionEntry(n, d)),
  );
}

// ---------------------------------------------------------------- serving

export interface OpenAPIReply { code: number; headers: Record<string, string>; body: string | Uint8Array }

type Headers = Record<string, string | string[] | undefined> | ((name: string) => string | undefined);

interface Rendered { body: string | Uint8Array; hash: string; contentType: string }

const ONE_YEAR_SECONDS = 365 * 24 * 3600;
const JSON_TYPE = 'application/json';

function header(h: Headers, name: string): string | undefined {
  if (typeof h === 'function') return h(name);
  const key = Object.keys(h).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : h[key];
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * The offer an Accept header prefers (highest q, then the client's order); wildcards pick the first
 * offer. Undefined when nothing offered is acceptable. No header, or an empty one, takes the first offer.
 */
export function negotiate(accept: string | undefined, offers: string[]): string | undefined {
  if (!accept || !accept.trim()) return offers[0];
  const clauses = accept.split(',').map((part, order) => {
    const [type, ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    const qp = params.find((x) => x.startsWith('q='));
    return { type, q: qp ? Number(qp.slice(2)) : 1, order };
  }).filter((c) => c.type && c.q > 0).sort((a, b) => b.q - a.q || a.order - b.order);
  for (const c of clauses) {
    if (c.type === '*/*' || c.type === 'application/*') return offers[0];
    const hit = offers.find((o) => o.toLowerCase() === c.type);
    if (hit) return hit;
  }
  return undefined;
}

function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((t) => {
    const v = t.trim();
    return v === '*' || v === etag || v === `W/${etag}`;
  });
}

function statusBody(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

function rendered(body: string | Uint8Array, contentType: string): Rendered {
  return { body, hash: sha512Hex(body), contentType };
}

/** Identity of a TypeDef object across rebuilds (the served types keep their objects while unchanged). */
const typeIds = new WeakMap<TypeDef, number>();
let nextTypeId = 0;
const typeId = (t: TypeDef) => typeIds.get(t) ?? (typeIds.set(t, ++nextTypeId), nextTypeId);

/**
 * Answers the OpenAPI endpoints: /openapi/v2 (JSON or protobuf), /openapi/v3 and /openapi/v3/<group-version>.
 * Documents are built on the first request after a change (reset()), and only those whose inputs
 * changed: a group-version's document is kept while its types are the same objects and the built-in
 * API is unchanged, so a new custom resource costs its own document, not all of them (with a few
 * hundred definitions a whole rebuild held the event loop for seconds). The v2 document, one for
 * every group, is built only when asked for. Returns undefined for any other path.
 */
export class OpenAPIService {
  private current?: { catalog: Catalog; discovery: Rendered };
  private v3 = new Map<string, { key: string; doc: Rendered }>();
  private v2Pieces = new V2Document();
  private v2?: { pieces: ReturnType<V2Document['select']>; json?: Rendered; proto?: Rendered };

  /**
   * `remoteV3` lists the OpenAPI v3 documents of group-versions other servers serve (aggregation),
   * by discovery path ("apis/<group>/<version>"), as they published them: listed and served as they are.
   */
  constructor(private readonly types: () => TypeDef[], private readonly brand: Brand, private readonly version: { gitVersion: string }, private readonly remoteV3: () => Iterable<[string, string]> = () => []) {}

  /** Mark the documents stale (call when the served types change); they are rebuilt when next asked for. */
  reset(): void {
    this.current = undefined;
    this.v2 = undefined;
  }

  private render() {
    if (this.current) return this.current;
    const c = catalog(this.types(), this.brand, this.version);
    const builtInKey = c.types.filter(builtIn).map(typeId).join(',');
    const v3 = new Map<string, { key: string; doc: Rendered }>();
    const discovery: OpenAPIDocuments['v3Discovery'] = { paths: {} };
    for (const gv of [...c.gvs.keys()].sort()) {
      const key = `${c.gvs.get(gv)!.map(typeId).join(',')}|${builtInKey}`;
      let kept = this.v3.get(gv);
      if (kept?.key !== key) kept = { key, doc: rendered(JSON.stringify(v3Document(c, gv)), JSON_TYPE) };
      v3.set(gv, kept);
      discovery.paths[gv] = { serverRelativeURL: `/openapi/v3/${gv}?hash=${kept.doc.hash}` };
    }
    for (const [gv, text] of this.remoteV3()) {
      if (v3.has(gv)) continue;
      let kept = this.v3.get(gv);
      if (kept?.key !== text) kept = { key: text, doc: rendered(text, JSON_TYPE) };
      v3.set(gv, kept);
      discovery.paths[gv] = { serverRelativeURL: `/openapi/v3/${gv}?hash=${kept.doc.hash}` };
    }
    this.v3 = v3;
    this.current = { catalog: c, discovery: rendered(JSON.stringify(discovery), JSON_TYPE) };
    return this.current;
  }

  private renderV2(form: 'json' | 'proto'): Rendered {
    this.v2 ??= { pieces: this.v2Pieces.select(this.render().catalog) };
    if (form === 'json') return (this.v2.json ??= rendered(V2Document.json(this.v2.pieces), JSON_TYPE));
    return (this.v2.proto ??= rendered(V2Document.protobuf(this.v2.pieces), OPENAPI_V2_PROTOBUF));
  }

  /**
   * `target` is the request path, optionally with its query ("/openapi/v3/api/v1?hash=..."); `query`,
   * when given, is used instead. `headers` is a header map or a lookup by lower-case name.
   */
  serveOpenAPI(target: string, headers: Headers, query?: URLSearchParams): OpenAPIReply | undefined {
    const qi = target.indexOf('?');
    const path = (qi < 0 ? target : target.slice(0, qi)).replace(/\/+$/, '');
    const params = query ?? new URLSearchParams(qi < 0 ? '' : target.slice(qi + 1));
    if (path !== '/openapi/v2' && path !== '/openapi/v3' && !path.startsWith('/openapi/v3/')) return undefined;
    const offers = path === '/openapi/v2' ? [JSON_TYPE, OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_ASKED] : [JSON_TYPE];
    const chosen = negotiate(header(headers, 'accept'), offers);
    if (!chosen) {
      return { code: 406, headers: { 'content-type': JSON_TYPE }, body: statusBody(406, 'NotAcceptable', `only the following media types are accepted: ${offers.join(', ')}`) };
    }
    let doc: Rendered;
    let hashed = false;
    if (path === '/openapi/v2') {
      doc = this.renderV2(chosen === JSON_TYPE ? 'json' : 'proto');
    } else if (path === '/openapi/v3') doc = this.render().discovery;
    else {
      const gv = path.slice('/openapi/v3/'.length);
      this.render();
      const found = this.v3.get(gv)?.doc;
      if (!found) return { code: 404, headers: { 'content-type': JSON_TYPE }, body: statusBody(404, 'NotFound', 'the server could not find the requested resource') };
      doc = found;
      const want = params.get('hash');
      if (want) {
        // A stale hash is sent on to the current document's address.
        if (want !== doc.hash) return { code: 301, headers: { location: `/openapi/v3/${gv}?hash=${doc.hash}`, 'content-type': 'text/plain' }, body: '' };
        hashed = true;
      }
    }
    const etag = `"${doc.hash}"`;
    const h: Record<string, string> = { etag, vary: 'Accept' };
    if (hashed) {
      h['cache-control'] = `public, immutable, max-age=${ONE_YEAR_SECONDS}`;
      h.expires = new Date(Date.now() + ONE_YEAR_SECONDS * 1000).toUTCString();
    } else h['cache-control'] = 'no-cache, private';
    if (etagMatches(header(headers, 'if-none-match'), etag)) return { code: 304, headers: h, body: '' };
    return { code: 200, headers: { 'content-type': doc.contentType, ...h }, body: doc.body };
  }
}
