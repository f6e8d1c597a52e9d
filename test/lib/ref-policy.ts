// The reference server's bootstrap RBAC policy, as dumped from a running reference server
// (clusterroles.json, clusterrolebindings.json, roles.json, rolebindings.json in one directory),
// and a rule-by-rule comparison of our objects with it.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const REF_POLICY_FILES = ['clusterroles', 'clusterrolebindings', 'roles', 'rolebindings'] as const;

/** The dump's directory: $REF_RBAC_POLICY, else /work/ref/policy when present; undefined when neither. */
export function refPolicyDir(): string | undefined {
  const dir = process.env.REF_RBAC_POLICY ?? '/work/ref/policy';
  return REF_POLICY_FILES.every((f) => existsSync(path.join(dir, `${f}.json`))) ? dir : undefined;
}

export const refPolicySkip = () => (refPolicyDir() ? false : 'no reference RBAC policy dump: set REF_RBAC_POLICY to a directory holding clusterroles.json, clusterrolebindings.json, roles.json and rolebindings.json');

export function readRefPolicy(dir: string): Record<(typeof REF_POLICY_FILES)[number], Obj[]> {
  const read = (f: string) => (JSON.parse(readFileSync(path.join(dir, `${f}.json`), 'utf8')) as Obj).items as Obj[];
  return { clusterroles: read('clusterroles'), clusterrolebindings: read('clusterrolebindings'), roles: read('roles'), rolebindings: read('rolebindings') };
}

const key = (o: Obj) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
/** A rule as a canonical string: reconciliation compares rules by coverage, so order inside and between rules does not matter. */
const ruleKey = (r: Obj) => JSON.stringify(['verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'].map((k) => [...(r[k] ?? [])].sort()));
const subjectKey = (s: Obj) => JSON.stringify([s.kind, s.apiGroup ?? '', s.namespace ?? '', s.name]);
const sortedKeys = (l: Obj[] | null | undefined, f: (o: Obj) => string) => (l ?? []).map(f).sort();

/**
 * Differences between the reference's objects of one kind and ours, as readable lines: missing or
 * extra objects, and for each present object its rules, labels, annotations, aggregation rule,
 * subjects and roleRef. Rules of aggregated roles are not compared (the aggregation fills them).
 */
export function comparePolicy(kind: string, ref: Obj[], ours: Obj[]): string[] {
  const out: string[] = [];
  const mine = new Map(ours.map((o) => [key(o), o]));
  const theirs = new Set(ref.map(key));
  for (const o of ours) if (!theirs.has(key(o))) out.push(`${kind} ${key(o)}: not in the reference`);
  for (const r of ref) {
    const o = mine.get(key(r));
    const at = `${kind} ${key(r)}`;
    if (!o) { out.push(`${at}: missing`); continue; }
    const same = (what: string, a: unknown, b: unknown) => {
      if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`${at}: ${what} differ: reference ${JSON.stringify(a)}, ours ${JSON.stringify(b)}`);
    };
    const sortObj = (m: Obj | undefined) => Object.fromEntries(Object.entries(m ?? {}).sort());
    same('labels', sortObj(r.metadata.labels), sortObj(o.metadata.labels));
    same('annotations', sortObj(r.metadata.annotations), sortObj(o.metadata.annotations));
    if (kind.endsWith('Binding')) {
      same('roleRef', r.roleRef, o.roleRef);
      same('subjects', sortedKeys(r.subjects, subjectKey), sortedKeys(o.subjects, subjectKey));
    } else {
      same('aggregationRule', r.aggregationRule ?? null, o.aggregationRule ?? null);
      if (!r.aggregationRule) {
        const a = sortedKeys(r.rules, ruleKey);
        const b = sortedKeys(o.rules, ruleKey);
        for (const x of a.filter((x) => !b.includes(x))) out.push(`${at}: rule missing: ${x}`);
        for (const x of b.filter((x) => !a.includes(x))) out.push(`${at}: rule not in the reference: ${x}`);
        if (a.length !== b.length) out.push(`${at}: ${a.length} rules in the reference, ${b.length} ours`);
      }
    }
  }
  return out;
}
