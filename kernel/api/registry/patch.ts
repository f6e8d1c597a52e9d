// PATCH: JSON patch, merge patch, strategic merge patch and server-side apply, including apply's
// create of what does not exist and a patch of the scale sub-resource. The merge runs on the worker
// pool for large objects; the patched object then goes through the write path (write.ts).
import type { KObject, UserInfo } from '../../contracts/index.js';
import { errors, StatusError } from '../../contracts/status.js';
import type { KRequest, KResponse } from '../../http/types.js';
import { decodeYaml } from '../repr/negotiate.js';
import { depthError, parseJson } from '../../../workers/body/decode.js';
import { gv } from '../catalog.js';
import { checkWriteOptions, queryBool } from '../options.js';
import { runMerge } from '../../../workers/pool.js';
import { conflictError, runMergeTask, withManagedFields, type ApplyResult, type MergeTask } from '../../../workers/merge/index.js';
import { JSON_HEADERS, checked, defsKey, mergeError, mergeSize, now, resetFields } from './util.js';
import { collectWarnings, withWarnings, type Target } from './base.js';
import { RegistryWrites } from './write.js';

export class RegistryPatch extends RegistryWrites {
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
    if (isApply && !/^\s*[{[]/.test(text)) patch = await decodeYaml(raw, 'error decoding patch: ', this.ctx.maxBodyBytes);
    else {
      try { patch = parseJson(text); } catch (e) {
        // (a body nested too deep is refused as JSON: YAML would only say it again, less precisely)
        if (!isApply || /exceeded max depth/.test((e as Error).message)) throw errors.badRequest(`error decoding patch: ${(e as Error).message}`);
        patch = await decodeYaml(raw, 'error decoding patch: ', this.ctx.maxBodyBytes);
      }
    }
    if (isApply && (typeof patch !== 'object' || patch === null || Array.isArray(patch))) throw errors.badRequest('error decoding YAML: the applied configuration must be an object');
    const fm = { ...this.fieldManager(req), size: raw.length };
    // (a deep patch of a custom resource counts as large: mergeSize)
    const size = mergeSize(type, raw.length + (this.current(type, t.namespace, t.name)?.bytes.length ?? 0), patch);
    const key = defsKey(type);
    const merge = async (cur: KObject): Promise<KObject> => {
      const task: MergeTask = ct === 'application/json-patch+json' ? { op: 'json-patch', doc: cur, patch }
        : ct === 'application/merge-patch+json' ? { op: 'merge-patch', doc: cur, patch }
        : { op: 'strategic', doc: cur, patch, schema: type.schema, definitions: type.definitions };
      const fields = (req.query.get('fieldValidation') || 'Warn') !== 'Ignore';
      const check = type.schema ? { schema: type.schema, definitions: type.definitions, fields, typed: !type.unstructured, raw: ct === 'application/json-patch+json' ? undefined : text } : undefined;
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
}

/** An object nested past MAX_DEPTH (a patch can deepen one) is refused before anything recurses through it. */
function tooDeep(obj: unknown): void {
  const deep = depthError(obj);
  if (deep) throw errors.badRequest(deep);
}
