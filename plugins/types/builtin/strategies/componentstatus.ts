// core/v1 ComponentStatus (deprecated since 1.19, still served): computed on every read, as the
// reference's registry does — the scheduler and the controller manager probed on their loopback
// health ports, and the storage backend by the server's own storage check ("etcd-0" for the etcd3
// backend, "storage-0" for the embedded store). Components that do not run here answer as the
// reference shows them then: Unhealthy, with the dial error as the message.
import { request } from 'node:https';
import type { KObject, PluginHost } from '../../../../kernel/contracts/index.js';
import { goNetError } from '../../../lib/go-net-errors.js';

/** The reference's fixed probes (insecure HTTPS on loopback; its probe timeout is 20 s). */
const COMPONENTS: [string, number][] = [['scheduler', 10259], ['controller-manager', 10257]];
const PROBE_TIMEOUT_MS = 20_000;

type Condition = { type: 'Healthy'; status: 'True' | 'False' | 'Unknown'; message?: string; error?: string };

function status(name: string, c: Condition): KObject {
  const cond: Record<string, string> = { type: c.type, status: c.status };
  if (c.message) cond.message = c.message;
  if (c.error) cond.error = c.error;
  return { kind: 'ComponentStatus', apiVersion: 'v1', metadata: { name }, conditions: [cond] };
}

/** An HTTP probe as the reference's prober judges it: 2xx/3xx is healthy (the body is the message); anything else is not. */
function probe(port: number): Promise<Condition> {
  const host = '127.0.0.1';
  const url = `https://${host}:${port}/healthz`;
  return new Promise((resolve) => {
    const req = request({ host, port, path: '/healthz', method: 'GET', rejectUnauthorized: false, timeout: PROBE_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => { if (chunks.length < 64) chunks.push(d); });
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8').slice(0, 10_000);
        const ok = (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 400;
        resolve({ type: 'Healthy', status: ok ? 'True' : 'False', message: ok ? body : `HTTP probe failed with statuscode: ${res.statusCode}` });
      });
      res.on('error', (e) => resolve({ type: 'Healthy', status: 'False', message: `Get "${url}": ${e.message}` }));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)'), { code: 'TIMEOUT' })));
    req.on('error', (e: Error & { code?: string }) => resolve({ type: 'Healthy', status: 'False', message: `Get "${url}": ${goNetError(e, { host, port })}` }));
    req.end();
  });
}

export async function componentStatuses(host: PluginHost): Promise<KObject[]> {
  const probes = await Promise.all(COMPONENTS.map(async ([name, port]) => status(name, await probe(port))));
  const h = host.storageHealth();
  const storage = status(`${h.name}-0`, h.healthy
    ? { type: 'Healthy', status: 'True', message: 'ok' }
    : { type: 'Healthy', status: 'False', error: `${h.name} not ready` });
  return [...probes, storage];
}
