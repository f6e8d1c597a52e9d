// CEL rules of a definition as the reference judges them when the definition is written: property
// names CEL reserves are escaped (`namespace` is `__namespace__`), functions no library declares
// are refused with cel-go's checker errors, and the estimated cost of a rule is multiplied by how
// often it can run (the lists above it) and summed over the schema. Expected texts are the
// reference's (kube-apiserver 1.28.7) answers to the same definitions.
import t, { type Test } from 'tap';
import { withServer, type TestServer } from '../lib/server.js';
import { establish } from '../lib/crd.js';

const CRDS = '/apis/apiextensions.cluster.io/v1/customresourcedefinitions';
const at = 'spec.validation.openAPIV3Schema.properties[spec]';
const BUDGET = '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';

let n = 0;
function crd(props: Record<string, unknown>, rules: unknown[] = []) {
  const i = n++;
  return {
    apiVersion: 'apiextensions.cluster.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `costs${i}.example.com` },
    spec: { group: 'example.com', scope: 'Namespaced', names: { plural: `costs${i}`, singular: `cost${i}`, kind: `Cost${i}` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: props, 'x-kubernetes-validations': rules } } } } }] },
  };
}
const causesOf = (r: { json: any }) => (r.json?.details?.causes ?? []).map((c: any) => `${c.field}: ${c.message}`) as string[];

async function refused(t: Test, s: TestServer, def: unknown, expected: string[]) {
  const r = await s.request('POST', CRDS, { body: def });
  t.equal(r.status, 422, r.text);
  t.same(causesOf(r), expected);
}

t.test('CEL rules judged as the reference does when a definition is written', async (t) => {
  const s = await withServer(t);

  await t.test('a property named like a CEL keyword is reached by its escaped name', async (t) => {
    const def = crd({ namespace: { type: 'string' } }, [{ rule: "!has(self.__namespace__) || self.__namespace__ != 'kube-system'", message: 'not there' }]);
    await establish(s, def);
    const base = '/apis/example.com/v1/namespaces/default/' + def.spec.names.plural;
    const body = (ns: string) => ({ apiVersion: 'example.com/v1', kind: def.spec.names.kind, metadata: { name: `x${n++}` }, spec: { namespace: ns } });
    t.equal((await s.request('POST', base, { body: body('default') })).status, 201);
    const bad = await s.request('POST', base, { body: body('kube-system') });
    t.equal(bad.status, 422, bad.text);
    t.same(causesOf(bad), ['spec: Invalid value: "object": not there']);
  });

  await t.test('functions no library declares: cel-go\'s checker errors', async (t) => {
    await refused(t, s, crd({ addr: { type: 'string', maxLength: 10 } }, [{ rule: 'isIP(self.addr) && ip(self.addr).family() == 4' }]), [
      `${at}.x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"isIP(self.addr) && ip(self.addr).family() == 4", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:""}: compilation failed: `
      + "ERROR: <input>:1:5: undeclared reference to 'isIP' (in container '')\n | isIP(self.addr) && ip(self.addr).family() == 4\n | ....^\n"
      + "ERROR: <input>:1:22: undeclared reference to 'ip' (in container '')\n | isIP(self.addr) && ip(self.addr).family() == 4\n | .....................^\n"
      + "ERROR: <input>:1:40: undeclared reference to 'family' (in container '')\n | isIP(self.addr) && ip(self.addr).family() == 4\n | .......................................^\n"
      + "ERROR: <input>:1:43: found no matching overload for '_==_' applied to '(<nil>, int)'\n | isIP(self.addr) && ip(self.addr).family() == 4\n | ..........................................^",
    ]);
  });

  await t.test('a syntax error is worded as cel-go words it: "Syntax error", the line and a caret', async (t) => {
    const r = await s.request('POST', CRDS, { body: crd({}, [{ rule: 'self = 42' }]) });
    t.equal(r.status, 422, r.text);
    const [cause] = causesOf(r);
    // The reference (upstream e2e "contains a syntax error") looks for "Syntax error"; its column is 6 too.
    t.match(cause, /compilation failed: ERROR: <input>:1:6: Syntax error: .*\n \| self = 42\n \| \.\.\.\.\.\^$/s);
  });

  await t.test('a rule costs as often as the lists above it let it run', async (t) => {
    const item = (maxItems?: number) => ({ items: { type: 'array', ...(maxItems ? { maxItems } : {}), items: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: 'has(self.a) || has(self.b) || has(self.a) || has(self.b) || has(self.a)' }] } } });
    // Cost 10, run for each of the 1,048,576 smallest items a request can hold.
    await refused(t, s, crd(item()), [`${at}.properties[items].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.048576x ${BUDGET}`]);
    await establish(s, crd(item(100)));
    // Each string of an unbounded list may be as long as a request: over the budget, and over the schema's total.
    await refused(t, s, crd({ m: { type: 'array', items: { type: 'string' } } }, [{ rule: "self.m.all(x, x.contains('a'))" }]), [
      `${at}.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${BUDGET}`,
      `${at}.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      `spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${BUDGET}`,
    ]);
    // A message expression counts once, not per item.
    await refused(t, s, crd({ m: { type: 'string' } }, [{ rule: 'true', messageExpression: "'x' + string(1)" }]), [
      `${at}.x-kubernetes-validations[0].messageExpression: Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x ${BUDGET}`,
      `${at}.x-kubernetes-validations[0].messageExpression: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      `spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${BUDGET}`,
    ]);
  });
});

// What a rule costs at run time, per call (1,000,000) and per object (10,000,000), and what the
// reference answers when either runs out. `sum()` costs about one unit per element in cel-go and
// here, so a rule summing a list k times costs about k times its length in both. Expected texts
// were observed on kube-apiserver v1.28.7 with the same definitions and objects.
t.test('CEL rules past their runtime cost limits answer as the reference does', async (t) => {
  const s = await withServer(t);
  const sums = (f: string, k: number) => Array.from({ length: k }, () => `self.${f}.sum()`).join(' + ');
  const list = (len: number) => Array(len).fill(0);
  const ints = { type: 'array', maxItems: 10000, items: { type: 'integer' } };
  const items = { type: 'array', maxItems: 5, items: { type: 'object', properties: { v: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.v > 0', message: 'v must be positive' }] } };
  const OUT = 'validation failed due to running out of cost budget, no further validation rules will be run';
  const CANCELLED = "'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule:";
  const write = async (def: ReturnType<typeof crd>, name: string, spec: unknown) => {
    const r = await s.request('POST', `/apis/example.com/v1/namespaces/default/${def.spec.names.plural}`, { body: { apiVersion: 'example.com/v1', kind: def.spec.names.kind, metadata: { name }, spec } });
    return { r, prefix: `${def.spec.names.kind}.example.com "${name}" is invalid: ` };
  };
  // The whole 422: code, reason, the message listing the causes, and the causes in order.
  const answers = async (t: Test, def: ReturnType<typeof crd>, name: string, spec: unknown, causes: [string, string][]) => {
    const { r, prefix } = await write(def, name, spec);
    t.equal(r.status, 422, `${name}: 422`);
    t.equal(r.json?.reason, 'Invalid');
    t.equal(r.json?.code, 422);
    const listed = causes.map(([f, m]) => `${f}: Invalid value: "object": ${m}`);
    t.equal(r.json?.message, prefix + (listed.length === 1 ? listed[0] : `[${listed.join(', ')}]`));
    t.same(r.json?.details?.causes, causes.map(([field, m]) => ({ reason: 'FieldValueInvalid', message: `Invalid value: "object": ${m}`, field })));
  };

  await t.test('one rule over the per-call limit, many rules over the budget, the budget nearly spent', async (t) => {
    // A failing rule, eleven rules of about 950,000 over xs, one of about 1,200,000 over ys, another failing rule.
    const def = crd({ xs: ints, ys: ints, items }, [
      { rule: 'self.xs.size() < 0', message: 'before' },
      ...Array.from({ length: 11 }, (_, i) => ({ rule: `${sums('xs', 95)} >= 0`, message: `r${i}` })),
      { rule: `${sums('ys', 120)} >= 0`, message: 'big' },
      { rule: 'self.xs.size() < 0', message: 'after' },
    ]);
    await establish(s, def);
    // Without cost trouble every failure is listed, the spec's before its items'.
    await answers(t, def, 'fine', { xs: list(10), ys: list(10), items: [{ v: 0 }] },
      [['spec', 'before'], ['spec', 'after'], ['spec.items[0]', 'v must be positive']]);
    // (a) The costly rule alone exceeds the per-call limit: its message names the rule's message; later rules and nodes are not run.
    await answers(t, def, 'a', { xs: [], ys: list(10000), items: [{ v: 0 }] }, [['spec', 'before'], ['spec', `${CANCELLED} big`]]);
    // (b) Eleven rules each under the per-call limit spend more than the budget: the eleventh says so.
    await answers(t, def, 'b', { xs: list(10000), ys: [], items: [{ v: 0 }] }, [['spec', 'before'], ['spec', OUT]]);
    // (c) About 600,000 left when a rule over the per-call limit starts: the budget's message, not the call's.
    await answers(t, def, 'c', { xs: list(9000), ys: list(10000), items: [{ v: 0 }] }, [['spec', 'before'], ['spec', OUT]]);
    // ... and when the rule costs less than the per-call limit but more than what is left.
    await answers(t, def, 'c2', { xs: list(9000), ys: list(6000), items: [{ v: 0 }] }, [['spec', 'before'], ['spec', OUT]]);
    // About 2,700,000 left, more than the per-call limit: the call's message.
    await answers(t, def, 'e', { xs: list(7000), ys: list(10000), items: [{ v: 0 }] }, [['spec', 'before'], ['spec', `${CANCELLED} big`]]);
  });

  await t.test('loops count the variables they read: the upstream e2e nested all over 725 items', async (t) => {
    // The reference's answer to upstream's "exceeds the runtime cost limit" spec, observed on v1.28.7:
    // its cel-go charges every identifier, so 725 x 725 comparisons overrun the 1,000,000 per call.
    const def = crd({ x: { type: 'integer' }, largeArray: { type: 'array', maxItems: 725, items: { type: 'integer' } } },
      [{ rule: 'self.x > 0' }, { rule: 'self.largeArray.all(x, self.largeArray.all(y, y == x))' }]);
    await establish(s, def);
    await answers(t, def, 'nested', { largeArray: Array(725).fill(20) }, [
      ['spec', 'no such key: x evaluating rule: self.x > 0'],
      ['spec', `${CANCELLED} self.largeArray.all(x, self.largeArray.all(y, y == x))`]]);
    // A tenth of the items is well inside the limit: the rule holds.
    t.equal((await write(def, 'small', { x: 1, largeArray: Array(72).fill(20) })).r.status, 201);
  });

  await t.test('the budget running out at a list item', async (t) => {
    // Ten rules of about 950,000 on the spec leave about 500,000 for items of about 200,000 each.
    const def = crd({ xs: ints, items: { type: 'array', maxItems: 5, items: { type: 'object', properties: { v: { type: 'integer' }, ys: { type: 'array', maxItems: 2000, items: { type: 'integer' } } },
      'x-kubernetes-validations': [{ rule: 'self.v > 0', message: 'v must be positive' }, { rule: `${sums('ys', 100)} >= 0`, message: 'item sums' }] } } },
    Array.from({ length: 10 }, (_, i) => ({ rule: `${sums('xs', 95)} >= 0`, message: `r${i}` })));
    await establish(s, def);
    await answers(t, def, 'items', { xs: list(10000), items: [0, 1, 2, 3].map(() => ({ v: 0, ys: list(2000) })) }, [
      ['spec.items[0]', 'v must be positive'], ['spec.items[1]', 'v must be positive'], ['spec.items[2]', 'v must be positive'], ['spec.items[2]', OUT]]);
  });

  await t.test('a message expression over its limits; a failed rule\'s fieldPath for the node\'s later causes', async (t) => {
    const messageExpression = `${sums('zs', 120)} >= 0 ? 'zs sums' : 'negative'`;
    const def = crd({ xs: ints, zs: ints, items }, [
      ...Array.from({ length: 10 }, (_, i) => ({ rule: `${sums('xs', 95)} >= 0`, message: `r${i}` })),
      { rule: 'self.zs.size() < 0', fieldPath: '.zs', messageExpression },
      { rule: 'self.xs.size() < 0', message: 'after' },
    ]);
    await establish(s, def);
    // The reference reports the later rule's failure at the path the earlier one moved to.
    await answers(t, def, 'moved', { xs: [], zs: [1], items: [{ v: 0 }] },
      [['spec.zs', 'zs sums'], ['spec.zs', 'after'], ['spec.items[0]', 'v must be positive']]);
    // Over the per-call limit, the message expression's cause (quoted as Go does) replaces the rule's and ends validation.
    await answers(t, def, 'over-call', { xs: [], zs: list(10000), items: [{ v: 0 }] },
      [['spec.zs', `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${JSON.stringify(messageExpression)}`]]);
    // Over what the rules before it left of the budget.
    await answers(t, def, 'over-budget', { xs: list(10000), zs: list(6000), items: [{ v: 0 }] },
      [['spec.zs', 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run']]);
  });
});
