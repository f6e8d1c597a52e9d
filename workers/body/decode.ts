// Decoding request bodies within bounds, as plain functions a worker thread can run: nesting depth
// (every later step — merges, validation, field tracking — recurses through the object, so an
// unbounded depth would exhaust the stack), YAML aliases (billion laughs), and YAML's own tags
// (`!!binary` is a string, as the reference's YAML decoder makes it; no Set, Map or Date values).
import YAML, { CST, Lexer } from 'yaml';

/**
 * Deepest nesting of objects and arrays a body may have. The reference's JSON decoder stops at
 * 10,000 levels; this server's merge and validation code is recursive and stops at 1,000 (with a
 * wide margin below what the main thread's stack holds), using the reference's message.
 */
export const MAX_DEPTH = 1000;
/** Alias expansions a YAML document may make (the yaml package's guard against entity expansion). */
export const MAX_YAML_ALIASES = 100;
/**
 * Nodes (scalars, aliases, collections) a YAML body may have. The yaml package needs several KB of
 * memory and tens of microseconds per node: half a million one-character items (a 3 MiB body) took
 * 2.7 GiB and tens of seconds. 100,000 nodes is far above any single object a client sends.
 */
export const MAX_YAML_NODES = 100_000;

/**
 * What a YAML body may decode to, as a multiple of the request body limit (--max-request-bytes), in
 * bytes of JSON. Without aliases YAML's JSON is at most a few times its text; aliases make it
 * anything (99 aliases of a 3 MB list in a 2.9 MiB body are 297 MB), and the yaml package's
 * maxAliasCount counts aliases, not what they expand to.
 */
export const YAML_DECODED_FACTOR = 4;

const NODE_TOKENS = new Set(['scalar', 'single-quoted-scalar', 'double-quoted-scalar', 'alias', 'flow-map-start', 'flow-seq-start']);

/**
 * What is wrong with a YAML text's size or shape, found by its tokens before anything is composed
 * (the lexer is iterative and far cheaper than the composer, which recurses per level and must
 * never run near the end of the stack): too many nodes, flow collections nested past MAX_DEPTH (as
 * goyaml's flow-level limit), or block nesting past it (each block level takes a column of
 * indentation or a compact "- " indicator).
 */
function shapeError(text: string): string | undefined {
  let nodes = 0;
  let flow = 0;
  for (const tok of new Lexer().lex(text)) {
    const type = CST.tokenType(tok);
    if (!type) continue;
    if (NODE_TOKENS.has(type) && ++nodes > MAX_YAML_NODES) return `yaml: document has more than ${MAX_YAML_NODES} nodes`;
    if (type === 'flow-map-start' || type === 'flow-seq-start') {
      if (++flow > MAX_DEPTH) return `yaml: exceeded max depth of ${MAX_DEPTH}`;
    } else if (type === 'flow-map-end' || type === 'flow-seq-end') flow--;
  }
  const block = /^[ \t]*(?:[-?:][ \t]+)*/gm;
  for (let m; (m = block.exec(text)); block.lastIndex++) if (m[0].length > MAX_DEPTH) return `yaml: exceeded max depth of ${MAX_DEPTH}`;
  return undefined;
}

/**
 * The reference's JSON decoder message for a value nested past the limit (its scanner names the
 * bracket that went one level too deep); undefined when within. Iterative: it must not itself
 * recurse through what it guards against.
 */
export function depthError(value: unknown, max = MAX_DEPTH): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length) {
    const v = nodes.pop() as Record<string, unknown> | unknown[];
    const d = depths.pop()!;
    if (d > max) return `invalid character '${Array.isArray(v) ? '[' : '{'}' exceeded max depth`;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const c = v[i];
        if (c !== null && typeof c === 'object') { nodes.push(c); depths.push(d + 1); }
      }
    } else {
      for (const k in v) {
        const c = v[k];
        if (c !== null && typeof c === 'object') { nodes.push(c); depths.push(d + 1); }
      }
    }
  }
  return undefined;
}

/** JSON.parse (iterative in V8) followed by the depth bound. */
export function parseJson(text: string): unknown {
  const v = JSON.parse(text);
  const deep = depthError(v);
  if (deep) throw new SyntaxError(deep);
  return v;
}

// `!!binary` decodes to the string of its bytes, as the reference's YAML decoder (goyaml) does.
const binaryAsString = {
  tag: 'tag:yaml.org,2002:binary',
  identify: () => false,
  resolve(src: string, onError: (msg: string) => void): string {
    const b64 = src.replace(/\s+/g, '');
    if (b64.length % 4 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) {
      onError('!!binary value contains invalid base64 data');
      return '';
    }
    return Buffer.from(b64, 'base64').toString('utf8');
  },
};

export type YamlDecoded = { ok: true; value: unknown; duplicates: string[] } | { ok: false; message: string; tooLarge?: boolean };

/** goyaml's share of decoded nodes that may come from aliases: 99 % up to 400,000 nodes, falling to 10 % at 4,000,000. */
function allowedAliasRatio(decoded: number): number {
  if (decoded <= 400_000) return 0.99;
  if (decoded >= 4_000_000) return 0.1;
  return 0.99 - 0.89 * ((decoded - 400_000) / 3_600_000);
}

/**
 * What the document would expand to, walked over its nodes (aliases followed) before anything is
 * built, stopping as soon as it is too much: the reference's decoder (goyaml) refuses a document
 * whose nodes come mostly from aliases ("excessive aliasing", counted as it does), and the JSON it
 * would become may not pass `maxBytes` (a 413). Iterative: the document may be 1,000 levels deep.
 */
function expansionError(doc: YAML.Document, maxBytes: number): { message: string; tooLarge?: boolean } | undefined {
  let decoded = 0, fromAliases = 0, bytes = 0;
  const stack: { node: unknown; aliased: boolean }[] = [{ node: doc.contents, aliased: false }];
  while (stack.length) {
    const { node, aliased } = stack.pop()!;
    decoded++;
    if (aliased) fromAliases++;
    if (fromAliases > 100 && decoded > 1000 && fromAliases / decoded > allowedAliasRatio(decoded)) return { message: 'yaml: document contains excessive aliasing' };
    if (YAML.isAlias(node)) {
      const target = node.resolve(doc);
      if (target) stack.push({ node: target, aliased: true });
      continue;
    }
    if (YAML.isScalar(node)) bytes += typeof node.value === 'string' ? node.value.length + 3 : String(node.value).length + 1;
    else if (YAML.isMap(node)) {
      bytes += 2;
      // pushed last to first: popped in document order, as goyaml counts
      for (let i = node.items.length - 1; i >= 0; i--) { const pair = node.items[i]; stack.push({ node: pair.value, aliased }, { node: pair.key, aliased }); bytes += 2; }
    } else if (YAML.isSeq(node)) {
      bytes += 2;
      for (let i = node.items.length - 1; i >= 0; i--) stack.push({ node: node.items[i], aliased });
    } else bytes += 5; // null
    if (bytes > maxBytes) return { message: `Request entity too large: the YAML body decodes to more than ${maxBytes} bytes`, tooLarge: true };
  }
  return undefined;
}

/**
 * One YAML document as a JSON value, plus its duplicate mapping keys as paths (for fieldValidation;
 * the last of duplicate keys wins, as in JSON). Never throws: a failure is a message in the style of
 * the reference's YAML decoder ("yaml: ...").
 */
export function decodeYaml(text: string, maxDecodedBytes = Infinity): YamlDecoded {
  try {
    const shape = shapeError(text);
    if (shape) return { ok: false, message: shape };
    const doc = YAML.parseDocument(text, { uniqueKeys: false, customTags: [binaryAsString], resolveKnownTags: false });
    if (doc.errors.length) {
      // The yaml package composes recursively and reports a document too deep for the stack as an error.
      const msg = doc.errors[0].message;
      return { ok: false, message: /call stack/i.test(msg) ? `yaml: exceeded max depth of ${MAX_DEPTH}` : `yaml: ${msg.split('\n')[0]}` };
    }
    const expansion = expansionError(doc, maxDecodedBytes);
    if (expansion) return { ok: false, ...expansion };
    const value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
    const deep = depthError(value);
    if (deep) return { ok: false, message: `yaml: exceeded max depth of ${MAX_DEPTH}` };
    return { ok: true, value, duplicates: duplicateKeys(doc.contents) };
  } catch (e) {
    // The yaml package composes recursively: a document nested far past the limit ends here.
    if (e instanceof RangeError) return { ok: false, message: `yaml: exceeded max depth of ${MAX_DEPTH}` };
    const msg = (e as Error)?.message ?? String(e);
    if (/alias/i.test(msg)) return { ok: false, message: 'yaml: document contains excessive aliasing' };
    return { ok: false, message: `yaml: ${msg.split('\n')[0]}` };
  }
}

/**
 * Levels of block-style YAML an answer gets; deeper values are written in flow style (their JSON,
 * which is YAML too). The yaml package writes recursively and runs out of the main thread's stack
 * before 1,000 levels (a 600-level object already takes 360 KB of indentation); the reference's
 * writer has no such bound, so only objects nested this deep read differently.
 */
export const YAML_BLOCK_DEPTH = 200;

/** YAML text of a JSON text (an answer in application/yaml). */
export function encodeYaml(json: string): string {
  const value = JSON.parse(json);
  // keys sorted, as the reference's JSON-to-YAML writes them
  if (!depthError(value, YAML_BLOCK_DEPTH)) return YAML.stringify(value, { sortMapEntries: true });
  // Values at the block depth are swapped for tokens (plain scalars), written as JSON afterwards.
  const nonce = `capiflow${Math.random().toString(36).slice(2)}x`;
  const deep: unknown[] = [];
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length) {
    const v = nodes.pop() as Record<string, unknown>;
    const d = depths.pop()!;
    for (const k of Object.keys(v)) {
      const c = v[k];
      if (c === null || typeof c !== 'object') continue;
      if (d + 1 >= YAML_BLOCK_DEPTH) {
        v[k] = `${nonce}${deep.length}`;
        deep.push(c);
      } else {
        nodes.push(c);
        depths.push(d + 1);
      }
    }
  }
  return YAML.stringify(value, { sortMapEntries: true }).replace(new RegExp(`${nonce}(\\d+)`, 'g'), (_, i: string) => flowJson(deep[Number(i)]));
}

/** JSON.stringify without recursion (V8's runs out of stack near 10,000 levels). */
function flowJson(value: unknown): string {
  let out = '';
  type Frame = { v: Record<string, unknown> | unknown[]; keys: string[] | undefined; i: number };
  const stack: Frame[] = [];
  const open = (v: unknown) => {
    if (v === null || typeof v !== 'object') { out += JSON.stringify(v) ?? 'null'; return; }
    const arr = Array.isArray(v);
    out += arr ? '[' : '{';
    stack.push({ v: v as Frame['v'], keys: arr ? undefined : Object.keys(v), i: 0 });
  };
  open(value);
  while (stack.length) {
    const f = stack[stack.length - 1];
    const n = f.keys ? f.keys.length : (f.v as unknown[]).length;
    if (f.i >= n) { out += f.keys ? '}' : ']'; stack.pop(); continue; }
    if (f.i > 0) out += ',';
    const i = f.i++;
    if (f.keys) { out += `${JSON.stringify(f.keys[i])}:`; open((f.v as Record<string, unknown>)[f.keys[i]]); } else open((f.v as unknown[])[i]);
  }
  return out;
}

/** The worker's form: the value as JSON text, which the main thread parses faster than a structured clone. */
export function decodeYamlToJson(text: string, maxDecodedBytes?: number): { ok: true; json: string; duplicates: string[] } | { ok: false; message: string; tooLarge?: boolean } {
  const r = decodeYaml(text, maxDecodedBytes);
  return r.ok ? { ok: true, json: JSON.stringify(r.value), duplicates: r.duplicates } : r;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** Duplicate mapping keys of a composed YAML document, as paths ("data.a") in document order; at most `limit` (the reference keeps 100). */
export function duplicateKeys(root: unknown, limit = 100): string[] {
  const out: string[] = [];
  type Frame = { items: unknown[]; next: number; path: string; seen?: Set<string> };
  const frame = (node: unknown, path: string): Frame | undefined =>
    YAML.isMap(node) ? { items: node.items, next: 0, path, seen: new Set() } : YAML.isSeq(node) ? { items: node.items, next: 0, path } : undefined;
  const stack: Frame[] = [];
  const first = frame(root, '');
  if (first) stack.push(first);
  while (stack.length && out.length < limit) {
    const f = stack[stack.length - 1];
    if (f.next >= f.items.length) { stack.pop(); continue; }
    const i = f.next++;
    const item = f.items[i];
    let child: Frame | undefined;
    if (f.seen) {
      const pair = item as { key: unknown; value: unknown };
      const key = String(YAML.isScalar(pair.key) ? pair.key.value : pair.key);
      const p = join(f.path, key);
      if (f.seen.has(key)) out.push(p);
      f.seen.add(key);
      child = frame(pair.value, p);
    } else {
      child = frame(item, `${f.path}[${i}]`);
    }
    if (child) stack.push(child);
  }
  return out;
}
