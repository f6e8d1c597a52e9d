// pods/exec, attach, portforward and nodes/pods/services proxy through the server to the fake node
// agent (test/lib/fake-node-agent.ts): WebSocket and SPDY/3.1 upgrades are passed through on the
// secure port (behind its TLS front) and on --mtls-port; the stock kubectl releases exec, attach,
// port-forward and get --raw through them.
import t, { type Test } from 'tap';
import http from 'node:http';
import https from 'node:https';
import { gunzipSync } from 'node:zlib';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { nodeAgentCredentials, registerNode, startFakeNodeAgent } from '../lib/fake-node-agent.js';
import { withServer, type TestServer } from '../lib/server.js';
import { connectWebSocket, type WsClient } from '../lib/ws-client.js';
import { KUBECTL_DIR, kubectl as runKubectl, kubectlRelease, startKubectl } from '../lib/kubectl.js';

const VERSIONS = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33'].filter((v) => kubectlRelease(v));

function pod(name: string, spec: Record<string, unknown>) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec };
}

async function running(s: TestServer, name: string, containers: string[]) {
  const r = await s.request('PATCH', `/api/v1/namespaces/default/pods/${name}/status`, {
    body: { status: { phase: 'Running', podIP: '127.0.0.1', containerStatuses: containers.map((c) => ({ name: c, image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } })) } },
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  if (r.status !== 200) throw new Error(r.text);
}

/** exec over the WebSocket channel protocol: stdout, and the error channel's Status. */
function channels(ws: WsClient) {
  const on = (ch: number) => ws.messages.filter((m) => m.data[0] === ch).map((m) => m.data.subarray(1).toString()).join('');
  return { stdout: () => on(1), stderr: () => on(2), error: () => on(3) };
}

/** stdin both ways: `cat` echoes until the v5 close signal for stdin, then exits 0. */
async function catRoundTrip(t: Test, s: TestServer, port: number) {
  const cat = await connectWebSocket({ port, path: '/api/v1/namespaces/default/pods/web/exec?command=cat&stdin=true&stdout=true', ca: s.ca, token: s.token, protocols: ['v5.channel.k8s.io'] });
  t.equal(cat.status, 101, cat.body);
  cat.sendBinary(Buffer.from('\x00ping'));
  await cat.waitFor(() => channels(cat).stdout() === 'ping');
  cat.sendBinary(Buffer.from([255, 0]));
  await cat.closed;
  t.same(JSON.parse(channels(cat).error()), { metadata: {}, status: 'Success' });
}

t.test('exec, attach, port-forward and proxies through the node agent', async (t) => {
  const { ca, args } = await nodeAgentCredentials();
  const agent = await startFakeNodeAgent(ca);
  t.teardown(() => agent.close());
  const s = await withServer(t, { brand: 'kubernetes', args: [...args, '--mtls-port', '0', '--kubelet-preferred-address-types', 'InternalIP,Hostname'] });
  await registerNode(s, 'node-1', agent.port);
  await registerNode(s, 'dead', 1);
  for (const p of [
    pod('web', { nodeName: 'node-1', containers: [{ name: 'app', image: 'x', ports: [{ containerPort: 8080 }] }] }),
    pod('two', { nodeName: 'node-1', containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'x' }], initContainers: [{ name: 'init', image: 'x' }] }),
    pod('pending', { containers: [{ name: 'c', image: 'x' }] }),
    pod('lost', { nodeName: 'dead', containers: [{ name: 'c', image: 'x' }] }),
  ]) t.equal((await s.request('POST', '/api/v1/namespaces/default/pods', { body: p })).status, 201);
  await running(s, 'web', ['app']);

  const execPath = '/api/v1/namespaces/default/pods/web/exec?command=echo&command=hi&stdout=true&stderr=true';
  for (const [where, port] of [['secure port', s.port], ['--mtls-port', s.mtlsPort]] as const) {
    t.test(`WebSocket exec on the ${where}`, async (t) => {
      const ws = await connectWebSocket({ port, path: execPath, ca: s.ca, token: s.token, protocols: ['v5.channel.k8s.io', 'v4.channel.k8s.io'] });
      t.equal(ws.status, 101, ws.body);
      t.equal(ws.headers['sec-websocket-protocol'], 'v5.channel.k8s.io', "the node agent's choice comes back");
      t.ok(ws.acceptOk, "the node agent's Sec-WebSocket-Accept matches the client's key");
      await ws.closed;
      const c = channels(ws);
      t.equal(c.stdout(), 'hi\n');
      t.same(JSON.parse(c.error()), { metadata: {}, status: 'Success' });
      const seen = agent.seen.at(-1)!;
      t.equal(seen.path, '/exec/default/web/app?output=1&error=1&command=echo&command=hi');
      t.equal(seen.cn, 'apiserver-node-agent-client', 'the server presents its node agent client certificate');
      t.notOk(seen.headers.authorization, "the client's credentials stay with the server");

      await catRoundTrip(t, s, port);
    });
  }

  t.test('concurrent sessions through the front keep their own streams', async (t) => {
    const n = 24;
    const sessions = await Promise.all(Array.from({ length: n }, (_, i) => connectWebSocket({
      port: i % 2 ? s.port : s.mtlsPort, path: `/api/v1/namespaces/default/pods/web/exec?command=echo&command=session-${i}&stdout=true`, ca: s.ca, token: s.token, protocols: ['v5.channel.k8s.io'],
    })));
    await Promise.all(sessions.map((w) => w.closed));
    t.same(sessions.map((w) => w.status), Array(n).fill(101));
    t.same(sessions.map((w) => channels(w).stdout()), Array.from({ length: n }, (_, i) => `session-${i}\n`));
  });

  t.test('SPDY exec on the secure port with a head uWS cannot parse (a dotted header name)', async (t) => {
    // the front checks it, then sends it as it came to the upgrade backend (node:http), not to uWS
    // (which cannot pass SPDY through: 400 there)
    const line = await new Promise<string>((resolve) => {
      const c = tls.connect({ host: '127.0.0.1', port: s.port, ca: s.ca, servername: 'localhost' }, () => c.write(
        `POST /api/v1/namespaces/default/pods/web/exec?command=echo&command=hi&stdout=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.token}\r\n` +
        'Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\nX-Trace.Id: 1\r\nContent-Length: 0\r\n\r\n'));
      let d = '';
      // the timer goes with the answer: left running it would hold the process open after the tests
      const timer = setTimeout(() => { resolve(`no answer: ${d}`); c.destroy(); }, 5000);
      c.on('data', (x: Buffer) => { d += x.toString('latin1'); if (d.includes('\r\n')) { clearTimeout(timer); resolve(d.split('\r\n')[0]); c.destroy(); } });
      c.on('error', (e) => { clearTimeout(timer); resolve(String(e)); });
    });
    t.equal(line, 'HTTP/1.1 101 Switching Protocols');
  });

  t.test('answers before the node agent', async (t) => {
    const err = async (p: string, code: number, message: string, reason?: string) => {
      const ws = await connectWebSocket({ port: s.port, path: p, ca: s.ca, token: s.token, protocols: ['v5.channel.k8s.io'] });
      t.equal(ws.status, code, `${p}: ${ws.body}`);
      const st = JSON.parse(ws.body);
      t.equal(st.message, message);
      if (reason !== undefined) t.equal(st.reason, reason);
    };
    await err('/api/v1/namespaces/default/pods/pending/exec?command=ls&stdout=true', 400, 'pod pending does not have a host assigned', 'BadRequest');
    await err('/api/v1/namespaces/default/pods/two/exec?command=ls&stdout=true', 400, 'a container name must be specified for pod two, choose one of: [a b] or one of the init containers: [init]', 'BadRequest');
    await err('/api/v1/namespaces/default/pods/web/exec?command=ls&container=zz', 400, 'container zz is not valid for pod web', 'BadRequest');
    await err('/api/v1/namespaces/default/pods/nope/exec?command=ls', 404, 'pods "nope" not found', 'NotFound');
    // the reference's words for a node agent that does not answer (a Status without a reason)
    const ws = await connectWebSocket({ port: s.port, path: '/api/v1/namespaces/default/pods/lost/exec?command=ls&stdout=true', ca: s.ca, token: s.token, protocols: ['v5.channel.k8s.io'] });
    t.equal(ws.status, 500);
    t.same(JSON.parse(ws.body), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'error dialing backend: dial tcp 127.0.0.1:1: connect: connection refused', code: 500 });
    // authorization sees the sub-resource and the verb of the method (GET for a WebSocket: get)
    const nobody = await connectWebSocket({ port: s.port, path: execPath, ca: s.ca, token: s.token, headers: { 'Impersonate-User': 'nobody' }, protocols: ['v5.channel.k8s.io'] });
    t.equal(nobody.status, 403);
    t.equal(JSON.parse(nobody.body).message, 'pods "web" is forbidden: User "nobody" cannot get resource "pods/exec" in API group "" in the namespace "default"');
    const metrics = (await s.get('/metrics')).text.split('\n').filter((l) => l.startsWith('apiserver_request_total{') && l.includes('subresource="exec"'));
    t.ok(metrics.some((l) => l.includes('verb="CONNECT"') && l.includes('code="101"')), `an upgraded exec counts as CONNECT 101: ${metrics.join(' | ')}`);
    t.notOk(metrics.some((l) => /verb="(GET|POST)"/.test(l)), 'whatever its method');
    const post = await s.request('POST', '/api/v1/namespaces/default/pods/web/exec?command=ls', { headers: { 'Impersonate-User': 'nobody' } });
    t.equal(post.status, 403);
    t.match(post.json.message, 'cannot create resource "pods/exec"');
    // without an upgrade: refused here, as the reference's exec/attach/portforward handlers refuse it
    const before = agent.seen.length;
    const plain = await s.request('POST', '/api/v1/namespaces/default/pods/web/exec?command=ls&stdout=true');
    t.equal(plain.status, 400);
    t.equal(plain.json.message, 'Upgrade request required');
    t.equal(plain.json.reason, 'BadRequest');
    t.equal(agent.seen.length, before, 'the node agent was not asked');
  });

  t.test('nodes/proxy, pods/proxy, services/proxy', async (t) => {
    const r = await s.get('/api/v1/nodes/node-1/proxy/metrics/cadvisor?x=1');
    t.equal(r.status, 200, r.text);
    t.equal(r.text, 'node agent GET /metrics/cadvisor?x=1\n');
    t.equal(agent.seen.at(-1)!.cn, 'apiserver-node-agent-client');
    const post = await s.request('POST', '/api/v1/nodes/node-1:' + agent.port + '/proxy/run', { raw: 'payload', headers: { 'content-type': 'text/plain' } });
    t.equal(post.status, 200, post.text);
    t.equal(post.text, 'node agent POST /run body=payload\n');
    t.equal((await s.get('/api/v1/nodes/nope/proxy/x')).status, 404);
    // --kubelet-preferred-address-types=InternalIP,Hostname: the InternalIP is tried first
    await s.request('POST', '/api/v1/nodes', { body: { metadata: { name: 'multi' } } });
    await s.request('PATCH', '/api/v1/nodes/multi/status', {
      body: { status: { addresses: [{ type: 'Hostname', address: '127.0.0.2' }, { type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: agent.port } } } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    t.equal((await s.get('/api/v1/nodes/multi/proxy/healthz')).text, 'node agent GET /healthz\n', 'the preferred address type is used');
    t.equal((await s.get('/api/v1/nodes/node-1/status/extra')).status, 404, 'only a proxy takes a trailing path');
    t.equal(agent.seen.find((r) => r.path === '/run')?.headers['x-forwarded-uri'], '/api/v1/nodes/node-1:' + agent.port + '/proxy/run', 'the upstream is told where it is mounted');
    const dead = await s.get('/api/v1/nodes/dead/proxy/healthz');
    t.equal(dead.status, 503);
    t.same([dead.json.reason, dead.json.message], ['ServiceUnavailable', 'error trying to reach service: dial tcp 127.0.0.1:1: connect: connection refused']);

    // the reference's proxy transport: an empty path is redirected; redirects and HTML links of the upstream go through the proxy
    const bare = await s.get('/api/v1/nodes/node-1/proxy?a=1');
    t.equal(bare.status, 301);
    t.equal(bare.headers.location, '/api/v1/nodes/node-1/proxy/?a=1');
    const redirect = await s.get('/api/v1/nodes/node-1/proxy/redirect');
    t.equal(redirect.status, 302);
    t.equal(redirect.headers.location, '/api/v1/nodes/node-1/proxy/healthz');
    const P = '/api/v1/nodes/node-1/proxy';
    const want = `<html><head><link rel="stylesheet" href="${P}/style.css"></head><body><a href="${P}/metrics">m</a> <IMG SRC='${P}/logo.png' alt="/not-a-link"> <a href="relative/x">r</a> <a href="${P}/abs?q=1#f">a</a> <a href="https://other.example/x">o</a><script src=${P}/app.js></script><p title="/kept">text with /path</p></body></html>`;
    const page = await s.get(`${P}/page.html`);
    t.equal(page.text, want, 'links rewritten under the proxy path');
    const gz = await new Promise<{ enc: unknown; body: Buffer }>((resolve, reject) => {
      https.get({ host: '127.0.0.1', port: s.port, path: `${P}/page.html?gzip=1`, ca: s.ca, headers: { authorization: `Bearer ${s.token}`, 'accept-encoding': 'gzip' } }, (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => resolve({ enc: r.headers['content-encoding'], body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
    t.equal(gz.enc, 'gzip');
    t.equal(gunzipSync(gz.body).toString(), want.replace(/\?gzip=1/, ''), 'a gzip page too, still gzip');

    // a pod's own address must be a global unicast one, as in the reference
    const pp = await s.get('/api/v1/namespaces/default/pods/web/proxy/');
    t.equal(pp.status, 400);
    t.equal(pp.json.message, 'address not allowed');

    // services/proxy: an endpoint address that belongs to a pod of the service
    const backend = http.createServer((req, res) => res.end(`backend ${req.method} ${req.url}`));
    await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
    t.teardown(() => backend.close());
    const bport = (backend.address() as net.AddressInfo).port;
    t.equal((await s.request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80, targetPort: bport }], selector: { app: 'web' } } } })).status, 201);
    const none = await s.get('/api/v1/namespaces/default/services/web/proxy/');
    t.equal(none.status, 503);
    t.equal(none.json.message, 'no endpoints available for service "web"');
    t.equal((await s.request('POST', '/api/v1/namespaces/default/endpoints', { body: { metadata: { name: 'web' }, subsets: [{ addresses: [{ ip: '127.0.0.1', targetRef: { kind: 'Pod', name: 'web', namespace: 'default' } }], ports: [{ name: 'http', port: bport }] }] } })).status, 201);
    const svc = await s.get('/api/v1/namespaces/default/services/web:80/proxy/hello?a=b');
    t.equal(svc.status, 200, svc.text);
    t.equal(svc.text, 'backend GET /hello?a=b');
    t.equal((await s.get('/api/v1/namespaces/default/services/http:web:http/proxy/')).text, 'backend GET /');
    const noPort = await s.get('/api/v1/namespaces/default/services/web:81/proxy/');
    t.equal(noPort.status, 503);
    t.equal(noPort.json.message, 'no service port 81 found for service "web"');
  });

  if (!VERSIONS.length) return void t.comment(`no kubectl.<version> in ${KUBECTL_DIR}`);
  const kubectl = (v: string, argv: string[], input?: string) => runKubectl(s, argv, { input, bin: kubectlRelease(v), timeoutMs: 30_000 });

  for (const v of VERSIONS) {
    t.test(`kubectl ${v}`, async (t) => {
      const before = agent.seen.length;
      const echo = await kubectl(v, ['exec', 'web', '--', 'echo', 'hi']);
      t.equal(echo.stdout, 'hi\n', echo.stderr);
      t.equal(echo.code, 0);
      const protocols = agent.seen.slice(before).map((r) => String(r.headers.upgrade));
      t.comment(`kubectl ${v} exec reached the node agent with: ${protocols.join(', ')}`);
      const fail = await kubectl(v, ['exec', 'web', '--', 'fail', '3']);
      t.equal(fail.code, 3, `the command's exit status: ${fail.stderr}`);
      const cat = await kubectl(v, ['exec', '-i', 'web', '--', 'cat'], 'from stdin\n');
      t.equal(cat.stdout, 'from stdin\n', cat.stderr);
      t.equal(cat.code, 0);
      const attach = await kubectl(v, ['attach', '-i', 'web'], 'typed\n');
      t.match(attach.stdout, 'attached to app\ntyped\n', attach.stderr);
      t.equal(attach.code, 0, attach.stderr);
      // a client certificate reaches the upgrade backend with the connection (the front's PROXY header)
      const byCert = await kubectl(v, ['--kubeconfig', path.join(s.dataDir, 'admin-cert.kubeconfig'), 'exec', 'web', '--', 'echo', 'by certificate']);
      t.equal(byCert.stdout, 'by certificate\n', `authenticated by its certificate: ${byCert.stderr}`);
      const raw = await kubectl(v, ['get', '--raw', '/api/v1/nodes/node-1/proxy/healthz']);
      t.equal(raw.stdout, 'node agent GET /healthz\n', raw.stderr);
    });
  }

  for (const v of [VERSIONS[0], VERSIONS.at(-1)!]) {
    t.test(`kubectl ${v} port-forward`, async (t) => {
      const pf = startKubectl(s, ['port-forward', 'pod/web', ':8080'], kubectlRelease(v));
      t.teardown(() => pf.child.kill());
      const out = () => pf.out.stdout + pf.out.stderr;
      const local = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => { clearInterval(poll); reject(new Error(`no forwarding line: ${out()}`)); }, 20_000);
        const poll = setInterval(() => {
          const m = /Forwarding from 127\.0\.0\.1:(\d+) -> 8080/.exec(pf.out.stdout);
          if (m) { clearTimeout(timer); clearInterval(poll); resolve(Number(m[1])); }
        }, 50);
      });
      const answer = await new Promise<string>((resolve, reject) => {
        const c = net.connect(local, '127.0.0.1', () => c.write('ping'));
        let got = '';
        const timer = setTimeout(() => { c.destroy(); reject(new Error(`no answer through the tunnel: ${got} ${out()}`)); }, 15_000);
        c.on('data', (d) => { got += d; if (got.includes('ping')) { clearTimeout(timer); c.end(); resolve(got); } });
        c.on('error', (e) => { clearTimeout(timer); reject(e); });
      });
      t.equal(answer, 'echo from port 8080: ping');
      t.match(agent.seen.at(-1)!.path, /^\/portForward\/default\/web/);
    });
  }
});

t.test('the direct uWS path: WebSocket bridged message by message, SPDY refused with a Status', async (t) => {
  const { ca, args } = await nodeAgentCredentials();
  const agent = await startFakeNodeAgent(ca);
  t.teardown(() => agent.close());
  const s = await withServer(t, { brand: 'kubernetes', args: [...args, '--secure-port-client-certs=false'] });
  await registerNode(s, 'node-1', agent.port);
  t.equal((await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('web', { nodeName: 'node-1', containers: [{ name: 'app', image: 'x' }] }) })).status, 201);
  await running(s, 'web', ['app']);

  const ws = await connectWebSocket({ port: s.port, path: '/api/v1/namespaces/default/pods/web/exec?command=echo&command=bridged&stdout=true', ca: s.ca, token: s.token, protocols: ['v4.channel.k8s.io', 'v5.channel.k8s.io'] });
  t.equal(ws.status, 101, ws.body);
  t.equal(ws.headers['sec-websocket-protocol'], 'v5.channel.k8s.io', "the node agent's choice, not the client's first");
  await ws.closed;
  t.equal(channels(ws).stdout(), 'bridged\n');
  t.same(JSON.parse(channels(ws).error()), { metadata: {}, status: 'Success' });
  t.equal(ws.closeFrame?.code, 1000);
  t.ok(ws.messages.every((m) => m.opcode === 2), 'binary messages stay binary');

  await catRoundTrip(t, s, s.port);

  const dead = await connectWebSocket({ port: s.port, path: '/api/v1/namespaces/default/pods/web/portforward?ports=80', ca: s.ca, token: s.token, protocols: ['SPDY/3.1+portforward.k8s.io'] });
  t.equal(dead.status, 400, 'a refused upgrade: the node agent\'s answer');
  t.match(dead.body, 'unsupported WebSocket subprotocols');

  const spdy = await s.request('POST', '/api/v1/namespaces/default/pods/web/exec?command=echo&stdout=true', { headers: { connection: 'Upgrade', upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'v4.channel.k8s.io' } });
  t.equal(spdy.status, 400);
  t.equal(spdy.json.message, 'protocol upgrades (SPDY/3.1) are not served on this listener; use the secure port behind its TLS front or --mtls-port');
  t.equal((await s.get('/api/v1/nodes/node-1/proxy/healthz')).text, 'node agent GET /healthz\n');

  const v = VERSIONS.filter((x) => Number(x.split('.')[1]) >= 30).at(-1);
  if (v) {
    const r = await runKubectl(s, ['exec', '-i', 'web', '--', 'cat'], { input: 'through uWS\n', bin: kubectlRelease(v), timeoutMs: 30_000 });
    t.equal(r.stdout, 'through uWS\n', `kubectl ${v} exec over the bridged WebSocket: ${r.stderr}`);
    t.equal(r.code, 0);
  }
});
