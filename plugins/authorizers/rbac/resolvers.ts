// Rule resolution for SelfSubjectRulesReview: authorizers that can enumerate what a user may do
// register a resolver here, per server (keyed by its data directory); the access types plugin asks
// them in registration order, which is the authorizer chain's order.
import type { UserInfo } from '../../../kernel/contracts/index.js';

export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs?: string[];
}

export interface RuleResolution {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  /** The authorizer may allow more than it listed (node, webhook). */
  incomplete: boolean;
  error?: string;
}

export type RulesResolver = (user: UserInfo, namespace: string) => RuleResolution | Promise<RuleResolution>;

const registry = new Map<string, { name: string; resolve: RulesResolver }[]>();

/** Adds an authorizer's resolver for the server with this data directory; returns the removal. */
export function registerRulesResolver(serverKey: string, name: string, resolve: RulesResolver): () => void {
  const list = registry.get(serverKey) ?? [];
  const entry = { name, resolve };
  list.push(entry);
  registry.set(serverKey, list);
  return () => {
    const l = registry.get(serverKey);
    if (!l) return;
    const i = l.indexOf(entry);
    if (i >= 0) l.splice(i, 1);
    if (!l.length) registry.delete(serverKey);
  };
}

export function rulesResolvers(serverKey: string): { name: string; resolve: RulesResolver }[] {
  return [...(registry.get(serverKey) ?? [])];
}
