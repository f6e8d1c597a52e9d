// pods/log through the server to a node agent: the fake node agent (test/lib/fake-node-agent.ts:
// HTTPS, client certificates required) answers /containerLogs; kubectl logs and logs -f read through the server.
import t from 'tap';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { nodeAgentCredentials, registerNode, startFakeNodeAgent } from '../lib/fake-node-agent.js';
import { withServer, sleep } from '../lib/server.js';
import { kubectlPath, noKubectl } from '../lib/kubectl.js';

t.test('pods/log through the node agent', async (t) => {
  const { ca, args } = await nodeAgentCredentials();
  const agent = await startFakeNodeAgent(ca);
  t.teardown(() => agent.close());
  const s = await withServer(t, { brand: 'kubernetes', args });
  await registerNode(s, 'node-1', agent.port);
  await s.request('POST', '/api/v1/namespaces/default/pods', { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'x' }] } } });
  await s.request('POST', '/api/v1/namespaces/default/pods', { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'two' }, spec: { nodeName: 'node-1', containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'x' }] } } });

  const r = await s.get('/api/v1/namespaces/default/pods/web/log?tailLines=10');
  t.equal(r.status, 200, r.text);
  t.equal(r.text, 'log of default/web/app line 1\nlog of default/web/app line 2\n');
  t.equal(agent.seen.at(-1)!.path, '/containerLogs/default/web/app?tailLines=10');
  t.equal(agent.seen.at(-1)!.cn, 'apiserver-node-agent-client', 'the server presents its node agent client certificate');
  const two = await s.get('/api/v1/namespaces/default/pods/two/log');
  t.equal(two.status, 400);
  t.equal(two.json.message, 'a container name must be specified for pod two, choose one of: [a b]');
  t.equal((await s.get('/api/v1/namespaces/default/pods/two/log?container=b')).text.split('\n')[0], 'log of default/two/b line 1');
  t.equal((await s.get('/api/v1/namespaces/default/pods/nope/log')).status, 404);

  // No node agent answering: a Status, not a hang.
  await s.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'dead' }, status: {} } });
  await s.request('PATCH', '/api/v1/nodes/dead/status', { body: { status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: 1 } } } }, headers: { 'content-type': 'application/merge-patch+json' } });
  await s.request('POST', '/api/v1/namespaces/default/pods', { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'lost' }, spec: { nodeName: 'dead', containers: [{ name: 'c', image: 'x' }] } } });
  const dead = await s.get('/api/v1/namespaces/default/pods/lost/log');
  t.equal(dead.status, 500);
  t.equal(dead.json.message, 'Get "https://127.0.0.1:1/containerLogs/default/lost/c": dial tcp 127.0.0.1:1: connect: connection refused');

  if (noKubectl) return;
  const run = (args: string[]) => new Promise<{ code: number; out: string }>((resolve) => {
    const p = spawn(kubectlPath!, ['--kubeconfig', path.join(s.dataDir, 'admin.kubeconfig'), ...args], { env: { ...process.env, HOME: s.dataDir } });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { out += d; });
    p.on('close', (code) => resolve({ code: code ?? 1, out }));
  });
  const logs = await run(['logs', 'web']);
  t.equal(logs.code, 0, logs.out);
  t.equal(logs.out, 'log of default/web/app line 1\nlog of default/web/app line 2\n');
  const follow = await run(['logs', '-f', 'web']);
  t.equal(follow.code, 0, follow.out);
  t.equal(follow.out, 'log of default/web/app line 1\nfollow line 2\nfollow line 3\nfollow line 4\n', 'followed as the agent streamed');
  t.match(agent.seen.at(-1)!.path, 'follow=true');
  await sleep(10);
});
