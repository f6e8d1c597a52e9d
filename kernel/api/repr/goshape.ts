// An object as the reference's storage gives it back. The reference stores Protobuf and serves
// what it reads back through Go's JSON encoder, so a built-in object's JSON follows its Go type:
// zero values and empty lists or maps of omitempty fields go; an empty list or map without
// omitempty is null; a struct field (not a pointer) is always there, even empty; other fields
// without omitempty carry their zero value; fields come in the Go type's order (kind and apiVersion
// first) and map keys sorted. Driven by the Protobuf catalog's field flags; no type is named here.
import type { Field, ProtobufCodec } from './protocodec.js';

type Json = Record<string, unknown>;

/** Go's JSON of the zero value of a custom-encoded struct (written even when omitempty). */
const GO_ZERO: Record<string, unknown> = { time: null, microtime: null, duration: '0s', quantity: '0', intorstring: 0, raw: null };

/** A map keeps the order it came in above this many keys: sorting one holds the event loop. */
const SORTED_MAP_KEYS = 1000;

const zeroScalar = (f: Field) => (f.type === 'string' || f.type === 'bytes' ? '' : f.type === 'bool' ? false : 0);
const isZeroScalar = (v: unknown) => v === '' || v === 0 || v === false;

export class GoShaper {
  private orders = new Map<string, Map<string, number>>();
  constructor(private readonly codec: ProtobufCodec) {}

  /**
   * Shapes `v`, a JSON object of Protobuf message `name`, in place: as stored, or (`typed`) as Go's
   * encoder writes the object decoded from a request, before the Protobuf round trip turns an empty
   * list into null (what the reference's field manager reads).
   */
  shape(name: string, v: unknown, typed = false): void {
    this.walk(name, v, 0, false, typed);
  }

  private walk(name: string, v: unknown, depth: number, inline: boolean, typed: boolean): void {
    const c = this.codec.shapeOf(name);
    if (c.enc || depth > 128 || !v || typeof v !== 'object' || Array.isArray(v)) return;
    const o = v as Json;
    for (const f of c.fields) {
      if (f.inline) { this.walk(f.type, o, depth + 1, true, typed); continue; }
      let x = o[f.json];
      if (x === null) { // a nil pointer, or (not a pointer) Go's zero value
        if (f.pointer) { if (f.omitempty) delete o[f.json]; continue; }
        delete o[f.json];
        x = undefined;
      }
      if (x === undefined) {
        if (f.pointer) { if (!f.omitempty) o[f.json] = null; continue; }
        if (f.repeated || f.map) { if (!f.omitempty) o[f.json] = null; continue; }
        if (f.scalar) { if (!f.omitempty) o[f.json] = zeroScalar(f); continue; }
        const enc = this.codec.shapeOf(f.type).enc;
        if (enc !== undefined) { if (enc in GO_ZERO) o[f.json] = GO_ZERO[enc]; continue; }
        x = o[f.json] = {};
      }
      if (f.repeated || f.map) {
        if (f.repeated ? !Array.isArray(x) : typeof x !== 'object' || Array.isArray(x)) continue;
        // one walk of a map's keys (a 50,000-key ConfigMap's takes milliseconds)
        const keys = f.map ? firstKeys(x as Json, SORTED_MAP_KEYS) : undefined;
        if (keys ? !keys.length : !(x as unknown[]).length) { if (f.omitempty) delete o[f.json]; else if (!f.pointer && !typed) o[f.json] = null; continue; }
        if (keys && keys.length <= SORTED_MAP_KEYS) inOrder(x as Json, (a, b) => (a < b ? -1 : a > b ? 1 : 0), keys);
        if (!f.scalar) for (const el of f.repeated ? x as unknown[] : Object.values(x as Json)) this.walk(f.type, el, depth + 1, false, typed);
      } else if (f.scalar) {
        if (f.omitempty && !f.pointer && isZeroScalar(x)) delete o[f.json];
      } else this.walk(f.type, x, depth + 1, false, typed);
    }
    if (!inline) {
      const rank = this.order(name);
      const at = (k: string) => rank.get(k) ?? (k === 'kind' ? -2 : k === 'apiVersion' ? -1 : Infinity);
      // most objects are in order already: checked without building a key list
      let last = -Infinity, sorted = true;
      for (const k in o) { const r = at(k); if (r < last) { sorted = false; break; } last = r; }
      if (!sorted) inOrder(o, (a, b) => at(a) - at(b), Object.keys(o));
    }
  }

  /** Each JSON field of a message (inlined ones in their place) → its position in the Go type. */
  private order(name: string): Map<string, number> {
    let m = this.orders.get(name);
    if (m) return m;
    const names: string[] = [];
    const add = (n: string) => { for (const f of this.codec.shapeOf(n).fields) if (f.inline) add(f.type); else names.push(f.json); };
    add(name);
    this.orders.set(name, (m = new Map(names.map((k, i) => [k, i]))));
    return m;
  }
}

/** The first `most` + 1 keys of `o` (all of them when it has no more). */
function firstKeys(o: Json, most: number): string[] {
  const keys: string[] = [];
  for (const k in o) if (keys.push(k) > most) break;
  return keys;
}

/** Rewrites `o`'s keys (all of them, `keys`) in the order `cmp` gives, when they are not in it already. */
function inOrder(o: Json, cmp: (a: string, b: string) => number, keys: string[]): void {
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i++) if (cmp(keys[i - 1]!, keys[i]!) > 0) sorted = false;
  if (sorted) return;
  const entries = keys.map((k) => [k, o[k]] as const).sort((a, b) => cmp(a[0], b[0]));
  for (const k of keys) delete o[k];
  for (const [k, x] of entries) o[k] = x;
}
