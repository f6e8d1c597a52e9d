// Deep JSON Schemas for ajv. ajv generates one function per schema with code nested as deep as the
// schema: a custom resource's schema of ~490 levels (the most a 1,000-level definition holds) ran
// its code generator out of stack, and its cost grows faster than the depth (a few hundred ms for
// one compile, retried and lost on every write). A schema deeper than PIECE levels is cut every PIECE
// levels into schemas of their own, each naming the one below by its $id, compiled from the bottom
// up: each piece is a small compile of its own, and the event loop can be given a turn between them.
import type { Ajv, ValidateFunction } from 'ajv';
import { giveTurn } from '../watch/slicer.js';

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Levels of sub-schemas in one piece; a schema no deeper than DEEP is compiled as it is. */
const PIECE = 24;
const DEEP = 64;

/** Keywords holding one sub-schema, and those holding a map of them: where a schema is cut. */
const ONE = ['items', 'additionalProperties'];
const MAP = ['properties', 'patternProperties'];
/** Combinators: never cut below one, so that an error's schemaPath still names the combinator it failed under. */
const COMBINATORS = ['allOf', 'anyOf', 'oneOf', 'not'];

/** How many levels of sub-schemas a schema nests (without recursion: deep schemas are the point). */
export function schemaDepth(schema: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[schema, 1]];
  while (stack.length) {
    const [s, d] = stack.pop()!;
    if (!isObj(s)) continue;
    if (d > max) max = d;
    for (const k of ONE) if (isObj(s[k])) stack.push([s[k], d + 1]);
    if (isObj(s.not)) stack.push([s.not, d + 1]);
    for (const k of MAP) if (isObj(s[k])) for (const v of Object.values(s[k] as Json)) stack.push([v, d + 1]);
    for (const k of COMBINATORS) if (Array.isArray(s[k])) for (const v of s[k] as unknown[]) stack.push([v, d + 1]);
  }
  return max;
}

let nextId = 0;

/** A deep schema's pieces, the deepest first; the last is the root. Each carries the $id it is named by. */
export function cutDeep(schema: Json): Json[] {
  const pieces: Json[] = [];
  // Copies `s` down to PIECE levels; below that, each sub-schema becomes a piece of its own (recursion is bounded by PIECE).
  const copy = (s: Json, level: number, inCombinator: boolean): Json => {
    if (level >= PIECE && !inCombinator) return { $ref: piece(s) };
    const out: Json = { ...s };
    for (const k of ONE) if (isObj(s[k])) out[k] = copy(s[k] as Json, level + 1, inCombinator);
    for (const k of MAP) if (isObj(s[k])) out[k] = Object.fromEntries(Object.entries(s[k] as Json).map(([n, v]) => [n, isObj(v) ? copy(v, level + 1, inCombinator) : v]));
    if (isObj(s.not)) out.not = copy(s.not, level + 1, true);
    for (const k of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(s[k])) out[k] = (s[k] as unknown[]).map((v) => (isObj(v) ? copy(v, level + 1, true) : v));
    return out;
  };
  const piece = (s: Json): string => {
    const id = `deep-piece-${nextId++}`;
    const body = copy(s, 0, false);
    pieces.push({ ...body, $id: id });
    return id;
  };
  const root = copy(schema, 0, false);
  pieces.push(root);
  return pieces;
}

/** Compiles `schema` in one go (deep ones in pieces, so that ajv keeps within the stack); `ids` gets the pieces' $ids. */
export function compileDeep(ajv: Ajv, schema: Json, ids: string[] = []): ValidateFunction {
  if (schemaDepth(schema) <= DEEP) return ajv.compile(schema);
  const pieces = cutDeep(schema);
  for (const p of pieces.slice(0, -1)) { ids.push(p.$id as string); ajv.compile(p); }
  return ajv.compile(pieces[pieces.length - 1]);
}

/** As compileDeep, giving the event loop a turn between the pieces of a deep schema. */
export async function compileDeepSliced(ajv: Ajv, schema: Json, ids: string[] = []): Promise<ValidateFunction> {
  if (schemaDepth(schema) <= DEEP) return ajv.compile(schema);
  const pieces = cutDeep(schema);
  for (const p of pieces.slice(0, -1)) {
    ids.push(p.$id as string);
    ajv.compile(p);
    await giveTurn();
  }
  return ajv.compile(pieces[pieces.length - 1]);
}

/** Whether a schema is deep enough to be compiled in pieces. */
export const isDeep = (schema: unknown) => schemaDepth(schema) > DEEP;
