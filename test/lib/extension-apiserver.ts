// A small extension API server for the aggregation tests: real HTTPS on loopback, serving one
// namespaced resource (flunders in wardle.example.io/v1alpha1) with get, list, create and watch.
// Like the reference's delegated authentication, it trusts X-Remote-* headers only on a connection
// whose client certificate verifies against requestheader-client-ca-file from the
// extension-apiserver-authentication ConfigMap and whose common name is an allowed name.
import { X509Certificate } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { generateCA, signCert } from '../../kernel/ops/pki.js';

export const GROUP = 'wardle.example.io';
export const VERSION = 'v1alpha1';
export const GV = `${GROUP}/${VERSION}`;

/** The group-version's OpenAPI v3 document: what `kubectl explain` reads. */
export const OPENAPI_V3 = {
  openapi: '3.0.0', info: { title: 'wardle', version: VERSION },
  // kubectl explain finds a resource's schema through the `get` operation of its `{name}` path
  paths: { [`/apis/${GV}/namespaces/{namespace}/flunders/{name}`]: { get: {
    operationId: 'readWardleV1alpha1NamespacedFlunder', 'x-kubernetes-action': 'get',
    'x-kubernetes-group-version-kind': { group: GROUP, version: VERSION, kind: 'Flunder' },
    responses: { 200: { description: 'OK', content: { 'application/json': { schema: { $ref: '#/components/schemas/io.example.wardle.v1alpha1.Flunder' } } } } },
  } } },
  components: { schemas: { 'io.example.wardle.v1alpha1.Flunder': {
    type: 'object', description: 'A Flunder is an example resource of the test extension server.',
    properties: {
      apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
      kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
      metadata: { type: 'object', description: 'Standard object metadata.' },
      spec: { type: 'object', description: 'FlunderSpec holds what the flunder should be.', properties: { reference: { type: 'string', description: 'Reference names another flunder.' } } },
    },
    'x-kubernetes-group-version-kind': [{ group: GROUP, kind: 'Flunder', version: VERSION }],
  } } },
};

export interface Seen { method: string; url: string; user?: string; groups: string[]; extra: Record<string, string[]>; cn?: string; headers: Record<string, string | string[] | undefined> }

export interface ExtensionServer {
  port: number;
  caPem: string;
  /** Every request that reached the server, after the certificate check. */
  seen: Seen[];
  /** Requests refused for their certificate. */
  refused: number;
  objects: Map<string, any>;
  /** Watches open now. */
  watching(): number;
  /** Called for a watch with a stream the test drives itself (backpressure tests); default: events as objects are created. */
  onWatch?: (res: import('node:http').ServerResponse) => void;
  /** Takes a request (after the certificate check) before the resource handling: true when it answered. */
  intercept?: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => boolean;
  close(): Promise<void>;
  listen(port?: number): Promise<number>;
}

function parseBundle(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((p) => new X509Certificate(p));
}

/** The front proxy's certificate: issued by one of the roots (signature checked), in its validity window, CN allowed. */
function trustedProxy(sock: TLSSocket, roots: X509Certificate[], allowed: string[]): string | undefined {
  const peer = sock.getPeerX509Certificate?.();
  if (!peer) return undefined;
  const now = Date.now();
  if (Date.parse(peer.validFrom) > now || Date.parse(peer.validTo) < now) return undefined;
  if (!roots.some((r) => peer.checkIssued(r) && peer.verify(r.publicKey))) return undefined;
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(peer.subject)?.[1];
  if (!cn || (allowed.length && !allowed.includes(cn))) return undefined;
  return cn;
}

export async function startExtensionServer(trust: { requestheaderCA: string; allowedNames: string[]; serviceName: string; namespace: string }): Promise<ExtensionServer> {
  const ca = await generateCA({ CN: 'wardle-ca' });
  const serving = await signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: 'wardle' }, dnsNames: [`${trust.serviceName}.${trust.namespace}.svc`], usages: ['serverAuth'], days: 1 });
  const roots = parseBundle(trust.requestheaderCA);
  let rv = 1;
  const watchers = new Set<import('node:http').ServerResponse>();
  const ext: ExtensionServer = {
    port: 0, caPem: ca.certPem, seen: [], refused: 0, objects: new Map(), watching: () => watchers.size,
    close: () => new Promise((r) => { for (const w of watchers) w.destroy(); server.closeAllConnections(); server.close(() => r()); }),
    listen: (port = 0) => new Promise((r) => server.listen(port, '127.0.0.1', () => { ext.port = (server.address() as AddressInfo).port; r(ext.port); })),
  };
  const send = (res: import('node:http').ServerResponse, code: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-wardle': 'yes' });
    res.end(text);
  };
  const status = (code: number, reason: string, message: string) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });

  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const cn = trustedProxy(req.socket as TLSSocket, roots, trust.allowedNames);
    if (!cn) {
      ext.refused++;
      return send(res, 401, status(401, 'Unauthorized', 'Unauthorized'));
    }
    const extra: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (k.startsWith('x-remote-extra-')) extra[decodeURIComponent(k.slice('x-remote-extra-'.length))] = String(v).split(', ');
    }
    const groups = req.headersDistinct['x-remote-group'] ?? [];
    const user = req.headers['x-remote-user'] as string | undefined;
    ext.seen.push({ method: req.method!, url: req.url!, user, groups, extra, cn, headers: req.headers });
    if (ext.intercept?.(req, res)) return;
    const url = new URL(req.url!, 'https://x');
    const p = url.pathname;
    if (p === `/apis/${GV}`) {
      return send(res, 200, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: GV, resources: [{ name: 'flunders', singularName: 'flunder', namespaced: true, kind: 'Flunder', verbs: ['create', 'get', 'list', 'watch'], shortNames: ['fl'] }] });
    }
    if (p === '/openapi/v3') return send(res, 200, { paths: { [`apis/${GV}`]: { serverRelativeURL: `/openapi/v3/apis/${GV}?hash=0123ABCD` } } });
    if (p === `/openapi/v3/apis/${GV}`) return send(res, 200, OPENAPI_V3);
    if (p === `/apis/${GROUP}`) return send(res, 200, { kind: 'APIGroup', apiVersion: 'v1', name: GROUP, versions: [{ groupVersion: GV, version: VERSION }], preferredVersion: { groupVersion: GV, version: VERSION } });
    if (!user) return send(res, 403, status(403, 'Forbidden', 'no user'));
    const m = new RegExp(`^/apis/${GV.replace('.', '\\.')}/namespaces/([^/]+)/flunders(?:/([^/]+))?$`).exec(p);
    if (!m) return send(res, 404, status(404, 'NotFound', 'the server could not find the requested resource'));
    const [, ns, name] = m;
    if (req.method === 'GET' && name) {
      const o = ext.objects.get(`${ns}/${name}`);
      return o ? send(res, 200, o) : send(res, 404, status(404, 'NotFound', `flunders.${GROUP} "${name}" not found`));
    }
    if (req.method === 'GET' && (url.searchParams.get('watch') === '1' || url.searchParams.get('watch') === 'true')) {
      res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      if (ext.onWatch) return ext.onWatch(res);
      watchers.add(res);
      res.on('close', () => watchers.delete(res));
      res.write('');
      return;
    }
    if (req.method === 'GET') {
      const items = [...ext.objects.values()].filter((o) => o.metadata.namespace === ns);
      return send(res, 200, { kind: 'FlunderList', apiVersion: GV, metadata: { resourceVersion: String(rv) }, items });
    }
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let o: any;
        try { o = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { return send(res, 400, status(400, 'BadRequest', 'not JSON')); }
        const n = o?.metadata?.name;
        if (!n) return send(res, 422, status(422, 'Invalid', 'metadata.name: Required value'));
        if (ext.objects.has(`${ns}/${n}`)) return send(res, 409, status(409, 'AlreadyExists', `flunders.${GROUP} "${n}" already exists`));
        o.metadata = { ...o.metadata, namespace: ns, resourceVersion: String(++rv), creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), annotations: { ...o.metadata.annotations, 'created-by': user } };
        ext.objects.set(`${ns}/${n}`, o);
        for (const w of watchers) w.write(`${JSON.stringify({ type: 'ADDED', object: o })}\n`);
        send(res, 201, o);
      });
      return;
    }
    send(res, 405, status(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'));
  });
  await ext.listen();
  return ext;
}
