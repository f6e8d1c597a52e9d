// events.<domain>/v1 Events are core v1 Events, stored once (the reference's cohabiting resources):
// the events group renames the core fields (message -> note, involvedObject -> regarding, source ->
// deprecatedSource, firstTimestamp/lastTimestamp/count -> deprecated*, reportingComponent ->
// reportingController) and keeps the rest (reason, type, action, eventTime, series, related,
// reportingInstance). Fields either version always carries, even empty, are written as the
// reference's encoder writes its zero values ({} for an object, null for a time, "" for a string),
// so an event read through the other group is the reference's JSON.
import type { KObject } from '../../../../kernel/contracts/index.js';
import type { ResourceConversion } from './conversion.js';

type J = Record<string, unknown>;

/** Copies `v` under `k` unless it is absent or the zero value the reference omits (omitempty). */
function put(out: J, k: string, v: unknown): void {
  if (v === undefined || v === null || v === '' || v === 0) return;
  out[k] = v;
}

/** An events.<domain>/v1 Event as a core v1 Event. */
export function eventToCore(o: KObject): KObject {
  const e = o as J;
  const out: J = { apiVersion: 'v1', kind: 'Event', metadata: o.metadata, involvedObject: e.regarding ?? {} };
  put(out, 'reason', e.reason);
  put(out, 'message', e.note);
  out.source = e.deprecatedSource ?? {};
  out.firstTimestamp = e.deprecatedFirstTimestamp ?? null;
  out.lastTimestamp = e.deprecatedLastTimestamp ?? null;
  put(out, 'count', e.deprecatedCount);
  put(out, 'type', e.type);
  out.eventTime = e.eventTime ?? null;
  put(out, 'series', e.series);
  put(out, 'action', e.action);
  put(out, 'related', e.related);
  out.reportingComponent = e.reportingController ?? '';
  out.reportingInstance = e.reportingInstance ?? '';
  return out as KObject;
}

/** A core v1 Event as an Event of `apiVersion` (events.<domain>/v1). */
export function coreToEvent(o: KObject, apiVersion: string): KObject {
  const c = o as J;
  const out: J = { apiVersion, kind: 'Event', metadata: o.metadata, eventTime: c.eventTime ?? null };
  put(out, 'series', c.series);
  put(out, 'reportingController', c.reportingComponent);
  put(out, 'reportingInstance', c.reportingInstance);
  put(out, 'action', c.action);
  put(out, 'reason', c.reason);
  out.regarding = c.involvedObject ?? {};
  put(out, 'related', c.related);
  put(out, 'note', c.message);
  put(out, 'type', c.type);
  out.deprecatedSource = c.source ?? {};
  out.deprecatedFirstTimestamp = c.firstTimestamp ?? null;
  out.deprecatedLastTimestamp = c.lastTimestamp ?? null;
  put(out, 'deprecatedCount', c.count);
  return out as KObject;
}

/** from and to are apiVersions ("v1", "events.k8s.io/v1"): the two versions are in different groups. */
export const eventsConversion: ResourceConversion = {
  storageVersion: 'v1',
  storageGroup: '',
  convert(obj, from, to) {
    if (to === 'v1') return eventToCore(obj);
    return coreToEvent(from === 'v1' ? obj : eventToCore(obj), to);
  },
};
