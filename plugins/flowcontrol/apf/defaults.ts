// The reference's bootstrap configuration of API Priority and Fairness (flowcontrol v1): the two
// mandatory priority levels and flow schemas, and the suggested ones, as data. Used as they are
// until FlowSchema / PriorityLevelConfiguration objects are served and stored; then the objects win.
import type { Brand } from '../../../kernel/contracts/brand.js';

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  user?: { name: string };
  group?: { name: string };
  serviceAccount?: { name: string; namespace: string };
}
export interface ResourceRule { verbs: string[]; apiGroups: string[]; resources: string[]; namespaces?: string[]; clusterScope?: boolean }
export interface NonResourceRule { verbs: string[]; nonResourceURLs: string[] }
export interface PolicyRules { subjects: Subject[]; resourceRules?: ResourceRule[]; nonResourceRules?: NonResourceRule[] }

export interface FlowSchemaSpec {
  priorityLevelConfiguration: { name: string };
  matchingPrecedence: number;
  distinguisherMethod?: { type: 'ByUser' | 'ByNamespace' };
  rules?: PolicyRules[];
}
export interface PriorityLevelSpec {
  type: 'Exempt' | 'Limited';
  exempt?: { nominalConcurrencyShares?: number; lendablePercent?: number };
  limited?: {
    nominalConcurrencyShares?: number;
    lendablePercent?: number;
    /** Unset: no bound on borrowing. */
    borrowingLimitPercent?: number;
    limitResponse: { type: 'Queue' | 'Reject'; queuing?: { queues: number; handSize: number; queueLengthLimit: number } };
  };
}
export interface Named<S> { name: string; uid?: string; spec: S }

const all = ['*'];
const groups = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'Group', group: { name } }));
const users = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'User', user: { name } }));
const everything = (): Pick<PolicyRules, 'resourceRules' | 'nonResourceRules'> => ({
  resourceRules: [{ verbs: all, apiGroups: all, resources: all, namespaces: all, clusterScope: true }],
  nonResourceRules: [{ verbs: all, nonResourceURLs: all }],
});
const queued = (shares: number, lendable: number, queues: number, handSize: number): PriorityLevelSpec => ({
  type: 'Limited',
  limited: { nominalConcurrencyShares: shares, lendablePercent: lendable, limitResponse: { type: 'Queue', queuing: { queues, handSize, queueLengthLimit: 50 } } },
});
const fs = (name: string, level: string, precedence: number, by: 'ByUser' | 'ByNamespace' | undefined, rules: PolicyRules): Named<FlowSchemaSpec> => ({
  name,
  spec: { priorityLevelConfiguration: { name: level }, matchingPrecedence: precedence, ...(by ? { distinguisherMethod: { type: by } } : {}), rules: [rules] },
});

export function defaultPriorityLevels(): Named<PriorityLevelSpec>[] {
  return [
    { name: 'exempt', spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } } },
    { name: 'catch-all', spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } } } },
    { name: 'system', spec: queued(30, 33, 64, 6) },
    { name: 'node-high', spec: queued(40, 25, 64, 6) },
    { name: 'leader-election', spec: queued(10, 0, 16, 4) },
    { name: 'workload-high', spec: queued(40, 50, 128, 6) },
    { name: 'workload-low', spec: queued(100, 90, 128, 6) },
    { name: 'global-default', spec: queued(20, 50, 128, 6) },
  ];
}

/** The flow schemas; `brand` names the coordination group, the system namespace and the nodes group. */
export function defaultFlowSchemas(brand: Brand): Named<FlowSchemaSpec>[] {
  const coordination = `coordination.${brand.domain}`;
  const systemSAs = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'ServiceAccount', serviceAccount: { name, namespace: brand.systemNamespace } }));
  const controllerManager = 'system:kube-controller-manager';
  const scheduler = 'system:kube-scheduler';
  const nodes = 'system:nodes';
  const getCreateUpdate = ['get', 'create', 'update'];
  return [
    fs('exempt', 'exempt', 1, undefined, { subjects: groups('system:masters'), ...everything() }),
    fs('probes', 'exempt', 2, undefined, {
      subjects: groups('system:unauthenticated', 'system:authenticated'),
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
    }),
    fs('system-leader-election', 'leader-election', 100, 'ByUser', {
      subjects: [...users(controllerManager, scheduler), ...systemSAs('*')],
      resourceRules: [{ verbs: getCreateUpdate, apiGroups: [coordination], resources: ['leases'], namespaces: all }],
    }),
    fs('endpoint-controller', 'workload-high', 150, 'ByUser', {
      subjects: [...users(controllerManager), ...systemSAs('endpoint-controller', 'endpointslicemirroring-controller')],
      resourceRules: [{ verbs: getCreateUpdate, apiGroups: [''], resources: ['endpoints'], namespaces: all }],
    }),
    fs('workload-leader-election', 'leader-election', 200, 'ByUser', {
      subjects: systemSAs('*'),
      resourceRules: [
        { verbs: getCreateUpdate, apiGroups: [''], resources: ['endpoints', 'configmaps'], namespaces: all },
        { verbs: getCreateUpdate, apiGroups: [coordination], resources: ['leases'], namespaces: all },
      ],
    }),
    fs('system-node-high', 'node-high', 400, 'ByUser', {
      subjects: groups(nodes),
      resourceRules: [
        { verbs: all, apiGroups: [''], resources: ['nodes', 'nodes/status'], namespaces: all, clusterScope: true },
        { verbs: all, apiGroups: [coordination], resources: ['leases'], namespaces: all },
      ],
    }),
    fs('system-nodes', 'system', 500, 'ByUser', { subjects: groups(nodes), ...everything() }),
    fs('kube-controller-manager', 'workload-high', 800, 'ByNamespace', { subjects: users(controllerManager), ...everything() }),
    fs('kube-scheduler', 'workload-high', 800, 'ByNamespace', { subjects: users(scheduler), ...everything() }),
    fs('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', { subjects: systemSAs('*'), ...everything() }),
    fs('service-accounts', 'workload-low', 9000, 'ByUser', { subjects: groups('system:serviceaccounts'), ...everything() }),
    fs('global-default', 'global-default', 9900, 'ByUser', { subjects: groups('system:unauthenticated', 'system:authenticated'), ...everything() }),
    fs('catch-all', 'catch-all', 10000, 'ByUser', { subjects: groups('system:unauthenticated', 'system:authenticated'), ...everything() }),
  ];
}
