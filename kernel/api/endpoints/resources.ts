// Requests for resources of served types: the path checked against the type, then the plugins'
// streamed, create and CONNECT sub-resources, computed types, or the registry's verbs.
import type { Brand } from '../../contracts/brand.js';
import type { ConnectHandler, ConnectRoute, KObject, RequestInfo, StreamHandler, TypeDef, UserInfo, VirtualHandler, VirtualRoute } from '../../contracts/index.js';
import { errors, type StatusError } from '../../contracts/status.js';
import type { KRequest, KResponse } from '../../http/types.js';
import type { AuditContext } from '../../ops/audit.js';
import { ResponseTap } from '../../ops/metrics.js';
import type { TypeRegistry } from '../catalog.js';
import { dropNullFields } from '../fieldvalidation.js';
import { checkWriteOptions } from '../options.js';
import { legacyWatchTarget } from '../requestinfo.js';
import { proxyStream } from '../proxy.js';
import type { Registry, Target } from '../registry/registry.js';
import { encodeAs, negotiate } from '../repr/negotiate.js';
import { isProtobufType, objectProtobuf } from '../repr/protobuf.js';
import { warningValue } from '../../ops/warnings.js';

export interface ResourceEndpointsContext {
  readonly brand: Brand;
  readonly maxRequestBodyBytes: number;
  types(): TypeRegistry;
  registry(): Registry;
  /** The 404 of a path no served type claims. */
  notFound(info: RequestInfo): StatusError;
  /** A request to a deprecated API version (apiserver_requested_deprecated_apis). */
  deprecated(type: TypeDef, subresource: string): void;
}

export class ResourceEndpoints {
  /** Create sub-resources plugins serve (PluginHost.serve), by "<group>/<version>/<resource>/<sub>". */
  readonly virtualHandlers = new Map<string, VirtualHandler>();
  /** Streamed GET sub-resources plugins serve (PluginHost.serveStream). */
  readonly streamHandlers = new Map<string, StreamHandler>();
  /** CONNECT sub-resources plugins serve (PluginHost.serveConnect). */
  readonly connectHandlers = new Map<string, { handler: ConnectHandler; route: ConnectRoute }>();

  constructor(private readonly ctx: ResourceEndpointsContext) {}

  /** A plugin serves a streamed GET sub-resource of a stored type (see PluginHost.serveStream). */
  serveStream(route: VirtualRoute, handler: StreamHandler): void {
    const sub = route.subresource;
    for (const t of this.ctx.types().versions(route.group, route.resource)) {
      t.subresources = [...(t.subresources ?? []).filter((x) => x !== sub), sub];
      t.subresourceInfo = { ...t.subresourceInfo, [sub]: { verbs: ['get'], kind: route.kind } };
      this.streamHandlers.set(`${t.group}/${t.version}/${t.resource}/${sub}`, handler);
    }
  }

  /** A plugin serves a CONNECT sub-resource of a stored type (see PluginHost.serveConnect). */
  serveConnect(route: ConnectRoute, handler: ConnectHandler): void {
    for (const t of this.ctx.types().versions(route.group, route.resource)) {
      if (!t.connectSubresources?.includes(route.subresource)) throw new Error(`cannot serve ${route.resource}/${route.subresource}: not a connect sub-resource of the type`);
      this.connectHandlers.set(`${t.group}/${t.version}/${t.resource}/${route.subresource}`, { handler, route });
    }
  }

  /** A plugin serves a create sub-resource of a stored type (see PluginHost.serve). */
  serveVirtual(route: VirtualRoute, handler: VirtualHandler): void {
    const sub = route.subresource;
    const versions = this.ctx.types().versions(route.group, route.resource);
    if (!versions.length) throw new Error(`cannot serve ${route.resource}/${sub}: no type ${route.resource} in group "${route.group}"`);
    for (const t of versions) {
      t.subresources = [...(t.subresources ?? []).filter((x) => x !== sub), sub];
      t.subresourceInfo = { ...t.subresourceInfo, [sub]: { verbs: ['create'], kind: route.kind, group: route.subresourceGroup, version: route.subresourceVersion } };
      this.virtualHandlers.set(`${t.group}/${t.version}/${t.resource}/${sub}`, handler);
    }
  }

  /**
   * A create on a plugin's sub-resource from inside the server (ObjectClient.create with a
   * sub-resource): the parent must exist, the sub-resource's admission runs, then its handler.
   */
  async createSubresource(type: TypeDef, namespace: string, name: string, sub: string, body: KObject, user: UserInfo): Promise<KObject> {
    const handler = this.virtualHandlers.get(`${type.group}/${type.version}/${type.resource}/${sub}`);
    if (!handler) throw errors.notFound(type.group, `${type.resource}/${sub}`, name);
    const r = this.ctx.registry();
    const t: Target = { type, namespace: type.namespaced ? namespace : '', name, subresource: sub };
    if (!r.current(type, t.namespace, name)) throw errors.notFound(type.group, type.resource, name);
    await r.admitSubresourceCreate(t, user, false, body);
    return (await handler({ body, user, namespace: t.namespace, name, dryRun: false })).object;
  }

  /** A resource request: synchronous up to the registry's verb (a GET from the cache answers at once). */
  serve(req: KRequest, res: KResponse, info: RequestInfo, user: UserInfo, audit?: AuditContext): void | Promise<void> {
    const m = req.method;
    const watched = info.verb === 'watch' ? legacyWatchTarget(req.path) : undefined;
    if (watched !== undefined) {
      // the legacy watch paths: a watch of the path without the prefix (one object's: by its name)
      if ((m !== 'GET' && m !== 'HEAD') || info.subresource) throw errors.pathNotFound();
      if (info.name) watchByName(req.query, info.name);
    }
    const p = watched ?? req.path;
    if (info.apiPrefix === 'api' && info.apiGroup !== '') throw errors.pathNotFound();
    const type = this.ctx.types().lookup(info.apiGroup, info.apiVersion, info.resource);
    if (!type) throw this.ctx.notFound(info);
    const inNamespacePath = /^\/apis?\/(?:[^/]+\/)?[^/]+\/namespaces\/[^/]+\/[^/]+/.test(p) && type.namespaced;
    // A list or watch carries the name of a metadata.name selector in its attributes (for the
    // authorizer); only a name in the path makes a cluster-wide path of a namespaced type wrong.
    const byName = info.verb !== 'list' && info.verb !== 'watch' && info.verb !== 'deletecollection';
    const pathName = !byName && (m === 'GET' || m === 'HEAD') ? '' : info.name;
    if (type.namespaced && pathName && !inNamespacePath) throw errors.pathNotFound();
    if (!type.namespaced && info.namespace && info.resource !== 'namespaces') throw errors.pathNotFound();
    const sub = info.subresource;
    if (sub && !(type.subresources ?? []).includes(sub)) throw errors.pathNotFound();
    const connect = sub && type.connectSubresources?.includes(sub) ? this.connectHandlers.get(`${type.group}/${type.version}/${type.resource}/${sub}`) : undefined;
    // what follows the sub-resource in the path: only a proxy sub-resource takes one
    const depth = (info.apiPrefix === 'api' ? 2 : 3) + (inNamespacePath ? 2 : 0) + 3;
    const tail = fromSlash(p, depth + 1);
    if (tail && !connect?.route.path) throw errors.pathNotFound();
    if (type.deprecated) {
      this.ctx.deprecated(type, sub);
      audit?.deprecated(type);
    }
    if (type.deprecationWarning && res instanceof ResponseTap) res.warning = warningValue(type.deprecationWarning);
    const t: Target = { type, namespace: type.namespaced ? info.namespace : '', name: pathName, subresource: sub, audit };
    const r = this.ctx.registry();
    const stream = sub ? this.streamHandlers.get(`${type.group}/${type.version}/${type.resource}/${sub}`) : undefined;
    if (stream) {
      if (m !== 'GET') throw errors.methodNotAllowed();
      if (!r.current(type, t.namespace, t.name)) throw errors.notFound(type.group, type.resource, t.name);
      return stream({ namespace: t.namespace, name: t.name, query: req.query, user }).then((s) => proxyStream(res, 'GET', s));
    }
    // plugins serve create sub-resources by name; a type's own handler (a review) serves its path
    const virtual = !sub ? type.virtual : this.virtualHandlers.get(`${type.group}/${type.version}/${type.resource}/${sub}`);
    if (virtual || type.virtual) {
      if (m !== 'POST' || !virtual || (type.virtual && t.name)) throw errors.methodNotAllowed();
      return this.runVirtual(req, res, t, user, virtual);
    }
    if (type.computed) {
      if ((m !== 'GET' && m !== 'HEAD') || sub || info.verb === 'watch') throw errors.methodNotAllowed();
      return r.computed(req, res, t);
    }
    if (sub && type.connectSubresources?.includes(sub)) {
      const stored = connect?.route.objectName ? connect.route.objectName(t.name) : t.name;
      const options = { upgradeRequired: connect?.route.upgradeRequired, proxyPath: connect?.route.path ? tail : undefined };
      return r.connect(req, res, t, user, stored, connect && (() => connect.handler({ method: m, namespace: t.namespace, name: t.name, subresource: sub, path: tail, query: req.query, user })), options);
    }
    if (sub === 'finalize' && m !== 'PUT') throw errors.methodNotAllowed();
    if (sub && m !== 'GET' && m !== 'HEAD' && m !== 'PUT' && m !== 'PATCH') throw errors.methodNotAllowed();
    switch (m) {
      case 'GET': case 'HEAD':
        if (info.verb === 'get') return r.get(req, res, t);
        if (info.verb === 'watch') return r.watch(req, res, t);
        return r.list(req, res, t);
      case 'POST':
        if (t.name) throw errors.methodNotAllowed();
        return r.create(req, res, t, user);
      case 'PUT':
        if (!t.name) throw errors.methodNotAllowed();
        return r.update(req, res, t, user);
      case 'PATCH':
        if (!t.name) throw errors.methodNotAllowed();
        return r.patch(req, res, t, user);
      case 'DELETE':
        return t.name ? r.delete(req, res, t, user) : r.deleteCollection(req, res, t, user);
      default:
        throw errors.methodNotAllowed();
    }
  }

  private async runVirtual(req: KRequest, res: KResponse, t: Target, user: UserInfo, handler: VirtualHandler) {
    const r = this.ctx.registry();
    // No Table for these kinds (the reference has no table convertor for them): such an Accept is a 406.
    const acc = negotiate(req.header('accept'), this.ctx.brand, false, !!t.type.protobuf);
    const dryRun = checkWriteOptions(req.query, this.ctx.brand, 'CreateOptions');
    if (t.subresource && !r.current(t.type, t.namespace, t.name)) throw errors.notFound(t.type.group, t.type.resource, t.name);
    const raw = await req.body(this.ctx.maxRequestBodyBytes);
    const body = await r.decode(req, t, raw);
    // A review's fields are checked as any typed write's: unknown ones are warnings (Strict: a 400), and are not kept.
    const warnings = t.subresource ? {} : r.fieldValidation(req, t, body, isProtobufType(this.ctx.brand, req.header('content-type')) ? undefined : raw);
    dropNullFields(body, undefined);
    if (t.subresource) await r.admitSubresourceCreate(t, user, dryRun, body);
    const out = await handler({ body, user, namespace: t.namespace, name: t.name, dryRun });
    const pb = acc.rep === 'protobuf' ? objectProtobuf(this.ctx.brand, t.type, out.object) : undefined;
    if (pb) return res.send(out.code ?? 201, { 'content-type': acc.contentType, ...warnings }, pb);
    res.send(out.code ?? 201, { 'content-type': acc.rep === 'protobuf' ? 'application/json' : acc.contentType, ...warnings }, await encodeAs(acc, JSON.stringify(out.object)));
  }
}

/** The path from its n-th slash on, '' when it has no more than n segments (a proxy's path after the sub-resource). */
function fromSlash(p: string, n: number): string {
  let i = -1;
  for (let k = 0; k < n; k++) if ((i = p.indexOf('/', i + 1)) < 0) return '';
  return p.slice(i);
}

/**
 * A watch of one object by name (the legacy /watch/.../<name> path) selects it by metadata.name, as
 * the reference does; a fieldSelector naming another object is a 400.
 */
function watchByName(q: URLSearchParams, name: string): void {
  const given = q.get('fieldSelector') ?? '';
  if (!given) { q.set('fieldSelector', `metadata.name=${name}`); return; }
  const m = /^metadata\.name==?([^,]*)$/.exec(given);
  if (m?.[1] !== name) throw errors.badRequest('fieldSelector metadata.name doesn\'t match requested name');
}

/** Paths of CONNECT sub-resources (any type's), as a regular expression's source: where the TLS front sends upgrades. */
export function connectPathPattern(types: TypeRegistry): string {
  const subs = new Set(types.all.flatMap((t) => t.connectSubresources ?? []));
  const names = [...subs].map((x) => x.replace(/[^A-Za-z0-9-]/g, '')).filter(Boolean);
  return `^/(?:api|apis/[^/?]+)/[^/?]+/(?:namespaces/[^/?]+/)?[^/?]+/[^/?]+/(?:${names.join('|') || '(?!)'})(?:[/?]|$)`;
}
