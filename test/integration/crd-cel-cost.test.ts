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
