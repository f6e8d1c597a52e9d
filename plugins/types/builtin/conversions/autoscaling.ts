// HorizontalPodAutoscaler between autoscaling/v1 and autoscaling/v2 (the storage version), as the
// reference converts: v1 has only a CPU utilization target, so everything else v2 holds travels in
// annotations of the v1 object and comes back from them —
//   autoscaling.alpha.kubernetes.io/metrics          spec metrics other than CPU utilization (v1 MetricSpec JSON)
//   autoscaling.alpha.kubernetes.io/current-metrics  every status metric (v1 MetricStatus JSON)
//   autoscaling.alpha.kubernetes.io/conditions       status conditions
//   autoscaling.alpha.kubernetes.io/behavior         spec.behavior (v2 JSON)
// The v1 MetricSpec/MetricStatus shapes are the older flat ones (targetAverageValue, metricName, ...).
// The annotation keys are the reference's literal keys in every brand (they are wire data that
// clients of the reference read and write).
import type { KObject } from '../../../../kernel/contracts/index.js';
import { StatusError } from '../../../../kernel/contracts/status.js';
import { isObj, list, type J } from '../../../lib/json.js';

export const HPA_ANNOTATIONS = {
  metrics: 'autoscaling.alpha.kubernetes.io/metrics',
  currentMetrics: 'autoscaling.alpha.kubernetes.io/current-metrics',
  conditions: 'autoscaling.alpha.kubernetes.io/conditions',
  behavior: 'autoscaling.alpha.kubernetes.io/behavior',
} as const;
const ROUND_TRIP: string[] = Object.values(HPA_ANNOTATIONS);

/** The CPU utilization v1 assumes when nothing else is asked for (percent). */
export const DEFAULT_CPU_UTILIZATION = 80;

const copy = <T>(v: T): T => (v === undefined ? v : JSON.parse(JSON.stringify(v)));

/** Sets o[k] = v when v is present (null and undefined stay absent). */
function put(o: J, k: string, v: unknown): void {
  if (v !== undefined && v !== null) o[k] = copy(v);
}

function compact<T extends J>(o: T): T | undefined {
  return Object.keys(o).length ? o : undefined;
}

/** Annotations without the round-trip keys; undefined when nothing is left. */
export function withoutRoundTrip(ann: unknown): Record<string, string> | undefined {
  if (!isObj(ann)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(ann)) if (!ROUND_TRIP.includes(k)) out[k] = v as string;
  return compact(out);
}

const isCpuUtilization = (m: J) => m.type === 'Resource' && isObj(m.resource) && m.resource.name === 'cpu' && isObj(m.resource.target) && m.resource.target.averageUtilization != null;

// ---------------------------------------------------------------- metrics (spec sources and statuses)

// A v2 metric keeps its figures in a `target` block (spec) or a `current` one (status); v1 flattens
// them into fields named after that block: targetValue / currentValue, targetAverageValue /
// currentAverageValue, targetAverageUtilization / currentAverageUtilization (Object's averageValue
// has no prefix). Spec targets also carry a `type`, which v1 leaves implicit.
type Side = 'target' | 'current';

function identifier(name: unknown, selector: unknown): J {
  const id: J = {};
  put(id, 'name', name);
  put(id, 'selector', selector);
  return id;
}

/** A v2 MetricSpec (side 'target') or MetricStatus (side 'current') in v1's flat form. */
function metricToV1(m: J, side: Side): J {
  const out: J = { type: m.type };
  const fig = (x: J): J => (isObj(x[side]) ? x[side] : {});
  const metric = (x: J): J => (isObj(x.metric) ? x.metric : {});
  if (isObj(m.object)) {
    const o: J = {};
    put(o, 'target', m.object.describedObject);
    put(o, 'metricName', metric(m.object).name);
    put(o, `${side}Value`, fig(m.object).value);
    put(o, 'selector', metric(m.object).selector);
    put(o, 'averageValue', fig(m.object).averageValue);
    out.object = o;
  }
  if (isObj(m.pods)) {
    const o: J = {};
    put(o, 'metricName', metric(m.pods).name);
    put(o, `${side}AverageValue`, fig(m.pods).averageValue);
    put(o, 'selector', metric(m.pods).selector);
    out.pods = o;
  }
  for (const k of ['resource', 'containerResource']) {
    if (!isObj(m[k])) continue;
    const o: J = {};
    put(o, 'name', m[k].name);
    put(o, `${side}AverageUtilization`, fig(m[k]).averageUtilization);
    put(o, `${side}AverageValue`, fig(m[k]).averageValue);
    put(o, 'container', m[k].container);
    out[k] = o;
  }
  if (isObj(m.external)) {
    const o: J = {};
    put(o, 'metricName', metric(m.external).name);
    put(o, 'metricSelector', metric(m.external).selector);
    put(o, `${side}Value`, fig(m.external).value);
    put(o, `${side}AverageValue`, fig(m.external).averageValue);
    out.external = o;
  }
  return out;
}

/** A v1 flat metric back in v2's form; a spec target gets the type the reference infers. */
function metricFromV1(m: J, side: Side): J {
  const out: J = { type: m.type };
  const block = (type: string | undefined, figures: [string, unknown][]): J => {
    const b: J = side === 'target' && type ? { type } : {};
    for (const [k, v] of figures) put(b, k, v);
    return b;
  };
  if (isObj(m.object)) {
    const o = m.object;
    out.object = {
      describedObject: copy(o.target ?? {}),
      [side]: block(o.averageValue == null ? 'Value' : 'AverageValue', [['value', o[`${side}Value`]], ['averageValue', o.averageValue]]),
      metric: identifier(o.metricName, o.selector),
    };
  }
  if (isObj(m.pods)) {
    out.pods = { metric: identifier(m.pods.metricName, m.pods.selector), [side]: block('AverageValue', [['averageValue', m.pods[`${side}AverageValue`]]]) };
  }
  for (const k of ['resource', 'containerResource']) {
    if (!isObj(m[k])) continue;
    const r = m[k];
    const util = r[`${side}AverageUtilization`];
    const o: J = {};
    put(o, 'name', r.name);
    if (k === 'containerResource') put(o, 'container', r.container);
    o[side] = block(util == null ? 'AverageValue' : 'Utilization', [['averageUtilization', util], ['averageValue', r[`${side}AverageValue`]]]);
    out[k] = o;
  }
  if (isObj(m.external)) {
    const e = m.external;
    const value = e[`${side}Value`];
    out.external = { metric: identifier(e.metricName, e.metricSelector), [side]: block(value == null ? 'AverageValue' : 'Value', [['value', value], ['averageValue', e[`${side}AverageValue`]]]) };
  }
  return out;
}

// ---------------------------------------------------------------- defaults of the storage version

/** Scale-up and scale-down rules with every unset part filled as the reference's v2 defaulting does. */
function scalingRules(r: unknown, up: boolean): J {
  const out: J = isObj(r) ? copy(r) : {};
  if (out.stabilizationWindowSeconds == null && up) out.stabilizationWindowSeconds = 0;
  if (out.selectPolicy == null) out.selectPolicy = 'Max';
  if (out.policies == null) {
    out.policies = up
      ? [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }]
      : [{ type: 'Percent', value: 100, periodSeconds: 15 }];
  }
  return out;
}

/** autoscaling/v2 defaults (the storage version's, applied to every object converted into it too). */
export function defaultV2(o: J): void {
  const spec = isObj(o.spec) ? o.spec : (o.spec = {});
  if (spec.minReplicas == null) spec.minReplicas = 1;
  if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } }];
  }
  if (isObj(spec.behavior)) {
    spec.behavior.scaleUp = scalingRules(spec.behavior.scaleUp, true);
    spec.behavior.scaleDown = scalingRules(spec.behavior.scaleDown, false);
  }
}

// ---------------------------------------------------------------- whole objects

function v2ToV1(src: KObject): KObject {
  const spec = isObj(src.spec) ? src.spec : {};
  const status = isObj(src.status) ? src.status : undefined;
  const out: KObject = { ...src, apiVersion: 'autoscaling/v1', metadata: copy(src.metadata ?? {}) };
  const metrics = list(spec.metrics);
  const v1spec: J = {};
  put(v1spec, 'scaleTargetRef', spec.scaleTargetRef);
  put(v1spec, 'minReplicas', spec.minReplicas);
  put(v1spec, 'maxReplicas', spec.maxReplicas);
  // The first CPU resource metric decides the v1 target, whether or not it is a utilization.
  const cpu = metrics.find((m) => m.type === 'Resource' && isObj(m.resource) && m.resource.name === 'cpu');
  if (cpu && isObj(cpu.resource.target) && cpu.resource.target.averageUtilization != null) v1spec.targetCPUUtilizationPercentage = cpu.resource.target.averageUtilization;
  out.spec = v1spec;

  const ann: Record<string, string> = withoutRoundTrip(out.metadata!.annotations) ?? {};
  const others = metrics.filter((m) => !isCpuUtilization(m)).map((m) => metricToV1(m, 'target'));
  if (others.length) ann[HPA_ANNOTATIONS.metrics] = JSON.stringify(others);
  if (status) {
    const v1status: J = { currentReplicas: status.currentReplicas ?? 0, desiredReplicas: status.desiredReplicas ?? 0 };
    put(v1status, 'observedGeneration', status.observedGeneration);
    put(v1status, 'lastScaleTime', status.lastScaleTime);
    // The last CPU utilization reported wins, as in the reference.
    for (const m of list(status.currentMetrics)) {
      if (m.type === 'Resource' && isObj(m.resource) && m.resource.name === 'cpu' && isObj(m.resource.current) && m.resource.current.averageUtilization != null) {
        v1status.currentCPUUtilizationPercentage = m.resource.current.averageUtilization;
      }
    }
    const current = list(status.currentMetrics);
    if (current.length) ann[HPA_ANNOTATIONS.currentMetrics] = JSON.stringify(current.map((m) => metricToV1(m, 'current')));
    const conditions = list(status.conditions);
    if (conditions.length) ann[HPA_ANNOTATIONS.conditions] = JSON.stringify(conditions);
    out.status = v1status;
  }
  if (isObj(spec.behavior)) ann[HPA_ANNOTATIONS.behavior] = JSON.stringify(spec.behavior);
  if (Object.keys(ann).length) out.metadata!.annotations = ann;
  else delete out.metadata!.annotations;
  return out;
}

/** A JSON list stored in an annotation; throws on malformed JSON as the reference's decoding does. */
function annotationList(ann: J, key: string): J[] | undefined {
  const raw = ann[key];
  if (typeof raw !== 'string') return undefined;
  let v: unknown;
  try { v = JSON.parse(raw); } catch (e) { v = e; }
  if (v !== null && !Array.isArray(v)) throw new StatusError(400, 'BadRequest', `annotation ${key}: ${v instanceof Error ? v.message : 'a JSON list is expected'}`);
  return list(v);
}

function v1ToV2(src: KObject): KObject {
  const spec = isObj(src.spec) ? src.spec : {};
  const status = isObj(src.status) ? src.status : undefined;
  const out: KObject = { ...src, apiVersion: 'autoscaling/v2', metadata: copy(src.metadata ?? {}) };
  const ann: J = isObj(out.metadata!.annotations) ? out.metadata!.annotations : {};
  const v2spec: J = {};
  put(v2spec, 'scaleTargetRef', spec.scaleTargetRef);
  put(v2spec, 'minReplicas', spec.minReplicas);
  put(v2spec, 'maxReplicas', spec.maxReplicas);
  const metrics: J[] = (annotationList(ann, HPA_ANNOTATIONS.metrics) ?? []).map((m) => metricFromV1(m, 'target'));
  if (spec.targetCPUUtilizationPercentage != null) {
    metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage } } });
  }
  // v1's implicit target, made explicit now that every metric is known.
  if (!metrics.length) metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } });
  v2spec.metrics = metrics;
  if (typeof ann[HPA_ANNOTATIONS.behavior] === 'string') {
    // Only well-formed, non-empty behavior moves into the field; anything else is dropped.
    try {
      const b = JSON.parse(ann[HPA_ANNOTATIONS.behavior]) as unknown;
      if (isObj(b) && Object.keys(b).some((k) => b[k] != null)) v2spec.behavior = b;
    } catch { /* dropped with the annotation */ }
  }
  out.spec = v2spec;
  if (status) {
    const v2status: J = {};
    put(v2status, 'observedGeneration', status.observedGeneration);
    put(v2status, 'lastScaleTime', status.lastScaleTime);
    if (status.currentReplicas) v2status.currentReplicas = status.currentReplicas;
    v2status.desiredReplicas = status.desiredReplicas ?? 0;
    if (status.currentCPUUtilizationPercentage != null) {
      v2status.currentMetrics = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } } }];
    }
    // The annotation has more than the single CPU figure: it wins.
    const current = annotationList(ann, HPA_ANNOTATIONS.currentMetrics);
    if (current) v2status.currentMetrics = current.map((m) => metricFromV1(m, 'current'));
    const conditions = annotationList(ann, HPA_ANNOTATIONS.conditions);
    if (conditions) v2status.conditions = copy(conditions);
    out.status = v2status;
  }
  const kept = withoutRoundTrip(ann);
  if (kept) out.metadata!.annotations = kept;
  else delete out.metadata!.annotations;
  defaultV2(out);
  return out;
}

export const hpaConversion = {
  storageVersion: 'v2',
  convert(obj: KObject, from: string, to: string): KObject {
    if (from === 'v1' && to === 'v2') return v1ToV2(obj);
    if (from === 'v2' && to === 'v1') return v2ToV1(obj);
    throw new Error(`no conversion from ${from} to ${to}`);
  },
};
