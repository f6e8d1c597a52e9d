// The operations of each type's paths (list, watch, get, create, ... and the sub-resources), and
// their rendering as Swagger 2.0 and OpenAPI 3.0 path items.
import type { Brand } from '../../contracts/brand.js';
import type { TypeDef } from '../../contracts/types.js';
import type { Json } from './schema.js';

// ---------------------------------------------------------------- operations

export interface Param { name: string; in: 'path' | 'query'; type: 'string' | 'integer' | 'boolean'; required?: boolean; description?: string }
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
export interface PathItem { params: Param[]; ops: Partial<Record<Method, Op>> }

const q = (name: string, type: Param['type'], description?: string): Param => ({ name, in: 'query', type, ...(description ? { description } : {}) });
export const P = {
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

export const upper = (s: string) => (s ? s[0].toUpperCase() + s.slice(1) : s);
const camel = (s: string) => s.split(/[.\-_]/).filter(Boolean).map(upper).join('');

/** Group as written in operation ids and tags: "" → "core", "networking.k8s.io" → "networking", "rbac.authorization.k8s.io" → "rbacAuthorization". */
function groupWord(brand: Brand, group: string): string {
  if (!group) return 'core';
  const short = group.endsWith('.' + brand.domain) ? group.slice(0, -brand.domain.length - 1) : group;
  const c = camel(short);
  return c[0].toLowerCase() + c.slice(1);
}

export interface Context { brand: Brand; list: (t: TypeDef) => string; def: (t: TypeDef) => string; status: string; deleteOptions: string; watchEvent: string; patch: string; scale: string }

/** Every path of one type, keyed by path. */
export function typePaths(t: TypeDef, c: Context): Record<string, PathItem> {
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

export function paramV2(p: Param): Json {
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

export function pathV2(item: PathItem, ext: string): Json {
  const out: Json = {};
  for (const m of ['delete', 'get', 'patch', 'post', 'put'] as Method[]) if (item.ops[m]) out[m] = opV2(item.ops[m]!, ext);
  out.parameters = item.params.map(paramV2Use);
  return out;
}
export function pathV3(item: PathItem, ext: string): Json {
  const out: Json = {};
  for (const m of ['delete', 'get', 'patch', 'post', 'put'] as Method[]) if (item.ops[m]) out[m] = opV3(item.ops[m]!, ext);
  out.parameters = item.params.map(paramV3);
  return out;
}

/** Definition names an operation set refers to. */
export function opRefs(items: PathItem[]): Set<string> {
  const out = new Set<string>();
  for (const it of items) {
    for (const o of Object.values(it.ops)) {
      if (o!.body) out.add(o!.body.def);
      for (const r of o!.responses) if (r[2]) out.add(r[2]);
    }
  }
  return out;
}
