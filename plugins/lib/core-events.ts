// core/v1 Events about an object from a controller, as the reference's legacy event recorder writes
// them (named <object>.<hex nanoseconds>, source.component the controller's name). Best effort, as
// the reference's recorder: an event refused (a namespace being deleted) is dropped with a log line.
// The recorder's aggregation of repeats into one event's count is not done.
import type { KObject, PluginHost } from '../../kernel/contracts/index.js';
import { nowTime } from './workload.js';

let seq = 0n;

/** `on`: the part of the object (an involvedObject.fieldPath) and the node the component runs on (source.host). */
export async function recordEvent(host: PluginHost, component: string, about: KObject, type: 'Normal' | 'Warning', reason: string, message: string, on: { fieldPath?: string; node?: string } = {}): Promise<void> {
  const events = host.type('', 'events');
  const md = about.metadata;
  if (!events || !md?.name) return;
  const t = nowTime();
  const nanos = BigInt(Date.now()) * 1_000_000n + (seq++ % 1_000_000n);
  const event: KObject = {
    apiVersion: 'v1', kind: 'Event',
    metadata: { name: `${md.name}.${nanos.toString(16)}`, namespace: md.namespace ?? 'default' },
    involvedObject: { kind: about.kind, namespace: md.namespace, name: md.name, uid: md.uid, apiVersion: about.apiVersion, resourceVersion: md.resourceVersion, ...(on.fieldPath ? { fieldPath: on.fieldPath } : {}) },
    reason, message, type, count: 1, firstTimestamp: t, lastTimestamp: t,
    source: on.node ? { component, host: on.node } : { component }, reportingComponent: component, reportingInstance: on.node ?? '',
  };
  try {
    await host.objects.create(events, event);
  } catch (e) {
    host.log.warn(`${component}: event not written`, { object: `${md.namespace}/${md.name}`, reason, error: String(e) });
  }
}
