// Request smuggling on every transport: a request framed by both Transfer-Encoding and Content-Length
// whose Content-Length span hides a second request after the empty chunked body. A proxy in front
// that honours Content-Length passes the hidden request as body; a server that honours the chunked
// framing and keeps the connection would serve it. RFC 9112 section 6.1: the answer is 400 and the
// connection closes, so the hidden request never runs — written here as raw bytes on a TLS socket.
import t from 'tap';
import tls from 'node:tls';
import { nodeUnderTest, withServer, type StartOptions } from '../lib/server.js';

/** Writes `request` on a fresh TLS connection; what came back, and whether the server closed it (within 5 s). */
function exchange(port: number, request: string): Promise<{ data: string; closed: boolean }> {
  return new Promise((resolve) => {
    const c = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => c.write(Buffer.from(request, 'latin1')));
    let data = '';
    let done = false;
    const finish = (closed: boolean) => { if (done) return; done = true; clearTimeout(timer); c.destroy(); resolve({ data, closed }); };
    c.on('data', (d: Buffer) => { data += d.toString('latin1'); });
    c.on('close', () => finish(true));
    c.on('error', () => finish(true));
    const timer = setTimeout(() => finish(false), 5000);
  });
}

const transports: [string, StartOptions | undefined][] = [
  ['TLS front (the default)', {}],
  ['uWebSockets.js on the port', { args: ['--secure-port-client-certs=false'] }],
  ['read loops behind the front', { args: ['--read-loops', '1'] }],
  ['read loops sharing the port', { args: ['--read-loops', '1', '--secure-port-client-certs=false'] }],
  ['node:https (CAPI_TEST_NODE)', nodeUnderTest ? { node: nodeUnderTest } : undefined],
];

for (const [name, opts] of transports) {
  t.test(`${name}: Transfer-Encoding with Content-Length is refused and the connection closed`, { skip: opts ? false : 'set CAPI_TEST_NODE to a Node.js without a uWebSockets.js binary (Node 22)' }, async (t) => {
    const s = await withServer(t, opts);
    const H = `Host: 127.0.0.1:${s.port}\r\nAuthorization: Bearer ${s.token}\r\nContent-Type: application/json\r\n`;
    let n = 0;
    // each shape a few times on fresh connections: with read loops they land on different threads
    for (const teFirst of [false, true]) {
      for (let i = 0; i < 3; i++) {
        const hiddenName = `smuggled-${n++}`;
        const cm = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: hiddenName } });
        const hidden = `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n${H}Content-Length: ${cm.length}\r\n\r\n${cm}`;
        const chunked = '0\r\n\r\n';
        const framing = [`Content-Length: ${chunked.length + hidden.length}`, 'Transfer-Encoding: chunked'];
        if (teFirst) framing.reverse();
        const r = await exchange(s.port, `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n${H}${framing.join('\r\n')}\r\n\r\n${chunked}${hidden}`);
        const statuses = [...r.data.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));
        t.ok(r.closed, `${framing[0]} first (#${i}): the connection is closed`);
        t.ok(statuses.length <= 1 && statuses.every((c) => c === 400), `at most one answer, 400 (got ${statuses.join(', ') || 'none'})`);
        t.equal((await s.get(`/api/v1/namespaces/default/configmaps/${hiddenName}`)).status, 404, 'the hidden request never ran');
      }
    }
    t.equal((await s.get('/readyz')).status, 200, 'the server serves on');
  });
}
