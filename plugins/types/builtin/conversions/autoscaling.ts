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
import type { KObject } from '../../../../kernel/contracts.js';
import { StatusError } from '../../../../kernel/status.js';
import { isObj, list, type J } from '../catalog.js';

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

// ---------------------------------------------------------------- metric sources (spec)

function specToV1(m: J): J {
  const out: J = { type: m.type };
  const t = (x: J) => (isObj(x.target) ? x.target : {});
  const metric = (x: J) => (isObj(x.metric) ? x.metric : {});
  if (isObj(m.object)) {
    const o: J = {};
    put(o, 'target', m.object.describedObject);
    put(o, 'metricName', metric(m.object).name);
    put(o, 'targetValue', t(m.object).value);
    put(o, 'selector', metric(m.object).selector);
    put(o, 'averageValue', t(m.object).averageValue);
    out.object = o;
  }
  if (isObj(m.pods)) {
    const o: J = {};
    put(o, 'metricName', metric(m.pods).name);
    put(o, 'targetAverageValue', t(m.pods).averageValue);
    put(o, 'selector', metric(m.pods).selector);
    out.pods = o;
  }
  for (const k of ['resource', 'containerResource']) {
    if (!isObj(m[k])) continue;
    const o: J = {};
    put(o, 'name', m[k].name);
    put(o, 'targetAverageUtilization', t(m[k]).averageUtilization);
    put(o, 'targetAverageValue', t(m[k]).averageValue);
    put(o, 'container', m[k].container);
    out[k] = o;
  }
  if (isObj(m.external)) {
    const o: J = {};
    put(o, 'metricName', metric(m.external).name);
    put(o, 'metricSelector', metric(m.external).selector);
    put(o, 'targetValue', t(m.external).value);
    put(o, 'targetAverageValue', t(m.external).averageValue);
    out.external = o;
  }
  return out;
}

function identifier(name: unknown, selector: unknown): J {
  const id: J = {};
  put(id, 'name', name);
  put(id, 'selector', selector);
  return id;
}

function specFromV1(m: J): J {
  const out: J = { type: m.type };
  if (isObj(m.object)) {
    const o = m.object;
    const target: J = { type: o.averageValue == null ? 'Value' : 'AverageValue' };
    put(target, 'value', o.targetValue);
    put(target, 'averageValue', o.averageValue);
    out.object = { describedObject: copy(o.target ?? {}), target, metric: identifier(o.metricName, o.selector) };
  }
  if (isObj(m.pods)) {
    const target: J = { type: 'AverageValue' };
    put(target, 'averageValue', m.pods.targetAverageValue);
    out.pods = { metric: identifier(m.pods.metricName, m.pods.selector), target };
  }
  for (const k of ['resource', 'containerResource']) {
    if (!isObj(m[k])) continue;
    const r = m[k];
    const target: J = { type: r.targetAverageUtilization == null ? 'AverageValue' : 'Utilization' };
    put(target, 'averageUtilization', r.targetAverageUtilization);
    put(target, 'averageValue', r.targetAverageValue);
    const o: J = {};
    put(o, 'name', r.name);
    if (k === 'containerResource') put(o, 'container', r.container);
    o.target = target;
    out[k] = o;
  }
  if (isObj(m.external)) {
    const e = m.external;
    const target: J = { type: e.targetValue == null ? 'AverageValue' : 'Value' };
    put(target, 'value', e.targetValue);
    put(target, 'averageValue', e.targetAverageValue);
    out.external = { metric: identifier(e.metricName, e.metricSelector), target };
  }
  return out;
}

// ---------------------------------------------------------------- metric statuses

function statusToV1(m: J): J {
  const out: J = { type: m.type };
  const cur = (x: J) => (isObj(x.current) ? x.current : {});
  const metric = (x: J) => (isObj(x.metric) ? x.metric : {});
  if (isObj(m.object)) {
    const o: J = {};
    put(o, 'target', m.object.describedObject);
    put(o, 'metricName', metric(m.object).name);
    put(o, 'currentValue', cur(m.object).value);
    put(o, 'selector', metric(m.object).selector);
    put(o, 'averageValue', cur(m.object).averageValue);
    out.object = o;
  }
  if (isObj(m.pods)) {
    const o: J = {};
    put(o, 'metricName', metric(m.pods).name);
    put(o, 'currentAverageValue', cur(m.pods).averageValue);
    put(o, 'selector', metric(m.pods).selector);
    out.pods = o;
  }
  for (const k of ['resource', 'containerResource']) {
    if (!isObj(m[k])) continue;
    const o: J = {};
    put(o, 'name', m[k].name);
    put(o, 'currentAverageUtilization', cur(m[k]).averageUtilization);
    put(o, 'currentAverageValue', cur(m[k]).averageValue);
    put(o, 'container', m[k].container);
    out[k] = o;
  }
  if (isObj(m.external)) {
    const o: J = {};
    put(o, 'metricName', metric(m.external).name);
    put(o, 'metricSelector', metric(m.external).selector);
    put(o, 'currentValue', cur(m.external).value);
    put(o, 'currentAverageValue', cur(m.external).averageValue);
    out.external = o;
  }
  return out;
}

function statusFromV1(m: J): J {
  const out: J = { type: m.type };
  if (isObj(m.object)) {
    const o = m.object;
    const current: J = {};
    put(current, 'value', o.currentValue);
    put(current, 'averageValue', o.averageValue);
    out.object = { describedObject: copy(o.target ?? {}), current, metric: identifier(o.metricName, o.selector) };
  }
  if (isObj(m.pods)) {
    const current: J = {};
    put(current, 'averageValue', m.pods.currentAverageValue);
    out.pods = { metric: identifier(m.pods.metricName, m.pods.selector), current };
  }
  for (const k of ['resource', 'containerResource']) {
    if (!isObj(m[k])) continue;
    const r = m[k];
    const current: J = {};
    put(current, 'averageValue', r.currentAverageValue);
    put(current, 'averageUtilization', r.currentAverageUtilization);
    const o: J = {};
    put(o, 'name', r.name);
    if (k === 'containerResource') put(o, 'container', r.container);
    o.current = current;
    out[k] = o;
  }
  if (isObj(m.external)) {
    const e = m.external;
    const current: J = {};
    put(current, 'value', e.currentValue);
    put(current, 'averageValue', e.currentAverageValue);
    out.external = { metric: identifier(e.metricName, e.metricSelector), current };
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
  const others = metrics.filter((m) => !isCpuUtilization(m)).map(specToV1);
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
    if (current.length) ann[HPA_ANNOTATIONS.currentMetrics] = JSON.stringify(current.map(statusToV1));
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
  const metrics: J[] = (annotationList(ann, HPA_ANNOTATIONS.metrics) ?? []).map(specFromV1);
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
    if (current) v2status.currentMetrics = current.map(statusFromV1);
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
