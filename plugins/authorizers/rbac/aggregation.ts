// ClusterRole aggregation: a cluster role with aggregationRule.clusterRoleSelectors has its rules
// written by this loop as the union of the rules of every other cluster role its selectors match
// (roles in name order, each distinct rule once), and rewritten whenever a cluster role changes.
import type { KObject, PluginHost, TypeDef } from '../../../kernel/contracts/index.js';
import { labelSelectorFromStructured, matchLabels, type StructuredLabelSelector } from '../../../kernel/api/selectors.js';
import type { StoredRole } from './policy-index.js';
import { ruleJson, sameRule, type PolicyRule } from './rules.js';

const RETRY_MS = 100;

export function selectorsOf(obj: KObject): StructuredLabelSelector[] | undefined {
  const ar = obj.aggregationRule as { clusterRoleSelectors?: unknown } | undefined;
  if (!ar || typeof ar !== 'object' || !Array.isArray(ar.clusterRoleSelectors)) return undefined;
  return ar.clusterRoleSelectors.filter((s) => s && typeof s === 'object') as StructuredLabelSelector[];
}

/** The rules an aggregated cluster role should have, given every cluster role by name. */
export function aggregatedRules(name: string, selectors: StructuredLabelSelector[], roles: ReadonlyMap<string, StoredRole>): PolicyRule[] {
  const matched = new Set<string>();
  for (const s of selectors) {
    let sel;
    try { sel = labelSelectorFromStructured(s); } catch { continue; }
    for (const [n, r] of roles) if (n !== name && matchLabels(sel, r.obj.metadata?.labels)) matched.add(n);
  }
  const out: PolicyRule[] = [];
  for (const n of [...matched].sort()) {
    for (const rule of roles.get(n)!.rules) if (!out.some((x) => sameRule(x, rule))) out.push(rule);
  }
  return out;
}

export class Aggregator {
  private queued = false;
  private running = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private host: PluginHost, private type: TypeDef, private roles: ReadonlyMap<string, StoredRole>) {}

  /** Something changed: sync soon (changes arriving together are handled in one pass). */
  kick(): void {
    if (this.stopped || this.queued) return;
    this.queued = true;
    setImmediate(() => void this.run());
  }

  private async run(): Promise<void> {
    if (this.running) return; // the running pass re-checks `queued` when it ends
    this.running = true;
    try {
      while (this.queued && !this.stopped) {
        this.queued = false;
        const retry = await this.syncAll();
        if (retry && !this.stopped) {
          clearTimeout(this.timer);
          this.timer = setTimeout(() => this.kick(), RETRY_MS);
          this.timer.unref?.();
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** One pass over every aggregated role; true when a write failed and a retry is due. */
  async syncAll(): Promise<boolean> {
    let retry = false;
    for (const [name, stored] of [...this.roles]) {
      const selectors = selectorsOf(stored.obj);
      if (!selectors) continue;
      const want = aggregatedRules(name, selectors, this.roles);
      const have = stored.rules;
      if (want.length === have.length && want.every((r, i) => sameRule(r, have[i]))) continue;
      try {
        await this.host.objects.update(this.type, { ...stored.obj, rules: want.map(ruleJson) });
      } catch (e) {
        retry = true;
        const code = (e as { code?: number }).code;
        if (code !== 409 && code !== 404) this.host.log.warn('rbac: cannot aggregate cluster role', { name, error: String((e as Error).message ?? e) });
      }
    }
    return retry;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
