// What a bench scenario drives: a server that speaks the API, either one the bench starts itself
// (a fresh data directory, its CPU read from /proc) or any running server named by URL — the
// reference included — reached with a bearer token or a kubeconfig. Scenarios use core-group
// ConfigMaps in a namespace of their own, so no brand is involved and nothing of the user's is touched.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { randomBytes } from 'node:crypto';
import YAML from 'yaml';
import { startBenchServer, type BenchServer } from './lib.js';

export interface Target {
  /** A short name for tables: "ours" for the bench's own server, else the URL's host:port. */
  label: string;
  host: string;
  port: number;
  /** Bearer token; empty when a client certificate authenticates. */
  token: string;
  /** PEM of the CA to trust; undefined with --insecure. */
  ca?: string;
  cert?: string;
  key?: string;
  /** Server process to read CPU and memory from (/proc), when it runs on this machine and is known. */
  pid?: number;
  /** Every process whose memory counts (the reference: kube-apiserver and etcd); pid alone when absent. */
  pids?: number[];
  /** Namespace the scenarios write into (created by `prepare`, deleted by `stop`). */
  namespace: string;
  /** The node:tls (client-certificate) listener's port of the bench's own server. */
  mtlsPort?: number;
  /** Data directory of the bench's own server (for its client certificate). */
  dataDir?: string;
  stop(): Promise<void>;
}

/** Starts our server on a fresh data directory. Its namespace is `default`, as before. */
export async function ownTarget(extraArgs: string[] = [], nodeArgs: string[] = []): Promise<Target & { server: BenchServer }> {
  const s = await startBenchServer(extraArgs, nodeArgs);
  return { label: 'ours', host: '127.0.0.1', port: s.port, token: s.token, ca: s.ca, pid: s.pid, namespace: 'default', mtlsPort: s.mtlsPort, dataDir: s.dataDir, server: s, stop: () => s.stop() };
}

/**
 * Our server on a local etcd the bench starts for it (Debian's etcd-server, fresh data in a temporary
 * directory), labelled "etcd"; stopping it stops that etcd too.
 */
export async function ownEtcdTarget(extraArgs: string[] = [], nodeArgs: string[] = []): Promise<Target & { server: BenchServer }> {
  const { etcdMissing, startEtcd } = await import('../test/lib/etcd.js');
  if (etcdMissing) throw new Error(`--storage etcd: ${etcdMissing}`);
  const etcd = await startEtcd();
  try {
    const t = await ownTarget(['--storage-backend=etcd3', `--etcd-servers=${etcd.servers}`, ...extraArgs], nodeArgs);
    return { ...t, label: 'etcd', stop: async () => { await t.stop(); await etcd.stop(); } };
  } catch (e) {
    await etcd.stop();
    throw e;
  }
}

export interface RemoteOptions {
  url?: string;
  token?: string;
  kubeconfig?: string;
  /** Skip verification of the server's certificate (a reference server with a self-signed one). */
  insecure?: boolean;
  caFile?: string;
  /** --target-pid: the server's process first (its CPU is reported), then any others whose RSS adds to it (etcd). */
  pids?: number[];
}

/** Reads server, CA and credentials from a kubeconfig's current context. */
export function readKubeconfig(file: string): { server: string; ca?: string; token?: string; cert?: string; key?: string; insecure?: boolean } {
  const kc = YAML.parse(readFileSync(file, 'utf8')) as any;
  const ctxName = kc['current-context'] ?? kc.contexts?.[0]?.name;
  const ctx = kc.contexts?.find((c: any) => c.name === ctxName)?.context ?? {};
  const cluster = kc.clusters?.find((c: any) => c.name === ctx.cluster)?.cluster ?? kc.clusters?.[0]?.cluster;
  const user = kc.users?.find((u: any) => u.name === ctx.user)?.user ?? kc.users?.[0]?.user ?? {};
  if (!cluster?.server) throw new Error(`${file}: no cluster server in the current context`);
  const data = (inline: string | undefined, fileRef: string | undefined) =>
    inline ? Buffer.from(inline, 'base64').toString('utf8') : fileRef ? readFileSync(fileRef, 'utf8') : undefined;
  return {
    server: cluster.server,
    ca: data(cluster['certificate-authority-data'], cluster['certificate-authority']),
    insecure: cluster['insecure-skip-tls-verify'] === true,
    token: user.token ?? (user.tokenFile ? readFileSync(user.tokenFile, 'utf8').trim() : undefined),
    cert: data(user['client-certificate-data'], user['client-certificate']),
    key: data(user['client-key-data'], user['client-key']),
  };
}

/** A running server at a URL; creates a namespace of its own for the scenarios and deletes it at stop. */
export async function remoteTarget(o: RemoteOptions): Promise<Target> {
  const kc = o.kubeconfig ? readKubeconfig(o.kubeconfig) : undefined;
  const url = new URL(o.url ?? kc?.server ?? '');
  if (url.protocol !== 'https:') throw new Error(`--target must be an https:// URL (got ${url.href})`);
  const ca = o.caFile ? readFileSync(o.caFile, 'utf8') : kc?.ca;
  const t: Target = {
    label: url.host,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port || 443),
    token: o.token ?? kc?.token ?? '',
    ca: o.insecure || kc?.insecure ? undefined : ca,
    cert: o.token ? undefined : kc?.cert,
    key: o.token ? undefined : kc?.key,
    pid: o.pids?.[0],
    pids: o.pids,
    namespace: `bench-${randomBytes(4).toString('hex')}`,
    async stop() {
      await call(t, 'DELETE', `/api/v1/namespaces/${t.namespace}`).catch(() => undefined);
    },
  };
  if (!t.token && !t.cert) throw new Error('a target needs --token, or a kubeconfig with a token or a client certificate');
  const ns = await call(t, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: t.namespace } });
  if (ns.status !== 201) throw new Error(`${t.label}: creating namespace ${t.namespace}: ${ns.status} ${ns.text.slice(0, 300)}`);
  return t;
}

/** TLS options every client of a target uses. */
export function tlsOptions(t: Target): { ca?: string; cert?: string; key?: string; rejectUnauthorized: boolean; servername?: string } {
  return { ca: t.ca, cert: t.cert, key: t.key, rejectUnauthorized: t.ca !== undefined, servername: /^[\d.:]+$/.test(t.host) ? undefined : t.host };
}

/** Authorization header line for raw HTTP clients ('' when a client certificate authenticates). */
export const authLine = (t: Target) => (t.token ? `Authorization: Bearer ${t.token}\r\n` : '');

/** One setup request (not measured). */
export function call(t: Target, method: string, p: string, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (t.token) headers.authorization = `Bearer ${t.token}`;
    if (payload) headers['content-type'] = 'application/json';
    const req = https.request({ host: t.host, port: t.port, method, path: p, headers, ...tlsOptions(t) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}
