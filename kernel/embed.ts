// The library entry point (`import { startServer } from 'cluster-apiserver'`); ops/embed.ts has the rest.
import { startEmbedded, type EmbeddedServer, type StartOptions } from './ops/embed.js';
import { closeWorkers } from '../workers/pool.js';
import { Server } from './server.js';

export type { EmbeddedServer, StartOptions } from './ops/embed.js';
export type { FileConfig } from './ops/config.js';
export const startServer = (options: StartOptions = {}): Promise<EmbeddedServer> => startEmbedded(options, (config) => new Server(config), closeWorkers);
