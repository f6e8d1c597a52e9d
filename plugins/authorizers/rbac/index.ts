// RBAC (--authorization-mode=RBAC): allows what the roles bound to the caller grant, and has no
// opinion otherwise (RBAC never denies). The policy objects are read through host.objects and kept
// in an index updated by watches (policy-index.ts). The plugin also guards writes of the four RBAC
// kinds (escalation.ts), keeps aggregated cluster roles filled (aggregation.ts) and reconciles the
// default roles and bindings at every start (defaults.ts).
import { CONTRACT_VERSION, type AuthorizationAttributes, type AuthorizationDecision, type Authorizer, type KObject, type PluginHost, type PluginModule, type TypeDef, type UserInfo } from '../../../kernel/contracts/index.js';
import { Aggregator } from './aggregation.js';
import { reconcileDefaults, rbacNames } from './defaults.js';
import { rbacGuards } from './escalation.js';
import { PolicyIndex } from './policy-index.js';
import { registerRulesResolver, type RuleResolution } from './resolvers.js';
import { ruleJson, type PolicyRule } from './rules.js';

export { PolicyIndex } from './policy-index.js';
export { registerRulesResolver, rulesResolvers } from './resolvers.js';

type Kind = 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding';
const RESOURCES: [Kind, string][] = [['Role', 'roles'], ['ClusterRole', 'clusterroles'], ['RoleBinding', 'rolebindings'], ['ClusterRoleBinding', 'clusterrolebindings']];

/** How long start-up waits for the kernel's object store to accept plugin reads. */
const STORE_WAIT_MS = 60_000;

/** Rules split the way SelfSubjectRulesReview reports them. */
export function splitRules(rules: PolicyRule[]): Pick<RuleResolution, 'resourceRules' | 'nonResourceRules'> {
  const resourceRules: RuleResolution['resourceRules'] = [];
  const nonResourceRules: RuleResolution['nonResourceRules'] = [];
  for (const r of rules) {
    if (r.resources?.length) {
      resourceRules.push(ruleJson({ verbs: r.verbs, apiGroups: r.apiGroups, resources: r.resources, resourceNames: r.resourceNames }) as unknown as RuleResolution['resourceRules'][number]);
    }
    if (r.nonResourceURLs?.length) nonResourceRules.push({ verbs: [...r.verbs], nonResourceURLs: [...r.nonResourceURLs] });
  }
  return { resourceRules, nonResourceRules };
}

/** Resolves once host.objects can read (the kernel builds its object store after loading authorizers). */
async function whenStoreReady(host: PluginHost, type: TypeDef): Promise<KObject[]> {
  const deadline = Date.now() + STORE_WAIT_MS;
  for (;;) {
    try {
      return await host.objects.list(type);
    } catch (e) {
      if (!(e instanceof TypeError) || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 2));
    }
  }
}

const plugin: PluginModule<'authorizer'> = {
  kind: 'authorizer',
  contract: CONTRACT_VERSION,
  name: 'rbac',
  create(options, host): Authorizer {
    const names = rbacNames(host.brand);
    const index = new PolicyIndex(names.group);
    const types = new Map<Kind, TypeDef>();
    for (const [kind, resource] of RESOURCES) {
      const t = host.type(names.group, resource);
      if (t) types.set(kind, t);
    }
    const unwatch: (() => void)[] = [];
    let aggregator: Aggregator | undefined;
    let initialized = false;
    let closed = false;

    // Watch first, then list: an object changed by an event before its listing arrives keeps the event's version.
    const touched = new Set<string>();
    for (const [kind, t] of types) {
      unwatch.push(host.objects.watch(t, (ev, obj) => {
        touched.add(`${kind}/${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`);
        index.apply(kind, ev, obj);
      }));
    }

    const init = (async () => {
      if (types.size < RESOURCES.length) {
        host.log.warn('rbac: the RBAC types are not served; only an empty policy applies', { group: names.group });
        return;
      }
      for (const [kind, t] of types) {
        for (const obj of await whenStoreReady(host, t)) {
          if (!touched.has(`${kind}/${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`)) index.apply(kind, 'ADDED', obj);
        }
      }
      touched.clear();
      const guards = rbacGuards({ host, index, group: names.group });
      for (const [, resource] of RESOURCES) host.guardWrites(names.group, resource, guards[resource as keyof typeof guards]);
      if (options.reconcileDefaults !== false) {
        const r = await reconcileDefaults(host, types.get('ClusterRole')!, types.get('ClusterRoleBinding')!, { role: types.get('Role')!, binding: types.get('RoleBinding')! });
        if (r.created || r.updated) host.log.v(2, 'rbac: default policy reconciled', r);
      }
      aggregator = new Aggregator(host, types.get('ClusterRole')!, index.clusterRoles);
      index.onClusterRoleChange = () => aggregator!.kick();
      // One full pass before serving, so aggregated roles are filled when the first request arrives.
      for (let i = 0; i < 10 && (await aggregator.syncAll()); i++) await new Promise((r) => setTimeout(r, 20));
      if (closed) aggregator.stop();
    })().then(
      () => { initialized = true; },
      (e) => { initialized = true; host.log.error('rbac: start-up failed', { error: String((e as Error)?.stack ?? e) }); },
    );

    const unregister = registerRulesResolver(host.dataDir, 'rbac', (user: UserInfo, namespace: string) => {
      const { rules, errors } = index.rulesFor(user, namespace);
      const out: RuleResolution = { ...splitRules(rules), incomplete: false };
      if (errors.length) out.error = errors.join(', ');
      return out;
    });

    const decide = (attrs: AuthorizationAttributes): AuthorizationDecision => index.authorize(attrs);
    return {
      postStartHooks: ['rbac/bootstrap-roles'],
      authorize(attrs) {
        if (initialized) return decide(attrs);
        return init.then(() => decide(attrs));
      },
      ready: () => initialized,
      async close() {
        closed = true;
        for (const u of unwatch) u();
        unregister();
        aggregator?.stop();
      },
    };
  },
};

export default plugin;
