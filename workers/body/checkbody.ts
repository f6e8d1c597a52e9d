// The body-level steps of a typed JSON write, as one function a worker thread runs for large bodies:
// decode (with the depth bound), null fields dropped, the type check, unknown and duplicate fields,
// and pruning. Each is a pass over every key; for 100,000 keys together they held the event loop
// for over a second. Only the pruned JSON text and the findings come back, so the event loop parses
// once (a structured clone back would cost as much as the parse).
import type { ProtoCatalog, Schema } from '../../kernel/contracts/index.js';
import { decodeTypeError, dropNullFields, findDuplicateFields, pruneUnknown, checkFields } from './fieldcheck.js';
import { decodeYaml, parseJson } from './decode.js';
import { decodeObject, type ProtobufCodec } from './protocodec.js';

export interface CheckJsonTask {
  op: 'check-json';
  text: string;
  schema: Schema;
  definitions?: Readonly<Record<string, Schema>>;
  /** Whether unknown and duplicate fields are wanted (fieldValidation is not Ignore). */
  fields: boolean;
  /** Decoded into Go types by the reference (not a custom resource): base64 and times are parsed. */
  typed?: boolean;
  /**
   * The text is a YAML body, decoded here with its bounds (at most `maxDecodedBytes` of JSON): its
   * duplicate keys are the decoder's (a JSON-shaped one's are found as JSON's), its nulls dropped as JSON's.
   */
  yaml?: { maxDecodedBytes?: number };
  /**
   * The body is Protobuf (its envelope read on the event loop): the object's bytes, decoded here with
   * the codec of `catalogKey` (its catalogs sent once per worker, as definitions are); `text` is unused.
   * Checked as such an object is inline: no null fields dropped, no duplicate keys, numbers by value.
   */
  protobuf?: ProtobufTask;
}

export interface ProtobufTask {
  bytes: Uint8Array; message: string; kind: string; envelope: { apiVersion: string; kind: string };
  catalogKey: string; catalogs?: ProtoCatalog[];
}

export type CheckJsonResult =
  /** `whole`: `message` is the whole 400 message (a Protobuf body's). */
  | { ok: false; message: string; tooLarge?: boolean; whole?: boolean }
  /** `json`: the body as stored (nulls dropped, pruned); unknown and duplicate paths at most 100 each (the reference keeps 100 strict errors). */
  | { ok: true; json: string; typeError?: string; unknown: string[]; duplicates: string[]; yaml?: boolean; positions?: [string, number][] };

/** fieldValidation()'s checks of a patched object, done where the merge ran (the merged object need not cross back unchecked). */
export interface MergedCheck {
  schema: Schema;
  /** The type's definitions; sent to a worker once, by key, like a merge's. */
  definitions?: Readonly<Record<string, Schema>>;
  fields: boolean;
  typed?: boolean;
  /** The patch's text, for duplicate keys (not for JSON patches). */
  raw?: string;
}
export type MergedFindings = { typeError?: string; unknown: string[]; duplicates: string[] };

/** In place, as fieldValidation() in order: the typed-decode check, then unknown and duplicate fields, then pruning (not when the type check failed: that object is refused, and quoted whole). */
export function checkMerged(value: unknown, check: MergedCheck, definitions: Readonly<Record<string, Schema>> | undefined): MergedFindings {
  const typeError = decodeTypeError(value, check.schema, definitions, check.raw, check.typed);
  if (typeError) return { typeError, unknown: [], duplicates: [] };
  const unknown = check.fields ? checkFields(value, check.schema, definitions).unknown.slice(0, 100) : [];
  const duplicates = check.fields && check.raw !== undefined && /^\s*[{[]/.test(check.raw) ? findDuplicateFields(check.raw) : [];
  pruneUnknown(value, check.schema, definitions);
  return { unknown, duplicates };
}

/** What kernel/api/registry/body.ts decode() and fieldValidation() do to a JSON (or YAML) body, in their order. */
export function checkJsonBody(task: CheckJsonTask, codec?: ProtobufCodec): CheckJsonResult {
  let obj: unknown;
  let yamlDuplicates: string[] | undefined;
  if (task.protobuf) {
    const r = decodeObject(codec!, task.protobuf);
    if ('error' in r) return { ok: false, message: r.error, whole: true };
    obj = r.object;
  } else if (task.yaml) {
    const r = decodeYaml(task.text, task.yaml.maxDecodedBytes);
    if (!r.ok) return r;
    obj = r.value;
    yamlDuplicates = r.duplicates;
  } else {
    try { obj = parseJson(task.text); } catch (e) { return { ok: false, message: (e as Error).message }; }
  }
  // A JSON-shaped body (JSON, or YAML written as JSON) has its duplicates found, and its messages
  // ordered, in the text as JSON's are; the flag tells the event loop to word them as YAML's otherwise.
  const jsonShaped = !task.protobuf && /^\s*[{[]/.test(task.text);
  const yaml = task.yaml && !jsonShaped ? { yaml: true } : {};
  // Not an object: the caller's own check answers it.
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return { ok: true, json: JSON.stringify(obj), unknown: [], duplicates: [], ...yaml };
  const { schema, definitions } = task;
  if (!task.protobuf) dropNullFields(obj, schema, definitions);
  const typeError = decodeTypeError(obj, schema, definitions, task.protobuf ? undefined : task.text, task.typed);
  if (typeError) return { ok: true, json: JSON.stringify(obj), typeError, unknown: [], duplicates: [], ...yaml };
  const unknown = task.fields ? checkFields(obj, schema, definitions).unknown.slice(0, 100) : [];
  const duplicates = !task.fields ? [] : jsonShaped ? findDuplicateFields(task.text) : yamlDuplicates ?? [];
  // Where each named field is in the text, so its messages come in the body's order, as inline.
  let positions: [string, number][] | undefined;
  if ((unknown.length || duplicates.length) && jsonShaped) {
    const at = new Map<string, number>();
    findDuplicateFields(task.text, 100, at);
    positions = [...unknown, ...duplicates].flatMap((p) => (at.has(p) ? [[p, at.get(p)!] as [string, number]] : []));
  }
  pruneUnknown(obj, schema, definitions);
  return { ok: true, json: JSON.stringify(obj), unknown, duplicates, ...yaml, ...(positions ? { positions } : {}) };
}
