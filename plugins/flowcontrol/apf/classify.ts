// Which flow schema a request matches (the reference's rules: subjects, then resource or
// non-resource rules), and what the request costs in seats.
import type { FlowRequest } from '../../../kernel/contracts/index.js';
import type { FlowSchemaSpec, Named, NonResourceRule, ResourceRule, Subject } from './defaults.js';

const has = (list: string[] | undefined, v: string) => !!list && (list.includes('*') || list.includes(v));

function subjectMatches(s: Subject, username: string, groups: string[]): boolean {
  if (s.kind === 'User') return !!s.user && (s.user.name === '*' || s.user.name === username);
  if (s.kind === 'Group') return !!s.group && (s.group.name === '*' || groups.includes(s.group.name));
  if (s.kind === 'ServiceAccount' && s.serviceAccount) {
    const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(username);
    return !!m && m[1] === s.serviceAccount.namespace && (s.serviceAccount.name === '*' || s.serviceAccount.name === m[2]);
  }
  return false;
}

function resourceMatches(r: ResourceRule, req: FlowRequest, resource: string): boolean {
  const i = req.info;
  if (!has(r.verbs, i.verb) || !has(r.apiGroups, i.apiGroup)) return false;
  if (!has(r.resources, resource)) return false;
  return i.namespace ? has(r.namespaces, i.namespace) : !!r.clusterScope;
}

function nonResourceMatches(r: NonResourceRule, req: FlowRequest): boolean {
  if (!has(r.verbs, req.info.verb)) return false;
  const p = req.info.path;
  return r.nonResourceURLs.some((u) => u === '*' || u === p || (u.endsWith('/*') && p.startsWith(u.slice(0, -1))));
}

/** Flow schemas in the order they are tried: matching precedence, then name. */
export function orderSchemas<S extends Named<FlowSchemaSpec>>(schemas: S[]): S[] {
  return [...schemas].sort((a, b) => a.spec.matchingPrecedence - b.spec.matchingPrecedence || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The first schema (in order) whose rules match, and the flow's distinguisher. */
export function classify<S extends Named<FlowSchemaSpec>>(ordered: S[], req: FlowRequest): { schema: S; distinguisher: string } | undefined {
  const { username, groups } = req.user;
  const i = req.info;
  const resource = i.subresource ? `${i.resource}/${i.subresource}` : i.resource;
  // plain loops: every request is tried against most schemas, and a closure per rule added up
  for (const fs of ordered) {
    const rules = fs.spec.rules;
    for (let k = 0; rules && k < rules.length; k++) {
      const rule = rules[k];
      let ok = false;
      for (let j = 0; j < rule.subjects.length && !ok; j++) ok = subjectMatches(rule.subjects[j], username, groups);
      if (!ok) continue;
      ok = false;
      if (i.isResourceRequest) {
        const rr = rule.resourceRules;
        for (let j = 0; rr && j < rr.length && !ok; j++) ok = resourceMatches(rr[j], req, resource);
      } else {
        const nr = rule.nonResourceRules;
        for (let j = 0; nr && j < nr.length && !ok; j++) ok = nonResourceMatches(nr[j], req);
      }
      if (!ok) continue;
      const by = fs.spec.distinguisherMethod?.type;
      return { schema: fs, distinguisher: by === 'ByUser' ? username : by === 'ByNamespace' ? req.info.namespace : '' };
    }
  }
  return undefined;
}

/** Seats a request takes: a list costs one seat per 100 objects it may read (1 to 10), anything else one. */
export function seatsFor(req: FlowRequest): number {
  if (req.info.verb !== 'list' || req.listSize === undefined) return 1;
  const objects = req.limit ? Math.min(req.limit, req.listSize) : req.listSize;
  return Math.min(10, Math.max(1, Math.ceil(objects / 100)));
}
