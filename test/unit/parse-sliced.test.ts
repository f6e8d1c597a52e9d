// parseSliced (workers/parse.ts) builds what JSON.parse builds, and gives the event loop turns while
// it parses a large text.
import t, { type Test } from 'tap';
import { parseSliced, parseText, SLICED_PARSE_BYTES } from '../../workers/parse.js';
import type { SliceClock } from '../../workers/stringify.js';

/** A clock that is always due, counting its pauses. */
const counting = () => { let pauses = 0; const c: SliceClock = { due: () => true, pause: async () => { pauses++; } }; return { c, pauses: () => pauses }; };
const same = async (t: Test, text: string, what: string) => {
  const got = await parseSliced(text, counting().c);
  t.same(got, JSON.parse(text), what);
  t.equal(JSON.stringify(got), JSON.stringify(JSON.parse(text)), `${what}: same key order`);
};

t.test('the value JSON.parse builds', async (t) => {
  const texts: [string, string][] = [
    ['{}', 'empty object'], ['[]', 'empty array'], ['"s"', 'a string'], ['0', 'zero'], ['-0', 'minus zero'], ['null', 'null'], [' true ', 'true, spaced'],
    ['{"a":1,"b":[1,2,{"c":null}],"d":{"e":false,"f":"x"}}', 'nested'],
    ['{"2":"b","1":"a","x":"c","0":"z"}', 'integer keys first, as V8 orders them'],
    ['{"a":1,"a":2,"b":3}', 'the last of duplicate keys, in the first one\'s place'],
    [String.raw`{"e":"a\"b\\c\/d\n\u00e9\ud83d\ude00\ud800 tail","plain":"no escape","f":"\\"}`, 'escapes, surrogate pairs, a lone surrogate'],
    ['[1.5,-2e-7,1E+21,123456789012345678901234567890,1e400]', 'numbers'],
    ['\n\t{ "a" : [ 1 , 2 ] ,\r\n "b" : { } }\n', 'whitespace everywhere'],
    [JSON.stringify({ metadata: { managedFields: [{ fieldsV1: { 'f:data': Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`f:k${i}`, {}])) } }] } }), 'managed fields of 3,000 keys'],
    ['['.repeat(1000) + ']'.repeat(1000), '1,000 levels of arrays'],
    ['{"a":'.repeat(1000) + '1' + '}'.repeat(1000), '1,000 levels of objects'],
  ];
  for (const [text, what] of texts) await same(t, text, what);
  const proto = await parseSliced('{"__proto__":{"polluted":true},"a":1}', counting().c) as Record<string, unknown>;
  t.ok(Object.prototype.hasOwnProperty.call(proto, '__proto__'), '"__proto__" is an own key');
  t.equal(Object.getPrototypeOf(proto), Object.prototype, 'and not the prototype');
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'nothing polluted');
});

t.test('malformed text gets JSON.parse\'s error', async (t) => {
  for (const text of ['', '{', '{"a":}', '{"a" 1}', '[1,]', '[1 2]', '01', '1.', '-', 'tru', '{"a":1}x', '"open', '{"a":1,}', '{a:1}', 'nul']) {
    let native = '';
    try { JSON.parse(text); } catch (e) { native = (e as Error).message; }
    await t.rejects(parseSliced(text, counting().c), { message: native }, `${JSON.stringify(text)}: ${native}`);
  }
});

t.test('a large text is parsed in turns', async (t) => {
  const data = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`key-${i}`, 'v'.repeat(8)]));
  const text = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'large' }, data });
  const clock = counting();
  t.same(await parseSliced(text, clock.c), JSON.parse(text), 'the same value');
  t.ok(clock.pauses() >= 100, `${clock.pauses()} turns given`);
  t.ok(text.length >= SLICED_PARSE_BYTES && parseText(text) instanceof Promise, 'parseText slices a large text');
  t.same(parseText('{"a":1}'), { a: 1 }, 'and parses a small one at once');
});
