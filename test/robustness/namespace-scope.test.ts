// The scope of a collection request is its path, never its selectors. A user whose rights stop at one
// namespace (a Role and RoleBinding for a token user) lists, watches and deletes collections there
// with field selectors that name another namespace or another namespace's object, in every
// representation (JSON, Table, Protobuf, WebSocket) and every watch start (current state, "0", a
// revision in the past, a streaming list, live events): nothing of the other namespace comes back
// and nothing there is deleted. As in the reference's store, such a selector intersects with the
// path's namespace: the answer is empty, never a widened read.
import https from 'node:https';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startServer, type TestServer } from '../lib/server.js';
import { rawRequest, type RawReply } from '../lib/protobuf.js';
import { connectWebSocket } from '../lib/ws-client.js';

const ADMIN = 'scope-admin-token-0123456789';
const BOB = 'scope-bob-token-0123456789';
const MINE = 'bobns';
const THEIRS = 'kube-system';
/** Every object of the other namespace carries this in its name: any byte of it in an answer is a leak. */
const MARK = 'leakmark';

const JSON_ACCEPT = 'application/json';
const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const PB_ACCEPT = 'application/vnd.kubernetes.protobuf';

async function serve(t: { teardown(fn: () => unknown): void }): Promise<TestServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'capi-scope-'));
  mkdirSync(path.join(dataDir, 'pki'), { recursive: true, mode: 0o700 });
  const admin = `${ADMIN},admin,admin-uid,"system:masters"`;
  writeFileSync(path.join(dataDir, 'pki', 'tokens.csv'), `${admin}\n`, { mode: 0o600 });
  const users = path.join(dataDir, 'users.csv');
  writeFileSync(users, `${admin}\n${BOB},bob,bob-uid\n`);
  const s = await startServer({ brand: 'kubernetes', dataDir, args: ['--token-auth-file', users] });
  t.teardown(async () => {
    await s.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return s;
}

async function must(s: TestServer, method: string, p: string, body: unknown, code = 201): Promise<any> {
  const r = await s.request(method, p, { body });
  if (r.status !== code) throw new Error(`${method} ${p}: ${r.status} ${r.text.slice(0, 300)}`);
  return r.json;
}

const secret = (ns: string, name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns }, stringData: { k: name } });

/** Bob's request, answered as bytes; a watch ends by its timeoutSeconds. */
const asBob = (s: TestServer, method: string, p: string, accept: string): Promise<RawReply> =>
  rawRequest(s, method, p, { authorization: `Bearer ${BOB}`, accept });

/** A WebSocket watch as bob: every message's bytes once the server ends it (timeoutSeconds). */
async function wsAsBob(s: TestServer, p: string, accept: string): Promise<{ status: number; body: Buffer }> {
  const ws = await connectWebSocket({ port: s.port, path: p, ca: s.ca, token: BOB, headers: { accept } });
  if (ws.status !== 101) return { status: ws.status, body: Buffer.from(ws.body) };
  await ws.closed;
  return { status: 101, body: Buffer.concat(ws.messages.map((m) => m.data)) };
}

t.test('a namespaced collection request never reads or deletes outside its namespace', async (t) => {
  const s = await serve(t);
  s.token = ADMIN;
  await must(s, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: MINE } });
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  await must(s, 'POST', `${rbac}/namespaces/${MINE}/roles`, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'secrets' },
    rules: [{ apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get', 'list', 'watch', 'delete', 'deletecollection'] }],
  });
  await must(s, 'POST', `${rbac}/namespaces/${MINE}/rolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'bob-secrets' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secrets' }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bob' }],
  });
  await must(s, 'POST', `/api/v1/namespaces/${MINE}/secrets`, secret(MINE, 'bobsecret'));
  for (const n of [1, 2]) await must(s, 'POST', `/api/v1/namespaces/${THEIRS}/secrets`, secret(THEIRS, `${MARK}-${n}`));
  await must(s, 'POST', `/api/v1/namespaces/${THEIRS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${MARK}-cm` } });

  const base = `/api/v1/namespaces/${MINE}/secrets`;
  // Bob's rights are what this test says they are: his own namespace yes, the other no.
  t.equal((await asBob(s, 'GET', base, JSON_ACCEPT)).status, 200, 'bob lists his own secrets');
  t.equal((await asBob(s, 'GET', `/api/v1/namespaces/${THEIRS}/secrets`, JSON_ACCEPT)).status, 403, 'bob may not list kube-system');

  const selectors = [
    `metadata.namespace=${THEIRS}`,
    `metadata.namespace==${THEIRS}`,
    `metadata.namespace!=${MINE}`,
    `metadata.name=${MARK}-1`,
    `metadata.namespace=${THEIRS},metadata.name=${MARK}-1`,
    `metadata.name==${MARK}-2,metadata.namespace==${THEIRS}`,
  ].map(encodeURIComponent);
  const reps: [string, string][] = [['json', JSON_ACCEPT], ['table', TABLE_ACCEPT], ['protobuf', PB_ACCEPT]];
  const watchStarts = ['', '&resourceVersion=0', '&resourceVersion=1', '&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true'];
  const leaks: string[] = [];
  const check = (what: string, status: number, want: number, body: Buffer) => {
    if (status !== want) leaks.push(`${what}: status ${status}, expected ${want}: ${body.toString('utf8').slice(0, 200)}`);
    else if (body.includes(MARK)) leaks.push(`${what}: the answer holds another namespace's object`);
  };

  // Lists: the answer is an empty list in every representation.
  for (const fs of selectors) {
    for (const [rep, accept] of reps) {
      const r = await asBob(s, 'GET', `${base}?fieldSelector=${fs}`, accept);
      check(`list ${rep} ${decodeURIComponent(fs)}`, r.status, 200, r.body);
    }
  }

  // Watches: all open at once, each ended by the server after its timeout; a secret is created in
  // the other namespace while they are open, so live events are covered as well as the replay.
  const watches: Promise<void>[] = [];
  let opened = 0;
  for (const fs of selectors) {
    for (const start of watchStarts) {
      const p = `${base}?watch=1&timeoutSeconds=3&fieldSelector=${fs}${start}`;
      const what = `${decodeURIComponent(fs)}${start}`;
      for (const [rep, accept] of reps) {
        watches.push(asBob(s, 'GET', p, accept).then((r) => check(`watch ${rep} ${what}`, r.status, 200, r.body)));
        opened++;
      }
      for (const [rep, accept] of [reps[0], reps[2]]) {
        watches.push(wsAsBob(s, p, accept).then((r) => check(`watch websocket ${rep} ${what}`, r.status, 101, r.body)));
        opened++;
      }
    }
  }
  await must(s, 'POST', `/api/v1/namespaces/${THEIRS}/secrets`, secret(THEIRS, `${MARK}-live`));
  await must(s, 'PUT', `/api/v1/namespaces/${THEIRS}/secrets/${MARK}-1`, { ...secret(THEIRS, `${MARK}-1`), stringData: { k: 'changed' } }, 200);
  await Promise.all(watches);
  t.ok(opened > 100, `${opened} watches`);

  // deletecollection: nothing of the other namespace is deleted, nor named in the answer.
  for (const fs of selectors) {
    for (const [rep, accept] of [reps[0], reps[2]]) {
      for (const res of ['secrets', 'configmaps']) {
        const r = await asBob(s, 'DELETE', `/api/v1/namespaces/${MINE}/${res}?fieldSelector=${fs}`, accept);
        check(`deletecollection ${res} ${rep} ${decodeURIComponent(fs)}`, r.status, 200, r.body);
      }
    }
  }
  t.same(leaks, [], 'no request of bob reached another namespace');

  const theirs = await s.get(`/api/v1/namespaces/${THEIRS}/secrets`);
  t.same(theirs.json.items.map((i: any) => i.metadata.name).filter((n: string) => n.startsWith(MARK)).sort(), [`${MARK}-1`, `${MARK}-2`, `${MARK}-live`], 'kube-system\'s secrets are all still there');
  t.equal((await s.get(`/api/v1/namespaces/${THEIRS}/configmaps/${MARK}-cm`)).status, 200, 'and its ConfigMap');

  // The selector still works inside the path's namespace (the test is not vacuous).
  const own = await asBob(s, 'GET', `${base}?fieldSelector=${encodeURIComponent(`metadata.namespace=${MINE}`)}`, JSON_ACCEPT);
  t.same(JSON.parse(own.body.toString()).items.map((i: any) => i.metadata.name), ['bobsecret'], 'metadata.namespace of the path selects its objects');
  const ownWatch = await asBob(s, 'GET', `${base}?watch=1&timeoutSeconds=1&fieldSelector=${encodeURIComponent('metadata.name=bobsecret')}`, JSON_ACCEPT);
  t.match(ownWatch.body.toString(), /"ADDED".*"name":"bobsecret"/, 'a watch by name in the path\'s namespace');
  // Across all namespaces (the admin), metadata.namespace narrows the read to that namespace.
  const across = await s.get(`/api/v1/secrets?fieldSelector=${encodeURIComponent(`metadata.namespace=${THEIRS}`)}`);
  t.ok(across.json.items.length >= 3 && across.json.items.every((i: any) => i.metadata.namespace === THEIRS), 'cluster-wide: only kube-system');
});
