// AlwaysPullImages: every container of a new pod, and of an updated pod that brings a new image, gets
// imagePullPolicy Always, so images are checked against the registry's credentials at each start;
// validation refuses anything else.
import { CONTRACT_VERSION, type AdmissionAttributes, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;
const KINDS = ['initContainers', 'containers', 'ephemeralContainers'];


/** Every container with its field path ("spec.containers[0]"). */
function containers(pod: J): [J, string][] {
  return KINDS.flatMap((k) => (Array.isArray(pod?.spec?.[k]) ? pod.spec[k] : []).map((c: J, i: number): [J, string] => [c ?? {}, `spec.${k}[${i}]`]));
}

/** An update that only uses images the pod already had is left alone. */
function noNewImages(a: AdmissionAttributes): boolean {
  if (a.operation !== 'UPDATE') return false;
  const old = new Set(containers(a.oldObject as J).map(([c]) => c.image));
  return containers(a.object as J).every(([c]) => old.has(c.image));
}

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'AlwaysPullImages',
  create(_options, host) {
    return {
      handles: (op, a) => (op === 'CREATE' || op === 'UPDATE') && a.resource.group === '' && a.resource.resource === 'pods' && !a.subresource,
      admit(a) {
        if (noNewImages(a)) return;
        for (const [c] of containers(a.object as J)) c.imagePullPolicy = 'Always';
      },
      validate(a) {
        if (noNewImages(a)) return;
        const errs = containers(a.object as J).filter(([c]) => c.imagePullPolicy !== 'Always')
          .map(([c, p]) => `${p}.imagePullPolicy: Unsupported value: ${JSON.stringify(c.imagePullPolicy ?? '')}: supported values: "Always"`);
        if (errs.length) throw host.errors.admissionForbidden(a, errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
      },
    };
  },
};
export default plugin;
