#!/usr/bin/env node
// cluster-apiserver's process entry. The command line is ops/cli.ts; a read loop's thread
// (--read-loops) runs this file too and serves as replicas/thread.ts says.
import { isMainThread, workerData } from 'node:worker_threads';
import { runCommand } from './ops/cli.js';
import { runReadLoop, type LoopInit } from './replicas/thread.js';
import { Server } from './server.js';
import type { Config } from './ops/config.js';

if (isMainThread) void runCommand(process.argv.slice(2), (config) => new Server(config));
else runReadLoop(workerData as LoopInit, (config: Config, role) => new Server(config, role));
