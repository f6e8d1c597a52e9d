// An object as the reference's storage gives it back. The reference stores Protobuf and serves
// what it reads back through Go's JSON encoder, so a built-in object's JSON follows its Go type:
// zero values and empty lists or maps of omitempty fields go; an empty list or map without
// omitempty is null; a struct field (not a pointer) is always there, even empty; other fields
// without omitempty carry their zero value; fields come in the Go type's order (kind and apiVersion
// first) and map keys sorted. Driven by the Protobuf catalog's field flags; no type is named here.
//
// A write shapes its object up to three times (as decoded for managed fields, as stored, after
// admission), so the walk is kept cheap: each message compiled once into steps, fields rewritten in
// place (a delete and re-add would leave the object unordered and in V8's slow dictionary mode),
// and the later passes told what the earlier ones already settled.
import type { Field, ProtobufCodec } from './protocodec.js';

type Json = Record<string, unknown>;

/** Go's JSON of the zero value of a custom-encoded struct (written even when omitempty). */
const GO_ZERO: Record<string, unknown> = { time: null, microtime: null, duration: '0s', quantity: '0', intorstring: 0, raw: null };

/** A map keeps the order it came in above this many keys: sorting one holds the event loop. */
const SORTED_MAP_KEYS = 1000;

const enum Kind { Inline, Scalar, List, Map, Struct, Custom }

/** One field of a compiled message. */
interface Step {
  json: string;
  kind: Kind;
  /** Message of a struct, of a list's elements or of a map's values (walked unless `scalar`). */
  type: string;
  scalar: boolean;
  pointer: boolean;
  omitempty: boolean;
  /** What an absent (or null) field that stays becomes: a scalar's zero, a custom struct's Go zero. */
  zero: unknown;
  /** A custom struct without a Go zero in GO_ZERO: an absent one stays absent. */
  dropped: boolean;
  /** The plan of `type`, once first walked. */
  sub?: Plan;
}

interface Plan {
  custom: boolean;
  steps: Step[];
  /** Each JSON field (inlined ones in their place) → its position in the Go type. */
  rank: Map<string, number>;
  /** The step of `metadata`, when the message has one. */
  metadata?: Step;
}

/** One pass: `typed` keeps empty lists ([] as decoded); `maps` checks map keys (emptiness, order); `kept` collects [object, key, empty value] kept by a typed pass. */
interface Pass { typed: boolean; maps: boolean; kept?: unknown[] }

const STORED: Pass = { typed: false, maps: true };
const STORED_KNOWN_MAPS: Pass = { typed: false, maps: false };

const isZeroScalar = (v: unknown) => v === '' || v === 0 || v === false;

export class GoShaper {
  private plans = new Map<string, Plan>();
  constructor(private readonly codec: ProtobufCodec) {}

  /** Shapes `v`, a JSON object of Protobuf message `name`, in place, as stored. */
  shape(name: string, v: unknown): void {
    this.walk(this.plan(name), v, 0, false, STORED);
  }

  /**
   * Shapes `v` as Go's encoder writes the object decoded from a request, before the Protobuf round
   * trip turns an empty list into null (what the reference's field manager reads). Returns what
   * turns that into the stored shape when nothing but metadata.managedFields changed since: the
   * kept empty lists become null and metadata is ordered again; false when a kept list was replaced
   * (then shape() it again).
   */
  shapeTyped(name: string, v: unknown): () => boolean {
    const plan = this.plan(name), kept: unknown[] = [];
    this.walk(plan, v, 0, false, { typed: true, maps: true, kept });
    return () => {
      for (let i = 0; i < kept.length; i += 3) {
        const o = kept[i] as Json, k = kept[i + 1] as string, x = kept[i + 2];
        if (o[k] !== x || !isEmpty(x)) return false;
        o[k] = null;
      }
      return this.shapeMetadata(name, v);
    };
  }

  /**
   * Shapes only `v`'s metadata as stored, when the rest was shaped already and nothing changed its
   * maps (the server's own fields, managed fields): false when the message has no metadata.
   */
  shapeMetadata(name: string, v: unknown): boolean {
    const step = this.plan(name).metadata, md = step && (v as Json)?.[step.json];
    if (!md || typeof md !== 'object' || Array.isArray(md)) return false;
    this.walk(step.sub ??= this.plan(step.type), md, 1, false, STORED_KNOWN_MAPS);
    return true;
  }

  private walk(plan: Plan, v: unknown, depth: number, inline: boolean, pass: Pass): void {
    if (plan.custom || depth > 128 || !v || typeof v !== 'object' || Array.isArray(v)) return;
    const o = v as Json;
    for (const f of plan.steps) {
      if (f.kind === Kind.Inline) { this.walk(f.sub ??= this.plan(f.type), o, depth + 1, true, pass); continue; }
      let x = o[f.json];
      if (x === null) { // a nil pointer, or (not a pointer) Go's zero value: rewritten in place
        if (f.pointer || ((f.kind === Kind.List || f.kind === Kind.Map) && !f.omitempty)) { if (f.omitempty) delete o[f.json]; continue; }
        if (f.kind === Kind.Struct) x = o[f.json] = {};
        else { if (f.zero === undefined || (f.kind === Kind.Scalar && f.omitempty)) delete o[f.json]; else o[f.json] = f.zero; continue; }
      } else if (x === undefined) {
        if (f.pointer || f.kind === Kind.List || f.kind === Kind.Map) { if (!f.omitempty) o[f.json] = null; continue; }
        if (f.kind === Kind.Scalar) { if (!f.omitempty) o[f.json] = f.zero; continue; }
        if (f.kind === Kind.Custom) { if (!f.dropped) o[f.json] = f.zero; continue; }
        x = o[f.json] = {};
      }
      switch (f.kind) {
        case Kind.List: {
          if (!Array.isArray(x)) break;
          if (!x.length) { this.empty(o, f, x, pass); break; }
          if (!f.scalar) { const el = (f.sub ??= this.plan(f.type)); for (let i = 0; i < x.length; i++) this.walk(el, x[i], depth + 1, false, pass); }
          break;
        }
        case Kind.Map: {
          if (typeof x !== 'object' || Array.isArray(x)) break;
          const m = x as Json;
          if (pass.maps) {
            const n = checkOrder(m);
            if (n === 0) { this.empty(o, f, m, pass); break; }
            if (n < 0) sortKeys(m);
          }
          if (!f.scalar) { const el = (f.sub ??= this.plan(f.type)); for (const k in m) this.walk(el, m[k], depth + 1, false, pass); }
          break;
        }
        case Kind.Scalar:
          if (f.omitempty && !f.pointer && isZeroScalar(x)) delete o[f.json];
          break;
        case Kind.Struct:
          this.walk(f.sub ??= this.plan(f.type), x, depth + 1, false, pass);
          break;
        // a custom-encoded struct (a time, a quantity) is written as it is
      }
    }
    if (inline) return;
    // most objects are in order already: checked without building a key list
    const rank = plan.rank;
    let last = -Infinity;
    for (const k in o) {
      const r = rankOf(rank, k);
      if (r < last) { reorder(o, rank); return; }
      last = r;
    }
  }

  /** An empty list or map: gone when omitempty; else null as stored (not a pointer), or kept by a typed pass. */
  private empty(o: Json, f: Step, x: unknown, pass: Pass): void {
    if (f.omitempty) delete o[f.json];
    else if (f.pointer) return;
    else if (!pass.typed) o[f.json] = null;
    else pass.kept?.push(o, f.json, x);
  }

  private plan(name: string): Plan {
    let p = this.plans.get(name);
    if (p) return p;
    const c = this.codec.shapeOf(name);
    const steps = c.fields.map((f) => this.step(f));
    const names: string[] = [];
    const add = (n: string) => { for (const f of this.codec.shapeOf(n).fields) if (f.inline) add(f.type); else names.push(f.json); };
    add(name);
    const metadata = steps.find((s) => s.json === 'metadata' && s.kind === Kind.Struct);
    p = { custom: c.enc !== undefined, steps, rank: new Map(names.map((k, i) => [k, i])), metadata };
    this.plans.set(name, p);
    return p;
  }

  private step(f: Field): Step {
    const enc = f.scalar || f.repeated || f.map || f.inline ? undefined : this.codec.shapeOf(f.type).enc;
    const kind = f.inline ? Kind.Inline : f.repeated ? Kind.List : f.map ? Kind.Map : f.scalar ? Kind.Scalar : enc !== undefined ? Kind.Custom : Kind.Struct;
    const zero = kind === Kind.Scalar ? (f.type === 'string' || f.type === 'bytes' ? '' : f.type === 'bool' ? false : 0) : kind === Kind.Custom ? GO_ZERO[enc!] : undefined;
    return { json: f.json, kind, type: f.type, scalar: f.scalar, pointer: f.pointer, omitempty: f.omitempty, zero, dropped: kind === Kind.Custom && !(enc! in GO_ZERO) };
  }
}

function rankOf(rank: Map<string, number>, k: string): number {
  const r = rank.get(k);
  return r !== undefined ? r : k === 'kind' ? -2 : k === 'apiVersion' ? -1 : Infinity;
}

/** 0 when `m` is empty; its key count (or SORTED_MAP_KEYS + 1, past that) when its keys are sorted or too many to sort; else -1. One walk of the keys. */
function checkOrder(m: Json): number {
  let n = 0, sorted = true, prev = '';
  for (const k in m) {
    if (++n > SORTED_MAP_KEYS) return n;
    if (n > 1 && prev > k) sorted = false;
    prev = k;
  }
  return sorted ? n : -1;
}

function isEmpty(x: unknown): boolean {
  if (Array.isArray(x)) return x.length === 0;
  for (const _ in x as Json) return false;
  return true;
}

/** Rewrites `o`'s keys in sorted order. */
function sortKeys(m: Json): void {
  rewrite(m, Object.keys(m).sort());
}

/** Rewrites `o`'s keys in the Go type's order (unknown keys last, as they came). */
function reorder(o: Json, rank: Map<string, number>): void {
  const keys = Object.keys(o), order = keys.slice(), ranks = order.map((k) => rankOf(rank, k));
  // an insertion sort: stable, and objects have few keys
  for (let i = 1; i < order.length; i++) {
    const k = order[i]!, r = ranks[i]!;
    let j = i - 1;
    for (; j >= 0 && ranks[j]! > r; j--) { order[j + 1] = order[j]!; ranks[j + 1] = ranks[j]!; }
    order[j + 1] = k;
    ranks[j + 1] = r;
  }
  rewrite(o, order, keys);
}

/** Puts `o`'s keys in the order of `order`; the old keys deleted last first, which keeps V8's fast properties. */
function rewrite(o: Json, order: string[], keys = Object.keys(o)): void {
  const values = new Array<unknown>(order.length);
  for (let i = 0; i < order.length; i++) values[i] = o[order[i]!];
  for (let i = keys.length - 1; i >= 0; i--) delete o[keys[i]!];
  for (let i = 0; i < order.length; i++) o[order[i]!] = values[i];
}
