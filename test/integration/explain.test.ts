// `kubectl explain` is the API's manual: the OpenAPI documents carry the reference's descriptions of
// every built-in type and field (read from the kubernetes-types package at start).
import t from 'tap';
import { withServer } from '../lib/server.js';
import { kubectl, kubectlRelease, noKubectl } from '../lib/kubectl.js';

t.test('OpenAPI v2 and v3 carry the reference descriptions', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const v2 = (await s.get('/openapi/v2')).json;
  const spec = v2.definitions['io.k8s.api.apps.v1.DeploymentSpec'];
  t.equal(spec.description, 'DeploymentSpec is the specification of the desired behavior of the Deployment.');
  t.match(spec.properties.replicas.description, /^Number of desired pods\./);
  t.match(v2.definitions['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'].properties.name.description, /^Name must be unique within a namespace\./);
  t.match(v2.definitions['io.k8s.api.core.v1.PodSpec'].properties.affinity.description, /scheduling constraints/, 'a field that refers to another definition');
  const paths = (await s.get('/openapi/v3')).json.paths;
  const v3 = (await s.get(paths['apis/apps/v1'].serverRelativeURL)).json;
  t.match(v3.components.schemas['io.k8s.api.apps.v1.DeploymentSpec'].properties.replicas.description, /^Number of desired pods\./);
});

t.test('kubectl explain shows the descriptions (v3 and v2)', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const r = await kubectl(s, ['explain', 'deployment.spec.replicas']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /DESCRIPTION:\n\s+Number of desired pods\./);
  t.notMatch(r.stdout, /<empty>/);
  const pods = await kubectl(s, ['explain', 'pods.spec']);
  t.match(pods.stdout, /affinity\t<Affinity>\n\s+If specified, the pod's scheduling constraints/);
  const old = kubectlRelease('1.27');
  if (old) {
    const v2 = await kubectl(s, ['explain', 'pod.metadata.name', '--output=plaintext-openapiv2'], { bin: old });
    t.match(v2.stdout, /DESCRIPTION:\n\s+Name must be unique within a namespace\./, 'kubectl 1.27, OpenAPI v2');
  }
});

t.test('a field with merge markers of its own refers to its named definition, as the reference publishes it', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const A = 'io.k8s.api.apps.v1';
  const v2 = (await s.get('/openapi/v2')).json.definitions;
  t.same(v2[`${A}.DeploymentSpec`].properties.strategy, {
    $ref: `#/definitions/${A}.DeploymentStrategy`, 'x-kubernetes-patch-strategy': 'retainKeys',
    description: 'The deployment strategy to use to replace existing pods with new ones.',
  });
  t.equal(v2[`${A}.DeploymentStrategy`].description, 'DeploymentStrategy describes how to replace existing pods with new ones.');
  const paths = (await s.get('/openapi/v3')).json.paths;
  const v3 = (await s.get(paths['apis/apps/v1'].serverRelativeURL)).json.components.schemas;
  t.same(v3[`${A}.DeploymentSpec`].properties.strategy, {
    allOf: [{ $ref: `#/components/schemas/${A}.DeploymentStrategy` }], 'x-kubernetes-patch-strategy': 'retainKeys',
    description: 'The deployment strategy to use to replace existing pods with new ones.',
  });
  t.match(v3[`${A}.DeploymentStrategy`].properties.type.description, /^Type of deployment\. Can be "Recreate" or "RollingUpdate"/);
  const policy = (await s.get(paths['apis/policy/v1'].serverRelativeURL)).json.components.schemas;
  t.match(policy['io.k8s.api.policy.v1.PodDisruptionBudgetSpec'].properties.selector, { allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector' }], 'x-kubernetes-patch-strategy': 'replace' });
  const core = (await s.get(paths['api/v1'].serverRelativeURL)).json.components.schemas;
  t.match(core['io.k8s.api.core.v1.PersistentVolumeSpec'].properties.claimRef, { allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.ObjectReference' }], 'x-kubernetes-map-type': 'granular' });
});

t.test('kubectl explain describes the fields of such a field', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const r = await kubectl(s, ['explain', 'deployment.spec.strategy']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /FIELD: strategy <DeploymentStrategy>/);
  t.match(r.stdout, /rollingUpdate\t<RollingUpdateDeployment>\n\s+Rolling update config params\./);
  t.match(r.stdout, /type\t<string>\n\s+Type of deployment\./);
  t.notMatch(r.stdout, /<no description>/);
  const pdb = await kubectl(s, ['explain', 'poddisruptionbudget.spec.selector']);
  t.match(pdb.stdout, /matchLabels\t<map\[string\]string>\n\s+matchLabels is a map/);
  t.notMatch(pdb.stdout, /<no description>/);
});

t.test('enum fields carry their values, as the reference publishes them (OpenAPIEnums)', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const v2 = (await s.get('/openapi/v2')).json.definitions;
  t.same(v2['io.k8s.api.core.v1.Container'].properties.imagePullPolicy.enum, ['Always', 'IfNotPresent', 'Never']);
  t.match(v2['io.k8s.api.core.v1.Container'].properties.imagePullPolicy.description, /\n\nPossible enum values:\n - `"Always"`\n - `"IfNotPresent"`\n - `"Never"`$/);
  const paths = (await s.get('/openapi/v3')).json.paths;
  const apps = (await s.get(paths['apis/apps/v1'].serverRelativeURL)).json.components.schemas;
  t.same(apps['io.k8s.api.apps.v1.DeploymentStrategy'].properties.type.enum, ['Recreate', 'RollingUpdate']);
  t.same(apps['io.k8s.api.apps.v1.StatefulSetSpec'].properties.podManagementPolicy.enum, ['OrderedReady', 'Parallel']);
  t.equal(apps['io.k8s.api.apps.v1.DeploymentSpec'].properties.minReadySeconds.enum, undefined, 'not on other fields');
  const ok = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'e' },
    spec: { selector: { matchLabels: { a: 'b' } }, strategy: { type: 'Sideways' }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  } });
  t.equal(ok.status, 422, 'a value outside the list is the validation\'s business, with its own message');
  // the reference reports it on the strategy (test/corpus: deployment:create:spec.strategy.type:bad)
  t.match(ok.json.message, /spec\.strategy: Unsupported value: .*"Sideways".*supported values: "Recreate", "RollingUpdate"/);
});

t.test('kubectl explain lists an enum field\'s values', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const r = await kubectl(s, ['explain', 'deployment.spec.strategy.type']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /Possible enum values:\n\s+- `"Recreate"`\n\s+- `"RollingUpdate"`/);
});
