// admissionregistration.<domain>/v1beta1 MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration, as an opt-in types plugin. The reference release the built-in
// catalog follows (and its OpenAPI document, which the catalog tests check against) serves only v1;
// a server that must also accept v1beta1 clients lists this module after the built-in types:
//
//   types: [{ plugin: builtin }, { plugin: <path to dist/plugins/admission/webhook-common/v1beta1-types.js> }]
//
// The two versions are the same stored objects: both share the v1 rows' storage prefix
// (/admissionregistration.<domain>/<resource>/), the webhook plugins watch that prefix, and the
// defaulting and validation hooks (plugins/types/builtin) read the version from each object's
// apiVersion (v1beta1: failurePolicy Ignore, matchPolicy Exact, timeoutSeconds 30, sideEffects
// Unknown, admissionReviewVersions [v1beta1], duplicate webhook names allowed).
//
// Kernel limitation: objects are stored as written, so an object created through one version is read
// back through the other with the apiVersion it was written with (there is no conversion), and a
// merge patch through the other version is refused for that mismatch; a full update works.
import { brandGroup, type Brand } from '../../../kernel/contracts/brand.js';
import { CONTRACT_VERSION, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';
import { builtinTypes } from '../../types/builtin/index.js';
import { withProtobuf } from '../../lib/protobuf-catalog.js';

const RESOURCES = ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'];

/** The v1beta1 types, derived from the built-in v1 ones (same hooks, same structural schema). */
export function v1beta1WebhookTypes(brand: Brand): TypeDef[] {
  const group = brandGroup(brand, 'admissionregistration.cluster.io');
  return builtinTypes(brand)
    .filter((t) => t.group === group && t.version === 'v1' && RESOURCES.includes(t.resource))
    .map((v1) => {
      const t: TypeDef = { ...v1, version: 'v1beta1' };
      if (v1.categories) t.categories = [...v1.categories];
      // The v1beta1 objects have the v1 shape (v1 only added matchConditions): the v1 definition,
      // published under the v1beta1 name.
      const def = v1.definitionName ? v1.definitions?.[v1.definitionName] : undefined;
      if (def && v1.definitionName) {
        t.schema = def;
        t.definitionName = v1.definitionName.replace('.admissionregistration.v1.', '.admissionregistration.v1beta1.');
      }
      // Deprecated in 1.16 and removed in 1.22 by the reference (the deprecation warning and metric).
      Object.assign(t, { deprecated: true, removedRelease: '1.22' });
      delete t.protobuf;
      return withProtobuf(t, brand);
    });
}

const plugin: PluginModule<'types'> = {
  kind: 'types',
  contract: CONTRACT_VERSION,
  name: 'admissionregistration-v1beta1',
  create: () => ({ types: (brand: Brand) => v1beta1WebhookTypes(brand) }),
};
export default plugin;
