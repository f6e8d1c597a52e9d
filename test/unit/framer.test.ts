// The TLS front's request framing: each head forwarded in one write, bodies by Content-Length,
// chunked bodies and upgrades passed through, over-long heads refused with 431.
import t from 'tap';
import { MAX_HEAD, RequestFramer, TOO_LARGE } from '../../kernel/http/framer.js';

function run(chunks: string[]) {
  const out: string[] = [];
  let refused: string | undefined;
  const f = new RequestFramer((b) => { out.push(b.toString('latin1')); return true; }, (a) => { refused = a.toString('latin1'); });
  for (const c of chunks) f.push(Buffer.from(c, 'latin1'));
  return { out, refused };
}

t.test('a head split over many reads is forwarded in one write', async (t) => {
  const head = 'GET /api HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ' + 'a'.repeat(5000) + '\r\n\r\n';
  const pieces = head.match(/[\s\S]{1,700}/g)!;
  const { out } = run(pieces);
  t.same(out, [head]);
});

t.test('bodies by Content-Length, then the next head whole (pipelining)', async (t) => {
  const a = 'POST /x HTTP/1.1\r\nContent-Length: 5\r\n\r\n';
  const b = 'GET /y HTTP/1.1\r\nHost: x\r\n\r\n';
  const { out } = run([a + 'he', 'llo' + b.slice(0, 10), b.slice(10)]);
  t.same(out, [a + 'he', 'llo', b]);
});

t.test('chunked bodies and upgrades make the rest pass-through', async (t) => {
  const a = 'POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n';
  const { out } = run([a, '0\r\n\r\n', 'GET /y HTTP']);
  t.same(out, [a, '0\r\n\r\n', 'GET /y HTTP']);
  const ws = 'GET /w HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n';
  t.same(run([ws + '\x81\x05', 'frame']).out, [ws + '\x81\x05', 'frame']);
});

t.test('a head over the limit is answered 431 and nothing is forwarded', async (t) => {
  const big = 'GET / HTTP/1.1\r\nX: ' + 'a'.repeat(MAX_HEAD) + '\r\n\r\n';
  const r = run(big.match(/[\s\S]{1,16384}/g)!);
  t.same(r.out, []);
  t.equal(r.refused, TOO_LARGE.toString('latin1'));
  t.match(r.refused, /^HTTP\/1.1 431 Request Header Fields Too Large\r\n/);
});
