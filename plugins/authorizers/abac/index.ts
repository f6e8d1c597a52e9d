// ABAC (--authorization-mode=ABAC, --authorization-policy-file): a file of policies, one JSON object
// a line, each allowing a subject (user or group, "*" for every authenticated user) some requests:
// resource requests by namespace, resource and API group, non-resource requests by path ("*" and
// trailing-"*" prefixes), every verb or (readonly) only get, list and watch. A matching policy
// allows; otherwise there is no opinion. Lines without apiVersion are the legacy v0 format.
import { readFileSync } from 'node:fs';
import { CONTRACT_VERSION, type AuthorizationAttributes, type Authorizer, type PluginModule, type UserInfo } from '../../../kernel/contracts/index.js';
import { registerRulesResolver, type RuleResolution } from '../rbac/resolvers.js';

export interface PolicySpec {
  user: string;
  group: string;
  readonly: boolean;
  apiGroup: string;
  resource: string;
  namespace: string;
  nonResourcePath: string;
}

const ALL_AUTHENTICATED = 'system:authenticated';
const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** One policy line → its spec (after the reference's v0 and v1beta1 conversions). Throws on bad input. */
export function parsePolicy(line: string, brandDomain = 'cluster.io'): PolicySpec {
  const o = JSON.parse(line) as Record<string, unknown>;
  if (!o || typeof o !== 'object' || Array.isArray(o)) throw new Error('not a JSON object');
  if (o.apiVersion === undefined && o.kind === undefined) {
    // v0: {"user":..., "group":..., "readonly":..., "resource":..., "namespace":...}
    const p: PolicySpec = { user: str(o.user), group: str(o.group), readonly: o.readonly === true, apiGroup: '*', resource: str(o.resource), namespace: str(o.namespace), nonResourcePath: '' };
    if (!p.user && !p.group) p.group = ALL_AUTHENTICATED;
    if (p.user === '*' || p.group === '*') { p.group = ALL_AUTHENTICATED; p.user = ''; }
    if (!p.namespace && !p.resource) p.nonResourcePath = '*';
    if (!p.namespace) p.namespace = '*';
    if (!p.resource) p.resource = '*';
    return p;
  }
  const okVersion = ['abac.authorization.kubernetes.io/v1beta1', `abac.authorization.${brandDomain}/v1beta1`];
  if (!okVersion.includes(str(o.apiVersion))) throw new Error(`unknown apiVersion "${str(o.apiVersion)}" (expected abac.authorization.kubernetes.io/v1beta1)`);
  if (o.kind !== 'Policy') throw new Error(`unknown kind "${str(o.kind)}" (expected Policy)`);
  const s = (o.spec ?? {}) as Record<string, unknown>;
  const p: PolicySpec = {
    user: str(s.user), group: str(s.group), readonly: s.readonly === true, apiGroup: str(s.apiGroup),
    resource: str(s.resource), namespace: str(s.namespace), nonResourcePath: str(s.nonResourcePath),
  };
  if (p.user === '*' || p.group === '*') { p.group = ALL_AUTHENTICATED; p.user = ''; }
  return p;
}

/** Parse a whole policy file; errors name the file and line. Blank lines and # comments are skipped. */
export function parsePolicyFile(text: string, file: string, brandDomain?: string): PolicySpec[] {
  const out: PolicySpec[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    try {
      out.push(parsePolicy(line, brandDomain));
    } catch (e) {
      throw new Error(`error reading policy file ${file}, line ${i + 1}: ${line}: ${(e as Error).message}`);
    }
  });
  return out;
}

export function subjectMatches(p: PolicySpec, user: UserInfo): boolean {
  let matched = false;
  if (p.user) {
    if (p.user === '*') matched = true;
    else if (p.user === user.username) matched = true;
    else return false;
  }
  if (p.group) {
    if (p.group === '*') matched = true;
    else if ((user.groups ?? []).includes(p.group)) matched = true;
    else return false;
  }
  return matched;
}

const READ_ONLY = new Set(['get', 'list', 'watch']);

export function policyMatches(p: PolicySpec, a: AuthorizationAttributes): boolean {
  if (!subjectMatches(p, a.user)) return false;
  if (p.readonly && !READ_ONLY.has(a.verb)) return false;
  if (a.isResourceRequest) {
    return (p.namespace === '*' || p.namespace === a.namespace) && (p.resource === '*' || p.resource === a.resource) && (p.apiGroup === '*' || p.apiGroup === a.apiGroup);
  }
  const np = p.nonResourcePath;
  return np === '*' || np === a.path || (np.endsWith('*') && a.path.startsWith(np.replace(/\*+$/, '')));
}

export function abacRules(policies: PolicySpec[], user: UserInfo, namespace: string): RuleResolution {
  const out: RuleResolution = { resourceRules: [], nonResourceRules: [], incomplete: false };
  for (const p of policies) {
    if (!subjectMatches(p, user) || !(p.namespace === '*' || p.namespace === namespace)) continue;
    const verbs = p.readonly ? ['get', 'list', 'watch'] : ['*'];
    if (p.resource) out.resourceRules.push({ verbs, apiGroups: [p.apiGroup], resources: [p.resource] });
    if (p.nonResourcePath) out.nonResourceRules.push({ verbs: [...verbs], nonResourceURLs: [p.nonResourcePath] });
  }
  return out;
}

const plugin: PluginModule<'authorizer'> = {
  kind: 'authorizer',
  contract: CONTRACT_VERSION,
  name: 'abac',
  create(options, host): Authorizer {
    const file = options.policyFile;
    if (typeof file !== 'string' || !file) throw new Error('authorization mode ABAC needs a policy file (--authorization-policy-file)');
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new Error(`cannot read policy file ${file}: ${(e as Error).message}`);
    }
    const policies = parsePolicyFile(text, file, host.brand.domain);
    const unregister = registerRulesResolver(host.dataDir, 'abac', (user, ns) => abacRules(policies, user, ns));
    return {
      authorize(a) {
        for (const p of policies) if (policyMatches(p, a)) return { decision: 'allow' };
        return { decision: 'no-opinion', reason: 'No policy matched.' };
      },
      async close() {
        unregister();
      },
    };
  },
};

export default plugin;
