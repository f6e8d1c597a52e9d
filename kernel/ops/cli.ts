// The command line: parse flags and the configuration file, start the server, stop it gracefully on
// SIGTERM; `cluster-apiserver repair [flags]` salvages a damaged embedded store instead (the server
// stopped). The server itself comes from the caller (kernel/main.ts), which this layer may not import.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, type Config } from './config.js';
import { repairCommand } from './repair.js';
import { boundOldGeneration, boundYoungGeneration } from './settle.js';
import type { ServerLogger } from './logging.js';

/** What the command line needs of a server. */
export interface CommandServer {
  readonly url: string;
  readonly brand: { name: string };
  readonly config: Config;
  readonly kubeconfigPath: string;
  readonly log: ServerLogger;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** What a person needs after start: where it serves and how to talk to it. */
function welcome(server: CommandServer): string {
  const kubeconfig = path.resolve(server.kubeconfigPath);
  const lines = [
    `cluster-apiserver is serving ${server.url} (brand ${server.brand.name}, data directory ${path.resolve(server.config.dataDir)})`,
    `  kubeconfig: ${kubeconfig} (user admin, group system:masters)`,
    `  try:        kubectl --kubeconfig ${kubeconfig} get namespaces`,
  ];
  if (server.brand.name !== 'kubernetes') lines.push('  stock kubectl and client libraries expect the Kubernetes names: serve a new data directory with --brand kubernetes for them');
  return lines.join('\n') + '\n';
}

export async function runCommand(argv: string[], makeServer: (config: Config) => CommandServer): Promise<void> {
  const isRepair = argv[0] === 'repair';
  let config;
  try {
    config = await loadConfig(isRepair ? argv.slice(1) : argv);
  } catch (e) {
    process.stderr.write(`cluster-apiserver: ${(e as Error).message}\n`);
    process.exit(2);
  }
  // --ephemeral: the temporary data directory goes with the process, however it ends (short of SIGKILL)
  if (config.ephemeral) process.once('exit', () => rmSync(config.dataDir, { recursive: true, force: true }));
  if (isRepair) {
    try {
      await repairCommand(config);
    } catch (e) {
      process.stderr.write(`cluster-apiserver repair: ${(e as Error).message}\n`);
      process.exit(1);
    }
    return;
  }
  // The heap in bounds while writes come (settle.ts): the young generation's from start-up on, the
  // old one's once the store is loaded. V8's flags are the process's: read loops' heaps share them.
  boundYoungGeneration();
  let server: CommandServer | undefined;
  let serving = false;
  let stopping = false;
  // Handled from before start-up on: a signal without a handler ends the process at once, skipping the
  // exit handlers (the lock, --ephemeral's directory), and a harness may signal as soon as it reads
  // the printed line. During start-up the process exits with status 1 through those handlers.
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    if (!serving) {
      process.stderr.write(`cluster-apiserver: ${signal} during start-up: exiting\n`);
      process.exit(1);
    }
    server!.log.info('shutting down', { signal });
    await server!.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  try {
    server = makeServer(config);
    await server.start();
  } catch (e) {
    process.stderr.write(`cluster-apiserver: start-up failed: ${(e as Error).message}\n`);
    process.exit(1);
  }
  serving = true;
  boundOldGeneration();
  // --print-kubeconfig: stdout is the one line a harness reads; the person's welcome goes to stderr
  if (config.printKubeconfig) {
    process.stderr.write(welcome(server));
    process.stdout.write(`${path.resolve(server.kubeconfigPath)}\n`);
  } else process.stdout.write(welcome(server));
}
