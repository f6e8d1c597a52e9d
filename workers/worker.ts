// A piscina worker: runs one merge task, or decodes (and checks) one large JSON, YAML or Protobuf
// body. Schema definitions and Protobuf catalogs arrive once per worker and are kept by key.
import { runMergeTask, type MergeTask } from './merge/index.js';
import { move } from 'piscina';
import { decodeYamlToJson, depthError, encodeYaml } from './body/decode.js';
import { checkJsonBody, checkMerged, type CheckJsonTask, type MergedCheck } from './body/checkbody.js';
import { ProtobufCodec } from './body/protocodec.js';

const definitions = new Map<string, unknown>();
/** Protobuf codecs of the catalogs large Protobuf bodies were sent with, by key. */
const codecs = new Map<string, ProtobufCodec>();

export default function (task: ((MergeTask | CheckJsonTask) & { defsKey?: string }) | { op: 'decode-yaml'; text: string; maxDecodedBytes?: number } | { op: 'encode-yaml'; json: Uint8Array } | { op: 'json-task'; text: string }) {
  // A task sent as its JSON text (pool.ts runMerge: cheaper for the event loop than a structured clone).
  if (task.op === 'json-task') task = JSON.parse(task.text) as MergeTask & { defsKey?: string };
  if (task.op === 'decode-yaml') return decodeYamlToJson(task.text, task.maxDecodedBytes);
  // The YAML goes back as bytes moved, not copied: the event loop neither copies nor encodes it.
  if (task.op === 'encode-yaml') return move(Buffer.from(encodeYaml(Buffer.from(task.json.buffer, task.json.byteOffset, task.json.byteLength).toString('utf8'))) as never);
  const t = task as (MergeTask | CheckJsonTask) & { defsKey?: string; definitions?: unknown };
  if (t.defsKey) {
    if (t.definitions) definitions.set(t.defsKey, t.definitions);
    else if (definitions.has(t.defsKey)) t.definitions = definitions.get(t.defsKey);
    else return { needDefinitions: true };
  }
  if (t.op === 'check-json') {
    const pb = (t as CheckJsonTask).protobuf;
    if (!pb) return checkJsonBody(t as CheckJsonTask);
    if (pb.catalogs) codecs.set(pb.catalogKey, new ProtobufCodec(pb.catalogs));
    const codec = codecs.get(pb.catalogKey);
    return codec ? checkJsonBody(t as CheckJsonTask, codec) : { needDefinitions: true };
  }
  // As JSON text: a structured clone nested deeper than the main thread's stack can take is dropped
  // there ('messageerror', which piscina does not see), and the task would never settle.
  const r = runMergeTask(t as MergeTask);
  // A patch's result is checked here too (kernel/api/registry/body.ts fieldValidation takes the findings).
  const check = (t as { check?: MergedCheck }).check;
  // (Not a JSON patch's result nested too deep: the event loop refuses that before any check.)
  if (check && r.ok && 'value' in r && typeof r.value === 'object' && r.value !== null && !Array.isArray(r.value) && !depthError(r.value)) {
    return JSON.stringify({ ...r, checked: checkMerged(r.value, check, t.definitions as never) });
  }
  return JSON.stringify(r);
}
