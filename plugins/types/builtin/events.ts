// Event validation, per the version of the request, as the reference's: every event passes the
// legacy rules (an event with an eventTime names its reporter, action and reason); one created or
// updated through events.<domain>/v1 also passes the strict ones (eventTime required, no deprecated
// fields, a series of at least 2, immutable content). The reference validates the stored (core) form,
// so causes name core fields (count, message) whichever version was written.
import type { Brand } from '../../../kernel/contracts/brand.js';
import type { FieldCause, KObject } from '../../../kernel/contracts/index.js';
import { validateQualifiedName } from '../../../kernel/api/validation.js';
import { canon, invalid, required } from './validation/causes.js';
import { eventToCore } from './conversions/events.js';
import { isObj, type J } from '../../lib/json.js';

const INSTANCE_MAX = 128;
const ACTION_MAX = 128;
const REASON_MAX = 128;
const NOTE_MAX = 1024;

const str = (v: unknown) => (typeof v === 'string' ? v : '');
const unset = (t: unknown) => t === undefined || t === null || t === '';
const tooLong = (field: string, max: number) => invalid(field, '', `can have at most ${max} characters`);

function legacy(e: J, reporterField: string, brand: Brand): FieldCause[] {
  const out: FieldCause[] = [];
  const ns = str(e.metadata?.namespace);
  const involvedNs = str(e.involvedObject?.namespace);
  const mismatch = () => out.push(invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
  if (unset(e.eventTime)) {
    if (!involvedNs ? ns !== '' && ns !== 'default' : ns !== involvedNs) mismatch();
    return out;
  }
  if (!involvedNs && ns !== 'default' && ns !== brand.systemNamespace) mismatch();
  const reporter = str(e.reportingComponent);
  if (!reporter) out.push(required(reporterField));
  out.push(...validateQualifiedName(reporter, reporterField));
  const checks: [string, number][] = [['reportingInstance', INSTANCE_MAX], ['action', ACTION_MAX], ['reason', REASON_MAX]];
  for (const [f, max] of checks) {
    if (!str(e[f])) out.push(required(f));
    if (str(e[f]).length > max) out.push(tooLong(f, max));
  }
  if (str(e.message).length > NOTE_MAX) out.push(tooLong('message', NOTE_MAX));
  return out;
}

function series(e: J): FieldCause[] {
  if (!isObj(e.series)) return [];
  const out: FieldCause[] = [];
  if (!(Number(e.series.count ?? 0) >= 2)) out.push(invalid('series.count', '', 'should be at least 2'));
  if (unset(e.series.lastObservedTime)) out.push(required('series.lastObservedTime'));
  return out;
}

/** Core v1 writes: the legacy rules only (backwards compatibility). */
export function validateCoreEvent(o: KObject, _old: KObject | undefined, brand: Brand): FieldCause[] {
  return legacy(o as J, 'reportingComponent', brand);
}

/** Microseconds of an RFC 3339 time, for the reference's tolerance of sub-microsecond eventTime changes. */
function micros(t: unknown): string {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(.*)$/.exec(str(t));
  return m ? `${Date.parse(m[1] + m[3])}.${(m[2] ?? '').padEnd(6, '0').slice(0, 6)}` : str(t);
}

/** events.<domain>/v1 writes: the legacy and the strict rules, on the core form. */
export function validateEventsV1(o: KObject, old: KObject | undefined, brand: Brand): FieldCause[] {
  const e = eventToCore(o) as J;
  const out = legacy(e, 'reportingController', brand);
  if (!old) {
    out.push(...series(e));
    if (unset(e.eventTime)) out.push(required('eventTime'));
    if (e.type !== 'Normal' && e.type !== 'Warning') out.push(invalid('type', '', `has invalid value: ${str(e.type)}`));
    if (!unset(e.firstTimestamp)) out.push(invalid('firstTimestamp', '', 'needs to be unset'));
    if (!unset(e.lastTimestamp)) out.push(invalid('lastTimestamp', '', 'needs to be unset'));
    if (Number(e.count ?? 0) !== 0) out.push(invalid('count', '', 'needs to be unset'));
    if (str(e.source?.component) || str(e.source?.host)) out.push(invalid('source', '', 'needs to be unset'));
    return out;
  }
  const was = eventToCore(old) as J; // the stored object, in the request's version
  if (canon(e.series ?? null) !== canon(was.series ?? null)) out.push(...series(e));
  const same = (a: unknown, b: unknown) => canon(a ?? null) === canon(b ?? null);
  const fields = ['involvedObject', 'reason', 'message', 'source', 'firstTimestamp', 'lastTimestamp', 'count', 'type'];
  for (const f of fields) if (!same(e[f], was[f])) out.push(invalid(f, e[f] ?? null, 'field is immutable'));
  if (micros(e.eventTime) !== micros(was.eventTime)) out.push(invalid('eventTime', e.eventTime ?? null, 'field is immutable'));
  for (const f of ['action', 'related', 'reportingComponent', 'reportingInstance']) {
    if (!same(e[f], was[f])) out.push(invalid(f === 'reportingComponent' ? 'reportingController' : f, e[f] ?? null, 'field is immutable'));
  }
  return out;
}
