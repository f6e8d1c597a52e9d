// The access review types: create-only, never stored, answered from the authorizer chain and the
// authenticators. authorization.<domain>/v1: SelfSubjectAccessReview, SubjectAccessReview,
// LocalSubjectAccessReview (namespaced), SelfSubjectRulesReview; authentication.<domain>/v1:
// TokenReview, SelfSubjectReview (`kubectl auth whoami`).
import type { Brand } from '../../../kernel/contracts/brand.js';
import { CONTRACT_VERSION, type AuthorizationAttributes, type FieldCause, type KObject, type PluginHost, type PluginModule, type TypeDef, type UserInfo, type VirtualHandler, type VirtualRequest } from '../../../kernel/contracts/index.js';
import { errors } from '../../../kernel/contracts/status.js';
import { withProtobuf } from '../../lib/protobuf-catalog.js';
import { attachSchema } from '../builtin/schemas.js';
import { rulesResolvers } from '../../authorizers/rbac/resolvers.js';

type J = Record<string, any>;
const isObj = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown) => (typeof v === 'string' ? v : '');
const strList = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

const RESOURCE_FIELDS = ['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name'] as const;

/** Only the known, non-empty string fields, in the reference's order (omitempty). */
function pick(src: unknown, keys: readonly string[]): J {
  const out: J = {};
  if (!isObj(src)) return out;
  for (const k of keys) if (typeof src[k] === 'string' && src[k]) out[k] = src[k];
  return out;
}

/** Metadata of a review must be empty (null fields count as empty); LocalSubjectAccessReview may carry its namespace. */
function metadataIsEmpty(md: unknown, allow: string[] = []): boolean {
  if (!isObj(md)) return true;
  return Object.entries(md).every(([k, v]) => allow.includes(k) || k === 'managedFields' || v === null || v === '' || (isObj(v) && !Object.keys(v).length) || (Array.isArray(v) && !v.length));
}

function extraOf(v: unknown): Record<string, string[]> | undefined {
  if (!isObj(v)) return undefined;
  const out: Record<string, string[]> = {};
  for (const [k, vals] of Object.entries(v)) out[k] = strList(vals);
  return Object.keys(out).length ? out : undefined;
}

/** Attributes a review asks about: resourceAttributes or nonResourceAttributes, for a user. */
function attributesFrom(user: UserInfo, spec: J): AuthorizationAttributes {
  if (isObj(spec.resourceAttributes)) {
    const ra = spec.resourceAttributes;
    return {
      user, isResourceRequest: true, path: '', verb: str(ra.verb), apiPrefix: str(ra.group) ? 'apis' : 'api', apiGroup: str(ra.group),
      apiVersion: str(ra.version) || '*', namespace: str(ra.namespace), resource: str(ra.resource), subresource: str(ra.subresource), name: str(ra.name),
    };
  }
  const na = isObj(spec.nonResourceAttributes) ? spec.nonResourceAttributes : {};
  return { user, isResourceRequest: false, path: str(na.path), verb: str(na.verb), apiPrefix: '', apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '' };
}

/** The spec echoed back: known fields only. */
function echoSpec(spec: J, withSubject: boolean): J {
  const out: J = {};
  if (isObj(spec.resourceAttributes)) out.resourceAttributes = pick(spec.resourceAttributes, RESOURCE_FIELDS);
  if (isObj(spec.nonResourceAttributes)) out.nonResourceAttributes = pick(spec.nonResourceAttributes, ['path', 'verb']);
  if (withSubject) {
    if (str(spec.user)) out.user = spec.user;
    if (strList(spec.groups).length) out.groups = strList(spec.groups);
    const extra = extraOf(spec.extra);
    if (extra) out.extra = extra;
    if (str(spec.uid)) out.uid = spec.uid;
  }
  return out;
}

export function accessTypes(brand: Brand, host: PluginHost): TypeDef[] {
  const authz = `authorization.${brand.domain}`;
  const authn = `authentication.${brand.domain}`;
  const gv = (g: string) => `${g}/v1`;

  /** Decodes the body's type fields: apiVersion and kind must be absent or this type's. */
  const typeMeta = (req: VirtualRequest, group: string, kind: string): J => {
    const body = req.body as J;
    if (!isObj(body)) throw errors.badRequest('the request body is not a JSON object');
    if (body.apiVersion !== undefined && body.apiVersion !== gv(group)) throw errors.badRequest(`the API version in the data (${str(body.apiVersion)}) does not match the expected API version (${gv(group)})`);
    if (body.kind !== undefined && body.kind !== kind) throw errors.badRequest(`the kind in the data (${str(body.kind)}) does not match the expected kind (${kind})`);
    return body;
  };
  const invalid = (group: string, kind: string, causes: FieldCause[]) => errors.invalid(group, kind, '', causes);

  /** Exactly one of resourceAttributes / nonResourceAttributes. */
  const specCauses = (spec: J): FieldCause[] => {
    const ra = isObj(spec.resourceAttributes);
    const na = isObj(spec.nonResourceAttributes);
    if (ra && na) return [{ reason: 'FieldValueInvalid', field: 'spec.nonResourceAttributes', message: `Invalid value: ${JSON.stringify(spec.nonResourceAttributes)}: cannot be specified in combination with resourceAttributes` }];
    if (!ra && !na) return [{ reason: 'FieldValueInvalid', field: 'spec.resourceAttributes', message: 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified' }];
    return [];
  };

  const review = async (user: UserInfo, spec: J) => {
    const d = await host.authorize(attributesFrom(user, spec));
    const status: J = { allowed: d.decision === 'allow' };
    if (d.decision === 'deny') status.denied = true;
    if (d.reason) status.reason = d.reason;
    return status;
  };

  /** The answer: 201 with the review, metadata as the reference writes an unset one. */
  const out = (group: string, kind: string, body: J): { code: number; object: KObject } => ({ code: 201, object: { kind, apiVersion: gv(group), metadata: { creationTimestamp: null } as J, ...body } });

  const selfSubjectAccessReview: VirtualHandler = async (req) => {
    const kind = 'SelfSubjectAccessReview';
    const body = typeMeta(req, authz, kind);
    const spec = isObj(body.spec) ? body.spec : {};
    const causes = specCauses(spec);
    if (!metadataIsEmpty(body.metadata)) causes.push({ reason: 'FieldValueInvalid', field: 'metadata', message: `Invalid value: ${JSON.stringify(body.metadata)}: must be empty` });
    if (causes.length) throw invalid(authz, kind, causes);
    return out(authz, kind, { spec: echoSpec(spec, false), status: await review(req.user, spec) });
  };

  const subjectCauses = (spec: J): FieldCause[] => {
    const causes = specCauses(spec);
    if (!str(spec.user) && !strList(spec.groups).length) causes.push({ reason: 'FieldValueInvalid', field: 'spec.user', message: 'Invalid value: "": at least one of user or group must be specified' });
    return causes;
  };
  const subjectUser = (spec: J): UserInfo => {
    const u: UserInfo = { username: str(spec.user), groups: strList(spec.groups) };
    if (str(spec.uid)) u.uid = spec.uid;
    const extra = extraOf(spec.extra);
    if (extra) u.extra = extra;
    return u;
  };

  const subjectAccessReview: VirtualHandler = async (req) => {
    const kind = 'SubjectAccessReview';
    const body = typeMeta(req, authz, kind);
    const spec = isObj(body.spec) ? body.spec : {};
    const causes = subjectCauses(spec);
    if (!metadataIsEmpty(body.metadata)) causes.push({ reason: 'FieldValueInvalid', field: 'metadata', message: `Invalid value: ${JSON.stringify(body.metadata)}: must be empty` });
    if (causes.length) throw invalid(authz, kind, causes);
    return out(authz, kind, { spec: echoSpec(spec, true), status: await review(subjectUser(spec), spec) });
  };

  const localSubjectAccessReview: VirtualHandler = async (req) => {
    const kind = 'LocalSubjectAccessReview';
    const body = typeMeta(req, authz, kind);
    const spec = isObj(body.spec) ? body.spec : {};
    const md = isObj(body.metadata) ? body.metadata : {};
    // The object's namespace comes from the URL; a different one in the body is refused.
    if (str(md.namespace) && str(md.namespace) !== req.namespace) throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    const namespace = req.namespace;
    const causes = subjectCauses(spec);
    if (!metadataIsEmpty(md, ['namespace'])) causes.push({ reason: 'FieldValueInvalid', field: 'metadata', message: `Invalid value: ${JSON.stringify(md)}: must be empty except for namespace` });
    if (isObj(spec.resourceAttributes) && str(spec.resourceAttributes.namespace) !== namespace) {
      causes.push({ reason: 'FieldValueInvalid', field: 'spec.resourceAttributes.namespace', message: `Invalid value: ${JSON.stringify(str(spec.resourceAttributes.namespace))}: must match metadata.namespace` });
    }
    if (isObj(spec.nonResourceAttributes)) causes.push({ reason: 'FieldValueInvalid', field: 'spec.nonResourceAttributes', message: `Invalid value: ${JSON.stringify(spec.nonResourceAttributes)}: disallowed on this kind of request` });
    if (causes.length) throw invalid(authz, kind, causes);
    if (!namespace) throw errors.badRequest(`namespace is required on this type: ${namespace}`);
    const object = out(authz, kind, { spec: echoSpec(spec, true), status: await review(subjectUser(spec), spec) });
    object.object.metadata = { namespace, creationTimestamp: null } as J;
    return object;
  };

  const selfSubjectRulesReview: VirtualHandler = async (req) => {
    const kind = 'SelfSubjectRulesReview';
    const body = typeMeta(req, authz, kind);
    const spec = isObj(body.spec) ? body.spec : {};
    const namespace = str(spec.namespace);
    if (!namespace) throw errors.badRequest('no namespace on request');
    const status: J = { resourceRules: [], nonResourceRules: [], incomplete: false };
    const errs: string[] = [];
    const resolvers = rulesResolvers(host.dataDir);
    if (!resolvers.length) {
      // No authorizer that lists rules: if the chain allows anything at all (AlwaysAllow), say so.
      const probe = await host.authorize({ user: req.user, isResourceRequest: true, path: '', verb: 'x-rules-probe', apiPrefix: 'apis', apiGroup: 'x-rules-probe', apiVersion: '*', namespace, resource: 'x-rules-probe', subresource: '', name: '' });
      if (probe.decision === 'allow') {
        status.resourceRules.push({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
        status.nonResourceRules.push({ verbs: ['*'], nonResourceURLs: ['*'] });
      } else status.incomplete = true;
    }
    for (const r of resolvers) {
      const res = await r.resolve(req.user, namespace);
      status.resourceRules.push(...res.resourceRules);
      status.nonResourceRules.push(...res.nonResourceRules);
      if (res.incomplete) status.incomplete = true;
      if (res.error) errs.push(res.error);
    }
    if (errs.length) status.evaluationError = errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`;
    return out(authz, kind, { spec: {}, status });
  };

  const tokenReview: VirtualHandler = async (req) => {
    const kind = 'TokenReview';
    const body = typeMeta(req, authn, kind);
    const spec = isObj(body.spec) ? body.spec : {};
    const token = str(spec.token);
    if (!token) throw errors.badRequest('token is required for TokenReview in authentication');
    const user = await host.authenticateToken(token);
    const status: J = {};
    if (user) {
      status.authenticated = true;
      const u: J = { username: user.username };
      if (user.uid) u.uid = user.uid;
      u.groups = [...(user.groups ?? [])];
      if (user.extra && Object.keys(user.extra).length) u.extra = user.extra;
      status.user = u;
      const wanted = strList(spec.audiences);
      status.audiences = wanted.length ? wanted : [`https://${brand.name}.default.svc.cluster.local`];
    } else {
      status.user = {};
    }
    return out(authn, kind, { spec: {}, status });
  };

  const selfSubjectReview: VirtualHandler = async (req) => {
    const kind = 'SelfSubjectReview';
    typeMeta(req, authn, kind);
    const u = req.user;
    const info: J = { username: u.username };
    if (u.uid) info.uid = u.uid;
    info.groups = [...(u.groups ?? [])];
    if (u.extra && Object.keys(u.extra).length) info.extra = u.extra;
    const r = out(authn, kind, { status: { userInfo: info } });
    r.object.metadata = { creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
    return r;
  };

  // authentication.<domain>/v1beta1 SelfSubjectReview: still served by the reference release the
  // catalog follows, and what kubectl 1.27's `auth whoami` asks for.
  const selfSubjectReviewBeta: VirtualHandler = async (req) => {
    const body = req.body as J;
    if (isObj(body) && body.apiVersion === `${authn}/v1beta1`) body.apiVersion = gv(authn);
    const r = await selfSubjectReview(req);
    r.object.apiVersion = `${authn}/v1beta1`;
    return r;
  };

  // Typed as the reference's reviews are: unknown fields are warned about and dropped, wrong types refused.
  const t = (group: string, kind: string, resource: string, namespaced: boolean, virtual: VirtualHandler, version = 'v1'): TypeDef => {
    const def = withProtobuf({ group, version, kind, resource, singular: kind.toLowerCase(), namespaced, verbs: ['create'], virtual }, brand);
    attachSchema(def, group, brand);
    return def;
  };
  return [
    t(authz, 'LocalSubjectAccessReview', 'localsubjectaccessreviews', true, localSubjectAccessReview),
    t(authz, 'SelfSubjectAccessReview', 'selfsubjectaccessreviews', false, selfSubjectAccessReview),
    t(authz, 'SelfSubjectRulesReview', 'selfsubjectrulesreviews', false, selfSubjectRulesReview),
    t(authz, 'SubjectAccessReview', 'subjectaccessreviews', false, subjectAccessReview),
    t(authn, 'SelfSubjectReview', 'selfsubjectreviews', false, selfSubjectReview),
    t(authn, 'SelfSubjectReview', 'selfsubjectreviews', false, selfSubjectReviewBeta, 'v1beta1'),
    t(authn, 'TokenReview', 'tokenreviews', false, tokenReview),
  ];
}

const plugin: PluginModule<'types'> = {
  kind: 'types',
  contract: CONTRACT_VERSION,
  name: 'access',
  create: (_options, host) => ({ types: (brand: Brand) => accessTypes(brand, host) }),
};

export default plugin;
