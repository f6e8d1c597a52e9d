// Transports and the server's life: the node:tls (mutual TLS) seam feeding the same pipeline,
// aborted requests, unsupported methods, and graceful shutdown with --shutdown-delay-duration.
import t from 'tap';
import https from 'node:https';
import tls from 'node:tls';
import path from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { repoRoot, sleep, withServer, type TestServer } from '../lib/server.js';
import { generateCA, signCert } from '../../kernel/ops/pki.js';

function get(port: number, p: string, opts: { ca: Buffer; cert?: string; key?: string; token?: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: p, ca: opts.ca, cert: opts.cert, key: opts.key, headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {} }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('the node:tls listener hands verified client certificates to authenticators', async (t) => {
  const dir = t.testdir({});
  const config = path.join(dir, 'config.yaml');
  const fixture = path.join(repoRoot, 'test/fixtures/peer-cert-authenticator/index.js');
  writeFileSync(config, `authentication:\n  - plugin: token-file\n  - plugin: ${fixture}\n`);
  const s: TestServer = await withServer(t, { args: ['--config', config, '--mtls-port', '0', '--authorization-mode=AlwaysAllow'] });
  t.ok(s.mtlsPort > 0, 'mTLS listener is up');
  const caCertPem = readFileSync(path.join(s.dataDir, 'pki/ca.crt'), 'utf8');
  const caKeyPem = readFileSync(path.join(s.dataDir, 'pki/ca.key'), 'utf8');
  const client = await signCert({ caCertPem, caKeyPem, subject: { CN: 'alice', O: ['devs'] }, usages: ['clientAuth'], days: 1 });
  const otherCa = await generateCA({ CN: 'someone else' });
  const stranger = await signCert({ caCertPem: otherCa.certPem, caKeyPem: otherCa.keyPem, subject: { CN: 'mallory' }, usages: ['clientAuth'], days: 1 });

  const viaCert = await get(s.mtlsPort, '/api/v1/namespaces/default', { ca: s.ca, cert: client.certPem, key: client.keyPem });
  t.equal(viaCert.status, 200, 'a certificate signed by the cluster CA authenticates on the node:tls listener');
  t.equal(JSON.parse(viaCert.body).metadata.name, 'default');
  t.equal((await get(s.mtlsPort, '/api/v1/namespaces/default', { ca: s.ca })).status, 401, 'no certificate, no token: 401');
  t.equal((await get(s.mtlsPort, '/api/v1/namespaces/default', { ca: s.ca, cert: stranger.certPem, key: stranger.keyPem })).status, 401, 'a certificate from an unknown CA is ignored');
  t.equal((await get(s.port, '/api/v1/namespaces/default', { ca: s.ca, cert: client.certPem, key: client.keyPem })).status, 401, 'the uWS listener does not see certificates');
  const a = await get(s.mtlsPort, '/api/v1/namespaces/default', { ca: s.ca, token: s.token });
  const b = await get(s.port, '/api/v1/namespaces/default', { ca: s.ca, token: s.token });
  t.equal(a.body, b.body, 'both transports serve the same bytes');
});

t.test('aborted requests and unsupported methods', async (t) => {
  const s = await withServer(t);
  // Headers promising a body, a few bytes, then gone.
  await new Promise<void>((resolve) => {
    const sock = tls.connect({ host: '127.0.0.1', port: s.port, ca: s.ca }, () => {
      sock.write(`POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"apiVe`);
      setTimeout(() => { sock.destroy(); resolve(); }, 50);
    });
    sock.on('error', () => resolve());
  });
  await sleep(50);
  t.equal((await s.get('/api/v1/namespaces/default')).status, 200, 'server still serves after an aborted upload');
  const opt = await s.request('OPTIONS', '/api/v1/namespaces/default/configmaps');
  t.equal(opt.status, 405);
  t.equal(opt.json.reason, 'MethodNotAllowed');
  const put = await s.request('PUT', '/api/v1/namespaces/default/configmaps', { body: {} });
  t.equal(put.status, 405, 'PUT on a collection');
});

t.test('graceful shutdown: not ready during the delay, serving, then a clean exit', async (t) => {
  const s = await withServer(t, { args: ['--shutdown-delay-duration', '2s'] });
  t.equal((await s.get('/readyz')).status, 200);
  const events: any[] = [];
  const w = s.stream('/api/v1/namespaces/default/configmaps?watch=1', (e) => events.push(e));
  await sleep(100);
  const exited = new Promise<number | null>((r) => s.proc.once('exit', (code) => r(code)));
  s.proc.kill('SIGTERM');
  await sleep(300);
  const ready = await s.get('/readyz?verbose');
  t.equal(ready.status, 500, 'readyz fails during the shutdown delay');
  t.match(ready.text, /\[-\]shutdown failed/);
  t.equal((await s.get('/livez')).status, 200, 'still live');
  const c = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'during-shutdown' } } });
  t.equal(c.status, 201, 'requests are still served during the delay');
  await sleep(100);
  t.ok(events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'during-shutdown'), 'watchers still get events');
  t.equal(await exited, 0, 'exits cleanly after draining');
  await w.done;
  t.pass('watch stream ended');
});

/** Requests one after another on a single keep-alive connection; each answer with its body. */
async function onOneConnection(port: number, ca: Buffer, token: string, reqs: [string, string][]) {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  const out: { status: number; body: string; reused: boolean; error?: string }[] = [];
  try {
    for (const [method, p] of reqs) {
      out.push(await new Promise((resolve) => {
        const req = https.request({ host: '127.0.0.1', port, method, path: p, ca, agent, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode!, body, reused: req.reusedSocket }));
        });
        req.on('error', (e) => resolve({ status: 0, body: '', reused: req.reusedSocket, error: String(e) }));
        req.end();
      }));
    }
  } finally {
    agent.destroy();
  }
  return out;
}

for (const [listener, args] of [['the TLS front', []], ['the node:tls listener', ['--mtls-port', '0']], ['uWS directly', ['--secure-port-client-certs=false']]] as const) {
  t.test(`HEAD answers carry headers only (${listener}): the next answer on the connection is intact`, async (t) => {
    const s = await withServer(t, { args: [...args] });
    const port = listener === 'the node:tls listener' ? s.mtlsPort : s.port;
    const CM = '/api/v1/namespaces/default/configmaps';
    const cases: [string, number][] = [['/version', 200], [`${CM}/nope`, 404], [CM, 200], ['/healthz', 200], ['/api/v1/nosuch', 404], ['/apis', 200], [`${CM}?watch=1&timeoutSeconds=1`, 200]];
    for (const [p, code] of cases) {
      const [head, next] = await onOneConnection(port, s.ca, s.token, [['HEAD', p], ['GET', '/version']]);
      t.same({ status: head.status, body: head.body, error: head.error }, { status: code, body: '', error: undefined }, `HEAD ${p}: ${code}, no body`);
      t.same({ status: next.status, error: next.error, reused: next.reused }, { status: 200, error: undefined, reused: true }, `GET after HEAD ${p} on the same connection`);
      t.equal(JSON.parse(next.body || '{}').major, '1', 'its body is the version');
    }
  });
}
