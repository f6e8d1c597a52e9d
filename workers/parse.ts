// JSON.parse in time slices, for text a worker wrote with JSON.stringify and the event loop must turn
// back into objects (a large body checked on a worker, a large object's managed fields): parsing
// 1-2 MB of it held the event loop 35-60 ms in one go on the 2-core AMD hosts. The value built is the
// one JSON.parse builds (key order, "__proto__" as an own key, the last of duplicate keys, numbers).

import { timeSlices, type SliceClock } from './stringify.js';

/** Text from which parseText slices: below it, one JSON.parse is a short hold and faster. */
export const SLICED_PARSE_BYTES = 256 * 1024;

/** JSON.parse, or parseSliced for large text. */
export function parseText(text: string): unknown | Promise<unknown> {
  return text.length >= SLICED_PARSE_BYTES ? parseSliced(text) : JSON.parse(text);
}

/** Thrown where the text is not JSON: JSON.parse is then asked, for its own error. */
const MALFORMED = new Error('malformed');

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

type Frame = { c: unknown[] | Record<string, unknown>; arr: boolean; key: string };

/**
 * The value of a JSON text, built with a turn of the event loop whenever `slicer` says so. Iterative
 * (an explicit stack: any depth JSON.parse takes), strings sliced out whole when they hold no escape.
 * Malformed text gets JSON.parse's error (but for raw control characters inside strings, which are
 * not looked for: JSON.stringify never writes them).
 */
export async function parseSliced(text: string, slicer: SliceClock = timeSlices()): Promise<unknown> {
  try {
    return await parse(text, slicer);
  } catch (e) {
    if (e !== MALFORMED) throw e;
    return JSON.parse(text);
  }
}

async function parse(text: string, slicer: SliceClock): Promise<unknown> {
  const n = text.length;
  let i = 0;
  let escape = -1; // the next backslash at or after i (n: none)
  const ws = () => {
    for (let c = text.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++i));
  };
  const string = (): string => {
    // at the opening quote
    const close = text.indexOf('"', i + 1);
    if (close < 0) throw MALFORMED;
    if (escape < i) escape = (escape = text.indexOf('\\', i)) < 0 ? n : escape;
    if (escape > close) {
      const s = text.slice(i + 1, close);
      i = close + 1;
      return s;
    }
    // Escapes: find the unescaped closing quote, and let JSON.parse read the string.
    let j = i + 1;
    for (let c = text.charCodeAt(j); c !== 0x22; c = text.charCodeAt(j)) {
      if (Number.isNaN(c)) throw MALFORMED;
      j += c === 0x5c ? 2 : 1;
    }
    const s = JSON.parse(text.slice(i, j + 1)) as string;
    i = j + 1;
    return s;
  };
  const key = (f: Frame) => {
    ws();
    if (text.charCodeAt(i) !== 0x22) throw MALFORMED;
    f.key = string();
    ws();
    if (text.charCodeAt(i++) !== 0x3a) throw MALFORMED;
  };
  const stack: Frame[] = [];
  let values = 0;
  for (;;) {
    ws();
    let v: unknown;
    const c = text.charCodeAt(i);
    if (c === 0x7b) { // {
      i++;
      ws();
      if (text.charCodeAt(i) === 0x7d) { i++; v = {}; } else {
        const f: Frame = { c: {}, arr: false, key: '' };
        key(f);
        stack.push(f);
        continue;
      }
    } else if (c === 0x5b) { // [
      i++;
      ws();
      if (text.charCodeAt(i) === 0x5d) { i++; v = []; } else { stack.push({ c: [], arr: true, key: '' }); continue; }
    } else if (c === 0x22) {
      v = string();
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const start = i;
      for (let d = text.charCodeAt(++i); (d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d; d = text.charCodeAt(++i));
      const literal = text.slice(start, i);
      if (!NUMBER.test(literal)) throw MALFORMED;
      v = Number(literal);
    } else if (text.startsWith('true', i)) { v = true; i += 4; }
    else if (text.startsWith('false', i)) { v = false; i += 5; }
    else if (text.startsWith('null', i)) { v = null; i += 4; }
    else throw MALFORMED;
    // Attach the value; close every container it ends.
    for (;;) {
      const f = stack[stack.length - 1];
      if (!f) {
        ws();
        if (i !== n) throw MALFORMED;
        return v;
      }
      if (f.arr) (f.c as unknown[]).push(v);
      else if (f.key === '__proto__') Object.defineProperty(f.c, '__proto__', { value: v, writable: true, enumerable: true, configurable: true });
      else (f.c as Record<string, unknown>)[f.key] = v;
      ws();
      const sep = text.charCodeAt(i++);
      if (sep === 0x2c) { // ,
        if (!f.arr) key(f);
        break;
      }
      if (sep !== (f.arr ? 0x5d : 0x7d)) throw MALFORMED;
      stack.pop();
      v = f.c;
    }
    if (++values % 256 === 0 && slicer.due()) await slicer.pause();
  }
}
