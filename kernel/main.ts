#!/usr/bin/env node
// cluster-apiserver: parse flags and the configuration file, start the server, stop it gracefully on SIGTERM.
// `cluster-apiserver repair [flags]` salvages a damaged embedded store instead (the server stopped).
import path from 'node:path';
import { loadConfig, type Config } from './ops/config.js';
import { lockDataDir } from './ops/datadir.js';
import { Server } from './server.js';
import { revisionRange, StorageLog } from './store/log.js';

async function repair(config: Config): Promise<void> {
  if (config.storage.plugin !== 'embedded') throw new Error(`repair works on the embedded store; this configuration uses the storage plugin "${config.storage.plugin}"`);
  const opt = config.storage.options?.dir;
  const dir = typeof opt === 'string' ? opt : path.join(config.dataDir, 'store');
  process.umask(0o077);
  const lock = lockDataDir(config.dataDir);
  try {
    const r = await StorageLog.repair(dir);
    const out = process.stdout;
    out.write(r.damage.length ? `damage found:\n${r.damage.map((d) => `  ${d}\n`).join('')}` : 'no damage found\n');
    if (r.dropped.length) out.write(`dropped ${r.dropped.length} unreadable object record(s):\n${r.dropped.map((k) => `  ${k}\n`).join('')}`);
    if (r.lost) {
      const n = r.lost.to - r.lost.from + 1;
      out.write(`lost ${n} acknowledged write${n > 1 ? 's' : ''}: ${revisionRange(r.lost.from, r.lost.to)} (gone from the end of the write-ahead log); ` +
        (n > 1 ? 'the objects they wrote are back as they were before them (absent if created by them, present again if deleted by them)\n'
          : 'the object it wrote is back as it was before it (absent if created by it, present again if deleted by it)\n'));
    }
    out.write(`kept ${r.kept} object(s); the store continues at resource version ${r.revision}: watches and lists resumed from an older one get 410 Gone and relist\n`);
    if (r.highWaterLost) out.write('the high-water file was missing or damaged: resource versions were raised by a wide margin so none is issued twice\n');
  } finally {
    lock.release();
  }
}

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
      await repair(config);
    } catch (e) {
      process.stderr.write(`cluster-apiserver repair: ${(e as Error).message}\n`);
      process.exit(1);
    }
    return;
  }
  let server: Server;
  try {
    server = new Server(config);
    await server.start();
  } catch (e) {
    process.stderr.write(`cluster-apiserver: start-up failed: ${(e as Error).message}\n`);
    process.exit(1);
  }
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
