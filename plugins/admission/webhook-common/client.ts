// The HTTPS client of the admission webhooks: resolves where a webhook lives (its URL, or its
// service's ready endpoints), presents the credentials the admission configuration gives for it,
// verifies the serving certificate (against caBundle, for `<svc>.<ns>.svc` when called through a
// service), enforces the timeout and a response size limit, and keeps each webhook's keep-alive
// connections (http1.ts) apart from the others'.
import type { KObject, PluginHost } from '../../../kernel/contracts/index.js';
import type { ClientConfig } from './config.js';
import { Http1Client, TransportError } from './http1.js';
import { parseJson } from '../../../workers/body/decode.js';
import { credentialsFor, type Credentials, type Kubeconfig } from './kubeconfig.js';
import { goNetError } from '../../lib/go-net-errors.js';
import { isObj, type J } from '../../lib/json.js';

/** Largest webhook response read; a bigger one is a failed call. */
export const MAX_RESPONSE_BYTES = 3 * 1024 * 1024;

/** A call that did not produce a usable answer: subject to the webhook's failure policy. */
export class CallError extends Error {}

/** Where one call goes. */
export interface Target {
  /** Host to connect to (IP or name) and port. */
  host: string;
  port: number;
  path: string;
  /** Name the serving certificate must be valid for (and SNI, unless it is an IP address). */
  serverName: string;
  /** The URL as messages show it (for a service: https://<svc>.<ns>.svc:<port><path>). */
  display: string;
  /** Host header: the URL's host[:port], or <svc>.<ns>.svc:<port>. */
  hostHeader: string;
  /** Key of the credentials entry: host[:port] of the URL, or <svc>.<ns>.svc[:port]. */
  credentialKey: string;
  ca?: string;
}


export class WebhookClient {
  private http = new Http1Client();

  constructor(private host: PluginHost, private kubeconfig?: Kubeconfig) {}

  /** Keeps the connections of these webhooks (client keys), closes the others (webhooks removed or changed). */
  retain(keys: Iterable<string>): void {
    this.http.retain(keys);
  }

  close(): void {
    this.http.close();
  }

  /** URL targets, parsed once per client configuration (the configuration objects are replaced on change). */
  private urlTargets = new WeakMap<ClientConfig, Target>();

  /** Where a client configuration points now (a service resolves through its endpoints at each call). */
  async resolve(cc: ClientConfig): Promise<Target> {
    if (cc.url) {
      const known = this.urlTargets.get(cc);
      if (known) return known;
      let u: URL;
      try { u = new URL(cc.url); } catch (e) { throw new CallError(`invalid webhook URL ${JSON.stringify(cc.url)}: ${(e as Error).message}`); }
      if (u.protocol !== 'https:') throw new CallError(`webhook URL ${JSON.stringify(cc.url)} is not https`);
      const hostname = u.hostname.replace(/^\[(.*)\]$/, '$1');
      const target: Target = {
        host: hostname, port: u.port ? Number(u.port) : 443, path: (u.pathname || '/'), serverName: hostname,
        display: `${u.origin}${u.pathname}`, hostHeader: u.host, credentialKey: u.host, ca: cc.ca,
      };
      this.urlTargets.set(cc, target);
      return target;
    }
    if (!cc.service) throw new CallError('webhook has neither url nor service');
    const { namespace, name, path, port } = cc.service;
    const dns = `${name}.${namespace}.svc`;
    const display = `https://${dns}:${port}${path}`;
    const { host, port: targetPort } = await this.endpointFor(namespace, name, port);
    return { host, port: targetPort, path, serverName: dns, display, hostHeader: `${dns}:${port}`, credentialKey: port === 443 ? dns : `${dns}:${port}`, ca: cc.ca };
  }

  /** A ready address of the service for its port `port`: Endpoints first, then EndpointSlices; ExternalName services by name. */
  private async endpointFor(namespace: string, name: string, port: number): Promise<{ host: string; port: number }> {
    const svcType = this.host.type('', 'services');
    const svc = svcType ? await this.host.objects.get(svcType, namespace, name) : undefined;
    if (!svc) throw new CallError(`service "${name}" not found`);
    const spec = isObj(svc.spec) ? svc.spec : {};
    if (spec.type === 'ExternalName' && typeof spec.externalName === 'string') return { host: spec.externalName, port };
    const svcPort = (Array.isArray(spec.ports) ? spec.ports : []).find((p: J) => isObj(p) && p.port === port) as J | undefined;
    if (!svcPort) throw new CallError(`service "${namespace}/${name}" has no port ${port}`);
    const portName = typeof svcPort.name === 'string' ? svcPort.name : '';
    const pick = <T>(l: T[]): T => l[Math.floor(Math.random() * l.length)];

    const epType = this.host.type('', 'endpoints');
    const ep = epType ? await this.host.objects.get(epType, namespace, name) : undefined;
    for (const ss of Array.isArray(ep?.subsets) ? (ep!.subsets as J[]) : []) {
      if (!isObj(ss)) continue;
      const addrs = (Array.isArray(ss.addresses) ? ss.addresses : []).filter((x: J) => isObj(x) && typeof x.ip === 'string');
      const p = (Array.isArray(ss.ports) ? ss.ports : []).find((x: J) => isObj(x) && (x.name ?? '') === portName && Number.isInteger(x.port));
      if (p && addrs.length) return { host: pick(addrs).ip, port: p.port };
    }
    const sliceType = this.host.allTypes().find((t) => t.resource === 'endpointslices' && t.group.startsWith('discovery.'));
    if (sliceType) {
      const label = `${this.host.brand.keyDomain}/service-name`;
      const slices = (await this.host.objects.list(sliceType, namespace)).filter((s: KObject) => s.metadata?.labels?.[label] === name);
      for (const s of slices) {
        const p = (Array.isArray(s.ports) ? s.ports : []).find((x: J) => isObj(x) && (x.name ?? '') === portName && Number.isInteger(x.port));
        if (!p) continue;
        const ready = (Array.isArray(s.endpoints) ? s.endpoints : []).filter((e: J) => isObj(e) && e.conditions?.ready !== false && Array.isArray(e.addresses) && e.addresses.length);
        if (ready.length) return { host: pick(ready).addresses[0], port: p.port };
      }
    }
    throw new CallError(`service "${namespace}/${name}" has no ready endpoints for port ${port}`);
  }

  /**
   * POSTs a JSON body and returns the parsed JSON answer. Every failure is a CallError whose message
   * reads as the reference's: `Post "<url>?timeout=<n>s": <cause>`.
   */
  async post(group: string, t: Target, body: string, timeoutSeconds: number, creds?: Credentials): Promise<unknown> {
    const url = `${t.display}?timeout=${timeoutSeconds}s`;
    const cred = creds ?? credentialsFor(this.kubeconfig, t.credentialKey);
    const headers: [string, string][] = [['Content-Type', 'application/json'], ['Accept', 'application/json']];
    if (cred?.token) headers.push(['Authorization', `Bearer ${cred.token}`]);
    else if (cred?.username !== undefined) headers.push(['Authorization', `Basic ${Buffer.from(`${cred.username}:${cred.password ?? ''}`).toString('base64')}`]);
    const cert = cred?.cert && cred.key ? cred.cert : undefined;
    const key = cert ? cred!.key : undefined;
    let res;
    try {
      res = await this.http.post({
        poolKey: `${group}\0${t.host}\0${t.port}\0${t.serverName}\0${cert ? 'c' : ''}`, group,
        host: t.host, port: t.port, path: `${t.path}?timeout=${timeoutSeconds}s`, hostHeader: t.hostHeader, serverName: t.serverName,
        ca: t.ca, cert, key, headers, body: Buffer.from(body), timeoutMs: timeoutSeconds * 1000, maxBodyBytes: MAX_RESPONSE_BYTES,
      });
    } catch (e) {
      if (e instanceof TransportError) throw new CallError(`Post "${url}": ${goNetError(e, t)}`);
      throw e;
    }
    const text = res.body.toString('utf8');
    if (res.status < 200 || res.status > 299) {
      throw new CallError(`Post "${url}": ${text.trim()
        ? `an error on the server (${JSON.stringify(text.trim().slice(0, 512))}) has prevented the request from succeeding (status ${res.status})`
        : `the server responded with the status code ${res.status} but did not return more information`}`);
    }
    try {
      // bounded like every JSON body the server decodes: what comes back is merged into the object
      return parseJson(text);
    } catch (e) {
      throw new CallError(`Post "${url}": invalid JSON in the response: ${(e as Error).message}`);
    }
  }
}
