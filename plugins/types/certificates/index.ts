// certificates.<domain>/v1 CertificateSigningRequest: the catalog row (data) and its strategy, the
// reference's registry strategy and validation for the type:
// - create: spec.username/uid/groups/extra come from the requester, status starts empty;
// - the main resource changes only metadata; `status` writes status (certificate, other conditions);
//   `approval` writes only status.conditions and is the one place Approved/Denied may be added;
// - conditions: known status values, no duplicate Approved/Denied/Failed, not Approved and Denied;
//   none of those removed once present; condition timestamps filled in;
// - status.certificate: PEM CERTIFICATE blocks only, set once.
import { X509Certificate } from 'node:crypto';
import type { Brand } from '../../../kernel/contracts/brand.js';
import { attachSchema } from '../builtin/schemas.js';
import { CONTRACT_VERSION, type FieldCause, type KObject, type PluginModule, type TypeDef, type UserInfo, type WriteContext } from '../../../kernel/contracts/index.js';
import { errors } from '../../../kernel/contracts/status.js';
import { age } from '../builtin/columns.js';
import { withProtobuf } from '../../lib/protobuf-catalog.js';
import { checkedRequest, conditionsOf, KNOWN_USAGES, specOf, statusOf } from '../../lib/certificates.js';

type J = Record<string, any>;
const FINAL_TYPES = ['Approved', 'Denied', 'Failed'];
const APPROVAL_TYPES = ['Approved', 'Denied'];
const SIGNER_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)\/(.+)$/;
const MIN_EXPIRATION = 600;

const invalid = (field: string, value: unknown, detail: string): FieldCause => ({ reason: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: ${detail}` });
const required = (field: string): FieldCause => ({ reason: 'FieldValueRequired', field, message: 'Required value' });
const forbidden = (field: string, detail: string): FieldCause => ({ reason: 'FieldValueForbidden', field, message: `Forbidden: ${detail}` });
const notSupported = (field: string, value: unknown, valid: readonly string[]): FieldCause =>
  ({ reason: 'FieldValueNotSupported', field, message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}` });

/** The spec's rules, request parsing and signature included (async: WebCrypto). */
async function validateSpec(obj: KObject, brand: Brand): Promise<FieldCause[]> {
  const causes: FieldCause[] = [];
  const spec = specOf(obj);
  const r = await checkedRequest(obj);
  if ('error' in r) causes.push({ reason: 'FieldValueInvalid', field: 'spec.request', message: `Invalid value: []byte{...}: ${r.error}` });
  const usages = spec.usages;
  if (!Array.isArray(usages) || !usages.length) causes.push({ reason: 'FieldValueRequired', field: 'spec.usages', message: 'Required value: usages must be provided' });
  else {
    const seen = new Set<unknown>();
    usages.forEach((u, i) => {
      if (!(KNOWN_USAGES as readonly string[]).includes(u)) causes.push(notSupported(`spec.usages[${i}]`, u, KNOWN_USAGES));
      else if (seen.has(u)) causes.push({ reason: 'FieldValueDuplicate', field: `spec.usages[${i}]`, message: `Duplicate value: ${JSON.stringify(u)}` });
      seen.add(u);
    });
  }
  const signer = spec.signerName;
  if (typeof signer !== 'string' || !signer) causes.push(required('spec.signerName'));
  else if (!SIGNER_NAME.test(signer) || signer.length > 571) causes.push(invalid('spec.signerName', signer, "must be a fully qualified domain and path of the form 'example.com/signer-name'"));
  else if (signer === brand.signers.legacyUnknown) causes.push(invalid('spec.signerName', signer, 'the legacy signerName is not allowed via this API version'));
  const exp = spec.expirationSeconds;
  if (exp !== undefined && exp !== null) {
    if (!Number.isInteger(exp)) causes.push(invalid('spec.expirationSeconds', exp, 'must be an integer'));
    else if (exp < MIN_EXPIRATION) causes.push(invalid('spec.expirationSeconds', exp, 'may not specify a duration less than 600 seconds (10 minutes)'));
    else if (exp > 2 ** 31 - 1) causes.push(invalid('spec.expirationSeconds', exp, 'may not specify a duration larger than 2147483647 seconds'));
  }
  return causes;
}

/** status.conditions and status.certificate, on any write. */
function validateStatus(obj: KObject): FieldCause[] {
  const causes: FieldCause[] = [];
  const seen = new Map<string, number>();
  conditionsOf(obj).forEach((c, i) => {
    const f = `status.conditions[${i}]`;
    if (typeof c.type !== 'string' || !c.type) causes.push(required(`${f}.type`));
    if (!['True', 'False', 'Unknown'].includes(c.status)) causes.push(c.status ? notSupported(`${f}.status`, c.status, ['False', 'True', 'Unknown']) : required(`${f}.status`));
    else if (APPROVAL_TYPES.includes(c.type) && c.status !== 'True') causes.push(notSupported(`${f}.status`, c.status, ['True']));
    if (FINAL_TYPES.includes(c.type)) {
      if (seen.has(c.type)) causes.push({ reason: 'FieldValueDuplicate', field: `${f}.type`, message: `Duplicate value: ${JSON.stringify(c.type)}` });
      seen.set(c.type, i);
    }
  });
  if (seen.has('Approved') && seen.has('Denied')) causes.push(invalid(`status.conditions[${seen.get('Denied')}].type`, 'Denied', 'Approved and Denied conditions are mutually exclusive'));
  const cert = statusOf(obj).certificate;
  if (cert !== undefined && cert !== null && cert !== '') {
    const why = certificateProblem(typeof cert === 'string' ? Buffer.from(cert, 'base64').toString('latin1') : '');
    if (why) causes.push(invalid('status.certificate', '<certificate data>', why));
  }
  return causes;
}

/** status.certificate holds only PEM CERTIFICATE blocks, without headers, each a parsable certificate. */
function certificateProblem(pem: string): string | undefined {
  const blocks = [...pem.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g)];
  if (!blocks.length) return 'must contain at least one CERTIFICATE PEM block';
  for (const [, type, body] of blocks) {
    if (type !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found "${type}"`;
    if (/^[A-Za-z-]+:/m.test(body)) return 'no PEM block headers are permitted';
    try { new X509Certificate(Buffer.from(body.replace(/\s+/g, ''), 'base64')); } catch (e) { return `failed to parse certificate: ${(e as Error).message}`; }
  }
  return undefined;
}

const count = (o: KObject, type: string) => conditionsOf(o).filter((c) => c.type === type).length;

/** What an update may change, by sub-resource (the reference's update validation options). */
function validateTransition(obj: KObject, old: KObject, sub: string): FieldCause[] {
  const causes: FieldCause[] = [];
  for (const t of FINAL_TYPES) if (count(obj, t) < count(old, t)) causes.push(forbidden('status.conditions', `updates may not remove a condition of type "${t}"`));
  if (sub !== 'approval') for (const t of APPROVAL_TYPES) if (count(obj, t) > count(old, t)) causes.push(forbidden('status.conditions', `updates may not add a condition of type "${t}"`));
  const cert = statusOf(obj).certificate ?? '';
  const oldCert = statusOf(old).certificate ?? '';
  if (cert !== oldCert) {
    if (sub !== 'status') causes.push(forbidden('status.certificate', 'updates may not set certificate content'));
    else if (oldCert) causes.push(forbidden('status.certificate', 'updates may not modify existing certificate content'));
  }
  return causes;
}

/** Fills lastUpdateTime and lastTransitionTime where a condition has none (the reference does so on every write). */
function stampConditions(obj: KObject, old: KObject | undefined): void {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const before = old ? conditionsOf(old) : [];
  for (const c of conditionsOf(obj)) {
    const prev = before.find((b) => b.type === c.type);
    c.lastUpdateTime ??= now;
    if (!c.lastTransitionTime) c.lastTransitionTime = prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : now;
  }
}

function setRequester(spec: J, user: UserInfo): void {
  for (const k of ['username', 'uid', 'groups', 'extra']) delete spec[k];
  spec.username = user.username;
  if (user.uid) spec.uid = user.uid;
  if (user.groups.length) spec.groups = [...user.groups];
  if (user.extra && Object.keys(user.extra).length) spec.extra = JSON.parse(JSON.stringify(user.extra));
}

export function csrType(brand: Brand): TypeDef {
  const group = `certificates.${brand.domain}`;
  const fail = (obj: KObject, causes: FieldCause[]) => { if (causes.length) throw errors.invalid(group, 'CertificateSigningRequest', obj.metadata?.name ?? '', causes); };
  // Protobuf both ways, as the reference (a node agent's TLS bootstrap and kubectl 1.32+ send it).
  const def = withProtobuf({
    group, version: 'v1', kind: 'CertificateSigningRequest', resource: 'certificatesigningrequests', singular: 'certificatesigningrequest',
    namespaced: false, shortNames: ['csr'], nameRule: 'path-segment', // the reference checks no more than the common path-segment rule
    subresources: ['status', 'approval'],
    statusField: 'status',
    subresourceFields: { approval: 'status.conditions' },
    // the reference's approval strategy resets spec and status but for the conditions, never metadata
    subresourcesWritingMetadata: ['approval'],
    subresourceInfo: { approval: { verbs: ['get', 'patch', 'update'] } },
    // the reference's selectable field besides metadata.name (node agents list their own signer's requests)
    fieldSelectors: { 'spec.signerName': (o) => String(specOf(o).signerName ?? '') },
    columns: [
      { name: 'Age', type: 'string', cell: (o, now) => age(o.metadata?.creationTimestamp, now), description: 'Time since the object was created.' },
      { name: 'SignerName', type: 'string', path: '.spec.signerName', description: 'The signer the request is for' },
      { name: 'Requestor', type: 'string', path: '.spec.username', description: 'Who created the request' },
      { name: 'RequestedDuration', type: 'string', cell: (o) => duration(specOf(o).expirationSeconds), description: 'Requested lifetime' },
      { name: 'Condition', type: 'string', cell: (o) => conditionSummary(o), description: 'Approval and issuance state' },
    ],
    strategy: {
      async beginCreate(obj: KObject, ctx: WriteContext) {
        if (typeof obj.spec !== 'object' || obj.spec === null || Array.isArray(obj.spec)) obj.spec = {};
        setRequester(obj.spec as J, ctx.user);
        delete obj.status;
        fail(obj, await validateSpec(obj, brand));
      },
      async beginUpdate(obj: KObject, old: KObject, ctx: WriteContext) {
        // The spec (the requester's identity included) never changes after creation.
        obj.spec = JSON.parse(JSON.stringify(old.spec ?? {}));
        stampConditions(obj, old);
        fail(obj, [...validateStatus(obj), ...validateTransition(obj, old, ctx.subresource)]);
      },
    },
  }, brand);
  // Typed as the reference decodes it: a value of the wrong JSON type is its 400 at decode, unknown fields are named.
  attachSchema(def, group, brand);
  return def;
}

function duration(v: unknown): string {
  if (typeof v !== 'number') return '<none>';
  const units: [number, string][] = [[86400, 'd'], [3600, 'h'], [60, 'm'], [1, 's']];
  for (const [n, u] of units) if (v >= n && v % n === 0) return `${v / n}${u}`;
  return `${v}s`;
}

/** The reference's CONDITION column: Approved,Issued / Denied / Pending / Failed. */
function conditionSummary(o: KObject): string {
  const parts = conditionsOf(o).filter((c) => c.status === 'True' || !c.status).map((c) => String(c.type));
  if (statusOf(o).certificate) parts.push('Issued');
  return parts.length ? parts.join(',') : 'Pending';
}


const plugin: PluginModule<'types'> = {
  kind: 'types',
  contract: CONTRACT_VERSION,
  name: 'certificates',
  create: () => ({ types: (brand: Brand) => [csrType(brand)] }),
};

export default plugin;
