// The built-in scheduler's pure rules: a pod's requests (init containers' maximum, overhead), what
// bound pods take of a node (finished ones nothing), the pod count, tolerations, node-selector
// operators, the FailedScheduling message, least-allocated scoring with turns among equal nodes.
import t from 'tap';
import type { KObject } from '../../kernel/contracts/index.js';
import { misfit, nodeInfos } from '../../plugins/controllers/scheduler/filters.js';
import { fitErrorMessage } from '../../plugins/controllers/scheduler/report.js';
import { NodePicker } from '../../plugins/controllers/scheduler/score.js';
import { requirementMatches, selectorMatches } from '../../plugins/lib/label-selector.js';

const taintKey = (x: string) => `node.kubernetes.io/${x}`;
const node = (name: string, alloc: Record<string, string>, extra: Record<string, unknown> = {}): KObject => ({
  metadata: { name, labels: { rank: '7' } }, spec: extra, status: { allocatable: alloc, conditions: [{ type: 'Ready', status: 'True' }] },
});
const pod = (spec: Record<string, unknown>, status: Record<string, unknown> = {}): KObject => ({ metadata: { name: 'p', namespace: 'd' }, spec, status });
const c = (cpu?: string) => ({ name: 'c', image: 'i', ...(cpu ? { resources: { requests: { cpu } } } : {}) });

t.test('requests: containers summed, at least each init container, plus overhead', async (t) => {
  const [info] = nodeInfos([node('n', { cpu: '2', memory: '1Gi', pods: '10' })], []);
  t.equal(misfit(pod({ containers: [c('1'), c('1')] }), info, taintKey), undefined, '2 of 2 fits');
  t.same(misfit(pod({ containers: [c('500m')], initContainers: [c('2100m')] }), info, taintKey), { reasons: ['Insufficient cpu'], resolvable: true }, 'an init container larger than the sum counts');
  t.same(misfit(pod({ containers: [c('1900m')], overhead: { cpu: '200m' } }), info, taintKey)?.reasons, ['Insufficient cpu'], 'overhead counts');
});

t.test('bound pods take their requests and a pod slot; finished ones nothing', async (t) => {
  const bound = (cpu: string, phase = 'Running') => pod({ nodeName: 'n', containers: [c(cpu)] }, { phase });
  const [info] = nodeInfos([node('n', { cpu: '2', memory: '1Gi', pods: '3' })], [bound('1500m'), bound('1', 'Succeeded'), bound('100m', 'Failed')]);
  t.equal(info.pods, 1);
  t.same(misfit(pod({ containers: [c('1')] }), info, taintKey)?.reasons, ['Insufficient cpu']);
  t.equal(misfit(pod({ containers: [c('500m')] }), info, taintKey), undefined);
  const [full] = nodeInfos([node('n', { cpu: '2', pods: '1' })], [bound('0')]);
  t.same(misfit(pod({ containers: [c()] }), full, taintKey)?.reasons, ['Too many pods'], 'pods count');
});

t.test('taints, tolerations, cordons and readiness', async (t) => {
  const tainted = nodeInfos([node('n', { cpu: '1', pods: '9' }, { taints: [{ key: 'k', value: 'v', effect: 'NoExecute' }, { key: 's', effect: 'PreferNoSchedule' }] })], [])[0];
  t.same(misfit(pod({ containers: [c()] }), tainted, taintKey)?.reasons, ['node(s) had untolerated taint {k: v}'], 'PreferNoSchedule is not a filter');
  for (const tol of [{ key: 'k', operator: 'Exists' }, { operator: 'Exists' }, { key: 'k', value: 'v' }, { key: 'k', value: 'v', effect: 'NoExecute' }]) {
    t.equal(misfit(pod({ containers: [c()], tolerations: [tol] }), tainted, taintKey), undefined, JSON.stringify(tol));
  }
  for (const tol of [{ key: 'k', value: 'w' }, { key: 'k', operator: 'Exists', effect: 'NoSchedule' }, { key: 'j', operator: 'Exists' }]) {
    t.ok(misfit(pod({ containers: [c()], tolerations: [tol] }), tainted, taintKey), `not ${JSON.stringify(tol)}`);
  }
  const cordoned = nodeInfos([node('n', { cpu: '1', pods: '9' }, { unschedulable: true })], [])[0];
  t.same(misfit(pod({ containers: [c()] }), cordoned, taintKey), { reasons: ['node(s) were unschedulable'], resolvable: false });
  t.equal(misfit(pod({ containers: [c()], tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }), cordoned, taintKey), undefined, 'tolerating the unschedulable taint');
  const unknown = node('n', { cpu: '1', pods: '9' });
  (unknown.status as any).conditions[0].status = 'Unknown';
  t.same(misfit(pod({ containers: [c()] }), nodeInfos([unknown], [])[0], taintKey)?.reasons, ['node(s) had untolerated taint {node.kubernetes.io/unreachable: }']);
  t.same(misfit(pod({ containers: [c()], nodeName: 'm' }), cordoned, taintKey)?.reasons, ['node(s) were unschedulable'], 'NodeUnschedulable runs before NodeName');
});

t.test('host ports: the same protocol and port on the same or any address', async (t) => {
  const withPort = (hostPort: number, extra: Record<string, unknown> = {}) => ({ name: 'c', image: 'i', ports: [{ containerPort: 80, hostPort, ...extra }] });
  const [info] = nodeInfos([node('n', { cpu: '1', pods: '9' })], [pod({ nodeName: 'n', containers: [withPort(8080, { hostIP: '10.0.0.1' })] })]);
  const reason = { reasons: ["node(s) didn't have free ports for the requested pod ports"], resolvable: true };
  t.same(misfit(pod({ containers: [withPort(8080)] }), info, taintKey), reason, '0.0.0.0 clashes with any address');
  t.same(misfit(pod({ containers: [withPort(8080, { hostIP: '10.0.0.1' })] }), info, taintKey), reason, 'the same address');
  t.equal(misfit(pod({ containers: [withPort(8080, { hostIP: '10.0.0.2' })] }), info, taintKey), undefined, 'another address');
  t.equal(misfit(pod({ containers: [withPort(8080, { protocol: 'UDP' })] }), info, taintKey), undefined, 'another protocol');
  t.equal(misfit(pod({ containers: [withPort(8081)] }), info, taintKey), undefined, 'another port');
});

t.test('node selector operators and terms', async (t) => {
  const labels = { rank: '7', zone: 'a' };
  t.ok(requirementMatches({ key: 'rank', operator: 'Gt', values: ['5'] }, labels));
  t.notOk(requirementMatches({ key: 'rank', operator: 'Lt', values: ['5'] }, labels));
  t.notOk(requirementMatches({ key: 'zone', operator: 'Gt', values: ['5'] }, labels), 'not an integer');
  t.ok(requirementMatches({ key: 'gone', operator: 'NotIn', values: ['x'] }, labels), 'NotIn of an absent label');
  t.notOk(selectorMatches({ matchExpressions: [{ key: 'rank', operator: 'Gt', values: ['5'] }] }, labels), 'label selectors have no Gt');
  const [info] = nodeInfos([node('n', { cpu: '1', pods: '9' })], []);
  const aff = (terms: unknown[]) => pod({ containers: [c()], affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } } });
  t.equal(misfit(aff([{ matchExpressions: [{ key: 'x', operator: 'Exists' }] }, { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n'] }] }]), info, taintKey), undefined, 'terms are ORed; matchFields on the name');
  t.ok(misfit(aff([{}]), info, taintKey), 'an empty term matches nothing');
  t.ok(misfit(aff([]), info, taintKey), 'no terms match nothing');
});

t.test('the FailedScheduling message', async (t) => {
  const un = { reasons: ['node(s) were unschedulable'], resolvable: false };
  const cpu = { reasons: ['Insufficient cpu', 'Insufficient memory'], resolvable: true };
  t.equal(fitErrorMessage(pod({}), 3, [un, cpu, cpu]), '0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu, 2 Insufficient memory. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..');
  t.equal(fitErrorMessage(pod({ preemptionPolicy: 'Never' }), 1, [un]), '0/1 nodes are available: 1 node(s) were unschedulable. preemption: not eligible due to preemptionPolicy=Never..');
});

t.test('least allocated first; equal nodes in turn', async (t) => {
  const infos = nodeInfos([node('a', { cpu: '2', memory: '4Gi', pods: '9' }), node('b', { cpu: '2', memory: '4Gi', pods: '9' }), node('c', { cpu: '4', memory: '4Gi', pods: '9' })], []);
  const picker = new NodePicker();
  t.equal(picker.pick(pod({ containers: [c('1')] }), infos).name, 'c', 'most room left');
  t.same([0, 1, 2, 3].map(() => picker.pick(pod({ containers: [c()] }), infos.slice(0, 2)).name).sort(), ['a', 'a', 'b', 'b'], 'ties alternate');
});
