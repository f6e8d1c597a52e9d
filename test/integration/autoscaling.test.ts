// HorizontalPodAutoscaler in autoscaling/v1 and autoscaling/v2: one stored object (v2), converted
// losslessly for v1 readers and writers through the reference's round-trip annotations; defaults,
// validation, Table columns, watches of both versions, Protobuf, discovery, and concurrent writes
// through both versions. Stock kubectl: `autoscale` and `get hpa` with every installed release.
import t from 'tap';
import { withServer, sleep, type TestServer } from '../lib/server.js';
import { kubectl, kubectlRelease, startKubectl } from '../lib/kubectl.js';
import { protobufWatch } from '../lib/protobuf.js';
import { getBrand } from '../../kernel/contracts/brand.js';
import { decodeProtobuf } from '../../kernel/api/repr/protobuf.js';
import { builtinTypes } from '../../plugins/types/builtin/index.js';

const V1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
const V2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
const merge = { 'content-type': 'application/merge-patch+json' };
const ANN = 'autoscaling.alpha.kubernetes.io/';

function v2hpa(name: string, more: Record<string, unknown> = {}) {
  return {
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 2, maxReplicas: 10,
      metrics: [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } },
        { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } },
      ],
      behavior: { scaleDown: { stabilizationWindowSeconds: 120, policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } },
      ...more,
    },
  };
}

t.test('HPA v1 <-> v2 (kubernetes brand)', async (t) => {
  const s: TestServer = await withServer(t, { brand: 'kubernetes' });

  t.test('discovery lists both versions, v2 preferred', async (t) => {
    const g = (await s.get('/apis/autoscaling')).json;
    t.same(g.versions.map((v: { version: string }) => v.version), ['v2', 'v1']);
    t.equal(g.preferredVersion.version, 'v2');
    for (const v of ['v1', 'v2']) {
      const rl = (await s.get(`/apis/autoscaling/${v}`)).json;
      const names = rl.resources.map((r: { name: string }) => r.name);
      t.ok(names.includes('horizontalpodautoscalers') && names.includes('horizontalpodautoscalers/status'), `${v} resources`);
      const hpa = rl.resources.find((r: { name: string }) => r.name === 'horizontalpodautoscalers');
      t.same(hpa.shortNames, ['hpa']);
      t.same(hpa.categories, ['all']);
    }
    t.ok((await s.get('/openapi/v3/apis/autoscaling/v1')).json.components.schemas['io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler'], 'v1 OpenAPI');
    t.ok((await s.get('/openapi/v3/apis/autoscaling/v2')).json.components.schemas['io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler'], 'v2 OpenAPI');
  });

  t.test('a v2 object read as v1 carries the rest in annotations, and comes back whole', async (t) => {
    const c = await s.request('POST', V2, { body: v2hpa('round') });
    t.equal(c.status, 201, c.text);
    const created = c.json;
    t.same(created.spec.behavior.scaleUp, { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] }, 'scaleUp defaulted');
    t.equal(created.spec.behavior.scaleDown.selectPolicy, 'Max');
    const v1 = (await s.get(`${V1}/round`)).json;
    t.equal(v1.apiVersion, 'autoscaling/v1');
    t.equal(v1.spec.targetCPUUtilizationPercentage, 60);
    t.equal(v1.spec.minReplicas, 2);
    t.equal(v1.spec.metrics, undefined);
    const others = JSON.parse(v1.metadata.annotations[`${ANN}metrics`]);
    t.same(others, [
      { type: 'Resource', resource: { name: 'memory', targetAverageValue: '500Mi' } },
      { type: 'Pods', pods: { metricName: 'qps', targetAverageValue: '10' } },
    ], 'v1 MetricSpec form');
    t.same(JSON.parse(v1.metadata.annotations[`${ANN}behavior`]), created.spec.behavior);
    t.equal(v1.metadata.resourceVersion, created.metadata.resourceVersion);
    // A v1 client writes the object back unchanged: nothing is lost. As in the reference, the
    // metrics from the annotation come first and the CPU target last.
    const put = await s.request('PUT', `${V1}/round`, { body: v1 });
    t.equal(put.status, 200, put.text);
    const back = (await s.get(`${V2}/round`)).json;
    const [cpu, ...rest] = created.spec.metrics;
    t.same(back.spec, { ...created.spec, metrics: [...rest, cpu] }, 'v2 spec intact after a v1 round trip');
    const again = await s.request('PUT', `${V1}/round`, { body: (await s.get(`${V1}/round`)).json });
    t.equal(again.json.metadata.resourceVersion, back.metadata.resourceVersion, 'a second unchanged v1 write changes nothing');
    t.equal(back.metadata.annotations, undefined, 'v2 shows no round-trip annotations');
    // A v1 change of the CPU target keeps the other metrics and the behavior.
    const p = await s.request('PATCH', `${V1}/round`, { body: { spec: { targetCPUUtilizationPercentage: 75 } }, headers: merge });
    t.equal(p.status, 200, p.text);
    t.equal(p.json.spec.targetCPUUtilizationPercentage, 75);
    const after = (await s.get(`${V2}/round`)).json;
    t.same(after.spec.metrics.map((m: any) => m.resource?.name ?? m.pods?.metric?.name), ['memory', 'qps', 'cpu'], 'other metrics first, then cpu (as the reference orders them)');
    t.equal(after.spec.metrics[2].resource.target.averageUtilization, 75);
    t.same(after.spec.behavior, created.spec.behavior);
    t.equal(after.metadata.generation, undefined, 'no generation: the reference HPA strategy tracks none');
  });

  t.test('v1 create: defaults and the implicit CPU target', async (t) => {
    const c = await s.request('POST', V1, { body: { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'plain' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3 } } });
    t.equal(c.status, 201, c.text);
    t.equal(c.json.spec.minReplicas, 1);
    t.equal(c.json.spec.targetCPUUtilizationPercentage, 80, 'read back with the default CPU utilization');
    t.same(c.json.status, { currentReplicas: 0, desiredReplicas: 0 });
    t.equal(c.json.metadata.annotations, undefined);
    const v2 = (await s.get(`${V2}/plain`)).json;
    t.same(v2.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
    t.equal(v2.spec.behavior, undefined);
    // Round-trip annotations sent to v2 are dropped; v1 ones become fields.
    const w = await s.request('POST', V1, { body: { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'annotated', annotations: { keep: 'me', [`${ANN}metrics`]: JSON.stringify([{ type: 'External', external: { metricName: 'queue', targetAverageValue: '30' } }]) } }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 3 } } });
    t.equal(w.status, 201, w.text);
    const wv2 = (await s.get(`${V2}/annotated`)).json;
    t.same(wv2.spec.metrics, [{ type: 'External', external: { metric: { name: 'queue' }, target: { type: 'AverageValue', averageValue: '30' } } }]);
    t.same(wv2.metadata.annotations, { keep: 'me' });
    const bad = await s.request('POST', V1, { body: { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'bad', annotations: { [`${ANN}metrics`]: '{not json' } }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 3 } } });
    t.equal(bad.status, 400, bad.text);
    t.equal((await s.get(`${V2}/bad`)).status, 404, 'nothing half-written');
  });

  t.test('validation with the reference messages', async (t) => {
    const r = await s.request('POST', V1, { body: { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'inv' }, spec: { scaleTargetRef: { kind: 'Deployment' }, minReplicas: 5, maxReplicas: 2, targetCPUUtilizationPercentage: 0 } } });
    t.equal(r.status, 422, r.text);
    const msgs = r.json.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`);
    t.ok(msgs.includes('spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`'), msgs.join('\n'));
    t.ok(msgs.includes('spec.scaleTargetRef.name: Required value'), msgs.join('\n'));
    t.ok(msgs.includes('spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0'), msgs.join('\n'));
    const r2 = await s.request('POST', V2, { body: v2hpa('inv2', { metrics: [{ type: 'Pods', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 5 } } }] }) });
    t.equal(r2.status, 422, r2.text);
    t.match(r2.text, /spec.metrics\[0\].pods: Required value: must populate information for the given metric source/);
  });

  t.test('status: v1 and v2 writers, conditions through the annotation', async (t) => {
    const cond = [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z', reason: 'ReadyForNewScale', message: 'ok' }];
    const st = await s.request('PUT', `${V2}/round/status`, { body: { ...(await s.get(`${V2}/round`)).json, status: { currentReplicas: 3, desiredReplicas: 4, currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 42, averageValue: '120m' } } }], conditions: cond } } });
    t.equal(st.status, 200, st.text);
    const v1 = (await s.get(`${V1}/round`)).json;
    t.equal(v1.status.currentCPUUtilizationPercentage, 42);
    t.same(v1.status, { currentReplicas: 3, desiredReplicas: 4, currentCPUUtilizationPercentage: 42 });
    t.same(JSON.parse(v1.metadata.annotations[`${ANN}conditions`]), cond);
    t.same(JSON.parse(v1.metadata.annotations[`${ANN}current-metrics`]), [{ type: 'Resource', resource: { name: 'cpu', currentAverageUtilization: 42, currentAverageValue: '120m' } }]);
    // A v1 main-resource write does not touch status; a v2 spec-only PATCH neither.
    const p = await s.request('PATCH', `${V1}/round`, { body: { spec: { maxReplicas: 11 }, status: { currentReplicas: 99 } }, headers: merge });
    t.equal(p.status, 200, p.text);
    const v2 = (await s.get(`${V2}/round`)).json;
    t.equal(v2.spec.maxReplicas, 11);
    t.equal(v2.status.currentReplicas, 3, 'status ignored on the main resource');
    t.same(v2.status.conditions, cond, 'conditions kept');
    // A v1 status write: the spec stays.
    const s1 = await s.request('PATCH', `${V1}/round/status`, { body: { spec: { maxReplicas: 1 }, status: { desiredReplicas: 5 } }, headers: merge });
    t.equal(s1.status, 200, s1.text);
    const v2b = (await s.get(`${V2}/round`)).json;
    t.equal(v2b.spec.maxReplicas, 11, 'spec ignored on status');
    t.equal(v2b.status.desiredReplicas, 5);
    // v1 writers that drop the annotations of the other half: a main-resource PUT keeps the status
    // ones, a status PUT keeps the spec ones (the reference's strategies work on the full object).
    const cur = (await s.get(`${V1}/round`)).json;
    const bare = { ...cur, metadata: { ...cur.metadata, annotations: { mine: 'x' } } };
    const put = await s.request('PUT', `${V1}/round`, { body: bare });
    t.equal(put.status, 200, put.text);
    const afterPut = (await s.get(`${V2}/round`)).json;
    t.same(afterPut.status.conditions, cond, 'conditions survive a v1 PUT without them');
    t.equal(afterPut.status.currentMetrics.length, 1, 'current metrics survive too');
    t.same(afterPut.spec.metrics.map((m: any) => m.type), ['Resource'], 'the spec is what the v1 writer sent: only the CPU target');
    t.same(afterPut.metadata.annotations, { mine: 'x' });
    // Put the other metrics back through v2, then a v1 status PUT without the spec annotations.
    const full = await s.request('PATCH', `${V2}/round`, { body: { spec: { metrics: [{ type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } }, afterPut.spec.metrics[0]] } }, headers: merge });
    t.equal(full.status, 200, full.text);
    const v1now = (await s.get(`${V1}/round`)).json;
    const st2 = await s.request('PUT', `${V1}/round/status`, { body: { ...v1now, metadata: { ...v1now.metadata, annotations: {} }, status: { ...v1now.status, desiredReplicas: 6 } } });
    t.equal(st2.status, 200, st2.text);
    const afterStatus = (await s.get(`${V2}/round`)).json;
    t.same(afterStatus.spec.metrics, full.json.spec.metrics, 'the spec survives a v1 status PUT without its annotations');
    t.equal(afterStatus.status.desiredReplicas, 6);
  });

  t.test('Table columns, the same through both versions', async (t) => {
    const accept = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
    const c = await s.request('POST', V2, { body: v2hpa('tbl', { minReplicas: 2, maxReplicas: 11 }) });
    t.equal(c.status, 201, c.text);
    const st = await s.request('PATCH', `${V2}/tbl/status`, { body: { status: { currentReplicas: 3, desiredReplicas: 3, currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 42, averageValue: '120m' } } }] } }, headers: merge });
    t.equal(st.status, 200, st.text);
    for (const base of [V1, V2]) {
      const tb = (await s.get(base, accept)).json;
      t.same(tb.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Reference', 'Targets', 'MinPods', 'MaxPods', 'Replicas', 'Age']);
      const row = tb.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'tbl');
      // Statuses are matched to specs by position, as the reference's printer does (cpu, memory, qps).
      t.same(row.cells.slice(0, 6), ['tbl', 'Deployment/web', '42%/60%, <unknown>/500Mi + 1 more...', '2', 11, 3], `${base} row`);
      const one = (await s.get(`${base}/tbl`, accept)).json;
      t.same(one.rows[0].cells.slice(0, 6), row.cells.slice(0, 6), `${base} get: the same row`);
      const withObject = (await s.get(`${base}/tbl?includeObject=Object`, accept)).json;
      t.equal(withObject.rows[0].object.apiVersion, base === V1 ? 'autoscaling/v1' : 'autoscaling/v2', 'an embedded object is in the request version');
      const plain = tb.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'plain');
      t.same(plain.cells.slice(0, 6), ['plain', 'Deployment/web', '<unknown>/80%', '1', 3, 0]);
    }
  });

  t.test('watches of v1 and v2 each see every event in their own version', async (t) => {
    const seen: Record<string, any[]> = { v1: [], v2: [] };
    const w1 = s.stream(`${V1}?watch=1&resourceVersion=0`, (ev) => seen.v1.push(ev));
    const w2 = s.stream(`${V2}?watch=1&resourceVersion=0`, (ev) => seen.v2.push(ev));
    await s.request('POST', V2, { body: v2hpa('watched') });
    await s.request('PATCH', `${V1}/watched`, { body: { spec: { maxReplicas: 7 } }, headers: merge });
    await s.request('DELETE', `${V2}/watched`);
    const end = Date.now() + 5000;
    const mine = (v: string) => seen[v].filter((e) => e.object.metadata.name === 'watched');
    while ((mine('v1').length < 3 || mine('v2').length < 3) && Date.now() < end) await sleep(50);
    w1.close(); w2.close();
    for (const v of ['v1', 'v2']) {
      t.same(mine(v).map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED'], `${v} events`);
      t.ok(seen[v].every((e) => e.object.apiVersion === `autoscaling/${v}`), `${v} objects in ${v}`);
    }
    t.equal(mine('v1')[1].object.spec.maxReplicas, 7);
    t.ok(mine('v1')[0].object.metadata.annotations[`${ANN}metrics`], 'v1 event carries the annotation');
  });

  t.test('Protobuf watches of both versions, many watchers each', async (t) => {
    const kube = getBrand('kubernetes');
    const types = builtinTypes(kube).filter((x) => x.resource === 'horizontalpodautoscalers');
    /** The WatchEvent frame's type and object (field 1: type, field 2: RawExtension whose field 1 is the enveloped object). */
    const field = (b: Buffer, want: number): Buffer | undefined => {
      let i = 0;
      while (i < b.length) {
        let tag = 0, shift = 0, x: number;
        do { x = b[i++]; tag |= (x & 0x7f) << shift; shift += 7; } while (x & 0x80);
        let len = 0; shift = 0;
        do { x = b[i++]; len |= (x & 0x7f) << shift; shift += 7; } while (x & 0x80);
        if (tag >> 3 === want) return b.subarray(i, i + len);
        i += len;
      }
      return undefined;
    };
    const events: Record<string, { type: string; obj: any }[][]> = { v1: [], v2: [] };
    const watches: { close(): void }[] = [];
    for (const v of ['v1', 'v2'] as const) {
      const type = types.find((x) => x.version === v)!;
      for (let i = 0; i < 10; i++) {
        const mine: { type: string; obj: any }[] = [];
        events[v].push(mine);
        watches.push(protobufWatch(s, `/apis/autoscaling/${v}/namespaces/default/horizontalpodautoscalers?watch=1&fieldSelector=metadata.name%3Dpbw`, 'application/vnd.kubernetes.protobuf;type=watch', (frame) => {
          const env = field(field(frame, 2)!, 1)!;
          mine.push({ type: field(frame, 1)!.toString(), obj: decodeProtobuf(Buffer.from(env), kube, type) });
        }));
      }
    }
    await sleep(300);
    t.equal((await s.request('POST', V2, { body: v2hpa('pbw') })).status, 201);
    t.equal((await s.request('PATCH', `${V1}/pbw`, { body: { spec: { maxReplicas: 8 } }, headers: merge })).status, 200);
    const end = Date.now() + 5000;
    while ([...events.v1, ...events.v2].some((e) => e.length < 2) && Date.now() < end) await sleep(50);
    for (const w of watches) w.close();
    for (const v of ['v1', 'v2']) {
      for (const mine of events[v]) {
        t.same(mine.map((e) => e.type), ['ADDED', 'MODIFIED'], `${v} watcher: both events`);
        t.ok(mine.every((e) => e.obj.apiVersion === `autoscaling/${v}`), `${v} watcher: objects in ${v}`);
      }
      t.equal(events[v][0][1].obj.spec.maxReplicas, 8);
    }
    t.equal(events.v1[0][0].obj.spec.targetCPUUtilizationPercentage, 60, 'v1 frames carry v1 fields');
    t.ok(events.v1[0][0].obj.metadata.annotations[`${ANN}metrics`], 'and the annotations');
    t.equal(events.v2[0][0].obj.spec.metrics.length, 3, 'v2 frames carry v2 fields');
    // The stored entry's cached Protobuf bytes are still the v2 message.
    const pb = await s.request('GET', `${V2}/pbw`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    t.equal(pb.status, 200);
    const json = (await s.get(`${V2}/pbw`)).json;
    t.equal(json.spec.metrics.length, 3);
  });

  t.test('Protobuf reads of both versions', async (t) => {
    for (const base of [V1, V2]) {
      const r = await s.request('GET', `${base}/round`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
      t.equal(r.status, 200);
      t.match(String(r.headers['content-type']), /protobuf/);
      t.ok(r.text.includes(base === V1 ? 'autoscaling/v1' : 'autoscaling/v2'), 'envelope names the version');
    }
  });

  t.test('concurrent unconditional writes through both versions: none lost, no conflict', async (t) => {
    const c = await s.request('POST', V2, { body: { ...v2hpa('busy'), metadata: { name: 'busy', labels: {} } } });
    t.equal(c.status, 201, c.text);
    const N = 20;
    const writes = Array.from({ length: N }, (_, i) => {
      const body = { metadata: { labels: { [`w${i}`]: 'x' } } };
      return i % 2 ? s.request('PATCH', `${V1}/busy`, { body, headers: merge }) : s.request('PATCH', `${V2}/busy`, { body, headers: merge });
    });
    const codes = (await Promise.all(writes)).map((r) => r.status);
    t.same(codes, Array(N).fill(200), 'every write answered 200');
    const labels = (await s.get(`${V2}/busy`)).json.metadata.labels;
    t.equal(Object.keys(labels).length, N, 'no write lost');
    const v2 = (await s.get(`${V2}/busy`)).json;
    t.same(v2.spec.behavior.scaleDown.policies, [{ type: 'Pods', value: 1, periodSeconds: 60 }], 'v2-only fields survive v1 writers');
    // PUTs without resourceVersion from both versions interleaved.
    const puts = await Promise.all(Array.from({ length: 10 }, async (_, i) => {
      const base = i % 2 ? V1 : V2;
      const cur = (await s.get(`${base}/busy`)).json;
      delete cur.metadata.resourceVersion;
      cur.metadata.annotations = { ...(cur.metadata.annotations ?? {}), [`put${i}`]: 'y' };
      return s.request('PUT', `${base}/busy`, { body: cur });
    }));
    t.same(puts.map((r) => r.status), Array(10).fill(200), puts.map((r) => r.text.slice(0, 200)).join('\n'));
  });

  t.test('kubectl autoscale and get hpa with every release', async (t) => {
    const releases = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33'].filter((v) => kubectlRelease(v));
    if (!releases.length) { t.comment('skipped: no stock kubectl installed'); return; }
    const dep = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' }, spec: { selector: { matchLabels: { app: 'x' } }, template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } } });
    t.equal(dep.status, 201, dep.text);
    for (const v of releases) {
      const bin = kubectlRelease(v)!;
      const name = `x-${v.replace('.', '-')}`;
      const r = await kubectl(s, ['autoscale', 'deployment', 'x', '--name', name, '--min', '2', '--max', '5', '--cpu-percent', '80'], { bin });
      t.equal(r.code, 0, `${v} autoscale: ${r.stderr}`);
      t.match(r.stdout, /autoscaled/, `${v} says autoscaled`);
      const g = await kubectl(s, ['get', 'hpa', name], { bin });
      t.equal(g.code, 0, g.stderr);
      const lines = g.stdout.trim().split('\n');
      t.match(lines[0], /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE$/, `${v} header`);
      t.match(lines[1], new RegExp(`^${name}\\s+Deployment/x\\s+<unknown>/80%\\s+2\\s+5\\s+0\\s+\\S+$`), `${v} row`);
      const obj = (await s.get(`${V2}/${name}`)).json;
      t.same([obj.spec.minReplicas, obj.spec.maxReplicas, obj.spec.metrics[0].resource.target.averageUtilization], [2, 5, 80], `${v} stored`);
    }
    // kubectl get -w: Table rows over a watch, the change shown as a new row.
    const bin = kubectlRelease(releases[releases.length - 1])!;
    const w = startKubectl(s, ['get', 'hpa', `x-${releases[0].replace('.', '-')}`, '-w'], bin);
    const seen = async (re: RegExp) => { const end = Date.now() + 8000; while (!re.test(w.out.stdout) && Date.now() < end) await sleep(50); return re.test(w.out.stdout); };
    t.ok(await seen(/<unknown>\/80%\s+2\s+5/), 'the first row');
    await s.request('PATCH', `${V1}/x-${releases[0].replace('.', '-')}`, { body: { spec: { maxReplicas: 7, targetCPUUtilizationPercentage: 65 } }, headers: merge });
    t.ok(await seen(/<unknown>\/65%\s+2\s+7/), `the change, as a row: ${w.out.stdout}`);
    w.child.kill();
    await w.exit;
    const all = await kubectl(s, ['get', 'all']);
    t.match(all.stdout, /horizontalpodautoscaler.autoscaling\/x-1-/, 'in `get all`');
  });

  t.test('kubectl apply (client- and server-side, both versions) and describe', async (t) => {
    const releases = ['1.27', '1.33'].filter((v) => kubectlRelease(v));
    if (!releases.length) { t.comment('skipped: no stock kubectl installed'); return; }
    for (const v of releases) {
      const bin = kubectlRelease(v)!;
      const n = v.replace('.', '-');
      const manifest2 = { ...v2hpa(`ap2-${n}`) };
      const a2 = await kubectl(s, ['apply', '-f', '-'], { bin, input: JSON.stringify(manifest2) });
      t.equal(a2.code, 0, `${v} apply v2: ${a2.stderr}`);
      const again = await kubectl(s, ['apply', '-f', '-'], { bin, input: JSON.stringify({ ...manifest2, spec: { ...manifest2.spec, maxReplicas: 12 } }) });
      t.equal(again.code, 0, `${v} apply v2 again: ${again.stderr}`);
      t.equal((await s.get(`${V2}/ap2-${n}`)).json.spec.maxReplicas, 12);
      const v1m = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: `ap1-${n}` }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 4, targetCPUUtilizationPercentage: 55 } };
      const ss = await kubectl(s, ['apply', '--server-side', '-f', '-'], { bin, input: JSON.stringify(v1m) });
      t.equal(ss.code, 0, `${v} server-side apply v1: ${ss.stderr}`);
      const ss2 = await kubectl(s, ['apply', '--server-side', '-f', '-'], { bin, input: JSON.stringify({ ...v1m, spec: { ...v1m.spec, targetCPUUtilizationPercentage: 65 } }) });
      t.equal(ss2.code, 0, `${v} server-side apply v1 again: ${ss2.stderr}`);
      t.equal((await s.get(`${V2}/ap1-${n}`)).json.spec.metrics[0].resource.target.averageUtilization, 65);
      const ex = await kubectl(s, ['explain', 'hpa.spec.behavior.scaleUp'], { bin });
      t.equal(ex.code, 0, `${v} explain: ${ex.stderr}`);
      t.match(ex.stdout, /stabilizationWindowSeconds/, `${v} explain shows the v2 fields`);
      const ex1 = await kubectl(s, ['explain', 'hpa.spec', '--api-version=autoscaling/v1'], { bin });
      t.match(ex1.stdout, /targetCPUUtilizationPercentage/, `${v} explain of v1`);
      const d = await kubectl(s, ['describe', 'hpa', `ap2-${n}`], { bin });
      t.equal(d.code, 0, d.stderr);
      t.match(d.stdout, /Reference:\s+Deployment\/web/, `${v} describe`);
      t.match(d.stdout, /Min replicas:\s+2/);
    }
  });
});
