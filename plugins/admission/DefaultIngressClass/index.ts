// DefaultIngressClass: an Ingress created without spec.ingressClassName (and without the deprecated
// <keyDomain>/ingress.class annotation) gets the IngressClass annotated
// ingressclass.<keyDomain>/is-default-class "true". No default: nothing changes; more than one: the
// Ingress is refused, as the reference does.
import { CONTRACT_VERSION, type AdmissionAttributes, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;


const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'DefaultIngressClass',
  create(_options, host) {
    const kd = host.brand.keyDomain;
    const group = `networking.${host.brand.domain}`;
    return {
      handles: (op, a) => op === 'CREATE' && a.resource.group === group && a.resource.resource === 'ingresses' && !a.subresource,
      async admit(a) {
        const ing = a.object as J;
        const spec: J = ing.spec ?? (ing.spec = {});
        if (spec.ingressClassName !== undefined && spec.ingressClassName !== null) return;
        if (ing.metadata?.annotations?.[`${kd}/ingress.class`] !== undefined) return;
        const icType = host.type(group, 'ingressclasses');
        if (!icType) return;
        const defaults = (await host.objects.list(icType)).filter((c) => c.metadata?.annotations?.[`ingressclass.${kd}/is-default-class`] === 'true');
        if (defaults.length > 1) throw host.errors.admissionForbidden(a, `Internal error occurred: ${defaults.length} default IngressClasses were found, only 1 allowed`);
        if (defaults.length === 1) spec.ingressClassName = defaults[0].metadata!.name;
      },
    };
  },
};
export default plugin;
