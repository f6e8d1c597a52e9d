// Structural schemas of the built-in types. schemas.json (written by gen-schemas.ts) holds our own
// compact catalog keyed by neutral names ("core.v1.Pod", "meta.v1.ObjectMeta"); here the names are
// turned into the brand's style ("io.k8s.api.core.v1.Pod" / "io.cluster.api.core.v1.Pod") once per
// brand, and each TypeDef gets its schema (a ref), the shared definitions and its definition name.
import type { Brand } from '../../../kernel/contracts/brand.js';
import type { DefinitionDoc, Schema, TypeDef } from '../../../kernel/contracts/index.js';
import { definitionName } from '../../../kernel/api/openapi/index.js';
import { kindDefinition } from './gen-schemas.js';
import { LATER_RELEASES } from './catalog.js';
import raw from './schemas.json' with { type: 'json' };
import enums from './enums.json' with { type: 'json' };
import { referenceDocs } from './descriptions.js';

/** The catalog as written: neutral names, refs between them. */
export const NEUTRAL_SCHEMAS = raw as unknown as Readonly<Record<string, Schema>>;

const byBrand = new Map<string, Readonly<Record<string, Schema>>>();

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

/** A copy of a schema with every ref renamed. */
function rename(s: Schema, name: (neutral: string) => string): Schema {
  switch (s.type) {
    case 'ref':
      return { ...s, ref: name(s.ref) };
    case 'object': {
      const out = { ...s };
      if (s.definition) out.definition = name(s.definition);
      if (s.fields) out.fields = Object.fromEntries(Object.entries(s.fields).map(([k, v]) => [k, rename(v, name)]));
      if (s.additional) out.additional = rename(s.additional, name);
      if (s.required) out.required = [...s.required];
      return out;
    }
    case 'array':
      return { ...s, items: rename(s.items, name), ...(s.mapKeys ? { mapKeys: [...s.mapKeys] } : {}) };
    default:
      return { ...s };
  }
}

/** All built-in definitions named in the brand's style (built once per brand, frozen, shared by every TypeDef). */
export function brandDefinitions(brand: Brand): Readonly<Record<string, Schema>> {
  let defs = byBrand.get(brand.name);
  if (!defs) {
    const name = (n: string) => definitionName(brand, n);
    const all = Object.fromEntries(Object.entries(NEUTRAL_SCHEMAS).map(([k, v]) => [name(k), rename(v, name)]));
    // A later release's version with another version's shape: its kind's definition is that one's.
    for (const r of LATER_RELEASES) {
      if (r.shapeOf) all[name(kindDefinition(r.group, r.version, r.kind))] = all[name(kindDefinition(r.group, r.shapeOf, r.kind))];
    }
    defs = deepFreeze(all);
    byBrand.set(brand.name, defs);
  }
  return defs;
}

const describers = new Map<string, (definitionName: string) => DefinitionDoc | undefined>();

/**
 * The reference's documentation of the built-in definitions by brand name (TypeDef.describe): read
 * from the kubernetes-types package when the first OpenAPI document is built, not at start, with the
 * allowed values of enum fields from enums.json (gen-enums.ts).
 */
export function brandDescriber(brand: Brand): (definitionName: string) => DefinitionDoc | undefined {
  let d = describers.get(brand.name);
  if (!d) {
    let neutral: Map<string, string> | undefined;
    d = (def) => {
      if (!neutral) {
        const name = (n: string) => definitionName(brand, n);
        neutral = new Map(Object.keys(NEUTRAL_SCHEMAS).map((k) => [name(k), k]));
        // a later release's version with another version's shape has that one's documentation too
        for (const r of LATER_RELEASES) {
          if (r.shapeOf) neutral.set(name(kindDefinition(r.group, r.version, r.kind)), kindDefinition(r.group, r.shapeOf, r.kind));
        }
      }
      const n = neutral.get(def);
      if (n === undefined) return undefined;
      const doc = referenceDocs()?.get(n);
      const values = (enums as Record<string, Record<string, string[]>>)[n];
      return values ? withEnums(doc ?? { fields: {} }, values) : doc;
    };
    describers.set(brand.name, d);
  }
  return d;
}

/**
 * A definition's documentation with its enum fields' values, listed under each field's description
 * as the reference's documents list them (kubectl explain shows descriptions, not enum lists).
 */
function withEnums(doc: DefinitionDoc, values: Record<string, string[]>): DefinitionDoc {
  const fields = { ...doc.fields };
  for (const [f, vs] of Object.entries(values)) {
    const list = [...new Set(vs)].map((v) => ` - \`${JSON.stringify(v)}\``).join('\n');
    fields[f] = `${fields[f] ? `${fields[f]}\n\n` : ''}Possible enum values:\n${list}`;
  }
  return { ...doc, fields, enums: values };
}

/**
 * Gives a TypeDef its structural schema. `group` is the catalog row's group (placeholder domain or
 * the brand's, the neutral name ignores the domain). Types without a catalog schema stay unstructured.
 */
export function attachSchema(t: TypeDef, group: string, brand: Brand): void {
  const name = definitionName(brand, kindDefinition(group, t.version, t.kind));
  const defs = brandDefinitions(brand) as Record<string, Schema>;
  if (!defs[name]) return;
  t.schema = { type: 'ref', ref: name };
  t.definitions = defs;
  t.definitionName = name;
  t.describe = brandDescriber(brand);
}
