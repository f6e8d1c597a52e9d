// The OpenAPI definitions a custom resource version publishes, built as the reference's CRD OpenAPI
// builder builds them from the version's schema: the schema as written (validations, formats,
// patterns, descriptions kept), the type meta fields and metadata added with their descriptions,
// int-or-string unfolded into its anyOf in v3; for v2 what kubectl's v2 reader cannot use removed
// (junctors, defaults, the types of nullable and unknown-preserving nodes), as its v2 conversion does.
import { isObj } from '../../lib/json.js';
type Json = Record<string, any>;

const API_VERSION = 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const KIND = 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
const METADATA = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA = 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
const EMBEDDED_API_VERSION = 'apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const EMBEDDED_KIND = 'kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

type Flavor = 2 | 3;
const refTo = (name: string, flavor: Flavor) => (flavor === 2 ? `#/definitions/${name}` : `#/components/schemas/${name}`);
/** A described $ref: v2 puts the description beside it, v3 wraps the $ref in allOf to keep it. */
const describedRef = (name: string, description: string, flavor: Flavor): Json => (flavor === 2 ? { description, $ref: refTo(name, 2) } : { description, allOf: [{ $ref: refTo(name, 3) }] });

/** One node and its children for the given flavor; `root`: the type's top-level schema. */
function publish(s: Json, flavor: Flavor, metaRef: string): Json {
  const out: Json = { ...s };
  if (isObj(s.properties)) out.properties = Object.fromEntries(Object.entries(s.properties).filter(([, v]) => isObj(v)).map(([k, v]) => [k, publish(v, flavor, metaRef)]));
  if (isObj(s.items)) out.items = publish(s.items, flavor, metaRef);
  if (isObj(s.additionalProperties)) out.additionalProperties = publish(s.additionalProperties, flavor, metaRef);
  for (const j of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(s[j])) out[j] = s[j].filter(isObj).map((x: Json) => publish(x, flavor, metaRef));
  if (isObj(s.not)) out.not = publish(s.not, flavor, metaRef);
  // int-or-string: v3 shows the two types it unfolds to
  if (s['x-kubernetes-int-or-string'] === true && !out.anyOf && flavor === 3) out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  // an embedded object carries type meta and metadata, as a top-level one
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  if (s['x-kubernetes-embedded-resource'] === true && !(flavor === 2 && preserve)) {
    out.properties = { ...out.properties, apiVersion: { description: EMBEDDED_API_VERSION, type: 'string' }, kind: { description: EMBEDDED_KIND, type: 'string' }, metadata: describedRef(metaRef, METADATA, flavor) };
    const req = new Set<string>(Array.isArray(out.required) ? out.required : []);
    out.required = [...(out.required ?? []), ...['kind', 'apiVersion'].filter((k) => !req.has(k))];
  }
  if (flavor === 3) return out;
  // v2: what kubectl's v2 reader cannot take
  for (const j of ['allOf', 'anyOf', 'oneOf', 'not']) delete out[j];
  delete out.default;
  if (out.nullable) { delete out.type; delete out.nullable; delete out.items; delete out.properties; }
  if (preserve) { delete out.items; delete out.properties; }
  if (out.type === 'array' && !out.items) delete out.type;
  if (preserve && out.type === 'object') delete out.type;
  if (isObj(s.properties) && Array.isArray(out.required)) {
    out.required = out.required.filter((f: string) => !(isObj(s.properties[f]) && s.properties[f].nullable));
    if (!out.required.length) delete out.required;
  }
  if (isObj(s.additionalProperties) && s.additionalProperties.nullable) delete out.required;
  return out;
}

/** The kind's v2 and v3 definitions, and its list's, with `gvk` set by the server. */
export function publishedSchemas(openAPIV3Schema: Json | undefined, names: { kind: string; listKind: string; plural: string }, definitionName: string, metaRef: string, listMetaRef: string): { v2: Json; v3: Json; listV2: Json; listV3: Json } {
  const kind = (flavor: Flavor): Json => {
    const preserve = !openAPIV3Schema || openAPIV3Schema['x-kubernetes-preserve-unknown-fields'] === true;
    // v2 with unknown fields kept at the top: an open object, nothing more (kubectl would check the fields otherwise)
    if (flavor === 2 && preserve) return { type: 'object' };
    const out = publish(openAPIV3Schema ?? { type: 'object' }, flavor, metaRef);
    out.properties = { ...out.properties, apiVersion: { description: API_VERSION, type: 'string' }, kind: { description: KIND, type: 'string' }, metadata: describedRef(metaRef, METADATA, flavor) };
    return out;
  };
  const list = (flavor: Flavor): Json => ({
    description: `${names.listKind} is a list of ${names.kind}`, type: 'object', required: ['items'],
    properties: {
      apiVersion: { description: API_VERSION, type: 'string' },
      items: { description: `List of ${names.plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`, type: 'array', items: { $ref: refTo(definitionName, flavor) } },
      kind: { description: KIND, type: 'string' },
      metadata: describedRef(listMetaRef, LIST_METADATA, flavor),
    },
  });
  return { v2: kind(2), v3: kind(3), listV2: list(2), listV3: list(3) };
}
