// The worker pool: merge work (patches, server-side apply, managed fields) for large objects runs
// on piscina worker threads so one big write never stalls the event loop; small ones run inline,
// where a thread hop would cost more than the work (see docs/benchmarks.md for the measurement).
import { Piscina } from 'piscina';
import { stringifySliced } from './stringify.js';
import { parseText } from './parse.js';
import { runMergeTask, type MergeTask, type MergeTaskResult } from './merge/index.js';
import { decodeYaml, encodeYaml, type YamlDecoded } from './body/decode.js';
import type { CheckJsonResult, CheckJsonTask, MergedCheck, MergedFindings } from './body/checkbody.js';

/**
 * Bytes of input (current object plus request body) from which a merge goes to a worker thread.
 * Merge cost follows structure more than size: a 64 KiB Pod merges inline in 8–10 ms, flat objects
 * stay under 5 ms even at 2 MiB, and the thread hop costs at most ~2 ms (docs/benchmarks.md, "Writes").
 */
export const WORKER_THRESHOLD_BYTES = Number(process.env.CAPI_WORKER_THRESHOLD_BYTES ?? 32 * 1024);

let pool: Piscina | undefined;
/** CAPI_WORKERS=off runs every merge inline (the bench compares both). */
const enabled = process.env.CAPI_WORKERS !== 'off';

function thePool(): Piscina {
  if (pool) return pool;
  const p = (pool = new Piscina({ filename: new URL('./worker.js', import.meta.url).href, minThreads: 1, maxThreads: 2, idleTimeout: 60_000 }));
  // A worker that cannot start (EMFILE with every descriptor taken) or dies between tasks: piscina
  // starts no more after a failed start and emits 'error', which unheard ends the process. The pool
  // is dropped instead (its waiting tasks fail, their requests get a 500) and the next task makes a new one.
  p.on('error', (e: Error) => {
    if (pool === p) pool = undefined;
    process.emitWarning(`worker pool replaced: ${e.message}`, 'WorkerPoolWarning');
    void p.destroy().catch(() => {});
  });
  return p;
}

/**
 * Runs a merge task inline or on a worker. Schema definitions are large and the same for every task:
 * workers keep them by key, and receive them only when they ask (the first task they see).
 */
export async function runMerge(task: MergeTask, sizeBytes: number, defsKey?: string, check?: MergedCheck): Promise<MergeTaskResult & { checked?: MergedFindings }> {
  if (!enabled || sizeBytes < WORKER_THRESHOLD_BYTES) return runMergeTask(task);
  // On a worker, the patched object is also field-checked there (`check`, with the type's definitions).
  if (check) task = { ...task, check: { ...check, definitions: undefined }, definitions: (task as { definitions?: unknown }).definitions ?? check.definitions } as unknown as MergeTask;
  const defs = (task as { definitions?: unknown }).definitions;
  const slim = defs && defsKey ? { ...task, definitions: undefined, defsKey } : task;
  // Managed fields of a written object: the whole object goes over, as JSON text written in time
  // slices (a structured clone of a 50,000-key ConfigMap held the event loop 40–80 ms in one go).
  const sent = task.op === 'update-managed-fields' ? { op: 'json-task', text: await stringifySliced(slim) } : slim;
  let r = (await thePool().run(sent)) as string | { needDefinitions: true };
  if (typeof r !== 'string') r = (await thePool().run({ ...task, defsKey })) as string;
  // A large result (a large object's managed fields) is read back in slices.
  return (await parseText(r)) as MergeTaskResult;
}

/**
 * Bytes of YAML from which decoding goes to a worker thread. The yaml package is far slower than
 * JSON.parse (a 3 MiB body takes seconds): only small bodies are decoded on the event loop.
 */
export const YAML_WORKER_THRESHOLD_BYTES = 16 * 1024;

/** Decodes one YAML body (bounded, see decode.ts; at most `maxDecodedBytes` of JSON) inline when small, on a worker otherwise. */
export async function decodeYamlBody(text: string, maxDecodedBytes?: number): Promise<YamlDecoded> {
  if (!enabled || text.length < YAML_WORKER_THRESHOLD_BYTES) return decodeYaml(text, maxDecodedBytes);
  const r = (await thePool().run({ op: 'decode-yaml', text, maxDecodedBytes })) as { ok: true; json: string; duplicates: string[] } | { ok: false; message: string; tooLarge?: boolean };
  return r.ok ? { ok: true, value: await parseText(r.json), duplicates: r.duplicates } : r;
}

/**
 * Bytes of a typed JSON body from which its decoding and body-level checks (checkbody.ts) run on a
 * worker. Measured on a busy 2-core machine (load 10), inline: 2 ms at 16 KiB, 4–8 ms at 32 KiB,
 * 19–21 ms at 64 KiB, 70–110 ms at 128–256 KiB (ConfigMaps and Pods); the thread hop costs ~2 ms.
 */
export const JSON_CHECK_WORKER_THRESHOLD_BYTES = Number(process.env.CAPI_JSON_CHECK_THRESHOLD_BYTES ?? 32 * 1024);

/** Whether a JSON body of this size is checked on a worker (checkJsonOnWorker); small ones stay on the event loop. */
export const checksJsonOnWorker = (bytes: number) => enabled && bytes >= JSON_CHECK_WORKER_THRESHOLD_BYTES;

/** Runs checkJsonBody on a worker; definitions are sent as for merges (only to a worker that lacks them). */
export async function checkJsonOnWorker(task: CheckJsonTask, defsKey?: string): Promise<CheckJsonResult> {
  // Definitions and a Protobuf body's catalogs go only to a worker that asks for them.
  let slim = task.definitions && defsKey ? { ...task, definitions: undefined, defsKey } : task;
  if (task.protobuf?.catalogs) slim = { ...slim, protobuf: { ...task.protobuf, catalogs: undefined } };
  let r = (await thePool().run(slim)) as CheckJsonResult | { needDefinitions: true };
  if ('needDefinitions' in r) r = (await thePool().run({ ...task, defsKey })) as CheckJsonResult;
  return r;
}

/** Bytes of JSON from which an answer's YAML is written on a worker (YAML.stringify takes seconds for tens of MB). */
export const YAML_ENCODE_WORKER_THRESHOLD_BYTES = 64 * 1024;

/** YAML of a JSON answer: inline when small, on a worker otherwise (as bytes). */
export async function encodeYamlBody(json: Buffer | string, disposable = false): Promise<string | Uint8Array> {
  if (!enabled || json.length < YAML_ENCODE_WORKER_THRESHOLD_BYTES) return encodeYaml(typeof json === 'string' ? json : json.toString('utf8'));
  const bytes = typeof json === 'string' ? Buffer.from(json) : json;
  // A buffer that is all of its own memory, and that nobody uses after this, is moved, not copied.
  const own = (typeof json === 'string' || disposable) && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && !(bytes.buffer instanceof SharedArrayBuffer);
  return (await thePool().run({ op: 'encode-yaml', json: bytes }, own ? { transferList: [bytes.buffer as ArrayBuffer] } : {})) as Uint8Array;
}

export async function closeWorkers(): Promise<void> {
  await pool?.destroy();
  pool = undefined;
}
