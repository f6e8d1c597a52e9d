import t from 'tap';
import {
  parseLabelSelector, matchLabels, labelSelectorFromStructured, selectorIsEmpty, labelSelectorString,
  parseFieldSelector, matchFields, exactFieldValue, fieldSelectorIsEmpty, escapeFieldValue, unescapeFieldValue,
  MAX_SELECTOR_BYTES,
} from '../../kernel/api/selectors.js';

const QNAME_REGEX_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_REGEX_MSG = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const matches = (sel: string, labels?: Record<string, string>) => matchLabels(parseLabelSelector(sel), labels);
const parseError = (sel: string) => {
  try {
    parseLabelSelector(sel);
    return 'no error';
  } catch (e) {
    return (e as Error).message;
  }
};

t.test('label selector: every operator parses', async (t) => {
  t.same(parseLabelSelector('a=b').requirements, [{ key: 'a', op: '=', values: ['b'] }]);
  t.same(parseLabelSelector('a==b').requirements, [{ key: 'a', op: '==', values: ['b'] }]);
  t.same(parseLabelSelector('a!=b').requirements, [{ key: 'a', op: '!=', values: ['b'] }]);
  t.same(parseLabelSelector('a in (y,x,y)').requirements, [{ key: 'a', op: 'in', values: ['x', 'y'] }]);
  t.same(parseLabelSelector('a notin (x)').requirements, [{ key: 'a', op: 'notin', values: ['x'] }]);
  t.same(parseLabelSelector('a').requirements, [{ key: 'a', op: 'exists', values: [] }]);
  t.same(parseLabelSelector('!a').requirements, [{ key: 'a', op: '!', values: [] }]);
  t.same(parseLabelSelector('a>1').requirements, [{ key: 'a', op: 'gt', values: ['1'] }]);
  t.same(parseLabelSelector('a<10').requirements, [{ key: 'a', op: 'lt', values: ['10'] }]);
  t.same(parseLabelSelector('example.com/app=web').requirements, [{ key: 'example.com/app', op: '=', values: ['web'] }]);
  // "in" and "notin" are plain words where a key or value is expected.
  t.same(parseLabelSelector('in=notin').requirements, [{ key: 'in', op: '=', values: ['notin'] }]);
  // An empty value is allowed after = and is the label value "".
  t.same(parseLabelSelector('a=,b').requirements, [{ key: 'a', op: '=', values: [''] }, { key: 'b', op: 'exists', values: [] }]);
});

t.test('label selector: whitespace, ordering, string form', async (t) => {
  const sel = parseLabelSelector('  z in ( x , y ) ,\t!b ,\n c ,a != d ');
  t.same(sel.requirements.map((r) => r.key), ['a', 'b', 'c', 'z'], 'sorted by key like the reference');
  t.equal(labelSelectorString(sel), 'a!=d,!b,c,z in (x,y)');
  t.equal(labelSelectorString(parseLabelSelector('a==b,c notin (e,d)')), 'a==b,c notin (d,e)');
});

t.test('label selector: empty selects everything', async (t) => {
  for (const s of ['', '   ']) {
    const sel = parseLabelSelector(s);
    t.ok(selectorIsEmpty(sel));
    t.ok(matchLabels(sel, undefined));
    t.ok(matchLabels(sel, { a: 'b' }));
  }
  t.notOk(selectorIsEmpty(parseLabelSelector('a')));
});

t.test('label selector: matching', async (t) => {
  const labels = { app: 'web', tier: 'front', n: '5' };
  t.ok(matches('app=web', labels));
  t.ok(matches('app==web', labels));
  t.notOk(matches('app=db', labels));
  t.notOk(matches('missing=x', labels));
  t.ok(matches('app!=db', labels));
  t.notOk(matches('app!=web', labels));
  t.ok(matches('missing!=x', labels), '!= matches an absent label');
  t.ok(matches('app in (db,web)', labels));
  t.notOk(matches('app in (db)', labels));
  t.notOk(matches('missing in (x)', labels));
  t.ok(matches('app notin (db)', labels));
  t.notOk(matches('app notin (web,db)', labels));
  t.ok(matches('missing notin (x)', labels), 'notin matches an absent label');
  t.ok(matches('app', labels));
  t.notOk(matches('missing', labels));
  t.ok(matches('!missing', labels));
  t.notOk(matches('!app', labels));
  t.ok(matches('n>4', labels));
  t.notOk(matches('n>5', labels));
  t.ok(matches('n<6', labels));
  t.notOk(matches('app>1', labels), 'a non-integer label never matches gt');
  t.ok(matches('app=web,tier=front', labels), 'requirements are ANDed');
  t.notOk(matches('app=web,tier=back', labels));
  t.notOk(matches('app', undefined));
  t.ok(matches('!app', undefined));
  t.notOk(matches('toString', {}), 'only own keys count');
  t.ok(matches('a=', { a: '' }));
  t.notOk(matches('a=', {}));
});

t.test('label selector: in with an empty set', async (t) => {
  // The reference reads "()" and empty list entries as the empty value.
  t.same(parseLabelSelector('a in ()').requirements, [{ key: 'a', op: 'in', values: [''] }]);
  t.same(parseLabelSelector('a in (,)').requirements, [{ key: 'a', op: 'in', values: [''] }]);
  t.same(parseLabelSelector('a in (x,)').requirements, [{ key: 'a', op: 'in', values: ['', 'x'] }]);
  t.same(parseLabelSelector('a notin (,,x)').requirements, [{ key: 'a', op: 'notin', values: ['', 'x'] }]);
  t.ok(matches('a in ()', { a: '' }));
  t.notOk(matches('a in ()', { a: 'x' }));
});

t.test('label selector: syntax errors', async (t) => {
  t.equal(parseError('a in (x'), "unable to parse requirement: found '', expected: ',' or ')'");
  t.equal(parseError('a in x)'), "unable to parse requirement: found 'x' expected: '('");
  t.equal(parseError('a in (x))'), "found ')', expected: ',' or 'end of string'");
  t.equal(parseError('a in (x y)'), "unable to parse requirement: found 'y', expected: ',' or ')'");
  t.equal(parseError('a in (=)'), "unable to parse requirement: found '=', expected: ',', ')' or identifier");
  t.equal(parseError('a in (,=)'), "unable to parse requirement: found '=', expected: ',', or identifier");
  t.equal(parseError('a=b)'), "found ')', expected: ',' or 'end of string'");
  t.equal(parseError('a=b c'), "found 'c', expected: ',' or 'end of string'");
  t.equal(parseError('a=(b)'), "unable to parse requirement: found '(', expected: identifier");
  t.equal(parseError('a b'), "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
  t.equal(parseError('a!b'), "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt");
  t.equal(parseError('!a=b'), "unable to parse requirement: found 'a', expected: ',' or 'end of string'");
  t.equal(parseError('!'), "unable to parse requirement: found '', expected: identifier");
  t.equal(parseError('=b'), "found '=', expected: !, identifier, or 'end of string'");
  t.equal(parseError('(a)'), "found '(', expected: !, identifier, or 'end of string'");
  t.equal(parseError('a=b,'), "found '', expected: identifier after ','");
  t.equal(parseError('a=b,,c'), "found ',', expected: identifier after ','");
  t.equal(parseError('a>x'), `unable to parse requirement: values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer`);
});

t.test('label selector: bad keys and values', async (t) => {
  t.equal(parseError('A@=b'), `unable to parse requirement: <nil>: Invalid value: "A@": name part ${QNAME_REGEX_MSG}`);
  t.equal(parseError('a=b@'), `unable to parse requirement: values[0][a]: Invalid value: "b@": ${VALUE_REGEX_MSG}`);
  t.equal(parseError('a in (ok,-bad)'), `unable to parse requirement: values[0][a]: Invalid value: "-bad": ${VALUE_REGEX_MSG}`);
  t.equal(parseError(`a=${'v'.repeat(64)}`), `unable to parse requirement: values[0][a]: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`);
  t.equal(parseError(`a=${'v'.repeat(63)}`), 'no error');
  t.equal(parseError(`${'k'.repeat(64)}`), `unable to parse requirement: <nil>: Invalid value: "${'k'.repeat(64)}": name part must be no more than 63 characters`);
  t.equal(parseError('/a'), 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty');
  t.match(parseError('Bad_Prefix/a'), /^unable to parse requirement: <nil>: Invalid value: "Bad_Prefix\/a": prefix part a lowercase RFC 1123 subdomain/);
});

t.test('label selector: input limits and types', async (t) => {
  t.equal(parseError('a='.padEnd(MAX_SELECTOR_BYTES + 1, 'b')), `label selector is too long: must be no more than ${MAX_SELECTOR_BYTES} bytes`);
  t.throws(() => parseLabelSelector(42 as unknown as string), Error);
  // A long but legal selector parses whole (no wall-clock bound: a busy machine is slow).
  const many = Array.from({ length: 900 }, (_, i) => `k${i}=v`).join(',');
  t.equal(parseLabelSelector(many).requirements.length, 900);
  t.match(parseError('('.repeat(MAX_SELECTOR_BYTES)), /^found '\(', expected/);
});

t.test('structured label selectors', async (t) => {
  t.ok(matchLabels(labelSelectorFromStructured(undefined), {}) === false, 'absent selects nothing');
  t.notOk(selectorIsEmpty(labelSelectorFromStructured(null)));
  const all = labelSelectorFromStructured({});
  t.ok(selectorIsEmpty(all));
  t.ok(matchLabels(all, { a: 'b' }));
  const sel = labelSelectorFromStructured({
    matchLabels: { app: 'web' },
    matchExpressions: [
      { key: 'tier', operator: 'In', values: ['front', 'edge'] },
      { key: 'env', operator: 'NotIn', values: ['prod'] },
      { key: 'team', operator: 'Exists' },
      { key: 'legacy', operator: 'DoesNotExist', values: [] },
    ],
  });
  t.equal(labelSelectorString(sel), 'app=web,env notin (prod),!legacy,team,tier in (edge,front)');
  t.ok(matchLabels(sel, { app: 'web', tier: 'edge', team: 'x' }));
  t.notOk(matchLabels(sel, { app: 'web', tier: 'edge', team: 'x', legacy: '1' }));
  t.notOk(matchLabels(sel, { app: 'web', tier: 'edge' }));
  t.throws(() => labelSelectorFromStructured({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }), { message: '"Gt" is not a valid label selector operator' });
  t.throws(() => labelSelectorFromStructured({ matchExpressions: [{ key: 'a', operator: 'In' }] }),
    { message: "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty" });
  t.throws(() => labelSelectorFromStructured({ matchExpressions: [{ key: 'a', operator: 'NotIn', values: [] }] }),
    { message: "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty" });
  t.throws(() => labelSelectorFromStructured({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }),
    { message: 'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist' });
  t.throws(() => labelSelectorFromStructured({ matchLabels: { 'a b': 'c' } }), { message: `key: Invalid value: "a b": name part ${QNAME_REGEX_MSG}` });
  t.throws(() => labelSelectorFromStructured({ matchLabels: { '-a': '-b' } }),
    { message: `[key: Invalid value: "-a": name part ${QNAME_REGEX_MSG}, values[0][-a]: Invalid value: "-b": ${VALUE_REGEX_MSG}]` });
});

// ---------------------------------------------------------------- field selectors

const fieldError = (sel: string, supported = new Set<string>()) => {
  try {
    parseFieldSelector(sel, supported);
    return 'no error';
  } catch (e) {
    return (e as Error).message;
  }
};

t.test('field selector: operators and matching', async (t) => {
  const sel = parseFieldSelector('status.phase!=Running,metadata.name=a,metadata.namespace==ns', new Set(['status.phase']));
  t.same(sel.requirements, [
    { field: 'metadata.name', op: '=', value: 'a' },
    { field: 'metadata.namespace', op: '==', value: 'ns' },
    { field: 'status.phase', op: '!=', value: 'Running' },
  ]);
  const obj: Record<string, string> = { 'metadata.name': 'a', 'metadata.namespace': 'ns', 'status.phase': 'Pending' };
  const get = (f: string) => obj[f] ?? '';
  t.ok(matchFields(sel, get));
  obj['status.phase'] = 'Running';
  t.notOk(matchFields(sel, get));
  t.ok(matchFields(parseFieldSelector('metadata.name!=b'), get));
  t.notOk(matchFields(parseFieldSelector('metadata.name!=a'), get));
  t.ok(matchFields(parseFieldSelector('metadata.name='), () => ''), 'an empty value matches an absent field');
});

t.test('field selector: empty selects everything', async (t) => {
  for (const s of ['', ',', ',,']) {
    const sel = parseFieldSelector(s, new Set());
    t.ok(fieldSelectorIsEmpty(sel));
    t.ok(matchFields(sel, () => 'x'));
  }
});

t.test('field selector: escaping', async (t) => {
  t.same(parseFieldSelector('metadata.name=a\\,b\\=c\\\\d').requirements, [{ field: 'metadata.name', op: '=', value: 'a,b=c\\d' }]);
  t.same(parseFieldSelector('metadata.name=x\\,y,metadata.namespace=z').requirements.map((r) => r.value), ['x,y', 'z']);
  t.equal(fieldError('metadata.name=a=b'), 'invalid field selector: unescaped character in value: 61');
  t.equal(fieldError('metadata.name=a\\x'), 'invalid field selector: invalid escape sequence: \\x');
  t.equal(fieldError('metadata.name=a\\'), 'invalid field selector: invalid escape sequence: \\');
  for (const v of ['plain', 'a,b', 'a=b', 'a\\b', '\\,=']) t.equal(unescapeFieldValue(escapeFieldValue(v)), v);
});

t.test('field selector: errors', async (t) => {
  t.equal(fieldError('spec.foo=x'), 'field label not supported: spec.foo');
  t.equal(fieldError('spec.nodeName=x', new Set(['spec.nodeName'])), 'no error');
  t.equal(fieldError('metadata.name = x'), 'field label not supported: metadata.name ', 'no trimming, as in the reference');
  t.equal(fieldError('foo'), "invalid selector: 'foo'; can't understand 'foo'");
  t.equal(fieldError('metadata.name=a,bar'), "invalid selector: 'metadata.name=a,bar'; can't understand 'bar'");
  // Syntax is checked for every term before support.
  t.equal(fieldError('spec.foo=x,zzz'), "invalid selector: 'spec.foo=x,zzz'; can't understand 'zzz'");
  t.equal(fieldError('x'.repeat(MAX_SELECTOR_BYTES + 1)), `field selector is too long: must be no more than ${MAX_SELECTOR_BYTES} bytes`);
  t.throws(() => parseFieldSelector(undefined as unknown as string, new Set()), Error);
});

t.test('exactFieldValue', async (t) => {
  const sel = parseFieldSelector('metadata.name==a,spec.nodeName!=n1,metadata.namespace=ns\\,1', new Set(['spec.nodeName']));
  t.equal(exactFieldValue(sel, 'metadata.name'), 'a');
  t.equal(exactFieldValue(sel, 'metadata.namespace'), 'ns,1');
  t.equal(exactFieldValue(sel, 'spec.nodeName'), undefined, '!= does not pin a value');
  t.equal(exactFieldValue(sel, 'status.phase'), undefined);
  t.equal(exactFieldValue(parseFieldSelector(''), 'metadata.name'), undefined);
});
