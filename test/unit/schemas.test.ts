import t from 'tap';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { getBrand } from '../../kernel/contracts/brand.js';
import type { Schema } from '../../kernel/contracts/index.js';
import { builtinTypes } from '../../plugins/types/builtin/index.js';
import { CATALOG } from '../../plugins/types/builtin/catalog.js';
import { generate, kindDefinition, neutralName } from '../../plugins/types/builtin/gen-schemas.js';
import { generateEnums } from '../../plugins/types/builtin/gen-enums.js';
import { brandDefinitions, NEUTRAL_SCHEMAS } from '../../plugins/types/builtin/schemas.js';

const cluster = getBrand('cluster');
const kube = getBrand('kubernetes');
type Json = Record<string, any>;

const jsonFile = fileURLToPath(new URL('../../../plugins/types/builtin/schemas.json', import.meta.url));

function refs(s: Schema, into: string[]): string[] {
  if (s.type === 'ref') into.push(s.ref);
  else if (s.type === 'object') {
    for (const f of Object.values(s.fields ?? {})) refs(f, into);
    if (s.additional) refs(s.additional, into);
  } else if (s.type === 'array') refs(s.items, into);
  return into;
}

t.test('schemas.json covers every catalog kind and is closed under refs', async (t) => {
  for (const r of CATALOG) t.ok(NEUTRAL_SCHEMAS[kindDefinition(r.group, r.version, r.kind)], `${r.kind} (${r.group || 'core'}/${r.version}) has a definition`);
  for (const [name, s] of Object.entries(NEUTRAL_SCHEMAS)) {
    for (const ref of refs(s, [])) t.ok(NEUTRAL_SCHEMAS[ref], `${name} → ${ref} is defined`);
  }
  t.equal(kindDefinition('', 'v1', 'Pod'), 'core.v1.Pod');
  t.equal(kindDefinition('networking.cluster.io', 'v1', 'Ingress'), 'networking.v1.Ingress');
  t.equal(kindDefinition('networking.k8s.io', 'v1', 'Ingress'), 'networking.v1.Ingress');
});

t.test('schemas.json holds structure only and stays small', async (t) => {
  const size = statSync(jsonFile).size;
  t.ok(size < 150_000, `schemas.json is ${size} bytes`);
  const allowed = new Set(['type', 'fields', 'additional', 'required', 'mapType', 'patchStrategy', 'preserveUnknown', 'items', 'listType', 'mapKeys',
    'patchMergeKey', 'format', 'ref', 'definition']);
  const bad = new Set<string>();
  const walk = (s: Json) => {
    for (const k of Object.keys(s)) if (!allowed.has(k)) bad.add(k);
    if (s.fields) for (const f of Object.values(s.fields as Json)) walk(f);
    if (s.additional) walk(s.additional);
    if (s.items) walk(s.items);
  };
  for (const s of Object.values(NEUTRAL_SCHEMAS)) walk(s as Json);
  t.same([...bad], [], 'no descriptions, defaults, examples or enums');
});

t.test('every built-in TypeDef carries its schema in both brands', async (t) => {
  for (const brand of [cluster, kube]) {
    const root = brand.name === 'kubernetes' ? 'io.k8s' : 'io.cluster';
    const types = builtinTypes(brand);
    const defs = types[0].definitions!;
    for (const x of types) {
      t.ok(x.schema && x.schema.type === 'ref', `${brand.name} ${x.kind}: schema is a ref`);
      t.equal(x.definitions, defs, 'one shared definitions map');
      t.ok(x.definitionName!.startsWith(`${root}.api.`), `${x.definitionName} in the brand's style`);
      const sch = x.schema;
      t.equal(sch?.type === 'ref' ? sch.ref : undefined, x.definitionName);
      t.ok(defs[x.definitionName!], `${x.definitionName} defined`);
    }
    t.ok(defs[`${root}.apimachinery.pkg.apis.meta.v1.ObjectMeta`], 'ObjectMeta under apimachinery');
    t.ok(defs[`${root}.apimachinery.pkg.util.intstr.IntOrString`], 'IntOrString under apimachinery');
    t.equal(brandDefinitions(brand), defs, 'built once per brand');
    t.ok(Object.isFrozen(defs) && Object.isFrozen(defs[`${root}.api.core.v1.PodSpec`]), 'shared definitions are frozen');
    const pod = types.find((x) => x.resource === 'pods')!;
    t.same(pod.definitionName, `${root}.api.core.v1.Pod`);
    const podFields = (defs[`${root}.api.core.v1.Pod`] as Json).fields;
    t.match(podFields.metadata, { type: 'ref', ref: `${root}.apimachinery.pkg.apis.meta.v1.ObjectMeta` }, 'refs renamed too');
  }
});

t.test('the reference\'s descriptions stay out of the definitions writes walk: types describe them for OpenAPI', async (t) => {
  for (const brand of [cluster, kube]) {
    const root = brand.name === 'kubernetes' ? 'io.k8s' : 'io.cluster';
    const types = builtinTypes(brand);
    const defs = types[0].definitions! as Record<string, Json>;
    const meta = `${root}.apimachinery.pkg.apis.meta.v1.ObjectMeta`;
    t.equal(defs[meta].description, undefined, 'no description held in the definitions');
    t.equal(defs[meta].fields.name.description, undefined, 'nor a field\'s');
    const doc = types[0].describe!(meta);
    t.match(doc?.description, /^ObjectMeta is metadata that all persisted resources must have/, 'the type is described on demand');
    t.match(doc?.fields.name, /^Name must be unique within a namespace\./, 'and its fields');
    // a later release's version with another version's shape has that one's documentation
    t.match(types[0].describe!(`${root}.api.flowcontrol.v1.FlowSchema`)?.description, /FlowSchema defines the schema of a group of flows/);
    t.equal(types[0].describe!(`${root}.api.example.v1.Nothing`), undefined, 'an unknown definition has none');
  }
});

t.test('merge markers of well-known fields', async (t) => {
  const S = NEUTRAL_SCHEMAS as Record<string, Json>;
  t.same(S['core.v1.PodSpec'].fields.containers, { type: 'array', items: { type: 'ref', ref: 'core.v1.Container' }, patchStrategy: 'merge', patchMergeKey: 'name' });
  t.same(S['core.v1.Container'].fields.ports.listType, 'map');
  t.same(S['core.v1.Container'].fields.ports.mapKeys, ['containerPort', 'protocol']);
  t.equal(S['core.v1.PodSpec'].fields.volumes.patchStrategy, 'merge,retainKeys');
  t.equal(S['core.v1.PodSpec'].fields.nodeSelector.mapType, 'atomic');
  t.equal(S['meta.v1.LabelSelector'].mapType, 'atomic');
  t.equal(S['meta.v1.ObjectMeta'].fields.finalizers.patchStrategy, 'merge');
  // Markers written next to a reference stay on the field: the definition is copied inline.
  t.equal(S['apps.v1.DeploymentSpec'].fields.strategy.patchStrategy, 'retainKeys');
  t.equal(S['apps.v1.DeploymentSpec'].fields.strategy.type, 'object');
  t.equal(S['policy.v1.PodDisruptionBudgetSpec'].fields.selector.patchStrategy, 'replace');
  t.equal(S['core.v1.PersistentVolumeSpec'].fields.claimRef.mapType, 'granular');
  t.same(S['intstr.IntOrString'], { type: 'int-or-string' });
  t.same(S['resource.Quantity'], { type: 'string', format: 'quantity' });
  t.same(S['meta.v1.Time'], { type: 'string', format: 'date-time' });
  t.same(S['meta.v1.FieldsV1'], { type: 'object', preserveUnknown: true });
  t.same(S['apps.v1.DeploymentSpec'].required, ['selector', 'template']);
});

// ---------------------------------------------------------------- against the reference's OpenAPI document

const swaggerFile = [
  fileURLToPath(new URL('../../../../shared/reference/openapi/swagger.json', import.meta.url)), // from dist/test/unit
  '../shared/reference/openapi/swagger.json', // from the repository root
].find((f) => existsSync(f));
const skip = swaggerFile ? false : 'reference OpenAPI document ../shared/reference/openapi/swagger.json not found';

t.test('schemas.json is what the generator makes of the reference document', { skip }, async (t) => {
  const swagger = JSON.parse(readFileSync(swaggerFile!, 'utf8')) as Json;
  const fresh = generate(swagger);
  t.same(Object.keys(fresh), Object.keys(NEUTRAL_SCHEMAS), 'same definitions');
  t.same(fresh, NEUTRAL_SCHEMAS, 'same content (re-run gen-schemas if the catalog changed)');
});

t.test('fields, required and markers match the reference definitions', { skip }, async (t) => {
  const defs = (JSON.parse(readFileSync(swaggerFile!, 'utf8')) as Json).definitions as Json;
  const byNeutral = new Map<string, Json>();
  for (const [name, d] of Object.entries(defs)) {
    try { byNeutral.set(neutralName(name), d as Json); } catch { /* a package we do not carry */ }
  }
  const MARKERS: [string, string][] = [['listType', 'x-kubernetes-list-type'], ['mapKeys', 'x-kubernetes-list-map-keys'], ['mapType', 'x-kubernetes-map-type'],
    ['patchStrategy', 'x-kubernetes-patch-strategy'], ['patchMergeKey', 'x-kubernetes-patch-merge-key']];
  let compared = 0;
  for (const [name, ours] of Object.entries(NEUTRAL_SCHEMAS as Record<string, Json>)) {
    const ref = byNeutral.get(name);
    if (!ref) { t.fail(`${name} has no reference definition`); continue; }
    if (ours.type !== 'object' || !ours.fields) continue;
    t.same(Object.keys(ours.fields).sort(), Object.keys(ref.properties ?? {}).sort(), `${name}: field names`);
    t.same([...(ours.required ?? [])].sort(), [...(ref.required ?? [])].sort(), `${name}: required`);
    for (const [m, x] of MARKERS) if (ref[x] !== undefined || ours[m] !== undefined) t.same(ours[m], ref[x], `${name}: ${x}`);
    for (const [field, p] of Object.entries(ref.properties ?? {}) as [string, Json][]) {
      const f = ours.fields[field] as Json;
      // A reference with markers of its own is carried as an inline copy of the definition: the
      // copy has the definition's markers and the field's.
      const want = p.$ref && f.type === 'object' ? { ...defs[p.$ref.slice('#/definitions/'.length)], ...p } : p;
      for (const [m, x] of MARKERS) {
        // A []byte field (a base64 string) is marked atomic in the reference's document; as a scalar
        // it merges atomically anyway, and the catalog keeps no list markers on strings.
        if (x === 'x-kubernetes-list-type' && p.type === 'string' && p.format === 'byte' && f[m] === undefined) continue;
        if (want[x] !== undefined || f[m] !== undefined) { t.same(f[m], want[x], `${name}.${field}: ${x}`); compared++; }
      }
      const refType = p.$ref ? 'ref' : p.type;
      const ourType = f.type === 'int-or-string' ? 'string' : f.type === 'any' ? undefined : f.type;
      if (refType === 'ref') t.ok(f.type === 'ref' || f.type === 'object', `${name}.${field}: reference`);
      else t.equal(ourType, refType, `${name}.${field}: type`);
    }
  }
  t.ok(compared > 100, `${compared} markers compared`);
});

// ---------------------------------------------------------------- enums, from the reference's generated definitions

const goDefinitions = [
  fileURLToPath(new URL('../../../../ref/k8s/pkg/generated/openapi/zz_generated.openapi.go', import.meta.url)), // from dist/test/unit
  '../ref/k8s/pkg/generated/openapi/zz_generated.openapi.go', // from the repository root
].find((f) => existsSync(f));

t.test('enums.json names string fields of the catalog', async (t) => {
  const enums = JSON.parse(readFileSync(fileURLToPath(new URL('../../../plugins/types/builtin/enums.json', import.meta.url)), 'utf8')) as Record<string, Record<string, string[]>>;
  t.ok(Object.keys(enums).length > 40, 'definitions with enum fields');
  for (const [name, fields] of Object.entries(enums)) {
    const def = NEUTRAL_SCHEMAS[name] as Json | undefined;
    for (const [f, values] of Object.entries(fields)) {
      t.equal(def?.fields?.[f]?.type, 'string', `${name}.${f} is a string field`);
      t.ok(values.length > 0 && values.every((v) => typeof v === 'string'), `${name}.${f}: values`);
    }
  }
  t.same(enums['apps.v1.DeploymentStrategy'], { type: ['Recreate', 'RollingUpdate'] });
  t.same(enums['core.v1.Container'].imagePullPolicy, ['Always', 'IfNotPresent', 'Never']);
});

t.test('enums.json is what gen-enums makes of the reference\'s generated definitions', { skip: goDefinitions ? false : 'the reference source (../ref/k8s) is not here' }, async (t) => {
  const fresh = generateEnums(readFileSync(goDefinitions!, 'utf8'), new Set(Object.keys(NEUTRAL_SCHEMAS)));
  const committed = JSON.parse(readFileSync(fileURLToPath(new URL('../../../plugins/types/builtin/enums.json', import.meta.url)), 'utf8'));
  t.same(committed, fresh, 're-run gen-enums if the catalog or the release changed');
});
