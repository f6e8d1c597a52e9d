// RBAC policy rules: does a rule allow a request, does one set of rules cover another (escalation
// prevention), and the compact text the reference server prints for rules a caller lacks.
import type { RequestInfo } from '../../../kernel/contracts/index.js';

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const ALL = '*';

const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);

/** The rules of a stored role, read defensively (objects are untyped JSON). */
export function rulesOf(obj: unknown): PolicyRule[] {
  const out: PolicyRule[] = [];
  const list = (obj as { rules?: unknown } | undefined)?.rules;
  if (!Array.isArray(list)) return out;
  for (const r of list as Record<string, unknown>[]) {
    if (!r || typeof r !== 'object') continue;
    const rule: PolicyRule = { verbs: strings(r.verbs) ?? [] };
    for (const k of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) {
      const v = strings(r[k]);
      if (v) rule[k] = v;
    }
    out.push(rule);
  }
  return out;
}

const has = (list: string[] | undefined, v: string) => list !== undefined && list.includes(v);
const hasAll = (list: string[] | undefined, want: string[] | undefined) => (want ?? []).every((w) => has(list, w));

export const verbMatches = (r: PolicyRule, verb: string) => has(r.verbs, ALL) || has(r.verbs, verb);
export const apiGroupMatches = (r: PolicyRule, group: string) => has(r.apiGroups, ALL) || has(r.apiGroups, group);

/**
 * "*" matches everything (sub-resources included); "pods/log" matches exactly; "*" + "/log" matches
 * the log sub-resource of any resource. "pods/*" is not a wildcard in the reference: it matches
 * only a resource literally named so.
 */
export function resourceMatches(r: PolicyRule, combined: string, subresource: string): boolean {
  for (const res of r.resources ?? []) {
    if (res === ALL || res === combined) return true;
    if (subresource && res.length === subresource.length + 2 && res.startsWith('*/') && res.endsWith(subresource)) return true;
  }
  return false;
}

/** No resourceNames: any name (or none). With resourceNames: only requests naming one of them (so never create or deletecollection). */
export const resourceNameMatches = (r: PolicyRule, name: string) => !r.resourceNames?.length || r.resourceNames.includes(name);

/** "*" matches every path, "/x*" every path starting "/x", otherwise exact. */
export function nonResourceURLMatches(r: PolicyRule, path: string): boolean {
  for (const u of r.nonResourceURLs ?? []) {
    if (u === ALL || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))) return true;
  }
  return false;
}

/** Whether one rule allows a request. */
export function ruleAllows(a: RequestInfo, r: PolicyRule, combined?: string): boolean {
  if (a.isResourceRequest) {
    combined ??= a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    return verbMatches(r, a.verb) && apiGroupMatches(r, a.apiGroup) && resourceMatches(r, combined, a.subresource) && resourceNameMatches(r, a.name);
  }
  return verbMatches(r, a.verb) && nonResourceURLMatches(r, a.path);
}

export function rulesAllow(a: RequestInfo, rules: PolicyRule[]): boolean {
  for (const r of rules) if (ruleAllows(a, r)) return true;
  return false;
}

// ---------------------------------------------------------------- covering (escalation checks)

/** One rule per (group, resource, verb[, name]) and per (url, verb): the unit a cover check works on. */
export function breakdownRule(r: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const g of r.apiGroups ?? []) {
    for (const res of r.resources ?? []) {
      for (const v of r.verbs) {
        if (r.resourceNames?.length) for (const n of r.resourceNames) out.push({ apiGroups: [g], resources: [res], verbs: [v], resourceNames: [n] });
        else out.push({ apiGroups: [g], resources: [res], verbs: [v] });
      }
    }
  }
  for (const u of r.nonResourceURLs ?? []) for (const v of r.verbs) out.push({ nonResourceURLs: [u], verbs: [v] });
  return out;
}

function resourceCovers(owner: string[] | undefined, res: string): boolean {
  if (has(owner, ALL) || has(owner, res)) return true;
  const slash = res.indexOf('/');
  // "*/status" held covers "pods/status" asked
  return slash > 0 && has(owner, '*' + res.slice(slash));
}

function urlCovers(owner: string[] | undefined, url: string): boolean {
  for (const o of owner ?? []) {
    if (o === ALL || o === url) return true;
    if (o.endsWith('*') && url.startsWith(o.replace(/\*+$/, ''))) return true;
  }
  return false;
}

/** Whether an owner rule covers a broken-down servant rule. */
export function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, ALL) || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, ALL) || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = (sub.resources ?? []).every((r) => resourceCovers(owner.resources, r));
  const urls = (sub.nonResourceURLs ?? []).every((u) => urlCovers(owner.nonResourceURLs, u));
  const names = !owner.resourceNames?.length || (!!sub.resourceNames?.length && hasAll(owner.resourceNames, sub.resourceNames));
  return verbs && groups && resources && urls && names;
}

/** Whether the owner's rules cover every servant rule; the uncovered broken-down rules otherwise. */
export function covers(owner: PolicyRule[], servant: PolicyRule[]): { ok: boolean; missing: PolicyRule[] } {
  const missing: PolicyRule[] = [];
  for (const s of servant) {
    for (const sub of breakdownRule(s)) if (!owner.some((o) => ruleCovers(o, sub))) missing.push(sub);
  }
  return { ok: missing.length === 0, missing };
}

/** Rules with one group, one resource, at most one name and nothing else are merged when they differ only by verbs. */
export function compactRules(rules: PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const isSimple = (r.resourceNames?.length ?? 0) <= 1 && !r.nonResourceURLs?.length && r.apiGroups?.length === 1 && r.resources?.length === 1;
    if (!isSimple) { out.push(r); continue; }
    const key = JSON.stringify([r.apiGroups![0], r.resources![0], r.resourceNames?.[0] ?? null]);
    const prev = simple.get(key);
    if (prev) prev.verbs.push(...r.verbs);
    else simple.set(key, { ...r, verbs: [...r.verbs] });
  }
  return [...out, ...simple.values()];
}

/** Go's %q of a string slice: ["a" "b"]. */
export const goQuoteList = (l: string[]) => `[${l.map((s) => JSON.stringify(s)).join(' ')}]`;

/** The reference's compact rule text: {APIGroups:[""], Resources:["pods"], Verbs:["get"]}. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${goQuoteList(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${goQuoteList(r.resources)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${goQuoteList(r.nonResourceURLs)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${goQuoteList(r.resourceNames)}`);
  if (r.verbs.length) parts.push(`Verbs:${goQuoteList(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** Sorted, de-duplicated compact descriptions of missing rules, one a line. */
export function describeMissing(missing: PolicyRule[]): string {
  return [...new Set(compactRules(missing).map(compactString))].sort().join('\n');
}

/** Semantic equality of two rules (absent and empty lists are the same). */
export function sameRule(a: PolicyRule, b: PolicyRule): boolean {
  const eq = (x?: string[], y?: string[]) => (x?.length ?? 0) === (y?.length ?? 0) && (x ?? []).every((v, i) => v === y![i]);
  return eq(a.verbs, b.verbs) && eq(a.apiGroups, b.apiGroups) && eq(a.resources, b.resources) && eq(a.resourceNames, b.resourceNames) && eq(a.nonResourceURLs, b.nonResourceURLs);
}

/** A rule as stored: keys in the reference's order, empty lists dropped. */
export function ruleJson(r: PolicyRule): Record<string, string[]> {
  const o: Record<string, string[]> = { verbs: [...r.verbs] };
  if (r.apiGroups?.length) o.apiGroups = [...r.apiGroups];
  if (r.resources?.length) o.resources = [...r.resources];
  if (r.resourceNames?.length) o.resourceNames = [...r.resourceNames];
  if (r.nonResourceURLs?.length) o.nonResourceURLs = [...r.nonResourceURLs];
  return o;
}
