// Request path → RequestInfo: the attributes authorizers see (Part B, Authorization).
import type { RequestInfo } from '../contracts/index.js';
import { queryBool } from './options.js';

// Sub-paths of /namespaces/{name} that are sub-resources of the namespace itself.
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** The deprecated watch prefix the reference still serves: /api/v1/watch/..., /apis/<group>/<version>/watch/... */
const WATCH_PREFIX = /^(\/api\/[^/]+|\/apis\/[^/]+\/[^/]+)\/watch(?=\/[^/])/;

/** A path under the legacy watch prefix as the same path without it (what is watched), else undefined. */
export function legacyWatchTarget(path: string): string | undefined {
  const m = WATCH_PREFIX.exec(path);
  return m ? m[1] + path.slice(m[0].length) : undefined;
}

export function requestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  // the non-empty segments (split and filter made two arrays and a call per segment on every request)
  const parts: string[] = [];
  for (let i = 0; i < path.length;) {
    let j = path.indexOf('/', i);
    if (j < 0) j = path.length;
    if (j > i) parts.push(path.slice(i, j));
    i = j + 1;
  }
  const info: RequestInfo = {
    isResourceRequest: false, path, verb: '',
    apiPrefix: '', apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '',
  };
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 2) {
    info.apiPrefix = 'api';
    info.apiVersion = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    info.apiPrefix = 'apis';
    info.apiGroup = parts[1];
    info.apiVersion = parts[2];
    rest = parts.slice(3);
  } else {
    if (parts[0] === 'api' || parts[0] === 'apis') info.apiPrefix = parts[0];
    info.verb = method.toLowerCase();
    return info; // discovery and other non-resource paths
  }
  if (rest.length === 0) {
    info.verb = method.toLowerCase();
    return info; // /api/v1, /apis/g/v: discovery
  }
  info.isResourceRequest = true;
  // the legacy prefix: a watch whatever the method, of what the rest of the path names
  const watchPrefix = rest[0] === 'watch' && rest.length >= 2;
  if (watchPrefix) rest = rest.slice(1);
  if (rest[0] === 'namespaces' && rest.length > 1) {
    info.namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2])) rest = rest.slice(2);
  }
  info.resource = rest[0];
  if (rest.length >= 2) info.name = rest[1];
  // As in the reference, the sub-resource is the third part; what follows (a proxy's path) is not
  // part of it (the route refuses a trailing path where the sub-resource takes none).
  if (rest.length >= 3) info.subresource = rest[2];

  if (watchPrefix) info.verb = 'watch';
  else switch (method) {
    case 'POST': info.verb = 'create'; break;
    case 'GET': case 'HEAD':
      info.verb = info.name ? 'get' : queryBool(query, 'watch') ? 'watch' : 'list';
      break;
    case 'PUT': info.verb = 'update'; break;
    case 'PATCH': info.verb = 'patch'; break;
    case 'DELETE': info.verb = info.name ? 'delete' : 'deletecollection'; break;
    default: info.verb = method.toLowerCase();
  }
  // A watch of one object by name through a field selector is authorized as a watch on that name.
  if ((info.verb === 'list' || info.verb === 'watch') && !info.name && !watchPrefix) {
    const m = /(?:^|,)metadata\.name==?([^,]+)(?:,|$)/.exec(query.get('fieldSelector') ?? '');
    if (m) info.name = m[1];
  }
  return info;
}
