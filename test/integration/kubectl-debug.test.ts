// kubectl debug with stock kubectl (1.27 to 1.33): the ephemeral container is added through
// pods/ephemeralcontainers; with -i kubectl waits for it to run (the test plays the node agent's
// status update) and attaches through pods/attach to the fake node agent. kubectl 1.33 resizes
// through pods/resize.
import t from 'tap';
import { nodeAgentCredentials, registerNode, startFakeNodeAgent } from '../lib/fake-node-agent.js';
import { withServer, sleep, type TestServer } from '../lib/server.js';
import { KUBECTL_DIR, kubectl, kubectlRelease } from '../lib/kubectl.js';

const versions = ['1.27', '1.28', '1.30', '1.32', '1.33'].filter((v) => kubectlRelease(v));

const run = (s: TestServer, v: string, argv: string[], input?: string) => kubectl(s, argv, { input, bin: kubectlRelease(v) });

/** The node agent's part: every ephemeral container of the pod is reported running. */
async function markEphemeralRunning(s: TestServer, pod: string, until: () => boolean) {
  while (!until()) {
    const cur = (await s.get(`/api/v1/namespaces/default/pods/${pod}`)).json;
    const names: string[] = (cur.spec.ephemeralContainers ?? []).map((c: { name: string }) => c.name);
    const have = new Set((cur.status.ephemeralContainerStatuses ?? []).map((c: { name: string }) => c.name));
    if (names.some((n) => !have.has(n))) {
      await s.request('PATCH', `/api/v1/namespaces/default/pods/${pod}/status`, {
        body: { status: { ephemeralContainerStatuses: names.map((name) => ({ name, image: 'busybox', imageID: '', ready: false, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } })) } },
        headers: { 'content-type': 'application/merge-patch+json' },
      });
    }
    await sleep(100);
  }
}

t.test('kubectl debug through pods/ephemeralcontainers and pods/attach', { skip: versions.length ? false : `no kubectl.<version> in ${KUBECTL_DIR}` }, async (t) => {
  const { ca, args } = await nodeAgentCredentials();
  const agent = await startFakeNodeAgent(ca);
  t.teardown(() => agent.close());
  const s = await withServer(t, { brand: 'kubernetes', args });
  await registerNode(s, 'node-1', agent.port);
  const made = await s.request('POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name: 'dbg' }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'busybox' }] } } });
  t.equal(made.status, 201, made.text);
  await s.request('PATCH', '/api/v1/namespaces/default/pods/dbg/status', {
    body: { status: { phase: 'Running', containerStatuses: [{ name: 'c', image: 'busybox', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }] } },
    headers: { 'content-type': 'application/merge-patch+json' },
  });

  for (const v of versions) {
    const tag = v.replace('.', '-');
    const plain = await run(s, v, ['debug', 'dbg', '--image=busybox', '-c', `plain-${tag}`]);
    t.equal(plain.code, 0, `kubectl ${v} debug: ${plain.stderr}`);
    t.notMatch(plain.stdout + plain.stderr, /panic|nil pointer/);
    const pod = (await s.get('/api/v1/namespaces/default/pods/dbg')).json;
    t.ok(pod.spec.ephemeralContainers.some((c: { name: string; image: string }) => c.name === `plain-${tag}` && c.image === 'busybox'), `kubectl ${v}: the ephemeral container is in the pod`);

    let done = false;
    const marking = markEphemeralRunning(s, 'dbg', () => done);
    const attached = await run(s, v, ['debug', '-i', 'dbg', '--image=busybox', '-c', `att-${tag}`], 'hello from stdin\n');
    done = true;
    await marking;
    t.equal(attached.code, 0, `kubectl ${v} debug -i: ${attached.stderr}`);
    t.match(attached.stdout, `attached to att-${tag}\nhello from stdin\n`, `kubectl ${v} attached through the server to the node agent`);
    t.match(agent.seen.at(-1)!.path, new RegExp(`^/attach/default/dbg/att-${tag}\\?input=1&output=1`));
  }

  if (kubectlRelease('1.33')) {
    const r = await run(s, '1.33', ['patch', 'pod', 'dbg', '--subresource', 'resize', '-p', '{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"250m"}}}]}}']);
    t.equal(r.code, 0, r.stderr);
    t.equal((await s.get('/api/v1/namespaces/default/pods/dbg')).json.spec.containers[0].resources.requests.cpu, '250m', 'kubectl 1.33 resized through pods/resize');
  }
});
