// LimitRanger: the namespace's LimitRange objects on pods and claims. A new pod's containers get the
// `default` limits and `defaultRequest` requests of Container items for resources they leave unset
// (recorded in the <keyDomain>/limit-ranger annotation). Then min, max and maxLimitRequestRatio are
// enforced per container (Container items), on the whole pod (Pod items) and on a claim's storage
// request (PersistentVolumeClaim items), with the reference's messages.
import { CONTRACT_VERSION, type AdmissionAttributes, type KObject, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';
import { addQuantity, canonical, formatQuantity, parseQuantity, podTotal, resourceList, type Quantity, type ResourceList } from '../ResourceQuota/quantity.js';

type J = Record<string, any>;


const str = (q: Quantity) => formatQuantity(q);
const sortedKeys = (o: unknown) => Object.keys(o && typeof o === 'object' ? o : {}).sort();

/** The reference's minConstraint. */
export function minConstraint(type: string, res: string, enforced: Quantity, req: ResourceList, lim: ResourceList): string | undefined {
  const r = req.get(res);
  const l = lim.get(res);
  if (!r) return `minimum ${res} usage per ${type} is ${str(enforced)}.  No request is specified`;
  if (r.nano < enforced.nano) return `minimum ${res} usage per ${type} is ${str(enforced)}, but request is ${str(r)}`;
  if (l && l.nano < enforced.nano) return `minimum ${res} usage per ${type} is ${str(enforced)}, but limit is ${str(l)}`;
  return undefined;
}

/** The reference's maxConstraint (a limit is required). */
export function maxConstraint(type: string, res: string, enforced: Quantity, req: ResourceList, lim: ResourceList): string | undefined {
  const r = req.get(res);
  const l = lim.get(res);
  if (!l) return `maximum ${res} usage per ${type} is ${str(enforced)}.  No limit is specified`;
  if (l.nano > enforced.nano) return `maximum ${res} usage per ${type} is ${str(enforced)}, but limit is ${str(l)}`;
  if (r && r.nano > enforced.nano) return `maximum ${res} usage per ${type} is ${str(enforced)}, but request is ${str(r)}`;
  return undefined;
}

/** The reference's maxRequestConstraint (claims: only the request counts). */
export function maxRequestConstraint(type: string, res: string, enforced: Quantity, req: ResourceList): string | undefined {
  const r = req.get(res);
  if (!r) return `maximum ${res} usage per ${type} is ${str(enforced)}.  No request is specified`;
  if (r.nano > enforced.nano) return `maximum ${res} usage per ${type} is ${str(enforced)}, but request is ${str(r)}`;
  return undefined;
}

/** The reference's limitRequestRatioConstraint. */
export function ratioConstraint(type: string, res: string, enforced: Quantity, req: ResourceList, lim: ResourceList): string | undefined {
  const r = req.get(res);
  const l = lim.get(res);
  if (!r || r.nano === 0n) return `${res} max limit to request ratio per ${type} is ${str(enforced)}, but no request is specified or request is 0`;
  if (!l || l.nano === 0n) return `${res} max limit to request ratio per ${type} is ${str(enforced)}, but no limit is specified or limit is 0`;
  const ratio = Number(l.nano) / Number(r.nano);
  if (ratio * 1e9 > Number(enforced.nano)) return `${res} max limit to request ratio per ${type} is ${str(enforced)}, but provided ratio is ${ratio.toFixed(6)}`;
  return undefined;
}

/** Checks one request/limit pair against an item's min, max and maxLimitRequestRatio. */
function checkItem(item: J, type: string, req: ResourceList, lim: ResourceList, claim = false): string[] {
  const out: (string | undefined)[] = [];
  for (const k of sortedKeys(item.min)) {
    const q = parseQuantity(item.min[k]);
    if (q) out.push(minConstraint(type, k, q, req, claim ? new Map() : lim));
  }
  for (const k of sortedKeys(item.max)) {
    const q = parseQuantity(item.max[k]);
    if (q) out.push(claim ? maxRequestConstraint(type, k, q, req) : maxConstraint(type, k, q, req, lim));
  }
  if (!claim) {
    for (const k of sortedKeys(item.maxLimitRequestRatio)) {
      const q = parseQuantity(item.maxLimitRequestRatio[k]);
      if (q) out.push(ratioConstraint(type, k, q, req, lim));
    }
  }
  return out.filter((m): m is string => !!m);
}

const list = (v: unknown): J[] => (Array.isArray(v) ? v.filter((x) => x && typeof x === 'object') : []);


/** Sets defaults on every container; returns the reference's annotation text parts. */
export function applyDefaults(spec: J, limits: Record<string, unknown>, requests: Record<string, unknown>): string[] {
  const notes: string[] = [];
  for (const [key, word] of [['initContainers', 'init container'], ['containers', 'container']]) {
    for (const c of list(spec[key])) {
      const res: J = c.resources && typeof c.resources === 'object' ? c.resources : (c.resources = {});
      const set = { requests: [] as string[], limits: [] as string[] };
      for (const [side, defaults] of [['limits', limits], ['requests', requests]] as const) {
        for (const [k, v] of Object.entries(defaults)) {
          const target: J = res[side] && typeof res[side] === 'object' ? res[side] : {};
          if (k in target) continue;
          res[side] = { ...target, [k]: canonical(v) };
          set[side].push(k);
        }
      }
      if (set.requests.length) notes.push(`${set.requests.sort().join(', ')} request for ${word} ${c.name}`);
      if (set.limits.length) notes.push(`${set.limits.sort().join(', ')} limit for ${word} ${c.name}`);
    }
  }
  return notes;
}

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'LimitRanger',
  create(_options, host) {
    const ranges = async (ns: string): Promise<KObject[]> => {
      const t = host.type('', 'limitranges');
      return t ? host.objects.list(t, ns) : [];
    };
    const isPod = (a: AdmissionAttributes) => a.resource.resource === 'pods';
    return {
      // pod containers cannot change after creation, so pods are seen on create only; claims also on update
      handles: (op, a) => a.resource.group === '' && !a.subresource
        && ((a.resource.resource === 'pods' && op === 'CREATE') || (a.resource.resource === 'persistentvolumeclaims' && (op === 'CREATE' || op === 'UPDATE'))),
      async admit(a) {
        if (!isPod(a)) return;
        const spec: J = (a.object as J).spec ?? ((a.object as J).spec = {});
        const limits: Record<string, unknown> = {};
        const requests: Record<string, unknown> = {};
        for (const lr of await ranges(a.namespace)) {
          for (const item of list((lr as J).spec?.limits)) {
            if (item.type !== 'Container') continue;
            Object.assign(limits, item.default ?? {});
            Object.assign(requests, item.defaultRequest ?? {});
          }
        }
        const notes = applyDefaults(spec, limits, requests);
        if (!notes.length) return;
        const md = (a.object!.metadata ??= {});
        md.annotations = { ...(md.annotations ?? {}), [`${host.brand.keyDomain}/limit-ranger`]: `LimitRanger plugin set: ${notes.join('; ')}` };
      },
      async validate(a) {
        const obj = a.object as J;
        for (const lr of await ranges(a.namespace)) {
          const errs: string[] = [];
          for (const item of list((lr as J).spec?.limits)) {
            if (isPod(a) && item.type === 'Container') {
              for (const c of [...list(obj.spec?.containers), ...list(obj.spec?.initContainers)]) {
                errs.push(...checkItem(item, 'Container', resourceList(c.resources?.requests), resourceList(c.resources?.limits)));
              }
            } else if (isPod(a) && item.type === 'Pod') {
              errs.push(...checkItem(item, 'Pod', podTotal(obj.spec ?? {}, 'requests'), podTotal(obj.spec ?? {}, 'limits')));
            } else if (!isPod(a) && item.type === 'PersistentVolumeClaim') {
              errs.push(...checkItem(item, 'PersistentVolumeClaim', resourceList(obj.spec?.resources?.requests), new Map(), true));
            }
          }
          if (errs.length) throw host.errors.admissionForbidden(a, errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
        }
      },
    };
  },
};
export default plugin;
