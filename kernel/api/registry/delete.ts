// DELETE and DELETECOLLECTION: DeleteOptions (body or query), preconditions, admission, then
// graceful deletion (a grace period), deletion held by finalizers (the garbage collector's
// Foreground and Orphan policies among them), or removal from storage.
import type { FieldCause, KObject, TypeDef, UserInfo } from '../../contracts/index.js';
import { errors, StatusError } from '../../contracts/status.js';
import type { KRequest, KResponse } from '../../http/types.js';
import { parseJson } from '../../../workers/body/decode.js';
import { gv } from '../catalog.js';
import { goQuote } from '../validation.js';
import { decodeDeleteOptions } from '../repr/protobuf.js';
import { dryRunCauses, queryBool, queryInt } from '../options.js';
import { JSON_HEADERS, clone, now, parse, setPath } from './util.js';
import { collectWarnings, withWarnings, type Target } from './base.js';
import { RegistryPatch } from './patch.js';

export class RegistryDeletes extends RegistryPatch {
  private async deleteOptions(req: KRequest): Promise<Record<string, any>> {
    const raw = await req.body(this.ctx.maxBodyBytes);
    let opts: Record<string, any> = {};
    if (raw.length && this.isProtobuf(req)) opts = decodeDeleteOptions(raw);
    else if (raw.length) {
      try { opts = parseJson(raw.toString('utf8')) as Record<string, any>; } catch (e) { throw errors.badRequest(`error decoding DeleteOptions: ${(e as Error).message}`); }
    }
    const q = req.query;
    // Without a body the options come from the query, decoded as the reference's ParameterCodec does.
    if (!raw.length) {
      if (q.get('propagationPolicy') !== null) opts.propagationPolicy = q.get('propagationPolicy');
      const grace = queryInt(q, 'gracePeriodSeconds');
      if (grace !== undefined) opts.gracePeriodSeconds = grace;
      const orphan = queryBool(q, 'orphanDependents');
      if (orphan !== undefined) opts.orphanDependents = orphan;
      if (q.getAll('dryRun').length) opts.dryRun = q.getAll('dryRun');
    }
    const causes: FieldCause[] = [];
    const pp = opts.propagationPolicy;
    if (opts.orphanDependents != null && pp != null) causes.push({ reason: 'FieldValueInvalid', field: 'propagationPolicy', message: `Invalid value: ${goQuote(String(pp))}: orphanDependents and deletionPropagation cannot be both set` });
    if (pp != null && !['Foreground', 'Background', 'Orphan'].includes(pp)) {
      causes.push({ reason: 'FieldValueNotSupported', field: 'propagationPolicy', message: `Unsupported value: ${goQuote(String(pp))}: supported values: "Foreground", "Background", "Orphan", "nil"` });
    }
    causes.push(...dryRunCauses([].concat(opts.dryRun ?? [])));
    if (causes.length) throw errors.invalid(`meta.${this.ctx.brand.domain}`, 'DeleteOptions', '', causes);
    return opts;
  }

  async delete(req: KRequest, res: KResponse, t: Target, user: UserInfo): Promise<void> {
    const keep = t.type.undeletable;
    if (keep?.names.includes(t.name)) {
      const qualified = t.type.group ? `${t.type.resource}.${t.type.group}` : t.type.resource;
      throw errors.forbidden(`${qualified} ${JSON.stringify(t.name)} is forbidden: ${keep.why}`, { name: t.name, group: t.type.group, kind: t.type.resource });
    }
    const opts = await this.deleteOptions(req);
    const { result: { code, body }, warned } = await this.queued(t, () => collectWarnings(t, (t) => this.deleteObject(t, user, opts)));
    await this.sendWritten(req, res, t, code, withWarnings(JSON_HEADERS, [...defaultPolicyWarning(t.type, opts), ...warned]), body);
  }

  async deleteObject(t: Target, user: UserInfo, opts: Record<string, any>): Promise<{ code: number; body: Buffer | string; obj?: KObject }> {
    const type = t.type;
    const dryRun = [].concat(opts.dryRun ?? []).includes('All' as never);
    const pre = opts.preconditions ?? {};
    for (;;) {
      const e = this.current(type, t.namespace, t.name);
      if (!e) throw errors.notFound(type.group, type.resource, t.name);
      // Admission, the answer and a lingering deletion see the object in this version; it is written back in the stored one.
      const old = await this.fromStored(type, parse(e));
      // Checked before deletion begins, as the reference's BeforeDelete does: it names the Kind, not the resource.
      if (pre.uid && pre.uid !== e.uid) throw errors.conflict(type.group, type.kind, t.name, `the UID in the precondition (${pre.uid}) does not match the UID in record (${e.uid}). The object might have been deleted and then recreated`);
      if (pre.resourceVersion && pre.resourceVersion !== String(e.rev)) throw errors.conflict(type.group, type.kind, t.name, `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${e.rev}). The object might have been modified`);
      await this.ctx.admission.admit(this.attrs('DELETE', t, user, dryRun, undefined, old, opts));
      await this.ctx.admission.validate(this.attrs('DELETE', t, user, dryRun, undefined, old, opts));
      const finalizers = [...(old.metadata!.finalizers ?? [])];
      const policy = propagation(type, opts, finalizers);
      // Foreground and Orphan deletion are carried out by the garbage collector through finalizers.
      const gcFinalizer = policy === 'Foreground' ? 'foregroundDeletion' : policy === 'Orphan' ? 'orphan' : '';
      // Graceful deletion (pods): the object lingers for its grace period; a shorter grace shortens it.
      const grace = type.strategy?.gracePeriod ? await type.strategy.gracePeriod(old, typeof opts.gracePeriodSeconds === 'number' ? opts.gracePeriodSeconds : undefined) : 0;
      const lingering = old.metadata!.deletionGracePeriodSeconds;
      if (grace > 0 && (lingering === undefined || grace < lingering || !old.metadata!.deletionTimestamp)) {
        const obj = clone(old);
        const md = obj.metadata!;
        md.deletionTimestamp = new Date(Math.floor(Date.now() / 1000) * 1000 + grace * 1000).toISOString().replace('.000Z', 'Z');
        md.deletionGracePeriodSeconds = grace;
        if (gcFinalizer && !finalizers.includes(gcFinalizer)) md.finalizers = [...finalizers.filter((f) => f !== 'orphan' && f !== 'foregroundDeletion'), gcFinalizer];
        if (dryRun) return { code: 200, body: JSON.stringify(obj), obj };
        const r = await this.commit('update', e.key, await this.toStored(type, obj), e.rev);
        if (r.ok) return { code: 200, body: (await this.asServed(type, [r.bytes!]))[0], obj };
        await this.afterConflict(t, r);
        continue;
      }
      if (grace > 0) return { code: 200, body: JSON.stringify(old), obj: old }; // already lingering with a grace no longer than this one
      const graceful = finalizers.length > 0 || this.extraFinalizers(type, old) || (gcFinalizer && !old.metadata!.deletionTimestamp);
      if (graceful) {
        if (old.metadata!.deletionTimestamp && !gcFinalizer && (old.metadata!.deletionGracePeriodSeconds ?? 0) === 0) return { code: 200, body: JSON.stringify(old), obj: old };
        const obj = clone(old);
        const md = obj.metadata!;
        if (md.deletionGracePeriodSeconds) { md.deletionTimestamp = now(); md.deletionGracePeriodSeconds = 0; }
        md.deletionTimestamp ??= now();
        md.deletionGracePeriodSeconds ??= 0;
        if (gcFinalizer && !finalizers.includes(gcFinalizer)) md.finalizers = [...finalizers.filter((f) => f !== 'orphan' && f !== 'foregroundDeletion'), gcFinalizer];
        if (type.terminatingPhase) setPath(obj, `${type.statusField ?? 'status'}.phase`, type.terminatingPhase);
        if (dryRun) return { code: 200, body: JSON.stringify(obj), obj };
        const r = await this.commit('update', e.key, await this.toStored(type, obj), e.rev);
        if (r.ok) return { code: 200, body: (await this.asServed(type, [r.bytes!]))[0], obj };
        await this.afterConflict(t, r);
        continue;
      }
      const status = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: t.name, group: type.group || undefined, kind: type.resource, uid: e.uid } });
      if (dryRun) return { code: 200, body: status, obj: old };
      const r = await this.ctx.backend.write({ type: 'delete', key: e.key, expectRevision: e.rev });
      if (r.ok) {
        await type.strategy?.afterDelete?.(old);
        return { code: 200, body: status, obj: old };
      }
      // Preconditions are checked again against the fresh object on the next attempt.
      await this.afterConflict(t, r);
    }
  }

  async deleteCollection(req: KRequest, res: KResponse, t: Target, user: UserInfo): Promise<void> {
    const opts = await this.deleteOptions(req);
    const sel = this.selectors(t.type, req.query);
    await this.consistent();
    const targets = [...this.rc(t.type).range(t.namespace)].filter((e) => !sel.matches || sel.matches(e));
    const deleted: KObject[] = [];
    for (const e of targets) {
      try {
        const r = await this.deleteObject({ ...t, namespace: e.namespace, name: e.name }, user, opts);
        if (r.obj) deleted.push(r.obj);
      } catch (err) {
        if (!(err instanceof StatusError && err.code === 404)) throw err;
      }
    }
    await this.sendWritten(req, res, t, 200, withWarnings(JSON_HEADERS, defaultPolicyWarning(t.type, opts)), JSON.stringify({ kind: `${t.type.kind}List`, apiVersion: gv(t.type), metadata: { resourceVersion: String(this.ctx.cache.rev) }, items: deleted }));
  }
}

/**
 * A deletion's propagation policy: the options', else the type's default (the reference's
 * DefaultGarbageCollectionPolicy) unless finalizers on the object already ask for one, as the
 * reference's shouldOrphanDependents orders them; else Background.
 */
function propagation(type: TypeDef, opts: Record<string, any>, finalizers: string[]): string {
  if (opts.propagationPolicy != null) return opts.propagationPolicy;
  if (opts.orphanDependents != null) return opts.orphanDependents === true ? 'Orphan' : 'Background';
  const asked = finalizers.includes('orphan') || finalizers.includes('foregroundDeletion');
  return type.defaultPropagation && !asked ? type.defaultPropagation.policy : 'Background';
}

/** The type's warning for a deletion that leaves its policy to the default (batch/v1 Jobs: the pods stay). */
function defaultPolicyWarning(type: TypeDef, opts: Record<string, any>): string[] {
  const w = type.defaultPropagation?.warning;
  return w && opts.propagationPolicy == null && opts.orphanDependents == null ? [w] : [];
}
