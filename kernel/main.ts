#!/usr/bin/env node
// cluster-apiserver: parse flags and the configuration file, start the server, stop it gracefully on SIGTERM.
// `cluster-apiserver repair [flags]` salvages a damaged embedded store instead (the server stopped).
import path from 'node:path';
import { loadConfig } from './ops/config.js';
import { Server } from './server.js';
import { repairCommand } from './ops/repair.js';
import { boundOldGeneration, boundYoungGeneration } from './ops/settle.js';

/** What a person needs after start: where it serves and how to talk to it. */
function welcome(server: Server): string {
  const kubeconfig = path.resolve(server.kubeconfigPath);
  const lines = [
    `cluster-apiserver is serving ${server.url} (brand ${server.brand.name}, data directory ${path.resolve(server.config.dataDir)})`,
    `  kubeconfig: ${kubeconfig} (user admin, group system:masters)`,
    `  try:        kubectl --kubeconfig ${kubeconfig} get namespaces`,
  ];
  if (server.brand.name !== 'kubernetes') lines.push('  stock kubectl and client libraries expect the Kubernetes names: serve a new data directory with --brand kubernetes for them');
  return lines.join('\n') + '\n';
}

async function main() {
  const argv = process.argv.slice(2);
  const isRepair = argv[0] === 'repair';
  let config;
  try {
    config = await loadConfig(isRepair ? argv.slice(1) : argv);
  } catch (e) {
    process.stderr.write(`cluster-apiserver: ${(e as Error).message}\n`);
    process.exit(2);
  }
  if (isRepair) {
    try {
      await repairCommand(config);
    } catch (e) {
      process.stderr.write(`cluster-apiserver repair: ${(e as Error).message}\n`);
      process.exit(1);
    }
    return;
  }
  // The heap in bounds while writes come (kernel/ops/settle.ts); the young generation's from start-up
  // on, the old one's once the store is loaded.
  boundYoungGeneration();
  let server: Server;
  try {
    server = new Server(config);
    await server.start();
  } catch (e) {
    process.stderr.write(`cluster-apiserver: start-up failed: ${(e as Error).message}\n`);
    process.exit(1);
  }
  boundOldGeneration();
  process.stdout.write(welcome(server));
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    server!.log.info('shutting down', { signal });
    await server!.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

void main();
