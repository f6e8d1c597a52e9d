// The official JavaScript client, both maintained majors (@kubernetes/client-node 1.x, and 2.x as the
// devDependency alias client-node-2), watching ConfigMaps through the server: every change arrives
// as its own event, in order, while the watch stays open (CI runs this file on Node 20 and Node 22).
import t from 'tap';
import path from 'node:path';
import { withServer } from '../lib/server.js';
import { until } from '../lib/poll.js';

interface Client { KubeConfig: new () => any; Watch: new (kc: any) => any }

const nodeMajor = Number(process.versions.node.split('.')[0]);
const majors: [string, () => Promise<Client>, string | false][] = [
  ['1.x', () => import('@kubernetes/client-node') as unknown as Promise<Client>, false],
  // 2.x runs on Node.js 22 and later (it fails to load on 20); CI runs this file on Node 22 too
  ['2.x', () => import('client-node-2') as unknown as Promise<Client>, nodeMajor < 22 ? `client-node 2.x needs Node.js 22 or later (this is ${process.version})` : false],
];

for (const [major, load, skip] of majors) {
  t.test(`@kubernetes/client-node ${major} watch sees each change as it happens`, { skip }, async (t) => {
    const k8s = await load();
    const s = await withServer(t, { brand: 'kubernetes' });
    t.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'jsw' } } })).status, 201);
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(path.join(s.dataDir, 'admin.kubeconfig'));
    const seen: string[] = [];
    let ended: unknown;
    const req = await new k8s.Watch(kc).watch('/api/v1/namespaces/jsw/configmaps', { allowWatchBookmarks: true },
      (type: string, obj: any) => { if (type !== 'BOOKMARK') seen.push(`${type} ${obj.metadata.name}`); },
      (err: unknown) => { ended = err ?? 'ended'; });
    t.teardown(() => req.abort());
    // the root CA ConfigMap is published into the new namespace by a controller
    await until(() => seen, (l) => l.includes('ADDED kube-root-ca.crt'), 60_000);
    for (const [step, want] of [
      [() => s.request('POST', '/api/v1/namespaces/jsw/configmaps', { body: { metadata: { name: 'a' }, data: { k: '1' } } }), 'ADDED a'],
      [() => s.request('PATCH', '/api/v1/namespaces/jsw/configmaps/a', { raw: '{"data":{"k":"2"}}', headers: { 'content-type': 'application/merge-patch+json' } }), 'MODIFIED a'],
      [() => s.request('DELETE', '/api/v1/namespaces/jsw/configmaps/a'), 'DELETED a'],
    ] as const) {
      const r = await step();
      t.ok(r.status < 300, `${want}: ${r.status}`);
      await until(() => seen, (l) => l.includes(want), 60_000);
      t.ok(seen.includes(want), `${want} seen with the watch still open`);
    }
    t.same(seen.filter((e) => e.endsWith(' a')), ['ADDED a', 'MODIFIED a', 'DELETED a'], 'in order, once each');
    t.equal(ended, undefined, 'the watch did not end');
  });
}
