// DefaultTolerationSeconds: pods that do not already tolerate the NoExecute taints
// node.<keyDomain>/not-ready and node.<keyDomain>/unreachable get a toleration for each, bounded by
// tolerationSeconds (300 unless options defaultNotReadyTolerationSeconds /
// defaultUnreachableTolerationSeconds, or the flags of the same names, say otherwise).
import { CONTRACT_VERSION, type PluginModule } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;

function seconds(v: unknown, name: string): number {
  if (v === undefined) return 300;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new Error(`DefaultTolerationSeconds: ${name} must be a non-negative integer`);
  return v;
}

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'DefaultTolerationSeconds',
  create(options, host) {
    const notReady = { key: `node.${host.brand.keyDomain}/not-ready`, seconds: seconds(options.defaultNotReadyTolerationSeconds, 'defaultNotReadyTolerationSeconds') };
    const unreachable = { key: `node.${host.brand.keyDomain}/unreachable`, seconds: seconds(options.defaultUnreachableTolerationSeconds, 'defaultUnreachableTolerationSeconds') };
    return {
      handles: (op, a) => (op === 'CREATE' || op === 'UPDATE') && a.resource.group === '' && a.resource.resource === 'pods' && !a.subresource,
      admit(a) {
        const spec: J = (a.object as J).spec ?? ((a.object as J).spec = {});
        const tolerations: J[] = Array.isArray(spec.tolerations) ? spec.tolerations : [];
        // an empty key tolerates every taint, an empty effect every effect
        const tolerated = (key: string) => tolerations.some((t) => (!t?.key || t.key === key) && (!t?.effect || t.effect === 'NoExecute'));
        const added = [notReady, unreachable].filter((d) => !tolerated(d.key))
          .map((d) => ({ key: d.key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: d.seconds }));
        if (added.length) spec.tolerations = [...tolerations, ...added];
      },
    };
  },
};
export default plugin;
