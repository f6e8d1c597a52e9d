// Unit tests of the pod spec rules (plugins/types/builtin/validation/): the reference's causes for
// resources, environment, volumes, probes and scheduling fields. Expected values were checked
// against kube-apiserver v1.28.7.
import t from 'tap';
import { resourceRequirementsCauses, containerResourceNameCauses } from '../../plugins/types/builtin/validation/pod-resources.js';
import { envCauses, envVarNameErrors } from '../../plugins/types/builtin/validation/pod-env.js';
import { volumesCauses } from '../../plugins/types/builtin/validation/pod-volumes.js';
import { tolerationsCauses, parsesAsIP, topologySpreadCauses } from '../../plugins/types/builtin/validation/pod-scheduling.js';
import { podSpecCauses } from '../../plugins/types/builtin/validation/pod.js';

const fields = (cs: { field: string; message: string }[]) => cs.map((c) => `${c.field}: ${c.message}`);

t.test('resource names', async (t) => {
  t.same(containerResourceNameCauses('cpu', 'f'), []);
  t.same(containerResourceNameCauses('hugepages-2Mi', 'f'), []);
  t.same(containerResourceNameCauses('example.com/gpu', 'f'), []);
  t.same(fields(containerResourceNameCauses('pods', 'f')), ['f: Invalid value: "pods": must be a standard resource for containers']);
  t.same(fields(containerResourceNameCauses('foo', 'f')), ['f: Invalid value: "foo": must be a standard resource type or fully qualified', 'f: Invalid value: "foo": must be a standard resource for containers']);
  t.same(fields(containerResourceNameCauses('example.com/requests.x', 'f')), []);
  t.same(fields(containerResourceNameCauses('a/b/c', 'f')).slice(1), ['f: Invalid value: "a/b/c": doesn\'t follow extended resource name standard'], 'not a qualified name, nor an extended resource');
});

t.test('requests, limits and quantities', async (t) => {
  t.same(resourceRequirementsCauses({ requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } }, 'r'), []);
  t.same(fields(resourceRequirementsCauses({ requests: { cpu: '1001m' }, limits: { cpu: '1' } }, 'r')), ['r.requests: Invalid value: "1001m": must be less than or equal to cpu limit of 1']);
  t.same(fields(resourceRequirementsCauses({ limits: { memory: '-1Ki' } }, 'r')), ['r.limits[memory]: Invalid value: "-1Ki": must be greater than or equal to 0']);
  t.same(fields(resourceRequirementsCauses({ requests: { 'example.com/gpu': '1' } }, 'r')), ['r.limits: Required value: Limit must be set for non overcommitable resources']);
  t.same(fields(resourceRequirementsCauses({ requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '2' } }, 'r')), ['r.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2']);
  t.match(fields(resourceRequirementsCauses({ limits: { 'example.com/gpu': '1500m' } }, 'r'))[0], /^r\.limits\[example\.com\/gpu\]: Invalid value: resource\.Quantity\{.*\}: must be an integer$/);
  t.same(fields(resourceRequirementsCauses({ limits: { 'hugepages-2Mi': '3Mi', memory: '1Gi' } }, 'r')), ['r.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi']);
  t.same(fields(resourceRequirementsCauses({ limits: { 'hugepages-2Mi': '4Mi' } }, 'r')), ['r: Forbidden: HugePages require cpu or memory']);
});

t.test('environment', async (t) => {
  t.same(envVarNameErrors('MY_VAR.x-1'), []);
  t.same(envVarNameErrors('..a').slice(-1), ["must not start with '..'"]);
  t.equal(envVarNameErrors('1=bad').length, 1);
  t.same(fields(envCauses([{ name: 'A', value: 'x', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }], 'e')), ['e[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty']);
  t.same(fields(envCauses([{ name: 'A', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.phase' } } }], 'e')),
    ['e[0].valueFrom.fieldRef.fieldPath: Unsupported value: "status.phase": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"']);
});

t.test('volumes', async (t) => {
  const v = volumesCauses([{ name: 'a', emptyDir: {}, hostPath: { path: '/x' } }, { name: 'b' }, { name: 'c', emptyDir: { sizeLimit: '-1' } }], 'v');
  t.same(fields(v.causes), [
    'v[0].hostPath: Forbidden: may not specify more than 1 volume type',
    'v[1]: Required value: must specify a volume type',
    'v[2].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity',
  ]);
  t.same([...v.byName.keys()], [], 'invalid volumes cannot be mounted');
});

t.test('scheduling fields', async (t) => {
  t.ok(parsesAsIP('10.0.0.1') && parsesAsIP('::1') && parsesAsIP('010.0.0.1'));
  t.notOk(parsesAsIP('999.1.1.1'));
  t.same(fields(tolerationsCauses([{ operator: 'Exists' }, { key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule', tolerationSeconds: 1 }], 't')),
    ["t[1].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"]);
  t.same(fields(topologySpreadCauses([{ maxSkew: 1, topologyKey: 'z', whenUnsatisfiable: 'ScheduleAnyway', minDomains: 2 }], 's')),
    ['s[0].minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway']);
});

t.test('a whole spec, in the reference order', async (t) => {
  const spec = { containers: [{ name: 'c', image: '', imagePullPolicy: 'X', terminationMessagePolicy: 'File' }], restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', activeDeadlineSeconds: 0 };
  t.same(fields(podSpecCauses(spec, 'spec', true)), [
    'spec.containers[0].image: Required value',
    'spec.containers[0].imagePullPolicy: Unsupported value: "X": supported values: "Always", "IfNotPresent", "Never"',
    'spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive',
  ]);
  t.same(fields(podSpecCauses({ ...spec, containers: [{ ...spec.containers[0], image: 'x', imagePullPolicy: 'Always' }], activeDeadlineSeconds: 1, ephemeralContainers: [{ name: 'e', image: 'x', imagePullPolicy: 'Always', terminationMessagePolicy: 'File' }] }, 't', false)),
    ['t.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template']);
});
