// Where a pod's streams are served: the node agent of the pod's node, at the node's address and
// status.daemonEndpoints port, reached with the server's node agent client certificate
// (--kubelet-client-certificate / --kubelet-client-key, verified by --kubelet-certificate-authority).
import { readFile } from 'node:fs/promises';
import type { PluginHost, StreamHandler, UpstreamTarget } from '../../../../kernel/contracts.js';
import { StatusError } from '../../../../kernel/status.js';
import { isObj, list, type J } from '../catalog.js';

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

  /** https://<address>:<port> of a node's agent. */
  async function base(nodeName: string): Promise<string> {
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
    const port = Number(st.daemonEndpoints?.kubeletEndpoint?.Port) || DEFAULT_PORT;
    return `https://${address.includes(':') ? `[${address}]` : address}:${port}`;
  }

  const logs: StreamHandler = async (req) => {
    const pods = host.type('', 'pods')!;
    const pod = (await host.objects.get(pods, req.namespace, req.name))!;
    const spec: J = isObj(pod.spec) ? pod.spec : {};
    const names = list(spec.containers).map((c) => c.name as string);
    const all = [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)].map((c) => c.name as string);
    let container = req.query.get('container') ?? '';
    if (!container) {
      if (names.length !== 1) throw new StatusError(400, 'BadRequest', `a container name must be specified for pod ${req.name}, choose one of: [${names.join(' ')}]`);
      container = names[0];
    } else if (!all.includes(container)) {
      throw new StatusError(400, 'BadRequest', `container ${container} is not valid for pod ${req.name}`);
    }
    if (!spec.nodeName) throw new StatusError(400, 'BadRequest', `pod ${req.name} does not have a host assigned`);
    const q = new URLSearchParams();
    for (const p of LOG_PARAMS) { const v = req.query.get(p); if (v !== null) q.set(p, v); }
    const qs = q.toString();
    const path = `/containerLogs/${encodeURIComponent(req.namespace)}/${encodeURIComponent(req.name)}/${encodeURIComponent(container)}${qs ? `?${qs}` : ''}`;
    return { url: (await base(spec.nodeName)) + path, ...(await credentials()) };
  };

  return { logs };
}
