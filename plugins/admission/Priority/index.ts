// Priority: a new pod's spec.priorityClassName resolves to spec.priority and spec.preemptionPolicy
// from its PriorityClass; without a name the globalDefault class applies (else priority 0). An unknown
// class is refused, and the two system classes (system-node-critical, system-cluster-critical, known
// even when no object exists for them) are only for pods in the system namespace. PriorityClass
// writes may not introduce a second globalDefault class.
import { CONTRACT_VERSION, type AdmissionAttributes, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';
import { SYSTEM_PRIORITY } from '../../lib/system-priority-classes.js';

type J = Record<string, any>;
interface Resolved { name: string; value: number; preemptionPolicy?: string }


const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'Priority',
  create(_options, host) {
    const group = `scheduling.${host.brand.domain}`;
    const pcType = () => host.type(group, 'priorityclasses');
    const classes = async (): Promise<J[]> => {
      const t = pcType();
      return t ? host.objects.list(t) : [];
    };
    /** The globalDefault class; with several (a race), the lowest value wins. */
    const globalDefault = async (): Promise<J | undefined> =>
      (await classes()).filter((c) => c.globalDefault === true).sort((x, y) => (x.value ?? 0) - (y.value ?? 0))[0];
    const lookup = async (name: string): Promise<Resolved | undefined> => {
      const t = pcType();
      const pc = t && (await host.objects.get(t, '', name));
      if (pc) return { name, value: Number(pc.value ?? 0), preemptionPolicy: pc.preemptionPolicy as string | undefined };
      if (name in SYSTEM_PRIORITY) return { name, value: SYSTEM_PRIORITY[name], preemptionPolicy: 'PreemptLowerPriority' };
      return undefined;
    };

    async function admitPod(a: AdmissionAttributes) {
      const spec: J = (a.object as J).spec ?? ((a.object as J).spec = {});
      if (a.operation === 'UPDATE') {
        // set at creation: an update that drops the fields keeps the old values
        const old: J = (a.oldObject as J)?.spec ?? {};
        if (spec.priority == null && old.priority != null) spec.priority = old.priority;
        if (spec.preemptionPolicy == null && old.preemptionPolicy != null) spec.preemptionPolicy = old.preemptionPolicy;
        return;
      }
      let resolved: Resolved;
      if (!spec.priorityClassName) {
        const d = await globalDefault();
        resolved = d ? { name: d.metadata!.name!, value: Number(d.value ?? 0), preemptionPolicy: d.preemptionPolicy } : { name: '', value: 0, preemptionPolicy: 'PreemptLowerPriority' };
        if (resolved.name) spec.priorityClassName = resolved.name;
      } else {
        const found = await lookup(String(spec.priorityClassName));
        if (!found) throw host.errors.admissionForbidden(a, `no PriorityClass with name ${spec.priorityClassName} was found`);
        resolved = found;
      }
      if (resolved.name in SYSTEM_PRIORITY && a.namespace !== host.brand.systemNamespace) {
        throw host.errors.admissionForbidden(a, `pods with ${resolved.name} priorityClass is not permitted in ${a.namespace} namespace`);
      }
      if (spec.priority != null && spec.priority !== resolved.value) {
        throw host.errors.admissionForbidden(a, `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${resolved.value} from the given PriorityClass name`);
      }
      spec.priority = resolved.value;
      if (resolved.preemptionPolicy) {
        if (spec.preemptionPolicy != null && spec.preemptionPolicy !== resolved.preemptionPolicy) {
          throw host.errors.admissionForbidden(a, `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${resolved.preemptionPolicy} from the given PriorityClass name`);
        }
        spec.preemptionPolicy = resolved.preemptionPolicy;
      }
    }

    return {
      handles: (op, a) => (op === 'CREATE' || op === 'UPDATE') && !a.subresource
        && ((a.resource.group === '' && a.resource.resource === 'pods') || (a.resource.group === group && a.resource.resource === 'priorityclasses')),
      async admit(a) {
        if (a.resource.resource === 'pods') await admitPod(a);
      },
      async validate(a) {
        if (a.resource.resource !== 'priorityclasses' || (a.object as J).globalDefault !== true) return;
        const d = await globalDefault();
        if (d && (a.operation === 'CREATE' || d.metadata?.name !== a.name)) {
          throw host.errors.admissionForbidden(a, `PriorityClass ${d.metadata?.name} is already marked as default. Only one default can exist`);
        }
      },
    };
  },
};
export default plugin;
