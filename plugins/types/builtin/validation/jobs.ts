// The batch types' rules: Job and CronJob (whose job template is a job spec).
import type { FieldCause, KObject } from '../../../../kernel/contracts/index.js';
import { at, isObj, type J } from '../../../lib/json.js';
import { invalid, nonNegative, oneOf, required, type Validator } from '../causes.js';
import { controllerCauses } from './workloads.js';

function jobSpecCauses(spec: J, p: string, old: unknown): FieldCause[] {
  const out: FieldCause[] = [];
  for (const k of ['parallelism', 'completions', 'backoffLimit']) nonNegative(out, `${p}.${k}`, spec[k]);
  oneOf(out, `${p}.completionMode`, spec.completionMode, ['NonIndexed', 'Indexed']);
  if (spec.completionMode === 'Indexed' && (spec.completions === undefined || spec.completions === null)) {
    out.push(required(`${p}.completions`, 'when completion mode is Indexed'));
  }
  // A job's pods run to completion: the template needs OnFailure or Never (defaulting gave it Always).
  out.push(...controllerCauses(spec, p, { restart: ['OnFailure', 'Never'], selectorOptional: true }, old));
  return out;
}

/** A cron schedule: five fields, or one of the @ descriptors the reference's parser accepts. */
function scheduleError(s: string): string | undefined {
  const t = s.trim();
  if (t.startsWith('@')) return /^@(yearly|annually|monthly|weekly|daily|midnight|hourly|every \S+)$/.test(t) ? undefined : `unrecognized descriptor: ${t}`;
  const f = t.replace(/^(CRON_)?TZ=\S+\s+/, '').split(/\s+/).filter(Boolean);
  return f.length === 5 ? undefined : `expected exactly 5 fields, found ${f.length}: [${f.join(' ')}]`;
}

function cronJob(o: KObject, old: KObject | undefined): FieldCause[] {
  const out: FieldCause[] = [];
  const name = o.metadata?.name;
  // Job names get an 11-character suffix; the reference caps cron job names to keep them labels.
  if (typeof name === 'string' && name.length > 52) out.push(invalid('metadata.name', name, 'must be no more than 52 characters'));
  const spec = isObj(o.spec) ? o.spec : {};
  if (typeof spec.schedule !== 'string' || spec.schedule === '') out.push(required('spec.schedule'));
  else {
    const err = scheduleError(spec.schedule);
    if (err) out.push(invalid('spec.schedule', spec.schedule, err));
  }
  oneOf(out, 'spec.concurrencyPolicy', spec.concurrencyPolicy, ['Allow', 'Forbid', 'Replace'], true);
  for (const k of ['startingDeadlineSeconds', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit']) nonNegative(out, `spec.${k}`, spec[k]);
  const jt = at(spec, 'jobTemplate.spec');
  out.push(...jobSpecCauses(isObj(jt) ? jt : {}, 'spec.jobTemplate.spec', at(old, 'spec.jobTemplate.spec')));
  return out;
}

/** Validators by row key (see catalog.ts rowKey). */
export const JOB_VALIDATORS: Record<string, Validator> = {
  'jobs.batch': (o, old) => jobSpecCauses(isObj(o.spec) ? o.spec : {}, 'spec', old?.spec),
  'cronjobs.batch': cronJob,
};
