// The write path: create and update (plain, status and other sub-resources, scale), with what every
// write goes through: type meta checks, defaults, field ownership, plugins' guards, admission, the
// type's strategy, validation, and the commit to storage (retried on conflict where the client set no
// resourceVersion). Writes to one object queue behind each other. Patch and delete build on this.
import { randomUUID, randomBytes } from 'node:crypto';
import type { AdmissionAttributes, KObject, Operation, TypeDef, UserInfo, WriteFinisher, WriteGuard, WriteResult } from '../../contracts/index.js';
import { errors, StatusError } from '../../contracts/status.js';
import type { KRequest, KResponse } from '../../http/types.js';
import { storageKey } from '../../store/cache.js';
import { giveTurn } from '../../watch/slicer.js';
import { stringifySliced } from '../../../workers/stringify.js';
import { gv, storedApiVersion } from '../catalog.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../validation.js';
import { checkWriteOptions } from '../options.js';
import { runMerge } from '../../../workers/pool.js';
import { managerFromUserAgent, type MergeTask } from '../../../workers/merge/index.js';
import { WriteQueue } from './writequeue.js';
import { typeValidator } from '../fieldvalidation.js';
import { JSON_HEADERS, clone, defsKey, getPath, mergeError, mergeSize, now, parse, resetFields, unchangedWrite, setPath, type FieldManagement } from './util.js';
import { applyScale, scaleOf } from './scale.js';
import { collectWarnings, withWarnings, type Target } from './base.js';
import { RegistryBody } from './body.js';

/** Fresh names tried when a generated name is taken. */
const MAX_NAME_ATTEMPTS = 8;
const NAME_SUFFIX_CHARS = 'bcdfghjklmnpqrstvwxz2456789'; // as the reference: no vowels, no 0/1/3 look-alikes

function randomSuffix(n = 5): string {
  const b = randomBytes(n);
  let s = '';
  for (let i = 0; i < n; i++) s += NAME_SUFFIX_CHARS[b[i] % NAME_SUFFIX_CHARS.length];
  return s;
}

/** Everything but metadata and status: a change here bumps metadata.generation. */
function specOf(o: KObject): string {
  const { metadata: _m, status: _s, ...rest } = o;
  return JSON.stringify(rest);
}

/** Each type's zero object (see zeroOf). */
const ZERO_OBJECTS = new WeakMap<TypeDef, KObject>();

export class RegistryWrites extends RegistryBody {
  private guards = new Map<string, WriteGuard[]>();
  /** Clients' writes to one object wait for each other (see WriteQueue). */
  private writes = new WriteQueue();

  /** Runs a client's write to t's object behind the writes to it already under way. */
  protected queued<T>(t: Target, fn: () => Promise<T>): Promise<T> {
    return this.writes.run(storageKey(t.type, t.namespace, t.name), fn);
  }

  /**
   * Another writer committed first (a plugin's write, or one outside the queue): wait until the cache
   * holds that write, so the next attempt reads it instead of the version that just lost.
   */
  protected async afterConflict(t: Target, r: WriteResult): Promise<void> {
    if (r.ok) return;
    if (r.reason === 'not-found') throw errors.notFound(t.type.group, t.type.resource, t.name);
    const rev = r.current?.modRevision ?? this.ctx.backend.currentRevision();
    if (!(await this.ctx.cache.waitFor(rev, 3000))) throw errors.timeout('Timeout: waiting for the cache to catch up', 1);
  }

  /** A plugin's check on every create and update of a type (see PluginHost.guardWrites). */
  addGuard(group: string, resource: string, guard: WriteGuard): void {
    const k = `${group}/${resource}`;
    this.guards.set(k, [...(this.guards.get(k) ?? []), guard]);
  }

  protected async guard(t: Target, op: 'CREATE' | 'UPDATE', obj: KObject, old: KObject | undefined, user: UserInfo) {
    for (const g of this.guards.get(`${t.type.group}/${t.type.resource}`) ?? []) await g(op, obj, old, user);
  }

  // ------------------------------------------------------------------ admission, checks, commit

  protected attrs(op: Operation, t: Target, user: UserInfo, dryRun: boolean, object?: KObject, oldObject?: KObject, options?: Record<string, unknown>): AdmissionAttributes {
    const type = t.type;
    const a: AdmissionAttributes = {
      operation: op, object, oldObject, subresource: t.subresource, namespace: t.namespace, name: t.name, user, dryRun, options, type,
      warn: (text) => { t.warnings?.push(text); },
      kind: { group: type.group, version: type.version, kind: type.kind },
      resource: { group: type.group, version: type.version, resource: type.resource },
    };
    t.audit?.attach(a);
    return a;
  }

  /**
   * Admission of a create on a sub-resource served by a plugin (pods/binding, pods/eviction,
   * serviceaccounts/token): both phases run on the request's object, under the sub-resource's own
   * kind, before the plugin acts, as for any other create.
   */
  async admitSubresourceCreate(t: Target, user: UserInfo, dryRun: boolean, obj: KObject): Promise<void> {
    const a = this.attrs('CREATE', t, user, dryRun, obj);
    const info = t.type.subresourceInfo?.[t.subresource];
    if (info?.kind) a.kind = { group: info.group ?? t.type.group, version: info.version ?? t.type.version, kind: info.kind };
    await this.ctx.admission.admit(a);
    await this.ctx.admission.validate(a);
  }

  /** `large`: the structural check and the type's rules each take long; other requests run in between. */
  protected async validate(t: Target, obj: KObject, old: KObject | undefined, large: boolean) {
    const type = t.type;
    const causes = validateObjectMeta(obj.metadata ?? {}, { namespaced: type.namespaced, nameRule: type.nameRule ?? 'subdomain', isCreate: !old });
    if (old) {
      const meta = causes.slice();
      causes.push(...validateObjectMetaUpdate(obj.metadata ?? {}, old.metadata ?? {}));
      for (let i = 0; i < (type.metadataChecksOnUpdate ?? 1); i++) causes.push(...meta);
    }
    // A deep schema's check is compiled in pieces on the first write, other requests run in between.
    const check = typeValidator(type);
    causes.push(...(check instanceof Promise ? await check : check)(obj));
    if (large) await giveTurn();
    if (type.validate) causes.push(...type.validate(obj, old, this.ctx.brand, t.subresource || undefined));
    // The reference names the kind it validates: the stored group's, for a type stored with another group's resource.
    if (causes.length) throw errors.invalid(type.storageGroup ?? type.group, type.kind, obj.metadata?.name ?? obj.metadata?.generateName ?? '', causes);
  }

  protected checkTypeMeta(t: Target, obj: KObject) {
    const want = gv(t.type);
    if (obj.apiVersion !== undefined && obj.apiVersion !== want) throw errors.badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${want})`);
    if (obj.kind !== undefined && obj.kind !== t.type.kind) throw errors.badRequest(`the kind in the data (${obj.kind}) does not match the expected kind (${t.type.kind})`);
    obj.apiVersion = want;
    obj.kind = t.type.kind;
    const md = (obj.metadata ??= {});
    if (typeof md !== 'object' || Array.isArray(md)) throw errors.badRequest('metadata must be an object');
    if (t.type.namespaced) {
      if (md.namespace && t.namespace && md.namespace !== t.namespace) throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      md.namespace = t.namespace || md.namespace;
    } else {
      delete md.namespace;
    }
  }

  /** Commit with the object's resourceVersion set to the revision the log assigns; the stored bytes are what every reader gets. */
  protected async commit(op: 'create' | 'update', key: string, obj: KObject, expect = 0, large = false): Promise<WriteResult & { bytes?: Buffer }> {
    let bytes: Buffer | undefined;
    // A large object is serialized before the write, around a token where the revision goes, and the
    // event loop gets a turn: serializing and the log's write would otherwise hold it in one go.
    let around: [Buffer, Buffer] | undefined;
    if (large) {
      const token = `capi-rv-${randomBytes(12).toString('hex')}`;
      obj.metadata!.resourceVersion = token;
      const text = await stringifySliced(obj);
      const at = text.indexOf(`"${token}"`);
      if (at >= 0 && text.indexOf(token, at + token.length) < 0) around = [Buffer.from(text.slice(0, at)), Buffer.from(text.slice(at + token.length + 2))];
      await giveTurn();
    }
    const value = (rev: number) => {
      obj.metadata!.resourceVersion = String(rev);
      return (bytes = around ? Buffer.concat([around[0], Buffer.from(`"${rev}"`), around[1]]) : Buffer.from(JSON.stringify(obj)));
    };
    const r = op === 'create'
      ? await this.ctx.backend.write({ type: 'create', key, value })
      : await this.ctx.backend.write({ type: 'update', key, expectRevision: expect, value });
    // A backend that learns the revision only at commit (etcd) ran the callback with a placeholder:
    // the stored value it returns is the truth.
    if (r.ok) {
      obj.metadata!.resourceVersion = String(r.revision);
      if (r.value) bytes = Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength);
    }
    return { ...r, bytes };
  }

  async create(req: KRequest, res: KResponse, t: Target, user: UserInfo): Promise<void> {
    const dryRun = checkWriteOptions(req.query, this.ctx.brand, 'CreateOptions');
    const raw = await req.body(this.ctx.maxBodyBytes);
    const obj = await this.decode(req, t, raw);
    // Decoding and field checks of a large body each take long (when not done on a worker): other requests run in between.
    if (raw.length >= LARGE_WRITE_BYTES) await giveTurn();
    const warnings = this.fieldValidation(req, t, obj, this.isProtobuf(req) ? undefined : raw);
    const fm = { ...this.fieldManager(req), size: raw.length };
    const { result: out, warned } = await collectWarnings(t, (t) => this.createObject(t, obj, user, dryRun, fm));
    await this.sendWritten(req, res, t, 201, withWarnings({ ...JSON_HEADERS, ...warnings }, warned), out);
  }

  async createObject(t: Target, obj: KObject, user: UserInfo, dryRun: boolean, fm?: FieldManagement): Promise<Buffer> {
    const type = t.type;
    this.checkTypeMeta(t, obj);
    const md = obj.metadata!;
    if (type.createForbidden) throw errors.methodNotAllowed(type.createForbidden);
    if (md.resourceVersion) throw errors.badRequest('resourceVersion should not be set on objects to be created');
    type.defaults?.(obj, this.ctx.brand);
    // Managed fields compare the object as decoded (Go's shape) with the type's zero value, as the
    // reference's field manager compares the typed object with an empty one; then the stored shape.
    const toStored = type.storedShape?.(obj, 'typed');
    if (fm && !fm.applied) await this.trackFields(t, type.storedShape ? this.zeroOf(type) : undefined, obj, fm.manager, fm.size ?? 0);
    if (toStored && !toStored()) type.storedShape!(obj);
    await this.guard(t, 'CREATE', obj, undefined, user);
    const attrs = this.attrs('CREATE', { ...t, name: md.name ?? '' }, user, dryRun, obj);
    let changed = await this.ctx.admission.admit(attrs);
    // Server-set metadata, and a fresh status where status has its own endpoint (unless the type keeps it).
    md.uid = randomUUID();
    md.creationTimestamp = now();
    delete md.deletionTimestamp;
    delete md.deletionGracePeriodSeconds;
    if (type.hasSpec) md.generation = 1;
    if (type.subresources?.includes('status') && type.statusField && !type.statusOnCreate) {
      changed = true;
      const fresh = clone(obj);
      delete fresh[type.statusField];
      type.defaults?.(fresh, this.ctx.brand);
      if (fresh[type.statusField] === undefined) delete obj[type.statusField];
      else obj[type.statusField] = fresh[type.statusField];
    }
    const generate = !md.name && !!md.generateName;
    if (generate) md.name = md.generateName + randomSuffix();
    const finish = await type.strategy?.beginCreate?.(obj, { dryRun, user, subresource: t.subresource });
    // Validating and serializing a large object each take long: other requests run in between.
    const large = (fm?.size ?? 0) >= LARGE_WRITE_BYTES;
    return settle(finish, async () => {
      await this.validate(t, obj, undefined, large);
      attrs.name = md.name!;
      await this.ctx.admission.validate(attrs);
      this.shapeAgain(t, obj, changed || !!type.strategy?.beginCreate); // what admission and the server added, as the reference's storage keeps it
      if (large) await giveTurn();
      if (dryRun) {
        // A dry run answers what the real create would: an existing name is a conflict.
        if (!generate && this.current(type, md.namespace ?? '', md.name!)) throw errors.alreadyExists(type.group, type.resource, md.name!);
        return { ok: false, value: Buffer.from(large ? await stringifySliced(obj) : JSON.stringify(obj)) };
      }
      for (let attempt = 0; ; attempt++) {
        const r = await this.commit('create', storageKey(type, md.namespace ?? '', md.name!), await this.toStored(type, obj), 0, large);
        if (r.ok) return { ok: true, value: (await this.asServed(type, [r.bytes!]))[0] };
        if (r.reason === 'exists' && generate && attempt < MAX_NAME_ATTEMPTS) {
          md.name = md.generateName + randomSuffix();
          continue;
        }
        if (generate) throw new StatusError(409, 'AlreadyExists', `${type.group ? `${type.resource}.${type.group}` : type.resource} "${md.name}" already exists, the server was not able to generate a unique name for the object`, { name: md.name, group: type.group || undefined, kind: type.resource });
        throw errors.alreadyExists(type.group, type.resource, md.name!);
      }
    });
  }

  async update(req: KRequest, res: KResponse, t: Target, user: UserInfo): Promise<void> {
    const dryRun = checkWriteOptions(req.query, this.ctx.brand, 'UpdateOptions');
    const raw = await req.body(this.ctx.maxBodyBytes);
    const body = await this.decode(req, t, raw);
    // The body must name its object (the reference's checkName: the URL alone does not do).
    if (!body.metadata?.name) throw errors.badRequest(`the name of the object (${t.name} based on URL) was undeterminable: name must be provided`);
    if (t.subresource === 'scale') return this.updateScale(req, res, t, user, dryRun, () => body);
    if (raw.length >= LARGE_WRITE_BYTES) await giveTurn();
    const warnings = this.fieldValidation(req, t, body, this.isProtobuf(req) ? undefined : raw);
    this.checkTypeMeta(t, body);
    // The body names its object, and the same one as the URL.
    if (!body.metadata?.name) throw errors.badRequest(`the name of the object (${t.name} based on URL) was undeterminable: name must be provided`);
    if (body.metadata.name !== t.name) throw errors.badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${t.name})`);
    // Types whose strategy disallows unconditional updates want the version the client read.
    if (!body.metadata!.resourceVersion && t.type.unconditionalUpdate === false) {
      if (!this.current(t.type, t.namespace, t.name)) throw errors.notFound(t.type.group, t.type.resource, t.name);
      // The reference names the resource where the kind would be ("leases.coordination.k8s.io").
      throw errors.invalid(t.type.group, t.type.resource, t.name, [{ reason: 'FieldValueInvalid', field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' }]);
    }
    const fm = { ...this.fieldManager(req), size: raw.length };
    const { result: { code, bytes }, warned } = await this.queued(t, () => collectWarnings(t, (t) => this.updateObject(t, user, dryRun, () => clone(body), body.metadata!.resourceVersion, fm)));
    await this.sendWritten(req, res, t, code, withWarnings({ ...JSON_HEADERS, ...warnings }, warned), bytes);
  }

  /**
   * Read-modify-write: `next` builds the new object from the current one. Without a resourceVersion
   * from the client the write is retried on conflict, against the fresh object, until it commits
   * (the reference's GuaranteedUpdate: an unconditional write never fails because another writer
   * got there first); with one, a stale version is a 409.
   */
  async updateObject(t: Target, user: UserInfo, dryRun: boolean, next: (cur: KObject) => KObject | Promise<KObject>, clientRv?: string, fm?: FieldManagement): Promise<{ code: number; bytes: Buffer }> {
    const type = t.type;
    for (;;) {
      const e = this.current(type, t.namespace, t.name);
      if (!e) throw errors.notFound(type.group, type.resource, t.name);
      const old = await this.fromStored(type, parse(e));
      if (clientRv && clientRv !== String(e.rev)) throw errors.conflict(type.group, type.resource, t.name, 'the object has been modified; please apply your changes to the latest version and try again');
      let obj = await next(clone(old));
      this.checkTypeMeta(t, obj);
      const md = obj.metadata!;
      const omd = old.metadata!;
      if (md.uid && md.uid !== omd.uid) throw errors.conflict(type.group, type.resource, t.name, `Precondition failed: UID in precondition: ${md.uid}, UID in object meta: ${omd.uid}`);
      // Subresources write only their own fields; the main resource never writes them.
      const sub = t.subresource;
      const subField = sub === 'status' ? type.statusField : sub === 'finalize' ? type.finalizersField : sub ? type.subresourceFields?.[sub] : undefined;
      if (sub && !subField) throw errors.methodNotAllowed();
      if (sub === 'status' && subField) {
        // The status strategy: everything outside metadata and status stays as stored; metadata
        // changes apply except what the type's strategy resets (statusKeepsMetadata).
        const sent = obj;
        obj = clone(old);
        setPath(obj, type.statusField!, clone(getPath(sent, type.statusField!)));
        takeMetadata(obj, sent, new Set(type.statusKeepsMetadata ?? []));
      } else if (subField) {
        const sent = obj;
        obj = clone(old);
        for (const f of typeof subField === 'string' ? [subField] : subField) setPath(obj, f, clone(getPath(sent, f)));
        // Some strategies apply metadata changes here as well (CSR approval); the others keep the
        // stored metadata, and then an apply to the sub-resource still records the ownership it computed.
        if (type.subresourcesWritingMetadata?.includes(sub)) takeMetadata(obj, sent, new Set());
        else if (fm?.applied) obj.metadata!.managedFields = sent.metadata?.managedFields;
      } else {
        if (type.statusField) setPath(obj, type.statusField, clone(getPath(old, type.statusField)));
        if (type.finalizersField) setPath(obj, type.finalizersField, clone(getPath(old, type.finalizersField)));
      }
      const nmd = obj.metadata!;
      type.defaults?.(obj, this.ctx.brand);
      nmd.uid = omd.uid;
      nmd.creationTimestamp = omd.creationTimestamp;
      nmd.resourceVersion = omd.resourceVersion;
      if (omd.deletionTimestamp) nmd.deletionTimestamp = omd.deletionTimestamp; else delete nmd.deletionTimestamp;
      if (omd.deletionGracePeriodSeconds !== undefined) nmd.deletionGracePeriodSeconds = omd.deletionGracePeriodSeconds; else delete nmd.deletionGracePeriodSeconds;
      // A version converted in process compares the stored forms: a spec change the served version
      // cannot show (another version's field, an order) is still a change.
      const storedAs = storedApiVersion(type);
      const inStorage = type.convertObject && storedAs !== gv(type) ? (o: KObject) => type.convertObject!(o, storedAs) : undefined;
      const toStored = type.storedShape?.(obj, 'typed');
      if (fm && !fm.applied) await this.trackFields(t, old, obj, fm.manager, 2 * e.bytes.length + (fm.size ?? 0));
      if (toStored && !toStored()) type.storedShape!(obj);
      // A status write never bumps generation (the reference's status strategies keep the stored spec).
      if (type.hasSpec) nmd.generation = (omd.generation ?? 1) + (type.hasSpec === true && sub !== 'status' && (inStorage ? specOf(inStorage(obj)) !== specOf(inStorage(parse(e))) : specOf(obj) !== specOf(old)) ? 1 : 0);
      else delete nmd.generation;
      if (!t.subresource) await this.guard(t, 'UPDATE', obj, old, user);
      const attrs = this.attrs('UPDATE', t, user, dryRun, obj, old);
      const changed = await this.ctx.admission.admit(attrs);
      const finish = await type.strategy?.beginUpdate?.(obj, old, { dryRun, user, subresource: t.subresource });
      const out = await settle(finish, async (): Promise<{ ok: boolean; value: { code: number; bytes: Buffer } | undefined }> => {
        const large = e.bytes.length + (fm?.size ?? 0) >= LARGE_WRITE_BYTES;
        await this.validate(t, obj, old, large);
        await this.ctx.admission.validate(attrs);
        this.shapeAgain(t, obj, changed || !!type.strategy?.beginUpdate);
        if (large) await giveTurn();
        // The last finalizer removed from an object being deleted: the object goes. Not while a
        // graceful deletion's period runs: the node agent still writes the pod's status then.
        if (nmd.deletionTimestamp && !((omd.deletionGracePeriodSeconds ?? 0) > 0) && !nmd.finalizers?.length && !this.extraFinalizers(type, obj)) {
          if (dryRun) return { ok: false, value: { code: 200, bytes: Buffer.from(JSON.stringify(obj)) } };
          const r = await this.ctx.backend.write({ type: 'delete', key: e.key, expectRevision: e.rev });
          if (r.ok) {
            await type.strategy?.afterDelete?.(obj);
            return { ok: true, value: { code: 200, bytes: Buffer.from(JSON.stringify(obj)) } };
          }
          if (clientRv && r.reason === 'conflict') throw errors.conflict(type.group, type.resource, t.name, 'the object has been modified; please apply your changes to the latest version and try again');
          await this.afterConflict(t, r);
          return { ok: false, value: undefined };
        }
        const stored = await this.toStored(type, obj);
        const bytes = Buffer.from(JSON.stringify(stored));
        if (unchangedWrite(bytes, e.bytes)) return { ok: true, value: { code: 200, bytes: (await this.asServed(type, [e.bytes]))[0] } }; // no change: no write, no event
        if (dryRun) return { ok: false, value: { code: 200, bytes: stored === obj ? bytes : Buffer.from(JSON.stringify(obj)) } };
        if (large) await giveTurn();
        const r = await this.commit('update', e.key, stored, e.rev, large);
        if (r.ok) return { ok: true, value: { code: 200, bytes: (await this.asServed(type, [r.bytes!]))[0] } };
        if (clientRv && r.reason === 'conflict') throw errors.conflict(type.group, type.resource, t.name, 'the object has been modified; please apply your changes to the latest version and try again');
        await this.afterConflict(t, r);
        return { ok: false, value: undefined };
      });
      if (out) return out;
    }
  }

  /**
   * A write to the scale sub-resource: `change` builds the new Scale from the current object's, on
   * every attempt, so a patch applies to the fresh object; a resourceVersion in the new Scale is a
   * precondition.
   */
  protected async updateScale(req: KRequest, res: KResponse, t: Target, user: UserInfo, dryRun: boolean, change: (scale: KObject) => KObject) {
    const main = { ...t, subresource: '' };
    const { bytes } = await this.queued(t, () => this.updateObject(main, user, dryRun, (cur) => applyScale(t, cur, change)));
    await this.sendWritten(req, res, t, 200, JSON_HEADERS, JSON.stringify(scaleOf(t.type, JSON.parse(bytes.toString('utf8')))));
  }

  /** Finalizers a type keeps outside metadata.finalizers (namespaces: spec.finalizers). */
  protected extraFinalizers(type: TypeDef, obj: KObject): boolean {
    if (!type.finalizersField) return false;
    const f = getPath(obj, type.finalizersField);
    return Array.isArray(f) && f.length > 0;
  }

  /** The manager a write records: fieldManager, else derived from the User-Agent as the reference does. */
  /** (checkWriteOptions has already refused a bad fieldManager, or a missing one on apply.) */
  protected fieldManager(req: KRequest): FieldManagement {
    return { manager: req.query.get('fieldManager') || managerFromUserAgent(req.header('user-agent') ?? '') || 'unknown' };
  }

  /**
   * The stored shape once more, before the object is stored: whole when more than the server's own
   * metadata may have changed since it was shaped (`changed`: a mutating admission plugin ran, a
   * strategy prepared the write, a fresh status; or a guard saw it), else its metadata alone.
   */
  private shapeAgain(t: Target, obj: KObject, changed: boolean): void {
    const shape = t.type.storedShape;
    if (shape && (changed || this.guards.has(`${t.type.group}/${t.type.resource}`) || !shape(obj, 'metadata'))) shape(obj);
  }

  /** The type's zero value in Go's shape (what its encoder writes for an empty object of it); made once per type, read only. */
  private zeroOf(type: TypeDef): KObject {
    let zero = ZERO_OBJECTS.get(type);
    if (!zero) {
      zero = { apiVersion: gv(type), kind: type.kind, metadata: {} };
      type.storedShape!(zero, 'typed');
      ZERO_OBJECTS.set(type, zero);
    }
    return zero;
  }

  /** Records who owns what after a non-apply write (Part A, server-side apply rules 2 and 10). */
  /** `size`: bytes of input, to choose inline or worker (from lengths already known: no serializing to measure). */
  protected async trackFields(t: Target, old: KObject | undefined, obj: KObject, manager: string, size: number): Promise<void> {
    const type = t.type;
    const task: MergeTask = {
      op: 'update-managed-fields', old: old ?? null, next: obj, manager, apiVersion: gv(type), schema: type.schema, definitions: type.definitions,
      time: now(), subresource: t.subresource || undefined, serverSideApply: this.ctx.featureGates.ServerSideApply !== false, resetFields: resetFields(type, t.subresource),
    };
    const r = await runMerge(task, mergeSize(type, size, obj), defsKey(type));
    if (!r.ok) throw mergeError(r.error);
    const entries = 'managedFields' in r ? r.managedFields : [];
    if (entries.length) obj.metadata!.managedFields = entries;
    else delete obj.metadata!.managedFields;
  }
}

/** The sent metadata over the stored object's, but for the `keep` fields (the server's own are reset after). */
function takeMetadata(obj: KObject, sent: KObject, keep: Set<string>): void {
  const smd = (sent.metadata ?? {}) as Record<string, unknown>;
  const md = obj.metadata as Record<string, unknown>;
  for (const k of new Set([...Object.keys(smd), ...Object.keys(md)])) {
    if (keep.has(k)) continue;
    if (smd[k] === undefined) delete md[k];
    else md[k] = clone(smd[k]);
  }
}

/**
 * Runs the rest of a write a strategy prepared, then tells the strategy whether it committed: `ok`
 * false (dry run, failure, a retry) undoes its reservations. `value` undefined asks the caller to retry.
 */
async function settle<T>(finish: WriteFinisher | void, rest: () => Promise<{ ok: boolean; value: T }>): Promise<T> {
  let r: { ok: boolean; value: T };
  try {
    r = await rest();
  } catch (e) {
    if (finish) await finish(false);
    throw e;
  }
  if (finish) await finish(r.ok);
  return r.value;
}

/** Bytes of a write (body, or body and current object) from which its long steps are separated by a turn of the event loop. */
const LARGE_WRITE_BYTES = 256 * 1024;
