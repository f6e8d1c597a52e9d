// Overload protection over HTTP: API Priority and Fairness classifies every request (the PF headers),
// queues a non-exempt flow fairly and answers 429 with Retry-After once its queues are full, while
// exempt users and health checks go straight through; with APF off the in-flight limits apply.
import https from 'node:https';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';

const D = 'cluster.io';
const FS = 'x-kubernetes-pf-flowschema-uid';
const PL = 'x-kubernetes-pf-prioritylevel-uid';

/** Lets user "alice" (not in system:masters, so not exempt) write anything, through the default cluster-admin role. */
async function grantAlice(s: TestServer) {
  const r = await s.request('POST', `/apis/rbac.authorization.${D}/v1/clusterrolebindings`, {
    body: { apiVersion: `rbac.authorization.${D}/v1`, kind: 'ClusterRoleBinding', metadata: { name: 'alice-admin' }, roleRef: { apiGroup: `rbac.authorization.${D}`, kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'User', apiGroup: `rbac.authorization.${D}`, name: 'alice' }] },
  });
  if (r.status !== 201) throw new Error(`binding: ${r.status} ${r.text}`);
}

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; text: string; ms: number }

/** `n` requests at once on `n` connections (the admin's token, impersonating `as` when given). */
async function burst(s: TestServer, n: number, make: (i: number) => { method: string; path: string; body?: unknown; as?: string }, opts: { warm?: boolean } = {}): Promise<Answer[]> {
  const agent = new https.Agent({ keepAlive: !!opts.warm, maxSockets: n, ca: s.ca });
  if (opts.warm) {
    // open every connection first (as the admin, exempt), so the burst itself arrives at once
    await Promise.all(Array.from({ length: n }, () => new Promise<void>((r) => {
      https.get({ host: '127.0.0.1', port: s.port, path: '/livez', agent }, (res) => { res.resume(); res.on('end', () => r()); }).on('error', () => r());
    })));
  }
  return Promise.all(Array.from({ length: n }, (_, i) => new Promise<Answer>((resolve) => {
    const m = make(i);
    const body = m.body === undefined ? undefined : JSON.stringify(m.body);
    const headers: Record<string, string> = { authorization: `Bearer ${s.token}`, accept: 'application/json' };
    if (m.as) headers['impersonate-user'] = m.as;
    if (body) headers['content-type'] = 'application/json';
    const t0 = performance.now();
    const req = https.request({ host: '127.0.0.1', port: s.port, method: m.method, path: m.path, headers, agent }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, ms: performance.now() - t0 }));
    });
    req.on('error', (e) => resolve({ status: 0, headers: {}, text: e.message, ms: performance.now() - t0 }));
    req.end(body);
  }))).finally(() => agent.destroy());
}

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } });

t.test('every request is classified: the reference\'s PF headers, exempt for system:masters and probes', async (t) => {
  const s = await withServer(t);
  await grantAlice(s);
  const admin = await s.get('/api/v1/namespaces');
  const alice = await s.request('GET', '/api/v1/namespaces', { headers: { 'impersonate-user': 'alice' } });
  const anon = await s.request('GET', '/livez', { token: null });
  for (const [who, r] of [['admin', admin], ['alice', alice], ['anonymous /livez', anon]] as const) {
    t.equal(r.status, 200, `${who}: 200`);
    t.match(r.headers[FS], /^[0-9a-f-]{36}$/, `${who}: flow schema UID header`);
    t.match(r.headers[PL], /^[0-9a-f-]{36}$/, `${who}: priority level UID header`);
  }
  t.equal(admin.headers[PL], anon.headers[PL], 'system:masters and probes share the exempt level');
  t.not(alice.headers[PL], admin.headers[PL], 'an ordinary user is not exempt');
  t.not(alice.headers[FS], admin.headers[FS], 'and matches another flow schema');
});

t.test('APF: a stored priority level with small queues: 429 with Retry-After past them; exempt requests and /livez answer', async (t) => {
  // one seat for the whole server, and a level of our own for alice: one queue of two
  const s = await withServer(t, { args: ['--max-requests-inflight=1', '--max-mutating-requests-inflight=0'] });
  await grantAlice(s);
  const FC = `/apis/flowcontrol.apiserver.${D}/v1beta3`;
  const pl = await s.request('POST', `${FC}/prioritylevelconfigurations`, {
    body: { apiVersion: `flowcontrol.apiserver.${D}/v1beta3`, kind: 'PriorityLevelConfiguration', metadata: { name: 'tiny' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, lendablePercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 2 } } } } },
  });
  t.equal(pl.status, 201, `PriorityLevelConfiguration: ${pl.text.slice(0, 200)}`);
  const fs = await s.request('POST', `${FC}/flowschemas`, {
    body: {
      apiVersion: `flowcontrol.apiserver.${D}/v1beta3`, kind: 'FlowSchema', metadata: { name: 'alice-tiny' },
      spec: {
        priorityLevelConfiguration: { name: 'tiny' }, matchingPrecedence: 500, distinguisherMethod: { type: 'ByUser' },
        rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }],
      },
    },
  });
  t.equal(fs.status, 201, `FlowSchema: ${fs.text.slice(0, 200)}`);
  // the plugin follows the stored objects: alice's answers name the new level once it has them
  let onTiny = false;
  for (let i = 0; i < 100 && !onTiny; i++) {
    const r = await s.request('GET', '/api/v1/namespaces/default', { headers: { 'impersonate-user': 'alice' } });
    onTiny = r.headers[PL] === pl.json.metadata.uid && r.headers[FS] === fs.json.metadata.uid;
    if (!onTiny) await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(onTiny, 'alice is classified by the stored FlowSchema into the stored level');

  const n = 60;
  const during = burst(s, n, (i) => ({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: configMap(`flood-${i}`), as: 'alice' }), { warm: true });
  const [livez, adminGet] = await Promise.all([
    s.request('GET', '/livez', { token: null }),
    s.get('/api/v1/namespaces/default/configmaps?limit=1'),
  ]);
  const answers = await during;
  const created = answers.filter((a) => a.status === 201);
  const refused = answers.filter((a) => a.status === 429);
  t.equal(created.length + refused.length, n, `every answer is 201 or 429 (${[...new Set(answers.map((a) => a.status))].join(',')})`);
  t.ok(refused.length > 0, `past one seat and a queue of two, writes were refused: ${refused.length}`);
  t.ok(created.length >= 1, `and some ran: ${created.length}`);
  const r = refused[0];
  t.match(r?.headers['retry-after'], /^\d+$/, 'Retry-After in seconds');
  t.equal(r?.text, 'Too many requests, please try again later.\n', 'the reference\'s plain-text body');
  t.match(r?.headers['content-type'], /^text\/plain/);
  t.equal(r?.headers[PL], pl.json.metadata.uid, 'a refusal names the level by UID');
  t.equal(livez.status, 200, '/livez answered during the burst');
  t.equal(adminGet.status, 200, 'an exempt (system:masters) request answered during the burst');
  const list = await s.get('/api/v1/namespaces/default/configmaps');
  const names = new Set(list.json.items.map((o: any) => o.metadata.name));
  t.equal([...names].filter((x) => String(x).startsWith('flood-')).length, created.length, 'exactly the 201s were stored');
  const metrics = await s.get('/metrics');
  t.match(metrics.text, /apiserver_flowcontrol_rejected_requests_total\{flow_schema="alice-tiny",priority_level="tiny",reason="(queue-full|concurrency-limit)"\} \d+/);
});

t.test('APF borrowing: a busy level borrows seats idle levels may lend; health checks and exempt requests stay fast', async (t) => {
  // 30 seats for the server, dealt again every half second; alice's own level has one nominal seat
  // and lends none, and every other level is idle.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-apf-'));
  const config = path.join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ flowControl: { plugin: 'apf', options: { serverConcurrencyLimit: 30, queueWaitSeconds: 15, borrowingPeriodSeconds: 0.5 } } }));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = await withServer(t, { args: ['--config', config] });
  await grantAlice(s);
  const FC = `/apis/flowcontrol.apiserver.${D}/v1beta3`;
  const pl = await s.request('POST', `${FC}/prioritylevelconfigurations`, {
    body: { apiVersion: `flowcontrol.apiserver.${D}/v1beta3`, kind: 'PriorityLevelConfiguration', metadata: { name: 'small' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, lendablePercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 8, handSize: 2, queueLengthLimit: 50 } } } } },
  });
  t.equal(pl.status, 201, `PriorityLevelConfiguration: ${pl.text.slice(0, 200)}`);
  const fs = await s.request('POST', `${FC}/flowschemas`, {
    body: {
      apiVersion: `flowcontrol.apiserver.${D}/v1beta3`, kind: 'FlowSchema', metadata: { name: 'alice-small' },
      spec: {
        priorityLevelConfiguration: { name: 'small' }, matchingPrecedence: 500, distinguisherMethod: { type: 'ByUser' },
        rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }],
      },
    },
  });
  t.equal(fs.status, 201);
  let onSmall = false;
  for (let i = 0; i < 100 && !onSmall; i++) {
    const r = await s.request('GET', '/api/v1/namespaces/default', { headers: { 'impersonate-user': 'alice' } });
    onSmall = r.headers[PL] === pl.json.metadata.uid;
    if (!onSmall) await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(onSmall, 'alice is on the stored level');
  const gauge = async (name: string) => Number(new RegExp(`^apiserver_flowcontrol_${name}\\{priority_level="small"\\} (\\d+)`, 'm').exec((await s.get('/metrics')).text)?.[1]);
  t.equal(await gauge('nominal_limit_seats'), 1, 'one nominal seat (30 × 1 / 246 shares, rounded up)');

  // Twelve reads that each hold their seat for 3 s (a resourceVersion the server has not reached
  // yet: it waits, then answers 504). On one seat they would take 36 s, and most would time out in
  // the queue (15 s) with 429; with borrowing they run side by side within a period or two.
  const far = '/api/v1/namespaces/default/configmaps?resourceVersion=999999999&limit=1';
  const t0 = performance.now();
  const during = burst(s, 12, () => ({ method: 'GET', path: far, as: 'alice' }), { warm: true });
  await new Promise((r) => setTimeout(r, 1500));
  const borrowed = await gauge('current_limit_seats');
  const probes: number[] = [];
  for (let i = 0; i < 5; i++) {
    const p0 = performance.now();
    const [livez, admin] = await Promise.all([s.request('GET', '/livez', { token: null }), s.get('/api/v1/namespaces/default')]);
    probes.push(performance.now() - p0);
    t.ok(livez.status === 200 && admin.status === 200, '/livez and an exempt read answer during the burst');
  }
  const answers = await during;
  const ms = performance.now() - t0;
  t.ok(borrowed >= 12, `the level borrowed seats: its limit went from 1 to ${borrowed}`);
  t.same([...new Set(answers.map((a) => a.status))], [504], `every read ran and answered 504 (none refused with 429): ${answers.map((a) => a.status).join(',')}`);
  t.comment(`twelve 3-second reads on one nominal seat took ${(ms / 1000).toFixed(1)} s; health checks and exempt reads: longest ${Math.max(...probes).toFixed(0)} ms`);
});

t.test('APF off: --max-mutating-requests-inflight limits writes with 429, system:masters is not limited', async (t) => {
  const s = await withServer(t, { args: ['--enable-priority-and-fairness=false', '--max-mutating-requests-inflight=1'] });
  await grantAlice(s);
  const alice = await burst(s, 60, (i) => ({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: configMap(`a-${i}`), as: 'alice' }));
  const refused = alice.filter((a) => a.status === 429);
  t.ok(refused.length > 0, `some of 60 concurrent writes over a limit of 1 were refused (${refused.length})`);
  t.ok(alice.every((a) => a.status === 201 || a.status === 429), 'the rest were created');
  t.equal(refused[0]?.headers['retry-after'], '1');
  t.notOk(refused[0]?.headers[FS], 'no PF headers without APF');
  const admin = await burst(s, 60, (i) => ({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: configMap(`m-${i}`) }));
  t.ok(admin.every((a) => a.status === 201), 'system:masters writes are never limited');
});

t.test('bad flow-control flags and config are refused at start', async (t) => {
  const { startServer } = await import('../lib/server.js');
  await t.rejects(startServer({ args: ['--max-requests-inflight=lots'] }), /max-requests-inflight/);
});
