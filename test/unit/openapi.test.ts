import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { getBrand, type Brand } from '../../kernel/contracts/brand.js';
import type { TypeDef } from '../../kernel/contracts/index.js';
import {
  buildOpenAPI, definitionName, encodeOpenAPIV2, groupVersionPath, negotiate, OPENAPI_V2_PROTOBUF, OpenAPIService, sha512Hex,
} from '../../kernel/api/openapi/index.js';
import { builtinTypes } from '../../plugins/types/builtin/index.js';

const cluster = getBrand('cluster');
const kube = getBrand('kubernetes');
const VERSION = { gitVersion: 'v1.28.0' };
type Json = Record<string, any>;

const docsFor = (brand: Brand) => buildOpenAPI(builtinTypes(brand), brand, VERSION);
const kubeDocs = docsFor(kube);
const clusterDocs = docsFor(cluster);

t.test('definition names in the brand style', async (t) => {
  t.equal(definitionName(kube, 'core.v1.Pod'), 'io.k8s.api.core.v1.Pod');
  t.equal(definitionName(cluster, 'core.v1.Pod'), 'io.cluster.api.core.v1.Pod');
  t.equal(definitionName(kube, 'meta.v1.ObjectMeta'), 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  t.equal(definitionName(cluster, 'meta.v1.ObjectMeta'), 'io.cluster.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  t.equal(definitionName(kube, 'intstr.IntOrString'), 'io.k8s.apimachinery.pkg.util.intstr.IntOrString');
  t.equal(definitionName(kube, 'resource.Quantity'), 'io.k8s.apimachinery.pkg.api.resource.Quantity');
  t.equal(definitionName(kube, 'networking.v1.Ingress'), 'io.k8s.api.networking.v1.Ingress');
});

t.test('v2 document shape for both brands', async (t) => {
  for (const [brand, docs, root] of [[kube, kubeDocs, 'io.k8s'], [cluster, clusterDocs, 'io.cluster']] as const) {
    const v2 = docs.v2;
    t.equal(v2.swagger, '2.0');
    t.same(v2.info, { title: brand.name === 'kubernetes' ? 'Kubernetes' : 'Cluster', version: 'v1.28.0' });
    const names = Object.keys(v2.definitions);
    t.ok(names.length > 250, `${names.length} definitions`);
    t.ok(names.every((n) => n.startsWith(`${root}.`)), `every definition under ${root}`);
    for (const m of ['ObjectMeta', 'ListMeta', 'Status', 'DeleteOptions', 'WatchEvent', 'Patch']) t.ok(v2.definitions[`${root}.apimachinery.pkg.apis.meta.v1.${m}`], `meta ${m}`);
    t.ok(v2.definitions[`${root}.api.autoscaling.v1.Scale`], 'Scale for the scale sub-resource');
    // every $ref resolves
    const dangling: string[] = [];
    JSON.stringify(v2, (k, v) => {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/definitions/') && !v2.definitions[v.slice(14)]) dangling.push(v);
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/parameters/') && !v2.parameters[v.slice(13)]) dangling.push(v);
      return v;
    });
    t.same(dangling, [], 'no dangling references');
    t.notOk(JSON.stringify(v2).includes(brand.name === 'kubernetes' ? 'x-cluster-' : 'x-kubernetes-'), 'only the brand\'s extensions');
  }
});

t.test('every served kind has a definition with its group-version-kind', async (t) => {
  for (const [brand, docs] of [[kube, kubeDocs], [cluster, clusterDocs]] as const) {
    const gvkKey = `x-${brand.ext}-group-version-kind`;
    for (const x of builtinTypes(brand)) {
      const d = docs.v2.definitions[x.definitionName!];
      t.ok(d, `${brand.name}: ${x.definitionName}`);
      t.ok(d[gvkKey].some((g: Json) => g.group === x.group && g.version === x.version && g.kind === x.kind), `${x.definitionName} gvk`);
      const list = docs.v2.definitions[x.definitionName + 'List'];
      t.ok(list[gvkKey].some((g: Json) => g.kind === x.kind + 'List'), `${x.kind}List gvk`);
      t.same(list.required, ['items']);
      // and in its group-version's v3 document
      const v3 = docs.v3[groupVersionPath(x.group, x.version)];
      t.ok(v3.components.schemas[x.definitionName!][gvkKey], `${x.kind} in v3 ${groupVersionPath(x.group, x.version)}`);
    }
  }
});

t.test('merge markers as x-<ext>- extensions', async (t) => {
  const spec = kubeDocs.v2.definitions['io.k8s.api.core.v1.PodSpec'].properties;
  // (descriptions come from the kubernetes-types package: the reference's API documentation)
  t.same(spec.containers, { type: 'array', items: { $ref: '#/definitions/io.k8s.api.core.v1.Container' }, 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'name', description: spec.containers.description });
  t.match(spec.containers.description, /^List of containers belonging to the pod\./);
  t.equal(spec.volumes['x-kubernetes-patch-strategy'], 'merge,retainKeys');
  t.equal(spec.nodeSelector['x-kubernetes-map-type'], 'atomic');
  const ports = kubeDocs.v2.definitions['io.k8s.api.core.v1.Container'].properties.ports;
  t.equal(ports['x-kubernetes-list-type'], 'map');
  t.same(ports['x-kubernetes-list-map-keys'], ['containerPort', 'protocol']);
  t.equal(kubeDocs.v2.definitions['io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector']['x-kubernetes-map-type'], 'atomic');
  t.same(kubeDocs.v2.definitions['io.k8s.apimachinery.pkg.util.intstr.IntOrString'], { type: 'string', format: 'int-or-string' });
  t.match(kubeDocs.v2.definitions['io.k8s.apimachinery.pkg.api.resource.Quantity'], { type: 'string', description: /^Quantity is a fixed-point representation of a number\./ });
  const v3 = kubeDocs.v3['api/v1'].components.schemas;
  t.same(v3['io.k8s.api.core.v1.PodSpec'].properties.containers.items, { $ref: '#/components/schemas/io.k8s.api.core.v1.Container' });
  t.match(v3['io.k8s.apimachinery.pkg.api.resource.Quantity'], { oneOf: [{ type: 'string' }, { type: 'number' }], description: /^Quantity is/ });
  t.same(v3['io.k8s.apimachinery.pkg.util.intstr.IntOrString'], { format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] });
  const cspec = clusterDocs.v2.definitions['io.cluster.api.core.v1.PodSpec'].properties;
  t.equal(cspec.containers['x-cluster-patch-merge-key'], 'name');
  t.equal(cspec.containers['x-cluster-patch-strategy'], 'merge');
});

const swaggerFile = [
  fileURLToPath(new URL('../../../../shared/reference/openapi/swagger.json', import.meta.url)),
  '../shared/reference/openapi/swagger.json',
].find((f) => existsSync(f));

t.test('container list markers equal the reference document', { skip: swaggerFile ? false : 'reference OpenAPI document not found' }, async (t) => {
  const ref = JSON.parse(readFileSync(swaggerFile!, 'utf8')) as Json;
  const x = (o: Json) => Object.fromEntries(Object.entries(o).filter(([k]) => k.startsWith('x-kubernetes-')));
  for (const [def, field] of [['io.k8s.api.core.v1.PodSpec', 'containers'], ['io.k8s.api.core.v1.PodSpec', 'initContainers'], ['io.k8s.api.core.v1.PodSpec', 'volumes'],
    ['io.k8s.api.core.v1.Container', 'ports'], ['io.k8s.api.core.v1.Container', 'env'], ['io.k8s.api.core.v1.ServiceSpec', 'ports'],
    ['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', 'ownerReferences'], ['io.k8s.api.apps.v1.DeploymentSpec', 'strategy']]) {
    t.same(x(kubeDocs.v2.definitions[def].properties[field]), x(ref.definitions[def].properties[field]), `${def}.${field}`);
  }
});

t.test('paths and operations', async (t) => {
  const paths = kubeDocs.v2.paths as Json;
  const pods = '/api/v1/namespaces/{namespace}/pods';
  for (const p of [pods, `${pods}/{name}`, `${pods}/{name}/status`, '/api/v1/pods', '/api/v1/watch/namespaces/{namespace}/pods', '/api/v1/watch/pods',
    '/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale', '/api/v1/namespaces/{name}/finalize', '/api/v1/nodes/{name}',
    '/apis/networking.k8s.io/v1/namespaces/{namespace}/ingresses/{name}']) t.ok(paths[p], p);
  t.notOk(paths['/api/v1/namespaces/{namespace}/nodes'], 'cluster-scoped types have no namespaced path');

  const names = (op: Json, doc: Json) => op.parameters.map((p: Json) => (p.$ref ? doc.parameters[p.$ref.slice(13)].name : p.name));
  const v2 = kubeDocs.v2;
  for (const [path, item] of Object.entries(paths) as [string, Json][]) {
    for (const m of ['post', 'put', 'patch']) {
      if (!item[m]) continue;
      const ps = names(item[m], v2);
      for (const q of ['fieldValidation', 'dryRun', 'fieldManager']) t.ok(ps.includes(q), `${m} ${path}: ${q}`);
      if (m === 'patch') t.ok(ps.includes('force'), `patch ${path}: force`);
      // kubectl looks for fieldValidation without following references
      t.ok(item[m].parameters.some((p: Json) => p.name === 'fieldValidation' && p.in === 'query'), `${m} ${path}: fieldValidation inline`);
    }
    for (const m of ['get', 'put', 'post', 'patch', 'delete']) {
      if (item[m]) t.ok(item[m]['x-kubernetes-group-version-kind'] && item[m]['x-kubernetes-action'] && item[m].operationId, `${m} ${path} has gvk, action and id`);
    }
  }
  const patch = paths[`${pods}/{name}`].patch;
  t.same(patch.consumes, ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml']);
  t.equal(patch.operationId, 'patchCoreV1NamespacedPod');
  t.equal(paths[pods].get.operationId, 'listCoreV1NamespacedPod');
  t.equal(paths['/api/v1/pods'].get.operationId, 'listCoreV1PodForAllNamespaces');
  t.equal(paths[`${pods}/{name}/status`].put.operationId, 'replaceCoreV1NamespacedPodStatus');
  t.equal(paths['/apis/networking.k8s.io/v1/namespaces/{namespace}/ingresses'].post.operationId, 'createNetworkingV1NamespacedIngress');
  t.equal(paths[pods].delete['x-kubernetes-action'], 'deletecollection');
  t.same(paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'].get['x-kubernetes-group-version-kind'], { group: 'autoscaling', version: 'v1', kind: 'Scale' });
  t.same(Object.keys(paths['/api/v1/namespaces/{name}/finalize']).filter((k) => k !== 'parameters'), ['put'], 'finalize is PUT only');
  t.same(paths[`${pods}/{name}`].get.responses['200'].schema, { $ref: '#/definitions/io.k8s.api.core.v1.Pod' });
  t.same(paths[pods].get.responses['200'].schema, { $ref: '#/definitions/io.k8s.api.core.v1.PodList' });

  // v3: the same operations per group-version, parameters inline
  const v3 = kubeDocs.v3['api/v1'];
  t.equal(v3.openapi, '3.0.0');
  const v3patch = v3.paths[`${pods}/{name}`].patch;
  t.same(v3patch.parameters.map((p: Json) => p.name), ['dryRun', 'fieldManager', 'fieldValidation', 'force']);
  t.same(Object.keys(v3patch.requestBody.content).sort(), [...patch.consumes].sort());
  t.same(v3patch['x-kubernetes-group-version-kind'], { group: '', version: 'v1', kind: 'Pod' });
  t.notOk(Object.keys(v3.paths).some((p) => p.startsWith('/apis/')), 'api/v1 document holds only core paths');
  t.ok(Object.keys(kubeDocs.v3['apis/apps/v1'].paths).every((p) => p.startsWith('/apis/apps/v1/')));
  const dangling: string[] = [];
  for (const doc of Object.values(kubeDocs.v3)) {
    JSON.stringify(doc, (k, v) => {
      if (k === '$ref' && !doc.components.schemas[String(v).replace('#/components/schemas/', '')]) dangling.push(v);
      return v;
    });
  }
  t.same(dangling, [], 'every v3 document is self-contained');
});

t.test('v3 discovery', async (t) => {
  const served = [...new Set(builtinTypes(kube).map((x) => groupVersionPath(x.group, x.version)))].sort();
  t.same(Object.keys(kubeDocs.v3Discovery.paths).sort(), served);
  for (const gv of served) {
    t.equal(kubeDocs.v3Discovery.paths[gv].serverRelativeURL, `/openapi/v3/${gv}?hash=${sha512Hex(JSON.stringify(kubeDocs.v3[gv]))}`);
  }
  t.ok(kubeDocs.v3Discovery.paths['apis/apps/v1']);
  t.ok(kubeDocs.v3Discovery.paths['apis/networking.k8s.io/v1']);
  t.ok(clusterDocs.v3Discovery.paths['apis/networking.cluster.io/v1']);
});

t.test('types without a schema still get a definition and paths', async (t) => {
  const widget: TypeDef = { group: 'example.com', version: 'v1alpha1', kind: 'Widget', resource: 'widgets', singular: 'widget', namespaced: true, verbs: ['get', 'list', 'create'] };
  const docs = buildOpenAPI([widget], cluster, VERSION);
  const d = docs.v2.definitions['com.example.v1alpha1.Widget'];
  t.ok(d, 'definition named after the group');
  t.same(d['x-cluster-group-version-kind'], [{ group: 'example.com', kind: 'Widget', version: 'v1alpha1' }]);
  t.ok(docs.v2.definitions['io.cluster.apimachinery.pkg.apis.meta.v1.ObjectMeta'], 'missing ObjectMeta reads as an open object');
  const coll = docs.v2.paths['/apis/example.com/v1alpha1/namespaces/{namespace}/widgets'];
  t.ok(coll.get && coll.post && !coll.delete, 'only the verbs served');
  t.notOk(docs.v2.paths['/apis/example.com/v1alpha1/watch/namespaces/{namespace}/widgets'], 'no watch path without the watch verb');
  t.notOk(docs.v2.paths['/apis/example.com/v1alpha1/namespaces/{namespace}/widgets/{name}'].patch, 'no patch');
});

t.test('content negotiation', async (t) => {
  const offers = ['application/json', OPENAPI_V2_PROTOBUF];
  t.equal(negotiate(undefined, offers), 'application/json');
  t.equal(negotiate('*/*', offers), 'application/json');
  t.equal(negotiate(OPENAPI_V2_PROTOBUF, offers), OPENAPI_V2_PROTOBUF);
  t.equal(negotiate(`${OPENAPI_V2_PROTOBUF}, application/json`, offers), OPENAPI_V2_PROTOBUF);
  t.equal(negotiate(`${OPENAPI_V2_PROTOBUF};q=0.5, application/json`, offers), 'application/json');
  t.equal(negotiate('application/json;q=0', offers), undefined);
  t.equal(negotiate('text/html', offers), undefined);
});

t.test('serving: ETag, 304, hashes, cache headers, protobuf, 406', async (t) => {
  let builds = 0;
  const types = builtinTypes(kube);
  const svc = new OpenAPIService(() => { builds++; return types; }, kube, VERSION);
  t.equal(svc.serveOpenAPI('/apis', {}), undefined, 'other paths are not answered');
  t.equal(builds, 0, 'nothing built before the first OpenAPI request');

  const v2 = svc.serveOpenAPI('/openapi/v2', { accept: 'application/json' })!;
  t.equal(v2.code, 200);
  t.equal(v2.headers['content-type'], 'application/json');
  t.equal(v2.headers['cache-control'], 'no-cache, private');
  t.equal(v2.headers.etag, `"${sha512Hex(v2.body)}"`);
  t.equal(JSON.parse(String(v2.body)).swagger, '2.0');

  const again = svc.serveOpenAPI('/openapi/v2', { Accept: 'application/json', 'If-None-Match': v2.headers.etag })!;
  t.equal(again.code, 304);
  t.equal(again.body, '');
  t.equal(again.headers.etag, v2.headers.etag);
  t.equal(svc.serveOpenAPI('/openapi/v2', { 'if-none-match': '"stale"' })!.code, 200);

  const pb = svc.serveOpenAPI('/openapi/v2', (n) => (n === 'accept' ? 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' : undefined))!;
  t.equal(pb.code, 200);
  t.equal(pb.headers['content-type'], OPENAPI_V2_PROTOBUF);
  t.not(pb.headers.etag, v2.headers.etag, 'the protobuf body has its own ETag');
  const bytes = Buffer.from(pb.body as Uint8Array);
  t.same([...bytes.subarray(0, 5)], [0x0a, 0x03, 0x32, 0x2e, 0x30], 'field 1 (swagger) = "2.0"');
  t.ok(bytes.includes(Buffer.from('io.k8s.api.core.v1.Pod')) && bytes.includes(Buffer.from('x-kubernetes-group-version-kind')));

  const bad = svc.serveOpenAPI('/openapi/v2', { accept: 'text/html' })!;
  t.equal(bad.code, 406);
  t.equal(JSON.parse(String(bad.body)).reason, 'NotAcceptable');
  t.equal(svc.serveOpenAPI('/openapi/v3/api/v1', { accept: OPENAPI_V2_PROTOBUF })!.code, 406, 'v3 is JSON only');

  const disc = svc.serveOpenAPI('/openapi/v3', {})!;
  t.equal(disc.code, 200);
  const url = JSON.parse(String(disc.body)).paths['api/v1'].serverRelativeURL as string;
  const hashed = svc.serveOpenAPI(url, { accept: 'application/json' })!;
  t.equal(hashed.code, 200);
  t.match(hashed.headers['cache-control'], /public, immutable, max-age=\d{7,}/);
  t.ok(hashed.headers.expires);
  t.equal(`"${url.split('hash=')[1]}"`, hashed.headers.etag, 'the URL hash is the ETag');
  const plain = svc.serveOpenAPI('/openapi/v3/api/v1', {})!;
  t.equal(plain.headers['cache-control'], 'no-cache, private');
  t.equal(plain.body, hashed.body);
  const stale = svc.serveOpenAPI('/openapi/v3/api/v1?hash=ABC', {})!;
  t.equal(stale.code, 301);
  t.equal(stale.headers.location, url);
  t.equal(svc.serveOpenAPI('/openapi/v3/apis/nope/v1', {})!.code, 404);
  t.equal(svc.serveOpenAPI('/openapi/v3/api/v1', { 'if-none-match': plain.headers.etag })!.code, 304);
  t.equal(builds, 1, 'documents built once and reused');
  svc.reset();
  svc.serveOpenAPI('/openapi/v3', {});
  t.equal(builds, 2, 'reset rebuilds');
});

t.test('protobuf encoding is well-formed', async (t) => {
  // Walk the top-level fields of the Document message: every field must be length-delimited or varint and end exactly.
  const bytes = Buffer.from(encodeOpenAPIV2(kubeDocs.v2));
  const seen = new Set<number>();
  let i = 0;
  const varint = () => {
    let n = 0, mul = 1;
    for (;;) {
      const b = bytes[i++];
      n += (b & 0x7f) * mul;
      if (b < 0x80) return n;
      mul *= 128;
    }
  };
  while (i < bytes.length) {
    const key = varint();
    const wire = key & 7;
    seen.add(Math.floor(key / 8));
    if (wire === 2) {
      const len = varint();
      i += len;
    }
    else if (wire === 0) varint();
    else t.fail(`unexpected wire type ${wire}`);
  }
  t.equal(i, bytes.length, 'ends on a field boundary');
  t.same([...seen].sort((a, b) => a - b), [1, 2, 8, 9, 10, 12, 13], 'swagger, info, paths, definitions, parameters, security, securityDefinitions');
});

t.test('documents rebuilt after a change are the documents built afresh', async (t) => {
  const crdLike = (group: string, kind: string): TypeDef => {
    const def = { type: 'object', description: `A ${kind}.`, properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } };
    return {
      group, version: 'v1', kind, resource: kind.toLowerCase() + 's', singular: kind.toLowerCase(), namespaced: true, subresources: ['status', 'scale'],
      openapi: { v2: def, v3: def, listV2: { type: 'object', description: `${kind}List` }, listV3: { type: 'object', description: `${kind}List` } },
    };
  };
  const types = [...builtinTypes(kube), crdLike('a.example.com', 'Apple')];
  const svc = new OpenAPIService(() => types, kube, VERSION);
  const body = (s: OpenAPIService, path: string, accept = 'application/json') => s.serveOpenAPI(path, { accept })!.body;
  const same = (label: string) => {
    const fresh = new OpenAPIService(() => types, kube, VERSION);
    const json = body(svc, '/openapi/v2');
    t.equal(json, body(fresh, '/openapi/v2'), `${label}: v2 JSON`);
    const pb = Buffer.from(body(svc, '/openapi/v2', OPENAPI_V2_PROTOBUF) as Uint8Array);
    t.ok(pb.equals(Buffer.from(body(fresh, '/openapi/v2', OPENAPI_V2_PROTOBUF) as Uint8Array)), `${label}: v2 protobuf`);
    t.ok(pb.equals(Buffer.from(encodeOpenAPIV2(JSON.parse(String(json))))), `${label}: the protobuf pieces encode the JSON document`);
    const disc = body(svc, '/openapi/v3');
    t.equal(disc, body(fresh, '/openapi/v3'), `${label}: v3 discovery`);
    for (const gv of Object.keys(JSON.parse(String(disc)).paths)) {
      if (body(svc, `/openapi/v3/${gv}`) !== body(fresh, `/openapi/v3/${gv}`)) t.fail(`${label}: ${gv} differs`);
    }
  };
  same('first build');
  types.push(crdLike('b.example.com', 'Banana'));
  svc.reset();
  same('a type added');
  t.ok(JSON.parse(String(body(svc, '/openapi/v2'))).definitions['com.example.b.v1.Banana'], 'the new definition is published');
  types.splice(types.findIndex((x) => x.kind === 'Apple'), 1);
  svc.reset();
  same('a type removed');
  t.notOk(JSON.parse(String(body(svc, '/openapi/v2'))).definitions['com.example.a.v1.Apple'], 'the removed definition is gone');
  types[types.length - 1] = { ...crdLike('b.example.com', 'Banana'), subresources: [] };
  svc.reset();
  same('a type replaced');
});
