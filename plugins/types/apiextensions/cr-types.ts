// A custom resource definition's served versions as TypeDefs: the same data the built-in catalog
// gives the kernel (names, scope, sub-resources, columns, schema), plus the per-version strategy
// hooks (defaulting, value validation). Everything is compiled here, once per definition change.
import { publishedSchemas } from './openapi.js';
import type { Brand } from '../../../kernel/contracts/brand.js';
import type { FieldCause, KObject, Schema, TableColumn, TypeDef } from '../../../kernel/contracts/index.js';
import { definitionName } from '../../../kernel/api/openapi/index.js';
import { age } from '../builtin/columns.js';
import { compileRules, evaluateRules } from './cel.js';
import { converterFor, type WebhookCall } from './conversion.js';
import { compilePath } from './jsonpath.js';
import { applyDefaults, compileValues, hasDefaults, toSchema, type Props } from './schema.js';
import { isObj } from '../../lib/json.js';

const str = (v: unknown) => (typeof v === 'string' ? v : '');

const AGE_DESCRIPTION = 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** A printer column as the reference's table convertor fills it: the first match, typed by the column. */
function column(c: Props): TableColumn {
  // A path outside the subset leaves the cell empty rather than the version unserved.
  let find: (obj: unknown) => unknown[];
  try { find = compilePath(str(c.jsonPath)); } catch { find = () => []; }
  const type = (['integer', 'number', 'boolean', 'date', 'string'].includes(c.type) ? c.type : 'string') as TableColumn['type'];
  return {
    name: str(c.name), type, format: str(c.format) || undefined, priority: typeof c.priority === 'number' ? c.priority : 0,
    description: str(c.description) || `Custom resource definition column (in JSONPath format): ${str(c.jsonPath)}`,
    cell: (obj: KObject, now: number) => {
      const v = find(obj)[0];
      if (v === undefined || v === null) return null;
      switch (type) {
        case 'integer': return typeof v === 'number' ? Math.trunc(v) : null;
        case 'number': return typeof v === 'number' ? v : null;
        case 'boolean': return typeof v === 'boolean' ? v : null;
        case 'date': return typeof v === 'string' ? (Number.isNaN(Date.parse(v)) ? '<invalid>' : age(v, now)) : null;
        default: return typeof v === 'string' ? v : JSON.stringify(v);
      }
    },
  };
}

/** The definition's state the served types depend on: a change here means serving anew. */
export function servingKey(crd: KObject): string {
  const st = (crd.status ?? {}) as Props;
  return JSON.stringify([crd.spec, st.acceptedNames, !!crd.metadata?.deletionTimestamp]);
}

/**
 * The TypeDefs of every served version, preferred version first (the reference's version priority).
 * `metaDefs` holds ObjectMeta and the other shared definitions the schemas refer to.
 */
export function customResourceTypes(crd: KObject, brand: Brand, metaDefs: Record<string, Schema>, sortVersions: (vs: string[]) => string[], webhook?: WebhookCall): TypeDef[] {
  const spec = (crd.spec ?? {}) as Props;
  const names = ((crd.status as Props | undefined)?.acceptedNames ?? spec.names ?? {}) as Props;
  const group = str(spec.group);
  const versions = (Array.isArray(spec.versions) ? spec.versions : []).filter((v: Props) => isObj(v) && v.served === true);
  const order = sortVersions(versions.map((v: Props) => str(v.name)));
  const metaRef = definitionName(brand, 'meta.v1.ObjectMeta');
  const terminating = !!crd.metadata?.deletionTimestamp;
  // With several versions (or objects left in an older storage version) objects are converted.
  const all = (Array.isArray(spec.versions) ? spec.versions : []).filter(isObj);
  const storageVersion = str(all.find((v: Props) => v.storage === true)?.name);
  const stored = ((crd.status as Props | undefined)?.storedVersions ?? []) as string[];
  const convert = all.length > 1 || stored.some((v) => v !== storageVersion) ? converterFor(crd, brand, webhook) : undefined;
  // selectableFields (1.30+): field selectors read from the stored object, the union of every
  // served version's paths (the cache keeps one set of field values per object, whatever the version).
  const selectable = new Set<string>();
  for (const v of versions) for (const f of (Array.isArray(v.selectableFields) ? v.selectableFields : [])) if (isObj(f) && str(f.jsonPath).startsWith('.')) selectable.add(str(f.jsonPath).slice(1));
  const fieldSelectors: Record<string, (obj: KObject) => string> = {};
  for (const p of selectable) {
    const segs = p.split('.');
    fieldSelectors[p] = (obj) => {
      let cur: unknown = obj;
      for (const s of segs) cur = isObj(cur) ? cur[s] : undefined;
      // an absent field selects as the empty string, as in the reference
      return typeof cur === 'string' ? cur : typeof cur === 'number' || typeof cur === 'boolean' ? String(cur) : '';
    };
  }
  const out: TypeDef[] = [];
  for (const name of order) {
    const v = versions.find((x: Props) => x.name === name)!;
    const props = (isObj(v.schema) && isObj(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) as Props;
    const subs = isObj(v.subresources) ? v.subresources : {};
    const t: TypeDef = {
      group, version: name, kind: str(names.kind), resource: str(names.plural), singular: str(names.singular) || str(names.kind).toLowerCase(),
      namespaced: spec.scope === 'Namespaced', hasSpec: true, strategicMerge: false, unstructured: true,
      definitionName: `${group.split('.').reverse().join('.')}.${name}.${str(names.kind)}`,
      schema: toSchema(props, metaRef), definitions: metaDefs,
    };
    // published as the reference's CRD OpenAPI builder publishes it (the schema as written)
    const rawSchema = isObj(v.schema) && isObj(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema as Props : undefined;
    t.openapi = publishedSchemas(rawSchema, { kind: str(names.kind), listKind: str(names.listKind) || `${str(names.kind)}List`, plural: str(names.plural) }, t.definitionName!, metaRef, definitionName(brand, 'meta.v1.ListMeta'));
    if (Array.isArray(names.shortNames) && names.shortNames.length) t.shortNames = [...names.shortNames];
    if (Array.isArray(names.categories) && names.categories.length) t.categories = [...names.categories];
    if (isObj(subs.status)) {
      t.subresources = ['status'];
      t.statusField = 'status';
    }
    if (isObj(subs.scale)) {
      t.subresources = [...(t.subresources ?? []), 'scale'];
      const path = (p: unknown) => str(p).replace(/^\./, '');
      t.scale = { specReplicasPath: path(subs.scale.specReplicasPath), statusReplicasPath: path(subs.scale.statusReplicasPath) };
      if (str(subs.scale.labelSelectorPath)) t.scale.labelSelectorPath = path(subs.scale.labelSelectorPath);
    }
    const cols = Array.isArray(v.additionalPrinterColumns) && v.additionalPrinterColumns.length
      ? v.additionalPrinterColumns.filter(isObj)
      : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: AGE_DESCRIPTION }];
    t.columns = cols.map(column);
    if (v.deprecated === true) t.deprecationWarning = str(v.deprecationWarning) || `${group}/${name} ${str(names.kind)} is deprecated`;
    // The kernel asks for an apiVersion; the converter (None or webhook) takes a version of the CRD's group.
    if (convert) { t.convert = (objs, apiVersion) => convert(objs, apiVersion.slice(apiVersion.indexOf('/') + 1)); t.storageVersion = storageVersion; }
    if (terminating) t.createForbidden = 'create not allowed while custom resource definition is terminating';
    const values = compileValues(props);
    // Rules are compiled on the first write too, not when the version is served.
    let rules: ReturnType<typeof compileRules> | null = null;
    t.validate = (obj: KObject, old: KObject | undefined): FieldCause[] => {
      const causes = values(obj);
      if (rules === null) rules = compileRules(props, '');
      return rules ? [...causes, ...evaluateRules(rules, obj, old)] : causes;
    };
    // A deep schema's value rules are compiled before the write is checked, in pieces, other requests run in between.
    t.strategy = { beginCreate: () => values.ready(), beginUpdate: () => values.ready() };
    if (hasDefaults(props)) t.defaults = (obj: KObject) => applyDefaults(obj, props);
    if (selectable.size) t.fieldSelectors = fieldSelectors;
    out.push(t);
  }
  return out;
}
