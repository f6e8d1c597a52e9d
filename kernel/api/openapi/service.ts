// Serving /openapi/v2 and /openapi/v3: content negotiation, ETags, hashed immutable URLs, and
// rebuilding only the documents whose types changed.
import type { Brand } from '../../contracts/brand.js';
import type { TypeDef } from '../../contracts/types.js';
import { builtIn, catalog, sha512Hex, v3Document, V2Document, type Catalog, type OpenAPIDocuments } from './documents.js';
import { OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_ASKED } from './v2proto.js';

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
