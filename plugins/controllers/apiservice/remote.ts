// Remote APIServices (spec.service set): where their requests go, and the checks behind their
// Available condition, in the reference aggregator's order and words: the Service, its port, its
// Endpoints (for ClusterIP services), then a discovery GET of /apis/<group>/<version>.
import https from 'node:https';
import type { KObject, ObjectClient, TypeDef, UpstreamTarget } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;

export interface Resolved { host: string; port: number }
export interface Condition { status: 'True' | 'False' | 'Unknown'; reason: string; message: string }

export interface RemoteEnv {
  objects: ObjectClient;
  services: TypeDef;
  endpoints: TypeDef | undefined;
  /** --enable-aggregator-routing: endpoint addresses instead of the cluster IP. */
  endpointRouting: boolean;
}

const ref = (svc: J) => `service/${svc.name} in ${JSON.stringify(svc.namespace)}`;
const hostPort = (r: Resolved) => (r.host.includes(':') ? `[${r.host}]:${r.port}` : `${r.host}:${r.port}`);

/**
 * The address of the APIService's service as the reference's resolvers find it: the cluster IP and
 * service port (ExternalName: that name), or with endpoint routing the first ready endpoint address
 * and the endpoint port of the same port name. undefined: nothing to send to.
 */
export async function resolve(env: RemoteEnv, svcRef: J): Promise<Resolved | undefined> {
  const svc = await env.objects.get(env.services, svcRef.namespace, svcRef.name);
  if (!svc) return undefined;
  const spec = (svc.spec ?? {}) as J;
  const port = Number(svcRef.port ?? 443);
  if (spec.type === 'ExternalName') return spec.externalName ? { host: String(spec.externalName), port } : undefined;
  const sp = ((spec.ports ?? []) as J[]).find((p) => p?.port === port);
  if (!sp) return undefined;
  if (!env.endpointRouting) {
    const ip = spec.clusterIP;
    return ip && ip !== 'None' ? { host: ip, port } : undefined;
  }
  if (!env.endpoints) return undefined;
  const ep = await env.objects.get(env.endpoints, svcRef.namespace, svcRef.name);
  for (const subset of ((ep?.subsets ?? []) as J[])) {
    const epPort = ((subset?.ports ?? []) as J[]).find((p) => (p?.name ?? '') === (sp.name ?? ''));
    const addr = ((subset?.addresses ?? []) as J[])[0];
    if (epPort && addr?.ip) return { host: String(addr.ip), port: Number(epPort.port) };
  }
  return undefined;
}

/** The upstream for a resolved address: verified with caBundle (or the system roots) unless insecureSkipTLSVerify, by the name `<service>.<namespace>.svc`. */
export function upstream(spec: J, at: Resolved, client: { certPem: string; keyPem: string }): UpstreamTarget {
  const ca = typeof spec.caBundle === 'string' && spec.caBundle ? Buffer.from(spec.caBundle, 'base64').toString('utf8') : undefined;
  return {
    url: `https://${hostPort(at)}`, ca, cert: client.certPem, key: client.keyPem,
    servername: `${spec.service.name}.${spec.service.namespace}.svc`, verify: spec.insecureSkipTLSVerify !== true,
  };
}

/** Service, port and endpoint checks; undefined when they pass (the discovery check comes next). */
export async function serviceCondition(env: RemoteEnv, svcRef: J): Promise<Condition | undefined> {
  const svc = await env.objects.get(env.services, svcRef.namespace, svcRef.name);
  if (!svc) return { status: 'False', reason: 'ServiceNotFound', message: `${ref(svcRef)} is not present` };
  const spec = (svc.spec ?? {}) as J;
  if ((spec.type ?? 'ClusterIP') !== 'ClusterIP') return undefined;
  const port = Number(svcRef.port ?? 443);
  const sp = ((spec.ports ?? []) as J[]).find((p) => p?.port === port);
  if (!sp) return { status: 'False', reason: 'ServicePortError', message: `${ref(svcRef)} is not listening on port ${port}` };
  const ep = env.endpoints ? await env.objects.get(env.endpoints, svcRef.namespace, svcRef.name) : undefined;
  if (!ep) return { status: 'False', reason: 'EndpointsNotFound', message: `cannot find endpoints for ${ref(svcRef)}` };
  const portName = sp.name ?? '';
  const ok = ((ep.subsets ?? []) as J[]).some((s) => ((s?.addresses ?? []) as J[]).length > 0 && ((s?.ports ?? []) as J[]).some((p) => (p?.name ?? '') === portName));
  if (!ok) return { status: 'False', reason: 'MissingEndpoints', message: `endpoints for ${ref(svcRef)} have no addresses with port name ${JSON.stringify(portName)}` };
  return undefined;
}

/** A GET as system:kube-aggregator (system:masters) with the front-proxy certificate, server certificate not verified. */
function get(target: UpstreamTarget, path: string, timeoutMs: number): Promise<{ code: number; text: string } | { error: string }> {
  const url = `${target.url}${path}`;
  return new Promise((done) => {
    const req = https.request(url, {
      method: 'GET', cert: target.cert, key: target.key, rejectUnauthorized: false, servername: target.servername, agent: false, timeout: timeoutMs,
      headers: { accept: 'application/json', 'X-Remote-User': 'system:kube-aggregator', 'X-Remote-Group': 'system:masters' },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ code: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (e) => done({ error: `Get ${JSON.stringify(url)}: ${e.message}` }));
    });
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')));
    req.on('error', (e) => done({ error: `Get ${JSON.stringify(url)}: ${e.message}` }));
    req.end();
  });
}

const parseJSON = (text: string): J | undefined => { try { return JSON.parse(text) as J; } catch { return undefined; } };

/**
 * The reference's discovery check: GET /apis/<group>/<version>, 5 s at most; any 2xx passes.
 * Returns the failure message, or the parsed body on success.
 */
export async function probe(target: UpstreamTarget, group: string, version: string, timeoutMs = 5000): Promise<{ error: string } | { body: J | undefined }> {
  const url = `${target.url}/apis/${group}/${version}`;
  const r = await get(target, `/apis/${group}/${version}`, timeoutMs);
  if ('error' in r) return { error: `failing or missing response from ${url}: ${r.error}` };
  if (r.code < 200 || r.code >= 300) return { error: `failing or missing response from ${url}: bad status from ${url}: ${r.code}` };
  return { body: parseJSON(r.text) };
}

/**
 * The server's OpenAPI v3 document of one group-version: its /openapi/v3 index names the document's
 * address (with a content hash); `known` is the address fetched last time, whose document is not
 * fetched again. undefined when the server publishes none.
 */
export async function openapiV3(target: UpstreamTarget, group: string, version: string, known?: string): Promise<{ address: string; text?: string } | undefined> {
  const index = await get(target, '/openapi/v3', 5000);
  if ('error' in index || index.code !== 200) return undefined;
  const address = parseJSON(index.text)?.paths?.[`apis/${group}/${version}`]?.serverRelativeURL;
  if (typeof address !== 'string' || !address.startsWith('/')) return undefined;
  if (address === known) return { address };
  const doc = await get(target, address, 5000);
  if ('error' in doc || doc.code !== 200 || !parseJSON(doc.text)) return undefined;
  return { address, text: doc.text };
}

export type { KObject };
