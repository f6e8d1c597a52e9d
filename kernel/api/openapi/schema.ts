// OpenAPI definitions from the served TypeDefs' structural schemas: definition names in the brand's
// style, the kernel's own definitions (lists, Status, DeleteOptions, ...), and the conversion of a
// Schema into its OpenAPI v2 or v3 form with the merge markers as x-<ext>-* extensions.
import type { Brand } from '../../contracts/brand.js';
import type { Schema } from '../../contracts/types.js';

export type Json = Record<string, any>;
type ObjectSchema = Extract<Schema, { type: 'object' }>;

// ---------------------------------------------------------------- definition names

/** Machinery packages by the first segment of a neutral name; everything else lives under "api". */
const MACHINERY: Record<string, string> = {
  meta: 'apimachinery.pkg.apis.meta',
  resource: 'apimachinery.pkg.api.resource',
  intstr: 'apimachinery.pkg.util.intstr',
  runtime: 'apimachinery.pkg.runtime',
};

/** The brand's root of definition names: "k8s.io" → "io.k8s", "cluster.io" → "io.cluster". */
export function definitionRoot(brand: Brand): string {
  return brand.domain.split('.').reverse().join('.');
}

/**
 * A neutral definition name in the brand's style: "core.v1.Pod" → "io.k8s.api.core.v1.Pod";
 * "meta.v1.ObjectMeta" → "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta".
 */
export function definitionName(brand: Brand, neutral: string): string {
  const dot = neutral.indexOf('.');
  const head = dot < 0 ? neutral : neutral.slice(0, dot);
  const pkg = MACHINERY[head];
  return pkg ? `${definitionRoot(brand)}.${pkg}${neutral.slice(head.length)}` : `${definitionRoot(brand)}.api.${neutral}`;
}

// ---------------------------------------------------------------- the kernel's own API objects

const str: Schema = { type: 'string' };
const int32: Schema = { type: 'integer', format: 'int32' };
const int64: Schema = { type: 'integer', format: 'int64' };
const bool: Schema = { type: 'boolean' };
export const obj = (fields: Record<string, Schema>, more: Partial<ObjectSchema> = {}): Schema => ({ type: 'object', fields, ...more });
export const TYPE_FIELDS = { apiVersion: str, kind: str };

/**
 * Definitions the kernel itself serves (lists, Status, DeleteOptions, watch events, patches and the
 * scale sub-resource), by neutral name. A type provider's definition of the same name wins.
 */
export function kernelDefinitions(brand: Brand): Record<string, Schema> {
  const ref = (neutral: string): Schema => ({ type: 'ref', ref: definitionName(brand, neutral) });
  const neutral: Record<string, Schema> = {
    'meta.v1.ListMeta': obj({ continue: str, remainingItemCount: int64, resourceVersion: str, selfLink: str }),
    'meta.v1.Status': obj({ ...TYPE_FIELDS, code: int32, details: ref('meta.v1.StatusDetails'), message: str, metadata: ref('meta.v1.ListMeta'), reason: str, status: str }),
    'meta.v1.StatusDetails': obj({ causes: { type: 'array', items: ref('meta.v1.StatusCause'), listType: 'atomic' }, group: str, kind: str, name: str, retryAfterSeconds: int32, uid: str }),
    'meta.v1.StatusCause': obj({ field: str, message: str, reason: str }),
    'meta.v1.DeleteOptions': obj({
      ...TYPE_FIELDS, dryRun: { type: 'array', items: str, listType: 'atomic' }, gracePeriodSeconds: int64, orphanDependents: bool,
      preconditions: ref('meta.v1.Preconditions'), propagationPolicy: str,
    }),
    'meta.v1.Preconditions': obj({ resourceVersion: str, uid: str }),
    'meta.v1.WatchEvent': obj({ object: ref('runtime.RawExtension'), type: str }, { required: ['type', 'object'] }),
    'meta.v1.Patch': { type: 'object', preserveUnknown: true },
    'runtime.RawExtension': { type: 'object', preserveUnknown: true },
    'autoscaling.v1.Scale': obj({ ...TYPE_FIELDS, metadata: ref('meta.v1.ObjectMeta'), spec: ref('autoscaling.v1.ScaleSpec'), status: ref('autoscaling.v1.ScaleStatus') }),
    'autoscaling.v1.ScaleSpec': obj({ replicas: int32 }),
    'autoscaling.v1.ScaleStatus': obj({ replicas: int32, selector: str }, { required: ['replicas'] }),
  };
  return Object.fromEntries(Object.entries(neutral).map(([k, v]) => [definitionName(brand, k), v]));
}

// ---------------------------------------------------------------- schema conversion

export type Flavor = 2 | 3;

/** One Schema as an OpenAPI schema object (v2 or v3), with the brand's x-<ext>-* markers. */
export function toOpenAPI(s: Schema, flavor: Flavor, ext: string): Json {
  const refTo = (name: string) => (flavor === 2 ? `#/definitions/${name}` : `#/components/schemas/${name}`);
  const x = (k: string) => `x-${ext}-${k}`;
  let out: Json;
  switch (s.type) {
    case 'ref':
      out = { $ref: refTo(s.ref) };
      // A sibling of $ref is ignored by v3 readers; wrap to keep the description.
      if (s.description) return flavor === 3 ? { allOf: [out], description: s.description } : { ...out, description: s.description };
      return out;
    case 'object': {
      // A copy of a named definition made for the field's own markers: the reference to it, with them.
      if (s.definition) {
        const ref = { $ref: refTo(s.definition) };
        out = flavor === 3 ? { allOf: [ref] } : ref;
        if (s.mapType) out[x('map-type')] = s.mapType;
        if (s.patchStrategy) out[x('patch-strategy')] = s.patchStrategy;
        break;
      }
      out = { type: 'object' };
      if (s.fields) {
        out.properties = {};
        for (const [k, v] of Object.entries(s.fields)) out.properties[k] = toOpenAPI(v, flavor, ext);
      }
      if (s.additional) out.additionalProperties = toOpenAPI(s.additional, flavor, ext);
      if (s.required?.length) out.required = [...s.required];
      if (s.mapType) out[x('map-type')] = s.mapType;
      if (s.patchStrategy) out[x('patch-strategy')] = s.patchStrategy;
      // A bare object already means "any keys"; say it only where the keys are otherwise described.
      if (s.preserveUnknown && (s.fields || s.additional)) out[x('preserve-unknown-fields')] = true;
      break;
    }
    case 'array':
      out = { type: 'array', items: toOpenAPI(s.items, flavor, ext) };
      if (s.listType) out[x('list-type')] = s.listType;
      if (s.mapKeys?.length) out[x('list-map-keys')] = [...s.mapKeys];
      if (s.patchStrategy) out[x('patch-strategy')] = s.patchStrategy;
      if (s.patchMergeKey) out[x('patch-merge-key')] = s.patchMergeKey;
      break;
    case 'int-or-string':
      out = flavor === 2 ? { type: 'string', format: 'int-or-string' } : { format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] };
      break;
    case 'any':
      out = { [x('preserve-unknown-fields')]: true };
      break;
    default:
      // A quantity is a string or a number on the wire; v2 can only say "string".
      if (s.type === 'string' && s.format === 'quantity') out = flavor === 2 ? { type: 'string' } : { oneOf: [{ type: 'string' }, { type: 'number' }] };
      else {
        out = { type: s.type };
        if (s.format) out.format = s.format;
        if (s.enum?.length) out.enum = [...s.enum];
      }
  }
  if (s.description) out.description = s.description;
  return out;
}

/** Names of the definitions a schema refers to directly. */
export function refsOf(s: Schema | undefined, into: Set<string>): void {
  if (!s) return;
  if (s.type === 'ref') into.add(s.ref);
  else if (s.type === 'object') {
    if (s.definition) into.add(s.definition);
    for (const f of Object.values(s.fields ?? {})) refsOf(f, into);
    refsOf(s.additional, into);
  } else if (s.type === 'array') refsOf(s.items, into);
}
