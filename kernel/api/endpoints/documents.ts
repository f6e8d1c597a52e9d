// The API's own documents: discovery (legacy and aggregated), OpenAPI v2 and v3, /version, and the
// reference's two kinds of 404 for paths none of them answers.
import { createHash } from 'node:crypto';
import type { Brand } from '../../contracts/brand.js';
import type { RemoteGroupVersion, RequestInfo } from '../../contracts/index.js';
import { errors, type StatusError } from '../../contracts/status.js';
import type { KRequest, KResponse } from '../../http/types.js';
import type { TypeRegistry } from '../catalog.js';
import { aggregatedAccept, aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions, withRemoteGroups } from '../discovery.js';
import { OpenAPIService } from '../openapi/index.js';

export interface ApiDocumentsContext {
  readonly brand: Brand;
  readonly emulatedVersion: { major: string; minor: string; gitVersion: string };
  types(): TypeRegistry;
  /** Group-versions other servers serve (aggregation). */
  remotes(): RemoteGroupVersion[];
  /** host:port of the secure port, for the legacy APIVersions document. */
  address(): string;
}

export class ApiDocuments {
  /** Published OpenAPI documents, built at the first request. */
  private openapi?: OpenAPIService;

  constructor(private readonly ctx: ApiDocumentsContext) {}

  /** The served types or remote group-versions changed: the OpenAPI documents are built again when next asked for. */
  changed(): void { this.openapi?.reset(); }

  version() {
    const v = this.ctx.emulatedVersion;
    return {
      major: v.major, minor: v.minor, gitVersion: v.gitVersion, gitCommit: '0000000000000000000000000000000000000000', gitTreeState: 'clean',
      buildDate: '2026-11-22T00:00:00Z', goVersion: `node${process.versions.node}`, compiler: 'tsc', platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
    };
  }

  /** /openapi/v2, /openapi/v3 and its group-version documents. */
  answerOpenAPI(req: KRequest, res: KResponse): boolean {
    const p = req.path;
    if (p !== '/openapi/v2' && p !== '/openapi/v3' && !p.startsWith('/openapi/v3/')) return false;
    this.openapi ??= new OpenAPIService(() => this.ctx.types().all, this.ctx.brand, this.version(), () => this.remoteOpenAPI());
    const o = this.openapi.serveOpenAPI(p, (n) => req.header(n), req.query)!;
    res.send(o.code, o.headers, req.method === 'HEAD' ? '' : o.body);
    return true;
  }

  answerVersion(req: KRequest, res: KResponse): boolean {
    if (req.path !== '/version' && req.path !== '/version/') return false;
    json(res, this.version());
    return true;
  }

  /** /api, /apis (legacy or aggregated), /api/<version>, /apis/<group> and /apis/<group>/<version>. */
  answerDiscovery(req: KRequest, res: KResponse, info: RequestInfo): boolean {
    const p = req.path;
    const types = this.ctx.types();
    const remotes = this.ctx.remotes();
    const root = p === '/api' || p === '/api/' ? 'api' : p === '/apis' || p === '/apis/' ? 'apis' : undefined;
    if (root) {
      const v = aggregatedAccept(req.header('accept'));
      if (v) {
        aggregatedAnswer(req, res, aggregatedDiscovery(types, remotes, root === 'api', v), v);
        return true;
      }
      const body = root === 'api' ? apiVersions(this.ctx.address()) : withRemoteGroups(apiGroupList(types), remotes);
      res.send(200, { 'content-type': 'application/json', vary: 'Accept' }, JSON.stringify(body));
      return true;
    }
    if (info.apiPrefix === 'api' && info.apiVersion) {
      const l = apiResourceList(types, '', info.apiVersion);
      if (l) { json(res, l); return true; }
    }
    if (info.apiPrefix === 'apis') {
      const parts = p.split('/').filter(Boolean);
      if (parts.length === 2) {
        const local = apiGroup(types, parts[1]);
        const g = remotes.some((r) => r.group === parts[1]) ? { ...withRemoteGroups({ groups: local ? [local] : [] }, remotes, parts[1]).groups[0], kind: 'APIGroup', apiVersion: 'v1' } : local;
        if (g) { json(res, g); return true; }
      }
      if (parts.length === 3) { const l = apiResourceList(types, parts[1], parts[2]); if (l) { json(res, l); return true; } }
    }
    return false;
  }

  /**
   * The reference's two 404s: a Status (with empty details) under a served group-version, whose web
   * service claims the path; Go's plain "404 page not found" anywhere else.
   */
  notFound(info: RequestInfo): StatusError {
    const served = (info.apiPrefix === 'api' || info.apiPrefix === 'apis') && info.apiVersion !== '' &&
      this.ctx.types().all.some((t) => t.group === info.apiGroup && t.version === info.apiVersion);
    return served ? errors.pathNotFound() : errors.pageNotFound();
  }

  /** The OpenAPI v3 documents extension servers published, by discovery path. */
  private *remoteOpenAPI(): Iterable<[string, string]> {
    for (const remote of this.ctx.remotes()) {
      const doc = remote.openapiV3?.();
      if (doc) yield [`apis/${remote.group}/${remote.version}`, doc];
    }
  }
}

function json(res: KResponse, body: unknown) {
  res.send(200, { 'content-type': 'application/json' }, JSON.stringify(body));
}

/** An APIGroupDiscoveryList, with the reference's Vary and ETag (a matching If-None-Match is a 304). */
function aggregatedAnswer(req: KRequest, res: KResponse, doc: unknown, v: string): void {
  const body = JSON.stringify(doc);
  const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 32).toUpperCase()}"`;
  const headers = { 'content-type': `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList`, vary: 'Accept', etag };
  if (req.header('if-none-match') === etag) return res.send(304, { vary: 'Accept', etag });
  res.send(200, headers, req.method === 'HEAD' ? '' : body);
}
