// x-kubernetes-validations: CEL rules of a custom resource version, compiled once per version with
// @bufbuild/cel (chosen by measurement, see docs/custom-resources.md), and evaluated on every write
// with the reference's limits so a hostile rule cannot stall the server:
//   - at definition time, a static cost estimate per rule (loops multiply by the schema's maxItems /
//     maxProperties, unbounded collections count as large as a request allows); over 10,000,000 the
//     definition is refused with the reference's message;
//   - at run time, every element a rule reads from a list or map costs 1: one rule may spend 1,000,000
//     (the reference's per-call limit), all rules of one object 10,000,000 (its runtime budget).
// Transition rules (those naming oldSelf) run only on updates, against the correlated old value.
import { celEnv, celMethod, CelScalar, isCelError, listType, parse, plan, type CelEnv, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import type { FieldCause } from '../../../kernel/contracts.js';
import { fieldError } from '../../../kernel/validation.js';
import type { Props } from './schema.js';
import { URL_AND_QUANTITY_LIBRARIES } from './cel-k8s.js';

const PER_CALL_LIMIT = 1_000_000;
const RUNTIME_BUDGET = 10_000_000;
const STATIC_RULE_LIMIT = 10_000_000;
/** An unbounded list or map counts as many elements as the largest request (3 MiB) could hold. */
const UNBOUNDED = Math.floor((3 * 1024 * 1024) / 3); // the smallest element, `{}` or `""`, and its comma
const UNBOUNDED_STRING = 3 * 1024 * 1024;

const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

// The Kubernetes CEL libraries this server adds to the standard ones and the strings extension:
// lists (isSorted, sum, min, max, indexOf, lastIndexOf) and regex (find, findAll); url and quantity
// are in cel-k8s.ts.
const LIST = listType(CelScalar.DYN);
const order = (a: unknown, b: unknown) => ((a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0);
const items = (l: Iterable<CelValue>) => [...l];
const extreme = (name: string, sign: number) => celMethod(name, LIST, [], CelScalar.DYN, function (this: Iterable<CelValue>) {
  const xs = items(this);
  if (!xs.length) throw new Error(`${name}(list) requires a non-empty list`);
  return xs.reduce((m, x) => (order(x, m) * sign > 0 ? x : m)) as never;
});
const KUBERNETES_LIBRARIES = [
  celMethod('isSorted', LIST, [], CelScalar.BOOL, function (this: Iterable<CelValue>) { const xs = items(this); return xs.every((x, i) => i === 0 || order(xs[i - 1], x) <= 0); }),
  celMethod('sum', LIST, [], CelScalar.DYN, function (this: Iterable<CelValue>) {
    const xs = items(this);
    return (xs.length ? xs.reduce((a, x) => (a as number) + (x as number)) : 0n) as never;
  }),
  extreme('min', -1),
  extreme('max', 1),
  celMethod('indexOf', LIST, [CelScalar.DYN], CelScalar.INT, function (this: Iterable<CelValue>, v: CelValue) { return BigInt(items(this).findIndex((x) => x === v)); }),
  celMethod('lastIndexOf', LIST, [CelScalar.DYN], CelScalar.INT, function (this: Iterable<CelValue>, v: CelValue) { const xs = items(this); for (let i = xs.length - 1; i >= 0; i--) if (xs[i] === v) return BigInt(i); return -1n; }),
  celMethod('find', CelScalar.STRING, [CelScalar.STRING], CelScalar.STRING, function (this: string, re: string) { return new RegExp(re, 'u').exec(this)?.[0] ?? ''; }),
  celMethod('findAll', CelScalar.STRING, [CelScalar.STRING], listType(CelScalar.STRING), function (this: string, re: string) { return [...this.matchAll(new RegExp(re, 'gu'))].map((m) => m[0]); }),
];

let env: CelEnv | undefined;
const celEnvironment = () => (env ??= celEnv({ funcs: [...strings, ...KUBERNETES_LIBRARIES, ...URL_AND_QUANTITY_LIBRARIES] }));

type Program = ReturnType<typeof plan>;
interface Rule { src: Props; rule: string; program: Program; message?: Program; usesOld: boolean; fieldPath: string }
interface Node { rules: Rule[]; props: Props; properties?: Record<string, Node>; items?: Node; additional?: Node }

class CostExceeded extends Error {}

/** Counts every element read during one evaluation; throws past the limit. */
class Meter {
  used = 0;
  constructor(public limit: number) {}
  tick() { if (++this.used > this.limit) throw new CostExceeded('operation cancelled: actual cost limit exceeded'); }
}

class MeteredMap extends Map<string, unknown> {
  meter!: Meter;
  override get(k: string) { this.meter.tick(); return super.get(k); }
  override has(k: string) { this.meter.tick(); return super.has(k); }
  override *entries(): MapIterator<[string, unknown]> { for (const e of super.entries()) { this.meter.tick(); yield e; } }
  override *keys(): MapIterator<string> { for (const k of super.keys()) { this.meter.tick(); yield k; } }
  override *values(): MapIterator<unknown> { for (const v of super.values()) { this.meter.tick(); yield v; } }
  override [Symbol.iterator]() { return this.entries(); }
}

/** A JSON value as CEL sees it under its schema: integers as int, objects as maps; reads metered. */
function toCel(v: unknown, p: Props | undefined, meter: Meter): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') {
    const t = p?.type;
    if ((t === 'integer' || p?.['x-kubernetes-int-or-string'] || t === undefined) && Number.isInteger(v)) return BigInt(v);
    return v;
  }
  if (Array.isArray(v)) {
    const items = isObj(p?.items) ? p!.items : undefined;
    const arr = v.map((x) => toCel(x, items, meter));
    return new Proxy(arr, {
      get(t, k, r) {
        if (k === Symbol.iterator) return function* () { for (const x of t) { meter.tick(); yield x; } };
        if (typeof k === 'string' && k.length && k.charCodeAt(0) >= 48 && k.charCodeAt(0) <= 57) meter.tick();
        return Reflect.get(t, k, r);
      },
    });
  }
  if (isObj(v)) {
    const m = new MeteredMap();
    m.meter = meter;
    const props = isObj(p?.properties) ? p!.properties : undefined;
    const add = isObj(p?.additionalProperties) ? p!.additionalProperties : undefined;
    for (const [k, x] of Object.entries(v)) Map.prototype.set.call(m, k, toCel(x, props?.[k] ?? add, meter));
    return m;
  }
  return v;
}

// ---------------------------------------------------------------- static cost estimate

type Expr = { exprKind: { case?: string; value?: any } };

/** The schema a path expression reads, when it starts at self or a loop variable bound to a schema. */
function schemaOf(e: Expr, scope: Map<string, Props | undefined>): Props | undefined {
  const k = e.exprKind;
  if (k.case === 'identExpr') return scope.get(k.value.name);
  if (k.case === 'selectExpr') {
    const parent = schemaOf(k.value.operand, scope);
    if (!parent) return undefined;
    return isObj(parent.properties?.[k.value.field]) ? parent.properties[k.value.field] : isObj(parent.additionalProperties) ? parent.additionalProperties : undefined;
  }
  if (k.case === 'callExpr' && k.value.function === '_[_]') {
    const parent = schemaOf(k.value.args[0], scope);
    return isObj(parent?.items) ? parent!.items : isObj(parent?.additionalProperties) ? parent!.additionalProperties : undefined;
  }
  return undefined;
}

function cardinality(p: Props | undefined): number {
  if (!p) return UNBOUNDED;
  if (typeof p.maxItems === 'number') return p.maxItems;
  if (typeof p.maxProperties === 'number') return p.maxProperties;
  return UNBOUNDED;
}

const STRING_FUNCS = new Set(['matches', 'contains', 'startsWith', 'endsWith', 'split', 'replace', 'lowerAscii', 'upperAscii', 'indexOf', 'lastIndexOf', 'find', 'findAll', 'join', 'trim', 'substring']);

function estimate(e: Expr, scope: Map<string, Props | undefined>): number {
  const k = e.exprKind;
  switch (k.case) {
    case 'comprehensionExpr': {
      const c = k.value;
      const range = schemaOf(c.iterRange, scope);
      const inner = new Map(scope);
      inner.set(c.iterVar, isObj(range?.items) ? range!.items : isObj(range?.additionalProperties) ? range!.additionalProperties : undefined);
      inner.set(c.accuVar, undefined);
      // As cel-go counts it: the step per element (the macros' own loop condition is free).
      const per = 1 + estimate(c.loopStep, inner);
      return estimate(c.iterRange, scope) + estimate(c.accuInit, scope) + estimate(c.result, inner) + cardinality(range) * per;
    }
    case 'callExpr': {
      const c = k.value;
      let cost = 1 + (c.target ? estimate(c.target, scope) : 0);
      for (const a of c.args ?? []) cost += estimate(a, scope);
      if (STRING_FUNCS.has(c.function)) {
        const s = c.target ? schemaOf(c.target, scope) : c.args?.[0] ? schemaOf(c.args[0], scope) : undefined;
        cost += Math.ceil((typeof s?.maxLength === 'number' ? s.maxLength : s ? UNBOUNDED_STRING : 0) * 0.1);
      }
      return cost;
    }
    case 'selectExpr': return 1 + estimate(k.value.operand, scope);
    case 'listExpr': return 1 + (k.value.elements ?? []).reduce((n: number, x: Expr) => n + estimate(x, scope), 0);
    case 'structExpr': return 1 + (k.value.entries ?? []).reduce((n: number, x: any) => n + (x.mapKey ? estimate(x.mapKey, scope) : 0) + estimate(x.value, scope), 0);
    default: return 0; // identifiers and constants
  }
}

/** Fields a rule selects that its schema does not declare (cel-go's type check refuses them at definition time). */
function undefinedFields(e: Expr, scope: Map<string, Props | undefined>, out: string[]): void {
  const k = e.exprKind;
  if (!k?.case) return;
  if (k.case === 'selectExpr') {
    const parent = schemaOf(k.value.operand, scope);
    const closed = parent && parent.type === 'object' && isObj(parent.properties) && parent.additionalProperties === undefined && parent['x-kubernetes-preserve-unknown-fields'] !== true;
    if (closed && !(k.value.field in parent.properties) && !['apiVersion', 'kind', 'metadata'].includes(k.value.field)) out.push(k.value.field);
    undefinedFields(k.value.operand, scope, out);
    return;
  }
  if (k.case === 'comprehensionExpr') {
    const c = k.value;
    const range = schemaOf(c.iterRange, scope);
    const inner = new Map(scope);
    inner.set(c.iterVar, isObj(range?.items) ? range!.items : isObj(range?.additionalProperties) ? range!.additionalProperties : undefined);
    inner.set(c.accuVar, undefined);
    for (const x of [c.iterRange, c.accuInit]) undefinedFields(x, scope, out);
    for (const x of [c.loopCondition, c.loopStep, c.result]) undefinedFields(x, inner, out);
    return;
  }
  if (k.case === 'callExpr') {
    if (k.value.target) undefinedFields(k.value.target, scope, out);
    for (const a of k.value.args ?? []) undefinedFields(a, scope, out);
  } else if (k.case === 'listExpr') for (const x of k.value.elements ?? []) undefinedFields(x, scope, out);
  else if (k.case === 'structExpr') for (const x of k.value.entries ?? []) { if (x.mapKey) undefinedFields(x.mapKey, scope, out); undefinedFields(x.value, scope, out); }
}

function costMessage(cost: number, limit: number): string {
  const f = cost / limit;
  const factor = f > 100 ? 'more than 100x' : f < 1.5 ? `${f.toFixed(6)}x` : `${f.toFixed(1)}x`;
  return `estimated rule cost exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

const usesOldSelf = (e: Expr): boolean => JSON.stringify(e, (_k, v) => (typeof v === 'bigint' ? 0 : v)).includes('"name":"oldSelf"');

// ---------------------------------------------------------------- compiling a schema's rules

interface Compiled { expr: Expr; program: Program; usesOld: boolean }
/**
 * Parsed and planned programs by their text (generated definitions repeat the same rule at many
 * places, and a definition is compiled on every write and again when served). Bounded.
 */
const programs = new Map<string, Compiled | Error>();
const MAX_PROGRAMS = 20_000;

function compileText(text: string): Compiled {
  let c = programs.get(text);
  if (c === undefined) {
    try {
      const parsed = parse(text);
      const expr = parsed.expr as unknown as Expr;
      c = { expr, program: plan(celEnvironment(), parsed), usesOld: usesOldSelf(expr) };
    } catch (e) { c = e as Error; }
    if (programs.size >= MAX_PROGRAMS) programs.clear();
    programs.set(text, c);
  }
  if (c instanceof Error) throw c;
  return c;
}

/** Compiles every rule of a schema; `errors` gets the definition-time causes (compile errors, cost). */
export function compileRules(root: Props, at: string, errors: FieldCause[] = []): Node | undefined {
  const walk = (p: Props, path: string, self: Props): Node | undefined => {
    const node: Node = { rules: [], props: p };
    let any = false;
    const list = Array.isArray(p['x-kubernetes-validations']) ? p['x-kubernetes-validations'] : [];
    list.forEach((src: Props, i: number) => {
      const where = `${path}.x-kubernetes-validations[${i}]`;
      if (!isObj(src) || typeof src.rule !== 'string' || !src.rule.trim()) { errors.push(fieldError.required(`${where}.rule`, '')); return; }
      let compiled: Compiled;
      try { compiled = compileText(src.rule); } catch (e) { errors.push(fieldError.invalid(`${where}.rule`, src, `compilation failed: ERROR: ${(e as Error).message}`)); return; }
      const scope = new Map<string, Props | undefined>([['self', self], ['oldSelf', self]]);
      const undef: string[] = [];
      undefinedFields(compiled.expr, scope, undef);
      if (undef.length) { errors.push(fieldError.invalid(`${where}.rule`, src, `compilation failed: ERROR: <input>: undefined field '${undef[0]}'`)); return; }
      const cost = estimate(compiled.expr, scope);
      if (cost > STATIC_RULE_LIMIT) errors.push(fieldError.forbidden(`${where}.rule`, costMessage(cost, STATIC_RULE_LIMIT)));
      let message: Program | undefined;
      if (typeof src.messageExpression === 'string' && src.messageExpression) {
        try { message = compileText(src.messageExpression).program; } catch (e) { errors.push(fieldError.invalid(`${where}.messageExpression`, src, `messageExpression compilation failed: ERROR: ${(e as Error).message}`)); }
      }
      if (src.reason !== undefined && !['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate'].includes(src.reason)) {
        errors.push(fieldError.notSupported(`${where}.reason`, src.reason, ['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate']));
      }
      node.rules.push({ src, rule: src.rule, program: compiled.program, message, usesOld: compiled.usesOld, fieldPath: typeof src.fieldPath === 'string' ? src.fieldPath.replace(/^\./, '') : '' });
      any = true;
    });
    if (isObj(p.properties)) {
      for (const [k, v] of Object.entries(p.properties)) {
        if (!isObj(v)) continue;
        const child = walk(v, `${path}.properties[${k}]`, v);
        if (child) { (node.properties ??= {})[k] = child; any = true; }
      }
    }
    if (isObj(p.items)) { const c = walk(p.items, `${path}.items`, p.items); if (c) { node.items = c; any = true; } }
    if (isObj(p.additionalProperties)) { const c = walk(p.additionalProperties, `${path}.additionalProperties`, p.additionalProperties); if (c) { node.additional = c; any = true; } }
    return any ? node : undefined;
  };
  return walk(root, at, root);
}

const join = (path: string, k: string) => (path ? `${path}.${k}` : k);
const trimmed = (s: unknown) => (typeof s === 'string' ? s.trim() : '');

/** The value a list-type=map item had before, found by its keys. */
function oldItem(item: unknown, old: unknown, keys: string[] | undefined): unknown {
  if (!keys?.length || !Array.isArray(old) || !isObj(item)) return undefined;
  return old.find((o) => isObj(o) && keys.every((k) => o[k] === item[k]));
}

/** Evaluates the compiled rules against an object (and the old object on update). */
export function evaluateRules(root: Node, obj: unknown, old: unknown): FieldCause[] {
  const errs: FieldCause[] = [];
  let budget = RUNTIME_BUDGET;
  let stop = false;
  const visit = (n: Node, v: unknown, o: unknown, path: string) => {
    if (stop || v === undefined || v === null) return;
    const type = typeof n.props.type === 'string' ? n.props.type : isObj(v) ? 'object' : Array.isArray(v) ? 'array' : typeof v === 'number' ? 'number' : 'string';
    for (const r of n.rules) {
      if (r.usesOld && o === undefined) continue;
      const meter = new Meter(Math.min(PER_CALL_LIMIT, budget));
      const where = r.fieldPath ? join(path, r.fieldPath) : path;
      let result: unknown;
      try {
        result = r.program({ self: toCel(v, n.props, meter), ...(r.usesOld ? { oldSelf: toCel(o, n.props, meter) } : {}) } as never);
      } catch (e) { result = e; }
      budget -= meter.used;
      const costly = meter.used > meter.limit || result instanceof CostExceeded || (isCelError(result) && /actual cost limit exceeded/.test(String(result.message)));
      if (costly) {
        errs.push(fieldError.invalid(path, type, meter.limit < PER_CALL_LIMIT
          ? 'validation failed due to running out of cost budget, no further validation rules will be run'
          : `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${trimmed(r.src.message) || trimmed(r.rule)}`));
        stop = true;
        return;
      }
      if (result === true) continue;
      if (result !== false) {
        const msg = isCelError(result) ? String(result.message) : result instanceof Error ? result.message : `rule returned ${String(result)}, not a bool`;
        errs.push(fieldError.invalid(path, type, `${msg} evaluating rule: ${trimmed(r.src.message) || trimmed(r.rule)}`));
        continue;
      }
      let detail = trimmed(r.src.message) ? trimmed(r.src.message) : `failed rule: ${trimmed(r.rule)}`;
      if (r.message) {
        const m = new Meter(Math.min(PER_CALL_LIMIT, budget));
        try {
          const out = r.message({ self: toCel(v, n.props, m), ...(r.usesOld ? { oldSelf: toCel(o, n.props, m) } : {}) } as never);
          if (typeof out === 'string' && out.trim() && !out.includes('\n')) detail = out.trim();
        } catch { /* the static message stands */ }
        budget -= m.used;
      }
      switch (r.src.reason) {
        case 'FieldValueForbidden': errs.push(fieldError.forbidden(where, detail)); break;
        case 'FieldValueRequired': errs.push(fieldError.required(where, detail)); break;
        case 'FieldValueDuplicate': errs.push({ reason: 'FieldValueDuplicate', field: where, message: `Duplicate value: ${JSON.stringify(type)}` }); break;
        default: errs.push(fieldError.invalid(where, type, detail));
      }
    }
    if (isObj(v)) {
      const oo = isObj(o) ? o : undefined;
      for (const [k, c] of Object.entries(n.properties ?? {})) visit(c, v[k], oo?.[k], join(path, k));
      if (n.additional) for (const [k, x] of Object.entries(v)) if (!n.properties?.[k]) visit(n.additional, x, oo?.[k], join(path, k));
    } else if (Array.isArray(v) && n.items) {
      const keys = n.props['x-kubernetes-list-type'] === 'map' ? n.props['x-kubernetes-list-map-keys'] : undefined;
      v.forEach((x, i) => visit(n.items!, x, oldItem(x, o, keys), `${path}[${i}]`));
    }
  };
  visit(root, obj, old, '');
  return errs;
}
