// Label and field selectors: the reference's grammars, error wording and matching rules.
// Both parsers are single left-to-right passes over input capped at MAX_SELECTOR_BYTES and
// throw only plain Errors, whose messages the list/watch handlers return as 400 BadRequest.
import { Buffer } from 'node:buffer';
import { goQuote, formatValue, isQualifiedName, isValidLabelValue } from './validation.js';

export const MAX_SELECTOR_BYTES = 10 * 1024;

function checkInput(s: unknown, what: 'label' | 'field'): string {
  if (typeof s !== 'string') throw new Error(`${what} selector must be a string`);
  if (s.length > MAX_SELECTOR_BYTES || Buffer.byteLength(s, 'utf8') > MAX_SELECTOR_BYTES) {
    throw new Error(`${what} selector is too long: must be no more than ${MAX_SELECTOR_BYTES} bytes`);
  }
  return s;
}

// ================================================================ label selectors

/** 'exists' is a bare key, '!' is `!key`; 'gt'/'lt' are the reference's `key>n` / `key<n`. */
export type LabelOperator = 'in' | 'notin' | 'exists' | '!' | '=' | '==' | '!=' | 'gt' | 'lt';

export interface Requirement {
  key: string;
  op: LabelOperator;
  /** Sorted and de-duplicated for in/notin; one value for =, ==, !=, gt, lt; empty for exists and '!'. */
  values: string[];
}

export interface LabelSelector {
  requirements: Requirement[];
  /** Matches nothing: what an absent structured selector means. */
  nothing?: boolean;
}

/** metav1.LabelSelector as found in object specs. */
export interface StructuredLabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

type Tok = 'eos' | 'id' | 'in' | 'notin' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<';
interface Item { tok: Tok; lit: string }

const SPECIAL = new Set(['=', '!', '(', ')', ',', '>', '<']);
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);

/** Tokenizes like the reference's lexer: '==' and '!=' are the only two-character symbols. */
function lex(s: string): Item[] {
  const items: Item[] = [];
  let i = 0;
  for (;;) {
    while (i < s.length && WHITESPACE.has(s[i])) i++;
    if (i >= s.length) {
      items.push({ tok: 'eos', lit: '' });
      return items;
    }
    if (SPECIAL.has(s[i])) {
      const two = s.slice(i, i + 2);
      const sym = two === '==' || two === '!=' ? two : s[i];
      items.push({ tok: sym as Tok, lit: sym });
      i += sym.length;
      continue;
    }
    const start = i;
    while (i < s.length && !SPECIAL.has(s[i]) && !WHITESPACE.has(s[i])) i++;
    const word = s.slice(start, i);
    items.push({ tok: word === 'in' || word === 'notin' ? word : 'id', lit: word });
  }
}

// The reference's list of binary operators, in its order, for "expected: ..." messages.
const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

/** One field error as the reference's Error() prints it: "<path>: Invalid value: <v>: <detail>". */
const invalidMsg = (path: string, value: string, detail: string) => `${path}: Invalid value: ${value}: ${detail}`;

/** The reference's aggregate error text: one message as is, several de-duplicated in brackets. */
function aggregate(msgs: string[]): string {
  const uniq = [...new Set(msgs)];
  return uniq.length === 1 ? uniq[0] : `[${uniq.join(', ')}]`;
}

const isInt64 = (v: string) => /^[+-]?\d+$/.test(v) && BigInt(v) >= -(2n ** 63n) && BigInt(v) < 2n ** 63n;

/**
 * Builds a requirement, checking it as the reference's NewRequirement does; `rawValues` keeps
 * nil (undefined) apart from an empty list because the reference prints them differently.
 */
function newRequirement(key: string, op: LabelOperator, rawValues: string[] | undefined): Requirement {
  const values = rawValues ?? [];
  const shown = rawValues ? formatValue(values) : '[]string(nil)';
  const errs: string[] = [];
  const keyErrs = isQualifiedName(key);
  if (keyErrs.length) errs.push(invalidMsg('key', goQuote(key), keyErrs.join('; ')));
  switch (op) {
    case 'in': case 'notin':
      if (!values.length) errs.push(invalidMsg('values', shown, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=': case '==': case '!=':
      if (values.length !== 1) errs.push(invalidMsg('values', shown, 'exact-match compatibility requires one single value'));
      break;
    case 'exists': case '!':
      if (values.length) errs.push(invalidMsg('values', shown, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt': case 'lt':
      if (values.length !== 1) errs.push(invalidMsg('values', shown, "for 'Gt', 'Lt' operators, exactly one value is required"));
      values.forEach((v, i) => {
        if (!isInt64(v)) errs.push(invalidMsg(`values[${i}]`, goQuote(v), "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
      break;
  }
  values.forEach((v, i) => {
    const vErrs = isValidLabelValue(v);
    if (vErrs.length) errs.push(invalidMsg(`values[${i}][${key}]`, goQuote(v), vErrs.join('; ')));
  });
  if (errs.length) throw new Error(aggregate(errs));
  return { key, op, values };
}

const sortedSet = (vals: Iterable<string>) => [...new Set(vals)].sort();

/** The reference sorts requirements by key; a stable sort keeps same-key ones in input order. */
const byKey = (rs: Requirement[]) => rs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

/**
 * Parses a label selector string ("a=b,c in (x,y),!d"). Throws Error with the reference's
 * labels.Parse messages. The empty string selects everything.
 */
export function parseLabelSelector(input: string): LabelSelector {
  const items = lex(checkInput(input, 'label'));
  let pos = 0;
  // In a "values" position the keywords in/notin are plain identifiers (a key or value may be "in").
  const peek = (values = true): Item => {
    const it = items[pos];
    return values && (it.tok === 'in' || it.tok === 'notin') ? { tok: 'id', lit: it.lit } : it;
  };
  const next = (values = true): Item => {
    const it = peek(values);
    if (pos < items.length - 1) pos++;
    return it;
  };

  const parseKeyAndOperator = (): { key: string; op?: LabelOperator } => {
    let op: LabelOperator | undefined;
    let it = next();
    if (it.tok === '!') {
      op = '!';
      it = next();
    }
    if (it.tok !== 'id') throw new Error(`found '${it.lit}', expected: identifier`);
    const keyErrs = isQualifiedName(it.lit);
    if (keyErrs.length) throw new Error(invalidMsg('<nil>', goQuote(it.lit), keyErrs.join('; ')));
    const after = peek().tok;
    if (after === 'eos' || after === ',') return { key: it.lit, op: op ?? 'exists' };
    // The reference quotes the key here, not the unexpected token.
    if (op === '!') throw new Error(`found '${it.lit}', expected: ',' or 'end of string'`);
    return { key: it.lit };
  };

  const parseOperator = (): LabelOperator => {
    const it = next(false);
    switch (it.tok) {
      case 'in': case 'notin': case '=': case '==': case '!=': return it.tok;
      case '>': return 'gt';
      case '<': return 'lt';
      default: throw new Error(`found '${it.lit}', expected: ${BINARY_OPERATORS}`);
    }
  };

  // "(a,b)"; "()" and empty entries such as "(a,)" stand for the empty value, as in the reference.
  const parseValues = (): string[] => {
    let it = next();
    if (it.tok !== '(') throw new Error(`found '${it.lit}' expected: '('`);
    const first = peek();
    if (first.tok === ')') {
      next();
      return [''];
    }
    if (first.tok !== 'id' && first.tok !== ',') throw new Error(`found '${first.lit}', expected: ',', ')' or identifier`);
    const vals = new Set<string>();
    for (;;) {
      it = next();
      if (it.tok === 'id') {
        vals.add(it.lit);
        const after = peek();
        if (after.tok === ')') break;
        if (after.tok !== ',') throw new Error(`found '${after.lit}', expected: ',' or ')'`);
      } else if (it.tok === ',') {
        if (!vals.size) vals.add('');
        const after = peek().tok;
        if (after === ')') {
          vals.add('');
          break;
        }
        if (after === ',') {
          next();
          vals.add('');
        }
      } else {
        throw new Error(`found '${it.lit}', expected: ',', or identifier`);
      }
    }
    if (next().tok !== ')') throw new Error(`found '${first.lit}', expected: ')'`);
    return sortedSet(vals);
  };

  const parseExactValue = (): string[] => {
    const ahead = peek().tok;
    if (ahead === 'eos' || ahead === ',') return [''];
    const it = next();
    if (it.tok === 'id') return [it.lit];
    throw new Error(`found '${it.lit}', expected: identifier`);
  };

  const parseRequirement = (): Requirement => {
    const { key, op: unary } = parseKeyAndOperator();
    if (unary) return newRequirement(key, unary, []);
    const op = parseOperator();
    return newRequirement(key, op, op === 'in' || op === 'notin' ? parseValues() : parseExactValue());
  };

  const reqs: Requirement[] = [];
  for (;;) {
    const ahead = peek();
    if (ahead.tok === 'eos') return { requirements: byKey(reqs) };
    if (ahead.tok !== 'id' && ahead.tok !== '!') throw new Error(`found '${ahead.lit}', expected: !, identifier, or 'end of string'`);
    try {
      reqs.push(parseRequirement());
    } catch (e) {
      throw new Error(`unable to parse requirement: ${(e as Error).message}`);
    }
    const sep = next();
    if (sep.tok === 'eos') return { requirements: byKey(reqs) };
    if (sep.tok !== ',') throw new Error(`found '${sep.lit}', expected: ',' or 'end of string'`);
    const after = peek();
    if (after.tok !== 'id' && after.tok !== '!') throw new Error(`found '${after.lit}', expected: identifier after ','`);
  }
}

/**
 * Converts a metav1.LabelSelector: undefined/null selects nothing, an empty one everything.
 * Throws Error with the reference's LabelSelectorAsSelector messages.
 */
export function labelSelectorFromStructured(sel: StructuredLabelSelector | null | undefined): LabelSelector {
  if (sel == null) return { requirements: [], nothing: true };
  const reqs: Requirement[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) reqs.push(newRequirement(k, '=', [v]));
  const ops: Record<string, LabelOperator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };
  for (const e of sel.matchExpressions ?? []) {
    const op = ops[e.operator];
    if (!op) throw new Error(`${goQuote(String(e.operator))} is not a valid label selector operator`);
    const r = newRequirement(e.key, op, e.values ? [...e.values] : undefined);
    reqs.push(op === 'in' || op === 'notin' ? { ...r, values: sortedSet(r.values) } : r);
  }
  return { requirements: byKey(reqs) };
}

const has = (labels: Record<string, string> | undefined, key: string): labels is Record<string, string> =>
  labels != null && Object.prototype.hasOwnProperty.call(labels, key);

function matchRequirement(r: Requirement, labels: Record<string, string> | undefined): boolean {
  switch (r.op) {
    case 'in': case '=': case '==':
      return has(labels, r.key) && r.values.includes(labels[r.key]);
    case 'notin': case '!=':
      return !has(labels, r.key) || !r.values.includes(labels[r.key]);
    case 'exists':
      return has(labels, r.key);
    case '!':
      return !has(labels, r.key);
    case 'gt': case 'lt': {
      // Both sides must be integers; anything else does not match.
      if (!has(labels, r.key) || r.values.length !== 1 || !isInt64(labels[r.key]) || !isInt64(r.values[0])) return false;
      const have = BigInt(labels[r.key]), want = BigInt(r.values[0]);
      return r.op === 'gt' ? have > want : have < want;
    }
  }
}

/** Whether an object's labels satisfy every requirement (an empty selector matches everything). */
export function matchLabels(sel: LabelSelector, labels?: Record<string, string>): boolean {
  if (sel.nothing) return false;
  return sel.requirements.every((r) => matchRequirement(r, labels));
}

/** True for a selector that selects everything (not for the "nothing" selector). */
export function selectorIsEmpty(sel: LabelSelector): boolean {
  return !sel.nothing && sel.requirements.length === 0;
}

/** The selector's canonical string, as the reference's Selector.String() prints it (e.g. for scale status.selector). */
export function labelSelectorString(sel: LabelSelector): string {
  return sel.requirements.map((r) => {
    switch (r.op) {
      case 'exists': return r.key;
      case '!': return `!${r.key}`;
      case 'in': case 'notin': return `${r.key} ${r.op} (${[...r.values].sort().join(',')})`;
      case 'gt': return `${r.key}>${r.values[0]}`;
      case 'lt': return `${r.key}<${r.values[0]}`;
      default: return `${r.key}${r.op}${r.values[0]}`;
    }
  }).join(',');
}

// ================================================================ field selectors

export interface FieldRequirement {
  field: string;
  op: '=' | '==' | '!=';
  /** Unescaped value. */
  value: string;
}

export interface FieldSelector {
  requirements: FieldRequirement[];
}

/** Supported by every type. */
export const ALWAYS_SUPPORTED_FIELDS: ReadonlySet<string> = new Set(['metadata.name', 'metadata.namespace']);

/** Splits on commas not escaped by a backslash; escapes stay in the terms. */
function splitTerms(s: string): string[] {
  if (!s) return [];
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < s.length; i++) {
    if (escaped) escaped = false;
    else if (s[i] === '\\') escaped = true;
    else if (s[i] === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

/** The first operator in the term splits it; the field name itself has no escaping. */
function splitTerm(term: string): { lhs: string; op: FieldRequirement['op']; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    if (term[i] === '!' && term[i + 1] === '=') return { lhs: term.slice(0, i), op: '!=', rhs: term.slice(i + 2) };
    if (term[i] === '=') {
      const op = term[i + 1] === '=' ? '==' : '=';
      return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

/** Undoes \\, \, and \= ; any other escape, a trailing backslash or a bare '=' or ',' is an error. */
export function unescapeFieldValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let escaped = false;
  for (const ch of s) {
    if (escaped) {
      if (ch !== '\\' && ch !== ',' && ch !== '=') throw new Error(`invalid field selector: invalid escape sequence: \\${ch}`);
      out += ch;
      escaped = false;
    } else if (ch === '\\') escaped = true;
    // The reference prints the rune with %v, i.e. as its number.
    else if (ch === ',' || ch === '=') throw new Error(`invalid field selector: unescaped character in value: ${ch.codePointAt(0)}`);
    else out += ch;
  }
  if (escaped) throw new Error('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** The inverse of unescapeFieldValue, for building selector strings. */
export function escapeFieldValue(s: string): string {
  return s.replace(/[\\,=]/g, (c) => '\\' + c);
}

/**
 * Parses a field selector ("metadata.name=x,status.phase!=Running"). Syntax is checked for all
 * terms before support, as in the reference; an unsupported field gives the built-in types'
 * "field label not supported: <field>".
 */
export function parseFieldSelector(input: string, supported: ReadonlySet<string> = new Set()): FieldSelector {
  const s = checkInput(input, 'field');
  // The reference sorts the raw terms, which fixes which error is reported first.
  const terms = splitTerms(s).sort();
  const reqs: FieldRequirement[] = [];
  for (const term of terms) {
    if (!term) continue;
    const t = splitTerm(term);
    if (!t) throw new Error(`invalid selector: '${s}'; can't understand '${term}'`);
    reqs.push({ field: t.lhs, op: t.op, value: unescapeFieldValue(t.rhs) });
  }
  for (const r of reqs) {
    if (!ALWAYS_SUPPORTED_FIELDS.has(r.field) && !supported.has(r.field)) throw new Error(`field label not supported: ${r.field}`);
  }
  return { requirements: reqs };
}

/** Whether an object satisfies every term; `get` returns a field's value ("" when absent). */
export function matchFields(sel: FieldSelector, get: (field: string) => string): boolean {
  return sel.requirements.every((r) => (get(r.field) === r.value) !== (r.op === '!='));
}

export function fieldSelectorIsEmpty(sel: FieldSelector): boolean {
  return sel.requirements.length === 0;
}

/** The value `field` is pinned to by an = or == term, so callers can use an index instead of a scan. */
export function exactFieldValue(sel: FieldSelector, field: string): string | undefined {
  return sel.requirements.find((r) => r.field === field && r.op !== '!=')?.value;
}
