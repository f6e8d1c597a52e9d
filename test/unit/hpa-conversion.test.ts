// HorizontalPodAutoscaler conversion between autoscaling/v2 (stored) and autoscaling/v1: every metric
// source and status kind survives v2 → v1 → v2 through the reference's round-trip annotations, in
// the reference's order (the CPU utilization target last); v1's own fields map both ways.
import t from 'tap';
import { hpaConversion, HPA_ANNOTATIONS } from '../../plugins/types/builtin/conversions/autoscaling.js';

const sel = { matchLabels: { q: 'x' } };
const v2 = {
  apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h', annotations: { keep: 'me' } },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 9,
    metrics: [
      { type: 'Object', object: { describedObject: { apiVersion: 'v1', kind: 'Service', name: 's' }, target: { type: 'Value', value: '10' }, metric: { name: 'rps', selector: sel } } },
      { type: 'Object', object: { describedObject: { kind: 'Service', name: 's' }, target: { type: 'AverageValue', value: '1', averageValue: '2' }, metric: { name: 'rps' } } },
      { type: 'Pods', pods: { metric: { name: 'qps', selector: sel }, target: { type: 'AverageValue', averageValue: '5' } } },
      { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' } } },
      { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', target: { type: 'Utilization', averageUtilization: 50 } } },
      { type: 'External', external: { metric: { name: 'queue', selector: sel }, target: { type: 'Value', value: '30' } } },
      { type: 'External', external: { metric: { name: 'lag' }, target: { type: 'AverageValue', averageValue: '3' } } },
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
    ],
    behavior: { scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }] }, scaleDown: { selectPolicy: 'Min', policies: [{ type: 'Percent', value: 10, periodSeconds: 60 }] } },
  },
  status: {
    observedGeneration: 3, lastScaleTime: '2024-01-01T00:00:00Z', currentReplicas: 2, desiredReplicas: 3,
    currentMetrics: [
      { type: 'Object', object: { describedObject: { kind: 'Service', name: 's' }, current: { value: '9', averageValue: '4' }, metric: { name: 'rps' } } },
      { type: 'Pods', pods: { metric: { name: 'qps' }, current: { averageValue: '6' } } },
      { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', current: { averageUtilization: 40, averageValue: '200m' } } },
      { type: 'External', external: { metric: { name: 'queue' }, current: { value: '12' } } },
      { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 65, averageValue: '300m' } } },
    ],
    conditions: [{ type: 'ScalingActive', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z', reason: 'ValidMetricFound', message: 'm' }],
  },
};

t.test('v2 → v1 → v2 keeps everything', async (t) => {
  const v1 = hpaConversion.convert(v2, 'v2', 'v1');
  t.equal(v1.apiVersion, 'autoscaling/v1');
  t.same(v1.spec, { scaleTargetRef: v2.spec.scaleTargetRef, minReplicas: 1, maxReplicas: 9, targetCPUUtilizationPercentage: 70 });
  t.same(v1.status, { currentReplicas: 2, desiredReplicas: 3, observedGeneration: 3, lastScaleTime: '2024-01-01T00:00:00Z', currentCPUUtilizationPercentage: 65 });
  const ann = v1.metadata!.annotations!;
  t.equal(ann.keep, 'me');
  t.same(JSON.parse(ann[HPA_ANNOTATIONS.metrics])[0], { type: 'Object', object: { target: { apiVersion: 'v1', kind: 'Service', name: 's' }, metricName: 'rps', targetValue: '10', selector: sel } }, 'v1 ObjectMetricSource');
  t.same(JSON.parse(ann[HPA_ANNOTATIONS.metrics])[5], { type: 'External', external: { metricName: 'queue', metricSelector: sel, targetValue: '30' } }, 'v1 ExternalMetricSource');
  t.same(JSON.parse(ann[HPA_ANNOTATIONS.currentMetrics])[2], { type: 'ContainerResource', containerResource: { name: 'cpu', currentAverageUtilization: 40, currentAverageValue: '200m', container: 'app' } }, 'v1 ContainerResourceMetricStatus');
  t.same(JSON.parse(ann[HPA_ANNOTATIONS.conditions]), v2.status.conditions);
  t.same(JSON.parse(ann[HPA_ANNOTATIONS.behavior]), v2.spec.behavior);
  t.equal(v2.metadata.annotations.keep, 'me', 'the input is not changed');
  t.equal(Object.keys(v2.metadata.annotations).length, 1);

  const back = hpaConversion.convert(v1, 'v1', 'v2');
  t.same(back.spec, v2.spec, 'spec');
  t.same(back.status, v2.status, 'status');
  t.same(back.metadata, v2.metadata, 'the round-trip annotations are gone again');
});

t.test('v1 alone: the CPU target, defaults, and a malformed annotation', async (t) => {
  const v1 = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h' }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'w' }, maxReplicas: 4 }, status: { currentReplicas: 1, desiredReplicas: 2, currentCPUUtilizationPercentage: 33 } };
  const o = hpaConversion.convert(v1, 'v1', 'v2') as any;
  t.same(o.spec, { scaleTargetRef: { kind: 'Deployment', name: 'w' }, maxReplicas: 4, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }], minReplicas: 1 });
  t.same(o.status, { currentReplicas: 1, desiredReplicas: 2, currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 33 } } }] });
  t.equal(o.metadata.annotations, undefined);
  const empty = hpaConversion.convert({ ...v1, metadata: { name: 'h', annotations: { [HPA_ANNOTATIONS.behavior]: '{}' } } }, 'v1', 'v2') as any;
  t.equal(empty.spec.behavior, undefined, 'an empty behavior is not a behavior');
  t.throws(() => hpaConversion.convert({ ...v1, metadata: { name: 'h', annotations: { [HPA_ANNOTATIONS.conditions]: '{"a":1}' } } }, 'v1', 'v2'), { code: 400 });
});
