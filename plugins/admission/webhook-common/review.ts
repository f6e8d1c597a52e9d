// The AdmissionReview exchange: the request a webhook is sent (admission.<domain>, v1 or v1beta1) and
// the checks its answer must pass before it counts: same version and kind (v1), the request's uid
// (v1), `allowed`, and for mutating webhooks a JSONPatch patch (base64 of a JSON array).
import { randomUUID } from 'node:crypto';
import type { AdmissionAttributes, KObject } from '../../../kernel/contracts/index.js';
import type { ReviewVersion } from './config.js';
import type { Invocation } from './matching.js';
import { parseJson } from '../../../workers/body/decode.js';

type J = Record<string, any>;
const isObj = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A response that breaks the exchange's rules: a failed call (failure policy applies). */
export class InvalidResponse extends Error {}

export interface ReviewRequest {
  uid: string;
  body: J;
}

/** The options object the reference sends: CreateOptions / UpdateOptions / DeleteOptions, or the CONNECT options. */
function optionsFor(a: AdmissionAttributes, domain: string): unknown {
  const meta = `meta.${domain}/v1`;
  const dry = a.dryRun ? { dryRun: ['All'] } : {};
  switch (a.operation) {
    case 'CREATE': return { kind: 'CreateOptions', apiVersion: meta, ...dry, ...(a.options ?? {}) };
    case 'UPDATE': return { kind: 'UpdateOptions', apiVersion: meta, ...dry, ...(a.options ?? {}) };
    case 'DELETE': {
      const { kind: _k, apiVersion: _v, ...rest } = (a.options ?? {}) as J;
      return { kind: 'DeleteOptions', apiVersion: meta, ...rest };
    }
    default: return a.options ?? null;
  }
}

/** The object as the webhook sees it: through the version its rule named (same shape, that apiVersion). */
export function asSeenBy(obj: KObject | undefined, inv: Invocation): KObject | null {
  if (!obj) return null;
  if (!inv.converted || typeof obj.apiVersion !== 'string') return obj;
  return { ...obj, apiVersion: inv.kind.group ? `${inv.kind.group}/${inv.kind.version}` : inv.kind.version };
}

function optionsKind(o: KObject): { group: string; version: string; kind: string } {
  const gv = typeof o.apiVersion === 'string' ? o.apiVersion : 'v1';
  const slash = gv.indexOf('/');
  return { group: slash < 0 ? '' : gv.slice(0, slash), version: slash < 0 ? gv : gv.slice(slash + 1), kind: String(o.kind) };
}

export function buildReview(a: AdmissionAttributes, inv: Invocation, version: ReviewVersion, domain: string): ReviewRequest {
  const uid = randomUUID();
  const user: J = { username: a.user.username };
  if (a.user.uid) user.uid = a.user.uid;
  user.groups = [...(a.user.groups ?? [])];
  if (a.user.extra && Object.keys(a.user.extra).length) user.extra = a.user.extra;
  // A CONNECT carries its options object (PodExecOptions, ...), and names that kind, as the reference does.
  const connectKind = a.operation === 'CONNECT' && typeof a.object?.kind === 'string' ? optionsKind(a.object) : undefined;
  const request: J = {
    uid,
    kind: connectKind ?? inv.kind,
    resource: inv.resource,
  };
  if (inv.subresource) request.subResource = inv.subresource;
  request.requestKind = connectKind ?? a.kind;
  request.requestResource = a.resource;
  if (a.subresource) request.requestSubResource = a.subresource;
  if (a.name) request.name = a.name;
  if (a.namespace) request.namespace = a.namespace;
  request.operation = a.operation;
  request.userInfo = user;
  request.object = a.operation === 'DELETE' ? null : asSeenBy(a.object, inv);
  request.oldObject = a.operation === 'CREATE' || a.operation === 'CONNECT' ? null : asSeenBy(a.oldObject, inv);
  request.dryRun = a.dryRun;
  request.options = optionsFor(a, domain);
  return { uid, body: { kind: 'AdmissionReview', apiVersion: `admission.${domain}/${version}`, request } };
}

/** The checked essence of a webhook's answer. */
export interface ReviewResult {
  allowed: boolean;
  status?: { code?: number; message?: string; reason?: string; details?: unknown };
  /** Decoded JSON patch operations (mutating webhooks), when a non-empty patch came back. */
  patch?: unknown[];
  patchType?: string;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** Checks a webhook's answer as the reference does; throws InvalidResponse. */
export function verifyResponse(answer: unknown, uid: string, version: ReviewVersion, domain: string, mutating: boolean): ReviewResult {
  if (!isObj(answer)) throw new InvalidResponse('the response is not an AdmissionReview object');
  const r = answer.response;
  if (version === 'v1') {
    const want = `admission.${domain}/v1, Kind=AdmissionReview`;
    const got = `${String(answer.apiVersion ?? '')}, Kind=${String(answer.kind ?? '')}`;
    if (answer.apiVersion !== `admission.${domain}/v1` || answer.kind !== 'AdmissionReview') throw new InvalidResponse(`expected webhook response of ${want}, got ${got}`);
  }
  if (!isObj(r)) throw new InvalidResponse('webhook response was absent');
  // v1 answers must carry the request's uid; v1beta1 answers were never checked (as in the reference).
  if (version === 'v1' && r.uid !== uid) throw new InvalidResponse(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(typeof r.uid === 'string' ? r.uid : '')}`);
  if (r.allowed !== undefined && r.allowed !== null && typeof r.allowed !== 'boolean') throw new InvalidResponse(`response.allowed must be a boolean, got ${JSON.stringify(r.allowed)}`);
  const result: ReviewResult = { allowed: r.allowed === true, warnings: [], auditAnnotations: {} };
  if (isObj(r.status)) result.status = r.status;
  if (Array.isArray(r.warnings)) result.warnings = r.warnings.filter((w: unknown): w is string => typeof w === 'string' && w.length > 0);
  if (isObj(r.auditAnnotations)) for (const [k, v] of Object.entries(r.auditAnnotations)) if (typeof v === 'string') result.auditAnnotations[k] = v;

  const hasPatch = typeof r.patch === 'string' && r.patch.length > 0;
  const hasType = typeof r.patchType === 'string' && r.patchType.length > 0;
  if (!mutating) {
    if (version === 'v1' && hasPatch) throw new InvalidResponse('validating webhook may not return response.patch');
    if (version === 'v1' && hasType) throw new InvalidResponse('validating webhook may not return response.patchType');
    return result;
  }
  if (version === 'v1') {
    if (hasPatch && !hasType) throw new InvalidResponse('webhook returned response.patch but not response.patchType');
    if (!hasPatch && hasType) throw new InvalidResponse('webhook returned response.patchType but not response.patch');
  }
  if (hasType && r.patchType !== 'JSONPatch') throw new InvalidResponse(`webhook returned invalid response.patchType of ${JSON.stringify(r.patchType)}`);
  if (hasPatch) {
    result.patchType = 'JSONPatch';
    const raw = Buffer.from(r.patch as string, 'base64').toString('utf8');
    let ops: unknown;
    try { ops = parseJson(raw); } catch (e) { throw new InvalidResponse(`response.patch is not a JSON patch: ${(e as Error).message}`); }
    if (!Array.isArray(ops)) throw new InvalidResponse('response.patch is not a JSON patch: not an array of operations');
    if (ops.length) result.patch = ops;
  }
  return result;
}
