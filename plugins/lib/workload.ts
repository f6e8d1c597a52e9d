// What the workload controllers (replicaset, deployment, job, statefulset) share: controller
// references, pod readiness and availability, the order in which surplus pods go, pods made from a
// template, and claiming pods (adopting orphans that match, releasing owned ones that no longer do).
import type { KObject, PluginHost, TypeDef } from '../../kernel/contracts/index.js';
import { isObj, list, type J } from './json.js';
import { selectorMatches } from './label-selector.js';
import { WorkQueue } from './work-queue.js';

export interface OwnerRef { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }

/** Seconds-precision RFC 3339 time, as the API stores metav1.Time. */
export const nowTime = (ms = Date.now()) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

export const isConflict = (e: unknown) => (e as { code?: number } | undefined)?.code === 409;
export const isNotFound = (e: unknown) => (e as { code?: number } | undefined)?.code === 404;

/** The managing controller's reference of an object, if any. */
/** Ready: its Ready condition is True (what a node agent reports). */
export function isPodReady(pod: KObject): boolean {
  return list((pod.status as J | undefined)?.conditions).some((c) => c.type === 'Ready' && c.status === 'True');
}

export function controllerOf(o: KObject): OwnerRef | undefined {
  return list(o.metadata?.ownerReferences).find((r) => r.controller === true) as OwnerRef | undefined;
}

/** A controller reference to `owner`, as controllers put on what they make (blocks foreground deletion). */
export function controllerRef(owner: KObject): OwnerRef {
  return { apiVersion: owner.apiVersion!, kind: owner.kind!, name: owner.metadata!.name!, uid: owner.metadata!.uid!, controller: true, blockOwnerDeletion: true };
}

export const nsName = (o: KObject) => `${o.metadata!.namespace}/${o.metadata!.name}`;

/** Not finished and not being deleted: the pods a controller counts as its replicas. */
export function isPodActive(p: KObject): boolean {
  const phase = (p.status as J | undefined)?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !p.metadata?.deletionTimestamp;
}

/** When the pod last became Ready (ms), or undefined when it is not ready. */
function readySince(p: KObject): number | undefined {
  const c = list((p.status as J | undefined)?.conditions).find((x) => x.type === 'Ready' && x.status === 'True');
  return c ? Date.parse(c.lastTransitionTime ?? '') || 0 : undefined;
}

/**
 * Whether a pod has been ready for minReadySeconds; when it is ready but not yet available,
 * `wait` gets the milliseconds until it will be (to look again then).
 */
export function isPodAvailable(p: KObject, minReadySeconds: number, now = Date.now(), wait?: (ms: number) => void): boolean {
  const since = readySince(p);
  if (since === undefined) return false;
  if (!minReadySeconds) return true;
  const left = since + minReadySeconds * 1000 - now;
  if (left > 0) wait?.(left);
  return left <= 0;
}

const phaseRank: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };
const restarts = (p: KObject) => list((p.status as J | undefined)?.containerStatuses).reduce((n, c) => Math.max(n, Number(c.restartCount) || 0), 0);

/**
 * Orders pods least valuable first, the reference's ActivePods order less its per-node ranking:
 * unscheduled before scheduled, Pending before Unknown before Running, not ready before ready,
 * ready for less time first, more container restarts first, newer first.
 */
export function byLeastValuable(a: KObject, b: KObject): number {
  const sched = (p: KObject) => ((p.spec as J | undefined)?.nodeName ? 1 : 0);
  if (sched(a) !== sched(b)) return sched(a) - sched(b);
  const ph = (p: KObject) => phaseRank[(p.status as J | undefined)?.phase] ?? 0;
  if (ph(a) !== ph(b)) return ph(a) - ph(b);
  const ra = readySince(a);
  const rb = readySince(b);
  if ((ra === undefined) !== (rb === undefined)) return ra === undefined ? -1 : 1;
  if (ra !== undefined && rb !== undefined && ra !== rb) return rb - ra;
  if (restarts(a) !== restarts(b)) return restarts(b) - restarts(a);
  const created = (p: KObject) => Date.parse(p.metadata?.creationTimestamp ?? '') || 0;
  return created(b) - created(a);
}

/** A new pod from a pod template, owned by `owner`: the template's labels, annotations and finalizers, a generated name. */
export function podFromTemplate(owner: KObject, template: J, extra: { name?: string; generateName?: string; labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[] } = {}): KObject {
  const md: J = isObj(template.metadata) ? template.metadata : {};
  const metadata: J = { namespace: owner.metadata!.namespace, ownerReferences: [controllerRef(owner)] };
  if (extra.name) metadata.name = extra.name;
  else metadata.generateName = extra.generateName ?? `${owner.metadata!.name}-`;
  const labels = { ...(md.labels ?? {}), ...(extra.labels ?? {}) };
  const annotations = { ...(md.annotations ?? {}), ...(extra.annotations ?? {}) };
  const finalizers = [...list(md.finalizers), ...(extra.finalizers ?? [])];
  if (Object.keys(labels).length) metadata.labels = labels;
  if (Object.keys(annotations).length) metadata.annotations = annotations;
  if (finalizers.length) metadata.finalizers = finalizers;
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: JSON.parse(JSON.stringify(template.spec ?? {})) };
}

/** An int-or-percent of `total`, rounded up or down as the caller needs (the reference's GetScaledValueFromIntOrPercent). */
export function scaledValue(v: unknown, total: number, roundUp: boolean): number {
  if (typeof v === 'number') return v;
  const m = typeof v === 'string' ? /^(\d+)%$/.exec(v) : null;
  if (!m) return Number(v) || 0;
  const x = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

/**
 * Adopts the orphans a controller's selector matches and releases the owned objects it no longer
 * matches, as the reference's ControllerRefManager does; returns the objects it owns afterwards.
 * Nothing is adopted while the owner is being deleted; `matches` is the owner's selector.
 */
export async function claim(host: PluginHost, type: TypeDef, owner: KObject, candidates: KObject[], matches: (labels: Record<string, string>) => boolean): Promise<KObject[]> {
  const uid = owner.metadata!.uid;
  const owned: KObject[] = [];
  for (const o of candidates) {
    const ref = controllerOf(o);
    const labels = (o.metadata?.labels ?? {}) as Record<string, string>;
    if (ref && ref.uid !== uid) continue;
    if (ref) {
      if (matches(labels)) owned.push(o);
      else if (!o.metadata?.deletionTimestamp) await writeRefs(host, type, o, list(o.metadata?.ownerReferences).filter((r) => r.uid !== uid));
      continue;
    }
    if (owner.metadata?.deletionTimestamp || o.metadata?.deletionTimestamp || !matches(labels)) continue;
    const refs = [...list(o.metadata?.ownerReferences).filter((r) => r.uid !== uid), controllerRef(owner)];
    const adopted = await writeRefs(host, type, o, refs);
    if (adopted) owned.push(adopted);
  }
  return owned;
}

/** Writes new owner references (conditional on the resourceVersion read); undefined when the object is gone. */
async function writeRefs(host: PluginHost, type: TypeDef, o: KObject, refs: J[]): Promise<KObject | undefined> {
  const metadata = { ...o.metadata! };
  if (refs.length) metadata.ownerReferences = refs;
  else delete metadata.ownerReferences;
  try {
    return await host.objects.update(type, { ...o, metadata });
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** A selector's matcher: a LabelSelector (apps, batch) or a plain map (ReplicationController). Empty selects nothing. */
export function selectorOf(sel: unknown, plainMap = false): (labels: Record<string, string>) => boolean {
  if (!isObj(sel)) return () => false;
  const s: J = plainMap ? { matchLabels: sel } : sel;
  if (!Object.keys(s.matchLabels ?? {}).length && !list(s.matchExpressions).length) return () => false;
  return (labels) => selectorMatches(s, labels);
}

/** Writes a status through the status subresource when it changed; a vanished object is no error. */
export async function writeStatus(host: PluginHost, type: TypeDef, o: KObject, status: J): Promise<KObject | undefined> {
  if (JSON.stringify(status) === JSON.stringify(o.status ?? {})) return o;
  try {
    return await host.objects.update(type, { ...o, status }, 'status');
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** JSON with object keys sorted (as Go marshals maps): equal objects give equal text whatever order their keys came in. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObj(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** FNV-1 or (with `a`) FNV-1a, 32 bits. */
export function fnv32(bytes: Uint8Array, a: boolean): number {
  let h = 0x811c9dc5;
  for (const b of bytes) h = a ? Math.imul(h ^ b, 0x01000193) >>> 0 : (Math.imul(h, 0x01000193) ^ b) >>> 0;
  return h;
}

/** A number's decimal digits spelt in the reference's vowel-free alphabet (rand.SafeEncodeString), as hash labels are. */
export function safeEncode(n: number): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return [...String(n >>> 0)].map((c) => alphabet[c.charCodeAt(0) % alphabet.length]).join('');
}

/**
 * The revision data the reference stores (the template as a replacing strategic-merge patch) and
 * its name's hash: FNV-1 of that data as Go marshals it (keys sorted), plus the collision count.
 */
export function revisionData(template: J): { data: J; hash: (collisions?: number) => string } {
  // Stored with its keys sorted and the template's metadata as Go writes it (creationTimestamp null):
  // clients compare these bytes with their own marshalling of the owner's template (daemon.Match).
  const metadata = { creationTimestamp: null, ...(isObj(template.metadata) ? template.metadata : {}) };
  const raw = canonical({ spec: { template: { ...template, metadata, $patch: 'replace' } } });
  const data = JSON.parse(raw) as J;
  return { data, hash: (c) => safeEncode(fnv32(Buffer.from(raw + (c === undefined ? '' : String(c))), false)) };
}

/** A create refused because the namespace is being deleted: expected while a namespace empties, not worth a warning. */
export const isNamespaceTerminating = (e: unknown) => list((e as { details?: J } | undefined)?.details?.causes).some((c) => c.reason === 'NamespaceTerminating');

/** A controller's queue keyed by namespace/name; failures are logged, except creates in a namespace being deleted. */
export function controllerQueue(host: PluginHost, controller: string, sync: (key: string) => Promise<void>): WorkQueue {
  // Retried without a warning: a namespace going away, and a pod made before its namespace's default
  // service account exists (the ServiceAccount admission's refusal, as the reference's; the next pass succeeds).
  const transient = (e: unknown) => isNamespaceTerminating(e) || /error looking up service account/.test(String((e as Error)?.message ?? e));
  return new WorkQueue(sync, (key, e) => { if (!transient(e)) host.log.warn(`${controller} controller`, { key, error: String(e) }); });
}
