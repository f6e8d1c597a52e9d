// Start-up of a filled data directory, in this process: seconds until the server serves, and memory
// after a full garbage collection (what the cache and the log hold, without garbage).
//
//   npm run -s build && node --expose-gc dist/bench/startup.js <data-dir> [<another build's dist/>]
//
// The data directory comes from `npm run bench -- restart` (see --keep-data-dir there) or any stopped
// server's. A second argument starts that build's Server instead, so two builds compare on the same data.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [dataDir, otherDist] = process.argv.slice(2);
if (!dataDir) {
  process.stderr.write('usage: node --expose-gc dist/bench/startup.js <data-dir> [<dist/ of another build>]\n');
  process.exit(2);
}
const dist = otherDist ? path.resolve(otherDist) : path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const { loadConfig } = await import(pathToFileURL(path.join(dist, 'kernel/config.js')).href);
const { Server } = await import(pathToFileURL(path.join(dist, 'kernel/server.js')).href);

const t0 = performance.now();
const server = new Server(await loadConfig(['--data-dir', dataDir, '--secure-port', '0', '--logging-format=json', '-v=0']));
await server.start();
const seconds = (performance.now() - t0) / 1000;
// twice: the first pass frees what finalizers then release
for (let i = 0; i < 2; i++) (globalThis as { gc?: () => void }).gc?.();
const m = process.memoryUsage();
const mib = (n: number) => Math.round(n / 1048576);
process.stdout.write(`${JSON.stringify({ build: dist, startSeconds: Number(seconds.toFixed(2)), rssMiB: mib(m.rss), heapUsedMiB: mib(m.heapUsed), arrayBuffersMiB: mib(m.arrayBuffers), gc: !!(globalThis as { gc?: unknown }).gc })}\n`);
await server.stop();
process.exit(0);
