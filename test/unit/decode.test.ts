// Bounded body decoding (workers/body/decode.ts): nesting depth, YAML aliases, !!binary, duplicate keys.
import t from 'tap';
import { decodeYaml, depthError, duplicateKeys, encodeYaml, MAX_DEPTH, parseJson, YAML_BLOCK_DEPTH } from '../../workers/body/decode.js';
import YAML from 'yaml';

const nested = (n: number, open = '{"a":', close = '}') => open.repeat(n) + '1' + close.repeat(n);

t.test('depth: the reference JSON decoder message past the limit, iteratively', async (t) => {
  t.equal(depthError(JSON.parse(nested(MAX_DEPTH))), undefined, 'at the limit');
  t.equal(depthError(JSON.parse(nested(MAX_DEPTH + 1))), "invalid character '{' exceeded max depth");
  t.equal(depthError(JSON.parse(nested(MAX_DEPTH + 1, '[', ']'))), "invalid character '[' exceeded max depth");
  // 200,000 levels: the check must not recurse (JSON.parse itself is iterative in V8).
  t.throws(() => parseJson(nested(200_000)), { message: "invalid character '{' exceeded max depth" });
  t.same(parseJson('{"a":[1,{"b":2}]}'), { a: [1, { b: 2 }] });
});

t.test('YAML: !!binary is the string of its bytes; bad base64 is an error', async (t) => {
  t.same(decodeYaml('data:\n  a: !!binary aGVsbG8=\n'), { ok: true, value: { data: { a: 'hello' } }, duplicates: [] });
  const bad = decodeYaml('a: !!binary "not base64!"\n');
  t.equal(bad.ok, false);
  t.match(!bad.ok && bad.message, /^yaml: .*!!binary value contains invalid base64 data/);
  // No Set, Map or Date values out of YAML 1.1 tags: they stay plain.
  const r = decodeYaml('s: !!set {a, b}\nd: !!timestamp 2001-12-14\n');
  t.equal(r.ok, true);
  t.same(JSON.parse(JSON.stringify(r.ok && r.value)), r.ok && r.value, 'JSON values only');
});

t.test('YAML: aliases bounded (billion laughs), depth bounded', async (t) => {
  let laughs = 'a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n';
  for (let i = 1; i < 9; i++) laughs += `a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]\n`;
  t.same(decodeYaml(laughs), { ok: false, message: 'yaml: document contains excessive aliasing' });
  t.same(decodeYaml(`x: ${'['.repeat(MAX_DEPTH + 1)}${']'.repeat(MAX_DEPTH + 1)}\n`), { ok: false, message: `yaml: exceeded max depth of ${MAX_DEPTH}` });
  t.same(decodeYaml(`x: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`), { ok: false, message: `yaml: exceeded max depth of ${MAX_DEPTH}` });
  t.equal(decodeYaml('a: &x {b: 1}\nc: *x\n').ok, true, 'a few aliases are fine');
});

t.test('duplicate keys in document order, iteratively', async (t) => {
  const r = decodeYaml('a: 1\nb:\n  c: 1\n  c: 2\na: 3\nl:\n- {x: 1, x: 2}\n');
  t.same(r.ok && r.duplicates, ['b.c', 'a', 'l[0].x']);
  t.same(r.ok && r.value, { a: 3, b: { c: 2 }, l: [{ x: 2 }] }, 'the last of duplicate keys wins');
  t.same(duplicateKeys(YAML.parseDocument('a: 1\na: 2\n', { uniqueKeys: false }).contents, 1), ['a']);
});

t.test('YAML: node count bounded before the document is composed', async (t) => {
  t.same(decodeYaml('groups:\n' + '  - a\n'.repeat(100_001)), { ok: false, message: 'yaml: document has more than 100000 nodes' });
  t.equal(decodeYaml('groups:\n' + '  - a\n'.repeat(1000)).ok, true);
});

t.test('YAML: block nesting bounded by indentation and compact indicators', async (t) => {
  t.same(decodeYaml(`x:\n${' '.repeat(1001)}y: 1\n`), { ok: false, message: `yaml: exceeded max depth of ${MAX_DEPTH}` });
  t.same(decodeYaml(`${'- '.repeat(600)}x\n`), { ok: false, message: `yaml: exceeded max depth of ${MAX_DEPTH}` });
  t.same(decodeYaml(`{"spec":${'['.repeat(15_000)}${']'.repeat(15_000)}}`), { ok: false, message: `yaml: exceeded max depth of ${MAX_DEPTH}` });
  t.same(decodeYaml('a:\n  - b: 1\n    c: [1, {d: 2}]\n'), { ok: true, value: { a: [{ b: 1, c: [1, { d: 2 }] }] }, duplicates: [] });
});

t.test('YAML answers: values nested past the block depth are written in flow style, at any depth', async (t) => {
  const shallow = { a: { b: [1, { c: 'x: y' }] } };
  t.equal(encodeYaml(JSON.stringify(shallow)), YAML.stringify(shallow), 'block style as before within the depth');
  // just past the block depth: the yaml package can still read it back, and it is the same value
  const json = nested(YAML_BLOCK_DEPTH + 50);
  const out = encodeYaml(json);
  t.same(YAML.parse(out), JSON.parse(json), 'the same value');
  t.match(out, /\{"a":\{"a":/, 'its deep part as JSON');
  // 20,000 levels (past what JSON.stringify or the yaml writer could recurse through) still give an answer
  const huge = encodeYaml(nested(20_000, '[', ']'));
  t.ok(huge.includes('['.repeat(19_000)) && huge.includes(']'.repeat(19_000)), 'an answer for 20,000 levels');
});
