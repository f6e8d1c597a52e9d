// The TLS front's request framing and head validation (kernel/http/framer.ts): each head forwarded
// in one write, bodies by Content-Length, chunked bodies and upgrades passed through; what Go's
// server refuses answered with Go's bytes; what Go accepts but uWS cannot parse stashed for the
// main thread behind a stand-in head.
import t from 'tap';
import {
  BAD_REQUEST, DIRECT_HEAD, HEAD_REF, Http10Answer, INVALID_HEADER_NAME, MALFORMED_HOST, MAX_HEAD, MISSING_HOST, RequestFramer, TOO_LARGE,
  UNSUPPORTED_TE, VERSION_NOT_SUPPORTED, type FrontHead,
} from '../../kernel/http/framer.js';

function run(chunks: string[]) {
  const out: string[] = [];
  const stashed: FrontHead[] = [];
  let refused: string | undefined;
  const f = new RequestFramer({
    forward: (b) => { out.push(b.toString('latin1')); return true; },
    refuse: (a) => { refused = a.toString('latin1'); },
    stash: (h) => { stashed.push(h); return `ref${stashed.length}`; },
  });
  for (const c of chunks) f.push(Buffer.from(c, 'latin1'));
  return { out, refused, stashed, framer: f };
}
const one = (head: string) => run([head]);

t.test('a head split over many reads is forwarded in one write', async (t) => {
  const head = 'GET /api HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ' + 'a'.repeat(5000) + '\r\n\r\n';
  const pieces = head.match(/[\s\S]{1,700}/g)!;
  const { out } = run(pieces);
  t.same(out, [head]);
});

t.test('bodies by Content-Length, then the next head whole (pipelining)', async (t) => {
  const a = 'POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n';
  const b = 'GET /y HTTP/1.1\r\nHost: x\r\n\r\n';
  const { out } = run([a + 'he', 'llo' + b.slice(0, 10), b.slice(10)]);
  t.same(out, [a + 'he', 'llo', b]);
});

t.test('chunked bodies and upgrades make the rest pass-through', async (t) => {
  const a = 'POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n';
  const { out } = run([a, '0\r\n\r\n', 'GET /y HTTP']);
  t.same(out, [a, '0\r\n\r\n', 'GET /y HTTP']);
  const ws = 'GET /w HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n';
  t.same(run([ws + '\x81\x05', 'frame']).out, [ws + '\x81\x05', 'frame']);
});

t.test('a head over Go\'s limit (1 MiB + 4 KiB) is answered 431 and nothing is forwarded', async (t) => {
  const big = 'GET / HTTP/1.1\r\nHost: x\r\nX: ' + 'a'.repeat(MAX_HEAD) + '\r\n\r\n';
  const r = run(big.match(/[\s\S]{1,16384}/g)!);
  t.same(r.out, []);
  t.equal(r.refused, TOO_LARGE.toString('latin1'));
  t.equal(r.refused, 'HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large');
  // just under the limit: accepted, and stashed (uWS parses only heads read in one piece)
  const under = 'GET / HTTP/1.1\r\nHost: x\r\nX: ' + 'a'.repeat(MAX_HEAD - 64) + '\r\n\r\n';
  const u = run(under.match(/[\s\S]{1,16384}/g)!);
  t.equal(u.refused, undefined);
  t.equal(u.stashed.length, 1);
  t.equal(u.stashed[0].headers[1][1].length, MAX_HEAD - 64);
});

t.test('Go\'s answers to heads it refuses', async (t) => {
  const H = 'Host: x\r\n';
  const cases: [string, string, Buffer][] = [
    ['two different Content-Length', `POST /x HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhelloGET /smuggled HTTP/1.1\r\n${H}\r\n`, BAD_REQUEST],
    ['Content-Length with a sign', `POST /x HTTP/1.1\r\n${H}Content-Length: +5\r\n\r\nhello`, BAD_REQUEST],
    ['Content-Length list', `POST /x HTTP/1.1\r\n${H}Content-Length: 5, 5\r\n\r\nhello`, BAD_REQUEST],
    ['Transfer-Encoding chunked, identity', `POST /x HTTP/1.1\r\n${H}Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n`, UNSUPPORTED_TE],
    ['Transfer-Encoding gzip', `POST /x HTTP/1.1\r\n${H}Transfer-Encoding: gzip\r\n\r\n`, UNSUPPORTED_TE],
    ['two Transfer-Encoding lines', `POST /x HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n`, UNSUPPORTED_TE],
    ['path without a slash', `GET api/v1 HTTP/1.1\r\n${H}\r\n`, BAD_REQUEST],
    ['invalid escape in the path', `GET /api/%zz HTTP/1.1\r\n${H}\r\n`, BAD_REQUEST],
    ['control byte in the target', `GET /a\x01b HTTP/1.1\r\n${H}\r\n`, BAD_REQUEST],
    ['empty request line', `\r\nGET / HTTP/1.1\r\n${H}\r\n`, BAD_REQUEST],
    ['two spaces in the request line', `GET  / HTTP/1.1\r\n${H}\r\n`, BAD_REQUEST],
    ['garbage request line', `hello\r\n${H}\r\n`, BAD_REQUEST],
    ['method with a non-token byte', `GE(T / HTTP/1.1\r\n${H}\r\n`, BAD_REQUEST],
    ['malformed version', `GET / HTTP/1\r\n${H}\r\n`, BAD_REQUEST],
    ['HTTP/2.0 over HTTP/1', `GET / HTTP/2.0\r\n${H}\r\n`, VERSION_NOT_SUPPORTED],
    ['HTTP/0.9', `GET / HTTP/0.9\r\n${H}\r\n`, VERSION_NOT_SUPPORTED],
    ['no Host', 'GET / HTTP/1.1\r\nAccept: */*\r\n\r\n', MISSING_HOST],
    ['two Host lines', `GET / HTTP/1.1\r\n${H}${H}\r\n`, BAD_REQUEST],
    ['malformed Host', 'GET / HTTP/1.1\r\nHost: a b<c\r\n\r\n', MALFORMED_HOST],
    ['control byte in a value', `GET / HTTP/1.1\r\n${H}Authorization: Bearer ab\x01cd\r\n\r\n`, BAD_REQUEST],
    ['NUL in a value', `GET / HTTP/1.1\r\n${H}Authorization: Bearer ab\x00\r\n\r\n`, BAD_REQUEST],
    ['DEL in a value', `GET / HTTP/1.1\r\n${H}X-A: a\x7fb\r\n\r\n`, BAD_REQUEST],
    ['bare CR in a value', `GET / HTTP/1.1\r\n${H}Authorization: Bearer x\rAuthorization: Bearer y\r\n\r\n`, BAD_REQUEST],
    ['name with a non-tchar', `GET / HTTP/1.1\r\n${H}X(a): b\r\n\r\n`, BAD_REQUEST],
    ['name with a space', `GET / HTTP/1.1\r\n${H}X-A : b\r\n\r\n`, INVALID_HEADER_NAME],
    ['line without a colon', `GET / HTTP/1.1\r\n${H}garbage\r\n\r\n`, BAD_REQUEST],
    ['fold on the first line', `GET / HTTP/1.1\r\n folded: x\r\n${H}\r\n`, BAD_REQUEST],
  ];
  for (const [name, req, answer] of cases) {
    const r = one(req);
    t.equal(r.refused, answer.toString('latin1'), name);
    t.same(r.out, [], `${name}: nothing reaches uWS`);
    t.same(r.stashed, [], `${name}: nothing stashed`);
  }
  t.equal(MISSING_HOST.toString(), 'HTTP/1.1 400 Bad Request: missing required Host header\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request: missing required Host header');
  t.equal(UNSUPPORTED_TE.toString(), 'HTTP/1.1 501 Not Implemented\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nUnsupported transfer encoding');
  const expect = one(`PUT /x HTTP/1.1\r\n${H}Expect: teapot\r\nContent-Length: 2\r\n\r\nhi`);
  t.match(expect.refused, /^HTTP\/1\.1 417 Expectation Failed\r\nConnection: close\r\nDate: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT\r\nContent-Length: 0\r\n\r\n$/);
  const cont = one(`PUT /x HTTP/1.1\r\n${H}Expect: 100-continue\r\nContent-Length: 2\r\n\r\nhi`);
  t.same([cont.refused, cont.stashed.length], [undefined, 0], 'Expect: 100-continue with a body: served as it came');
  const noBody = one(`GET /x HTTP/1.1\r\n${H}Expect: 100-continue\r\n\r\n`);
  t.equal(noBody.stashed.length, 1, 'without a body: stashed, so uWS does not send 100 Continue (Go sends it only when a body is read)');
  t.notMatch(noBody.out.join(''), /expect/i);
  // after a refusal nothing more is read
  const r = run([`GET /a HTTP/1.1\r\n${H}X: \x01\r\n\r\n`, `GET /b HTTP/1.1\r\n${H}\r\n`]);
  t.same(r.out, []);
});

t.test('what Go accepts and uWS takes as it is goes through unchanged', async (t) => {
  for (const req of [
    'GET /api/v1/namespaces?limit=500 HTTP/1.1\r\nHost: 127.0.0.1:6443\r\nUser-Agent: kubectl/v1.28.0\r\nAccept: application/json\r\nAuthorization: Bearer abc\r\n\r\n',
    'POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc', // identical duplicates
    'GET /x HTTP/1.1\r\nHost:\r\n\r\n', // an empty Host is valid
    'GET /x%2Fy HTTP/1.1\r\nHost: x\r\nX-A: caf\xe9\t!\r\n\r\n', // obs-text and tabs in values
    'POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n',
    'DELETE /x HTTP/1.1\r\nHost: x\r\nContent-Length:  0 \r\n\r\n',
  ]) {
    const r = one(req);
    t.same(r.out, [req], JSON.stringify(req.slice(0, 40)));
    t.same(r.stashed, []);
    t.equal(r.refused, undefined);
  }
  // a POST followed by a stray CRLF before the next request (Go forgives it)
  const r = run(['POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\na\r\nGET /y HTTP/1.1\r\nHost: x\r\n\r\n']);
  t.same(r.out, ['POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\na', 'GET /y HTTP/1.1\r\nHost: x\r\n\r\n']);
});

t.test('what Go accepts and uWS cannot parse is stashed behind a stand-in head', async (t) => {
  const s = (req: string) => {
    const r = one(req);
    t.equal(r.refused, undefined);
    t.equal(r.stashed.length, 1, JSON.stringify(req.slice(0, 50)));
    return { head: r.stashed[0], out: r.out.join('') };
  };
  let x = s('GET /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nImpersonate-User: alice\r\nImpersonate-Extra-Example.com%2Fscopes: a\r\nImpersonate-Extra-Example.com%2Fscopes: b\r\n\r\n');
  t.same(x.head, { method: 'GET', target: '/api/v1/namespaces/default/configmaps', http10: false, headers: [['host', 'x'], ['impersonate-user', 'alice'], ['impersonate-extra-example.com%2fscopes', 'a'], ['impersonate-extra-example.com%2fscopes', 'b']] });
  t.equal(x.out, `GET / HTTP/1.1\r\nhost: front\r\n${HEAD_REF}: ref1\r\n\r\n`, 'uWS gets a small head naming the stash');
  x = s('PROPFIND /api/v1/secrets HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi');
  t.equal(x.head.method, 'PROPFIND');
  t.equal(x.out, `POST / HTTP/1.1\r\nhost: front\r\ncontent-length: 2\r\n${HEAD_REF}: ref1\r\n\r\nhi`, 'the body follows its stand-in');
  x = s('GET /x HTTP/1.0\r\n\r\n');
  t.same(x.head, { method: 'GET', target: '/x', http10: true, headers: [] });
  t.match(x.out, /\r\nconnection: close\r\n/);
  x = s('GET /x?a=1 HTTP/1.1\nHost: x\nAccept: */*\n\n');
  t.same(x.head.headers, [['host', 'x'], ['accept', '*/*']], 'bare LF line ends');
  t.equal(x.head.target, '/x?a=1');
  x = s('GET /x HTTP/1.1\r\nHost: x\r\nX-Long: a\r\n  b \r\n\tc\r\n\r\n');
  t.same(x.head.headers[1], ['x-long', 'a b c'], 'folded lines joined as Go does');
  // Both framings is the smuggling shape: refused, the connection closed (RFC 9112 6.1).
  const smuggle = one('POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n');
  t.match(String(smuggle.refused), /400/, 'Transfer-Encoding with Content-Length is refused');
  t.equal(smuggle.stashed.length, 0, 'and nothing of it is passed on');
  x = s(`GET /x HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 60 }, (_, i) => `X-H${i}: ${i}\r\n`).join('')}\r\n`);
  t.equal(x.head.headers.length, 61, 'more header lines than uWS takes');
  x = s('OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n');
  t.equal(x.head.target, '*');
  x = s('GET http://example.com/api?x=1 HTTP/1.1\r\nHost: x\r\n\r\n');
  t.equal(x.head.target, '/api?x=1', 'absolute-form');
  x = s(`GET /x HTTP/1.1\r\nHost: x\r\n${HEAD_REF}: forged\r\n\r\n`);
  t.same(x.head.headers, [['host', 'x']], 'a client\'s own stand-in header is dropped');
  t.match(x.out, new RegExp(`${HEAD_REF}: ref1\r\n\r\n$`));
  x = s(`GET /x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(DIRECT_HEAD)}\r\n\r\n`);
  t.equal(x.head.headers[1][1].length, DIRECT_HEAD + 7, 'a head over 16 KiB');
  // the HTTP/1.0 request is the connection's last
  const r = run(['GET /a HTTP/1.0\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n']);
  t.equal(r.stashed.length, 1);
  t.equal(r.out.length, 1);
  t.ok(r.framer.http10First);
});

t.test('the answer to an HTTP/1.0 request: status line HTTP/1.0, chunked framing removed', async (t) => {
  const a = new Http10Answer();
  const parts = ['HTTP/1.1 200 OK\r\nDate: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n', '1\r\n\n\r\n', 'c\r\n{"type":"A"}\r\n', '5\r', '\nhel', 'lo\r\n0\r\n\r\n'];
  const out = parts.map((p) => a.feed(Buffer.from(p, 'latin1')).toString('latin1')).join('');
  t.equal(out, 'HTTP/1.0 200 OK\r\nDate: x\r\nContent-Type: application/json\r\n\r\n\n{"type":"A"}hello');
  t.ok(a.finished);
  const b = new Http10Answer();
  t.equal(b.feed(Buffer.from('HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno')).toString(), 'HTTP/1.0 404 Not Found\r\nContent-Length: 2\r\n\r\nno');
});

t.test('a stash may decline: the head goes on as it came (another backend reads it)', async (t) => {
  const out: string[] = [];
  const f = new RequestFramer({ forward: (b) => { out.push(b.toString('latin1')); return true; }, refuse: () => t.fail('refused'), stash: () => undefined });
  const ws = 'GET /api/v1/namespaces/d/pods/p/exec?command=sh HTTP/1.1\r\nHost: x\r\nImpersonate-Extra-A.b: c\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n';
  f.push(Buffer.from(ws + '\x81\x00', 'latin1'));
  t.same(out, [ws + '\x81\x00']);
});

t.test('long values are checked four bytes at a time: a control byte anywhere is found', async (t) => {
  let missed = 0, wrong = 0;
  for (const bad of ['\x00', '\x01', '\x1f', '\x7f', '\r', '\n']) {
    for (let at = 0; at < 80; at++) {
      for (const pad of ['', 'x', 'xx', 'xxx']) { // every alignment of the value in the buffer
        const value = 't'.repeat(at) + bad + 'u'.repeat(90 - at);
        const r = one(`GET / HTTP/1.1\r\nHost: x\r\nX-Pad: ${pad}\r\nAuthorization: Bearer ${value}\r\n\r\n`);
        if (r.refused !== BAD_REQUEST.toString('latin1')) missed++;
      }
    }
  }
  t.equal(missed, 0, 'every control byte at every offset and alignment: 400');
  for (let at = 0; at < 80; at++) {
    const value = 'a'.repeat(at) + '\t\x80\xff\xe9 ~' + 'b'.repeat(90 - at);
    const r = one(`GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${value}\r\n\r\n`);
    if (r.refused !== undefined || r.out.length !== 1) wrong++;
  }
  t.equal(wrong, 0, 'tabs, spaces and obs-text bytes pass');
  // a head at the very end of its own ArrayBuffer, of every length modulo 4
  for (let extra = 0; extra < 4; extra++) {
    const text = `GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'z'.repeat(100 + extra)}\r\n\r\n`;
    const own = Buffer.alloc(text.length);
    own.write(text, 'latin1');
    const out: Buffer[] = [];
    new RequestFramer({ forward: (b) => { out.push(b); return true; }, refuse: () => t.fail('refused') }).push(own);
    t.equal(out.length, 1, `length ${text.length}`);
  }
});

t.test('a Content-Length Go takes but uWS does not (10 to 19 digits): stashed, the body never forwarded', async (t) => {
  const r = run(['POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 9223372036854775807\r\n\r\nsome body', 'more body']);
  t.equal(r.refused, undefined);
  t.same(r.stashed[0].headers, [['host', 'x'], ['content-length', '9223372036854775807']], 'the kernel sees the declared length');
  t.equal(r.out.join(''), `POST / HTTP/1.1\r\nhost: front\r\nconnection: close\r\n${HEAD_REF}: ref1\r\n\r\n`, 'uWS gets no length and no body');
  t.equal(one('POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 9223372036854775808\r\n\r\n').refused, BAD_REQUEST.toString('latin1'), 'past 2^63-1: 400');
  t.equal(one('POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 123456789\r\n\r\n').stashed.length, 0, '9 digits: as it came');
});
