// Generator of schemas.json, run by hand when the catalog or the reference release changes:
//
//   node dist/plugins/types/builtin/gen-schemas.js <reference swagger.json> [output file]
//
// It reads the reference server's OpenAPI v2 document as data and keeps only structure: field
// names, scalar types and the formats that change how a value is read, required fields, and the
// merge markers. Descriptions, defaults, examples and unions are dropped. Only definitions
// reachable from the catalog's kinds are written, keyed by neutral names ("core.v1.Pod",
// "meta.v1.ObjectMeta"); schemas.ts renames them into each brand's style at load time.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brandGroup, getBrand } from '../../../kernel/contracts/brand.js';
import type { Schema } from '../../../kernel/contracts/index.js';
import { CATALOG } from './catalog.js';

type Json = Record<string, any>;

/** Prefix of the reference's type names; the rest of the name becomes our neutral name. */
const API = 'io.k8s.api.';
const MACHINERY = 'io.k8s.apimachinery.pkg.';
/** Machinery packages we carry, and the neutral first segment each becomes. */
const MACHINERY_PACKAGES: Record<string, string> = {
  'apis.meta.': 'meta.',
  'api.resource.': 'resource.',
  'util.intstr.': 'intstr.',
  'runtime.': 'runtime.',
};

/**
 * Neutral name of a catalog kind's definition: the group's first label ("core" for the core group)
 * then version and kind: "core.v1.Pod", "apps.v1.Deployment", "networking.v1.Ingress". The same in
 * both brands, since the group's domain is dropped.
 */
export function kindDefinition(group: string, version: string, kind: string): string {
  return `${group === '' ? 'core' : group.split('.')[0]}.${version}.${kind}`;
}

/** "io.k8s.api.core.v1.Pod" → "core.v1.Pod"; "io.k8s.apimachinery.pkg.apis.meta.v1.Time" → "meta.v1.Time". */
export function neutralName(refName: string): string {
  if (refName.startsWith(API)) return refName.slice(API.length);
  if (refName.startsWith(MACHINERY)) {
    const rest = refName.slice(MACHINERY.length);
    for (const [pkg, short] of Object.entries(MACHINERY_PACKAGES)) if (rest.startsWith(pkg)) return short + rest.slice(pkg.length);
  }
  throw new Error(`no neutral name for definition ${refName}`);
}

const refTarget = (ref: string) => ref.replace(/^#\/definitions\//, '');

/** Merge markers of one reference schema node, in our field names. */
function markers(node: Json): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  if (node['x-kubernetes-list-type']) m.listType = node['x-kubernetes-list-type'];
  if (node['x-kubernetes-list-map-keys']) m.mapKeys = [...node['x-kubernetes-list-map-keys']];
  if (node['x-kubernetes-map-type']) m.mapType = node['x-kubernetes-map-type'];
  if (node['x-kubernetes-patch-strategy']) m.patchStrategy = node['x-kubernetes-patch-strategy'];
  if (node['x-kubernetes-patch-merge-key']) m.patchMergeKey = node['x-kubernetes-patch-merge-key'];
  return m;
}

/** Formats that change how a value is read or checked; others (none today) are dropped. */
const KEPT_FORMATS = new Set(['int32', 'int64', 'double', 'date-time', 'byte']);

/** Quantities are written as JSON strings or numbers (the v2 document says string only). */
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

export class Converter {
  /** Reference names reached so far, converted or waiting. */
  readonly reached = new Set<string>();
  private queue: string[] = [];
  readonly out: Record<string, Schema> = {};

  constructor(private defs: Json) {}

  /** Converts the closure of the given reference definitions. */
  run(roots: string[]): Record<string, Schema> {
    for (const r of roots) this.reach(r);
    while (this.queue.length) {
      const name = this.queue.shift()!;
      this.out[neutralName(name)] = name === QUANTITY ? { type: 'string', format: 'quantity' } : this.node(this.defs[name], name);
    }
    return Object.fromEntries(Object.keys(this.out).sort().map((k) => [k, this.out[k]]));
  }

  private reach(name: string) {
    if (!this.defs[name]) throw new Error(`reference document has no definition ${name}`);
    if (this.reached.has(name)) return;
    this.reached.add(name);
    this.queue.push(name);
  }

  private node(n: Json, where: string): Schema {
    if (n.$ref) {
      const target = refTarget(n.$ref);
      this.reach(target);
      const m = markers(n);
      if (!Object.keys(m).length) return { type: 'ref', ref: neutralName(target) };
      // A marker written on a reference belongs to the field, not to the shared definition, and our
      // Schema has no markers on refs: the field gets its own copy of the (object) definition, which
      // names the definition so the documents can publish the reference the reference publishes.
      const inner = this.node(this.defs[target], target);
      if (inner.type !== 'object') throw new Error(`${where}: markers on a reference to a non-object ${target}`);
      return { ...inner, ...m, definition: neutralName(target) } as Schema;
    }
    const type = n.type as string | undefined;
    if (type === 'object' || (!type && (n.properties || n.additionalProperties))) {
      const s: Extract<Schema, { type: 'object' }> = { type: 'object' };
      if (n.properties) {
        s.fields = {};
        for (const k of Object.keys(n.properties).sort()) s.fields[k] = this.node(n.properties[k], `${where}.${k}`);
      }
      if (n.additionalProperties && typeof n.additionalProperties === 'object') s.additional = this.node(n.additionalProperties, `${where}[*]`);
      if (Array.isArray(n.required) && n.required.length) s.required = [...n.required];
      Object.assign(s, markers(n));
      // A struct written as raw JSON (FieldsV1, RawExtension): any keys.
      if (!s.fields && !s.additional) s.preserveUnknown = true;
      return s;
    }
    if (type === 'array') {
      const s: Extract<Schema, { type: 'array' }> = { type: 'array', items: this.node(n.items ?? {}, `${where}[]`) };
      Object.assign(s, markers(n));
      return s;
    }
    if (type === 'string' && n.format === 'int-or-string') return { type: 'int-or-string' };
    if (type === 'string' || type === 'integer' || type === 'number' || type === 'boolean') {
      const s: { type: 'string' | 'integer' | 'number' | 'boolean'; format?: string } = { type };
      if (n.format && KEPT_FORMATS.has(n.format)) s.format = n.format;
      return s;
    }
    if (!type) return { type: 'any' };
    throw new Error(`${where}: unexpected schema type ${type}`);
  }
}

/**
 * Kinds served outside the catalog whose bodies are typed all the same: the access reviews
 * (plugins/types/access) and CertificateSigningRequest (plugins/types/certificates), decoded and
 * field-checked as the reference decodes them.
 */
export const REVIEW_KINDS: readonly { group: string; version: string; kind: string }[] = [
  ...['SelfSubjectAccessReview', 'SubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview'].map((kind) => ({ group: 'authorization.cluster.io', version: 'v1', kind })),
  { group: 'authentication.cluster.io', version: 'v1', kind: 'TokenReview' },
  { group: 'authentication.cluster.io', version: 'v1', kind: 'SelfSubjectReview' },
  { group: 'authentication.cluster.io', version: 'v1beta1', kind: 'SelfSubjectReview' },
  { group: 'certificates.cluster.io', version: 'v1', kind: 'CertificateSigningRequest' },
];

/** Reference definition of each catalog kind (and review kind), found by its group-version-kind extension. */
export function catalogRoots(defs: Json): Map<string, string> {
  const kube = getBrand('kubernetes');
  const byGvk = new Map<string, string>();
  for (const [name, d] of Object.entries(defs)) {
    for (const g of (d as Json)['x-kubernetes-group-version-kind'] ?? []) byGvk.set(`${g.group}/${g.version}/${g.kind}`, name);
  }
  const roots = new Map<string, string>();
  for (const r of [...CATALOG, ...REVIEW_KINDS] as { group: string; version: string; kind: string; shapeOf?: string }[]) {
    if (r.shapeOf) continue; // a later release's version: published from another version's definitions
    const found = byGvk.get(`${brandGroup(kube, r.group)}/${r.version}/${r.kind}`);
    if (!found) throw new Error(`reference document has no kind ${r.kind} in ${r.group || 'core'}/${r.version}`);
    const expected = kindDefinition(r.group, r.version, r.kind);
    if (neutralName(found) !== expected) throw new Error(`${r.kind}: reference name ${found} does not map to ${expected}`);
    roots.set(expected, found);
  }
  return roots;
}

export function generate(swagger: Json): Record<string, Schema> {
  const defs = swagger.definitions as Json;
  const roots = catalogRoots(defs);
  return new Converter(defs).run([...roots.values()]);
}

/**
 * A generator's command line: `<input> [output]`, the output by default the source tree's copy of
 * `file` (dist/plugins/types/builtin → plugins/types/builtin), written one definition per line
 * (compact, and a catalog change reads as a small diff). Returns the path written.
 */
export function writeGenerated(argv: string[], usage: string, file: string, make: (input: string) => Record<string, unknown>): string {
  const [input, output] = argv;
  if (!input) {
    process.stderr.write(`usage: ${usage}\n`);
    process.exit(2);
  }
  const here = path.dirname(fileURLToPath(import.meta.url));
  const target = output ?? path.resolve(here, '../../../../plugins/types/builtin', file);
  const data = make(readFileSync(input, 'utf8'));
  writeFileSync(target, '{\n' + Object.entries(data).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',\n') + '\n}\n');
  process.stdout.write(`${target}: ${Object.keys(data).length} definitions\n`);
  return target;
}

function main(argv: string[]) {
  writeGenerated(argv, 'node dist/plugins/types/builtin/gen-schemas.js <swagger.json> [schemas.json]', 'schemas.json', (text) => generate(JSON.parse(text) as Json));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
