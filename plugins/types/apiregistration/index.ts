// The apiregistration.<domain>/v1 types plugin: APIService, with the reference's validation and a
// status sub-resource. The `apiservice` controller keeps the local APIServices (one per group-version
// this server serves) and every APIService's Available condition.
import type { Brand } from '../../../kernel/contracts/brand.js';
import { CONTRACT_VERSION, type FieldCause, type KObject, type PluginModule, type Schema, type TypeDef } from '../../../kernel/contracts/index.js';
import { definitionName, definitionRoot } from '../../../kernel/api/openapi/index.js';
import { fieldError, isDNS1035Label, isDNS1123Subdomain, isPathSegmentName } from '../../../kernel/api/validation.js';
import { age } from '../builtin/columns.js';
import { brandDefinitions, brandDescriber } from '../builtin/schemas.js';
import { withProtobuf } from '../../lib/protobuf-catalog.js';

type J = Record<string, any>;
const isObj = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);

export const apiregistrationGroup = (brand: Brand) => `apiregistration.${brand.domain}`;
const defName = (brand: Brand, n: string) => `${definitionRoot(brand)}.kube-aggregator.pkg.apis.apiregistration.v1.${n}`;

function definitions(brand: Brand): Record<string, Schema> {
  const s: Schema = { type: 'string' };
  const i32: Schema = { type: 'integer', format: 'int32' };
  return {
    ...brandDefinitions(brand),
    // spec and its service are named definitions, as the reference's (its decode errors name them)
    [defName(brand, 'ServiceReference')]: { type: 'object', fields: { name: s, namespace: s, port: i32 } },
    [defName(brand, 'APIServiceSpec')]: { type: 'object', fields: {
      caBundle: { type: 'string', format: 'byte' }, group: s, groupPriorityMinimum: i32, insecureSkipTLSVerify: { type: 'boolean' },
      service: { type: 'ref', ref: defName(brand, 'ServiceReference') }, version: s, versionPriority: i32,
    } },
    [defName(brand, 'APIService')]: { type: 'object', fields: {
      apiVersion: s, kind: s, metadata: { type: 'ref', ref: definitionName(brand, 'meta.v1.ObjectMeta') },
      spec: { type: 'ref', ref: defName(brand, 'APIServiceSpec') },
      status: { type: 'object', fields: { conditions: { type: 'array', listType: 'map', mapKeys: ['type'], items: { type: 'object', fields: { lastTransitionTime: { type: 'string', format: 'date-time' }, message: s, reason: s, status: s, type: s } } } } },
    } },
  };
}

function defaults(obj: KObject): void {
  const svc = (obj.spec as J | undefined)?.service;
  if (isObj(svc) && svc.port === undefined) svc.port = 443;
}

/** The reference's ValidateAPIService, in its words. */
export function validateAPIService(obj: KObject): FieldCause[] {
  const out: FieldCause[] = [];
  const spec = (isObj(obj.spec) ? obj.spec : {}) as J;
  const group = typeof spec.group === 'string' ? spec.group : '';
  const version = typeof spec.version === 'string' ? spec.version : '';
  const required = `${version}.${group}`;
  const name = obj.metadata?.name ?? '';
  // (a missing name is the metadata check's Required; the name rule runs on a name only)
  const nameErrs = name ? isPathSegmentName(name) : [];
  if (nameErrs.length) out.push(fieldError.invalid('metadata.name', name, nameErrs.join(', ')));
  else if (name && name !== required) out.push(fieldError.invalid('metadata.name', name, `must be \`spec.version+"."+spec.group\`: ${JSON.stringify(required)}`));
  if (!group && version !== 'v1') out.push(fieldError.required('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
  if (group) for (const e of isDNS1123Subdomain(group)) out.push(fieldError.invalid('spec.group', group, e));
  for (const e of isDNS1035Label(version)) out.push(fieldError.invalid('spec.version', version, e));
  const gpm = Number(spec.groupPriorityMinimum ?? 0);
  if (!(gpm > 0 && gpm <= 20000)) out.push(fieldError.invalid('spec.groupPriorityMinimum', gpm, 'must be positive and less than 20000'));
  const vp = Number(spec.versionPriority ?? 0);
  if (!(vp > 0 && vp <= 1000)) out.push(fieldError.invalid('spec.versionPriority', vp, 'must be positive and less than 1000'));
  const ca = typeof spec.caBundle === 'string' ? Buffer.from(spec.caBundle, 'base64') : Buffer.alloc(0);
  if (!isObj(spec.service)) {
    if (ca.length) out.push(fieldError.invalid('spec.caBundle', `${ca.length} bytes`, 'local APIServices may not have a caBundle'));
    if (spec.insecureSkipTLSVerify === true) out.push(fieldError.invalid('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'));
    return out;
  }
  const svc = spec.service;
  if (!svc.namespace) out.push(fieldError.required('spec.service.namespace', ''));
  if (!svc.name) out.push(fieldError.required('spec.service.name', ''));
  const port = Number(svc.port);
  if (!(Number.isInteger(port) && port >= 1 && port <= 65535)) out.push(fieldError.invalid('spec.service.port', svc.port, 'port is not valid: must be between 1 and 65535, inclusive'));
  if (spec.insecureSkipTLSVerify === true && ca.length) out.push(fieldError.invalid('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
  return out;
}

export function apiServiceType(brand: Brand): TypeDef {
  return withProtobuf({
    group: apiregistrationGroup(brand), version: 'v1', kind: 'APIService', resource: 'apiservices', singular: 'apiservice', namespaced: false,
    subresources: ['status'], statusField: 'status', nameRule: 'path-segment',
    schema: { type: 'ref', ref: defName(brand, 'APIService') }, definitions: definitions(brand), definitionName: defName(brand, 'APIService'), describe: brandDescriber(brand),
    defaults, validate: (obj) => validateAPIService(obj),
    columns: [
      { name: 'Service', type: 'string', description: 'The reference to the service that hosts this API endpoint.', cell: (o) => { const s = (o.spec as J | undefined)?.service; return isObj(s) ? `${s.namespace}/${s.name}` : 'Local'; } },
      { name: 'Available', type: 'string', description: 'Whether this service is available.', cell: (o) => { const c = ((o.status as J | undefined)?.conditions ?? []).find((x: J) => x?.type === 'Available'); return c ? (c.status === 'True' ? 'True' : `${c.status} (${c.reason})`) : 'Unknown'; } },
      { name: 'Age', type: 'string', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', cell: (o, now) => age(o.metadata?.creationTimestamp, now) },
    ],
  }, brand);
}

const plugin: PluginModule<'types'> = {
  kind: 'types',
  contract: CONTRACT_VERSION,
  name: 'apiregistration',
  create: () => ({ types: (brand: Brand) => [apiServiceType(brand)] }),
};

export default plugin;
