// The HorizontalPodAutoscaler strategy for writes through autoscaling/v1, where part of the spec
// and of the status travels in annotations: as the reference's strategies copy the stored spec into
// a status write and the stored status into a main-resource write (on its internal form, where those
// annotations are fields), a v1 status write keeps the stored spec annotations and a v1
// main-resource write keeps the stored status annotations, whatever the client sent.
import type { TypeStrategy } from '../../../../kernel/contracts/index.js';
import { HPA_ANNOTATIONS } from '../conversions/autoscaling.js';

const SPEC_OWNED = [HPA_ANNOTATIONS.metrics, HPA_ANNOTATIONS.behavior];
const STATUS_OWNED = [HPA_ANNOTATIONS.currentMetrics, HPA_ANNOTATIONS.conditions];

export const hpaStrategy: TypeStrategy = {
  beginUpdate(obj, old, ctx) {
    if (obj.apiVersion !== 'autoscaling/v1' || (ctx.subresource && ctx.subresource !== 'status')) return;
    const keep = ctx.subresource === 'status' ? SPEC_OWNED : STATUS_OWNED;
    const md = (obj.metadata ??= {});
    const ann: Record<string, string> = { ...(md.annotations ?? {}) };
    const was = old.metadata?.annotations ?? {};
    for (const k of keep) {
      if (k in was) ann[k] = was[k];
      else delete ann[k];
    }
    if (Object.keys(ann).length) md.annotations = ann;
    else delete md.annotations;
  },
};
