// The default configuration: stock kubectl with a client certificate on the secure port, RBAC
// deciding, anonymous users reaching only health and version.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { withServer } from '../lib/server.js';
import { kubectl, noKubectl } from '../lib/kubectl.js';

t.test('defaults: Node,RBAC; anonymous only for public info', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  t.equal(s.mtlsPort, 0, 'no separate client-certificate listener by default: the secure port takes certificates');
  t.equal((await s.request('GET', '/version', { token: null })).status, 200, 'anonymous may read /version');
  t.equal((await s.request('GET', '/readyz', { token: null })).status, 200, 'anonymous may read /readyz');
  const anon = await s.request('GET', '/api/v1/namespaces', { token: null });
  t.equal(anon.status, 403, 'anonymous may not list namespaces');
  t.match(anon.json.message, /User "system:anonymous" cannot list resource "namespaces"/);
  t.equal((await s.get('/api/v1/namespaces')).status, 200, 'the admin token (system:masters) may');
});

t.test('kubectl with a client certificate', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const certCfg = path.join(s.dataDir, 'admin-cert.kubeconfig');
  t.match(readFileSync(certCfg, 'utf8'), `server: https://127.0.0.1:${s.port}`, 'the certificate kubeconfig names the secure port');
  const who = await kubectl(s, ['--kubeconfig', certCfg, 'auth', 'whoami', '-o', 'json']);
  t.equal(who.code, 0, who.stderr);
  const info = JSON.parse(who.stdout).status.userInfo;
  t.equal(info.username, 'admin');
  t.ok(info.groups.includes('system:masters'), 'the certificate organization is a group');
  const ns = await kubectl(s, ['--kubeconfig', certCfg, 'get', 'namespaces']);
  t.equal(ns.code, 0, ns.stderr);
  t.match(ns.stdout, /^kube-system\s+Active/m);
  const create = await kubectl(s, ['--kubeconfig', certCfg, 'create', 'configmap', 'by-cert', '--from-literal=a=b']);
  t.equal(create.code, 0, create.stderr);
});
