// The workload controllers' rules (ReplicationController, ReplicaSet, Deployment, StatefulSet,
// DaemonSet) and PodTemplate: selectors, the pod template and each kind's own spec fields.
import type { FieldCause } from '../../../../kernel/contracts/index.js';
import { selectorMatches } from '../../../lib/label-selector.js';
import { at, isObj, list, type J } from '../../../lib/json.js';
import { canon, forbidden, goMap, goSelector, invalid, labelsOf, nonNegative, notSupported, oneOf, required, selectorCauses, show, type Validator } from '../causes.js';
import { podSpecCauses } from './pod.js';

const RESTART = ['Always', 'OnFailure', 'Never'];

export interface WorkloadRule {
  /** Wording of the reference's "empty selector" message for this kind; absent: an empty selector is allowed. */
  emptySelector?: string;
  /** Restart policies its pod template may use. */
  restart: string[];
  /** The selector is a plain label map (replication controllers) rather than a label selector. */
  mapSelector?: boolean;
  /** The selector may be absent (jobs: the server generates it). */
  selectorOptional?: boolean;
}

/** Selector, template labels and pod template of a controller spec found at `p`. */
export function controllerCauses(spec: J, p: string, rule: WorkloadRule, oldSpec: unknown): FieldCause[] {
  const out: FieldCause[] = [];
  const sel = spec.selector;
  let selector: J | undefined; // as a label selector, when usable for matching
  if (sel === undefined || sel === null || (rule.mapSelector && !Object.keys(labelsOf(sel)).length)) {
    if (!rule.selectorOptional) out.push(required(`${p}.selector`));
  } else if (rule.mapSelector) {
    selector = { matchLabels: sel };
  } else if (isObj(sel)) {
    const causes = selectorCauses(sel, `${p}.selector`);
    out.push(...causes);
    if (Object.keys(labelsOf(sel.matchLabels)).length + list(sel.matchExpressions).length === 0) {
      if (rule.emptySelector) out.push(invalid(`${p}.selector`, sel, rule.emptySelector, goSelector(sel)));
    } else if (!causes.length) selector = sel;
  }
  // Selectors are immutable (apps/v1 and batch/v1).
  if (isObj(oldSpec) && oldSpec.selector !== undefined && !rule.mapSelector && canon(oldSpec.selector) !== canon(sel)) {
    out.push(invalid(`${p}.selector`, sel, 'field is immutable', isObj(sel) ? goSelector(sel) : show(sel)));
  }
  const tpl = spec.template;
  if (!isObj(tpl)) {
    out.push(required(`${p}.template`));
    return out;
  }
  const labels = at(tpl, 'metadata.labels');
  if (selector && !selectorMatches(selector, labelsOf(labels))) {
    out.push(invalid(`${p}.template.metadata.labels`, labels, '`selector` does not match template `labels`', goMap(labels)));
  }
  out.push(...podSpecCauses(tpl.spec, `${p}.template.spec`, false));
  const rp = at(tpl, 'spec.restartPolicy');
  if (RESTART.includes(rp as string) && !rule.restart.includes(rp as string)) out.push(notSupported(`${p}.template.spec.restartPolicy`, rp, rule.restart));
  return out;
}

function workload(rule: WorkloadRule, more?: (spec: J, out: FieldCause[]) => void): Validator {
  return (o, old) => {
    const spec = isObj(o.spec) ? o.spec : {};
    const out: FieldCause[] = [];
    nonNegative(out, 'spec.replicas', spec.replicas);
    nonNegative(out, 'spec.revisionHistoryLimit', spec.revisionHistoryLimit);
    nonNegative(out, 'spec.minReadySeconds', spec.minReadySeconds);
    out.push(...controllerCauses(spec, 'spec', rule, old?.spec));
    more?.(spec, out);
    return out;
  };
}

const ALWAYS = ['Always'];

function deploymentMore(spec: J, out: FieldCause[]): void {
  const st = isObj(spec.strategy) ? spec.strategy : {};
  oneOf(out, 'spec.strategy.type', st.type, ['Recreate', 'RollingUpdate'], true);
  if (st.type === 'Recreate' && st.rollingUpdate != null) out.push(forbidden('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'"));
  const ru = isObj(st.rollingUpdate) ? st.rollingUpdate : {};
  const zero = (v: unknown) => v === 0 || v === '0%';
  if (zero(ru.maxUnavailable) && zero(ru.maxSurge)) out.push(invalid('spec.strategy.rollingUpdate.maxUnavailable', ru.maxUnavailable, 'may not be 0 when `maxSurge` is 0'));
  nonNegative(out, 'spec.progressDeadlineSeconds', spec.progressDeadlineSeconds);
  if (typeof spec.progressDeadlineSeconds === 'number' && spec.progressDeadlineSeconds <= (spec.minReadySeconds ?? 0)) {
    out.push(invalid('spec.progressDeadlineSeconds', spec.progressDeadlineSeconds, 'must be greater than minReadySeconds'));
  }
}

/** Validators by row key (see catalog.ts rowKey). */
export const WORKLOAD_VALIDATORS: Record<string, Validator> = {
  podtemplates: (o) => (isObj(o.template) ? podSpecCauses(o.template.spec, 'template.spec', false) : [required('template')]),
  replicationcontrollers: workload({ restart: ALWAYS, mapSelector: true }),
  'deployments.apps': workload({ emptySelector: 'empty selector is invalid for deployment', restart: ALWAYS }, deploymentMore),
  'replicasets.apps': workload({ emptySelector: 'empty selector is invalid for deployment', restart: ALWAYS }),
  'statefulsets.apps': workload({ emptySelector: 'empty selector is invalid for statefulset', restart: ALWAYS }, (spec, out) => {
    oneOf(out, 'spec.podManagementPolicy', spec.podManagementPolicy, ['OrderedReady', 'Parallel'], true);
    oneOf(out, 'spec.updateStrategy.type', at(spec, 'updateStrategy.type'), ['OnDelete', 'RollingUpdate'], true);
  }),
  'daemonsets.apps': workload({ emptySelector: 'empty selector is not valid for daemonset.', restart: ALWAYS }, (spec, out) => {
    oneOf(out, 'spec.updateStrategy.type', at(spec, 'updateStrategy.type'), ['OnDelete', 'RollingUpdate'], true);
  }),
};
