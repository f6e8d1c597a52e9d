// The batch types' rules: Job and CronJob (whose job template is a job spec), as the reference's
// batch validation and strategies run them. A Job update is validated as a new object and then as
// an update, which validates the spec again: on update each spec cause is reported twice. A
// running Job's pod template is immutable.
import type { FieldCause, KObject } from '../../../../kernel/contracts/index.js';
import { isDNS1123Label, validateLabelSelector, validateQualifiedName } from '../../../../kernel/api/validation.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { canon, duplicate, goMap, goSelector, invalid, labelsOf, nonNegative, notSupported, required, show, type Validator } from './causes.js';
import { labelsMismatch, parseSelector, podTemplateSpecCauses } from './workloads.js';
import type { Brand } from '../../../../kernel/contracts/brand.js';

const obj = (v: unknown): J => (isObj(v) ? v : {});
const isSet = (v: unknown) => v !== undefined && v !== null;
/** The prefix of the batch labels (batch.kubernetes.io for the kubernetes brand). */
const batchDomain = (brand: Brand) => `batch.${brand.keyDomain}`;
const quoted = (vs: string[]) => `[${vs.map((v) => JSON.stringify(v)).join(' ')}]`;

// ---------------------------------------------------------------- pod failure policy

const ACTIONS = ['Count', 'FailIndex', 'FailJob', 'Ignore'];
const EXIT_OPERATORS = ['In', 'NotIn'];
const CONDITION_STATUSES = ['False', 'True', 'Unknown'];

function onExitCodesCauses(r: J, p: string, containers: Set<unknown>): FieldCause[] {
  const out: FieldCause[] = [];
  if (!r.operator) out.push(required(`${p}.operator`, `valid values: ${quoted(EXIT_OPERATORS)}`));
  else if (!EXIT_OPERATORS.includes(r.operator)) out.push(notSupported(`${p}.operator`, r.operator, EXIT_OPERATORS));
  if (isSet(r.containerName) && !containers.has(r.containerName)) out.push(invalid(`${p}.containerName`, r.containerName, 'must be one of the container or initContainer names in the pod template'));
  const values: unknown[] = Array.isArray(r.values) ? r.values : [];
  if (!values.length) out.push(invalid(`${p}.values`, values, 'at least one value is required'));
  const seen = new Set<unknown>();
  let ordered = true;
  values.forEach((v, j) => {
    if (r.operator === 'In' && v === 0) out.push(invalid(`${p}.values[${j}]`, v, 'must not be 0 for the In operator'));
    if (seen.has(v)) out.push(duplicate(`${p}.values[${j}]`, v));
    else seen.add(v);
    if (j > 0 && (values[j - 1] as number) > (v as number)) ordered = false;
  });
  if (!ordered) out.push(invalid(`${p}.values`, values, 'must be ordered'));
  return out;
}

function podFailurePolicyCauses(spec: J, p: string): FieldCause[] {
  const tspec = obj(obj(spec.template).spec);
  const containers = new Set<unknown>([...list(tspec.containers), ...list(tspec.initContainers)].map((c) => c.name));
  const out: FieldCause[] = [];
  list(obj(spec.podFailurePolicy).rules).forEach((rule, i) => {
    const rp = `${p}.rules[${i}]`;
    if (!rule.action) out.push(required(`${rp}.action`, `valid values: ${quoted(ACTIONS)}`));
    else if (rule.action === 'FailIndex') {
      if (!isSet(spec.backoffLimitPerIndex)) out.push(invalid(`${rp}.action`, rule.action, 'requires the backoffLimitPerIndex to be set'));
    } else if (!ACTIONS.includes(rule.action)) out.push(notSupported(`${rp}.action`, rule.action, ACTIONS));
    const onExit = isObj(rule.onExitCodes), conds = list(rule.onPodConditions);
    if (onExit) out.push(...onExitCodesCauses(rule.onExitCodes, `${rp}.onExitCodes`, containers));
    conds.forEach((c, j) => {
      const cp = `${rp}.onPodConditions[${j}]`;
      out.push(...validateQualifiedName(typeof c.type === 'string' ? c.type : '', `${cp}.type`));
      if (!c.status) out.push(required(`${cp}.status`, `valid values: ${quoted(CONDITION_STATUSES)}`));
      else if (!CONDITION_STATUSES.includes(c.status)) out.push(notSupported(`${cp}.status`, c.status, CONDITION_STATUSES));
    });
    if (onExit && conds.length) out.push(invalid(rp, undefined, 'specifying both OnExitCodes and OnPodConditions is not supported', ''));
    if (!onExit && !conds.length) out.push(invalid(rp, undefined, 'specifying one of OnExitCodes and OnPodConditions is required', ''));
  });
  return out;
}

// ---------------------------------------------------------------- job specs

const MAX_INDEXED_PARALLELISM = 100000;

/** validateJobSpec: counts, completion mode, failure policy, the pod template and its restart policy (shared with cron jobs' templates). */
function jobSpecCauses(spec: J, p: string): FieldCause[] {
  const out: FieldCause[] = [];
  for (const k of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished', 'backoffLimitPerIndex', 'maxFailedIndexes']) nonNegative(out, `${p}.${k}`, spec[k]);
  if (isSet(spec.maxFailedIndexes) && !isSet(spec.backoffLimitPerIndex)) out.push(required(`${p}.backoffLimitPerIndex`, 'when maxFailedIndexes is specified'));
  const mode = spec.completionMode;
  if (isSet(mode)) {
    if (mode !== 'NonIndexed' && mode !== 'Indexed') out.push(notSupported(`${p}.completionMode`, mode, ['NonIndexed', 'Indexed']));
    if (mode === 'Indexed') {
      if (!isSet(spec.completions)) out.push(required(`${p}.completions`, 'when completion mode is Indexed'));
      if (typeof spec.parallelism === 'number' && spec.parallelism > MAX_INDEXED_PARALLELISM) out.push(invalid(`${p}.parallelism`, spec.parallelism, `must be less than or equal to ${MAX_INDEXED_PARALLELISM} when completion mode is Indexed`));
    }
  }
  if (!isSet(mode) || mode === 'NonIndexed') {
    for (const k of ['backoffLimitPerIndex', 'maxFailedIndexes']) if (isSet(spec[k])) out.push(invalid(`${p}.${k}`, spec[k], 'requires indexed completion mode'));
  }
  if (isSet(spec.podFailurePolicy)) out.push(...podFailurePolicyCauses(spec, `${p}.podFailurePolicy`));
  const tpl = obj(spec.template);
  out.push(...podTemplateSpecCauses(tpl, `${p}.template`));
  // Defaulting turned an unset restart policy into Always, which a job's pods may not use.
  const rp = obj(tpl.spec).restartPolicy ?? '';
  const rpPath = `${p}.template.spec.restartPolicy`;
  if (rp === 'Always' || rp === '') out.push(required(rpPath, 'valid values: "OnFailure", "Never"'));
  else if (rp !== 'OnFailure' && rp !== 'Never') out.push(notSupported(rpPath, rp, ['OnFailure', 'Never']));
  else if (isSet(spec.podFailurePolicy) && rp !== 'Never') out.push(invalid(rpPath, rp, 'only "Never" is supported when podFailurePolicy is specified'));
  return out;
}

/** ValidateJobSpec: validateJobSpec plus a selector that must select the template's labels. */
function jobSpecWithSelectorCauses(spec: J): FieldCause[] {
  const out = jobSpecCauses(spec, 'spec');
  const sel = spec.selector;
  if (!isSet(sel)) out.push(required('spec.selector'));
  else out.push(...validateLabelSelector(sel, 'spec.selector'));
  const labels = obj(obj(spec.template).metadata).labels;
  if (labelsMismatch(parseSelector(sel), labels)) {
    out.push(invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`', goMap(labels)));
  }
  return out;
}

/** validateGeneratedSelector: a generated selector's labels are on the template and select this job. */
function generatedSelectorCauses(o: KObject, brand: Brand, prefixed: boolean): FieldCause[] {
  const spec = obj(o.spec);
  if (spec.manualSelector === true || !isSet(spec.selector)) return [];
  const meta = obj(o.metadata);
  const uid = String(meta.uid ?? ''), name = String(meta.name ?? '');
  const out: FieldCause[] = [];
  if (!uid) out.push(required('metadata.uid'));
  const labels = labelsOf(obj(obj(spec.template).metadata).labels);
  const d = batchDomain(brand);
  const expected: Record<string, string> = { 'controller-uid': uid, 'job-name': name };
  if (prefixed) Object.assign(expected, { [`${d}/controller-uid`]: uid, [`${d}/job-name`]: name });
  for (const [k, v] of Object.entries(expected)) {
    const f = `spec.template.metadata.labels[${k}]`;
    if (!(k in labels)) out.push(required(f, `must be '${v}'`));
    else if (labels[k] !== v) out.push(invalid(f, labels, `must be '${v}'`, goMap(labels)));
  }
  if (labelsMismatch(parseSelector(spec.selector), expected)) out.push(invalid('spec.selector', spec.selector, '`selector` not auto-generated', goSelector(obj(spec.selector))));
  return out;
}

/** ValidateJob: the generated selector, the spec, and room in the name for the last index's pod hostname. */
function jobCauses(o: KObject, brand: Brand, prefixed: boolean): FieldCause[] {
  const spec = obj(o.spec);
  const out = [...generatedSelectorCauses(o, brand, prefixed), ...jobSpecWithSelectorCauses(spec)];
  if (spec.completionMode === 'Indexed' && typeof spec.completions === 'number' && spec.completions > 0) {
    const name = String(o.metadata?.name ?? '');
    const host = `${name}-${spec.completions - 1}`;
    if (isDNS1123Label(host).length) out.push(invalid('metadata.name', name, `will not able to create pod with invalid DNS label: ${host}`));
  }
  return out;
}

const same = (a: unknown, b: unknown) => canon(a ?? null) === canon(b ?? null);
const immutable = (f: string, v: unknown, old: unknown): FieldCause[] => (same(v, old) ? [] : [invalid(f, v, 'field is immutable', isObj(v) ? goSelector(v) : show(v))]);

/**
 * The template of a job is immutable, except that a suspended job that never started may change
 * its scheduling directives (node affinity, node selector, tolerations, scheduling gates) and its labels and annotations.
 */
function templateUpdateCauses(spec: J, oldSpec: J, mutableScheduling: boolean): FieldCause[] {
  const tpl = obj(spec.template);
  let oldTpl = obj(oldSpec.template);
  if (mutableScheduling) {
    oldTpl = structuredClone(oldTpl);
    const ts = obj(tpl.spec), os = (oldTpl.spec = obj(oldTpl.spec));
    const aff = ts.affinity, oldAff = os.affinity;
    if (!isSet(aff) && isSet(oldAff)) {
      const rest = { ...obj(oldAff) };
      delete rest.nodeAffinity;
      if (Object.keys(rest).length) os.affinity = rest; else delete os.affinity;
    } else if (isSet(aff)) os.affinity = { ...obj(oldAff), nodeAffinity: obj(aff).nodeAffinity };
    const take = (to: J, from: J, k: string) => { if (from[k] === undefined) delete to[k]; else to[k] = from[k]; };
    for (const k of ['nodeSelector', 'tolerations', 'schedulingGates']) take(os, ts, k);
    const meta = obj(tpl.metadata), om = (oldTpl.metadata = obj(oldTpl.metadata));
    for (const k of ['labels', 'annotations']) take(om, meta, k);
  }
  return same(tpl, oldTpl) ? [] : [invalid('spec.template', tpl, 'field is immutable', '')];
}

/** ValidateJobSpecUpdate: the spec again, and what may not change. */
function jobUpdateCauses(o: KObject, old: KObject): FieldCause[] {
  const spec = obj(o.spec), oldSpec = obj(old.spec);
  const out = jobSpecWithSelectorCauses(spec);
  // Completions of an indexed job may change, in step with parallelism (elastic indexed jobs).
  if (!same(spec.completions, oldSpec.completions)) {
    if (spec.completionMode !== 'Indexed') out.push(...immutable('spec.completions', spec.completions, oldSpec.completions));
    else if (isSet(spec.completions) && spec.completions !== spec.parallelism) out.push(invalid('spec.completions', spec.completions, 'can only be modified in tandem with spec.parallelism'));
  }
  out.push(...immutable('spec.selector', spec.selector, oldSpec.selector));
  const mutableScheduling = oldSpec.suspend === true && !isSet(obj(old.status).startTime);
  out.push(...templateUpdateCauses(spec, oldSpec, mutableScheduling));
  out.push(...immutable('spec.completionMode', spec.completionMode, oldSpec.completionMode));
  out.push(...immutable('spec.podFailurePolicy', spec.podFailurePolicy, oldSpec.podFailurePolicy));
  out.push(...immutable('spec.backoffLimitPerIndex', spec.backoffLimitPerIndex, oldSpec.backoffLimitPerIndex));
  return out;
}

const job: Validator = (o, old, brand, subresource) => {
  if (subresource) return []; // status: the spec is the stored one
  if (!old) return jobCauses(o, brand, true);
  // Jobs stored before the prefixed labels existed are not held to them.
  const oldLabels = labelsOf(obj(obj(obj(old.spec).template).metadata).labels);
  const d = batchDomain(brand);
  const prefixed = `${d}/job-name` in oldLabels && `${d}/controller-uid` in oldLabels;
  return [...jobCauses(o, brand, prefixed), ...jobUpdateCauses(o, old)];
};

// ---------------------------------------------------------------- cron jobs

/** A cron schedule: five fields, or one of the @ descriptors the reference's parser accepts. */
function scheduleError(s: string): string | undefined {
  const t = s.trim();
  if (t.startsWith('@')) return /^@(yearly|annually|monthly|weekly|daily|midnight|hourly|every \S+)$/.test(t) ? undefined : `unrecognized descriptor: ${t}`;
  const f = t.replace(/^(CRON_)?TZ=\S+\s+/, '').split(/\s+/).filter(Boolean);
  if (f.length !== 5) return `expected exactly 5 fields, found ${f.length}: [${f.join(' ')}]`;
  for (let i = 0; i < 5; i++) {
    for (const expr of f[i]!.split(',').filter(Boolean)) {
      const err = cronRangeError(expr, CRON_FIELDS[i]!);
      if (err) return err;
    }
  }
  return undefined;
}

/** Each field's bounds and names, in order: minute, hour, day of month, month, day of week. */
const CRON_FIELDS: { min: number; max: number; names?: Record<string, number> }[] = [
  { min: 0, max: 59 }, { min: 0, max: 23 }, { min: 1, max: 31 },
  { min: 1, max: 12, names: Object.fromEntries(['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'].map((m, i) => [m, i + 1])) },
  { min: 0, max: 6, names: Object.fromEntries(['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'].map((d, i) => [d, i])) },
];

/** Go's strconv.Atoi then the parser's sign check, with their messages. */
function cronInt(expr: string): number | string {
  if (!/^[+-]?\d+$/.test(expr)) return `failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`;
  const n = Number(expr);
  if (!Number.isSafeInteger(n) || Math.abs(n) > 2 ** 63 - 1) return `failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: value out of range`;
  return n < 0 ? `negative number (${n}) not allowed: ${expr}` : n;
}

/** One comma-separated part of a field (`*`, `a`, `a-b`, each with an optional `/step`), as the reference's cron parser reads it. */
function cronRangeError(expr: string, r: (typeof CRON_FIELDS)[number]): string | undefined {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = rangeAndStep[0]!.split('-');
  const value = (x: string) => r.names?.[x.toLowerCase()] ?? cronInt(x);
  let start: number, end: number;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') [start, end] = [r.min, r.max];
  else {
    const a = value(lowAndHigh[0]!);
    if (typeof a === 'string') return a;
    start = end = a;
    if (lowAndHigh.length === 2) {
      const b = value(lowAndHigh[1]!);
      if (typeof b === 'string') return b;
      end = b;
    } else if (lowAndHigh.length > 2) return `too many hyphens: ${expr}`;
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    const n = cronInt(rangeAndStep[1]!);
    if (typeof n === 'string') return n;
    step = n;
    if (lowAndHigh.length === 1) end = r.max; // "N/step" is "N-max/step"
  } else if (rangeAndStep.length > 2) return `too many slashes: ${expr}`;
  if (start < r.min) return `beginning of range (${start}) below minimum (${r.min}): ${expr}`;
  if (end > r.max) return `end of range (${end}) above maximum (${r.max}): ${expr}`;
  if (start > end) return `beginning of range (${start}) beyond end of range (${end}): ${expr}`;
  if (step === 0) return `step of range should be a positive number: ${expr}`;
  return undefined;
}

const CONCURRENCY = ['Allow', 'Forbid', 'Replace'];

/** One part of an IANA zone name as the reference allows it (letters, digits, '.', '-', '_', '+'; at most 14). */
const ZONE_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

/** Whether this runtime's time zone database knows the zone (as Go's LoadLocation would). */
function knownZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** validateTimeZone: a non-empty IANA name that is not "Local". */
function timeZoneCauses(tz: unknown): FieldCause[] {
  if (!isSet(tz)) return [];
  const f = 'spec.timeZone';
  const s = String(tz);
  if (s === '') return [invalid(f, s, 'timeZone must be nil or non-empty string')];
  if (s.split('/').some((part) => part === '.' || part === '..' || part.startsWith('-') || !ZONE_PART.test(part))) return [invalid(f, s, `unknown time zone ${s}`)];
  if (s.toLowerCase() === 'local') return [invalid(f, s, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones')];
  return knownZone(s) ? [] : [invalid(f, s, `unknown time zone ${s}`)];
}

function cronJobSpecCauses(spec: J, oldSpec: J | undefined): FieldCause[] {
  const out: FieldCause[] = [];
  if (typeof spec.schedule !== 'string' || spec.schedule === '') out.push(required('spec.schedule'));
  else {
    const err = scheduleError(spec.schedule);
    if (err) out.push(invalid('spec.schedule', spec.schedule, err));
    if (spec.schedule.includes('TZ') && isSet(spec.timeZone)) out.push(invalid('spec.schedule', spec.schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
  }
  nonNegative(out, 'spec.startingDeadlineSeconds', spec.startingDeadlineSeconds);
  // A zone stored before this runtime's database lost it stays valid while unchanged.
  if (!oldSpec || oldSpec.timeZone !== spec.timeZone) out.push(...timeZoneCauses(spec.timeZone));
  const cp = spec.concurrencyPolicy;
  if (!cp) out.push(required('spec.concurrencyPolicy'));
  else if (!CONCURRENCY.includes(cp)) out.push(notSupported('spec.concurrencyPolicy', cp, CONCURRENCY));
  // ValidateJobTemplateSpec: the job spec, whose selector the cron job controller generates.
  const js = obj(obj(spec.jobTemplate).spec);
  out.push(...jobSpecCauses(js, 'spec.jobTemplate.spec'));
  if (isSet(js.selector)) out.push(invalid('spec.jobTemplate.spec.selector', js.selector, '`selector` will be auto-generated', isObj(js.selector) ? goSelector(js.selector) : show(js.selector)));
  if (js.manualSelector === true) out.push(notSupported('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']));
  nonNegative(out, 'spec.successfulJobsHistoryLimit', spec.successfulJobsHistoryLimit);
  nonNegative(out, 'spec.failedJobsHistoryLimit', spec.failedJobsHistoryLimit);
  return out;
}

function cronJob(o: KObject, old: KObject | undefined, _brand: Brand, subresource?: string): FieldCause[] {
  if (subresource) return [];
  const out = cronJobSpecCauses(obj(o.spec), old ? obj(old.spec) : undefined);
  const name = o.metadata?.name;
  // Job names get an 11-character suffix; on create the reference caps cron job names to keep them labels.
  if (!old && typeof name === 'string' && name.length > 52) out.push(invalid('metadata.name', name, 'must be no more than 52 characters'));
  return out;
}

/** Validators by row key (see catalog.ts rowKey). */
export const JOB_VALIDATORS: Record<string, Validator> = {
  'jobs.batch': job,
  'cronjobs.batch': cronJob,
};
