// Malformed WebSocket frames from a client on Node's own stack (kernel/http/websocket.ts: the
// --mtls-port listener, and the secure port on Node 22 and later, CAPI_TEST_NODE): reserved bits
// set, an opcode RFC 6455 does not define, a fragmented or oversized control frame — each is a
// protocol error (RFC 6455 section 5), and the server closes the connection with code 1002.
import t from 'tap';
import { nodeUnderTest, sleep, withServer } from '../lib/server.js';
import { connectWebSocket, encodeClientFrame, OP_PING, OP_TEXT } from '../lib/ws-client.js';

/** A client frame with its first byte changed (FIN, RSV1-3 and the opcode). */
function withFirstByte(first: number, payload = Buffer.from('x')): Buffer {
  const f = encodeClientFrame(OP_TEXT, payload);
  f[0] = first;
  return f;
}

const bad: [string, Buffer][] = [
  ['RSV1 set (no extension was agreed)', withFirstByte(0x80 | 0x40 | OP_TEXT)],
  ['RSV3 set', withFirstByte(0x80 | 0x10 | OP_TEXT)],
  ['opcode 0x3 (reserved, non-control)', withFirstByte(0x80 | 0x3)],
  ['opcode 0xB (reserved, control)', withFirstByte(0x80 | 0xb)],
  ['a fragmented ping', withFirstByte(OP_PING)],
  ['a ping of 126 bytes', encodeClientFrame(OP_PING, Buffer.alloc(126, 0x61))],
];

const cases: [string, { node?: string; mtls: boolean } | undefined][] = [
  ['--mtls-port (node:https)', { mtls: true }],
  ['the secure port on node:https (CAPI_TEST_NODE)', nodeUnderTest ? { node: nodeUnderTest, mtls: false } : undefined],
];

for (const [name, c] of cases) {
  t.test(`${name}: malformed frames close the watch with 1002`, { skip: c ? false : 'set CAPI_TEST_NODE to a Node.js without a uWebSockets.js binary (Node 22)' }, async (t) => {
    const s = await withServer(t, { node: c!.node, args: c!.mtls ? ['--mtls-port', '0'] : [] });
    const port = c!.mtls ? s.mtlsPort : s.port;
    for (const [what, frame] of bad) {
      const ws = await connectWebSocket({ port, path: '/api/v1/namespaces/default/configmaps?watch=1', ca: s.ca, token: s.token });
      t.equal(ws.status, 101, `${what}: upgraded`);
      ws.sendRaw(frame);
      await Promise.race([ws.closed, sleep(20_000)]); // a deadline for a failing server only
      t.equal(ws.closeFrame?.code, 1002, `${what}: closed with 1002`);
    }
    const ws = await connectWebSocket({ port, path: '/api/v1/namespaces/default/configmaps?watch=1', ca: s.ca, token: s.token });
    ws.sendRaw(encodeClientFrame(OP_PING, Buffer.from('p')));
    await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' } } });
    await ws.waitFor((m) => m.some((x) => x.text.includes('"after"')), 30_000);
    t.pass('a well-formed ping leaves the watch running');
    ws.close();
  });
}
