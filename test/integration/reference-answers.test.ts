// Answers a reference test suite found different, each checked against what kube-apiserver 1.28 says.
import t from 'tap';
import { withServer } from '../lib/server.js';
import { makeRequest } from '../lib/csr.js';

const APPLY = { 'content-type': 'application/apply-patch+yaml' };
const CM = '/api/v1/namespaces/default/configmaps';

t.test('server-side apply bodies are YAML: JSON-looking with trailing commas', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const body = '{\n  "apiVersion": "v1",\n  "kind": "ConfigMap",\n  "metadata": {"name": "commas",},\n  "data": {"a": "1", "b": "2",},\n}\n';
  const r = await s.request('PATCH', `${CM}/commas?fieldManager=yaml`, { raw: body, headers: APPLY });
  t.equal(r.status, 201, r.text);
  t.same(r.json.data, { a: '1', b: '2' });
  const bad = await s.request('PATCH', `${CM}/commas?fieldManager=yaml`, { raw: '{"data": {"a": "1"', headers: APPLY });
  t.equal(bad.status, 400, 'still refused when it is neither JSON nor YAML');
  t.match(bad.json.message, /^error decoding patch: /);
  const mp = await s.request('PATCH', `${CM}/commas`, { raw: '{"data": {"c": "3",},}', headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal(mp.status, 400, 'a merge patch stays JSON');
});

t.test('an apply that changes nothing records its manager without time, entries in the reference order', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'same' }, data: { k: 'v' } };
  t.equal((await s.request('PATCH', `${CM}/same?fieldManager=first`, { body: cm, headers: APPLY })).status, 201);
  const again = await s.request('PATCH', `${CM}/same?fieldManager=second`, { body: cm, headers: APPLY });
  t.equal(again.status, 200, again.text);
  const mf = again.json.metadata.managedFields;
  t.same(mf.map((e: any) => [e.manager, e.operation, 'time' in e]), [['second', 'Apply', false], ['first', 'Apply', true]], 'the no-op applier has no time and sorts first');
  const third = await s.request('PATCH', `${CM}/same?fieldManager=first`, { body: cm, headers: APPLY });
  t.equal(third.json.metadata.managedFields.find((e: any) => e.manager === 'first').time, mf[1].time, 'a no-op apply keeps the time its manager had');
});

t.test('CertificateSigningRequests select on spec.signerName', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
  for (const [name, signerName, usages] of [['client', 'kubernetes.io/kube-apiserver-client', ['client auth']], ['serving', 'kubernetes.io/kubelet-serving', ['digital signature', 'key encipherment', 'server auth']]] as const) {
    const { pem } = await makeRequest(name === 'serving' ? 'CN=system:node:n1, O=system:nodes' : `CN=${name}`, name === 'serving' ? { dns: ['n1'] } : {});
    const r = await s.request('POST', CSRS, { body: { metadata: { name }, spec: { request: Buffer.from(pem).toString('base64'), signerName, usages } } });
    t.equal(r.status, 201, r.text);
  }
  const sel = await s.get(`${CSRS}?fieldSelector=${encodeURIComponent('spec.signerName=kubernetes.io/kubelet-serving')}`);
  t.equal(sel.status, 200, sel.text);
  t.same(sel.json.items.map((i: any) => i.metadata.name), ['serving']);
  t.equal((await s.get(`${CSRS}?fieldSelector=spec.username%3Dx`)).status, 400, 'other spec fields are not selectable');
});

t.test('type confusion: the reference decode errors, never 500', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const pc = await s.request('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { body: { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 7 }, value: 1 } });
  t.equal(pc.status, 400);
  t.equal(pc.json.message, 'PriorityClass in version "v1" cannot be handled as a PriorityClass: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string');
  const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const fin = await s.request('POST', CRDS, { body: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'x.example.com', finalizers: 7 } } });
  t.equal(fin.status, 400);
  t.equal(fin.json.message, 'CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.finalizers of type []string');
  const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'tcs.example.com' }, spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'tcs', singular: 'tc', kind: 'Tc' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] } };
  t.equal((await s.request('POST', CRDS, { body: crd })).status, 201);
  const st = await s.request('PATCH', `${CRDS}/tcs.example.com/status`, { raw: '{"status":1}', headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal(st.status, 422);
  t.match(st.json.message, /^ "" is invalid: patch: Invalid value: ".*": json: cannot unmarshal number into Go struct field CustomResourceDefinition.status of type v1.CustomResourceDefinitionStatus$/);
  t.same(st.json.details.causes.map((c: any) => [c.reason, c.field]), [['FieldValueInvalid', 'patch']]);
  const pod = await s.request('POST', '/api/v1/namespaces/default/pods', { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: 7 } } });
  t.equal(pod.json.message, 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field PodSpec.spec.containers of type []v1.Container');
});
