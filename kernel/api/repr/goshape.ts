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
import type { Field, ProtobufCodec } from '../../../workers/body/protocodec.js';

type Json = Record<string, unknown>;

/** Go's JSON of the zero value of a custom-encoded struct (written even when omitempty). */
const GO_ZERO: Record<string, unknown> = { time: null, microtime: null, duration: '0s', quantity: '0', intorstring: 0, raw: null };

/** A map keeps the order it came in above this many keys: sorting one holds the event loop. */
const SORTED_MAP_KEYS = 1000;

const enum Kind { Scalar, List, Map, Struct, Custom }

/** One field of a compiled message (an inlined struct's fields are the message's own). */
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
  /** Its position in the Go type's field order. */
  rank: number;
  /** Inlined structs it is in (a walk's depth counts them). */
  depth: number;
  /** The plan of `type`, once first walked. */
  sub?: Plan;
}

interface Plan {
  custom: boolean;
  /** JSON name → field, inlined ones included. */
  fields: Map<string, Step>;
  /** The fields an object without them gets (the others' absence is their zero value). */
  absent: Step[];
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
    this.walk(this.plan(name), v, 0, STORED);
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
    this.walk(plan, v, 0, { typed: true, maps: true, kept });
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
    this.walk(step.sub ??= this.plan(step.type), md, 1, STORED_KNOWN_MAPS);
    return true;
  }

  // The object's own keys are walked (an absent field's lookup costs as much as a present one's),
  // then the fields an absent one means something for; the order is checked on the way.
  private walk(plan: Plan, v: unknown, depth: number, pass: Pass): void {
    if (plan.custom || depth > 128 || !v || typeof v !== 'object' || Array.isArray(v)) return;
    const o = v as Json, fields = plan.fields;
    let last = -Infinity, sorted = true;
    for (const k in o) {
      const f = fields.get(k);
      // (a field deleted here still counts: at worst an object in order is rewritten as it is)
      const r = f !== undefined ? f.rank : k === 'kind' ? -2 : k === 'apiVersion' ? -1 : Infinity;
      if (r < last) sorted = false;
      else last = r;
      if (f !== undefined && depth + f.depth <= 128) this.field(o, f, o[k], depth + f.depth, pass);
    }
    for (const f of plan.absent) {
      if (o[f.json] !== undefined || depth + f.depth > 128) continue;
      this.field(o, f, undefined, depth + f.depth, pass);
      if (f.rank < last) sorted = false;
      else last = f.rank;
    }
    if (!sorted) reorder(o, fields);
  }

  private field(o: Json, f: Step, x: unknown, depth: number, pass: Pass): void {
    if (x === null) { // a nil pointer, or (not a pointer) Go's zero value: rewritten in place
      if (f.pointer || ((f.kind === Kind.List || f.kind === Kind.Map) && !f.omitempty)) { if (f.omitempty) delete o[f.json]; return; }
      if (f.kind === Kind.Struct) x = o[f.json] = {};
      else { if (f.zero === undefined || (f.kind === Kind.Scalar && f.omitempty)) delete o[f.json]; else o[f.json] = f.zero; return; }
    } else if (x === undefined) {
      if (f.pointer || f.kind === Kind.List || f.kind === Kind.Map) { if (!f.omitempty) o[f.json] = null; return; }
      if (f.kind === Kind.Scalar) { if (!f.omitempty) o[f.json] = f.zero; return; }
      if (f.kind === Kind.Custom) { if (!f.dropped) o[f.json] = f.zero; return; }
      x = o[f.json] = {};
    }
    switch (f.kind) {
      case Kind.List: {
        if (!Array.isArray(x)) return;
        if (!x.length) return this.empty(o, f, x, pass);
        if (!f.scalar) { const el = (f.sub ??= this.plan(f.type)); for (let i = 0; i < x.length; i++) this.walk(el, x[i], depth + 1, pass); }
        return;
      }
      case Kind.Map: {
        if (typeof x !== 'object' || Array.isArray(x)) return;
        const m = x as Json;
        if (pass.maps) {
          const n = checkOrder(m);
          if (n === 0) return this.empty(o, f, m, pass);
          if (n < 0) sortKeys(m);
        }
        if (!f.scalar) { const el = (f.sub ??= this.plan(f.type)); for (const k in m) this.walk(el, m[k], depth + 1, pass); }
        return;
      }
      case Kind.Scalar:
        if (f.omitempty && !f.pointer && isZeroScalar(x)) delete o[f.json];
        return;
      case Kind.Struct:
        return this.walk(f.sub ??= this.plan(f.type), x, depth + 1, pass);
      // a custom-encoded struct (a time, a quantity) is written as it is
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
    const steps: Step[] = [];
    const add = (n: string, depth: number) => {
      for (const f of this.codec.shapeOf(n).fields) if (f.inline) add(f.type, depth + 1); else steps.push(this.step(f, steps.length, depth));
    };
    add(name, 0);
    const metadata = steps.find((s) => s.json === 'metadata' && s.kind === Kind.Struct && !s.depth);
    const absent = steps.filter((f) => (f.pointer || f.kind === Kind.List || f.kind === Kind.Map || f.kind === Kind.Scalar ? !f.omitempty : f.kind === Kind.Custom ? !f.dropped : true));
    p = { custom: this.codec.shapeOf(name).enc !== undefined, fields: new Map(steps.map((f) => [f.json, f])), absent, metadata };
    this.plans.set(name, p);
    return p;
  }

  private step(f: Field, rank: number, depth: number): Step {
    const enc = f.scalar || f.repeated || f.map ? undefined : this.codec.shapeOf(f.type).enc;
    const kind = f.repeated ? Kind.List : f.map ? Kind.Map : f.scalar ? Kind.Scalar : enc !== undefined ? Kind.Custom : Kind.Struct;
    const zero = kind === Kind.Scalar ? (f.type === 'string' || f.type === 'bytes' ? '' : f.type === 'bool' ? false : 0) : kind === Kind.Custom ? GO_ZERO[enc!] : undefined;
    return { json: f.json, kind, type: f.type, scalar: f.scalar, pointer: f.pointer, omitempty: f.omitempty, zero, dropped: kind === Kind.Custom && !(enc! in GO_ZERO), rank, depth };
  }
}

function rankOf(fields: Map<string, Step>, k: string): number {
  const f = fields.get(k);
  return f !== undefined ? f.rank : k === 'kind' ? -2 : k === 'apiVersion' ? -1 : Infinity;
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
function reorder(o: Json, fields: Map<string, Step>): void {
  const keys = Object.keys(o), order = keys.slice(), ranks = order.map((k) => rankOf(fields, k));
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

/**
 * Puts `o`'s keys (`keys`, as they are) in the order of `order`: the keys from the first out of
 * place on are deleted, last first (which keeps V8's fast properties), and added again in order.
 */
function rewrite(o: Json, order: string[], keys = Object.keys(o)): void {
  let from = 0;
  while (from < keys.length && keys[from] === order[from]) from++;
  const values = new Array<unknown>(order.length - from);
  for (let i = from; i < order.length; i++) values[i - from] = o[order[i]!];
  for (let i = keys.length - 1; i >= from; i--) delete o[keys[i]!];
  for (let i = from; i < order.length; i++) o[order[i]!] = values[i - from];
}
