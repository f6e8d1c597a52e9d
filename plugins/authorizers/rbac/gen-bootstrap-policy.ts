// Generator of the default RBAC policy data, run by hand when the reference release changes:
//
//   node dist/plugins/authorizers/rbac/gen-bootstrap-policy.js <dir>
//
// <dir> holds the reference server's bootstrap policy, either as dumped from a running reference
// server (clusterroles.json, clusterrolebindings.json, roles.json, rolebindings.json: the output of
// `kubectl get <kind> -A -o json` restricted to objects labelled kubernetes.io/bootstrapping) or as
// the reference's test data (cluster-roles.yaml, controller-roles.yaml, namespace-roles.yaml and
// the matching *-role-bindings.yaml under plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata).
// It writes plugins/authorizers/rbac/bootstrap-policy.json in our own compact form, in the spec's
// neutral brand (see defaults.ts for how it is read and translated to the chosen brand):
//
//   clusterRoles        { name: { labels?: ["aggregate-to-x"], aggregate?: ["aggregate-to-y"], rules } }
//   clusterRoleBindings { name: { role?: roleRef name when it differs, subjects? } }
//   roles, roleBindings { namespace: { name: ... } }   (roleRef kind Role unless roleKind says)
//
// A rule is {v: verbs, g: apiGroups, r: resources, n: resourceNames, u: nonResourceURLs}, each a
// comma list in the reference's order ("" is the core group); a subject is "Group:<name>",
// "User:<name>" or "SA:<namespace>:<name>". Every object carries the bootstrapping label and the
// autoupdate annotation, so the data leaves them out; any other label, annotation or selector
// stops the generator, as the compact form has no place for it.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

import { brands } from '../../../kernel/contracts/brand.js';
import type { BootstrapPolicy, BindingData, RoleData, RuleData } from './defaults.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const K8S = brands.kubernetes;
const NEUTRAL = brands.cluster;
const RBAC = `rbac.authorization.${K8S.domain}`;
const AGG = `${RBAC}/aggregate-to-`;

function fail(what: string): never {
  throw new Error(`gen-bootstrap-policy: ${what}`);
}

/** "x.k8s.io" → "x.cluster.io" wherever an API group appears in a string. */
const neutralGroups = (s: string) => s.replace(/\bk8s\.io\b/g, NEUTRAL.domain);

const signerKeys = Object.keys(K8S.signers) as (keyof typeof K8S.signers)[];
const signerPath = (s: string) => s.slice(s.indexOf('/') + 1);

/** A role name: groups made neutral, and the approver roles named after the neutral signers. */
function neutralName(name: string): string {
  const m = /^(system:certificates\.k8s\.io:)(.+)-approver$/.exec(name);
  if (m) {
    const key = signerKeys.find((k) => signerPath(K8S.signers[k]) === m[2]);
    if (!key) fail(`approver role ${name} names no known signer`);
    return `${neutralGroups(m[1])}${signerPath(NEUTRAL.signers[key])}-approver`;
  }
  return neutralGroups(name);
}

function neutralResourceName(n: string): string {
  const key = signerKeys.find((k) => K8S.signers[k] === n);
  return key ? NEUTRAL.signers[key] : n;
}

function neutralNamespace(ns: string): string {
  if (ns === K8S.systemNamespace) return NEUTRAL.systemNamespace;
  if (ns === K8S.publicNamespace) return NEUTRAL.publicNamespace;
  return ns;
}

function commaList(l: unknown, what: string): string {
  if (!Array.isArray(l)) fail(`${what} is not a list`);
  for (const s of l) if (typeof s !== 'string' || s.includes(',')) fail(`${what}: ${JSON.stringify(s)} cannot be written as a comma list`);
  return l.join(',');
}

function rule(r: Obj, where: string): RuleData {
  const known = new Set(['verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs']);
  for (const k of Object.keys(r)) if (!known.has(k)) fail(`${where}: unknown rule field ${k}`);
  const out: RuleData = { v: commaList(r.verbs, `${where} verbs`) };
  if (r.apiGroups) out.g = commaList(r.apiGroups.map(neutralGroups), `${where} apiGroups`);
  if (r.resources) out.r = commaList(r.resources, `${where} resources`);
  if (r.resourceNames) out.n = commaList(r.resourceNames.map(neutralResourceName), `${where} resourceNames`);
  if (r.nonResourceURLs) out.u = commaList(r.nonResourceURLs, `${where} nonResourceURLs`);
  return out;
}

/** Checks the common metadata and returns the aggregate-to-* labels. */
function meta(o: Obj): string[] {
  const where = `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}`;
  const annotations = { ...(o.metadata?.annotations ?? {}) };
  if (annotations[`rbac.authorization.${K8S.keyDomain}/autoupdate`] !== 'true') fail(`${where}: no autoupdate annotation`);
  delete annotations[`rbac.authorization.${K8S.keyDomain}/autoupdate`];
  if (Object.keys(annotations).length) fail(`${where}: unexpected annotations ${JSON.stringify(annotations)}`);
  const labels: string[] = [];
  for (const [k, v] of Object.entries(o.metadata?.labels ?? {})) {
    if (k === `${K8S.keyDomain}/bootstrapping` && v === 'rbac-defaults') continue;
    if (k.startsWith(AGG) && v === 'true') labels.push(k.slice(`${RBAC}/`.length));
    else fail(`${where}: unexpected label ${k}=${String(v)}`);
  }
  return labels;
}

function role(o: Obj): RoleData {
  const labels = meta(o);
  const out: RoleData = {};
  if (labels.length) out.labels = labels;
  if (o.aggregationRule) {
    out.aggregate = (o.aggregationRule.clusterRoleSelectors ?? []).map((s: Obj) => {
      const keys = Object.keys(s.matchLabels ?? {});
      if (Object.keys(s).length !== 1 || keys.length !== 1 || !keys[0].startsWith(AGG) || s.matchLabels[keys[0]] !== 'true') fail(`${o.metadata.name}: selector ${JSON.stringify(s)} is not an aggregate-to label`);
      return keys[0].slice(`${RBAC}/`.length);
    });
  }
  out.rules = (o.rules ?? []).map((r: Obj, i: number) => rule(r, `${o.metadata.name} rule ${i}`));
  return out;
}

function binding(o: Obj, defaultKind: string): BindingData {
  meta(o);
  const out: BindingData = {};
  const ref = o.roleRef as Obj;
  if (ref.apiGroup !== RBAC) fail(`${o.metadata.name}: roleRef group ${ref.apiGroup}`);
  if (ref.kind !== defaultKind) out.roleKind = ref.kind;
  if (neutralName(ref.name) !== neutralName(o.metadata.name)) out.role = neutralName(ref.name);
  if (o.subjects?.length) {
    out.subjects = o.subjects.map((s: Obj) => {
      if (s.kind === 'ServiceAccount' && !s.apiGroup) return `SA:${neutralNamespace(s.namespace)}:${s.name}`;
      if ((s.kind === 'Group' || s.kind === 'User') && s.apiGroup === RBAC && !s.namespace) return `${s.kind}:${s.name}`;
      return fail(`${o.metadata.name}: subject ${JSON.stringify(s)}`);
    });
  }
  return out;
}

/** Every item of the List files in dir, JSON dumps or the reference's YAML test data. */
function readItems(dir: string): Obj[] {
  const files = readdirSync(dir).filter((f) => /\.(json|ya?ml)$/.test(f)).sort();
  if (!files.length) fail(`no .json or .yaml files in ${dir}`);
  return files.flatMap((f) => {
    const text = readFileSync(path.join(dir, f), 'utf8');
    const doc = (f.endsWith('.json') ? JSON.parse(text) : parseYaml(text)) as Obj;
    return (doc.items ?? [doc]) as Obj[];
  });
}

const byName = <T>(m: Record<string, T>) => Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

export function generate(dir: string): BootstrapPolicy {
  const out: BootstrapPolicy = { clusterRoles: {}, clusterRoleBindings: {}, roles: {}, roleBindings: {} };
  for (const o of readItems(dir)) {
    const name = neutralName(o.metadata.name);
    const ns = o.metadata.namespace ? neutralNamespace(o.metadata.namespace) : '';
    switch (o.kind) {
      case 'ClusterRole': out.clusterRoles[name] = role(o); break;
      case 'ClusterRoleBinding': out.clusterRoleBindings[name] = binding(o, 'ClusterRole'); break;
      case 'Role': (out.roles[ns] ??= {})[name] = role(o); break;
      case 'RoleBinding': (out.roleBindings[ns] ??= {})[name] = binding(o, 'Role'); break;
      default: fail(`unexpected kind ${o.kind}`);
    }
  }
  out.clusterRoles = byName(out.clusterRoles);
  out.clusterRoleBindings = byName(out.clusterRoleBindings);
  const sortNested = <T>(m: Record<string, Record<string, T>>) => Object.fromEntries(Object.entries(byName(m)).map(([ns, o]) => [ns, byName(o)]));
  out.roles = sortNested(out.roles);
  out.roleBindings = sortNested(out.roleBindings);
  return out;
}

/** One object per line, so that a change of the reference shows as a readable diff. */
export function write(file: string, p: BootstrapPolicy) {
  const lines = (o: Record<string, unknown>, indent: string) => Object.keys(o).map((k) => `${indent}${JSON.stringify(k)}: ${JSON.stringify(o[k])}`).join(',\n');
  const nested = (o: Record<string, Record<string, unknown>>) => Object.keys(o).map((ns) => `    ${JSON.stringify(ns)}: {\n${lines(o[ns], '      ')}\n    }`).join(',\n');
  const text = `{\n  "clusterRoles": {\n${lines(p.clusterRoles, '    ')}\n  },\n  "clusterRoleBindings": {\n${lines(p.clusterRoleBindings, '    ')}\n  },\n`
    + `  "roles": {\n${nested(p.roles)}\n  },\n  "roleBindings": {\n${nested(p.roleBindings)}\n  }\n}\n`;
  const leak = /k8s\.io|kubernetes\.io|kube-system|kube-public/.exec(text);
  if (leak) fail(`the neutral data still holds "${leak[0]}"`);
  writeFileSync(file, text);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write('usage: gen-bootstrap-policy <dir holding the reference policy: *.json dumps or the testdata *.yaml>\n');
    process.exit(2);
  }
  const p = generate(dir);
  const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
  write(path.join(repo, 'plugins/authorizers/rbac/bootstrap-policy.json'), p);
  const count = (o: Record<string, Record<string, unknown>>) => Object.values(o).reduce((n, m) => n + Object.keys(m).length, 0);
  process.stdout.write(`${Object.keys(p.clusterRoles).length} cluster roles, ${Object.keys(p.clusterRoleBindings).length} cluster role bindings, ${count(p.roles)} roles, ${count(p.roleBindings)} role bindings\n`);
}
