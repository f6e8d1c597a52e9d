// What a watch puts on the wire, read from the raw socket: the status line and headers go out as
// soon as the watch is established (before any event: Go's client, and so every informer, returns
// from Watch() only then), and every event's chunk is complete — closing CRLF included — as soon
// as the event is sent (Python's urllib3 hands a chunk over only when it is whole). Checked for
// JSON and Protobuf on every listener: the default port (TLS front), uWS terminating TLS itself,
// and the node:tls --mtls-port.
import t from 'tap';
import tls from 'node:tls';
import { withServer, type TestServer } from '../lib/server.js';
import { until } from '../lib/poll.js';
import { connectWebSocket } from '../lib/ws-client.js';

/** A raw HTTPS/1.1 exchange: the bytes as they arrive, parsed as far as they are complete. */
function rawWatch(port: number, s: TestServer, path: string, accept: string) {
  const sock = tls.connect({ port, host: '127.0.0.1', ca: s.ca, servername: 'localhost' });
  let bytes = Buffer.alloc(0);
  sock.on('data', (d: Buffer) => { bytes = Buffer.concat([bytes, d]); });
  sock.on('error', () => {});
  sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${s.token}\r\nAccept: ${accept}\r\n\r\n`);
  return {
    /** The head, once its blank line has arrived. */
    head(): string | undefined {
      const end = bytes.indexOf('\r\n\r\n');
      return end < 0 ? undefined : bytes.subarray(0, end).toString('latin1');
    },
    /** The body carried by the chunks that are complete on the wire (size line, data and closing CRLF). */
    completeBody(): Buffer {
      let at = bytes.indexOf('\r\n\r\n') + 4;
      const out: Buffer[] = [];
      while (at > 3) {
        const eol = bytes.indexOf('\r\n', at);
        if (eol < 0) break;
        const size = parseInt(bytes.subarray(at, eol).toString('latin1'), 16);
        const end = eol + 2 + size;
        if (Number.isNaN(size) || size === 0 || bytes.length < end + 2) break;
        if (bytes.subarray(end, end + 2).toString('latin1') !== '\r\n') throw new Error(`chunk at ${at} is not closed by CRLF`);
        out.push(bytes.subarray(eol + 2, end));
        at = end + 2;
      }
      return Buffer.concat(out);
    },
    close: () => sock.destroy(),
  };
}

/** Whole Protobuf frames in a body (a trailing partial frame is left out). */
function frames(body: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at + 4 <= body.length && at + 4 + body.readUInt32BE(at) <= body.length; at += 4 + body.readUInt32BE(at)) out.push(body.subarray(at + 4, at + 4 + body.readUInt32BE(at)));
  return out;
}

const listeners: [string, string[], (s: TestServer) => number][] = [
  ['default port (TLS front)', [], (s) => s.port],
  ['uWS terminating TLS', ['--secure-port-client-certs=false'], (s) => s.port],
  ['--mtls-port (node:tls)', ['--mtls-port', '0'], (s) => s.mtlsPort],
];

for (const [name, args, portOf] of listeners) {
  t.test(name, async (t) => {
    const s = await withServer(t, { brand: 'kubernetes', args });
    const port = portOf(s);
    await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'wire' } } });
    for (const [rep, accept] of [['JSON', 'application/json'], ['Protobuf', 'application/vnd.kubernetes.protobuf;stream=watch']] as const) {
      // An empty namespace: nothing to send until the create below.
      const w = rawWatch(port, s, '/api/v1/namespaces/wire/configmaps?watch=1', accept);
      t.teardown(w.close);
      const head = await until(() => w.head(), Boolean, 60_000);
      t.match(head, /^HTTP\/1\.1 200 /, `${rep}: the status line and headers arrive before any event`);
      t.match(head, /transfer-encoding: chunked/i, `${rep}: chunked, as the reference's`);
      const name = `cm-${rep.toLowerCase()}`;
      const created = await s.request('POST', '/api/v1/namespaces/wire/configmaps', { body: { metadata: { name }, data: { k: 'v' } } });
      t.equal(created.status, 201);
      if (rep === 'JSON') {
        const line = await until(() => w.completeBody().toString('utf8').split('\n').find((l) => l.includes(`"name":"${name}"`)), Boolean, 60_000);
        t.equal(line && JSON.parse(line).type, 'ADDED', 'JSON: the event is in chunks complete on the wire without any later write');
      } else {
        const frame = await until(() => frames(w.completeBody()).find((f) => f.includes(name)), Boolean, 60_000);
        t.ok(frame?.includes('ADDED'), 'Protobuf: the event frame is whole in the chunks on the wire');
      }
      w.close();
    }
  });
}

t.test('WebSocket watch: the upgrade answer comes at once', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const ws = await connectWebSocket({ port: s.port, path: '/api/v1/namespaces/default/pods?watch=1', ca: s.ca, token: s.token });
  t.teardown(() => ws.close());
  t.equal(ws.status, 101);
});
