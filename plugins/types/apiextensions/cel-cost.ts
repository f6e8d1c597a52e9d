// The static cost of x-kubernetes-validations rules as the reference estimates it when a definition
// is written (cel-go's checker cost estimator with the Kubernetes size estimator and library costs):
//   - each rule's worst-case cost, from the sizes the schema allows (maxItems, maxProperties,
//     maxLength; without them, as many as the largest request, 3 MiB, could hold);
//   - multiplied by how often the rule can run: the product of maxItems/maxProperties of the lists
//     and maps above it, or, when one of them is unbounded, as many values of the rule's own
//     minimal serialized size as a request could hold;
//   - over 10,000,000 per rule, or 100,000,000 for all rules of a schema, the definition is refused.
import type { Props } from './schema.js';
import { celName } from './cel-names.js';
import { isObj } from '../../lib/json.js';


export const MAX_REQUEST_SIZE = 3 * 1024 * 1024;
const MAX = 2 ** 64; // cel-go's math.MaxUint64: "unbounded", saturating
const STRING_FACTOR = 0.1;
const REGEX_FACTOR = 0.25;

const sat = (n: number) => (n >= MAX ? MAX : n);
const add = (a: number, b: number) => sat(a + b);
const mul = (a: number, b: number) => (a === 0 || b === 0 ? 0 : sat(a * b));
const byFactor = (x: number, f: number) => (x >= MAX / f ? MAX : sat(Math.ceil(x * f)));

// ---------------------------------------------------------------- the schema as CEL declares it

type Kind = 'bool' | 'int' | 'uint' | 'double' | 'string' | 'bytes' | 'duration' | 'timestamp' | 'list' | 'map' | 'object' | 'dyn' | 'null' | 'unknown';

/** Whether a schema is visible to rules at all (the reference leaves out what it cannot type). */
function exposed(p: unknown): p is Props {
  if (!isObj(p)) return false;
  if (p['x-kubernetes-int-or-string'] === true) return true;
  switch (p.type) {
    case 'array': return exposed(p.items);
    case 'object': return isObj(p.additionalProperties) ? exposed(p.additionalProperties) : true;
    case 'string': case 'boolean': case 'number': case 'integer': return true;
    default: return false;
  }
}

function kindOf(p: Props | undefined): Kind {
  if (!p) return 'unknown';
  if (p['x-kubernetes-int-or-string'] === true) return 'dyn';
  switch (p.type) {
    case 'array': return 'list';
    case 'object': return isObj(p.additionalProperties) ? 'map' : 'object';
    case 'string': return p.format === 'byte' ? 'bytes' : p.format === 'duration' ? 'duration' : p.format === 'date' || p.format === 'date-time' ? 'timestamp' : 'string';
    case 'boolean': return 'bool';
    case 'integer': return 'int';
    case 'number': return 'double';
    default: return 'unknown';
  }
}

/** The fewest bytes a value of the schema takes in JSON (DeclType.MinSerializedSize). */
export function minSize(p: Props): number {
  if (p['x-kubernetes-int-or-string'] === true) return 1;
  switch (p.type) {
    case 'array': return 2;
    case 'object': {
      if (isObj(p.additionalProperties)) return 2;
      let n = 2;
      const required = new Set(Array.isArray(p.required) ? p.required : []);
      for (const [k, v] of Object.entries(isObj(p.properties) ? p.properties : {})) {
        if (!exposed(v) || celName(k) === undefined) continue;
        if (required.has(k) && v.default === undefined) n += k.length + minSize(v) + 4;
      }
      return n;
    }
    case 'string': return p.format === 'duration' ? 3 : p.format === 'date' ? 12 : p.format === 'date-time' ? 21 : 2;
    case 'boolean': return 4;
    default: return 1;
  }
}

/** The most elements (items, properties, characters) a value of the schema can have (DeclType.MaxElements). */
function maxElements(p: Props): number {
  if (p['x-kubernetes-int-or-string'] === true) return MAX_REQUEST_SIZE - 2;
  switch (p.type) {
    case 'array':
      return typeof p.maxItems === 'number' ? Math.max(0, p.maxItems) : Math.floor((MAX_REQUEST_SIZE - 2) / (minSize(p.items) + 1));
    case 'object':
      if (!isObj(p.additionalProperties)) return 0;
      return typeof p.maxProperties === 'number' ? Math.max(0, p.maxProperties) : Math.floor((MAX_REQUEST_SIZE - 2) / (minSize(p.additionalProperties) + 6));
    case 'string':
      if (p.format === 'byte') return typeof p.maxLength === 'number' ? Math.max(0, p.maxLength) : MAX_REQUEST_SIZE - 2;
      if (p.format === 'duration' || p.format === 'date-time') return 32;
      if (p.format === 'date') return 12;
      return typeof p.maxLength === 'number' ? Math.max(0, p.maxLength) * 4 : MAX_REQUEST_SIZE - 2;
    default: return 0;
  }
}

/** How many values of a rule's schema a request can hold, when a list or map above it is unbounded. */
export const maxCardinality = (p: Props) => Math.floor(MAX_REQUEST_SIZE / (minSize(p) + 1));

/** The schema reached from the rule's `self` by a path of field names, "@items", "@values", "@keys". */
function resolve(self: Props, path: string[]): Props | undefined | 'key' {
  let cur: Props = self;
  for (const seg of path.slice(1)) {
    if (seg === '@items' || seg === '@values') {
      const next = seg === '@items' ? cur.items : cur.additionalProperties;
      if (!exposed(next)) return undefined;
      cur = next;
    } else if (seg === '@keys') return 'key'; // map keys: plain strings of no declared size
    else {
      const props = isObj(cur.properties) ? cur.properties : {};
      const hit = Object.entries(props).find(([k, v]) => exposed(v) && celName(k) === seg);
      if (!hit) return undefined;
      cur = hit[1];
    }
  }
  return cur;
}

// ---------------------------------------------------------------- the estimator

type Expr = { id?: bigint; exprKind: { case?: string; value?: any } };
interface Size { min: number; max: number }
interface Est { cost: number; size?: Size; path?: string[]; kind: Kind }

const SCALAR = new Set<Kind>(['bool', 'int', 'uint', 'double', 'duration', 'timestamp']);

/** cel-go's worst-case cost of one expression whose `self` (and `oldSelf`) has schema `self`. */
export function estimateCost(root: Expr, self: Props): number {
  const iter = new Map<string, Est>(); // comprehension variables → their range
  const accu = new Map<string, Kind>(); // accumulators → their type
  const size = (e: Est): Size => {
    if (e.size) return e.size;
    if (e.path) {
      const s = resolve(self, e.path);
      if (s === 'key') return { min: 0, max: 0 };
      if (s) return { min: 0, max: maxElements(s) };
    }
    return SCALAR.has(e.kind) ? { min: 1, max: 1 } : { min: 0, max: MAX };
  };
  const kindAt = (path: string[]): Kind => {
    const s = resolve(self, path);
    return s === 'key' ? 'string' : kindOf(s);
  };
  const visit = (e: Expr): Est => {
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr': {
        const c = k.value.constantKind;
        const kinds: Record<string, Kind> = { stringValue: 'string', bytesValue: 'bytes', boolValue: 'bool', int64Value: 'int', uint64Value: 'uint', doubleValue: 'double', nullValue: 'null' };
        const n = c.case === 'stringValue' ? [...(c.value as string)].length : c.case === 'bytesValue' ? (c.value as Uint8Array).length : 1;
        return { cost: 0, size: { min: n, max: n }, kind: kinds[c.case] ?? 'unknown' };
      }
      case 'identExpr': {
        const name: string = k.value.name;
        const range = iter.get(name);
        if (range) {
          // A range without a path (a literal, a conditional) gives ["@items"], which cel-go's size
          // estimator reads as the rule's own schema: it drops a path's first element.
          const path = [...(range.path ?? []), range.kind === 'map' ? '@keys' : '@items'];
          return { cost: 1, path, kind: range.path ? kindAt(path) : 'unknown' };
        }
        const acc = accu.get(name);
        if (acc) return { cost: 1, kind: acc };
        if (name === 'self' || name === 'oldSelf') return { cost: 1, path: ['self'], kind: kindOf(self) };
        return { cost: 1, kind: 'unknown' };
      }
      case 'selectExpr': {
        const operand = visit(k.value.operand);
        if (k.value.testOnly) return { cost: add(1, operand.cost), kind: 'bool' };
        const cost = add(operand.cost, operand.kind === 'dyn' ? 0 : 1);
        if (!operand.path) return { cost, kind: 'unknown' };
        const path = [...operand.path, k.value.field as string];
        return { cost, path, kind: kindAt(path) };
      }
      case 'listExpr': {
        const els = (k.value.elements ?? []) as Expr[];
        return { cost: els.reduce((n, x) => add(n, visit(x).cost), 10), size: { min: els.length, max: els.length }, kind: 'list' };
      }
      case 'structExpr': {
        const entries = (k.value.entries ?? []) as Array<{ mapKey?: Expr; value: Expr }>;
        const base = k.value.messageName ? 40 : 30;
        const cost = entries.reduce((n, x) => add(add(n, x.mapKey ? visit(x.mapKey).cost : 0), visit(x.value).cost), base);
        return { cost, size: k.value.messageName ? undefined : { min: entries.length, max: entries.length }, kind: k.value.messageName ? 'object' : 'map' };
      }
      case 'comprehensionExpr': {
        const c = k.value;
        const range = visit(c.iterRange);
        const init = visit(c.accuInit);
        let cost = add(range.cost, init.cost);
        const saved = [iter.get(c.iterVar), accu.get(c.accuVar)];
        iter.set(c.iterVar, range);
        accu.set(c.accuVar, init.kind); // the accumulator keeps its initial type (bool, int, list)
        const per = add(visit(c.loopCondition).cost, visit(c.loopStep).cost);
        const result = visit(c.result);
        cost = add(cost, result.cost);
        if (saved[0]) iter.set(c.iterVar, saved[0] as Est); else iter.delete(c.iterVar);
        if (saved[1]) accu.set(c.accuVar, saved[1] as Kind); else accu.delete(c.accuVar);
        return { cost: add(cost, mul(size(range).max, per)), kind: result.kind };
      }
      case 'callExpr': return call(k.value.function as string, k.value.target ? visit(k.value.target) : undefined, ((k.value.args ?? []) as Expr[]).map(visit), (k.value.args ?? []) as Expr[]);
      default: return { cost: 0, kind: 'unknown' };
    }
  };
  const call = (fn: string, target: Est | undefined, args: Est[], raw: Expr[]): Est => {
    const argSum = args.reduce((n, a) => add(n, a.cost), 0);
    const base = add(target?.cost ?? 0, argSum);
    const plus = (fnCost: number, kind: Kind, sz?: Size): Est => ({ cost: add(base, fnCost), kind, ...(sz ? { size: sz } : {}) });
    const isString = (e: Est) => e.kind === 'string' || e.kind === 'bytes';
    switch (fn) {
      case '_&&_': case '_||_': return { cost: base, kind: 'bool' };
      case '_?_:_': {
        const [, t, f] = args;
        const st = size(t);
        const sf = size(f);
        return { cost: add(args[0].cost, Math.max(t.cost, f.cost)), kind: t.kind === 'null' ? f.kind : t.kind, size: { min: Math.min(st.min, sf.min), max: Math.max(st.max, sf.max) } };
      }
      case '_==_': case '_!=_': return plus(byFactor(Math.min(size(args[0]).max, size(args[1]).max), STRING_FACTOR), 'bool');
      case '_<_': case '_<=_': case '_>_': case '_>=_':
        return isString(args[0]) || isString(args[1]) ? plus(byFactor(Math.min(size(args[0]).max, size(args[1]).max), STRING_FACTOR), 'bool') : plus(1, 'bool');
      case '_+_': {
        if (args.length === 2 && (isString(args[0]) || isString(args[1]) || args[0].kind === 'list' || args[1].kind === 'list')) {
          const a = size(args[0]);
          const b = size(args[1]);
          const sz = { min: add(a.min, b.min), max: add(a.max, b.max) };
          return args[0].kind === 'list' || args[1].kind === 'list' ? plus(1, 'list', sz) : plus(byFactor(sz.max, STRING_FACTOR), args[0].kind, sz);
        }
        return plus(1, args[0]?.kind ?? 'unknown');
      }
      // Membership in a list is linear; in a map it is a lookup.
      case '@in': return args[1]?.kind === 'list' ? plus(size(args[1]).max, 'bool') : plus(1, 'bool');
      case '_[_]': {
        const [c] = args;
        const path = [...(c?.path ?? []), c?.kind === 'map' ? '@values' : '@items'];
        return { cost: add(base, 1), path, kind: c?.path ? kindAt(path) : 'unknown' };
      }
      case 'size': return plus(1, 'int');
      case 'matches':
        if (target && args.length === 1) return plus(mul(byFactor(add(size(target).max, 1), STRING_FACTOR), byFactor(size(args[0]).max, REGEX_FACTOR)), 'bool');
        return plus(1, 'bool');
      case 'contains':
        if (target && args.length === 1) return plus(mul(byFactor(size(target).max, STRING_FACTOR), byFactor(size(args[0]).max, STRING_FACTOR)), 'bool');
        return plus(1, 'bool');
      case 'startsWith': case 'endsWith':
        return args.length === 1 ? plus(byFactor(size(args[0]).max, STRING_FACTOR), 'bool') : plus(1, 'bool');
      // The Kubernetes libraries' own estimates.
      case 'lowerAscii': case 'upperAscii': case 'substring': case 'trim':
        if (target) { const sz = size(target); return plus(byFactor(sz.max, STRING_FACTOR), 'string', sz); }
        break;
      case 'replace':
        if (target && args.length >= 2) {
          const sz = size(target);
          const from = size(args[0]);
          const to = size(args[1]);
          const count = from.min === 0 ? (sz.max < MAX ? sz.max + 1 : sz.max) : to.max <= from.min ? 0 : Math.ceil(sz.max / from.min);
          const kept = from.min === 0 || to.max <= from.min ? sz.max : 0;
          return plus(byFactor(sz.max, 2 * STRING_FACTOR), 'string', { min: 0, max: add(mul(count, to.max), kept) });
        }
        break;
      case 'split':
        if (target) {
          const sz = size(target);
          const limit = raw[1]?.exprKind.case === 'constExpr' ? Number(raw[1].exprKind.value.constantKind.value) : sz.max;
          return plus(byFactor(sz.max, 2 * STRING_FACTOR), 'list', { min: 0, max: limit });
        }
        break;
      case 'join':
        if (target) {
          const list = size(target);
          const elem = target.path ? size({ cost: 0, path: [...target.path, '@items'], kind: kindAt([...target.path, '@items']) }) : { min: 0, max: MAX };
          let max = mul(list.max, elem.max);
          if (args.length) max = add(max, mul(size(args[0]).max, Math.max(0, list.max - 1)));
          return plus(byFactor(max, STRING_FACTOR), 'string', { min: 0, max });
        }
        break;
      case 'find': case 'findAll':
        if (target && args.length >= 1) {
          const sz = size(target);
          return plus(mul(byFactor(add(sz.max, 1), STRING_FACTOR), byFactor(size(args[0]).max, REGEX_FACTOR)), fn === 'find' ? 'string' : 'list', { min: 0, max: sz.max });
        }
        break;
      case 'isSorted': case 'sum': case 'max': case 'min': case 'indexOf': case 'lastIndexOf':
        if (target) {
          if (target.kind === 'list') {
            const elPath = target.path ? [...target.path, '@items'] : undefined;
            const elKind = elPath ? kindAt(elPath) : 'unknown';
            const el = elKind === 'string' || elKind === 'bytes' ? add(1, byFactor(size({ cost: 0, path: elPath, kind: elKind }).max, STRING_FACTOR)) : 1;
            return plus(mul(size(target).max, el), fn === 'isSorted' ? 'bool' : fn === 'indexOf' || fn === 'lastIndexOf' ? 'int' : elKind);
          }
          return plus(byFactor(size(target).max, STRING_FACTOR), 'int');
        }
        break;
      // A URL or a quantity is one opaque value: comparing two costs 1, as for scalars (an
      // assumption: 1.28 has no quantity library to compare against).
      case 'url':
        if (args.length === 1) return plus(byFactor(size(args[0]).max, STRING_FACTOR), 'object', { min: 1, max: 1 });
        break;
      case 'quantity': return plus(1, 'object', { min: 1, max: 1 });
      case 'duration': return plus(1, 'duration');
      case 'timestamp': return plus(1, 'timestamp');
      case 'int': return plus(1, 'int');
      case 'double': return plus(1, 'double');
      case 'uint': return plus(1, 'uint');
      case 'bool': case '!_': case '@not_strictly_false': return plus(1, 'bool');
      case 'string':
        if (args.length === 1 && args[0].kind === 'bytes') { const sz = size(args[0]); return plus(byFactor(sz.max, STRING_FACTOR), 'string', { min: Math.floor(sz.min / 4), max: sz.max }); }
        return plus(1, 'string');
      case 'bytes':
        if (args.length === 1 && args[0].kind === 'string') { const sz = size(args[0]); return plus(byFactor(sz.max, STRING_FACTOR), 'bytes', { min: sz.min, max: mul(sz.max, 4) }); }
        return plus(1, 'bytes');
      default: break;
    }
    // O(1) functions.
    return plus(1, fn === '-_' ? args[0]?.kind ?? 'unknown' : 'unknown');
  };
  return visit(root).cost;
}

// ---------------------------------------------------------------- messages

/** The reference's "exceeds budget" wording (getCostErrorMessage). */
export function costMessage(what: string, cost: number, limit: number): string {
  const f = cost / limit;
  const factor = f > 100 ? 'more than 100x' : f < 1.5 ? `${f.toFixed(6)}x` : `${f.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
