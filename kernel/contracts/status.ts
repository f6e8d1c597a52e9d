// Status bodies, shaped as the ecosystem's server shapes them (metav1.Status).
import type { FieldCause } from './objects.js';

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: FieldCause[] | { reason?: string; message: string; field?: string }[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, string>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** An error the pipeline turns into a Status response. Plugins throw these. */
export class StatusError extends Error {
  code: number;
  reason: string;
  details?: StatusDetails;
  headers?: Record<string, string>;
  /** ListMeta carried by some errors (an expired continue token carries a fresh one). */
  listMeta?: Record<string, string>;
  /** Sent as this plain text instead of a Status (the reference's 404 for paths outside its API). */
  plainText?: string;
  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }
  toStatus(): StatusBody {
    // Field order as the reference writes it: ..., message, reason, details, code.
    const s: StatusBody = { kind: 'Status', apiVersion: 'v1', metadata: this.listMeta ?? {}, status: 'Failure', message: this.message } as StatusBody;
    if (this.reason) s.reason = this.reason;
    // Present whenever the reference sets it, even empty (clients such as kubectl debug read it).
    if (this.details) s.details = this.details;
    s.code = this.code;
    return s;
  }
}

export function isStatusError(e: unknown): e is StatusError {
  return e instanceof StatusError || (typeof e === 'object' && e !== null && typeof (e as StatusError).toStatus === 'function' && typeof (e as StatusError).code === 'number');
}

/** "pods" in group "" → "pods"; in "apps" → "deployments.apps": how the reference names a resource in messages. */
export function qualifiedResource(group: string, resource: string): string {
  return group ? `${resource}.${group}` : resource;
}

export const errors = {
  badRequest: (msg: string, details?: StatusDetails) => new StatusError(400, 'BadRequest', msg, details),
  unauthorized: (msg = 'Unauthorized') => new StatusError(401, 'Unauthorized', msg),
  forbidden: (msg: string, details?: StatusDetails) => new StatusError(403, 'Forbidden', msg, details),
  /** `pods "x" is forbidden: User "u" cannot get resource "pods" in API group "" in the namespace "ns"` */
  forbiddenRequest(user: string, verb: string, group: string, resource: string, subresource: string, namespace: string, name: string, reason?: string): StatusError {
    const res = subresource ? `${resource}/${subresource}` : resource;
    const subject = name ? `${qualifiedResource(group, resource)} "${name}"` : qualifiedResource(group, resource);
    let msg = `${subject} is forbidden: User "${user}" cannot ${verb} resource "${res}" in API group "${group}"`;
    msg += namespace ? ` in the namespace "${namespace}"` : ' at the cluster scope';
    if (reason) msg += `: ${reason}`;
    return new StatusError(403, 'Forbidden', msg, { name: name || undefined, group: group || undefined, kind: resource });
  },
  /** `deployments.apps "x" is forbidden: <msg>` (no name: `deployments.apps is forbidden: ...`). */
  forbiddenObject(group: string, resource: string, name: string, msg: string): StatusError {
    return new StatusError(403, 'Forbidden', `${qualifiedResource(group, resource)}${name ? ` "${name}"` : ''} is forbidden: ${msg}`, { name: name || undefined, group: group || undefined, kind: resource });
  },
  notFound(group: string, resource: string, name: string): StatusError {
    return new StatusError(404, 'NotFound', `${qualifiedResource(group, resource)} "${name}" not found`, { name, group: group || undefined, kind: resource });
  },
  /** A path under a served group-version that names nothing served (the reference's go-restful 404). */
  pathNotFound: () => new StatusError(404, 'NotFound', 'the server could not find the requested resource', {}),
  /** A path outside every served group-version: the reference answers Go's plain-text 404. */
  pageNotFound: () => { const e = new StatusError(404, 'NotFound', 'the server could not find the requested resource'); e.plainText = '404 page not found\n'; return e; },
  alreadyExists(group: string, resource: string, name: string): StatusError {
    return new StatusError(409, 'AlreadyExists', `${qualifiedResource(group, resource)} "${name}" already exists`, { name, group: group || undefined, kind: resource });
  },
  conflict(group: string, resource: string, name: string, why: string): StatusError {
    return new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(group, resource)} "${name}": ${why}`, { name, group: group || undefined, kind: resource });
  },
  gone: (msg: string) => new StatusError(410, 'Expired', msg),
  invalid(group: string, kind: string, name: string, causes: FieldCause[]): StatusError {
    const gk = group ? `${kind}.${group}` : kind;
    // every cause is kept; the message names each distinct one once (the reference's ToAggregate)
    const list = [...new Set(causes.map((c) => `${c.field}: ${c.message}`))];
    const msg = `${gk} "${name}" is invalid: ` + (list.length === 1 ? list[0] : `[${list.join(', ')}]`);
    return new StatusError(422, 'Invalid', msg, { name: name || undefined, group: group || undefined, kind: kind || undefined, causes });
  },
  methodNotAllowed: (msg = 'the server does not allow this method on the requested resource') => new StatusError(405, 'MethodNotAllowed', msg),
  notAcceptable: (msg: string) => new StatusError(406, 'NotAcceptable', msg),
  tooLarge: (msg = 'Request entity too large: limit is 3145728') => new StatusError(413, 'RequestEntityTooLarge', msg),
  unsupportedMediaType: (accepted: string[]) => new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`),
  tooManyRequests: (msg: string, retryAfter = 1) => { const e = new StatusError(429, 'TooManyRequests', msg, { retryAfterSeconds: retryAfter }); e.headers = { 'Retry-After': String(retryAfter) }; return e; },
  internal: (msg: string) => new StatusError(500, 'InternalError', `Internal error occurred: ${msg}`, { causes: [{ message: msg }] }),
  serviceUnavailable: (msg: string) => new StatusError(503, 'ServiceUnavailable', msg),
  timeout: (msg: string, retryAfter: number) => { const e = new StatusError(504, 'Timeout', msg, { retryAfterSeconds: retryAfter }); e.headers = { 'Retry-After': String(retryAfter) }; return e; },
};
