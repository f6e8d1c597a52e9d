// Pure rules of the built-in admission plugins: quantities, tolerations, rate limits, node labels,
// limit-range and quota messages, selectors, owner references.
import t from 'tap';
import { addLists, canonical, formatQuantity, parseQuantity, prettyPrint, resourceList } from '../../plugins/admission/ResourceQuota/quantity.js';
import { podConstraints } from '../../plugins/admission/ResourceQuota/index.js';
import { allowedByWhitelist, covers, mergeTolerations } from '../../plugins/admission/PodTolerationRestriction/index.js';
import { Enforcer, parseLimits, TokenBucket } from '../../plugins/admission/EventRateLimit/index.js';
import { forbiddenLabels, nodeIdentity } from '../../plugins/admission/NodeRestriction/index.js';
import { applyDefaults, maxConstraint, minConstraint, ratioConstraint } from '../../plugins/admission/LimitRanger/index.js';
import { conflicts, parseSelector, withinWhitelist } from '../../plugins/admission/PodNodeSelector/index.js';
import { changingOwners, newBlockingRefs } from '../../plugins/admission/OwnerReferencesPermissionEnforcement/index.js';
import { deniedField } from '../../plugins/admission/SecurityContextDeny/index.js';
import { execRefusal } from '../../plugins/admission/DenyEscalatingExec/index.js';
import type { AdmissionAttributes } from '../../kernel/contracts/index.js';
import { applyFlags, DEFAULT_ADMISSION_PLUGINS, defaultAdmission, parseFlags, REFERENCE_ADMISSION_ORDER } from '../../kernel/ops/flags.js';
import { defaultConfig } from '../../kernel/ops/config.js';

t.test('quantities parse exactly and print canonically', async (t) => {
  const cases: [string | number, string][] = [
    ['100m', '100m'], ['1000m', '1'], ['1500m', '1500m'], ['0.5', '500m'], ['2', '2'], ['1000', '1k'], ['1500000', '1500k'],
    ['1Gi', '1Gi'], ['1024Mi', '1Gi'], ['1536Mi', '1536Mi'], ['512', '512'], ['0.5Gi', '512Mi'], ['1e3', '1e3'], ['1E', '1E'],
    ['1.5e3', '1500'], ['0', '0'], ['-100m', '-100m'], [3, '3'], ['1n', '1n'], ['1u', '1u'], ['.5', '500m'],
  ];
  for (const [input, want] of cases) t.equal(canonical(input), want, `${input}`);
  for (const bad of ['', 'abc', '1Zi', '1.2.3', '1 Gi']) t.equal(parseQuantity(bad), undefined, `"${bad}" is not a quantity`);
  t.equal(parseQuantity('1Ki')!.nano, 1024n * 1_000_000_000n);
  t.equal(parseQuantity('0.1n')!.nano, 1n, 'below a nano rounds up');
});

t.test('sums keep the format, a zero takes the other side\'s', async (t) => {
  const sum = addLists(resourceList({ memory: '0', cpu: '500m' }), resourceList({ memory: '1Gi', cpu: '1' }));
  t.equal(formatQuantity(sum.get('memory')!), '1Gi');
  t.equal(formatQuantity(sum.get('cpu')!), '1500m');
  t.equal(prettyPrint(resourceList({ pods: '2', 'count/secrets': 1, cpu: '100m' })), 'count/secrets=1,cpu=100m,pods=2');
});

t.test('quota constraints: every container states what the quota limits', async (t) => {
  const pod = {
    spec: {
      initContainers: [{ name: 'init', resources: { requests: { cpu: '1' } } }],
      containers: [{ name: 'a', resources: { requests: { cpu: '1', memory: '1Gi' } } }, { name: 'b' }],
    },
  };
  t.equal(podConstraints(pod, new Set(['pods'])), undefined, 'no compute resources limited');
  t.equal(podConstraints(pod, new Set(['requests.cpu', 'requests.memory', 'limits.cpu'])),
    'must specify limits.cpu for: a,b,init; requests.cpu for: b; requests.memory for: b,init');
});

t.test('tolerations: coverage, merging, whitelists', async (t) => {
  t.ok(covers({ operator: 'Exists' }, { key: 'a', operator: 'Equal', value: 'x', effect: 'NoSchedule' }), 'empty key with Exists covers all');
  t.ok(covers({ key: 'a', operator: 'Exists' }, { key: 'a', operator: 'Equal', value: 'x' }));
  t.notOk(covers({ key: 'a', operator: 'Equal', value: 'x' }, { key: 'a', operator: 'Exists' }));
  t.notOk(covers({ key: 'a', operator: 'Exists', effect: 'NoSchedule' }, { key: 'a', operator: 'Exists', effect: 'NoExecute' }));
  t.notOk(covers({ key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }, { key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 20 }));
  t.same(mergeTolerations([{ key: 'a', operator: 'Equal', value: 'x' }], [{ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'Exists' }]),
    [{ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'Exists' }], 'the narrower toleration goes');
  t.same(mergeTolerations([{ key: 'a', operator: 'Exists' }], [{ key: 'a', operator: 'Exists' }]), [{ key: 'a', operator: 'Exists' }], 'duplicates once');
  t.ok(allowedByWhitelist([{ key: 'a', operator: 'Equal', value: 'x' }], []), 'no whitelist: anything');
  t.notOk(allowedByWhitelist([{ key: 'b', operator: 'Exists' }], [{ key: 'a', operator: 'Exists' }]));
});

t.test('EventRateLimit: configuration, token buckets, LRU keys', async (t) => {
  t.throws(() => parseLimits({}), /limits: Required value/);
  t.throws(() => parseLimits({ limits: [{ type: 'Cluster', qps: 1, burst: 1 }] }), /limits\[0\]\.type: Unsupported value: "Cluster"/);
  t.throws(() => parseLimits({ limits: [{ type: 'User', qps: 0, burst: 1 }] }), /qps: Invalid value: 0: must be positive/);
  let now = 0;
  const b = new TokenBucket(1, 2, () => now);
  t.same([b.tryAccept(), b.tryAccept(), b.tryAccept()], [true, true, false], 'starts full at the burst');
  now = 1000;
  t.same([b.tryAccept(), b.tryAccept()], [true, false], 'one token per second');
  const attrs = (user: string) => ({ user: { username: user, groups: [] }, namespace: 'ns' }) as unknown as AdmissionAttributes;
  const e = new Enforcer({ type: 'User', qps: 0.001, burst: 1, cacheSize: 2 }, () => now);
  t.equal(e.accept(attrs('a')), undefined);
  t.equal(e.accept(attrs('a')), 'limit reached on type User for key a');
  e.accept(attrs('b'));
  e.accept(attrs('c')); // evicts a, the least recently used
  t.equal(e.accept(attrs('a')), undefined, 'an evicted key starts with a full bucket');
});

t.test('NodeRestriction: identity and label rules', async (t) => {
  t.equal(nodeIdentity({ username: 'system:node:n1', groups: ['system:nodes'] }), 'n1');
  t.equal(nodeIdentity({ username: 'system:node:n1', groups: [] }), undefined, 'needs the group');
  t.equal(nodeIdentity({ username: 'alice', groups: ['system:nodes'] }), undefined);
  const kd = 'kubernetes.io';
  t.same(forbiddenLabels({
    'kubernetes.io/hostname': 'n1', 'kubelet.kubernetes.io/x': '1', 'node.kubernetes.io/pool': 'a', 'example.com/mine': 'ok',
    'node-restriction.kubernetes.io/pool': 'a', 'foo.node-restriction.kubernetes.io/x': 'b', 'kubernetes.io/role': 'master', 'x.k8s.io/y': 'z',
  }, {}, kd, 'k8s.io'), ['foo.node-restriction.kubernetes.io/x', 'kubernetes.io/role', 'node-restriction.kubernetes.io/pool', 'x.k8s.io/y']);
  t.same(forbiddenLabels({ 'kubernetes.io/role': 'a' }, { 'kubernetes.io/role': 'a' }, kd, 'k8s.io'), [], 'unchanged labels are fine');
  t.same(forbiddenLabels({}, { 'node-restriction.kubernetes.io/pool': 'a' }, kd, 'k8s.io'), ['node-restriction.kubernetes.io/pool'], 'removal counts as a change');
});

t.test('LimitRanger: constraint messages and defaults', async (t) => {
  const q = (v: string) => parseQuantity(v)!;
  const rl = resourceList;
  t.equal(minConstraint('Container', 'cpu', q('100m'), rl({}), rl({})), 'minimum cpu usage per Container is 100m.  No request is specified');
  t.equal(minConstraint('Container', 'cpu', q('100m'), rl({ cpu: '50m' }), rl({})), 'minimum cpu usage per Container is 100m, but request is 50m');
  t.equal(maxConstraint('Pod', 'memory', q('1Gi'), rl({}), rl({})), 'maximum memory usage per Pod is 1Gi.  No limit is specified');
  t.equal(maxConstraint('Pod', 'memory', q('1Gi'), rl({ memory: '2Gi' }), rl({ memory: '512Mi' })), 'maximum memory usage per Pod is 1Gi, but request is 2Gi');
  t.equal(ratioConstraint('Container', 'cpu', q('2'), rl({ cpu: '100m' }), rl({ cpu: '400m' })), 'cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000');
  t.equal(ratioConstraint('Container', 'cpu', q('4'), rl({ cpu: '100m' }), rl({ cpu: '400m' })), undefined);
  const spec = { containers: [{ name: 'a', resources: { requests: { cpu: '1' } } }] };
  t.same(applyDefaults(spec, { cpu: '2', memory: '1024Mi' }, { cpu: '500m' }), ['cpu, memory limit for container a']);
  t.same(spec.containers[0].resources, { requests: { cpu: '1' }, limits: { cpu: '2', memory: '1Gi' } });
});

t.test('PodNodeSelector: selectors', async (t) => {
  t.same(parseSelector('a=b, c==d,e='), { a: 'b', c: 'd', e: '' });
  t.throws(() => parseSelector('a!=b'), /invalid selector/);
  t.ok(conflicts({ a: 'b' }, { a: 'c' }));
  t.notOk(conflicts({ a: 'b' }, { a: 'b', c: 'd' }));
  t.ok(withinWhitelist({ a: 'b' }, {}));
  t.notOk(withinWhitelist({ a: 'b', c: 'd' }, { a: 'b' }));
});

t.test('owner references, security context, exec checks', async (t) => {
  const ref = (uid: string, block?: boolean) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: uid, uid, ...(block === undefined ? {} : { blockOwnerDeletion: block }) });
  const obj = (...refs: object[]) => ({ metadata: { ownerReferences: refs } });
  t.ok(changingOwners(obj(ref('a')), undefined));
  t.notOk(changingOwners(obj(ref('a')), obj(ref('a'))));
  t.ok(changingOwners(obj(ref('a', true)), obj(ref('a'))));
  t.same(newBlockingRefs(obj(ref('a', true), ref('b', true)), obj(ref('a', true), ref('b'))).map((r) => r.uid), ['b']);
  t.equal(deniedField({ securityContext: { supplementalGroups: [] } }), 'pod.Spec.SecurityContext.SupplementalGroups is forbidden');
  t.equal(deniedField({ securityContext: {}, containers: [{ securityContext: { runAsUser: 1 } }] }), 'SecurityContext.RunAsUser is forbidden');
  t.equal(deniedField({ securityContext: {} }), undefined);
  const all = { hostNetwork: true, hostPID: true, hostIPC: true, privileged: true };
  t.equal(execRefusal({ spec: { hostIPC: true } }, all), 'cannot exec into or attach to a container using host ipc');
  t.equal(execRefusal({ spec: { hostIPC: true } }, { ...all, hostIPC: false }), undefined);
  t.equal(execRefusal({ spec: { initContainers: [{ securityContext: { privileged: true } }] } }, all), 'cannot exec into or attach to a privileged container');
});

t.test('flags and order', async (t) => {
  const ours = ['AlwaysAdmit', 'AlwaysDeny', 'AlwaysPullImages', 'DefaultIngressClass', 'DefaultStorageClass', 'DefaultTolerationSeconds',
    'DenyEscalatingExec', 'DenyExecOnPrivileged', 'DenyServiceExternalIPs', 'EventRateLimit', 'ExtendedResourceToleration', 'LimitPodHardAntiAffinityTopology',
    'LimitRanger', 'NamespaceAutoProvision', 'NamespaceExists', 'NodeRestriction', 'OwnerReferencesPermissionEnforcement', 'PersistentVolumeClaimResize',
    'PodNodeSelector', 'PodTolerationRestriction', 'Priority', 'ResourceQuota', 'RuntimeClass', 'SecurityContextDeny', 'ServiceAccount',
    'StorageObjectInUseProtection', 'TaintNodesByCondition'];
  for (const n of ours) t.ok(REFERENCE_ADMISSION_ORDER.includes(n), `${n} has its place in the order`);
  const on = defaultAdmission();
  for (const n of ours.filter((x) => DEFAULT_ADMISSION_PLUGINS.includes(x))) t.ok(on.includes(n), `${n} is on by default`);
  t.notOk(on.includes('AlwaysPullImages'), 'optional plugins stay off');
  const f = parseFlags(['--default-not-ready-toleration-seconds=60', '--default-unreachable-toleration-seconds', '0']);
  const c = applyFlags(defaultConfig(), f);
  t.same(c.admission.find((r) => r.plugin === 'DefaultTolerationSeconds')?.options, { defaultNotReadyTolerationSeconds: 60, defaultUnreachableTolerationSeconds: 0 });
  t.throws(() => parseFlags(['--default-not-ready-toleration-seconds=-1']));
});
