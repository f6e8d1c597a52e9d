// Where a pod's streams are served: the node agent of the pod's node, at the node's address and
// status.daemonEndpoints port, reached with the server's node agent client certificate
// (--kubelet-client-certificate / --kubelet-client-key, verified by --kubelet-certificate-authority).
// pods/log, exec, attach and portforward and nodes/proxy go there, on the node agent's own paths;
// pods/proxy goes to the pod's IP and services/proxy to one of the service's endpoints, as the
// reference's location functions choose them.
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import type { ConnectHandler, PluginHost, StreamHandler, UpstreamTarget } from '../../../../kernel/contracts/index.js';
import { StatusError } from '../../../../kernel/contracts/status.js';
import { isObj, list, type J } from '../../../lib/json.js';

export interface NodeAgentOptions {
  kubeletClientCertificate?: string;
  kubeletClientKey?: string;
  kubeletCertificateAuthority?: string;
  /** The reference's --kubelet-preferred-address-types order. */
  kubeletPreferredAddressTypes?: string[];
}

const DEFAULT_ADDRESS_TYPES = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];
const DEFAULT_PORT = 10250;

/** Query parameters of pods/log the node agent understands, passed as they are. */
const LOG_PARAMS = ['follow', 'previous', 'sinceSeconds', 'sinceTime', 'timestamps', 'tailLines', 'limitBytes'];

export function nodeAgent(host: PluginHost, o: NodeAgentOptions) {
  let creds: Promise<Pick<UpstreamTarget, 'ca' | 'cert' | 'key'>> | undefined;
  const credentials = () => (creds ??= (async () => ({
    cert: o.kubeletClientCertificate ? await readFile(o.kubeletClientCertificate, 'utf8') : undefined,
    key: o.kubeletClientKey ? await readFile(o.kubeletClientKey, 'utf8') : undefined,
    ca: o.kubeletCertificateAuthority ? await readFile(o.kubeletCertificateAuthority, 'utf8') : undefined,
  }))());

  /** A node's agent: its address and port (status.addresses in the preferred order, status.daemonEndpoints). */
  async function agent(nodeName: string): Promise<{ address: string; port: number }> {
    const nodes = host.type('', 'nodes')!;
    const node = await host.objects.get(nodes, '', nodeName);
    if (!node) throw new StatusError(404, 'NotFound', `nodes "${nodeName}" not found`, { name: nodeName, kind: 'nodes' });
    const st: J = isObj(node.status) ? node.status : {};
    const addrs = list(st.addresses);
    let address: string | undefined;
    for (const t of o.kubeletPreferredAddressTypes ?? DEFAULT_ADDRESS_TYPES) {
      address = addrs.find((a) => a.type === t && a.address)?.address;
      if (address) break;
    }
    if (!address) throw new StatusError(500, 'InternalError', `Internal error occurred: no preferred addresses found; known addresses: [${addrs.map((a) => `{${a.type} ${a.address}}`).join(' ')}]`);
    return { address, port: Number(st.daemonEndpoints?.kubeletEndpoint?.Port) || DEFAULT_PORT };
  }
  /** https://<address>:<port> of a node's agent. */
  const base = async (nodeName: string) => { const a = await agent(nodeName); return `https://${hostPort(a.address, a.port)}`; };

  async function getPod(namespace: string, name: string): Promise<J> {
    const pod = await host.objects.get(host.type('', 'pods')!, namespace, name);
    if (!pod) throw new StatusError(404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' });
    return pod as J;
  }

  /** The container a pod stream is for: the one named (init and ephemeral ones too: `kubectl debug` attaches to one), or the only one. */
  function containerOf(spec: J, podName: string, requested: string): string {
    const names = list(spec.containers).map((c) => c.name as string);
    const all = [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)].map((c) => c.name as string);
    if (!requested) {
      if (names.length === 1) return names[0];
      const init = list(spec.initContainers).map((c) => c.name as string);
      throw new StatusError(400, 'BadRequest', `a container name must be specified for pod ${podName}, choose one of: [${names.join(' ')}]${init.length ? ` or one of the init containers: [${init.join(' ')}]` : ''}`);
    }
    if (!all.includes(requested)) throw new StatusError(400, 'BadRequest', `container ${requested} is not valid for pod ${podName}`);
    return requested;
  }

  const logs: StreamHandler = async (req) => {
    const pod = await getPod(req.namespace, req.name);
    const spec: J = isObj(pod.spec) ? pod.spec : {};
    const container = containerOf(spec, req.name, req.query.get('container') ?? '');
    if (!spec.nodeName) throw new StatusError(400, 'BadRequest', `pod ${req.name} does not have a host assigned`);
    const q = new URLSearchParams();
    for (const p of LOG_PARAMS) { const v = req.query.get(p); if (v !== null) q.set(p, v); }
    const qs = q.toString();
    const path = `/containerLogs/${encodeURIComponent(req.namespace)}/${encodeURIComponent(req.name)}/${encodeURIComponent(container)}${qs ? `?${qs}` : ''}`;
    return { url: (await base(spec.nodeName)) + path, ...(await credentials()) };
  };

  /** pods/exec and pods/attach: /exec|/attach/<ns>/<pod>/<container> on the node agent, the options as its query parameters. */
  const stream = (kind: 'exec' | 'attach'): ConnectHandler => async (req) => {
    const spec: J = (await getPod(req.namespace, req.name)).spec ?? {};
    const container = containerOf(spec, req.name, req.query.get('container') ?? '');
    if (!spec.nodeName) throw new StatusError(400, 'BadRequest', `pod ${req.name} does not have a host assigned`);
    const q = new URLSearchParams();
    for (const [opt, param] of STREAM_PARAMS) if (queryTrue(req.query, opt)) q.append(param, '1');
    if (kind === 'exec') for (const c of req.query.getAll('command')) q.append('command', c);
    const path = `/${kind}/${encodeURIComponent(req.namespace)}/${encodeURIComponent(req.name)}/${encodeURIComponent(container)}`;
    return { url: `${await base(spec.nodeName)}${path}${q.size ? `?${q}` : ''}`, ...(await credentials()) };
  };

  /** pods/portforward: /portForward/<ns>/<pod> on the node agent, each requested port as `port`. */
  const portForward: ConnectHandler = async (req) => {
    const spec: J = (await getPod(req.namespace, req.name)).spec ?? {};
    if (!spec.nodeName) throw new StatusError(400, 'BadRequest', `pod ${req.name} does not have a host assigned`);
    const q = new URLSearchParams();
    for (const p of req.query.getAll('ports')) q.append('port', p);
    return { url: `${await base(spec.nodeName)}/portForward/${encodeURIComponent(req.namespace)}/${encodeURIComponent(req.name)}${q.size ? `?${q}` : ''}`, ...(await credentials()) };
  };

  /** nodes/proxy: the node agent itself ("node" or "node:port" for its port), or scheme:node:port elsewhere on the node, plainly. */
  const nodeProxy: ConnectHandler = async (req) => {
    const { scheme, name, port } = schemeNamePort(req.name, 'node');
    const a = await agent(name);
    const tail = proxyTail(req);
    if (!port || Number(port) === a.port) return { url: `https://${hostPort(a.address, a.port)}${tail}`, ...(await credentials()) };
    return { url: `${scheme || 'http'}://${hostPort(a.address, Number(port))}${tail}` };
  };

  /** pods/proxy: the pod's IP, at the named port or the first declared container port; only a global unicast address (as the reference). */
  const podProxy: ConnectHandler = async (req) => {
    const { scheme, name, port: p } = schemeNamePort(req.name, 'pod');
    const pod = await getPod(req.namespace, name);
    let port = p;
    if (!port) for (const c of list(pod.spec?.containers)) { const cp = list(c.ports)[0]?.containerPort; if (cp !== undefined) { port = String(cp); break; } }
    const ip = String(pod.status?.podIP ?? '');
    if (!isGlobalUnicast(ip)) throw new StatusError(400, 'BadRequest', 'address not allowed');
    return { url: `${scheme || 'http'}://${port ? hostPort(ip, Number(port)) : net.isIPv6(ip) ? `[${ip}]` : ip}${proxyTail(req)}` };
  };

  /** services/proxy: a ready endpoint address of the service, at the endpoint port named like the service port asked for. */
  const serviceProxy: ConnectHandler = async (req) => {
    const { scheme, name, port: portReq } = schemeNamePort(req.name, 'service');
    const svc = await host.objects.get(host.type('', 'services')!, req.namespace, name);
    if (!svc) throw new StatusError(404, 'NotFound', `services "${name}" not found`, { name, kind: 'services' });
    let portName = portReq;
    if (/^\d+$/.test(portReq)) {
      const sp = list((svc as J).spec?.ports).find((x) => Number(x.port) === Number(portReq));
      if (!sp) throw new StatusError(503, 'ServiceUnavailable', `no service port ${Number(portReq)} found for service "${name}"`);
      portName = sp.name ?? '';
    }
    const eps = await host.objects.get(host.type('', 'endpoints')!, req.namespace, name);
    const subsets = list((eps as J | undefined)?.subsets);
    if (!subsets.length) throw new StatusError(503, 'ServiceUnavailable', `no endpoints available for service "${name}"`);
    for (const ss of subsets) {
      const addrs = list(ss.addresses);
      const port = list(ss.ports).find((x) => (x.name ?? '') === portName);
      if (!addrs.length || !port) continue;
      for (const a of addrs) {
        if (!(await validAddress(a, req.namespace))) continue;
        return { url: `${scheme || 'http'}://${hostPort(String(a.ip), Number(port.port))}${proxyTail(req)}` };
      }
    }
    throw new StatusError(503, 'ServiceUnavailable', `no endpoints available for service "${req.name}"`);
  };

  /** An endpoint address is used when it points at a pod that has that IP (the reference's check before proxying). */
  async function validAddress(a: J, namespace: string): Promise<boolean> {
    const ref = a.targetRef;
    if (!isObj(ref) || ref.kind !== 'Pod') return false;
    const pod = (await host.objects.get(host.type('', 'pods')!, String(ref.namespace ?? namespace), String(ref.name ?? ''))) as J | undefined;
    if (!pod) return false;
    const ips = [pod.status?.podIP, ...list(pod.status?.podIPs).map((x) => x.ip)];
    return ips.includes(a.ip);
  }

  return { logs, exec: stream('exec'), attach: stream('attach'), portForward, nodeProxy, podProxy, serviceProxy };
}

/** PodExecOptions / PodAttachOptions fields and the node agent's parameters for them. */
const STREAM_PARAMS: [string, string][] = [['stdin', 'input'], ['stdout', 'output'], ['stderr', 'error'], ['tty', 'tty']];
const queryTrue = (q: URLSearchParams, k: string) => { const v = q.get(k); return v !== null && v !== 'false' && v !== '0'; };

function hostPort(address: string, port: number): string {
  return `${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/** What follows `.../proxy` in the request, with the request's query, for the upstream. */
function proxyTail(req: { path: string; query: URLSearchParams }): string {
  const q = req.query.toString();
  return `${req.path || '/'}${q ? `?${q}` : ''}`;
}

/** "name", "name:port" or "scheme:name:port" (scheme http or https), as the reference splits a proxy's name. */
export function schemeNamePort(id: string, what: string): { scheme: string; name: string; port: string } {
  const parts = id.split(':');
  let r: { scheme: string; name: string; port: string } | undefined;
  if (parts.length === 1) r = { scheme: '', name: parts[0], port: '' };
  else if (parts.length === 2) r = { scheme: '', name: parts[0], port: parts[1] };
  else if (parts.length === 3 && (parts[0] === 'http' || parts[0] === 'https')) r = { scheme: parts[0], name: parts[1], port: parts[2] };
  if (!r || !r.name) throw new StatusError(400, 'BadRequest', `invalid ${what} request "${id}"`);
  return r;
}

/** Go's IP.IsGlobalUnicast: not unspecified, loopback, link-local, multicast or the IPv4 broadcast address. */
function isGlobalUnicast(ip: string): boolean {
  if (net.isIPv4(ip)) {
    const [a, b] = ip.split('.').map(Number);
    return !(a === 0 || a === 127 || (a === 169 && b === 254) || a >= 224);
  }
  if (!net.isIPv6(ip)) return false;
  const l = ip.toLowerCase();
  if (l === '::' || l === '::1') return false;
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(l);
  if (m) return isGlobalUnicast(m[1]);
  return !/^fe[89ab]/.test(l) && !l.startsWith('ff');
}
