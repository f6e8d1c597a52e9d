// The Go-shape walk against its first, plain version (kept here as the oracle): a write's three
// shapings (as decoded for managed fields, as stored, again after admission) must give the same
// bytes, key order included, whichever shortcuts the walk takes: a typed pass finished in place,
// metadata alone shaped again, maps not checked twice. Inputs: every kind of the catalog with every
// field set, randomly mutated (nulls, empty lists and maps, zero values, dropped fields, unknown
// keys, keys out of order), and every JSON create probe of the differential corpus.
import t, { type Test } from 'tap';
import { GoShaper, ProtobufCodec } from '../../kernel/api/repr/protobuf.js';
import { PROTOBUF_CATALOG } from '../../plugins/lib/protobuf-catalog.js';
import { sampleObject } from '../lib/protobuf.js';
import { SEEDS } from '../corpus/seeds.js';
import { applyProbe, generateProbes, seedObject } from '../corpus/generate.js';

type Json = Record<string, unknown>;
const codec = new ProtobufCodec([PROTOBUF_CATALOG]);
const shaper = new GoShaper(codec);

/** The walk as first written (one full pass each time, fields deleted and added again). */
class Oracle {
  private orders = new Map<string, Map<string, number>>();
  shape(name: string, v: unknown, typed = false, depth = 0, inline = false): void {
    const c = codec.shapeOf(name);
    if (c.enc || depth > 128 || !v || typeof v !== 'object' || Array.isArray(v)) return;
    const o = v as Json;
    for (const f of c.fields) {
      if (f.inline) { this.shape(f.type, o, typed, depth + 1, true); continue; }
      let x = o[f.json];
      if (x === null) {
        if (f.pointer) { if (f.omitempty) delete o[f.json]; continue; }
        delete o[f.json];
        x = undefined;
      }
      if (x === undefined) {
        if (f.pointer) { if (!f.omitempty) o[f.json] = null; continue; }
        if (f.repeated || f.map) { if (!f.omitempty) o[f.json] = null; continue; }
        if (f.scalar) { if (!f.omitempty) o[f.json] = f.type === 'string' || f.type === 'bytes' ? '' : f.type === 'bool' ? false : 0; continue; }
        const enc = codec.shapeOf(f.type).enc;
        if (enc !== undefined) { if (enc in GO_ZERO) o[f.json] = GO_ZERO[enc]; continue; }
        x = o[f.json] = {};
      }
      if (f.repeated || f.map) {
        if (f.repeated ? !Array.isArray(x) : typeof x !== 'object' || Array.isArray(x)) continue;
        const keys = f.map ? Object.keys(x as Json) : undefined;
        if (keys ? !keys.length : !(x as unknown[]).length) { if (f.omitempty) delete o[f.json]; else if (!f.pointer && !typed) o[f.json] = null; continue; }
        if (keys && keys.length <= 1000) sortAs(x as Json, keys, (a, b) => (a < b ? -1 : a > b ? 1 : 0));
        if (!f.scalar) for (const el of f.repeated ? x as unknown[] : Object.values(x as Json)) this.shape(f.type, el, typed, depth + 1);
      } else if (f.scalar) {
        if (f.omitempty && !f.pointer && (x === '' || x === 0 || x === false)) delete o[f.json];
      } else this.shape(f.type, x, typed, depth + 1);
    }
    if (inline) return;
    const rank = this.order(name);
    const at = (k: string) => rank.get(k) ?? (k === 'kind' ? -2 : k === 'apiVersion' ? -1 : Infinity);
    sortAs(o, Object.keys(o), (a, b) => at(a) - at(b));
  }

  private order(name: string): Map<string, number> {
    let m = this.orders.get(name);
    if (m) return m;
    const names: string[] = [];
    const add = (n: string) => { for (const f of codec.shapeOf(n).fields) if (f.inline) add(f.type); else names.push(f.json); };
    add(name);
    this.orders.set(name, (m = new Map(names.map((k, i) => [k, i]))));
    return m;
  }
}
const GO_ZERO: Record<string, unknown> = { time: null, microtime: null, duration: '0s', quantity: '0', intorstring: 0, raw: null };
function sortAs(o: Json, keys: string[], cmp: (a: string, b: string) => number): void {
  const entries = keys.map((k) => [k, o[k]] as const).sort((a, b) => cmp(a[0], b[0]));
  for (const k of keys) delete o[k];
  for (const [k, x] of entries) o[k] = x;
}
const oracle = new Oracle();
const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T; // (structuredClone is slower)

// ---------------------------------------------------------------- a write's shapings, both ways

const entry = () => ({ fieldsV1: { 'f:data': { '.': {} } }, time: '2024-01-01T00:00:00Z', manager: 'm', fieldsType: 'FieldsV1', apiVersion: 'v1', operation: 'Update' });
/** What the managed-fields task does between the first two shapings. */
const track = (o: Json) => { (o.metadata as Json).managedFields = [entry()]; };
/** What the server does to metadata before the last one. */
const serverMeta = (o: Json) => { const md = o.metadata as Json; md.uid = 'u-1'; md.creationTimestamp = '2024-01-01T00:00:00Z'; delete md.deletionTimestamp; md.generation = 1; };

function viaOracle(name: string, input: Json, after: (o: Json) => void): string[] {
  const o = copy(input);
  oracle.shape(name, o, true);
  const typed = JSON.stringify(o);
  track(o);
  oracle.shape(name, o);
  const stored = JSON.stringify(o);
  after(o);
  oracle.shape(name, o);
  return [typed, stored, JSON.stringify(o)];
}

function viaShaper(name: string, input: Json, after: (o: Json) => void, whole: boolean): string[] {
  const o = copy(input);
  const toStored = shaper.shapeTyped(name, o);
  const typed = JSON.stringify(o);
  track(o);
  if (!toStored()) shaper.shape(name, o);
  const stored = JSON.stringify(o);
  after(o);
  if (whole || !shaper.shapeMetadata(name, o)) shaper.shape(name, o);
  return [typed, stored, JSON.stringify(o)];
}

const admitted = (o: Json) => { serverMeta(o); (o.metadata as Json).labels = { z: '1', a: '2' }; (o.metadata as Json).finalizers = []; o.zz = 1; };

/**
 * Both ways agree: with only server metadata changed (metadata shaped alone), and (`admission`)
 * with a map and a list changed too (shaped whole); and one pass of a fresh copy.
 */
function agree(t: Test, name: string, input: Json, what: string, admission = true): boolean {
  const obj = copy(input);
  if (!obj.metadata || typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) obj.metadata = {}; // as the write path makes it
  for (const [after, whole] of [[serverMeta, false], ...(admission ? [[admitted, true]] : [])] as [(o: Json) => void, boolean][]) {
    const want = viaOracle(name, obj, after), got = viaShaper(name, obj, after, whole);
    for (let i = 0; i < 3; i++) {
      if (got[i] !== want[i]) { t.equal(got[i], want[i], `${what}: ${['typed', 'stored', 'after admission'][i]}${whole ? ' (whole)' : ''}`); return false; }
    }
  }
  // and one full pass of a fresh copy, as stored
  const a = copy(obj), b = copy(obj);
  oracle.shape(name, a);
  shaper.shape(name, b);
  if (JSON.stringify(a) !== JSON.stringify(b)) { t.equal(JSON.stringify(b), JSON.stringify(a), `${what}: one pass`); return false; }
  return true;
}

// ---------------------------------------------------------------- inputs

let seed = 11;
const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);

/** A copy of `v` with fields randomly nulled, emptied, zeroed, dropped, added or reordered. */
function mutate(v: unknown, depth = 0): unknown {
  if (Array.isArray(v)) return v.map((x) => mutate(x, depth + 1));
  if (!v || typeof v !== 'object') return v;
  const out: Json = {};
  const keys = Object.keys(v);
  if (rnd(3) === 0) keys.reverse();
  for (const k of keys) {
    const x = (v as Json)[k];
    switch (rnd(depth === 0 && k === 'metadata' ? 1 : 10)) {
      case 1: out[k] = null; break;
      case 2: out[k] = Array.isArray(x) ? [] : x && typeof x === 'object' ? {} : typeof x === 'string' ? '' : typeof x === 'number' ? 0 : typeof x === 'boolean' ? false : x; break;
      case 3: break; // dropped
      case 4: out[`unknown${rnd(3)}`] = 'x'; out[k] = mutate(x, depth + 1); break;
      default: out[k] = mutate(x, depth + 1);
    }
  }
  return out;
}

t.test('every kind of the catalog, with every field set and mutated at random', async (t) => {
  let n = 0, bad = 0;
  for (const [kind, message] of Object.entries(PROTOBUF_CATALOG.kinds)) {
    const full = sampleObject(PROTOBUF_CATALOG, message) as Json;
    const inputs = [full, ...Array.from({ length: 6 }, () => mutate(full) as Json)];
    for (const [i, input] of inputs.entries()) {
      n++;
      if (!agree(t, message, input, `${kind} #${i}`) && ++bad > 20) return;
    }
  }
  t.ok(n > 1800, `${n} objects`);
});

t.test('every JSON create probe of the differential corpus', async (t) => {
  let n = 0, bad = 0, i = 0;
  const bases = new Map(SEEDS.map((s) => [s, seedObject(s, 'create')]));
  for (const p of generateProbes(SEEDS)) {
    // every other one: a seed's probes differ in one field each (the whole corpus replays on the server)
    if (p.op !== 'create' || p.encoding !== 'json' || i++ % 2) continue;
    const obj = applyProbe(bases.get(p.seed)!, p) as Json;
    const message = codec.kindMessage(String(p.seed.object.apiVersion), String(p.seed.object.kind));
    if (!message) continue;
    n++;
    if (!agree(t, message, obj, p.id, false) && ++bad > 20) return; // (the random objects take the admission path)
  }
  t.ok(n > 5000, `${n} probes`);
});

t.test('a typed pass whose kept empty list was replaced asks to be shaped again', async (t) => {
  const message = codec.kindMessage('v1', 'Pod')!;
  const o = structuredClone(SEEDS.find((s) => s.name === 'pod')!.object) as Json;
  o.spec = { ...(o.spec as Json), containers: [] }; // not omitempty: kept as [] by the typed pass
  const toStored = shaper.shapeTyped(message, o);
  t.same((o.spec as Json).containers, []);
  (o.spec as Json).containers = [];
  t.equal(toStored(), false);
  t.equal(shaper.shapeMetadata('core.v1.ObjectReference', {}), false, 'a message without metadata');
});
