// A /readyz prober on its own thread, for tests that ask whether the server's event loop was held:
// probes go back to back on one keep-alive connection, each recorded as (sent, answered, status) in
// epoch milliseconds. On its own thread, the test's own work (building and reading large bodies)
// does not delay it.
import { Worker } from 'node:worker_threads';
import type { TestServer } from './server.js';

const PROBER = `
const { parentPort, workerData } = require('node:worker_threads');
const https = require('node:https');
const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
let running = true;
const waits = [];
parentPort.on('message', () => { running = false; });
const one = () => new Promise((resolve) => {
  const sent = performance.now() + performance.timeOrigin;
  https.get({ host: '127.0.0.1', port: workerData.port, path: '/readyz', ca: workerData.ca, agent }, (res) => {
    res.resume();
    res.on('end', () => { waits.push([sent, performance.now() + performance.timeOrigin, res.statusCode]); resolve(); });
  }).on('error', () => resolve());
});
(async () => {
  while (running) { await one(); await new Promise((r) => setTimeout(r, workerData.pauseMs)); }
  agent.destroy();
  parentPort.postMessage(waits);
})();
`;

/** One probe: when it was sent and answered (epoch ms, as `clock`), and its status. */
export type Probe = [sent: number, answered: number, status: number];

/** Starts probing `s`'s /readyz, pausing `pauseMs` between probes, until stopped. */
export function probeReadyz(s: TestServer, pauseMs: number): { stop(): Promise<Probe[]> } {
  const w = new Worker(PROBER, { eval: true, workerData: { port: s.port, ca: s.ca.toString(), pauseMs } });
  const result = new Promise<Probe[]>((resolve) => w.once('message', resolve));
  return { async stop() { w.postMessage('stop'); const r = await result; await w.terminate(); return r; } };
}

/** The prober's clock (epoch milliseconds with sub-millisecond precision), for the test's own times. */
export const clock = () => performance.now() + performance.timeOrigin;
