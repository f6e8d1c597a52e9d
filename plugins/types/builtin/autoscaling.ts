// HorizontalPodAutoscaler hooks (autoscaling/v1 and v2 share one row key): defaulting per version,
// validation and table cells on the v2 form (the reference validates and prints its internal form,
// which is v2's), whatever version the object is in.
import type { FieldCause, KObject, TableColumn } from '../../../kernel/contracts/index.js';
import { at, isObj, list, type J } from '../../lib/json.js';
import { defaultV2, hpaConversion, withoutRoundTrip } from './conversions/autoscaling.js';
import { quantity } from './quantity.js';
import { dnsLabelErrors, forbidden, invalid, notSupported, required, show } from './validation/causes.js';
import { containerResourceNameCauses } from './validation/pod-resources.js';

const isV1 = (o: KObject) => o.apiVersion === 'autoscaling/v1';
/** The object in its v2 form (a copy when it was v1). */
const asV2 = (o: KObject): J => (isV1(o) ? hpaConversion.convert(o, 'v1', 'v2') : o);

export function defaultHpa(o: KObject): void {
  if (isV1(o)) {
    const spec = isObj(o.spec) ? o.spec : (o.spec = {});
    if (spec.minReplicas == null) spec.minReplicas = 1;
    // The reference always writes v1's status with both counts.
    const st = isObj(o.status) ? o.status : (o.status = {});
    st.currentReplicas ??= 0;
    st.desiredReplicas ??= 0;
    return;
  }
  defaultV2(o);
  const st = isObj(o.status) ? o.status : (o.status = {});
  st.desiredReplicas ??= 0;
  // v2 carries everything in fields: round-trip annotations from other versions are dropped.
  const md = o.metadata;
  if (md && isObj(md.annotations)) {
    const kept = withoutRoundTrip(md.annotations);
    if (kept) md.annotations = kept; else delete md.annotations;
  }
}

// ---------------------------------------------------------------- validation (the reference's messages)

function pathSegment(out: FieldCause[], field: string, v: unknown): void {
  if (v === undefined || v === null || v === '') { out.push(required(field)); return; }
  const s = String(v);
  if (s === '.' || s === '..') out.push(invalid(field, s, `may not be '${s}'`));
  for (const bad of ['/', '%']) if (s.includes(bad)) out.push(invalid(field, s, `may not contain '${bad}'`));
}

function positive(out: FieldCause[], field: string, q: unknown): void {
  if (q !== undefined && q !== null && !(quantity(q) > 0)) out.push(invalid(field, q, 'must be positive'));
}

function target(out: FieldCause[], p: string, t: J): void {
  if (!t.type) out.push(required(`${p}.type`, 'must specify a metric target type'));
  if (!['Utilization', 'Value', 'AverageValue'].includes(t.type)) out.push(invalid(`${p}.type`, t.type ?? '', 'must be either Utilization, Value, or AverageValue'));
  positive(out, `${p}.value`, t.value);
  positive(out, `${p}.averageValue`, t.averageValue);
  if (t.averageUtilization != null && t.averageUtilization < 1) out.push(invalid(`${p}.averageUtilization`, t.averageUtilization, 'must be greater than 0'));
}

function identifier(out: FieldCause[], p: string, id: unknown): void {
  if (!isObj(id) || !id.name) out.push(required(`${p}.name`, 'must specify a metric name'));
  else pathSegment(out, `${p}.name`, id.name);
}

const SOURCES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
const FIELD: Record<string, string> = { Object: 'object', Pods: 'pods', Resource: 'resource', External: 'external', ContainerResource: 'containerResource' };

function metric(out: FieldCause[], p: string, m: J): void {
  if (!m.type) out.push(required(`${p}.type`, 'must specify a metric source type'));
  if (!SOURCES.includes(m.type)) out.push(notSupported(`${p}.type`, m.type ?? '', SOURCES));
  const present = ['object', 'external', 'pods', 'resource', 'containerResource'].filter((k) => isObj(m[k]));
  const first = present[0];
  const src = first ? m[first] : {};
  const tgt = isObj(src.target) ? src.target : {};
  const tp = `${p}.${first}.target`;
  if (first === 'object') {
    const d = isObj(src.describedObject) ? src.describedObject : {};
    pathSegment(out, `${p}.object.describedObject.kind`, d.kind);
    pathSegment(out, `${p}.object.describedObject.name`, d.name);
    identifier(out, `${p}.object.metric`, src.metric);
    target(out, tp, tgt);
    if (tgt.value == null && tgt.averageValue == null) out.push(required(`${tp}.averageValue`, 'must set either a target value or averageValue'));
  } else if (first === 'external') {
    identifier(out, `${p}.external.metric`, src.metric);
    target(out, tp, tgt);
    if (tgt.value == null && tgt.averageValue == null) out.push(required(`${tp}.averageValue`, 'must set either a target value for metric or a per-pod target'));
    if (tgt.value != null && tgt.averageValue != null) out.push(forbidden(`${tp}.value`, 'may not set both a target value for metric and a per-pod target'));
  } else if (first === 'pods') {
    identifier(out, `${p}.pods.metric`, src.metric);
    target(out, tp, tgt);
    if (tgt.averageValue == null) out.push(required(`${tp}.averageValue`, 'must specify a positive target averageValue'));
  } else if (first === 'resource' || first === 'containerResource') {
    if (!src.name) out.push(required(`${p}.${first}.name`, 'must specify a resource name'));
    else if (first === 'containerResource') out.push(...containerResourceNameCauses(String(src.name), `${p}.containerResource.name`));
    if (first === 'containerResource') {
      if (!src.container) out.push(required(`${p}.containerResource.container`, 'must specify a container'));
      else for (const m of dnsLabelErrors(String(src.container))) out.push(invalid(`${p}.containerResource.container`, src.container, m));
    }
    target(out, tp, tgt);
    if (tgt.averageUtilization == null && tgt.averageValue == null) out.push(required(`${tp}.averageUtilization`, 'must set either a target raw value or a target utilization'));
    if (tgt.averageUtilization != null && tgt.averageValue != null) out.push(forbidden(`${tp}.averageValue`, 'may not set both a target raw value and a target utilization'));
  }
  const expected = FIELD[m.type];
  if (expected && !isObj(m[expected])) out.push(required(`${p}.${expected}`, 'must populate information for the given metric source'));
  // the reference's switch over the type reports an unknown one a second time
  if (!expected) out.push(notSupported(`${p}.type`, m.type ?? '', SOURCES));
  if (present.length !== 1) for (const k of present) if (k !== expected) out.push(forbidden(`${p}.${k}`, 'must populate the given metric source only'));
}

function rules(out: FieldCause[], p: string, r: unknown): void {
  if (!isObj(r)) return;
  const w = r.stabilizationWindowSeconds;
  if (typeof w === 'number' && w < 0) out.push(invalid(`${p}.stabilizationWindowSeconds`, w, 'must be greater than or equal to zero'));
  if (typeof w === 'number' && w > 3600) out.push(invalid(`${p}.stabilizationWindowSeconds`, w, 'must be less than or equal to 3600'));
  if (r.selectPolicy != null && !['Disabled', 'Max', 'Min'].includes(r.selectPolicy)) out.push(notSupported(`${p}.selectPolicy`, r.selectPolicy, ['Disabled', 'Max', 'Min']));
  const policies = list(r.policies);
  if (!policies.length) out.push(required(`${p}.policies`, 'must specify at least one Policy'));
  policies.forEach((pol, i) => {
    const q = `${p}.policies[${i}]`;
    if (pol.type !== 'Pods' && pol.type !== 'Percent') out.push(notSupported(`${q}.type`, pol.type ?? '', ['Percent', 'Pods']));
    if (!(Number(pol.value) > 0)) out.push(invalid(`${q}.value`, pol.value ?? 0, 'must be greater than zero'));
    if (!(Number(pol.periodSeconds) > 0)) out.push(invalid(`${q}.periodSeconds`, pol.periodSeconds ?? 0, 'must be greater than zero'));
    if (Number(pol.periodSeconds) > 1800) out.push(invalid(`${q}.periodSeconds`, pol.periodSeconds, 'must be less than or equal to 1800'));
  });
}

export function validateHpa(obj: KObject, old: KObject | undefined, _brand: unknown, subresource?: string): FieldCause[] {
  const out: FieldCause[] = [];
  const o = asV2(obj);
  if (subresource === 'status') {
    for (const k of ['currentReplicas', 'desiredReplicas']) {
      const v = at(o, `status.${k}`);
      if (typeof v === 'number' && v < 0) out.push(invalid(`status.${k}`, v, 'must be greater than or equal to 0'));
    }
    return out;
  }
  const spec: J = isObj(o.spec) ? o.spec : {};
  // An object that already scales to zero may keep doing so.
  const lower = old && at(asV2(old), 'spec.minReplicas') === 0 ? 0 : 1;
  const min = spec.minReplicas;
  if (typeof min === 'number' && min < lower) out.push(invalid('spec.minReplicas', min, `must be greater than or equal to ${lower}`));
  const max = typeof spec.maxReplicas === 'number' ? spec.maxReplicas : 0;
  if (max < 1) out.push(invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (typeof min === 'number' && max < min) out.push(invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  const ref = isObj(spec.scaleTargetRef) ? spec.scaleTargetRef : {};
  pathSegment(out, 'spec.scaleTargetRef.kind', ref.kind);
  pathSegment(out, 'spec.scaleTargetRef.name', ref.name);
  const metrics = list(spec.metrics);
  metrics.forEach((m, i) => metric(out, `spec.metrics[${i}]`, m));
  if (min === 0 && !metrics.some((m) => m.type === 'Object' || m.type === 'External')) {
    out.push(forbidden('spec.metrics', 'must specify at least one Object or External metric to support scaling to zero replicas'));
  }
  if (isObj(spec.behavior)) {
    rules(out, 'spec.behavior.scaleUp', spec.behavior.scaleUp);
    rules(out, 'spec.behavior.scaleDown', spec.behavior.scaleDown);
  }
  return out;
}

// ---------------------------------------------------------------- table

const text = (v: unknown) => (v === undefined || v === null ? '' : String(v));

/** The TARGETS cell as the reference release's printer writes it: at most two, then "+ N more...". */
export function hpaTargets(o: KObject): string {
  const v2 = asV2(o);
  const specs = list(at(v2, 'spec.metrics'));
  const statuses = list(at(v2, 'status.currentMetrics'));
  if (!specs.length) return '<none>';
  const cells = specs.map((s, i) => {
    const st: J = statuses[i] ?? {};
    const cur = (k: string, f: string) => (isObj(st[k]) && isObj(st[k].current) && st[k].current[f] != null ? text(st[k].current[f]) : undefined);
    const tgt = (k: string): J => (isObj(s[k]) && isObj(s[k].target) ? s[k].target : {});
    switch (s.type) {
      case 'External':
      case 'Object': {
        const k = s.type === 'External' ? 'external' : 'object';
        const t = tgt(k);
        if (t.averageValue != null) return `${cur(k, 'averageValue') ?? '<unknown>'}/${text(t.averageValue)} (avg)`;
        return `${isObj(st[k]) ? text(at(st[k], 'current.value')) : '<unknown>'}/${text(t.value)}`;
      }
      case 'Pods':
        return `${isObj(st.pods) ? text(at(st.pods, 'current.averageValue')) : '<unknown>'}/${text(tgt('pods').averageValue)}`;
      case 'Resource':
      case 'ContainerResource': {
        const k = s.type === 'Resource' ? 'resource' : 'containerResource';
        const t = tgt(k);
        if (t.averageValue != null) return `${isObj(st[k]) ? text(at(st[k], 'current.averageValue')) : '<unknown>'}/${text(t.averageValue)}`;
        const u = cur(k, 'averageUtilization');
        return `${u !== undefined ? `${u}%` : '<unknown>'}/${text(t.averageUtilization)}%`;
      }
      default:
        return '<unknown type>';
    }
  });
  return cells.length > 2 ? `${cells.slice(0, 2).join(', ')} + ${cells.length - 2} more...` : cells.join(', ');
}

export function hpaColumns(age: TableColumn): TableColumn[] {
  const cell = (f: (o: J) => unknown) => f as TableColumn['cell'];
  return [
    { name: 'Reference', type: 'string', description: 'The scale target: Kind/Name.', cell: cell((o) => `${text(at(o, 'spec.scaleTargetRef.kind'))}/${text(at(o, 'spec.scaleTargetRef.name'))}`) },
    { name: 'Targets', type: 'string', description: 'Current and target values of each metric.', cell: cell((o) => hpaTargets(o as KObject)) },
    { name: 'MinPods', type: 'string', description: 'Lower limit of the number of pods.', cell: cell((o) => { const m = at(o, 'spec.minReplicas'); return m == null ? '<unset>' : show(m); }) },
    // numbers in the cells; the reference's printer declares these columns strings
    { name: 'MaxPods', type: 'string', description: 'Upper limit of the number of pods.', cell: cell((o) => Number(at(o, 'spec.maxReplicas') ?? 0)) },
    { name: 'Replicas', type: 'string', description: 'Current number of replicas.', cell: cell((o) => Number(at(o, 'status.currentReplicas') ?? 0)) },
    age,
  ];
}
