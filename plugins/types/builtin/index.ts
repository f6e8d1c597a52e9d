// The built-in types plugin: turns the catalog's rows into TypeDefs for one brand and attaches the
// per-type hooks (defaulting, validation, table columns, field selectors) by row key.
import { brandGroup, type Brand } from '../../../kernel/contracts/brand.js';
import { CONTRACT_VERSION, type KObject, type PluginHost, type PluginModule, type TypeDef, type TypeStrategy } from '../../../kernel/contracts/index.js';
import { CATALOG, FIELD_LABELS, FIELD_SELECTORS, LATER_RELEASES, rowKey } from './catalog.js';
import { columnsFor } from './columns.js';
import { DEFAULTERS } from './defaults.js';
import { withDisabledFieldsDropped } from './disabled-features.js';
import { withTemplateGeneration } from './template-generation.js';
import { SYSTEM_PRIORITY_CLASSES } from '../../lib/system-priority-classes.js';
import { attachSchema } from './schemas.js';
import { VALIDATORS } from './validate.js';
import { RULES } from './rules.js';
import { withProtobuf } from '../../lib/protobuf-catalog.js';
import { attachConversion } from './conversions/index.js';
import { keepClaimTemplateLists } from './claim-templates.js';
import { strategies, type StrategyOptions } from './strategies/index.js';
import type { ConnectOptionFields } from '../../../kernel/contracts/index.js';

/** The fields of the pods' CONNECT options kinds that are not strings (the reference's PodExecOptions, ...). */
const CONNECT_OPTIONS: Record<string, ConnectOptionFields> = {
  PodExecOptions: { lists: ['command'], booleans: ['stdin', 'stdout', 'stderr', 'tty'] },
  PodAttachOptions: { booleans: ['stdin', 'stdout', 'stderr', 'tty'] },
  PodPortForwardOptions: { lists: ['ports'], integers: ['ports'] },
};

/** Every built-in type, with groups in the brand's domain; `strategy` gives a row its write-path hooks. */
export function builtinTypes(brand: Brand, strategy: (key: string) => TypeStrategy | undefined = () => undefined, subresourceFields: Record<string, Record<string, string | string[]>> = {}, computed: Record<string, () => Promise<KObject[]>> = {}): TypeDef[] {
  const columns = columnsFor(brand);
  return [...CATALOG, ...LATER_RELEASES].map((r) => {
    const key = rowKey(r);
    const t: TypeDef = {
      group: brandGroup(brand, r.group),
      version: r.version,
      kind: r.kind,
      resource: r.resource,
      singular: r.singular ?? r.kind.toLowerCase(),
      namespaced: r.namespaced,
      nameRule: r.nameRule ?? 'subdomain',
      hasSpec: r.hasSpec ?? false,
    };
    if (r.shortNames) t.shortNames = [...r.shortNames];
    if (r.categories) t.categories = [...r.categories];
    if (r.subresources) t.subresources = [...r.subresources];
    // sub-resources that write one field path of the object (pods/ephemeralcontainers, pods/resize) read and write the whole object
    const fieldSubs = (r.subresources ?? []).filter((x) => !['status', 'scale', 'finalize'].includes(x));
    if (fieldSubs.length) t.subresourceInfo = Object.fromEntries(fieldSubs.map((x) => [x, { verbs: ['get', 'patch', 'update'], kind: r.kind }]));
    if (r.finalizersField) t.finalizersField = r.finalizersField;
    if (r.indexedFields) t.indexedFields = [...r.indexedFields];
    if (r.connectSubresources) {
      t.connectSubresources = [...r.connectSubresources];
      t.subresources = [...(t.subresources ?? []), ...r.connectSubresources];
      t.subresourceInfo = { ...t.subresourceInfo, ...Object.fromEntries(r.connectSubresources.map((c) => {
        const kind = c === 'exec' ? 'PodExecOptions' : c === 'attach' ? 'PodAttachOptions' : c === 'portforward' ? 'PodPortForwardOptions' : `${r.kind}ProxyOptions`;
        return [c, { verbs: c === 'proxy' ? ['create', 'delete', 'get', 'patch', 'update'] : ['create', 'get'], kind, options: CONNECT_OPTIONS[kind] }];
      })) };
    }
    if (r.terminatingPhase) t.terminatingPhase = r.terminatingPhase;
    if (r.statusKeepsMetadata) t.statusKeepsMetadata = [...r.statusKeepsMetadata];
    if (r.conditionalUpdateOnly) t.unconditionalUpdate = false;
    if (r.statusOnCreate) t.statusOnCreate = true;
    if (r.metadataChecksOnUpdate !== undefined) t.metadataChecksOnUpdate = r.metadataChecksOnUpdate;
    if (r.defaultPropagation) t.defaultPropagation = { ...r.defaultPropagation };
    if (r.verbs) t.verbs = [...r.verbs];
    if (r.deprecated) Object.assign(t, { deprecated: true, deprecationWarning: r.deprecated });
    if (computed[key]) t.computed = computed[key];
    // Types with a status sub-resource keep status writes and main-resource writes apart.
    if (r.subresources?.includes('status')) t.statusField = 'status';
    if (UNDELETABLE[key]) t.undeletable = UNDELETABLE[key];
    // The reference's status is a Go struct (never a pointer): it is on the wire as {} when empty,
    // and clients read fields of it right after a create.
    const own = DEFAULTERS[key];
    if (t.statusField) t.defaults = own ? (o, b) => { own(o, b); o.status ??= {}; } : (o) => { o.status ??= {}; };
    else if (own) t.defaults = own;
    const checks = [VALIDATORS[key], RULES[key]].filter((v) => v !== undefined);
    if (checks.length === 1) t.validate = checks[0];
    else if (checks.length) t.validate = (o, old, brand, sub) => checks.flatMap((v) => v(o, old, brand, sub));
    if (columns[key]) t.columns = columns[key];
    if (FIELD_SELECTORS[key]) t.fieldSelectors = FIELD_SELECTORS[key];
    if (FIELD_LABELS[key]) t.fieldLabels = FIELD_LABELS[key];
    const st = withTemplateGeneration(key, withDisabledFieldsDropped(key, strategy(key)));
    if (st) t.strategy = st;
    if (subresourceFields[key]) t.subresourceFields = subresourceFields[key];
    withProtobuf(t, brand, r.shapeOf);
    keepClaimTemplateLists(t, key);
    attachSchema(t, r.group, brand);
    attachConversion(t, key, brand);
    return t;
  });
}

/** Objects a DELETE of one refuses, by row key (the reference's REST Delete hooks; a collection delete passes, as there). */
const UNDELETABLE: Record<string, TypeDef['undeletable']> = {
  'priorityclasses.scheduling.cluster.io': { names: SYSTEM_PRIORITY_CLASSES.map((c) => c.name), why: 'this is a system priority class and cannot be deleted' },
};

const plugin: PluginModule<'types'> = {
  kind: 'types',
  contract: CONTRACT_VERSION,
  name: 'builtin',
  create: (options, host: PluginHost) => {
    const s = strategies(host, options as StrategyOptions);
    return {
      types: (brand: Brand) => [...builtinTypes(brand, s.byKey, s.subresourceFields, s.computed), ...s.virtualTypes(brand)], start: s.start, stop: s.stop,
      // what strategies' start does: service allocations repaired, system priority classes in place
      postStartHooks: ['start-service-ip-repair-controllers', 'scheduling/bootstrap-system-priority-classes'],
    };
  },
};

export default plugin;
