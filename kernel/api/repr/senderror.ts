// An error as the reference answers it: a Status, negotiated like any answer.
import type { Brand } from '../../contracts/brand.js';
import { errors, isStatusError, type StatusError } from '../../contracts/status.js';
import type { KResponse } from '../../http/types.js';
import { negotiate } from './negotiate.js';
import { statusProtobuf } from './protobuf.js';

/** An error as a Status: in Protobuf when the request's Accept prefers it (as the reference encodes errors), else JSON. */
export function sendError(res: KResponse, e: unknown, accept: string | undefined, brand: Brand, log: { error(msg: string, fields?: Record<string, unknown>): void }): void {
  let se: StatusError;
  if (isStatusError(e)) se = e;
  else {
    // Messages can carry what the client sent: bounded, and JSON-escaped by the logger, never raw.
    log.error('internal error', { error: ((e as Error)?.stack ?? String(e)).slice(0, 4096) });
    se = errors.internal((e as Error)?.message ?? String(e));
  }
  if (se.plainText !== undefined) return res.send(se.code, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', ...se.headers }, se.plainText);
  let rep = 'json';
  try { rep = negotiate(accept, brand, false, true).rep; } catch { /* nothing acceptable: JSON */ }
  if (rep === 'protobuf') return res.send(se.code, { ...se.headers, 'content-type': brand.protobufType }, statusProtobuf(se.toStatus()));
  res.send(se.code, { 'content-type': 'application/json', ...se.headers }, JSON.stringify(se.toStatus()));
}
