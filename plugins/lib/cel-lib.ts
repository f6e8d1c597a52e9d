// @bufbuild/cel, loaded when a rule is first compiled: most servers serve no custom resource with
// x-kubernetes-validations, and the library with its Protobuf runtime held 4 MiB of heap from
// start-up (measured). The compilation is synchronous (validation runs in the write path), so the
// package's CommonJS build is required; nothing else in the server loads it.
import { createRequire } from 'node:module';
import path from 'node:path';

export type Cel = typeof import('@bufbuild/cel');
type CelExt = typeof import('@bufbuild/cel/ext');

const require = createRequire(import.meta.url);
let lib: Cel | undefined;

export const cel = (): Cel => (lib ??= withVariableReads(require('@bufbuild/cel') as Cel));

/** Called for every variable a running expression reads (a loop's variables, its accumulator, `self`). */
let onVariableRead: (() => void) | undefined;

/**
 * The reference's CEL charges 1 for every identifier it evaluates, loop variables included, so a
 * nested `all` over 725 items runs out of its 1,000,000 budget. This library has no cost hook: its
 * variable scopes (VarActivation) are counted here, once per lookup however deep the scope chain.
 * Should a future version move the class, nothing is counted and the runtime cost test says so.
 */
function withVariableReads(lib: Cel): Cel {
  try {
    const file = path.join(path.dirname(require.resolve('@bufbuild/cel')), 'activation.js');
    const proto = (require(file) as { VarActivation?: { prototype: { resolve(name: string): unknown } } }).VarActivation?.prototype;
    if (proto && typeof proto.resolve === 'function') {
      const resolve = proto.resolve;
      let depth = 0;
      proto.resolve = function (this: unknown, name: string) {
        if (depth++ === 0) onVariableRead?.();
        try { return resolve.call(this, name); } finally { depth--; }
      };
    }
  } catch { /* no counting: see above */ }
  return lib;
}

/** Runs `evaluate` with every variable read it makes counted by `tick` (which may throw to stop it). */
export function countingVariableReads<T>(tick: () => void, evaluate: () => T): T {
  const outer = onVariableRead;
  onVariableRead = tick;
  try { return evaluate(); } finally { onVariableRead = outer; }
}
/** The strings extension (charAt, indexOf, lowerAscii, ...). */
export const celStrings = (): CelExt['strings'] => (require('@bufbuild/cel/ext') as CelExt).strings;

/**
 * A parse failure worded as the reference's CEL (cel-go) words it: `<input>:L:C: Syntax error: ...`
 * and the source line with a caret under the column. Tools and tests look for "Syntax error"; the
 * parser's own wording of what it expected follows it.
 */
export function celSyntaxError(text: string, e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  const m = /^<input>:(\d+):(\d+):\s*(.*)$/s.exec(msg);
  if (!m) return `<input>:1:1: Syntax error: ${msg}`;
  const [line, col] = [Number(m[1]), Number(m[2])];
  const src = text.split('\n')[line - 1] ?? '';
  return `<input>:${line}:${col}: Syntax error: ${m[3]}\n | ${src}\n | ${'.'.repeat(Math.max(0, col - 1))}^`;
}
