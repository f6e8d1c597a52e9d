// Deep JSON Schemas compiled in pieces (kernel/api/ajvdeep.ts): a schema of ~490 levels compiles
// (ajv alone runs out of stack), validates as the whole would, with full instance paths, and is
// never cut below a combinator (whose errors the custom resource messages tell by their schemaPath).
import t from 'tap';
import { Ajv } from 'ajv';
import { compileDeep, compileDeepSliced, cutDeep, schemaDepth } from '../../kernel/api/ajvdeep.js';

const chain = (levels: number, leaf: Record<string, unknown>) => {
  let s: Record<string, unknown> = leaf;
  for (let i = 0; i < levels; i++) s = { type: 'object', properties: { a: s } };
  return s;
};
const value = (levels: number, leaf: unknown) => {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
};
const newAjv = () => new Ajv({ allErrors: true, strict: false, validateSchema: false });

t.test('a 490-level schema compiles in pieces and validates as the whole', async (t) => {
  const schema = chain(490, { type: 'string', maxLength: 3 });
  t.equal(schemaDepth(schema), 491);
  t.ok(cutDeep(structuredClone(schema)).length > 10, 'cut into pieces');
  for (const fn of [compileDeep(newAjv(), schema), await compileDeepSliced(newAjv(), schema)]) {
    t.ok(fn(value(490, 'abc')), 'a valid value passes');
    t.notOk(fn(value(490, 'abcd')), 'a long leaf fails');
    t.same(fn.errors!.map((e) => [e.keyword, e.instancePath]), [['maxLength', '/a'.repeat(490)]], 'with its full path');
  }
});

t.test('shallow schemas are compiled as they are', async (t) => {
  const ajv = newAjv();
  const ids: string[] = [];
  const fn = compileDeep(ajv, chain(10, { type: 'integer' }), ids);
  t.same(ids, [], 'no pieces');
  t.notOk(fn(value(10, 'x')));
});

t.test('never cut below a combinator', async (t) => {
  // 100 levels, then an anyOf whose branches go 100 levels deeper.
  const schema = chain(100, { anyOf: [chain(100, { type: 'string' }), chain(100, { type: 'integer' })] });
  const fn = compileDeep(newAjv(), schema);
  t.ok(fn(value(100, value(100, 1))));
  t.notOk(fn(value(100, value(100, true))));
  t.ok(fn.errors!.some((e) => e.keyword === 'anyOf'), 'the anyOf fails');
  t.ok(fn.errors!.filter((e) => e.keyword === 'type').every((e) => /\/anyOf\//.test(e.schemaPath)), "its branches' errors name it");
});
