// The etcd3 storage backend plugin (--storage-backend=etcd3): objects in an etcd v3 cluster, shared
// by every server replica that names the same cluster and prefix. See backend.ts.
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';
import { EtcdBackend } from './backend.js';

const str = (o: Record<string, unknown>, k: string): string | undefined => {
  const v = o[k];
  if (v !== undefined && typeof v !== 'string') throw new Error(`etcd3 storage: option ${k} must be a string`);
  return v;
};

const plugin: PluginModule<'storage'> = {
  kind: 'storage',
  contract: CONTRACT_VERSION,
  name: 'etcd3',
  create(options, host) {
    const s = options.servers;
    const servers = Array.isArray(s) ? s.map(String) : typeof s === 'string' ? s.split(',') : [];
    if (!servers.length) throw new Error('etcd3 storage: no etcd servers (--etcd-servers or options.servers)');
    const timeout = Number(options.requestTimeoutSeconds ?? 10);
    if (!(timeout > 0)) throw new Error('etcd3 storage: requestTimeoutSeconds must be a positive number');
    return new EtcdBackend({
      servers: servers.map((x) => x.trim()).filter(Boolean),
      prefix: str(options, 'prefix') ?? '/registry',
      caFile: str(options, 'caFile'),
      certFile: str(options, 'certFile'),
      keyFile: str(options, 'keyFile'),
      timeoutMs: timeout * 1000,
      transformer: host.valueTransformer,
    }, (msg, fields) => host.log.warn(msg, fields));
  },
};
export default plugin;
