// Two values Go's typed decoding reads with its own rules, and the reference's words when they fail:
// a []byte field is standard base64 ("illegal base64 data at input byte 3"), and a metav1.Time is an
// RFC 3339 time parsed by Go's time.Parse (`parsing time "x" as "2006-01-02T15:04:05Z07:00":
// cannot parse "x" as "2006"`).

const B64 = /^[A-Za-z0-9+/]$/;
const isNewline = (c: string | undefined) => c === '\n' || c === '\r';

/** Where Go's base64.StdEncoding gives up on `s` (its CorruptInputError offset); undefined when it decodes. */
export function base64ErrorOffset(s: string): number | undefined {
  let si = 0;
  while (si < s.length) {
    // one quantum of 4 characters; newlines are skipped
    for (let j = 0; j < 4; j++) {
      if (si === s.length) {
        if (j === 0) return undefined;
        return si - j;
      }
      const c = s[si++]!;
      if (B64.test(c)) continue;
      if (isNewline(c)) { j--; continue; }
      if (c !== '=') return si - 1;
      if (j < 2) return si - 1;
      if (j === 2) {
        while (si < s.length && isNewline(s[si])) si++;
        if (si === s.length) return s.length;
        if (s[si] !== '=') return si - 1;
        si++;
      }
      while (si < s.length && isNewline(s[si])) si++;
      return si < s.length ? si : undefined;
    }
  }
  return undefined;
}

const RFC3339 = '2006-01-02T15:04:05Z07:00';
const q = (s: string) => JSON.stringify(s);
const isDigit = (s: string, i: number) => i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57;

/** Go's getnum: one or two digits (exactly two when `fixed`). */
function num(s: string, fixed: boolean): [number, string] | undefined {
  if (!isDigit(s, 0)) return undefined;
  if (!isDigit(s, 1)) return fixed ? undefined : [Number(s[0]), s.slice(1)];
  return [Number(s.slice(0, 2)), s.slice(2)];
}

const daysIn = (month: number, year: number) => (month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31);

/** metav1.MicroTime's layout, named in its errors (a time without the microseconds is taken, as our own writers send it). */
export const RFC3339_MICRO = '2006-01-02T15:04:05.000000Z07:00';

/** Go's time.Parse(time.RFC3339, value)'s error message (naming `layout`); undefined when it parses. */
export function rfc3339Error(value: string, layout = RFC3339): string | undefined {
  const cannot = (rest: string, elem: string) => `parsing time ${q(value)} as ${q(layout)}: cannot parse ${q(rest)} as ${q(elem)}`;
  const range = (what: string) => `parsing time ${q(value)}: ${what} out of range`;
  let v = value;
  // the year: four characters, a number (a sign allowed, as Go's atoi has it)
  if (v.length < 4 || !/^[+-]?\d+$/.test(v.slice(0, 4))) return cannot(v, '2006');
  const year = Number(v.slice(0, 4));
  v = v.slice(4);
  const fields: [sep: string, elem: string, fixed: boolean, name: string, ok: (n: number) => boolean][] = [
    ['-', '01', true, 'month', (n) => n >= 1 && n <= 12], ['-', '02', true, 'day', (n) => n >= 1 && n <= 31],
    ['T', '15', false, 'hour', (n) => n < 24], [':', '04', true, 'minute', (n) => n < 60], [':', '05', true, 'second', (n) => n < 60],
  ];
  const got: number[] = [];
  for (const [sep, elem, fixed, name, ok] of fields) {
    if (!v.startsWith(sep)) return cannot(v, sep);
    v = v.slice(sep.length);
    const r = num(v, fixed);
    if (!r) return cannot(v, elem);
    if (!ok(r[0])) return range(name);
    got.push(r[0]);
    v = r[1];
  }
  // fractional seconds after the seconds, though the layout has none
  if ((v[0] === '.' || v[0] === ',') && isDigit(v, 1)) v = v.replace(/^[.,]\d+/, '');
  if (v[0] === 'Z') v = v.slice(1);
  else {
    if (v.length < 6 || v[3] !== ':' || (v[0] !== '+' && v[0] !== '-') || !num(v.slice(1, 3), true) || !num(v.slice(4, 6), true)) return cannot(v, 'Z07:00');
    const hours = Number(v.slice(1, 3)), minutes = Number(v.slice(4, 6));
    if (hours > 24) return range('time zone offset hour');
    if (minutes > 60) return range('time zone offset minute');
    v = v.slice(6);
  }
  if (v) return `parsing time ${q(value)}: extra text: ${q(v)}`;
  if (got[1]! > daysIn(got[0]!, year)) return range('day');
  return undefined;
}
