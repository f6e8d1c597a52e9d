// Streams a request's answer from an upstream HTTPS endpoint (a node agent) to the client, with
// backpressure both ways: the upstream is paused while the client's socket is backed up.
import https from 'node:https';
import type { KResponse } from './http/types.js';
import type { UpstreamTarget } from './contracts.js';
import { StatusError } from './status.js';

const PASSED_HEADERS = ['content-type', 'content-length', 'cache-control'];

export function proxyStream(res: KResponse, method: string, target: UpstreamTarget): Promise<void> {
  return new Promise((resolve, reject) => {
    const url = new URL(target.url);
    const up = https.request(url, {
      method, ca: target.ca, cert: target.cert, key: target.key, rejectUnauthorized: !!target.ca,
      headers: { accept: '*/*' },
    }, (ur) => {
      const headers: Record<string, string> = {};
      for (const h of PASSED_HEADERS) if (typeof ur.headers[h] === 'string' && h !== 'content-length') headers[h] = ur.headers[h] as string;
      res.start(ur.statusCode ?? 502, headers);
      ur.on('data', (c: Buffer) => { if (!res.write(c)) ur.pause(); });
      res.onDrain(() => ur.resume());
      ur.on('end', () => { res.end(); resolve(); });
      ur.on('error', () => { res.end(); resolve(); });
    });
    res.onClose(() => up.destroy());
    up.on('error', (e) => {
      const verb = method.charAt(0) + method.slice(1).toLowerCase();
      reject(new StatusError(500, 'InternalError', `${verb} ${JSON.stringify(target.url)}: ${e.message}`, { causes: [{ message: e.message }] }));
    });
    up.end();
  });
}
