// Start-up of a filled data directory, in this process: seconds until the server serves, the CPU it
// took (all threads, and the event loop's alone: on a shared machine the steadier figure), the load
// average, and memory after a full garbage collection (what the cache and the log hold, without garbage).
//
//   npm run -s build && node --expose-gc dist/bench/startup.js <data-dir> [<another build's dist/>]
//
// The data directory comes from `npm run bench -- restart` (see --keep-data-dir there) or any stopped
// server's. A second argument starts that build's Server instead, so two builds compare on the same data.
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { existsSync } from 'node:fs';
import { procThreadCpuSeconds } from './lib.js';

const [dataDir, otherDist] = process.argv.slice(2);
if (!dataDir) {
  process.stderr.write('usage: node --expose-gc dist/bench/startup.js <data-dir> [<dist/ of another build>]\n');
  process.exit(2);
}
const dist = otherDist ? path.resolve(otherDist) : path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
// Builds before the kernel's folders (ops/) kept config.js at the top of kernel/.
const configJs = ['kernel/ops/config.js', 'kernel/config.js'].map((p) => path.join(dist, p)).find((p) => existsSync(p))!;
const { loadConfig } = await import(pathToFileURL(configJs).href);
const { Server } = await import(pathToFileURL(path.join(dist, 'kernel/server.js')).href);

/** CPU seconds of this process's main thread (the event loop), from /proc. */
const mainThreadCpu = () => procThreadCpuSeconds(process.pid).main;
const cpu0 = process.cpuUsage();
const main0 = mainThreadCpu();
const t0 = performance.now();
const server = new Server(await loadConfig(['--data-dir', dataDir, '--secure-port', '0', '--logging-format=json', '-v=0']));
await server.start();
const seconds = (performance.now() - t0) / 1000;
// every thread (garbage collector helpers and LevelDB's included), and the event loop's alone
const cpu = process.cpuUsage(cpu0);
const mainCpu = mainThreadCpu() - main0;
// twice: the first pass frees what finalizers then release
for (let i = 0; i < 2; i++) (globalThis as { gc?: () => void }).gc?.();
const m = process.memoryUsage();
const mib = (n: number) => Math.round(n / 1048576);
process.stdout.write(`${JSON.stringify({ build: dist, startSeconds: Number(seconds.toFixed(2)), cpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)), mainThreadCpuSeconds: Number(mainCpu.toFixed(2)), loadAverage: os.loadavg()[0].toFixed(2), rssMiB: mib(m.rss), heapUsedMiB: mib(m.heapUsed), arrayBuffersMiB: mib(m.arrayBuffers), gc: !!(globalThis as { gc?: unknown }).gc })}\n`);
await server.stop();
process.exit(0);
