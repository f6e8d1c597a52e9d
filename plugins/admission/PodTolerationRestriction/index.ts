// PodTolerationRestriction: new pods get their namespace's default tolerations (annotation
// scheduler.alpha.<keyDomain>/defaultTolerations, a JSON list; else options.default) merged in, and
// non-BestEffort pods tolerate node.<keyDomain>/memory-pressure:NoSchedule. The resulting tolerations
// must each be covered by the namespace's whitelist (annotation .../tolerationsWhitelist; else
// options.whitelist) when one is set.
import { CONTRACT_VERSION, type AdmissionAttributes, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';
import { qosClass } from '../../types/builtin/defaults.js';

type J = Record<string, any>;
export interface Toleration { key?: string; operator?: string; value?: string; effect?: string; tolerationSeconds?: number }


const same = (a: Toleration, b: Toleration) =>
  (a.key ?? '') === (b.key ?? '') && (a.operator ?? '') === (b.operator ?? '') && (a.value ?? '') === (b.value ?? '')
  && (a.effect ?? '') === (b.effect ?? '') && a.tolerationSeconds === b.tolerationSeconds;

/** Whether `wide` tolerates everything `t` does (the reference's isSuperset). */
export function covers(wide: Toleration, t: Toleration): boolean {
  if (same(wide, t)) return true;
  // an empty key with Exists tolerates every key
  if ((t.key ?? '') !== (wide.key ?? '') && ((wide.key ?? '') !== '' || wide.operator !== 'Exists')) return false;
  if ((t.effect ?? '') !== (wide.effect ?? '') && (wide.effect ?? '') !== '') return false;
  if (wide.effect === 'NoExecute' && wide.tolerationSeconds != null) {
    if (t.tolerationSeconds == null || t.tolerationSeconds > wide.tolerationSeconds) return false;
  }
  if (!wide.operator || wide.operator === 'Equal') return (t.operator ?? 'Equal') === 'Equal' && (t.value ?? '') === (wide.value ?? '');
  return wide.operator === 'Exists';
}

/** Both lists in order, leaving out each toleration another one (kept or later and different) covers. */
export function mergeTolerations(first: Toleration[], second: Toleration[]): Toleration[] {
  const all = [...first, ...second];
  const out: Toleration[] = [];
  all.forEach((t, i) => {
    if (out.some((o) => covers(o, t))) return;
    if (all.slice(i + 1).some((later) => !same(later, t) && covers(later, t))) return;
    out.push(t);
  });
  return out;
}

/** Every pod toleration covered by some whitelist entry (an empty whitelist allows all). */
export function allowedByWhitelist(tolerations: Toleration[], whitelist: Toleration[]): boolean {
  return !whitelist.length || tolerations.every((t) => whitelist.some((w) => covers(w, t)));
}

function parseList(v: unknown, what: string): Toleration[] | undefined {
  if (v === undefined || v === null) return undefined;
  const list = typeof v === 'string' ? JSON.parse(v) : v;
  if (!Array.isArray(list)) throw new Error(`${what} must be a list of tolerations`);
  return list as Toleration[];
}

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'PodTolerationRestriction',
  create(options, host) {
    const kd = host.brand.keyDomain;
    const conf = (options.podTolerationRestrictionPluginConfig ?? options) as J;
    const clusterDefault = parseList(conf.default, 'default') ?? [];
    const clusterWhitelist = parseList(conf.whitelist, 'whitelist') ?? [];
    const nsAnnotations = async (a: AdmissionAttributes): Promise<Record<string, string>> => {
      const t = host.type('', 'namespaces');
      const ns = t && (await host.objects.get(t, '', a.namespace));
      if (!ns) throw host.errors.notFound('', 'namespaces', a.namespace);
      return ns.metadata?.annotations ?? {};
    };
    const fromNamespace = async (a: AdmissionAttributes, which: 'defaultTolerations' | 'tolerationsWhitelist') => {
      const raw = (await nsAnnotations(a))[`scheduler.alpha.${kd}/${which}`];
      try {
        return parseList(raw, which);
      } catch (e) {
        throw host.errors.admissionForbidden(a, `invalid ${which} annotation of namespace ${a.namespace}: ${(e as Error).message}`);
      }
    };
    return {
      handles: (op, a) => (op === 'CREATE' || op === 'UPDATE') && a.resource.group === '' && a.resource.resource === 'pods' && !a.subresource,
      async admit(a) {
        const spec: J = (a.object as J).spec ?? ((a.object as J).spec = {});
        const extra: Toleration[] = a.operation === 'CREATE' ? [...((await fromNamespace(a, 'defaultTolerations')) ?? clusterDefault)] : [];
        if (qosClass(spec) !== 'BestEffort') extra.push({ key: `node.${kd}/memory-pressure`, operator: 'Exists', effect: 'NoSchedule' });
        if (extra.length) spec.tolerations = mergeTolerations(Array.isArray(spec.tolerations) ? spec.tolerations : [], extra);
      },
      async validate(a) {
        const tolerations: Toleration[] = (a.object as J).spec?.tolerations ?? [];
        if (!tolerations.length) return;
        const nsList = await fromNamespace(a, 'tolerationsWhitelist');
        const scope = nsList ? 'namespace' : 'cluster';
        if (!allowedByWhitelist(tolerations, nsList ?? clusterWhitelist)) {
          throw host.errors.admissionForbidden(a, `pod tolerations (possibly merged with namespace default tolerations) conflict with its ${scope} whitelist`);
        }
      },
    };
  },
};
export default plugin;
