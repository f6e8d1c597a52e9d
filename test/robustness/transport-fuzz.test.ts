// Transport-level fuzz on the default secure port (through the TLS front): request heads built from a
// seeded generator (CAPI_TRANSPORT_FUZZ_SEED, CAPI_TRANSPORT_FUZZ_COUNT) out of the pieces hostile
// clients use — odd methods, targets and versions, missing and doubled Host, Content-Length and
// Transfer-Encoding combinations, control bytes, header names with every tchar and some non-tchars,
// folded lines, bare LF line ends, up to 80 header lines — written raw on a fresh TLS connection.
// Every request must get an answer (never the silence uWS gives): either one of the answers Go's
// server gives at the transport (plain text, then the connection closed), or a served answer whose
// error body is a Status; never a 5xx but Go's own 501/505; the server stays ready.
import t from 'tap';
import tls from 'node:tls';
import { withServer } from '../lib/server.js';
import { rng } from '../lib/rng.js';


const SEED = Number(process.env.CAPI_TRANSPORT_FUZZ_SEED ?? 7);
const COUNT = Number(process.env.CAPI_TRANSPORT_FUZZ_COUNT ?? 1200);
const CONCURRENCY = 8;
/** Go's transport answers: plain text, the body repeats the status (501: its own text). */
const GO_TEXT = /^(400 Bad Request(: (missing required Host header|malformed Host header|invalid header name))?|431 Request Header Fields Too Large|505 HTTP Version Not Supported: unsupported protocol version|Unsupported transfer encoding)$/;

function generator(seed: number, token: string) {
  const r = rng(seed);
  const ctl = () => String.fromCharCode(r.pick([0, 1, 8, 11, 12, 13, 27, 31, 127]));
  const nameChar = () => r.pick(['a', 'Z', '0', '-', '-', '.', '%', '_', '!', '#', '$', '&', "'", '*', '+', '^', '`', '|', '~', ' ', '(', '"', '/', '@', '\u00e9']);
  return () => {
    const eol = r.next() < 0.08 ? '\n' : '\r\n';
    const odd = () => r.next() < 0.12;
    const method = odd() ? r.pick(['PROPFIND', 'BREW', 'get', 'G(T', '']) : r.pick(['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']);
    const target = odd() ? r.pick(['*', 'http://x/version', 'api/v1', '/a%zz', `/a${ctl()}b`, '']) : r.pick(['/api/v1/namespaces/default', '/api/v1/namespaces/default/configmaps', '/version', '/readyz',
      '/api/v1/namespaces/default/secrets', '/%2e%2e/api', `/api/v1/namespaces/default/configmaps/${'n'.repeat(r.int(3000))}`]);
    const version = odd() ? r.pick(['HTTP/1.0', 'HTTP/1.2', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1', 'HTTPS/1.1', 'HTTP/1.1 x']) : 'HTTP/1.1';
    const lines: string[] = [`${method}${r.next() < 0.03 ? '  ' : ' '}${target} ${version}`];
    const hosts = r.next() < 0.93 ? 1 : r.pick([0, 2]);
    for (let i = 0; i < hosts; i++) lines.push(`Host: ${r.next() < 0.05 ? 'a b<c' : '127.0.0.1'}`);
    if (r.next() < 0.6) lines.push(`Authorization: Bearer ${r.next() < 0.05 ? `ab${ctl()}cd` : token}`);
    lines.push('Accept: application/json');
    const extra = r.next() < 0.1 ? 40 + r.int(40) : r.int(4);
    for (let i = 0; i < extra; i++) {
      const name = r.next() < 0.2 ? `X-${Array.from({ length: 1 + r.int(6) }, nameChar).join('')}` : `X-Pad-${i}`;
      const value = r.next() < 0.05 ? `v${ctl()}w` : r.next() < 0.05 ? 'v\u00e9\tw' : `v${i}`;
      lines.push(`${name}: ${value}`);
      if (r.next() < 0.03) lines.push(` folded ${i}`);
    }
    if (r.next() < 0.05) lines.push(`Impersonate-User: someone`, `Impersonate-Extra-Example.com%2F${r.pick(['scopes', 'zz', '%zz'])}: v`);
    if (r.next() < 0.05) lines.push(`Expect: ${r.pick(['100-continue', 'teapot'])}`);
    let body = '';
    const framing = r.int(10);
    if (framing === 1) { body = '{"a":1}'; lines.push(`Content-Length: ${body.length}`); }
    else if (framing === 2) { body = '{"a":1}'; lines.push(`Content-Length: ${body.length}`, `Content-Length: ${r.pick([body.length, 3, '+7', '7, 7'])}`); }
    else if (framing === 3) { body = '7\r\n{"a":1}\r\n0\r\n\r\n'; lines.push(`Transfer-Encoding: ${r.pick(['chunked', 'Chunked', 'chunked, identity', 'gzip', ''])}`); }
    else if (framing === 4) { body = '7\r\n{"a":1}\r\n0\r\n\r\n'; lines.push('Transfer-Encoding: chunked', `Content-Length: ${r.int(40)}`); }
    else if (framing === 5) lines.push(`Content-Length: ${r.pick(['', 'x', '-1', '99999999999999999999'])}`);
    lines.push('Connection: close');
    if (r.next() < 0.2) lines.splice(1 + r.int(lines.length - 1), 0, lines.splice(lines.length - 1, 1)[0]); // Connection anywhere
    return Buffer.from(lines.join(eol) + eol + eol + body, 'latin1');
  };
}

/** `continues`: interim 100 Continue answers before the final one (Go: at most one, only for a request with a body). */
interface Answer { status: number; ct: string; body: string; closed: boolean; continues: number; error?: string }

/** Writes a request and reads one answer; waits (at most 2 s) for the close after it. */
function exchange(port: number, req: Buffer): Promise<Answer> {
  return new Promise((resolve) => {
    const c = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => c.write(req));
    let d = Buffer.alloc(0);
    let settled = false;
    let closeTimer: NodeJS.Timeout | undefined;
    const done = (closed: boolean, error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(noAnswer);
      clearTimeout(closeTimer);
      c.destroy();
      let continues = 0;
      const text = d.toString('latin1').replace(/^(HTTP\/1\.1 100 Continue\r\n\r\n)+/, (m) => { continues = m.length / 25; return ''; });
      const end = text.indexOf('\r\n\r\n');
      const head = end < 0 ? '' : text.slice(0, end);
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      const ct = /\r\ncontent-type: *([^\r]*)/i.exec(head)?.[1] ?? '';
      let body = end < 0 ? '' : text.slice(end + 4);
      if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
        let out = '', p = 0;
        for (;;) {
          const nl = body.indexOf('\r\n', p);
          const n = nl < 0 ? 0 : parseInt(body.slice(p, nl), 16);
          if (!n) break;
          out += body.slice(nl + 2, nl + 2 + n);
          p = nl + 2 + n + 2;
        }
        body = out;
      }
      resolve({ status, ct, body: Buffer.from(body, 'latin1').toString('utf8'), closed, continues, error });
    };
    const noAnswer = setTimeout(() => done(false, 'no answer within 6 s'), 6000);
    c.on('data', (x: Buffer) => {
      d = Buffer.concat([d, x]);
      if (!closeTimer && d.includes('\r\n\r\n')) closeTimer = setTimeout(() => done(false), 2000);
    });
    c.on('end', () => done(true));
    c.on('close', () => done(true));
    c.on('error', (e) => done(true, String(e)));
  });
}

t.test(`transport fuzz: ${COUNT} malformed and odd request heads on the default port (seed ${SEED})`, async (t) => {
  const s = await withServer(t);
  const next = generator(SEED, s.token);
  const bad: string[] = [];
  const codes: Record<string, number> = {};
  let sent = 0;
  const started = Date.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (sent < COUNT) {
      sent++;
      const req = next();
      const a = await exchange(s.port, req);
      const hasBody = /\r?\n(content-length: *[1-9]|transfer-encoding: *chunked)/i.test(req.toString('latin1'));
      if (a.continues > (hasBody ? 1 : 0)) { if (bad.length < 20) bad.push(`${a.continues} interim 100 Continue: ${JSON.stringify(req.toString("latin1").slice(0, 600))}`); }
      const where = JSON.stringify(req.toString('latin1').slice(0, 160));
      const fail = (why: string) => { if (bad.length < 20) bad.push(`${why}: ${where} -> ${a.status} ${a.error ?? ''} ${a.body.slice(0, 120)}`); };
      const goAnswer = /^text\/plain/.test(a.ct) && GO_TEXT.test(a.body);
      codes[`${a.status}${goAnswer ? ' (Go)' : ''}`] = (codes[`${a.status}${goAnswer ? ' (Go)' : ''}`] ?? 0) + 1;
      if (!a.status) fail('no answer');
      else if (goAnswer) { if (!a.closed) fail('Go\'s transport answer, but the connection stayed open'); }
      else if (a.status >= 500) fail('a server error');
      else if (a.status === 417) { if (!a.closed) fail('417, but the connection stayed open'); }
      else if (a.status >= 400 && !(a.status === 404 && a.body === '404 page not found\n') && !/^HEAD /.test(req.toString('latin1'))) {
        let st: any;
        try { st = JSON.parse(a.body); } catch { /* below */ }
        if (!st || st.kind !== 'Status' || st.code !== a.status) fail('not a Status');
      }
    }
  }));
  t.comment(`${COUNT} requests in ${((Date.now() - started) / 1000).toFixed(1)} s; answers ${JSON.stringify(codes)}`);
  t.same(bad, [], 'every request answered: Go\'s transport answer and a closed connection, or a served answer with a Status body');
  t.ok(Object.keys(codes).some((k) => k.endsWith('(Go)')) && Object.keys(codes).some((k) => /^2/.test(k)), 'both kinds of answers occurred');
  t.equal((await s.get('/readyz')).status, 200, 'the server is ready after');
});
