// PodNodeSelector (alpha): a new pod's spec.nodeSelector is merged with its namespace's node selector
// (annotation scheduler.alpha.<keyDomain>/node-selector, "k=v,k2=v2"; without the annotation the
// configured clusterDefaultNodeSelector) and must not contradict it. When the configuration lists
// the namespace, the pod's selector must stay within that whitelist. Options: the reference's
// podNodeSelectorPluginConfig map (clusterDefaultNodeSelector and one entry per namespace).
import { CONTRACT_VERSION, type AdmissionAttributes, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;

function forbidden(host: PluginHost, a: AdmissionAttributes, msg: string) {
  const name = (a.object as J)?.metadata?.name ?? '';
  const e = host.errors.status(403, 'Forbidden', `pods${name ? ` "${name}"` : ''} is forbidden: ${msg}`);
  e.details = { name: name || undefined, kind: 'pods' };
  return e;
}

/** "k=v,k2=v2" (also "k==v") as a map; throws on anything else. */
export function parseSelector(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of s.split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^([^=!\s]+)\s*==?\s*([^=\s]*)$/.exec(part);
    if (!m) throw new Error(`invalid selector: '${part}'; can't understand '${part}'`);
    out[m[1]] = m[2];
  }
  return out;
}

/** Some key present in both with different values. */
export const conflicts = (a: Record<string, string>, b: Record<string, string>) => Object.keys(a).some((k) => k in b && a[k] !== b[k]);

/** Every label of `labels` present with the same value in a non-empty whitelist. */
export const withinWhitelist = (labels: Record<string, string>, whitelist: Record<string, string>) =>
  !Object.keys(whitelist).length || Object.entries(labels).every(([k, v]) => whitelist[k] === v);

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'PodNodeSelector',
  create(options, host) {
    const conf = (options.podNodeSelectorPluginConfig ?? {}) as Record<string, string>;
    for (const [k, v] of Object.entries(conf)) {
      if (typeof v !== 'string') throw new Error(`PodNodeSelector: podNodeSelectorPluginConfig.${k} must be a string`);
      parseSelector(v);
    }
    const annotation = `scheduler.alpha.${host.brand.keyDomain}/node-selector`;
    const namespaceSelector = async (a: AdmissionAttributes): Promise<Record<string, string>> => {
      const t = host.type('', 'namespaces');
      const ns = t && (await host.objects.get(t, '', a.namespace));
      if (!ns) throw host.errors.notFound('', 'namespaces', a.namespace);
      const raw = ns.metadata?.annotations?.[annotation] ?? conf.clusterDefaultNodeSelector ?? '';
      try {
        return parseSelector(raw);
      } catch (e) {
        throw forbidden(host, a, (e as Error).message);
      }
    };
    const check = (a: AdmissionAttributes, nsSel: Record<string, string>) => {
      const podSel: Record<string, string> = (a.object as J).spec?.nodeSelector ?? {};
      if (conflicts(nsSel, podSel)) throw forbidden(host, a, 'pod node label selector conflicts with its namespace node label selector');
      const whitelist = conf[a.namespace] !== undefined ? parseSelector(conf[a.namespace]) : {};
      if (!withinWhitelist(podSel, whitelist)) throw forbidden(host, a, 'pod node label selector labels conflict with its namespace whitelist');
    };
    return {
      handles: (op, a) => op === 'CREATE' && a.resource.group === '' && a.resource.resource === 'pods' && !a.subresource,
      async admit(a) {
        const nsSel = await namespaceSelector(a);
        const spec: J = (a.object as J).spec ?? ((a.object as J).spec = {});
        if (conflicts(nsSel, spec.nodeSelector ?? {})) throw forbidden(host, a, 'pod node label selector conflicts with its namespace node label selector');
        const merged = { ...nsSel, ...(spec.nodeSelector ?? {}) };
        if (Object.keys(merged).length) spec.nodeSelector = merged;
        check(a, nsSel);
      },
      async validate(a) {
        check(a, await namespaceSelector(a));
      },
    };
  },
};
export default plugin;
