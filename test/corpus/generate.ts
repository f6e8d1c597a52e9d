// The differential corpus's probes: every seed (seeds.ts) mutated at every field it sets, one
// mutation per probe, each sent as a dry-run create and as a dry-run update of the stored seed.
// The mutations follow the JSON shape of the value they replace (wrong JSON type, empty, zero,
// negative, huge, malformed syntax, outside any enum, a duplicated list item, a bad map key, the
// field removed), so the generator needs no schema and gives the same probes on every machine:
// the recorded verdicts are keyed by probe id.
import { SEEDS, type Seed } from './seeds.js';
import { carries, valueAt } from './protobuf.js';

export type Op = 'create' | 'update';

export interface Probe {
  /** "seed:op:path:mutation", e.g. "pod:create:spec.containers[0].resources.requests.cpu:neg". */
  id: string;
  seed: Seed;
  op: Op;
  /** Path segments of the mutated field: keys and list indexes. */
  path: (string | number)[];
  mutation: string;
  /** How the body is sent: JSON, or the reference's Protobuf (ids end in ":pb"). */
  encoding: 'json' | 'protobuf';
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const isObj = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Mutations by the JSON type of the value at a path: name → the value put there (undefined: the field removed). */
const MUTATIONS: Record<string, Record<string, (v: any) => Json | undefined>> = {
  string: {
    empty: () => '',
    type: () => 7,
    bad: () => 'Bad Value!',
    long: () => 'x'.repeat(300),
    neg: () => '-3',
  },
  number: {
    neg: () => -1,
    zero: () => 0,
    huge: () => 2147483648,
    type: () => 'str',
    frac: () => 1.5,
  },
  boolean: { type: () => 'str' },
  array: {
    empty: () => [],
    dup: (v: Json[]) => (v.length ? [v[0]!, ...v] : undefined),
    type: () => 'str',
  },
  object: {
    empty: () => ({}),
    type: () => 'str',
    badkey: (v: Record<string, Json>) => ({ ...v, 'bad key!': 'v' }),
  },
};

/** Fields whose mutation says nothing about the type (routing and identity), left alone. */
const FIXED = new Set(['apiVersion', 'kind', 'metadata.namespace']);

const typeOf = (v: Json) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);

/** Dotted form of a path: spec.containers[0].name, data[app.conf]. */
export function pathText(path: (string | number)[]): string {
  let out = '';
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : /^[A-Za-z_$][\w$-]*$/.test(seg) ? (out ? `.${seg}` : seg) : `[${seg}]`;
  return out;
}

function* fieldsOf(v: Json, path: (string | number)[] = []): Generator<{ path: (string | number)[]; value: Json }> {
  if (path.length) yield { path, value: v };
  if (Array.isArray(v)) for (let i = 0; i < v.length; i++) yield* fieldsOf(v[i]!, [...path, i]);
  else if (isObj(v)) for (const k of Object.keys(v)) yield* fieldsOf(v[k]!, [...path, k]);
}

/** The object a seed's probes start from: its name set as the runner sets it. */
export function seedObject(seed: Seed, op: Op, run = ''): Record<string, any> {
  const o = structuredClone(seed.object);
  o.metadata = { ...(o.metadata ?? {}), name: seedName(seed, op, run) };
  return o;
}

/** `run` tells one run's stored seeds from an earlier run's that may linger (a namespace terminating with no controller to finish it). */
export function seedName(seed: Seed, op: Op, run = ''): string {
  return seed.fixedName ?? `${seed.name}-${op === 'create' ? 'c' : 'u'}${run && `-${run}`}`;
}

/** Every probe of the corpus, in a stable order. */
export function generateProbes(seeds: Seed[] = SEEDS): Probe[] {
  const out: Probe[] = [];
  for (const seed of seeds) {
    const base = seedObject(seed, 'create') as Json;
    for (const { path, value } of fieldsOf(base)) {
      const text = pathText(path);
      if (FIXED.has(text)) continue;
      const kinds = { ...(MUTATIONS[typeOf(value)] ?? {}), drop: () => undefined };
      for (const [mutation, make] of Object.entries(kinds)) {
        // a list's dup needs an item; nothing else is skipped
        if (mutation === 'dup' && !(Array.isArray(value) && value.length)) continue;
        void make;
        for (const op of ['create', 'update'] as const) out.push({ id: `${seed.name}:${op}:${text}:${mutation}`, seed, op, path, mutation, encoding: 'json' });
      }
    }
    for (const { path, try: values } of seed.values ?? []) {
      for (let i = 0; i < values.length; i++) {
        for (const op of ['create', 'update'] as const) out.push({ id: `${seed.name}:${op}:${pathText(path)}:v${i}`, seed, op, path, mutation: `v${i}`, encoding: 'json' });
      }
    }
  }
  // The same probes in Protobuf, where Protobuf can carry the mutation (protobuf.ts).
  const pb: Probe[] = [];
  for (const p of out) {
    if (p.op === 'create' && carries(applyProbe(seedObject(p.seed, 'create'), p), p.path, p.mutation === 'drop')) {
      for (const op of ['create', 'update'] as const) pb.push({ ...p, op, id: `${p.seed.name}:${op}:${pathText(p.path)}:${p.mutation}:pb`, encoding: 'protobuf' });
    }
  }
  return [...out, ...pb];
}

/** The probe's body: `base` (the seed as sent, or as the server stored it for an update) with the mutation applied. */
export function applyProbe(base: Record<string, any>, probe: Probe): Record<string, any> {
  const obj = structuredClone(base);
  const kinds = { ...(MUTATIONS[typeOf(valueAt(obj, probe.path) as Json)] ?? {}), drop: () => undefined };
  let parent: any = obj;
  for (const seg of probe.path.slice(0, -1)) {
    if (parent[seg] === undefined || parent[seg] === null || typeof parent[seg] !== 'object') return obj;
    parent = parent[seg];
  }
  const last = probe.path[probe.path.length - 1]!;
  const chosen = /^v\d+$/.test(probe.mutation) ? probe.seed.values?.find((x) => pathText(x.path) === pathText(probe.path))?.try[Number(probe.mutation.slice(1))] as Json | undefined : undefined;
  const make = chosen !== undefined ? () => chosen : kinds[probe.mutation as keyof typeof kinds] as ((v: any) => Json | undefined) | undefined;
  // The stored object may hold another shape there than the seed (a server rewrote it): the field goes.
  const value = make ? make(parent[last]) : undefined;
  if (value === undefined) {
    if (Array.isArray(parent) && typeof last === 'number') parent.splice(last, 1);
    else delete parent[last];
  } else parent[last] = value;
  return obj;
}

