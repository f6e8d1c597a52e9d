// RuntimeClass: a new pod naming spec.runtimeClassName needs that RuntimeClass; the class's
// overhead.podFixed becomes spec.overhead (a different overhead already on the pod is refused) and its
// scheduling.nodeSelector and scheduling.tolerations are merged into the pod (conflicting selector
// values are refused). Validation then insists spec.overhead matches the class.
import { CONTRACT_VERSION, type AdmissionAttributes, type KObject, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';
import { mergeTolerations } from '../PodTolerationRestriction/index.js';
import { resourceList } from '../ResourceQuota/quantity.js';

type J = Record<string, any>;


/** Same resources with the same amounts ("1000m" equals "1"). */
function sameResources(x: unknown, y: unknown): boolean {
  const a = resourceList(x);
  const b = resourceList(y);
  return a.size === b.size && [...a].every(([k, q]) => b.get(k)?.nano === q.nano);
}

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'RuntimeClass',
  create(_options, host) {
    const rcType = () => host.type(`node.${host.brand.domain}`, 'runtimeclasses');
    const classOf = async (a: AdmissionAttributes): Promise<KObject | undefined> => {
      const name = (a.object as J).spec?.runtimeClassName;
      if (name === undefined || name === null) return undefined;
      const t = rcType();
      const rc = t && (await host.objects.get(t, '', String(name)));
      if (!rc) throw host.errors.admissionForbidden(a, `pod rejected: RuntimeClass "${name}" not found`);
      return rc;
    };
    return {
      handles: (op, a) => op === 'CREATE' && a.resource.group === '' && a.resource.resource === 'pods' && !a.subresource,
      async admit(a) {
        const rc = (await classOf(a)) as J | undefined;
        if (!rc) return;
        const spec: J = (a.object as J).spec;
        const fixed = rc.overhead?.podFixed;
        if (fixed) {
          const has = spec.overhead && Object.keys(spec.overhead).length > 0;
          if (has && !sameResources(fixed, spec.overhead)) throw host.errors.admissionForbidden(a, 'pod rejected: Pod\'s Overhead doesn\'t match RuntimeClass\'s defined Overhead');
          spec.overhead = { ...fixed };
        }
        const sched = rc.scheduling;
        if (!sched) return;
        const selector: Record<string, string> = { ...(spec.nodeSelector ?? {}) };
        for (const [k, v] of Object.entries((sched.nodeSelector ?? {}) as Record<string, string>)) {
          if (k in selector && selector[k] !== v) {
            throw host.errors.admissionForbidden(a, `conflict: runtimeClass.scheduling.nodeSelector[${k}] = ${v}; pod.spec.nodeSelector[${k}] = ${selector[k]}`);
          }
          selector[k] = v;
        }
        if (Object.keys(selector).length) spec.nodeSelector = selector;
        if (Array.isArray(sched.tolerations) && sched.tolerations.length) {
          spec.tolerations = mergeTolerations(Array.isArray(spec.tolerations) ? spec.tolerations : [], sched.tolerations);
        }
      },
      async validate(a) {
        const rc = (await classOf(a)) as J | undefined;
        const overhead = (a.object as J).spec?.overhead;
        if (rc?.overhead?.podFixed) {
          if (!sameResources(rc.overhead.podFixed, overhead)) throw host.errors.admissionForbidden(a, 'pod rejected: Pod\'s Overhead doesn\'t match RuntimeClass\'s defined Overhead');
        } else if (overhead !== undefined && overhead !== null) {
          throw host.errors.admissionForbidden(a, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
        }
      },
    };
  },
};
export default plugin;
