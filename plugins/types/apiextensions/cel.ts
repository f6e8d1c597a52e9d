// x-kubernetes-validations: CEL rules of a custom resource version, compiled once per version with
// @bufbuild/cel (chosen by measurement, see docs/custom-resources.md), and evaluated on every write
// with the reference's limits so a hostile rule cannot stall the server:
//   - at definition time, a static cost estimate per rule (loops multiply by the schema's maxItems /
//     maxProperties, unbounded collections count as large as a request allows); over 10,000,000 the
//     definition is refused with the reference's message;
//   - at run time, every element a rule reads from a list or map and every loop variable it reads
//     costs 1 (a lower bound of the reference's count, which charges each identifier and call): one rule may spend 1,000,000
//     (the reference's per-call limit), all rules of one object 10,000,000 (its runtime budget).
// Transition rules (those naming oldSelf) run only on updates, against the correlated old value.
import type { CelEnv, CelValue } from '@bufbuild/cel';
import type { FieldCause } from '../../../kernel/contracts/index.js';
import { fieldError, goQuote } from '../../../kernel/api/validation.js';
import type { Props } from './schema.js';
import { urlAndQuantityLibraries } from './cel-k8s.js';
import { cel, celStrings, celSyntaxError, countingVariableReads, type Cel } from '../../lib/cel-lib.js';
import { celName } from './cel-names.js';
import { costMessage, estimateCost, maxCardinality } from './cel-cost.js';
import { isObj } from '../../lib/json.js';

const PER_CALL_LIMIT = 1_000_000;
const RUNTIME_BUDGET = 10_000_000;
const STATIC_RULE_LIMIT = 10_000_000;
const STATIC_CRD_LIMIT = 100_000_000;


// The Kubernetes CEL libraries this server adds to the standard ones and the strings extension:
// lists (isSorted, sum, min, max, indexOf, lastIndexOf) and regex (find, findAll); url and quantity
// are in cel-k8s.ts.
function kubernetesLibraries() {
  const { celMethod, CelScalar, listType } = cel();
  const LIST = listType(CelScalar.DYN);
  const order = (a: unknown, b: unknown) => ((a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0);
  const items = (l: Iterable<CelValue>) => [...l];
  const extreme = (name: string, sign: number) => celMethod(name, LIST, [], CelScalar.DYN, function (this: Iterable<CelValue>) {
    const xs = items(this);
    if (!xs.length) throw new Error(`${name}(list) requires a non-empty list`);
    return xs.reduce((m, x) => (order(x, m) * sign > 0 ? x : m)) as never;
  });
  return [
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
}

let env: CelEnv | undefined;
const celEnvironment = () => (env ??= cel().celEnv({ funcs: [...celStrings(), ...kubernetesLibraries(), ...urlAndQuantityLibraries()] }));

type Program = ReturnType<Cel['plan']>;
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

/** The schema of the property a rule selects by its CEL name. */
function propertyByCelName(p: Props, field: string): Props | undefined {
  const props = isObj(p.properties) ? p.properties : undefined;
  if (!props) return undefined;
  if (isObj(props[field]) && celName(field) === field) return props[field];
  for (const [k, v] of Object.entries(props)) if (isObj(v) && celName(k) === field) return v;
  return undefined;
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
    for (const [k, x] of Object.entries(v)) {
      // Declared properties go by their CEL names (`namespace` is `__namespace__`); map keys stay as they are.
      const name = props && isObj(props[k]) ? celName(k) : k;
      if (name !== undefined) Map.prototype.set.call(m, name, toCel(x, props?.[k] ?? add, meter));
    }
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
    return propertyByCelName(parent, k.value.field) ?? (isObj(parent.additionalProperties) ? parent.additionalProperties : undefined);
  }
  if (k.case === 'callExpr' && k.value.function === '_[_]') {
    const parent = schemaOf(k.value.args[0], scope);
    return isObj(parent?.items) ? parent!.items : isObj(parent?.additionalProperties) ? parent!.additionalProperties : undefined;
  }
  return undefined;
}

/** Fields a rule selects that its schema does not declare (cel-go's type check refuses them at definition time). */
function undefinedFields(e: Expr, scope: Map<string, Props | undefined>, out: string[]): void {
  const k = e.exprKind;
  if (!k?.case) return;
  if (k.case === 'selectExpr') {
    const parent = schemaOf(k.value.operand, scope);
    const closed = parent && parent.type === 'object' && isObj(parent.properties) && parent.additionalProperties === undefined && parent['x-kubernetes-preserve-unknown-fields'] !== true;
    if (closed && !propertyByCelName(parent, k.value.field) && !['apiVersion', 'kind', 'metadata'].includes(k.value.field)) out.push(k.value.field);
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

// ---------------------------------------------------------------- undeclared references

/** Operators and macros the parser produces, besides the environment's functions. */
const BUILTINS = new Set(['_[_]', '_?_:_', '_&&_', '_||_', '@not_strictly_false', 'has', '@in']);
const TYPE_IDENTS = new Set(['int', 'uint', 'double', 'bool', 'bytes', 'string', 'list', 'map', 'null_type', 'type', 'timestamp', 'duration', 'dyn']);
let declared: Set<string> | undefined;
function isDeclared(fn: string): boolean {
  if (!declared) {
    const groups = (celEnvironment() as unknown as { _funcs?: { _groups?: Map<string, unknown> } })._funcs?._groups;
    declared = new Set(groups ? [...groups.keys()] : []);
  }
  // Without the environment's table nothing is reported (the check is only as good as that table).
  return !declared.size || declared.has(fn) || BUILTINS.has(fn);
}

/**
 * Functions and identifiers no library of this server declares, as cel-go's checker reports them
 * ("ERROR: <input>:1:5: undeclared reference to 'cidr' (in container '')" with the source line and a
 * caret; a call is placed at its parenthesis). Undefined when there are none.
 */
function undeclaredReferences(c: Compiled, self: Props): string | undefined {
  const found: Array<{ at: number; text: string }> = [];
  const at = (e: Expr) => c.positions[String((e as unknown as { id: bigint }).id)] ?? 0;
  // The parser places an operator at the blank before it; cel-go at the operator itself.
  const operatorAt = (pos: number) => { while (/\s/.test(c.text[pos] ?? '')) pos++; return pos; };
  // Types as far as the follow-on errors need them: cel-go gives an undeclared global call or
  // identifier the error type (it matches anything), an undeclared member call no type at all
  // ('<nil>', which matches nothing but itself), so an operator applied to it finds no overload.
  type T = 'error' | 'nil' | 'unknown' | 'int' | 'uint' | 'double' | 'string' | 'bytes' | 'bool' | 'null';
  const typeOfSchema = (p: Props | undefined): T => {
    if (!p || p['x-kubernetes-int-or-string']) return 'unknown';
    return p.type === 'integer' ? 'int' : p.type === 'number' ? 'double' : p.type === 'boolean' ? 'bool' : p.type === 'string' && !p.format ? 'string' : 'unknown';
  };
  const CONCRETE = new Set(['!_', '-_', '_&&_', '_||_', '_<_', '_<=_', '_>_', '_>=_', '_+_', '_-_', '_*_', '_/_', '_%_', 'size']);
  const PARAMETRIC = new Set(['_==_', '_!=_']);
  const walk = (e: Expr, vars: Set<string>, scope: Map<string, Props | undefined>): T => {
    const k = e.exprKind;
    if (k.case === 'constExpr') {
      const m: Record<string, T> = { int64Value: 'int', uint64Value: 'uint', doubleValue: 'double', stringValue: 'string', bytesValue: 'bytes', boolValue: 'bool', nullValue: 'null' };
      return m[k.value.constantKind.case] ?? 'unknown';
    }
    if (k.case === 'identExpr') {
      const n = k.value.name;
      if (vars.has(n) || TYPE_IDENTS.has(n)) return 'unknown';
      found.push({ at: at(e), text: `undeclared reference to '${n}' (in container '')` });
      return 'error';
    }
    if (k.case === 'selectExpr') {
      const t = walk(k.value.operand, vars, scope);
      if (k.value.testOnly) return 'bool';
      return t === 'error' || t === 'nil' ? t : typeOfSchema(schemaOf(e, scope));
    }
    if (k.case === 'callExpr') {
      const fn = k.value.function as string;
      const args = [...(k.value.target ? [k.value.target] : []), ...(k.value.args ?? [])].map((x: Expr) => walk(x, vars, scope));
      if (!isDeclared(fn)) {
        const paren = c.text.indexOf('(', at(e));
        found.push({ at: paren >= 0 ? paren : at(e), text: `undeclared reference to '${fn}' (in container '')` });
        return k.value.target ? 'nil' : 'error';
      }
      if (args.includes('nil')) {
        const fails = CONCRETE.has(fn) || (PARAMETRIC.has(fn) && !args.includes('error') && args.some((t) => t !== 'nil'));
        if (!fails) return fn.startsWith('_') && fn !== '_+_' ? 'bool' : 'unknown';
        // An operand whose type this check does not know is not named: no message rather than a wrong one.
        if (!args.includes('unknown')) found.push({ at: operatorAt(at(e)), text: `found no matching overload for '${fn}' applied to '(${args.map((t) => (t === 'nil' ? '<nil>' : t)).join(', ')})'` });
        return 'error';
      }
      if (fn === '_?_:_') return args.slice(1).find((t) => t !== 'unknown' && t !== 'error') ?? 'unknown';
      if (['!_', '_&&_', '_||_', '_==_', '_!=_', '_<_', '_<=_', '_>_', '_>=_', '@in', '@not_strictly_false'].includes(fn)) return 'bool';
      if (fn === 'size') return 'int';
      return 'unknown';
    }
    if (k.case === 'listExpr') { for (const x of k.value.elements ?? []) walk(x, vars, scope); return 'unknown'; }
    if (k.case === 'structExpr') { for (const x of k.value.entries ?? []) { if (x.mapKey) walk(x.mapKey, vars, scope); walk(x.value, vars, scope); } return 'unknown'; }
    if (k.case === 'comprehensionExpr') {
      const v = k.value;
      const range = schemaOf(v.iterRange, scope);
      walk(v.iterRange, vars, scope);
      walk(v.accuInit, vars, scope);
      const inner = new Set([...vars, v.iterVar, v.accuVar]);
      const innerScope = new Map(scope);
      innerScope.set(v.iterVar, isObj(range?.items) ? range!.items : isObj(range?.additionalProperties) ? range!.additionalProperties : undefined);
      innerScope.set(v.accuVar, undefined);
      for (const x of [v.loopCondition, v.loopStep]) walk(x, inner, innerScope);
      return walk(v.result, inner, innerScope);
    }
    return 'unknown';
  };
  walk(c.expr, new Set(['self', 'oldSelf']), new Map([['self', self], ['oldSelf', self]]));
  if (!found.some((f) => f.text.startsWith('undeclared'))) return undefined;
  found.sort((a, b) => a.at - b.at);
  const lines = c.text.split('\n');
  return found.map(({ at: pos, text }) => {
    let line = 0;
    let start = 0;
    while (line < lines.length - 1 && pos > start + lines[line].length) { start += lines[line].length + 1; line++; }
    const col = pos - start;
    return `ERROR: <input>:${line + 1}:${col + 1}: ${text}\n | ${lines[line]}\n | ${'.'.repeat(col)}^`;
  }).join('\n');
}

/** A rule as the reference prints it in "Invalid value: …" (Go's %#v of its ValidationRule). */
export function goValidationRule(src: Props): string {
  const q = (v: unknown) => goQuote(typeof v === 'string' ? v : '');
  // The reference prints the reason's pointer; its address means nothing, so a fixed one stands in.
  const reason = typeof src.reason === 'string' ? '(*apiextensions.FieldValueErrorReason)(0xc000000000)' : '(*apiextensions.FieldValueErrorReason)(nil)';
  return `apiextensions.ValidationRule{Rule:${q(src.rule)}, Message:${q(src.message)}, MessageExpression:${q(src.messageExpression)}, Reason:${reason}, FieldPath:${q(src.fieldPath)}}`;
}

const ruleInvalid = (field: string, src: Props, detail: string): FieldCause => ({ reason: 'FieldValueInvalid', field, message: `Invalid value: ${goValidationRule(src)}: ${detail}` });

const usesOldSelf = (e: Expr): boolean => JSON.stringify(e, (_k, v) => (typeof v === 'bigint' ? 0 : v)).includes('"name":"oldSelf"');

// ---------------------------------------------------------------- compiling a schema's rules

interface Compiled { expr: Expr; program: Program; usesOld: boolean; positions: Record<string, number>; text: string }
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
      let parsed: ReturnType<Cel['parse']>;
      try { parsed = cel().parse(text); } catch (e) { throw new Error(celSyntaxError(text, e)); }
      const expr = parsed.expr as unknown as Expr;
      c = { expr, program: cel().plan(celEnvironment(), parsed), usesOld: usesOldSelf(expr), positions: (parsed.sourceInfo?.positions ?? {}) as Record<string, number>, text };
    } catch (e) { c = e as Error; }
    if (programs.size >= MAX_PROGRAMS) programs.clear();
    programs.set(text, c);
  }
  if (c instanceof Error) throw c;
  return c;
}

/** Compiles every rule of a schema; `errors` gets the definition-time causes (compile errors, cost). */
export function compileRules(root: Props, at: string, errors: FieldCause[] = []): Node | undefined {
  // The total over the schema, and the costliest rules (the reference names up to four of them).
  let total = 0;
  const costliest: Array<{ path: string; cost: number }> = [];
  const observe = (path: string, cost: number) => {
    total += cost;
    if (cost < STATIC_CRD_LIMIT / 100) return;
    costliest.push({ path, cost });
    costliest.sort((x, y) => y.cost - x.cost); // stable: equal costs keep the order seen
    if (costliest.length > 4) costliest.length = 4;
  };
  /** How many values a node's children can have, from the node (undefined: unbounded). */
  const times = (p: Props, card: number | undefined): number | undefined => {
    if (card === undefined) return undefined;
    const each = p.type === 'object' ? (p.additionalProperties !== undefined ? p.maxProperties : 1) : p.type === 'array' ? p.maxItems : 1;
    return typeof each === 'number' ? card * Math.max(0, each) : undefined;
  };
  // Children before the node's own rules: the reference reports in that order.
  const walk = (p: Props, path: string, card: number | undefined): Node | undefined => {
    const node: Node = { rules: [], props: p };
    let any = false;
    const inner = times(p, card);
    if (isObj(p.additionalProperties)) { const c = walk(p.additionalProperties, `${path}.additionalProperties`, inner); if (c) { node.additional = c; any = true; } }
    if (isObj(p.properties)) {
      for (const [k, v] of Object.entries(p.properties)) {
        if (!isObj(v)) continue;
        const child = walk(v, `${path}.properties[${k}]`, inner);
        if (child) { (node.properties ??= {})[k] = child; any = true; }
      }
    }
    if (isObj(p.items)) { const c = walk(p.items, `${path}.items`, inner); if (c) { node.items = c; any = true; } }
    const list = Array.isArray(p['x-kubernetes-validations']) ? p['x-kubernetes-validations'] : [];
    list.forEach((src: Props, i: number) => {
      const where = `${path}.x-kubernetes-validations[${i}]`;
      if (!isObj(src) || typeof src.rule !== 'string' || !src.rule.trim()) { errors.push(fieldError.required(`${where}.rule`, 'rule is not specified')); return; }
      let compiled: Compiled;
      try { compiled = compileText(src.rule); } catch (e) { errors.push(ruleInvalid(`${where}.rule`, src, `compilation failed: ERROR: ${(e as Error).message}`)); return; }
      const unknown = undeclaredReferences(compiled, p);
      if (unknown) { errors.push(ruleInvalid(`${where}.rule`, src, `compilation failed: ${unknown}`)); return; }
      const scope = new Map<string, Props | undefined>([['self', p], ['oldSelf', p]]);
      const undef: string[] = [];
      undefinedFields(compiled.expr, scope, undef);
      if (undef.length) { errors.push(ruleInvalid(`${where}.rule`, src, `compilation failed: ERROR: <input>: undefined field '${undef[0]}'`)); return; }
      // The rule's worst case (a rule that does not compile has none), times how often it can run.
      const cost = estimateCost(compiled.expr, p);
      const ruleCost = cost === 0 ? 0 : Math.min(2 ** 64, cost * (card ?? maxCardinality(p)));
      if (ruleCost > STATIC_RULE_LIMIT) errors.push(fieldError.forbidden(`${where}.rule`, costMessage('estimated rule cost', ruleCost, STATIC_RULE_LIMIT)));
      observe(`${where}.rule`, ruleCost);
      let message: Program | undefined;
      if (typeof src.messageExpression === 'string' && src.messageExpression) {
        try {
          const m = compileText(src.messageExpression);
          message = m.program;
          const mc = estimateCost(m.expr, p);
          if (mc > STATIC_RULE_LIMIT) errors.push(fieldError.forbidden(`${where}.messageExpression`, costMessage('estimated messageExpression cost', mc, STATIC_RULE_LIMIT)));
          observe(`${where}.messageExpression`, mc);
        } catch (e) { errors.push(ruleInvalid(`${where}.messageExpression`, src, `messageExpression compilation failed: ERROR: ${(e as Error).message}`)); }
      }
      if (src.reason !== undefined && !['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate'].includes(src.reason)) {
        errors.push(fieldError.notSupported(`${where}.reason`, src.reason, ['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate']));
      }
      node.rules.push({ src, rule: src.rule, program: compiled.program, message, usesOld: compiled.usesOld, fieldPath: typeof src.fieldPath === 'string' ? src.fieldPath.replace(/^\./, '') : '' });
      any = true;
    });
    return any ? node : undefined;
  };
  const node = walk(root, at, 1);
  if (total > STATIC_CRD_LIMIT) {
    for (const c of costliest) errors.push(fieldError.forbidden(c.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    errors.push(fieldError.forbidden(at, costMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', total, STATIC_CRD_LIMIT)));
  }
  return node;
}

const join = (path: string, k: string) => (path ? `${path}.${k}` : k);
const trimmed = (s: unknown) => (typeof s === 'string' ? s.trim() : '');

/** The value a list-type=map item had before, found by its keys. */
function oldItem(item: unknown, old: unknown, keys: string[] | undefined): unknown {
  if (!keys?.length || !Array.isArray(old) || !isObj(item)) return undefined;
  return old.find((o) => isObj(o) && keys.every((k) => o[k] === item[k]));
}

/** Whether an evaluation went past its meter's limit (thrown, or returned as a CEL error value). */
const overLimit = (meter: Meter, result: unknown) =>
  meter.used > meter.limit || result instanceof CostExceeded || (cel().isCelError(result) && /actual cost limit exceeded/.test(String(result.message)));

const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';
const MAX_MESSAGE_BYTES = 5 * 1024;

/**
 * Evaluates the compiled rules against an object (and the old object on update), as the reference
 * does: a rule or message expression past the per-call limit, or past what is left of the object's
 * budget, ends all validation with one cause (the budget's message when the cost overran what was
 * left, the per-call one otherwise); causes found before it stay.
 */
export function evaluateRules(root: Node, obj: unknown, old: unknown): FieldCause[] {
  const errs: FieldCause[] = [];
  let budget = RUNTIME_BUDGET;
  let stop = false;
  const visit = (n: Node, v: unknown, o: unknown, path: string) => {
    if (stop || v === undefined || v === null) return;
    const type = typeof n.props.type === 'string' ? n.props.type : isObj(v) ? 'object' : Array.isArray(v) ? 'array' : typeof v === 'number' ? 'number' : 'string';
    // The reference checks the budget before a node's rules, so a budget spent exactly stops here.
    if (n.rules.length && budget <= 0) { errs.push(fieldError.invalid(path, type, OUT_OF_BUDGET)); stop = true; return; }
    // The reference moves a node's error path to a failed rule's fieldPath and keeps it there for
    // the node's later causes (theirs too, cost ones included); fieldPaths of later failures add on.
    let at = path;
    for (const r of n.rules) {
      if (r.usesOld && o === undefined) continue;
      const meter = new Meter(Math.min(PER_CALL_LIMIT, budget));
      let result: unknown;
      try {
        result = countingVariableReads(() => meter.tick(), () => r.program({ self: toCel(v, n.props, meter), ...(r.usesOld ? { oldSelf: toCel(o, n.props, meter) } : {}) } as never));
      } catch (e) { result = e; }
      if (overLimit(meter, result)) {
        errs.push(fieldError.invalid(at, type, meter.used > budget ? OUT_OF_BUDGET
          : `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${trimmed(r.src.message) || trimmed(r.rule)}`));
        stop = true;
        return;
      }
      budget -= meter.used;
      if (result === true) continue;
      if (result !== false) {
        // A missing key of an object is the reference's (cel-go's map) "no such key".
        const msg = cel().isCelError(result) ? String(result.message).replace(/^field not found: /, 'no such key: ') : result instanceof Error ? result.message : `rule returned ${String(result)}, not a bool`;
        errs.push(fieldError.invalid(at, type, `${msg} evaluating rule: ${trimmed(r.src.message) || trimmed(r.rule)}`));
        continue;
      }
      if (r.fieldPath) at = join(at, r.fieldPath);
      let detail = trimmed(r.src.message) ? trimmed(r.src.message) : `failed rule: ${trimmed(r.rule)}`;
      if (r.message) {
        const m = new Meter(Math.min(PER_CALL_LIMIT, budget));
        let out: unknown;
        try {
          out = countingVariableReads(() => m.tick(), () => r.message!({ self: toCel(v, n.props, m), ...(r.usesOld ? { oldSelf: toCel(o, n.props, m) } : {}) } as never));
        } catch (e) { out = e; }
        // Over its limit, the message expression's cause replaces the rule's and ends validation.
        if (overLimit(m, out)) {
          errs.push(fieldError.invalid(at, type, m.used > budget
            ? 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run'
            : `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${goQuote(String(r.src.messageExpression))}`));
          stop = true;
          return;
        }
        budget -= m.used;
        // Otherwise a message that is not a usable string leaves the static one.
        const text = typeof out === 'string' ? out.trim() : '';
        if (text && !text.includes('\n') && Buffer.byteLength(text) <= MAX_MESSAGE_BYTES) detail = text;
      }
      switch (r.src.reason) {
        case 'FieldValueForbidden': errs.push(fieldError.forbidden(at, detail)); break;
        case 'FieldValueRequired': errs.push(fieldError.required(at, detail)); break;
        case 'FieldValueDuplicate': errs.push({ reason: 'FieldValueDuplicate', field: at, message: `Duplicate value: ${JSON.stringify(type)}` }); break;
        default: errs.push(fieldError.invalid(at, type, detail));
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
