// Test helper: real etcd members (Debian's etcd-server package) on loopback ports with temporary data
// directories. Tests that need etcd skip with a message when the binary is absent (etcdMissing).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { withServer, type TestServer } from './server.js';

const bin = spawnSync('sh', ['-c', 'command -v etcd'], { encoding: 'utf8' }).stdout.trim();

/** A reason to skip, or false when etcd can be started. */
export const etcdMissing: string | false = bin ? false : 'etcd is not installed (apt-get install etcd-server)';

/** A free loopback port (bound and released: the usual small race is acceptable in tests). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface EtcdMember {
  name: string;
  clientUrl: string;
  peerUrl: string;
  dataDir: string;
  proc: ChildProcess | undefined;
  logs: string[];
  /** (Re)starts the process on the same ports and data; resolves when it serves clients. */
  start(): Promise<void>;
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<void>;
}

export interface EtcdCluster {
  members: EtcdMember[];
  /** Comma-separated client URLs, the --etcd-servers value. */
  servers: string;
  stop(): Promise<void>;
}

async function waitServing(m: EtcdMember, timeoutMs = 20_000): Promise<void> {
  const url = new URL(m.clientUrl);
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (m.proc?.exitCode !== null && m.proc?.exitCode !== undefined) throw new Error(`etcd ${m.name} exited: ${m.logs.slice(-20).join('')}`);
    const ok = await new Promise<boolean>((resolve) => {
      const req = net.connect(Number(url.port), url.hostname, () => {
        // /health answers once the member serves (with a leader, in a cluster)
        req.write(`GET /health HTTP/1.0\r\nHost: ${url.host}\r\n\r\n`);
      });
      let body = '';
      req.on('data', (d) => { body += d.toString(); });
      req.on('end', () => resolve(/"health":\s*"true"/.test(body)));
      req.on('error', () => resolve(false));
      req.setTimeout(1000, () => { req.destroy(); resolve(false); });
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`etcd ${m.name} did not become healthy: ${m.logs.slice(-20).join('')}`);
}

/**
 * Starts `size` etcd members forming one cluster on loopback ports. `dataDir` keeps the data
 * (reopening the same dir continues the same cluster); by default a temporary directory is used and
 * removed by stop().
 */
export async function startEtcd(opts: { size?: number; dataDir?: string; args?: string[] } = {}): Promise<EtcdCluster> {
  const size = opts.size ?? 1;
  const root = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'capi-etcd-'));
  const members: EtcdMember[] = [];
  for (let i = 0; i < size; i++) {
    const name = `m${i}`;
    members.push({
      name, clientUrl: `http://127.0.0.1:${await freePort()}`, peerUrl: `http://127.0.0.1:${await freePort()}`,
      dataDir: path.join(root, name), proc: undefined, logs: [],
      start: undefined as never, kill: undefined as never,
    });
  }
  const initial = members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
  for (const m of members) {
    m.start = async () => {
      const args = [
        '--name', m.name, '--data-dir', m.dataDir,
        '--listen-client-urls', m.clientUrl, '--advertise-client-urls', m.clientUrl,
        '--listen-peer-urls', m.peerUrl, '--initial-advertise-peer-urls', m.peerUrl,
        '--initial-cluster', initial, '--initial-cluster-state', 'new', '--initial-cluster-token', path.basename(root),
        '--heartbeat-interval', '50', '--election-timeout', '500', '--logger', 'zap', '--log-level', 'error',
        ...(opts.args ?? []),
      ];
      m.logs = [];
      const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      m.proc = proc;
      proc.stdout!.on('data', (d: Buffer) => m.logs.push(d.toString()));
      proc.stderr!.on('data', (d: Buffer) => m.logs.push(d.toString()));
    };
    m.kill = async () => {
      const p = m.proc;
      if (!p || p.exitCode !== null || p.signalCode !== null) return;
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGKILL');
      await exited;
    };
  }
  for (const m of members) await m.start();
  await Promise.all(members.map((m) => waitServing(m)));
  for (const m of members) {
    const start = m.start;
    m.start = async () => { await start(); await waitServing(m); };
  }
  return {
    members,
    servers: members.map((m) => m.clientUrl).join(','),
    async stop() {
      await Promise.all(members.map((m) => m.kill()));
      if (!opts.dataDir) rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Starts another server replica with `a`'s credentials (CA, serving and signing key, tokens) in a data directory of its own. */
export async function replicaOf(t: { teardown(fn: () => unknown): void }, a: TestServer, args: string[]): Promise<TestServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-'));
  cpSync(path.join(a.dataDir, 'pki'), path.join(dir, 'pki'), { recursive: true });
  return withServer(t, { args, dataDir: dir });
}

/** Short leader-election timings for tests (seconds). */
export const TEST_LEASE = { duration: 3, renew: 2, retry: 0.5 };

/**
 * An etcd cluster of `size` members and two server replicas on it (B with A's credentials), with
 * TEST_LEASE timings; everything is stopped when the test ends.
 */
export async function etcdReplicas(t: { teardown(fn: () => unknown): void }, size = 1): Promise<{ etcd: EtcdCluster; a: TestServer; b: TestServer }> {
  const etcd = await startEtcd({ size });
  t.teardown(() => etcd.stop());
  const L = TEST_LEASE;
  const args = ['--storage-backend=etcd3', `--etcd-servers=${etcd.servers}`,
    `--leader-elect-lease-duration=${L.duration}s`, `--leader-elect-renew-deadline=${L.renew}s`, `--leader-elect-retry-period=${L.retry * 1000}ms`];
  const a = await withServer(t, { args });
  return { etcd, a, b: await replicaOf(t, a, args) };
}

/** Path of a namespace's configmaps, or of one. */
export const cmPath = (ns: string, name?: string) => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;
