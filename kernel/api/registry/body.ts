// A write's body: decoded from JSON, YAML or Protobuf (a large one checked on a worker), then
// field validation (Strict, Warn or Ignore) of its unknown and duplicate fields, which also drops
// what the schema does not know. Creates, updates and patches (write.ts, patch.ts) use these, and
// the server's sub-resources served by plugins call decode and fieldValidation directly.
import type { KObject } from '../../contracts/index.js';
import { errors } from '../../contracts/status.js';
import type { KRequest } from '../../http/types.js';
import { decodeBody, decodedYamlDuplicates } from '../repr/negotiate.js';
import { goPrint, goQuote } from '../validation.js';
import { decodeProtobuf, protobufBody } from '../repr/protobuf.js';
import { checkJsonOnWorker, checksJsonOnWorker } from '../../../workers/pool.js';
import type { CheckJsonTask } from '../../../workers/body/checkbody.js';
import { YAML_DECODED_FACTOR } from '../../../workers/body/decode.js';
import { dropNullFields, findDuplicateFields, decodeTypeError, duplicateYamlKeyLines, findDuplicateYamlKeys, pruneUnknown, strictDecodingMessage, strictErrors, unknownFields } from '../fieldvalidation.js';
import { warningValue } from '../../ops/warnings.js';
import { checked, defsKey } from './util.js';
import type { Target } from './base.js';
import { RegistryWatch } from './watch.js';
import { parseText } from '../../../workers/parse.js';

export class RegistryBody extends RegistryWatch {
  /** A create or update body: JSON, YAML, or Protobuf for types (and sub-resources) with a Protobuf schema. */
  async decode(req: KRequest, t: Target, raw: Buffer): Promise<KObject> {
    const onWorker = !!t.type.schema && (t.subresource === '' || t.subresource === 'status') && checksJsonOnWorker(raw.length);
    if (this.isProtobuf(req)) {
      if (!onWorker) return decodeProtobuf(raw, this.ctx.brand, t.type, t.subresource);
      // A large one is decoded and checked on a worker (its decode alone held the event loop 60-95 ms for 50,000 keys).
      return this.checkOnWorker(req, t, { text: '', protobuf: protobufBody(raw, this.ctx.brand, t.type, t.subresource) });
    }
    const ct = (req.header('content-type') ?? 'application/json').split(';')[0].trim().toLowerCase();
    if (onWorker && (ct === 'application/json' || ct === '' || ct === '*/*')) return this.checkOnWorker(req, t, { text: raw.toString('utf8') });
    if (onWorker && (ct === 'application/yaml' || ct === 'application/x-yaml' || ct === 'text/yaml')) {
      // A large YAML body is decoded and checked on the same worker (its checks held the event loop 90-110 ms for 45,000 keys).
      return this.checkOnWorker(req, t, { text: raw.toString('utf8'), yaml: { maxDecodedBytes: this.ctx.maxBodyBytes * YAML_DECODED_FACTOR } });
    }
    const obj = await decodeBody(req.header('content-type'), raw, this.ctx.maxBodyBytes);
    if (t.type.schema) dropNullFields(obj, t.type.schema, t.type.definitions);
    return obj;
  }

  /**
   * A large JSON, YAML or Protobuf body: decode() and
   * fieldValidation()'s passes over every key run on a worker (workers/body/checkbody.ts), which sends
   * back the pruned object's JSON and its findings; those wait in `checked` for fieldValidation().
   */
  private async checkOnWorker(req: KRequest, t: Target, body: Pick<CheckJsonTask, 'text' | 'yaml' | 'protobuf'>): Promise<KObject> {
    const fields = (req.query.get('fieldValidation') || 'Warn') !== 'Ignore';
    const r = await checkJsonOnWorker({ op: 'check-json', ...body, schema: t.type.schema!, definitions: t.type.definitions, fields, typed: !t.type.unstructured }, defsKey(t.type));
    if (!r.ok && r.tooLarge) throw errors.tooLarge(r.message);
    if (!r.ok && r.whole) throw errors.badRequest(r.message);
    if (!r.ok) throw errors.badRequest(`the body of the request could not be decoded as ${body.yaml ? 'YAML' : 'JSON'}: ${r.message}`);
    const obj = await parseText(r.json);
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
    // Checked already on a worker (checkOnWorker, or with a patch's merge), pruned there too.
    const done = checked.get(obj);
    if (done) checked.delete(obj);
    // The body as text, once (a body checked on a worker was JSON, and is not copied into a string again here).
    const text = raw && !done ? raw.toString('utf8') : undefined;
    // A value the typed decoding cannot hold (a wrong JSON type, a number out of range) is a decode error, whatever the mode.
    const typeError = done ? done.typeError : t.type.schema ? decodeTypeError(obj, t.type.schema, t.type.definitions, text, !t.type.unstructured) : undefined;
    if (typeError && patch !== undefined) {
      // A patched object that does not decode is an Invalid on the field "patch", as the reference words it.
      throw errors.invalid('', '', '', [{ reason: 'FieldValueInvalid', field: 'patch', message: `Invalid value: ${goQuote(JSON.stringify(obj))}: ${typeError}` }]);
    }
    if (typeError) throw errors.badRequest(`${t.type.kind} in version ${goQuote(t.type.version)} cannot be handled as a ${t.type.kind}: ${typeError}`);
    // An applied configuration's unknown fields are the apply's own error (its typed patch cannot be built), whatever the mode.
    const unknown = mode === 'Ignore' || apply ? [] : done ? done.unknown : unknownFields(t.type, obj);
    let dups: string[] = done && raw ? done.duplicates : [];
    const position = new Map<string, number>(done?.positions);
    const json = !!raw && (done ? !done.yaml : /^\s*[{[]/.test(text!));
    if (mode !== 'Ignore' && raw && !done) {
      // Where each field is (to order the messages) only matters when there are messages: without
      // unknown fields, the positions are gathered in a second pass in the rare case of a duplicate.
      if (!json) dups = decodedYamlDuplicates(raw) ?? findDuplicateYamlKeys(text!);
      else if (unknown.length) dups = findDuplicateFields(text!, 100, position);
      else if ((dups = findDuplicateFields(text!, 100)).length) findDuplicateFields(text!, 100, position);
    }
    // Whatever the mode, what the schema does not know is not stored (as typed decoding drops it).
    if (t.type.schema && !apply && !done) pruneUnknown(obj, t.type.schema, t.type.definitions);
    if (!unknown.length && !dups.length) return {};
    const msgs = strictErrors(unknown, dups, !raw ? {} : !json ? { yaml: dups.length ? duplicateYamlKeyLines(text ?? raw.toString('utf8')) : [] } : t.type.unstructured ? { unstructured: true } : { position });
    if (mode === 'Strict') {
      if (patch === undefined) throw errors.badRequest(strictDecodingMessage(t.type.kind, t.type.version, msgs));
      // A patch's strict errors are an Invalid on the field "patch", the patch printed as a Go map.
      throw errors.invalid('', '', '', [{ reason: 'FieldValueInvalid', field: 'patch', message: `Invalid value: ${goQuote(goPrint(patch))}: strict decoding error: ${msgs.join(', ')}` }]);
    }
    return { warning: msgs.map(warningValue).join('\n') };
  }
}
