// The simulated nodes' pure parts: options checked, pod addresses held and freed, and the status a
// pod goes through (readiness delay, run to completion, OnFailure restart, stop on deletion).
import t from 'tap';
import { PodAddresses } from '../../plugins/controllers/simulated-nodes/addresses.js';
import { ipNum, parseOptions } from '../../plugins/controllers/simulated-nodes/options.js';
import { progress, runSettings, startedStatus, stoppedStatus } from '../../plugins/controllers/simulated-nodes/pod-status.js';

t.test('options: defaults, and a bad one named', async (t) => {
  const o = parseOptions(undefined);
  t.match(o, { count: 3, namePrefix: 'sim-node-', cpu: '8', memory: '32Gi', pods: '110', podCIDR: '10.244.0.0/16', podRunSeconds: 2, exitCode: 0 });
  t.equal(parseOptions({ cpu: 4 as unknown as string }).cpu, '4', 'a number quantity is taken as its text');
  t.throws(() => parseOptions({ count: -1 }), /option count must be an integer >= 0/);
  t.throws(() => parseOptions({ podCIDR: '10.244.0.0' }), /option podCIDR must be an IPv4 CIDR/);
  t.throws(() => parseOptions({ count: 3, podCIDR: '10.244.0.0/23' }), /option podCIDR must be a range with a \/24 for each of the 3 nodes/);
  t.throws(() => parseOptions({ cpus: 4 }), /option cpus must be one of/);
  t.throws(() => parseOptions({ memory: 'lots' }), /option memory must be a quantity/);
  t.throws(() => parseOptions({ events: 'yes' }), /option events must be true or false/);
});

t.test('pod addresses: unique, stable for a pod, freed, taken back after a restart', async (t) => {
  const a = new PodAddresses(ipNum('10.244.1.0'));
  t.equal(a.take('u1'), '10.244.1.2');
  t.equal(a.take('u1'), '10.244.1.2', 'the same pod asks again: the same address');
  t.equal(a.take('u2'), '10.244.1.3');
  a.free('u1');
  t.equal(a.take('u3'), '10.244.1.2', 'a freed address is given out again');
  t.equal(a.take('u4', '10.244.1.77'), '10.244.1.77', 'the address a pod already shows');
  t.equal(a.take('u5', '10.244.1.77'), '10.244.1.4', 'unless another pod holds it');
  t.equal(a.take('u6', '10.244.2.9'), '10.244.1.5', 'or it is not of this node');
  const full = new PodAddresses(0);
  for (let i = 0; i < 253; i++) full.take(`p${i}`);
  t.throws(() => full.take('one-more'), /no free pod address/);
});

const pod = (spec: Record<string, unknown>, annotations?: Record<string, string>) => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'uid-1', annotations },
  spec: { containers: [{ name: 'c', image: 'img:1' }], restartPolicy: 'Always', ...spec },
  status: { phase: 'Pending', qosClass: 'BestEffort', conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z' }] },
});
const T0 = Date.parse('2024-01-01T00:00:10Z');
const cond = (st: any, type: string) => st.conditions.find((c: any) => c.type === type);
const run = { runSeconds: 2, exitCode: 0 };

t.test('a started pod: Running, Ready at once without a probe, PodScheduled kept', async (t) => {
  const st = startedStatus(pod({}), '172.18.0.2', '10.244.0.2', T0, false);
  t.match(st, { phase: 'Running', hostIP: '172.18.0.2', podIP: '10.244.0.2', podIPs: [{ ip: '10.244.0.2' }], startTime: '2024-01-01T00:00:10Z', qosClass: 'BestEffort' });
  t.notOk('hostIPs' in st, 'no hostIPs without the PodHostIPs feature');
  t.same(st.conditions.map((c: any) => [c.type, c.status]), [['Initialized', 'True'], ['Ready', 'True'], ['ContainersReady', 'True'], ['PodScheduled', 'True']]);
  t.equal(cond(st, 'PodScheduled').lastTransitionTime, '2024-01-01T00:00:00Z', 'the scheduler\'s condition as it was');
  t.same(progress({ ...pod({}), status: st }, run, T0 + 60_000), { wakeAt: undefined }, 'restartPolicy Always: nothing more happens');
});

t.test('readiness gates hold Ready back until their conditions are True', async (t) => {
  const p = pod({ readinessGates: [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/dns' }] });
  p.status.conditions.push({ type: 'example.com/dns', status: 'False', lastTransitionTime: '2024-01-01T00:00:00Z' });
  const st = startedStatus(p, 'h', 'ip', T0, false);
  t.match(cond(st, 'ContainersReady'), { status: 'True' });
  t.match(cond(st, 'Ready'), { status: 'False', reason: 'ReadinessGatesNotReady', message: 'corresponding condition of pod readiness gate "example.com/lb" does not exist., the status of pod readiness gate "example.com/dns" is not "True", but False' });
  t.same(st.conditions.map((c: any) => c.type), ['example.com/dns', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'], 'conditions others own kept, first, as the node agent orders them');
  const met = { ...st, conditions: [...st.conditions.filter((c: any) => !c.type.startsWith('example.com/')), { type: 'example.com/lb', status: 'True' }, { type: 'example.com/dns', status: 'True' }] };
  t.match(cond(progress({ ...p, status: met }, run, T0 + 1000).status, 'Ready'), { status: 'True' }, 'Ready once both gates are True');
  const again = progress({ ...p, status: met }, run, T0 + 1000).status;
  t.same(progress({ ...p, status: again }, run, T0 + 2000), { wakeAt: undefined }, 'and then nothing more to write');
});

t.test('a readiness probe\'s initial delay', async (t) => {
  const p = pod({ containers: [{ name: 'c', image: 'img:1', readinessProbe: { initialDelaySeconds: 5 } }] });
  const st = startedStatus(p, 'h', '10.244.0.2', T0, false);
  t.match(cond(st, 'Ready'), { status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [c]' });
  const early = progress({ ...p, status: st }, run, T0 + 1000);
  t.same(early, { wakeAt: T0 + 5000 }, 'not yet: wake at the end of the delay');
  const later = progress({ ...p, status: st }, run, T0 + 5000);
  t.match(cond(later.status, 'Ready'), { status: 'True', lastTransitionTime: '2024-01-01T00:00:15Z' });
});

t.test('what the containers\' commands say: sleep N runs N seconds, exit N exits with N (upstream e2e jobs use these)', async (t) => {
  const withCommands = (...cs: Record<string, unknown>[]) => pod({ restartPolicy: 'Never', containers: cs.map((c, i) => ({ name: `c${i}`, image: 'busybox', ...c })) });
  t.same(runSettings(withCommands({ command: ['sleep', '1000000'] }), run, 'cluster.io'), { runSeconds: 1000000, exitCode: 0 });
  t.same(runSettings(withCommands({ command: ['/bin/sh', '-c', 'exit 1'] }), run, 'cluster.io'), { runSeconds: run.runSeconds, exitCode: 1 });
  t.same(runSettings(withCommands({ command: ['sh'], args: ['-c', 'sleep 5'] }, { command: ['sh', '-c', 'exit 3'] }), run, 'cluster.io'), { runSeconds: 5, exitCode: 3 }, 'the longest sleep, the non-zero exit');
  t.same(runSettings(withCommands({ command: ['/bin/sh', '-c', 'if [[ -r /data/foo ]] ; then exit 0 ; fi'] }), run, 'cluster.io'), run, 'a script: the defaults');
  t.same(runSettings(pod({ restartPolicy: 'Never', containers: [{ name: 'c', command: ['sleep', '9'] }] }, { 'cluster.io/sim-run-seconds': '1' }), run, 'cluster.io').runSeconds, 1, 'the annotation first');
});

t.test('run to completion: Succeeded, Failed with the annotation\'s exit code, OnFailure restarts', async (t) => {
  const never = pod({ restartPolicy: 'Never' });
  const st = startedStatus(never, 'h', '10.244.0.2', T0, false);
  t.same(progress({ ...never, status: st }, run, T0 + 1000), { wakeAt: T0 + 2000 });
  const done = progress({ ...never, status: st }, run, T0 + 2000).status!;
  t.equal(done.phase, 'Succeeded');
  t.match(done.containerStatuses[0], { ready: false, started: false, state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: '2024-01-01T00:00:10Z', finishedAt: '2024-01-01T00:00:12Z' } } });
  t.match(cond(done, 'Ready'), { status: 'False', reason: 'PodCompleted' });
  t.match(cond(done, 'Initialized'), { status: 'True', reason: 'PodCompleted' });

  const failing = pod({ restartPolicy: 'Never' }, { 'cluster.io/sim-exit-code': '7', 'cluster.io/sim-run-seconds': '4' });
  const settings = runSettings(failing, run, 'cluster.io');
  t.same(settings, { runSeconds: 4, exitCode: 7 });
  t.same(runSettings(pod({}, { 'cluster.io/sim-exit-code': 'x' }), run, 'cluster.io'), run, 'an unreadable annotation: the defaults');
  const failed = progress({ ...failing, status: startedStatus(failing, 'h', 'ip', T0, false) }, settings, T0 + 4000).status!;
  t.equal(failed.phase, 'Failed');
  t.match(failed.containerStatuses[0].state.terminated, { exitCode: 7, reason: 'Error' });
  t.match(cond(failed, 'ContainersReady'), { status: 'False', reason: 'PodFailed' });

  const onFailure = pod({ restartPolicy: 'OnFailure' });
  const again = progress({ ...onFailure, status: startedStatus(onFailure, 'h', 'ip', T0, false) }, { runSeconds: 2, exitCode: 1 }, T0 + 2000);
  t.equal(again.status!.phase, 'Running', 'OnFailure: the container runs again');
  t.match(again.status!.containerStatuses[0], { restartCount: 1, lastState: { terminated: { exitCode: 1 } }, state: { running: { startedAt: '2024-01-01T00:00:12Z' } } });
  t.equal(again.wakeAt, T0 + 4000, 'and exits again after the run time');
});

t.test('init containers complete in order; a deleted pod\'s containers stop', async (t) => {
  const p = pod({ initContainers: [{ name: 'z', image: 'i' }, { name: 'a', image: 'i' }], containers: [{ name: 'b', image: 'x' }, { name: 'a', image: 'y' }] });
  const st = startedStatus(p, 'h', 'ip', T0, true);
  t.same(st.initContainerStatuses.map((c: any) => [c.name, c.ready, c.state.terminated.exitCode]), [['z', true, 0], ['a', true, 0]], 'in spec order, completed');
  t.same(st.containerStatuses.map((c: any) => c.name), ['a', 'b'], 'containers sorted by name, as the node agent reports them');
  t.same(st.hostIPs, [{ ip: 'h' }], 'hostIPs with the PodHostIPs feature');
  const stopped = stoppedStatus({ ...p, status: st }, T0 + 3000);
  t.equal(stopped.phase, 'Succeeded');
  t.ok(stopped.containerStatuses.every((c: any) => c.state.terminated?.exitCode === 0 && !c.ready));
  t.match(cond(stopped, 'Ready'), { status: 'False', reason: 'PodCompleted' });
});
