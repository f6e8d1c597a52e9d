// The stock @kubernetes/client-node (kubernetes brand, the admin kubeconfig as written by the server)
// lists custom resources with CustomObjectsApi and keeps an informer's cache current from a watch.
import t from 'tap';
import * as k8s from '@kubernetes/client-node';
import path from 'node:path';
import { sleep, withServer } from '../lib/server.js';
import { eventually } from '../lib/poll.js';

const until = (check: () => boolean, ms = 60_000) => eventually(check, ms);

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
  metadata: { name: 'gizmos.acme.example' },
  spec: {
    group: 'acme.example', scope: 'Namespaced',
    names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { level: { type: 'integer' } } } } } } }],
  },
};

const gizmo = (name: string, level: number) => ({ apiVersion: 'acme.example/v1', kind: 'Gizmo', metadata: { name, namespace: 'default' }, spec: { level } });

t.test('@kubernetes/client-node lists and watches custom resources with an informer', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path.join(s.dataDir, 'admin.kubeconfig'));
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const objs = kc.makeApiClient(k8s.CustomObjectsApi);

  await ext.createCustomResourceDefinition({ body: CRD as k8s.V1CustomResourceDefinition });
  let established = false;
  for (let i = 0; i < 100 && !established; i++) {
    const got = await ext.readCustomResourceDefinition({ name: CRD.metadata.name });
    established = !!got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    if (!established) await sleep(50);
  }
  t.ok(established, 'Established');

  await objs.createNamespacedCustomObject({ group: 'acme.example', version: 'v1', namespace: 'default', plural: 'gizmos', body: gizmo('g1', 1) });
  const list = await objs.listNamespacedCustomObject({ group: 'acme.example', version: 'v1', namespace: 'default', plural: 'gizmos' });
  t.equal(list.kind, 'GizmoList');
  t.same(list.items.map((i: any) => i.metadata.name), ['g1']);

  const informer = k8s.makeInformer(kc, '/apis/acme.example/v1/namespaces/default/gizmos',
    () => objs.listNamespacedCustomObject({ group: 'acme.example', version: 'v1', namespace: 'default', plural: 'gizmos' }) as Promise<k8s.KubernetesListObject<k8s.KubernetesObject>>);
  const seen: string[] = [];
  informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
  informer.on('update', (o) => seen.push(`update ${o.metadata?.name} ${(o as any).spec.level}`));
  informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
  informer.on('error', (e) => seen.push(`error ${String(e)}`));
  await informer.start();
  t.teardown(() => informer.stop());
  t.ok(await until(() => seen.includes('add g1')), 'initial list through the informer');

  await objs.createNamespacedCustomObject({ group: 'acme.example', version: 'v1', namespace: 'default', plural: 'gizmos', body: gizmo('g2', 2) });
  await objs.patchNamespacedCustomObject({ group: 'acme.example', version: 'v1', namespace: 'default', plural: 'gizmos', name: 'g1', body: { spec: { level: 5 } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  await objs.deleteNamespacedCustomObject({ group: 'acme.example', version: 'v1', namespace: 'default', plural: 'gizmos', name: 'g2' });
  t.ok(await until(() => seen.includes('add g2') && seen.includes('update g1 5') && seen.includes('delete g2')), seen.join(', '));
  t.same(informer.list().map((o) => o.metadata?.name), ['g1'], 'the informer cache follows the watch');
  t.notOk(seen.some((x) => x.startsWith('error')), seen.join(', '));
});
