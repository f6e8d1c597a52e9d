// The library form: a server started and stopped inside the caller's process (a test suite's), as
// `import { startServer } from 'cluster-apiserver'` gives it (kernel/embed.ts supplies the Server).
// Each call is a server of its own: its own data directory, port, store, plugins and timers.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configFromObject, type Config, type FileConfig, type PluginRef } from './config.js';
import type { CommandServer } from './cli.js';

export interface StartOptions {
  /** Names the API is served under (default `kubernetes`, which stock clients expect; `cluster` is the command's default). */
  brand?: string;
  /** What a configuration file holds (enableControllers: simulated nodes, the scheduler...; plugins, feature gates), over the defaults. */
  config?: FileConfig;
  /** Where the PKI, kubeconfigs and store live (kept); default a new temporary directory that stop() removes. */
  dataDir?: string;
  /** The memory-only store (plugins/storage/memory): nothing written to disk for objects, nothing survives stop(). */
  memory?: boolean;
  /** The HTTPS port on 127.0.0.1 (default 0: a free one). */
  port?: number;
  /** Where log lines go; default: warnings and errors to standard error. */
  log?: (line: string) => void;
}

export interface EmbeddedServer {
  /** https://127.0.0.1:<port> */
  url: string;
  port: number;
  /** The admin kubeconfig (token, CA and server), as text, and where it is written. */
  kubeconfig: string;
  kubeconfigPath: string;
  /** The admin's bearer token (group system:masters). */
  token: string;
  /** The CA certificate (PEM) that signed the serving certificate. */
  ca: string;
  dataDir: string;
  /** Stops serving and releases the port, timers and threads; removes a temporary data directory. */
  stop(): Promise<void>;
}

/** What startEmbedded needs of a server beyond what the command line does. */
export interface EmbeddableServer extends CommandServer {
  readonly port: number;
  readonly adminToken: string;
  readonly caFile: string;
}

/** Servers started here and not yet stopped: the process-wide worker pool is released with the last. */
let running = 0;

const warningsOnly = (line: string) => { if (!/^I\d|"level":"info"/.test(line)) process.stderr.write(line); };

/** The configuration startServer's options describe. */
export function embeddedConfig(o: StartOptions, dataDir: string): Config {
  const given = o.config ?? {};
  const fixed: { dataDir: string; securePort: number; brand: string; storage?: PluginRef } = { dataDir, securePort: o.port ?? 0, brand: o.brand ?? given.brand ?? 'kubernetes' };
  if (o.memory) fixed.storage = given.storage?.plugin === 'memory' ? given.storage : { plugin: 'memory' };
  const config = configFromObject(given, fixed);
  // a function cannot reach read loops' threads: theirs log to standard error
  if (!(config.readLoops > 0)) config.log = o.log ?? warningsOnly;
  return config;
}

/**
 * Starts a server in this process; resolves once it serves. `releaseShared` frees what all servers
 * in the process share (the worker pool) and runs when the last of them stops.
 */
export async function startEmbedded(o: StartOptions, make: (config: Config) => EmbeddableServer, releaseShared: () => Promise<void>): Promise<EmbeddedServer> {
  const temporary = o.dataDir === undefined;
  const dataDir = path.resolve(o.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'cluster-apiserver-')));
  const removeTemporary = () => { if (temporary) rmSync(dataDir, { recursive: true, force: true }); };
  let server: EmbeddableServer;
  // the server makes what it writes private (umask 077); the caller's process keeps its own umask
  const umask = process.umask();
  running++;
  const release = async () => {
    removeTemporary();
    if (--running === 0) await releaseShared();
  };
  try {
    server = make(embeddedConfig(o, dataDir));
    try {
      await server.start();
    } catch (e) {
      await server.stop().catch(() => undefined);
      throw e;
    }
  } catch (e) {
    await release();
    throw e;
  } finally {
    process.umask(umask);
  }
  let stopped: Promise<void> | undefined;
  return {
    url: server.url,
    port: server.port,
    kubeconfigPath: server.kubeconfigPath,
    kubeconfig: readFileSync(server.kubeconfigPath, 'utf8'),
    token: server.adminToken,
    ca: readFileSync(server.caFile, 'utf8'),
    dataDir,
    stop: () => (stopped ??= server.stop().finally(release)),
  };
}
