// Routing: a group-version another server serves is relayed there; other non-resource paths go to
// their answerers in order; resource requests to the API's resource endpoints (admission and store
// happen inside the registry).
import { proxyRequest } from '../api/proxy.js';
import type { RemoteGroupVersion, RequestInfo, UserInfo } from '../contracts/index.js';
import { errors, type StatusError } from '../contracts/status.js';
import type { KRequest, KResponse } from '../http/types.js';
import type { AuditContext } from '../ops/audit.js';

/** Answers a non-resource GET or HEAD path and returns true, or returns false when the path is not its. */
export type PathAnswerer = (req: KRequest, res: KResponse, info: RequestInfo) => boolean;

/** What routing needs. */
export interface RouteContext {
  /** Group-versions other servers serve (aggregation), by "<group>/<version>". */
  readonly remotes: ReadonlyMap<string, { remote: RemoteGroupVersion }>;
  readonly maxRequestBodyBytes: number;
  /** Non-resource paths (health, OpenAPI, version, metrics, plugins' paths, discovery), asked in order. */
  readonly paths: readonly PathAnswerer[];
  /** The 404 of a path nothing answers. */
  notFound(info: RequestInfo): StatusError;
  /** A request for a resource of a served type. */
  resource(req: KRequest, res: KResponse, info: RequestInfo, user: UserInfo, audit?: AuditContext): void | Promise<void>;
}

export function route(ctx: RouteContext, req: KRequest, res: KResponse, info: RequestInfo, user: UserInfo, audit?: AuditContext, seat?: { release(): void }): void | Promise<void> {
  const p = req.path;
  const m = req.method;
  if (ctx.remotes.size && info.apiPrefix === 'apis') {
    const parts = p.split('/', 4);
    const r = parts.length >= 4 && parts[3] !== '' ? ctx.remotes.get(`${parts[2]}/${parts[3]}`) : undefined;
    if (r) return proxyRemote(ctx, req, res, r.remote, user, seat);
  }
  if (info.isResourceRequest) return ctx.resource(req, res, info, user, audit);
  if (m !== 'GET' && m !== 'HEAD') {
    if (p === '/api' || p.startsWith('/api/') || p === '/apis' || p.startsWith('/apis/') || ['/healthz', '/livez', '/readyz', '/version'].includes(p)) throw errors.methodNotAllowed();
    throw errors.pathNotFound();
  }
  for (const answer of ctx.paths) if (answer(req, res, info)) return;
  throw ctx.notFound(info);
}

/** /apis/<group>/<version>/... of a group-version another server serves: relayed as the authorized user. */
async function proxyRemote(ctx: RouteContext, req: KRequest, res: KResponse, remote: RemoteGroupVersion, user: UserInfo, seat: { release(): void } | undefined): Promise<void> {
  const target = await remote.target();
  // As the reference does, the extension server does its own flow control: the seat goes back now.
  seat?.release();
  return proxyRequest(req, res, target, user, { maxBodyBytes: ctx.maxRequestBodyBytes });
}
