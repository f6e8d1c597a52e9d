// The secure port's TLS front with real sockets: long request heads (tokens of several KiB, in any
// header order) reach the server whole; what Go's server (the reference's HTTP stack) refuses gets
// Go's answer and the connection closed; what Go accepts but uWS cannot parse is served.
import tls from 'node:tls';
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';

function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => s.write(request));
    let d = '';
    // cleared with the answer: a timer left running holds the process open after the last test
    const timer = setTimeout(() => { resolve('no answer'); s.destroy(); }, 10_000);
    s.on('data', (c) => { d += c; if (d.includes('\r\n\r\n')) { clearTimeout(timer); resolve(d.split('\r\n')[0]); s.destroy(); } });
    s.on('error', () => { clearTimeout(timer); resolve('error'); });
  });
}

/** Writes `request` (latin1 bytes) on a fresh TLS connection and reads until the server closes it (or 5 s pass). */
function exchange(port: number, request: string | Buffer, o: { holdOpen?: boolean } = {}): Promise<{ data: string; closed: boolean }> {
  return new Promise((resolve) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => s.write(typeof request === 'string' ? Buffer.from(request, 'latin1') : request));
    let d = '';
    let done = false;
    const finish = (closed: boolean) => { if (done) return; done = true; clearTimeout(timer); s.destroy(); resolve({ data: d, closed }); };
    s.on('data', (c: Buffer) => { d += c.toString('latin1'); });
    s.on('end', () => finish(true));
    s.on('close', () => finish(true));
    s.on('error', () => finish(true));
    const timer = setTimeout(() => finish(false), o.holdOpen ? 1500 : 5000);
  });
}
const status = (data: string) => data.split('\r\n')[0];
const body = (data: string) => data.slice(data.indexOf('\r\n\r\n') + 4);
const goError = (text: string) => `HTTP/1.1 ${text}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${text}`;

t.test('request heads of 3 KiB to 1 MiB are answered; past Go\'s limit (1 MiB + 4 KiB) the answer is 431', async (t) => {
  const s = await withServer(t);
  for (const n of [3000, 4000, 5000, 8000, 16000, 60000, 200_000]) {
    for (const [layout, head] of [
      ['token last', (tok: string) => `GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\nAuthorization: Bearer ${tok}\r\n\r\n`],
      ['token first', (tok: string) => `GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nAuthorization: Bearer ${tok}\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n`],
    ] as const) {
      t.equal(await raw(s.port, head('a'.repeat(n))), 'HTTP/1.1 401 Unauthorized', `${n}-byte token, ${layout}: 401`);
    }
  }
  t.equal(await raw(s.port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(1_000_000)}\r\n\r\n`), 'HTTP/1.1 403 Forbidden', 'a 1 MB header: served (anonymous)');
  const big = await exchange(s.port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(1_100_000)}\r\n\r\n`);
  t.equal(big.data, goError('431 Request Header Fields Too Large'));
  t.ok(big.closed, 'and the connection closed');
  const ok = await s.get('/api/v1/namespaces/default');
  t.equal(ok.status, 200, 'the server serves on after');
});

t.test('malformed requests get the answer of Go\'s server and the connection closes', async (t) => {
  const s: TestServer = await withServer(t);
  const H = `Host: 127.0.0.1:${s.port}\r\nAuthorization: Bearer ${s.token}\r\n`;
  const cm = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
  // request smuggling: two different lengths, the "body" holds a second request that must never run
  const smuggled = `GET /api/v1/namespaces/default/configmaps HTTP/1.1\r\n${H}\r\n`;
  const body5 = cm('smuggle-a');
  const two = await exchange(s.port, `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: ${body5.length}\r\nContent-Length: 5\r\n\r\n${body5}${smuggled}`);
  t.equal(two.data, goError('400 Bad Request'), 'two different Content-Length: one 400, nothing else');
  t.ok(two.closed);
  t.equal((await s.get('/api/v1/namespaces/default/configmaps/smuggle-a')).status, 404, 'the body was never used');
  const te = await exchange(s.port, `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n${H}Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n${smuggled}`);
  t.equal(te.data, 'HTTP/1.1 501 Not Implemented\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nUnsupported transfer encoding');
  t.ok(te.closed);
  t.equal((await exchange(s.port, `POST /x HTTP/1.1\r\n${H}Transfer-Encoding: gzip\r\n\r\n`)).data, 'HTTP/1.1 501 Not Implemented\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nUnsupported transfer encoding');
  for (const [what, req, answer] of [
    ['a path without /', `GET api/v1/namespaces HTTP/1.1\r\n${H}\r\n`, goError('400 Bad Request')],
    ['a control character in a value', `GET /api HTTP/1.1\r\n${H}X-A: a\x01b\r\n\r\n`, goError('400 Bad Request')],
    ['a bare CR in a value', `GET /api HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer x\rAuthorization: Bearer ${s.token}\r\n\r\n`, goError('400 Bad Request')],
    ['a header name with "("', `GET /api HTTP/1.1\r\n${H}X(A): b\r\n\r\n`, goError('400 Bad Request')],
    ['a space before the colon', `GET /api HTTP/1.1\r\n${H}X-A : b\r\n\r\n`, goError('400 Bad Request: invalid header name')],
    ['no Host', `GET /api HTTP/1.1\r\nAuthorization: Bearer ${s.token}\r\n\r\n`, goError('400 Bad Request: missing required Host header')],
    ['HTTP/2.0 in an HTTP/1 request line', `GET /api HTTP/2.0\r\n${H}\r\n`, goError('505 HTTP Version Not Supported: unsupported protocol version')],
    ['a request line of garbage', 'hello there\r\n\r\n', goError('400 Bad Request')],
  ] as const) {
    const r = await exchange(s.port, req);
    t.equal(r.data, answer, what);
    t.ok(r.closed, `${what}: closed`);
  }
  const expect = await exchange(s.port, `PUT /api HTTP/1.1\r\n${H}Expect: the-unexpected\r\nContent-Length: 2\r\n\r\nhi`);
  t.match(expect.data, /^HTTP\/1\.1 417 Expectation Failed\r\nConnection: close\r\nDate: .* GMT\r\nContent-Length: 0\r\n\r\n$/);
  t.equal((await s.get('/readyz')).status, 200);
});

t.test('what Go accepts and uWS cannot parse is served', async (t) => {
  const s: TestServer = await withServer(t);
  const H = `Host: 127.0.0.1:${s.port}\r\nAuthorization: Bearer ${s.token}\r\nAccept: application/json\r\n`;
  const json = (d: string) => JSON.parse(body(d));
  // 60 header lines (uWS takes 48)
  const many = Array.from({ length: 60 }, (_, i) => `X-Pad-${i}: ${i}\r\n`).join('');
  let r = await exchange(s.port, `GET /api/v1/namespaces/default HTTP/1.1\r\n${H}${many}Connection: close\r\n\r\n`);
  t.equal(status(r.data), 'HTTP/1.1 200 OK', '60 header lines');
  t.equal(json(r.data).metadata.name, 'default');
  // bare LF line ends
  r = await exchange(s.port, `GET /api/v1/namespaces/default HTTP/1.1\n${H.replaceAll('\r\n', '\n')}Connection: close\n\n`);
  t.equal(status(r.data), 'HTTP/1.1 200 OK', 'bare LF line ends');
  // HTTP/1.0: served once, then the connection closes
  r = await exchange(s.port, `GET /api/v1/namespaces/default HTTP/1.0\r\nAuthorization: Bearer ${s.token}\r\nAccept: application/json\r\n\r\n`);
  t.equal(status(r.data), 'HTTP/1.0 200 OK', 'HTTP/1.0 is served, answered as HTTP/1.0 (as Go does)');
  t.equal(json(r.data).metadata.name, 'default');
  t.ok(r.closed, 'and the connection closes after the answer');
  // an HTTP/1.0 watch: the events without chunked framing, the end of the body is the end of the connection
  r = await exchange(s.port, `GET /api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1 HTTP/1.0\r\nAuthorization: Bearer ${s.token}\r\nAccept: application/json\r\n\r\n`);
  t.equal(status(r.data), 'HTTP/1.0 200 OK');
  t.notMatch(r.data, /transfer-encoding/i);
  const events = body(r.data).split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  t.ok(events.length >= 1 && events.every((e) => e.type === 'ADDED'), `watch events as plain JSON lines (${events.length})`);
  t.ok(r.closed);
  // unknown methods reach authorization and the router, as on the reference
  r = await exchange(s.port, `PROPFIND /api/v1/namespaces/default/secrets HTTP/1.1\r\n${H}Connection: close\r\n\r\n`);
  t.equal(status(r.data), 'HTTP/1.1 405 Method Not Allowed', 'PROPFIND as system:masters: 405');
  t.match(json(r.data), { kind: 'Status', code: 405, reason: 'MethodNotAllowed' });
  r = await exchange(s.port, `PROPFIND /api/v1/namespaces/default/secrets HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  t.equal(status(r.data), 'HTTP/1.1 403 Forbidden', 'PROPFIND as anonymous: 403');
  t.match(json(r.data).message, /cannot propfind resource "secrets"/);
  // an absolute-form target
  r = await exchange(s.port, `GET https://127.0.0.1:${s.port}/api/v1/namespaces/default HTTP/1.1\r\n${H}Connection: close\r\n\r\n`);
  t.equal(json(r.data).metadata.name, 'default', 'absolute-form target');
  // percent-encoded Impersonate-Extra keys (header names with '.' and '%')
  const review = JSON.stringify({ apiVersion: 'authentication.cluster.io/v1', kind: 'SelfSubjectReview' });
  r = await exchange(s.port, `POST /apis/authentication.cluster.io/v1/selfsubjectreviews HTTP/1.1\r\n${H}Connection: close\r\nContent-Type: application/json\r\nImpersonate-User: someone\r\nImpersonate-Extra-Example.com%2Fscopes: view\r\nImpersonate-Extra-Example.com%2Fscopes: edit\r\nContent-Length: ${review.length}\r\n\r\n${review}`);
  t.equal(status(r.data), 'HTTP/1.1 201 Created', r.data.slice(0, 300));
  t.same(json(r.data).status?.userInfo?.extra, { 'example.com/scopes': ['view', 'edit'] }, 'the key percent-decoded, both values');
  // a Content-Length of 10+ digits (uWS closes on it; Go reads it): the kernel's 413, then the connection closes
  r = await exchange(s.port, `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n{"a":`);
  t.equal(status(r.data), 'HTTP/1.1 413 Request Entity Too Large', r.data.slice(0, 200));
  t.match(json(r.data), { kind: 'Status', code: 413 });
  t.ok(r.closed);
  // a forged stand-in header is never honoured
  r = await exchange(s.port, `GET /api/v1/namespaces/default HTTP/1.1\r\n${H}x-apiserver-front-head: 1.1\r\nConnection: close\r\n\r\n`);
  t.equal(json(r.data).metadata.name, 'default', 'a client\'s x-apiserver-front-head is dropped');
  // keep-alive: a stashed request between plain ones on one connection
  const plain = `GET /api/v1/namespaces/default HTTP/1.1\r\n${H}\r\n`;
  r = await exchange(s.port, `${plain}GET /api/v1/namespaces/default HTTP/1.1\r\n${H}X.Dotted: 1\r\n\r\n${plain}`, { holdOpen: true });
  t.equal(r.data.split('HTTP/1.1 200 OK').length - 1, 3, 'three answers in order on one connection');
});
