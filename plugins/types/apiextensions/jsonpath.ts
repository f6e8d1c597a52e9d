// The small JSONPath subset printer columns and selectable fields use (the reference's client-go
// jsonpath): `.a.b`, `.a[0]`, `.a[-1]`, `.a[*].b`, `.a['x.y']`, `.a[?(@.type=="Ready")].status`.
// Compiled once per column; evaluation returns every match, in document order.

import { isObj } from '../../lib/json.js';

type Step = { key: string } | { index: number } | { all: true } | { filter: string[]; op: '==' | '!='; value: unknown };

/** Parses a path; throws with the reason when it is outside the subset. */
export function compilePath(path: string): (obj: unknown) => unknown[] {
  const steps: Step[] = [];
  let i = 0;
  const s = path.trim().replace(/^\{(.*)\}$/, '$1');
  // A field name runs to the next '.', '[' or blank; a backslash takes the next character as it is
  // (`.metadata.annotations.example\.com/x`), as client-go's parser reads it.
  const ident = () => {
    let out = '';
    while (i < s.length && !'.[] '.includes(s[i])) {
      if (s[i] === '\\' && i + 1 < s.length) i++;
      out += s[i++];
    }
    if (!out) throw new Error(`unexpected path string near ${JSON.stringify(s.slice(i))}`);
    return out;
  };
  while (i < s.length) {
    if (s[i] === '.') {
      i++;
      if (s[i] === '[' || i >= s.length) continue;
      if (s[i] === '*') { i++; steps.push({ all: true }); continue; }
      steps.push({ key: ident() });
    } else if (s[i] === '[') {
      const end = s.indexOf(']', i);
      if (end < 0) throw new Error('unterminated [');
      const inner = s.slice(i + 1, end).trim();
      i = end + 1;
      let m;
      if (inner === '*') steps.push({ all: true });
      else if (/^-?\d+$/.test(inner)) steps.push({ index: Number(inner) });
      else if ((m = /^'([^']*)'$/.exec(inner) ?? /^"([^"]*)"$/.exec(inner))) steps.push({ key: m[1] });
      else if ((m = /^\?\(@((?:\.[A-Za-z0-9_-]+)+)\s*(==|!=)\s*(.+)\)$/.exec(inner))) {
        const raw = m[3].trim();
        const value = /^'.*'$/.test(raw) ? raw.slice(1, -1) : JSON.parse(raw);
        steps.push({ filter: m[1].split('.').filter(Boolean), op: m[2] as '==' | '!=', value });
      } else throw new Error(`unsupported expression [${inner}]`);
    } else if (i === 0) {
      steps.push({ key: ident() });
    } else throw new Error(`unexpected ${JSON.stringify(s[i])}`);
  }
  return (obj) => {
    let cur: unknown[] = [obj];
    for (const st of steps) {
      const next: unknown[] = [];
      for (const v of cur) {
        if ('key' in st) { if (isObj(v) && v[st.key] !== undefined) next.push(v[st.key]); }
        else if ('index' in st) { if (Array.isArray(v)) { const x = v[st.index < 0 ? v.length + st.index : st.index]; if (x !== undefined) next.push(x); } }
        else if ('all' in st) { if (Array.isArray(v)) next.push(...v); else if (isObj(v)) next.push(...Object.values(v)); }
        else if (Array.isArray(v)) {
          for (const item of v) {
            let x: unknown = item;
            for (const k of st.filter) x = isObj(x) ? x[k] : undefined;
            if ((x === st.value) === (st.op === '==')) next.push(item);
          }
        }
      }
      cur = next;
    }
    return cur;
  };
}
