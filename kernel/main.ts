#!/usr/bin/env node
// cluster-apiserver: parse flags and the configuration file, start the server, stop it gracefully on SIGTERM.
import { loadConfig } from './config.js';
import { Server } from './server.js';

async function main() {
  let config;
  try {
    config = await loadConfig(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`cluster-apiserver: ${(e as Error).message}\n`);
    process.exit(2);
  }
  let server: Server;
  try {
    server = new Server(config);
    await server.start();
  } catch (e) {
    process.stderr.write(`cluster-apiserver: start-up failed: ${(e as Error).message}\n`);
    process.exit(1);
  }
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
