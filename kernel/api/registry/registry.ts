// The generic registry: get, list, watch, create, update, patch, delete and deletecollection for
// every type, driven by its TypeDef. Nothing here knows a particular type. The read path (get, list,
// watch) is in base.ts, read.ts and watch.ts; the write path follows here.
import type { KObject, AdmissionAttributes, Operation, TypeDef, UserInfo, WriteFinisher, WriteGuard, WriteResult, FieldCause, UpstreamTarget } from '../../contracts/index.js';
import { errors, StatusError } from '../../contracts/status.js';
import type { KRequest, KResponse } from '../../http/types.js';
import { decodeBody, decodedYamlDuplicates, decodeYaml } from '../repr/negotiate.js';
import { goPrint, goQuote, validateObjectMeta, validateObjectMetaUpdate } from '../validation.js';
import { decodeProtobuf, decodeDeleteOptions } from '../repr/protobuf.js';
import { checkJsonOnWorker, checksJsonOnWorker, runMerge } from '../../../workers/pool.js';
import { dropNullFields, findDuplicateFields, decodeTypeError, duplicateYamlKeyLines, findDuplicateYamlKeys, pruneUnknown, strictDecodingMessage, strictErrors, unknownFields, compileValidator } from '../fieldvalidation.js';
import { warningValue } from '../warnings.js';
import { checked, defsKey, JSON_HEADERS, clone, getPath, mergeError, now, parse, resetFields, setPath, type FieldManagement } from './util.js';
import { type Target, collectWarnings, withWarnings } from './base.js';
import { RegistryWatch } from './watch.js';
import { randomUUID, randomBytes } from 'node:crypto';
import { storageKey } from '../../store/cache.js';
import { giveTurn } from '../../watch/slicer.js';
import { gv, storedApiVersion } from '../catalog.js';
import { checkWriteOptions, queryBool, dryRunCauses, queryInt } from '../options.js';
import { managerFromUserAgent, type MergeTask, conflictError, runMergeTask, withManagedFields, type ApplyResult } from '../../../workers/merge/index.js';
import { WriteQueue } from '../../store/writequeue.js';
import { applyScale, scaleOf } from './scale.js';
import { depthError, parseJson } from '../../../workers/decode.js';
import { proxyConnect, type ConnectOptions } from '../proxy.js';

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

export type { Admission, AuditAttach, RegistryContext, Target } from './base.js';

export class Registry extends RegistryWatch {
  /** A create or update body: JSON, YAML, or Protobuf for types (and sub-resources) with a Protobuf schema. */
  async decode(req: KRequest, t: Target, raw: Buffer): Promise<KObject> {
    if (this.isProtobuf(req)) return decodeProtobuf(raw, this.ctx.brand, t.type, t.subresource);
    const ct = (req.header('content-type') ?? 'application/json').split(';')[0].trim().toLowerCase();
    if (t.type.schema && (t.subresource === '' || t.subresource === 'status') && checksJsonOnWorker(raw.length) && (ct === 'application/json' || ct === '' || ct === '*/*')) {
      return this.decodeOnWorker(req, t, raw);
    }
    const obj = await decodeBody(req.header('content-type'), raw);
    if (t.type.schema) dropNullFields(obj, t.type.schema, t.type.definitions);
    return obj;
  }

  /**
   * A large JSON body: decode() and fieldValidation()'s passes over every key run on a worker
   * (workers/checkbody.ts), which sends back the pruned object's JSON and its findings; those wait
   * in `checked` for fieldValidation().
   */
  private async decodeOnWorker(req: KRequest, t: Target, raw: Buffer): Promise<KObject> {
    const fields = (req.query.get('fieldValidation') || 'Warn') !== 'Ignore';
    const r = await checkJsonOnWorker({ op: 'check-json', text: raw.toString('utf8'), schema: t.type.schema!, definitions: t.type.definitions, fields }, defsKey(t.type));
    if (!r.ok) throw errors.badRequest(`the body of the request could not be decoded as JSON: ${r.message}`);
    const obj = JSON.parse(r.json) as unknown;
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw errors.badRequest('the body of the request must be a JSON object');
    checked.set(obj, r);
    return obj as KObject;
  }

  /**
   * fieldValidation=Strict | Warn (the default) | Ignore: unknown and duplicate fields are a 400 naming
   * them all (Strict: the reference's strict decoding error), one Warning each (Warn), or nothing
   * (Ignore). The mode itself was checked with the write options.
   */
  fieldValidation(req: KRequest, t: Target, obj: KObject, raw: Buffer | undefined, patch?: unknown, apply = false): Record<string, string> {
    const mode = req.query.get('fieldValidation') || 'Warn';
    // Checked already on a worker (decodeOnWorker, or with a patch's merge), pruned there too.
    const done = checked.get(obj);
    if (done) checked.delete(obj);
    // A value the typed decoding cannot hold (a wrong JSON type, a number out of range) is a decode error, whatever the mode.
    const typeError = done ? done.typeError : t.type.schema ? decodeTypeError(obj, t.type.schema, t.type.definitions, raw?.toString('utf8')) : undefined;
    if (typeError && patch !== undefined) {
      // A patched object that does not decode is an Invalid on the field "patch", as the reference words it.
      throw errors.invalid('', '', '', [{ reason: 'FieldValueInvalid', field: 'patch', message: `Invalid value: ${goQuote(JSON.stringify(obj))}: ${typeError}` }]);
    }
    if (typeError) throw errors.badRequest(`${t.type.kind} in version ${goQuote(t.type.version)} cannot be handled as a ${t.type.kind}: ${typeError}`);
    // An applied configuration's unknown fields are the apply's own error (its typed patch cannot be built), whatever the mode.
    const unknown = mode === 'Ignore' || apply ? [] : done ? done.unknown : unknownFields(t.type, obj);
    let dups: string[] = done && raw ? done.duplicates : [];
    let text: string | undefined;
    const position = new Map<string, number>();
    // (a body checked on a worker was JSON, and is not copied into a string again here)
    const json = !!raw && (!!done || /^\s*[{[]/.test((text = raw.toString('utf8'))));
    if (mode !== 'Ignore' && raw && !done) dups = json ? findDuplicateFields(text!, 100, position) : decodedYamlDuplicates(raw) ?? findDuplicateYamlKeys(text!);
    // Whatever the mode, what the schema does not know is not stored (as typed decoding drops it).
    if (t.type.schema && !apply && !done) pruneUnknown(obj, t.type.schema, t.type.definitions);
    if (!unknown.length && !dups.length) return {};
    const msgs = strictErrors(unknown, dups, !raw ? {} : !json ? { yaml: dups.length ? duplicateYamlKeyLines(text!) : [] } : t.type.unstructured ? { unstructured: true } : { position });
    if (mode === 'Strict') {
      if (patch === undefined) throw errors.badRequest(strictDecodingMessage(t.type.kind, t.type.version, msgs));
      // A patch's strict errors are an Invalid on the field "patch", the patch printed as a Go map.
      throw errors.invalid('', '', '', [{ reason: 'FieldValueInvalid', field: 'patch', message: `Invalid value: ${goQuote(goPrint(patch))}: strict decoding error: ${msgs.join(', ')}` }]);
    }
    return { warning: msgs.map(warningValue).join('\n') };
  }

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
    if (old) causes.push(...validateObjectMetaUpdate(obj.metadata ?? {}, old.metadata ?? {}));
    causes.push(...compileValidator(type)(obj));
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
      const text = JSON.stringify(obj);
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
    if (fm && !fm.applied) await this.trackFields(t, undefined, obj, fm.manager, fm.size ?? 0);
    await this.guard(t, 'CREATE', obj, undefined, user);
    const attrs = this.attrs('CREATE', { ...t, name: md.name ?? '' }, user, dryRun, obj);
    await this.ctx.admission.admit(attrs);
    // Server-set metadata, and a fresh status where status has its own endpoint.
    md.uid = randomUUID();
    md.creationTimestamp = now();
    delete md.deletionTimestamp;
    delete md.deletionGracePeriodSeconds;
    if (type.hasSpec) md.generation = 1;
    if (type.subresources?.includes('status') && type.statusField) {
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
      if (large) await giveTurn();
      if (dryRun) {
        // A dry run answers what the real create would: an existing name is a conflict.
        if (!generate && this.current(type, md.namespace ?? '', md.name!)) throw errors.alreadyExists(type.group, type.resource, md.name!);
        return { ok: false, value: Buffer.from(JSON.stringify(obj)) };
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
    if (t.subresource === 'scale') return this.updateScale(req, res, t, user, dryRun, () => body);
    const warnings = this.fieldValidation(req, t, body, this.isProtobuf(req) ? undefined : raw);
    this.checkTypeMeta(t, body);
    if (body.metadata!.name && body.metadata!.name !== t.name) throw errors.badRequest(`the name of the object (${body.metadata!.name}) does not match the name on the URL (${t.name})`);
    body.metadata!.name = t.name;
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
        setPath(obj, subField, clone(getPath(sent, subField)));
        const keep = new Set(type.statusKeepsMetadata ?? []);
        const smd = (sent.metadata ?? {}) as Record<string, unknown>;
        const md = obj.metadata as Record<string, unknown>;
        for (const k of new Set([...Object.keys(smd), ...Object.keys(md)])) {
          if (keep.has(k)) continue;
          if (smd[k] === undefined) delete md[k];
          else md[k] = clone(smd[k]);
        }
      } else if (subField) {
        const v = getPath(obj, subField);
        // An apply to the sub-resource computed the ownership of this write: keep it.
        const applied = fm?.applied ? obj.metadata?.managedFields : undefined;
        obj = clone(old);
        setPath(obj, subField, clone(v));
        if (applied) obj.metadata!.managedFields = applied;
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
      // A status write never bumps generation (the reference's status strategies keep the stored spec).
      if (type.hasSpec) nmd.generation = (omd.generation ?? 1) + (sub !== 'status' && (inStorage ? specOf(inStorage(obj)) !== specOf(inStorage(parse(e))) : specOf(obj) !== specOf(old)) ? 1 : 0);
      else delete nmd.generation;
      if (fm && !fm.applied) await this.trackFields(t, old, obj, fm.manager, 2 * e.bytes.length + (fm.size ?? 0));
      if (!t.subresource) await this.guard(t, 'UPDATE', obj, old, user);
      const attrs = this.attrs('UPDATE', t, user, dryRun, obj, old);
      await this.ctx.admission.admit(attrs);
      const finish = await type.strategy?.beginUpdate?.(obj, old, { dryRun, user, subresource: t.subresource });
      const out = await settle(finish, async (): Promise<{ ok: boolean; value: { code: number; bytes: Buffer } | undefined }> => {
        const large = e.bytes.length + (fm?.size ?? 0) >= LARGE_WRITE_BYTES;
        await this.validate(t, obj, old, large);
        await this.ctx.admission.validate(attrs);
        if (large) await giveTurn();
        // The last finalizer removed from an object being deleted: the object goes.
        if (nmd.deletionTimestamp && !nmd.finalizers?.length && !this.extraFinalizers(type, obj)) {
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
        if (bytes.equals(e.bytes)) return { ok: true, value: { code: 200, bytes: (await this.asServed(type, [e.bytes]))[0] } }; // no change: no write, no event
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

  /** Records who owns what after a non-apply write (Part A, server-side apply rules 2 and 10). */
  /** `size`: bytes of input, to choose inline or worker (from lengths already known: no serializing to measure). */
  protected async trackFields(t: Target, old: KObject | undefined, obj: KObject, manager: string, size: number): Promise<void> {
    const type = t.type;
    const task: MergeTask = {
      op: 'update-managed-fields', old: old ?? null, next: obj, manager, apiVersion: gv(type), schema: type.schema, definitions: type.definitions,
      time: now(), subresource: t.subresource || undefined, serverSideApply: this.ctx.featureGates.ServerSideApply !== false, resetFields: resetFields(type, t.subresource),
    };
    const r = await runMerge(task, size, defsKey(type));
    if (!r.ok) throw mergeError(r.error);
    const entries = 'managedFields' in r ? r.managedFields : [];
    if (entries.length) obj.metadata!.managedFields = entries;
    else delete obj.metadata!.managedFields;
  }

  /**
   * PATCH: JSON patch, merge patch, strategic merge patch (types with a schema) and server-side apply
   * (with the ServerSideApply feature). The merge runs inline for small objects and on the worker pool
   * for large ones; every write records field ownership.
   */
  async patch(req: KRequest, res: KResponse, t: Target, user: UserInfo): Promise<void> {
    const type = t.type;
    const ct = (req.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
    const ssa = this.ctx.featureGates.ServerSideApply !== false;
    const accepted = ['application/json-patch+json', 'application/merge-patch+json', ...(ssa ? ['application/apply-patch+yaml'] : []), ...(type.schema && type.strategicMerge !== false ? ['application/strategic-merge-patch+json'] : [])];
    if (!accepted.includes(ct)) throw errors.unsupportedMediaType(accepted);
    const raw = await req.body(this.ctx.maxBodyBytes);
    const isApply = ct === 'application/apply-patch+yaml';
    const dryRun = checkWriteOptions(req.query, this.ctx.brand, 'PatchOptions', isApply);
    const force = queryBool(req.query, 'force') ?? false;
    let patch: unknown;
    // An apply body is YAML (JSON is YAML): JSON (what clients send) goes through the fast native
    // parser first; what it refuses (a YAML flow mapping that looks like JSON, with trailing commas)
    // is read as YAML, as the reference reads every apply body. YAML keeps the last of duplicate keys
    // as JSON does, and fieldValidation reports them.
    const text = raw.toString('utf8');
    if (isApply && !/^\s*[{[]/.test(text)) patch = await decodeYaml(raw, 'error decoding patch: ');
    else {
      try { patch = parseJson(text); } catch (e) {
        // (a body nested too deep is refused as JSON: YAML would only say it again, less precisely)
        if (!isApply || /exceeded max depth/.test((e as Error).message)) throw errors.badRequest(`error decoding patch: ${(e as Error).message}`);
        patch = await decodeYaml(raw, 'error decoding patch: ');
      }
    }
    if (isApply && (typeof patch !== 'object' || patch === null || Array.isArray(patch))) throw errors.badRequest('error decoding YAML: the applied configuration must be an object');
    const fm = { ...this.fieldManager(req), size: raw.length };
    const size = raw.length + (this.current(type, t.namespace, t.name)?.bytes.length ?? 0);
    const key = defsKey(type);
    const merge = async (cur: KObject): Promise<KObject> => {
      const task: MergeTask = ct === 'application/json-patch+json' ? { op: 'json-patch', doc: cur, patch }
        : ct === 'application/merge-patch+json' ? { op: 'merge-patch', doc: cur, patch }
        : { op: 'strategic', doc: cur, patch, schema: type.schema, definitions: type.definitions };
      const fields = (req.query.get('fieldValidation') || 'Warn') !== 'Ignore';
      const check = type.schema ? { schema: type.schema, definitions: type.definitions, fields, raw: ct === 'application/json-patch+json' ? undefined : text } : undefined;
      const r = await runMerge(task, size, key, check);
      if (!r.ok) throw mergeError(r.error);
      const out = (r as { value: unknown }).value;
      if (r.checked && typeof out === 'object' && out !== null) checked.set(out, r.checked);
      if (typeof out !== 'object' || out === null || Array.isArray(out)) throw errors.badRequest('the patch does not result in an object');
      // Merges never nest deeper than their (bounded) inputs; a JSON patch can add a deep value deep down.
      if (task.op === 'json-patch') tooDeep(out);
      // A resourceVersion in the patch is a precondition.
      const rv = (out as KObject).metadata?.resourceVersion;
      if (rv !== undefined && rv !== cur.metadata?.resourceVersion) throw errors.conflict(type.group, type.resource, t.name, 'the object has been modified; please apply your changes to the latest version and try again');
      // The patched object is checked like a created or updated one (unknown fields named, then dropped).
      patchWarnings = this.fieldValidation(req, t, out as KObject, ct === 'application/json-patch+json' ? undefined : raw, patch);
      return out as KObject;
    };
    let patchWarnings: Record<string, string> = {};
    const applyTo = async (live: KObject | null): Promise<KObject> => {
      // A resourceVersion in the applied configuration is a precondition, as for any write.
      const rv = (patch as KObject).metadata?.resourceVersion;
      if (rv !== undefined && rv !== '' && rv !== live?.metadata?.resourceVersion) throw errors.conflict(type.group, type.resource, t.name, 'the object has been modified; please apply your changes to the latest version and try again');
      const r = await runMerge({
        op: 'apply', live, applied: patch as KObject, manager: fm.manager, force, schema: type.schema, definitions: type.definitions,
        apiVersion: gv(type), kind: type.kind, time: now(), subresource: t.subresource || undefined, defaultManagerName: this.ctx.brand.kubectlManager,
        lastAppliedAnnotation: this.ctx.brand.lastAppliedAnnotation, serverSideApply: ssa, metaGroup: `meta.${this.ctx.brand.domain}`, resetFields: resetFields(type, t.subresource),
      }, size, key);
      if (!r.ok) throw mergeError(r.error);
      const a = (r as { apply: ApplyResult }).apply;
      if ('conflicts' in a) throw conflictError(a.conflicts);
      if ('error' in a) throw mergeError(a.error);
      return withManagedFields(a.object, a.managedFields);
    };
    if (t.subresource === 'scale') {
      // Scale is a small fixed shape: a JSON patch applies as such, every other kind merges.
      return this.updateScale(req, res, t, user, dryRun, (scale) => {
        const r = runMergeTask(ct === 'application/json-patch+json' ? { op: 'json-patch', doc: scale, patch } : { op: 'merge-patch', doc: scale, patch });
        if (!r.ok) throw mergeError(r.error);
        return (r as { value: KObject }).value;
      });
    }
    if (isApply) {
      const appliedName = (patch as KObject).metadata?.name;
      if (appliedName !== undefined && appliedName !== t.name) throw errors.badRequest(`the name of the object (${appliedName}) does not match the name on the URL (${t.name})`);
      const warnings = this.fieldValidation(req, t, patch as KObject, raw, undefined, true);
      if (!this.current(type, t.namespace, t.name) && !t.subresource) {
        // Rule 1: apply creates what does not exist.
        const obj = await applyTo(null);
        obj.metadata = { ...obj.metadata, name: t.name };
        try {
          const { result: out, warned } = await collectWarnings(t, (t) => this.createObject(t, obj, user, dryRun, { ...fm, applied: true }));
          return this.sendWritten(req, res, t, 201, withWarnings({ ...JSON_HEADERS, ...warnings }, warned), out);
        } catch (err) {
          if (!(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err;
        }
      }
      const { result: { code, bytes }, warned } = await this.queued(t, () => collectWarnings(t, (t) => this.updateObject(t, user, dryRun, (cur) => applyTo(cur), undefined, { ...fm, applied: true })));
      return this.sendWritten(req, res, t, code, withWarnings({ ...JSON_HEADERS, ...warnings }, warned), bytes);
    }
    const { result: { code, bytes }, warned } = await this.queued(t, () => collectWarnings(t, (t) => this.updateObject(t, user, dryRun, merge, undefined, fm)));
    await this.sendWritten(req, res, t, code, withWarnings({ ...JSON_HEADERS, ...patchWarnings }, warned), bytes);
  }

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
    const opts = await this.deleteOptions(req);
    const { result: { code, body }, warned } = await this.queued(t, () => collectWarnings(t, (t) => this.deleteObject(t, user, opts)));
    await this.sendWritten(req, res, t, code, withWarnings(JSON_HEADERS, warned), body);
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
      const policy: string = opts.propagationPolicy ?? (opts.orphanDependents === true ? 'Orphan' : 'Background');
      const finalizers = [...(old.metadata!.finalizers ?? [])];
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
    await this.sendWritten(req, res, t, 200, JSON_HEADERS, JSON.stringify({ kind: `${t.type.kind}List`, apiVersion: gv(t.type), metadata: { resourceVersion: String(this.ctx.cache.rev) }, items: deleted }));
  }

  /**
   * Streaming sub-resources (pods/exec, attach, portforward, proxy): CONNECT admission sees the
   * options from the query (command, container, stdin, tty, ...), as the reference builds them;
   * then the request goes to the upstream a plugin names (kernel/api/proxy.ts), upgrades included, or,
   * with no plugin serving the sub-resource, the answer is 503.
   */
  async connect(req: KRequest, res: KResponse, t: Target, user: UserInfo, stored: string, upstream?: () => Promise<UpstreamTarget>, how?: ConnectOptions): Promise<void> {
    const e = this.current(t.type, t.namespace, stored);
    if (!e) throw errors.notFound(t.type.group, t.type.resource, stored);
    const options: Record<string, unknown> = { kind: t.type.subresourceInfo?.[t.subresource]?.kind ?? 'ConnectOptions', apiVersion: 'v1' };
    for (const [k, v] of req.query) {
      const bool = ['stdin', 'stdout', 'stderr', 'tty'].includes(k);
      if (k === 'command') options.command = [...((options.command as string[]) ?? []), v];
      else if (k === 'ports') options.ports = [...((options.ports as unknown[]) ?? []), Number(v)];
      else options[k] = bool ? queryBool(req.query, k) : v;
    }
    // As in the reference, the object of a CONNECT is the options; plugins read the pod themselves.
    const attrs = this.attrs('CONNECT', t, user, false, options as KObject, undefined, options);
    await this.ctx.admission.admit(attrs);
    await this.ctx.admission.validate(attrs);
    if (!upstream) throw errors.serviceUnavailable(`unable to ${t.subresource} into ${t.type.resource} "${t.name}": no node agent is connected to this server`);
    await proxyConnect(req, res, await upstream(), this.ctx.maxBodyBytes, how);
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

/** An object nested past MAX_DEPTH (a patch can deepen one) is refused before anything recurses through it. */
function tooDeep(obj: unknown): void {
  const deep = depthError(obj);
  if (deep) throw errors.badRequest(deep);
}
