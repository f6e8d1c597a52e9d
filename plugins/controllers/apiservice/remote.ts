// Remote APIServices (spec.service set): where their requests go, and the checks behind their
// Available condition, in the reference aggregator's order and words: the Service, its port, its
// Endpoints (for ClusterIP services), then a discovery GET of /apis/<group>/<version>.
import https from 'node:https';
import type { KObject, ObjectClient, TypeDef, UpstreamTarget } from '../../../kernel/contracts.js';

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

/**
 * The reference's discovery check: GET /apis/<group>/<version> as system:kube-aggregator
 * (system:masters) with the front-proxy certificate, server certificate not verified, 5 s at most;
 * any 2xx passes. Returns the failure message, or the parsed body on success.
 */
export function probe(target: UpstreamTarget, group: string, version: string, timeoutMs = 5000): Promise<{ error: string } | { body: J | undefined }> {
  const url = `${target.url}/apis/${group}/${version}`;
  return new Promise((done) => {
    const fail = (why: string) => done({ error: `failing or missing response from ${url}: ${why}` });
    const req = https.request(url, {
      method: 'GET', cert: target.cert, key: target.key, rejectUnauthorized: false, servername: target.servername, agent: false, timeout: timeoutMs,
      headers: { accept: 'application/json', 'X-Remote-User': 'system:kube-aggregator', 'X-Remote-Group': 'system:masters' },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const code = res.statusCode ?? 0;
        if (code < 200 || code >= 300) return fail(`bad status from ${url}: ${code}`);
        let body: J | undefined;
        try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as J; } catch { body = undefined; }
        done({ body });
      });
      res.on('error', (e) => fail(`Get ${JSON.stringify(url)}: ${e.message}`));
    });
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')));
    req.on('error', (e) => fail(`Get ${JSON.stringify(url)}: ${e.message}`));
    req.end();
  });
}

export type { KObject };
