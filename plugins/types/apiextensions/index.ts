// The apiextensions.<domain>/v1 types plugin: the CustomResourceDefinition type itself, with the
// reference's v1 defaulting and validation rules (names, scope, versions, structural schemas,
// sub-resources, printer columns, conversion). Serving the custom resources a definition declares is
// the `crd` controller's work (plugins/controllers/crd), through PluginHost.serveTypes.
import { isDeepStrictEqual } from 'node:util';
import type { Brand } from '../../../kernel/contracts/brand.js';
import { CONTRACT_VERSION, type FieldCause, type KObject, type PluginModule, type Schema, type TypeDef } from '../../../kernel/contracts/index.js';
import { definitionName, definitionRoot } from '../../../kernel/api/openapi/index.js';
import { fieldError, isDNS1035Label, isDNS1123Subdomain } from '../../../kernel/api/validation.js';
import { brandDefinitions, brandDescriber } from '../builtin/schemas.js';
import { withProtobuf } from '../../lib/protobuf-catalog.js';
import { compileRules } from './cel.js';
import { structuralErrors, type Props } from './schema.js';
import { isObj } from '../../lib/json.js';

const str = (v: unknown) => (typeof v === 'string' ? v : '');
const { invalid, required, forbidden, notSupported } = fieldError;

export const CLEANUP_FINALIZER = (brand: Brand) => `customresourcecleanup.apiextensions.${brand.domain}`;
export const crdGroup = (brand: Brand) => `apiextensions.${brand.domain}`;

const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];

// ---------------------------------------------------------------- the type's own schema

/** Definition names of this group in the brand's style ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.X"). */
const defName = (brand: Brand, n: string) => `${definitionRoot(brand)}.apiextensions-apiserver.pkg.apis.apiextensions.v1.${n}`;

const byBrand = new Map<string, Record<string, Schema>>();

/** The built-in definitions plus this group's, one map per brand (shared by every custom resource too). */
export function apiextensionsDefinitions(brand: Brand): Record<string, Schema> {
  let defs = byBrand.get(brand.name);
  if (defs) return defs;
  const ref = (n: string): Schema => ({ type: 'ref', ref: defName(brand, n) });
  const s: Schema = { type: 'string' };
  const b: Schema = { type: 'boolean' };
  const strings: Schema = { type: 'array', items: s, listType: 'atomic' };
  const own: Record<string, Schema> = {
    CustomResourceDefinition: { type: 'object', required: ['spec'], fields: { apiVersion: s, kind: s, metadata: { type: 'ref', ref: definitionName(brand, 'meta.v1.ObjectMeta') }, spec: ref('CustomResourceDefinitionSpec'), status: ref('CustomResourceDefinitionStatus') } },
    CustomResourceDefinitionSpec: { type: 'object', required: ['group', 'names', 'scope', 'versions'], fields: { conversion: ref('CustomResourceConversion'), group: s, names: ref('CustomResourceDefinitionNames'), preserveUnknownFields: b, scope: s, versions: { type: 'array', items: ref('CustomResourceDefinitionVersion'), listType: 'atomic' } } },
    CustomResourceDefinitionNames: { type: 'object', required: ['plural', 'kind'], fields: { categories: strings, kind: s, listKind: s, plural: s, shortNames: strings, singular: s } },
    CustomResourceDefinitionVersion: { type: 'object', required: ['name', 'served', 'storage'], fields: {
      additionalPrinterColumns: { type: 'array', items: ref('CustomResourceColumnDefinition'), listType: 'atomic' }, deprecated: b, deprecationWarning: s, name: s,
      schema: { type: 'object', fields: { openAPIV3Schema: { type: 'any' } } }, served: b, storage: b,
      selectableFields: { type: 'array', items: { type: 'object', fields: { jsonPath: s } }, listType: 'atomic' },
      subresources: { type: 'object', fields: { scale: { type: 'object', fields: { labelSelectorPath: s, specReplicasPath: s, statusReplicasPath: s } }, status: { type: 'object', preserveUnknown: true } } },
    } },
    CustomResourceColumnDefinition: { type: 'object', required: ['name', 'type', 'jsonPath'], fields: { description: s, format: s, jsonPath: s, name: s, priority: { type: 'integer', format: 'int32' }, type: s } },
    CustomResourceConversion: { type: 'object', required: ['strategy'], fields: { strategy: s, webhook: { type: 'object', required: ['conversionReviewVersions'], fields: {
      clientConfig: { type: 'object', fields: { caBundle: { type: 'string', format: 'byte' }, service: { type: 'object', required: ['namespace', 'name'], fields: { name: s, namespace: s, path: s, port: { type: 'integer', format: 'int32' } } }, url: s } },
      conversionReviewVersions: strings,
    } } } },
    CustomResourceDefinitionStatus: { type: 'object', fields: {
      acceptedNames: ref('CustomResourceDefinitionNames'),
      conditions: { type: 'array', listType: 'map', mapKeys: ['type'], items: { type: 'object', required: ['type', 'status'], fields: { lastTransitionTime: { type: 'string', format: 'date-time' }, message: s, reason: s, status: s, type: s } } },
      storedVersions: strings,
    } },
  };
  defs = { ...brandDefinitions(brand), ...Object.fromEntries(Object.entries(own).map(([k, v]) => [defName(brand, k), v])) };
  byBrand.set(brand.name, defs);
  return defs;
}

// ---------------------------------------------------------------- defaulting

function defaults(obj: KObject, brand: Brand): void {
  const spec = isObj(obj.spec) ? obj.spec : undefined;
  if (!spec) return;
  const names = isObj(spec.names) ? spec.names : undefined;
  if (names) {
    if (!names.singular && typeof names.kind === 'string') names.singular = names.kind.toLowerCase();
    if (!names.listKind && names.kind) names.listKind = `${names.kind}List`;
  }
  spec.conversion ??= { strategy: 'None' };
  const svc = spec.conversion?.webhook?.clientConfig?.service;
  if (isObj(svc) && svc.port === undefined) svc.port = 443;
  const status = (obj.status ??= {}) as Props;
  if (!Array.isArray(status.storedVersions) || !status.storedVersions.length) {
    status.storedVersions = (Array.isArray(spec.versions) ? spec.versions : []).filter((v: Props) => isObj(v) && v.storage === true).map((v: Props) => v.name);
  } else {
    // A new storage version joins the stored versions (the reference's update strategy).
    const storage = (Array.isArray(spec.versions) ? spec.versions : []).find((v: Props) => isObj(v) && v.storage === true)?.name;
    if (storage && !status.storedVersions.includes(storage)) status.storedVersions = [...status.storedVersions, storage];
  }
  // Instances are removed before the definition goes (the crd controller's cleanup).
  const md = obj.metadata;
  if (md && !md.deletionTimestamp) {
    const f = CLEANUP_FINALIZER(brand);
    if (!md.finalizers?.includes(f)) md.finalizers = [...(md.finalizers ?? []), f];
  }
}

// ---------------------------------------------------------------- validation

const join = (a: string[]) => a.join(',');

function validateNames(names: Props, at: string): FieldCause[] {
  const out: FieldCause[] = [];
  const label = (f: string, v: unknown, mixed = false) => {
    if (typeof v !== 'string' || !v) return;
    const errs = isDNS1035Label(mixed ? v.toLowerCase() : v);
    if (errs.length) out.push(invalid(`${at}.${f}`, v, (mixed ? 'may have mixed case, but should otherwise match: ' : '') + join(errs)));
  };
  label('plural', names.plural);
  label('singular', names.singular);
  label('kind', names.kind, true);
  label('listKind', names.listKind, true);
  (Array.isArray(names.shortNames) ? names.shortNames : []).forEach((s: unknown, i: number) => { const e = isDNS1035Label(str(s)); if (e.length) out.push(invalid(`${at}.shortNames[${i}]`, s, join(e))); });
  if (names.kind && names.kind === names.listKind) out.push(invalid(`${at}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  (Array.isArray(names.categories) ? names.categories : []).forEach((s: unknown, i: number) => { const e = isDNS1035Label(str(s)); if (e.length) out.push(invalid(`${at}.categories[${i}]`, s, join(e))); });
  return out;
}

function simpleJSONPath(s: string, at: string): FieldCause[] {
  if (!s) return [invalid(at, s, 'must not be empty')];
  if (s[0] !== '.') return [invalid(at, s, 'must be a simple json path starting with .')];
  return [];
}

/** The reference's limit on selectable fields per version. */
const MAX_SELECTABLE_FIELDS = 8;

/** The schema a simple path (`.spec.x.y`, no array notation) names, or why it names none. */
export function schemaAtPath(schema: unknown, path: string): { schema: Props; segments: string[] } | { error: string } {
  if (!path.startsWith('.')) return { error: 'must be a simple json path starting with .' };
  const segments = path.slice(1).split('.');
  let cur: unknown = schema;
  for (const seg of segments) {
    if (!seg || /[[\]]/.test(seg)) return { error: 'does not refer to a valid field' };
    const props = isObj(cur) && isObj(cur.properties) ? cur.properties : undefined;
    const next = props?.[seg] ?? (isObj(cur) && isObj(cur.additionalProperties) ? cur.additionalProperties : undefined);
    if (!isObj(next)) return { error: 'does not refer to a valid field' };
    cur = next;
  }
  return { schema: cur as Props, segments };
}

/** spec.versions[].selectableFields (1.30+), with the reference's rules and words. */
function validateSelectableFields(list: unknown, schema: unknown, at: string): FieldCause[] {
  const out: FieldCause[] = [];
  const seen = new Set<string>();
  (Array.isArray(list) ? list : []).forEach((f: unknown, i: number) => {
    const fa = `${at}[${i}].jsonPath`;
    const path = isObj(f) ? str(f.jsonPath) : '';
    if (!path) { out.push(required(fa, '')); return; }
    const r = schemaAtPath(schema, path);
    if ('error' in r) { out.push(invalid(fa, path, `is an invalid path: ${r.error}`)); return; }
    if (r.segments[0] === 'metadata') out.push(invalid(fa, path, 'must not point to fields in metadata'));
    if (!['string', 'boolean', 'integer'].includes(str(r.schema.type))) out.push(invalid(fa, path, 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'));
    const key = r.segments.join('.');
    if (seen.has(key)) out.push(fieldError.duplicate(fa, path));
    else seen.add(key);
  });
  if (seen.size > MAX_SELECTABLE_FIELDS) out.push({ reason: 'FieldValueTooMany', field: at, message: `Too many: ${seen.size}: must have at most ${MAX_SELECTABLE_FIELDS} items` });
  return out;
}

/** What several versions share is checked once, at the top-level field the reference moves it to. */
interface Shared { schema: boolean; subresources: boolean; columns: boolean }

function validateVersion(v: Props, at: string, shared: Shared, anyStatus: boolean): FieldCause[] {
  const out: FieldCause[] = [];
  const nameErrs = isDNS1035Label(str(v.name));
  if (nameErrs.length) out.push(invalid(`${at}.name`, v.name, join(nameErrs)));
  if (v.deprecationWarning !== undefined) {
    if (v.deprecated !== true) out.push(invalid(`${at}.deprecationWarning`, v.deprecationWarning, 'can only be set for deprecated versions'));
    else if (str(v.deprecationWarning).length > 256) out.push(invalid(`${at}.deprecationWarning`, v.deprecationWarning, 'must be <= 256 characters long'));
    else if (str(v.deprecationWarning) === '') out.push(invalid(`${at}.deprecationWarning`, v.deprecationWarning, 'must not be an empty string'));
  }
  const subs = isObj(v.subresources) ? v.subresources : {};
  const schema = isObj(v.schema) ? v.schema.openAPIV3Schema : undefined;
  if (!shared.schema) out.push(...validateSchema(schema, `${at}.schema`, shared.subresources ? anyStatus : isObj(subs.status)));
  if (schema !== undefined && v.selectableFields !== undefined) out.push(...validateSelectableFields(v.selectableFields, schema, `${at}.selectableFields`));
  if (!shared.subresources) out.push(...validateScale(subs, `${at}.subresources`));
  if (!shared.columns) out.push(...validateColumns(v.additionalPrinterColumns, `${at}.additionalPrinterColumns`));
  return out;
}

/** A schema (`at` is ".schema" of a version or "spec.validation"): structural rules, then its rules' compilation and cost. */
function validateSchema(schema: unknown, at: string, statusEnabled: boolean): FieldCause[] {
  if (schema === undefined) return []; // "schemas are required", reported with the spec
  const out = structuralErrors(schema, `${at}.openAPIV3Schema`, statusEnabled);
  // Rules compile (and their estimated cost is checked) only on a structural schema.
  if (!out.length) compileRules(schema as Props, `${at}.openAPIV3Schema`, out);
  return out;
}

function validateScale(subs: Props, at: string): FieldCause[] {
  const out: FieldCause[] = [];
  if (isObj(subs.scale)) {
    const sc = subs.scale;
    const check = (f: string, under: string[], msg: string, req: boolean) => {
      const p = str(sc[f]);
      const fa = `${at}.scale.${f}`;
      if (!p) { if (req) out.push(required(fa, '')); return; }
      const e = simpleJSONPath(p, fa);
      if (e.length) out.push(...e);
      else if (!under.some((u) => p.startsWith(u))) out.push(invalid(fa, p, msg));
    };
    check('specReplicasPath', ['.spec.'], 'should be a json path under .spec', true);
    check('statusReplicasPath', ['.status.'], 'should be a json path under .status', true);
    check('labelSelectorPath', ['.spec.', '.status.'], 'should be a json path under either .spec or .status', false);
  }
  return out;
}

function validateColumns(columns: unknown, at: string): FieldCause[] {
  const out: FieldCause[] = [];
  (Array.isArray(columns) ? columns : []).forEach((c: Props, i: number) => {
    const ca = `${at}[${i}]`;
    if (!isObj(c)) return;
    if (!str(c.name)) out.push(required(`${ca}.name`, ''));
    if (!str(c.type)) out.push(required(`${ca}.type`, `must be one of ${join(COLUMN_TYPES)}`));
    else if (!COLUMN_TYPES.includes(c.type)) out.push(invalid(`${ca}.type`, c.type, `must be one of ${join(COLUMN_TYPES)}`));
    if (str(c.format) && !COLUMN_FORMATS.includes(c.format)) out.push(invalid(`${ca}.format`, c.format, `must be one of ${join(COLUMN_FORMATS)}`));
    if (!str(c.jsonPath)) out.push(required(`${ca}.JSONPath`, ''));
    else out.push(...simpleJSONPath(c.jsonPath, `${ca}.JSONPath`));
  });
  return out;
}

/**
 * Whether every version carries the same value of a per-version field: the reference's internal form
 * then holds it once at the top (spec.validation, spec.subresources, spec.additionalPrinterColumns),
 * which is where its errors are reported.
 */
function identical(versions: Props[], pick: (v: Props) => unknown): boolean {
  if (!versions.length) return false;
  const first = pick(versions[0]);
  return versions.every((v) => isDeepStrictEqual(pick(v), first));
}

function validateConversion(c: unknown): FieldCause[] {
  if (!isObj(c)) return [];
  const at = 'spec.conversion';
  const out: FieldCause[] = [];
  if (!c.strategy) out.push(required(`${at}.strategy`, ''));
  else if (c.strategy !== 'None' && c.strategy !== 'Webhook') out.push(notSupported(`${at}.strategy`, c.strategy, ['None', 'Webhook']));
  const wh = isObj(c.webhook) ? c.webhook : undefined;
  if (c.strategy === 'Webhook') {
    const cc = wh && isObj(wh.clientConfig) ? wh.clientConfig : undefined;
    if (!cc) out.push(required(`${at}.webhookClientConfig`, 'required when strategy is set to Webhook'));
    else if ((cc.url === undefined) === (cc.service === undefined)) out.push(required(`${at}.webhookClientConfig`, 'exactly one of url or service is required'));
    else if (cc.url !== undefined) {
      let u: URL | undefined;
      try { u = new URL(str(cc.url)); } catch { out.push(invalid(`${at}.webhookClientConfig.url`, cc.url, 'host must be specified')); }
      if (u && u.protocol !== 'https:') out.push(invalid(`${at}.webhookClientConfig.url`, cc.url, "'https' is the only allowed URL scheme"));
      if (u && (u.username || u.password)) out.push(invalid(`${at}.webhookClientConfig.url`, cc.url, 'user information is not permitted in the URL'));
      if (u && (u.hash || u.search)) out.push(invalid(`${at}.webhookClientConfig.url`, cc.url, `${u.hash ? 'fragments are' : 'query parameters are'} not permitted in the URL`));
    } else if (isObj(cc.service)) {
      if (!str(cc.service.name)) out.push(required(`${at}.webhookClientConfig.service.name`, 'service name is required'));
      if (!str(cc.service.namespace)) out.push(required(`${at}.webhookClientConfig.service.namespace`, 'service namespace is required'));
    }
    const vs = wh?.conversionReviewVersions;
    if (!Array.isArray(vs) || !vs.length) out.push(required(`${at}.conversionReviewVersions`, ''));
    else if (!vs.some((v) => v === 'v1' || v === 'v1beta1')) out.push(invalid(`${at}.conversionReviewVersions`, vs, 'must include at least one of v1, v1beta1'));
  } else if (wh) {
    if (wh.clientConfig !== undefined) out.push(forbidden(`${at}.webhookClientConfig`, 'should not be set when strategy is not set to Webhook'));
    if (Array.isArray(wh.conversionReviewVersions) && wh.conversionReviewVersions.length) out.push(forbidden(`${at}.conversionReviewVersions`, 'should not be set when strategy is not set to Webhook'));
  }
  return out;
}

/** The reference's v1 rules (ValidateCustomResourceDefinition and ...Update), in its order and words. */
export function validateCRD(obj: KObject, old: KObject | undefined, brand: Brand, subresource?: string): FieldCause[] {
  const out: FieldCause[] = [];
  // A status write is checked for its accepted names only (ValidateUpdateCustomResourceDefinitionStatus):
  // the spec it carries is the stored one, and its schemas were checked when written.
  if (subresource === 'status' && old) {
    const st = (isObj(obj.status) ? obj.status : {}) as Props;
    return isObj(st.acceptedNames) ? validateNames(st.acceptedNames, 'status.acceptedNames') : [];
  }
  const spec = (isObj(obj.spec) ? obj.spec : {}) as Props;
  const names = (isObj(spec.names) ? spec.names : {}) as Props;
  const group = str(spec.group);
  if (!old && obj.metadata?.name !== `${str(names.plural)}.${group}`) out.push(invalid('metadata.name', obj.metadata?.name ?? '', 'must be spec.names.plural+"."+spec.group'));
  if (!group) out.push(required('spec.group', ''));
  else if (isDNS1123Subdomain(group).length) out.push(invalid('spec.group', group, join(isDNS1123Subdomain(group))));
  else if (group.split('.').length < 2) out.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  if (!spec.scope) out.push(required('spec.scope', ''));
  else if (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced') out.push(notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
  const versions = (Array.isArray(spec.versions) ? spec.versions : []) as Props[];
  const objs = versions.filter(isObj);
  const shared: Shared = {
    schema: identical(objs, (v) => v.schema),
    subresources: identical(objs, (v) => v.subresources),
    columns: identical(objs, (v) => v.additionalPrinterColumns),
  };
  const anyStatus = objs.some((v) => isObj(v.subresources) && isObj(v.subresources.status));
  const schemaOf = (v: Props) => (isObj(v.schema) ? v.schema.openAPIV3Schema : undefined);
  // Every version needs a schema, unless one shared schema stands for all.
  if (!(shared.schema && objs.length && schemaOf(objs[0]) !== undefined)) {
    versions.forEach((v, i) => { if (isObj(v) && schemaOf(v) === undefined) out.push(required(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required')); });
  }
  const seen = new Set<string>();
  let unique = true;
  let storage = 0;
  versions.forEach((v, i) => {
    if (!isObj(v)) return;
    if (v.storage === true) storage++;
    if (seen.has(v.name)) unique = false;
    seen.add(v.name);
    out.push(...validateVersion(v, `spec.versions[${i}]`, shared, anyStatus));
  });
  if (!unique) out.push(invalid('spec.versions', versions, 'must contain unique version names'));
  if (storage !== 1) out.push(invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  if (!names.plural) out.push(required('spec.names.plural', ''));
  if (!names.singular) out.push(required('spec.names.singular', ''));
  if (!names.kind) out.push(required('spec.names.kind', ''));
  if (!names.listKind) out.push(required('spec.names.listKind', ''));
  out.push(...validateNames(names, 'spec.names'));
  // The shared parts, after the names, as the reference checks its top-level fields.
  const first = objs[0] ?? {};
  if (shared.schema) {
    const schema = isObj(first.schema) ? first.schema.openAPIV3Schema : undefined;
    out.push(...validateSchema(schema, 'spec.validation', anyStatus));
  }
  if (shared.subresources) out.push(...validateScale(isObj(first.subresources) ? first.subresources : {}, 'spec.subresources'));
  if (shared.columns) out.push(...validateColumns(first.additionalPrinterColumns, 'spec.additionalPrinterColumns'));
  if (spec.preserveUnknownFields === true && (old?.spec as Props | undefined)?.preserveUnknownFields !== true) {
    out.push(invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  }
  out.push(...validateConversion(spec.conversion));
  // Status.
  const status = (isObj(obj.status) ? obj.status : {}) as Props;
  if (isObj(status.acceptedNames)) out.push(...validateNames(status.acceptedNames, 'status.acceptedNames'));
  const stored = Array.isArray(status.storedVersions) ? status.storedVersions : [];
  if (!stored.length) out.push(invalid('status.storedVersions', stored, 'must have at least one stored version'));
  else {
    const sv = versions.find((v) => isObj(v) && v.storage === true);
    if (sv && !stored.includes(sv.name)) out.push(invalid('status.storedVersions', stored, `must have the storage version ${sv.name}`));
    stored.forEach((v: string, i: number) => {
      if (!versions.some((x) => isObj(x) && x.name === v)) out.push(invalid(`status.storedVersions[${i}]`, v, `missing from spec.versions; ${v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${v} and removes ${v} from status.storedVersions`));
    });
  }
  // Groups of the ecosystem's own domain need the API-approval annotation.
  if (brand.name === 'kubernetes' && (group === 'k8s.io' || group.endsWith('.k8s.io') || group === 'kubernetes.io' || group.endsWith('.kubernetes.io')) && !old) {
    const ann = obj.metadata?.annotations?.['api-approved.kubernetes.io'];
    const at = 'metadata.annotations[api-approved.kubernetes.io]';
    if (ann === undefined) out.push(required(at, `protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111`));
    else if (!/^(https?:\/\/|unapproved)/.test(ann)) out.push(invalid(at, ann, 'protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111'));
  }
  if (old) {
    const os = (isObj(old.spec) ? old.spec : {}) as Props;
    if (group !== os.group) out.push(invalid('spec.group', group, 'field is immutable'));
    if (names.plural !== os.names?.plural) out.push(invalid('spec.names.plural', names.plural, 'field is immutable'));
    // Once established, stored objects live under the scope and kind they were written with.
    const established = ((old.status as Props | undefined)?.conditions ?? []).some((c: Props) => c?.type === 'Established' && c.status === 'True');
    if (established && spec.scope !== os.scope) out.push(invalid('spec.scope', spec.scope, 'field is immutable'));
    if (established && names.kind !== os.names?.kind) out.push(invalid('spec.names.kind', names.kind, 'field is immutable'));
  }
  return out;
}

// ---------------------------------------------------------------- the type

export function crdType(brand: Brand): TypeDef {
  return withProtobuf({
    group: crdGroup(brand), version: 'v1', kind: 'CustomResourceDefinition', resource: 'customresourcedefinitions', singular: 'customresourcedefinition',
    namespaced: false, shortNames: ['crd', 'crds'], categories: ['api-extensions'], subresources: ['status'], statusField: 'status', hasSpec: true,
    schema: { type: 'ref', ref: defName(brand, 'CustomResourceDefinition') }, definitions: apiextensionsDefinitions(brand), definitionName: defName(brand, 'CustomResourceDefinition'), describe: brandDescriber(brand),
    defaults, validate: validateCRD,
  }, brand);
}

const plugin: PluginModule<'types'> = {
  kind: 'types',
  contract: CONTRACT_VERSION,
  name: 'apiextensions',
  create: () => ({ types: (brand: Brand) => [crdType(brand)] }),
};

export default plugin;
