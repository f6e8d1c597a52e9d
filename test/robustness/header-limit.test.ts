// Request heads up to the reference's limit (Go's MaxHeaderBytes, 1 MiB in kube-apiserver) are served
// on node:https as on the default port — the --mtls-port listener, and the secure port on a Node.js
// without a uWebSockets.js binary (Node 22 and later; CAPI_TEST_NODE) — and past it refused 431.
import t from 'tap';
import tls from 'node:tls';
import { nodeUnderTest, withServer, type TestServer } from '../lib/server.js';

/** The status line of the answer to a raw request on a fresh TLS connection ('closed' if none came). */
function statusLine(port: number, request: string): Promise<string> {
  return new Promise((resolve) => {
    const c = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => c.write(request));
    let d = '';
    c.on('data', (x: Buffer) => { d += x.toString('latin1'); if (d.includes('\r\n')) { resolve(d.split('\r\n')[0]); c.destroy(); } });
    c.on('close', () => resolve(d.split('\r\n')[0] || 'closed'));
    c.on('error', () => undefined);
  });
}

const cases: [string, { node?: string; mtls: boolean } | undefined][] = [
  ['--mtls-port (node:https)', { mtls: true }],
  ['the secure port on node:https (CAPI_TEST_NODE)', nodeUnderTest ? { node: nodeUnderTest, mtls: false } : undefined],
];

for (const [name, c] of cases) {
  t.test(`${name}: heads up to 1 MiB are served, larger ones get 431`, { skip: c ? false : 'set CAPI_TEST_NODE to a Node.js without a uWebSockets.js binary (Node 22)' }, async (t) => {
    const s: TestServer = await withServer(t, { node: c!.node, args: c!.mtls ? ['--mtls-port', '0'] : [] });
    const port = c!.mtls ? s.mtlsPort : s.port;
    const get = (pad: number) => `GET /api/v1/namespaces/default HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${s.token}\r\nX-Pad: ${'a'.repeat(pad)}\r\nConnection: close\r\n\r\n`;
    for (const pad of [20_000, 200_000, 1_000_000]) t.equal(await statusLine(port, get(pad)), 'HTTP/1.1 200 OK', `a ${pad}-byte header: served`);
    t.match(await statusLine(port, get(1_100_000)), /^HTTP\/1\.1 431 /, 'past 1 MiB + 4 KiB: 431');
  });
}
