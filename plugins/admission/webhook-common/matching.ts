// Whether a webhook applies to a request, as the reference decides it: a rule matching the request's
// operation, group, version, resource (with sub-resource) and scope, or, under matchPolicy
// Equivalent, matching another served version of the same group-resource; then the namespace
// selector (labels of the object's namespace, or of the namespace object itself) and the object
// selector (labels of the new or the old object).
import type { AdmissionAttributes, KObject, PluginHost, TypeDef } from '../../../kernel/contracts/index.js';
import { matchLabels, selectorIsEmpty } from '../../../kernel/api/selectors.js';
import { errors } from '../../../kernel/contracts/status.js';
import type { Webhook, WebhookRule } from './config.js';

/** What a matching webhook is sent: the request as seen through the version its rule names. */
export interface Invocation {
  hook: Webhook;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subresource: string;
  /** Set when the invocation is through another version than the request's (Equivalent matching). */
  converted: boolean;
}

interface RequestShape {
  operation: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  /** The request is for something in a namespace (not a cluster-scoped object, not a namespace itself). */
  namespaced: boolean;
}

function anyOf(list: string[], v: string): boolean {
  return list.includes('*') || list.includes(v);
}

/** rules[].resources: "*" (no sub-resources), "*\/*", "pods", "pods/*", "*\/status", "pods/status". */
function resourceMatches(list: string[], resource: string, subresource: string): boolean {
  if (!subresource) return list.includes(resource) || list.includes('*') || list.includes('*/*');
  return list.includes(`${resource}/${subresource}`) || list.includes(`*/${subresource}`) || list.includes(`${resource}/*`) || list.includes('*/*');
}

function scopeMatches(scope: string, r: RequestShape): boolean {
  if (scope === 'Cluster') return !r.namespaced;
  if (scope === 'Namespaced') return r.namespaced;
  return true;
}

export function ruleMatches(rule: WebhookRule, r: RequestShape): boolean {
  return anyOf(rule.operations, r.operation) && anyOf(rule.apiGroups, r.group) && anyOf(rule.apiVersions, r.version)
    && resourceMatches(rule.resources, r.resource, r.subresource) && scopeMatches(rule.scope, r);
}

function isNamespaceObject(a: AdmissionAttributes): boolean {
  return a.resource.group === '' && a.resource.resource === 'namespaces';
}

/** Kind of a type's sub-resource when it takes other objects (a Scale), else the type's kind. */
function kindOf(t: TypeDef, subresource: string): { group: string; version: string; kind: string } {
  const info = subresource ? t.subresourceInfo?.[subresource] : undefined;
  if (info?.kind) return { group: info.group ?? t.group, version: info.version ?? t.version, kind: info.kind };
  return { group: t.group, version: t.version, kind: t.kind };
}

/** Per host: the other served versions of a group-resource/sub-resource, rebuilt when the served types change. */
const equivalentsCache = new WeakMap<PluginHost, { count: number; byKey: Map<string, TypeDef[]> }>();

function equivalentTypes(host: PluginHost, a: AdmissionAttributes): TypeDef[] {
  const all = host.allTypes();
  let c = equivalentsCache.get(host);
  if (!c || c.count !== all.length) equivalentsCache.set(host, (c = { count: all.length, byKey: new Map() }));
  const key = `${a.resource.group}/${a.resource.resource}/${a.resource.version}/${a.subresource}`;
  let list = c.byKey.get(key);
  if (!list) {
    list = all.filter((t) => t.group === a.resource.group && t.resource === a.resource.resource && t.version !== a.resource.version
      && (!a.subresource || t.subresources?.includes(a.subresource)));
    c.byKey.set(key, list);
  }
  return list;
}

/** The rule matching of one webhook (no selectors): the invocation, or undefined. */
export function matchRules(hook: Webhook, a: AdmissionAttributes, host: PluginHost): Invocation | undefined {
  const shape: RequestShape = {
    operation: a.operation, group: a.resource.group, version: a.resource.version, resource: a.resource.resource,
    subresource: a.subresource, namespaced: !!a.namespace && !isNamespaceObject(a),
  };
  for (const rule of hook.rules) {
    if (ruleMatches(rule, shape)) return { hook, kind: a.kind, resource: a.resource, subresource: a.subresource, converted: false };
  }
  if (hook.matchPolicy !== 'Equivalent') return undefined;
  // Other served versions of the same group-resource (with the same sub-resource), earlier rules first.
  const equivalents = equivalentTypes(host, a);
  if (!equivalents.length) return undefined;
  for (const rule of hook.rules) {
    for (const t of equivalents) {
      if (ruleMatches(rule, { ...shape, version: t.version })) {
        return { hook, kind: kindOf(t, a.subresource), resource: { group: t.group, version: t.version, resource: t.resource }, subresource: a.subresource, converted: true };
      }
    }
  }
  return undefined;
}

function labelsOf(o: KObject | undefined): Record<string, string> | undefined | null {
  if (!o || typeof o !== 'object' || typeof o.metadata !== 'object' || o.metadata === null) return null; // no metadata: cannot be selected
  return o.metadata.labels ?? {};
}

/** The object selector: the new object's labels or the old object's; objects without metadata never match a non-empty selector. */
export function matchObjectSelector(hook: Webhook, a: AdmissionAttributes): boolean {
  if (selectorIsEmpty(hook.objectSelector)) return true;
  const now = a.operation === 'DELETE' ? null : labelsOf(a.object);
  const old = labelsOf(a.oldObject);
  return (now !== null && matchLabels(hook.objectSelector, now ?? {})) || (old !== null && matchLabels(hook.objectSelector, old ?? {}));
}

/**
 * The namespace selector: no effect on cluster-scoped objects other than namespaces; for a
 * namespace, the labels of the namespace object (the new one on create and update); otherwise the
 * labels of the request's namespace, which must exist (404 as the reference answers).
 */
export async function matchNamespaceSelector(hook: Webhook, a: AdmissionAttributes, host: PluginHost): Promise<boolean> {
  if (selectorIsEmpty(hook.namespaceSelector)) return true;
  const nsObject = isNamespaceObject(a);
  if (!a.namespace && !nsObject) return true;
  let labels: Record<string, string> | undefined;
  if (nsObject && !a.subresource && (a.operation === 'CREATE' || a.operation === 'UPDATE')) {
    labels = a.object?.metadata?.labels ?? {};
  } else {
    const name = nsObject ? a.name || a.namespace : a.namespace;
    const nsType = host.type('', 'namespaces');
    const ns = nsType ? await host.objects.get(nsType, '', name) : undefined;
    if (!ns) {
      if (nsObject && a.oldObject) labels = a.oldObject.metadata?.labels ?? {};
      else throw errors.notFound('', 'namespaces', name);
    } else labels = ns.metadata?.labels ?? {};
  }
  return matchLabels(hook.namespaceSelector, labels);
}

/**
 * The full decision for one webhook: rules first (cheap), then selectors. A missing namespace or a
 * bad selector is an error only for a webhook whose rules match.
 */
export async function shouldCall(hook: Webhook, a: AdmissionAttributes, host: PluginHost): Promise<Invocation | undefined> {
  const inv = matchRules(hook, a, host);
  if (!inv) return undefined;
  if (hook.selectorError) throw errors.internal(hook.selectorError);
  if (!matchObjectSelector(hook, a)) return undefined;
  if (!(await matchNamespaceSelector(hook, a, host))) return undefined;
  return inv;
}
