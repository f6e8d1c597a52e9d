// The deprecated watch paths the 1.28 reference still serves: /api/v1/watch/namespaces/<ns>/<resource>,
// /apis/<group>/<version>/watch/<resource>, and /.../watch/.../<resource>/<name> (one object). They are
// watches (whatever ?watch= says), authorized as the verb watch on the resource the rest of the path
// names, as the reference's RequestInfo parses them.
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';

/** Event types and names a watch sends until its timeoutSeconds ends it. */
function events(s: TestServer, p: string): Promise<{ status: number; seen: string[] }> {
  const seen: string[] = [];
  const w = s.stream(`${p}${p.includes('?') ? '&' : '?'}timeoutSeconds=2`, (ev) => seen.push(`${ev.type} ${ev.object?.metadata?.name ?? ev.object?.reason}`));
  return w.done.then((status) => ({ status, seen }));
}

t.test('legacy watch paths are served as watches and authorized as watch on the resource', async (t) => {
  const s = await withServer(t);
  for (const name of ['lw-1', 'lw-2']) await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } } });
  const labels = { app: 'lw' };
  const d = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', {
    body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'lw-d' }, spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } } },
  });
  t.equal(d.status, 201, 'a deployment to watch');

  let r = await events(s, '/api/v1/watch/namespaces/default/configmaps');
  t.equal(r.status, 200, 'a namespace\'s collection');
  t.ok(r.seen.includes('ADDED lw-1') && r.seen.includes('ADDED lw-2'), `its objects as ADDED events (${r.seen.join(', ')})`);
  r = await events(s, '/apis/apps/v1/watch/deployments');
  t.equal(r.status, 200, 'a group\'s resource across namespaces');
  t.ok(r.seen.includes('ADDED lw-d'), `the deployment (${r.seen.join(', ')})`);
  r = await events(s, '/api/v1/watch/namespaces/default/configmaps/lw-2');
  t.equal(r.status, 200, 'one object by name');
  t.same(r.seen, ['ADDED lw-2'], 'only that object');
  r = await events(s, '/api/v1/watch/namespaces/default/configmaps/lw-2?fieldSelector=metadata.name%3Dlw-1');
  t.equal(r.status, 400, 'a fieldSelector naming another object: 400');

  const anon = await s.request('GET', '/api/v1/watch/namespaces/default/configmaps', { token: null });
  t.equal(anon.status, 403);
  t.equal(anon.json?.message, 'configmaps is forbidden: User "system:anonymous" cannot watch resource "configmaps" in API group "" in the namespace "default"', 'authorized as watch on configmaps');
  const named = await s.request('GET', '/apis/apps/v1/watch/namespaces/default/deployments/lw-d', { token: null });
  t.equal(named.json?.message, 'deployments.apps "lw-d" is forbidden: User "system:anonymous" cannot watch resource "deployments" in API group "apps" in the namespace "default"', 'a named one: watch on that name');
});
