// Bad input gets a clear Status, never a 500: bodies nested 10,000 deep (merge, strategic and JSON
// patches, apply, annotations, managed fields), YAML `!!binary` and alias bombs, garbage strategic
// merge directives. Each answer is a 400 with the reference's message; nothing is written; the
// server logs no internal error and stays ready.
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';

const CM = '/api/v1/namespaces/default/configmaps';
const DEP = '/apis/apps/v1/namespaces/default/deployments';
const DEEP = 10_000;
const deep = (n: number, leaf = '1') => '{"a":'.repeat(n) + leaf + '}'.repeat(n);
const deepList = (n: number) => '['.repeat(n) + ']'.repeat(n);
const TOO_DEEP = "invalid character '{' exceeded max depth";

function send(s: TestServer, method: string, p: string, ct: string, raw: string) {
  return s.request(method, p, { raw, headers: { 'content-type': ct } });
}

t.test('bad input: 400 with the reference message, nothing written, no internal error', async (t) => {
  const s = await withServer(t);
  t.equal((await s.request('POST', CM, { body: { metadata: { name: 'x' }, data: { keep: 'me' } } })).status, 201);
  t.equal((await s.request('POST', DEP, { body: { metadata: { name: 'web' }, spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } } })).status, 201);
  const before = { cm: (await s.get(`${CM}/x`)).text, dep: (await s.get(`${DEP}/web`)).text };

  const cases: [string, string, string, string, string, RegExp | string][] = [
    ['merge patch 10,000 deep', 'PATCH', `${CM}/x`, 'application/merge-patch+json', `{"data":{"a":"b"},"x":${deep(DEEP)}}`, `error decoding patch: ${TOO_DEEP}`],
    ['merge patch of labels 10,000 deep', 'PATCH', `${CM}/x`, 'application/merge-patch+json', `{"metadata":{"labels":${deep(DEEP)}}}`, `error decoding patch: ${TOO_DEEP}`],
    ['strategic patch 10,000 deep', 'PATCH', `${DEP}/web`, 'application/strategic-merge-patch+json', `{"spec":{"template":{"spec":{"containers":[{"name":"c","x":${deep(DEEP)}}]}}}}`, `error decoding patch: ${TOO_DEEP}`],
    ['JSON patch value 10,000 deep', 'PATCH', `${CM}/x`, 'application/json-patch+json', `[{"op":"add","path":"/data/q","value":${deep(DEEP)}}]`, `error decoding patch: ${TOO_DEEP}`],
    ['JSON patch list value 10,000 deep', 'PATCH', `${CM}/x`, 'application/json-patch+json', `[{"op":"add","path":"/metadata/annotations","value":${deepList(DEEP)}}]`, "error decoding patch: invalid character '[' exceeded max depth"],
    ['apply 10,000 deep', 'PATCH', `${CM}/x?fieldManager=a`, 'application/apply-patch+yaml', `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":${deep(DEEP)}}`, `error decoding patch: ${TOO_DEEP}`],
    ['apply YAML 10,000 deep', 'PATCH', `${CM}/x?fieldManager=a`, 'application/apply-patch+yaml', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: ${deepList(DEEP)}\n`, 'error decoding patch: yaml: exceeded max depth of 1000'],
    ['annotations 10,000 deep', 'POST', CM, 'application/json', `{"metadata":{"name":"d1","annotations":${deep(DEEP)}}}`, `the body of the request could not be decoded as JSON: ${TOO_DEEP}`],
    ['managed fields 10,000 deep', 'POST', CM, 'application/json', `{"metadata":{"name":"d2","managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":${deep(DEEP, '{}')}}]}}`, `the body of the request could not be decoded as JSON: ${TOO_DEEP}`],
    ['PUT 10,000 deep', 'PUT', `${CM}/x`, 'application/json', `{"metadata":{"name":"x"},"z":${deep(DEEP)}}`, `the body of the request could not be decoded as JSON: ${TOO_DEEP}`],
    ['DeleteOptions 10,000 deep', 'DELETE', `${CM}/x`, 'application/json', `{"preconditions":${deep(DEEP)}}`, `error decoding DeleteOptions: ${TOO_DEEP}`],
    ['YAML body 10,000 deep', 'POST', CM, 'application/yaml', `metadata:\n  name: d3\ndata: ${deepList(DEEP)}\n`, 'the body of the request could not be decoded as YAML: yaml: exceeded max depth of 1000'],
    ['YAML bad !!binary', 'POST', CM, 'application/yaml', 'metadata:\n  name: d4\ndata:\n  a: !!binary "%%%"\n', /^the body of the request could not be decoded as YAML: yaml: .*!!binary value contains invalid base64 data/],
    ['$patch: bogus in a map', 'PATCH', `${CM}/x`, 'application/strategic-merge-patch+json', '{"data":{"$patch":"bogus"}}', 'unknown patch type: bogus in map: map[$patch:bogus]'],
    ['$patch: bogus at the top', 'PATCH', `${CM}/x`, 'application/strategic-merge-patch+json', '{"$patch":"bogus"}', 'unknown patch type: bogus in map: map[$patch:bogus]'],
    ['$patch: bogus in a list', 'PATCH', `${DEP}/web`, 'application/strategic-merge-patch+json', '{"spec":{"template":{"spec":{"containers":[{"name":"c","$patch":"bogus"}]}}}}', /^unknown patch type: bogus in map: /],
    ['$setElementOrder not a list', 'PATCH', `${DEP}/web`, 'application/strategic-merge-patch+json', '{"spec":{"template":{"spec":{"$setElementOrder/containers":"x"}}}}', 'invalid patch format of setElementOrder list'],
    ['$setElementOrder a map', 'PATCH', `${DEP}/web`, 'application/strategic-merge-patch+json', '{"spec":{"template":{"spec":{"$setElementOrder/containers":{"a":1}}}}}', 'invalid patch format of setElementOrder list'],
    ['$setElementOrder of numbers', 'PATCH', `${DEP}/web`, 'application/strategic-merge-patch+json', '{"spec":{"template":{"spec":{"$setElementOrder/containers":[1,2]}}}}', 'map: 1 does not contain declared merge key: name'],
    ['$retainKeys not a list', 'PATCH', `${DEP}/web`, 'application/strategic-merge-patch+json', '{"spec":{"strategy":{"$retainKeys":"x"}}}', 'invalid patch format of retainKeys'],
  ];
  for (const [name, method, p, ct, body, message] of cases) {
    const r = await send(s, method, p, ct, body);
    t.equal(r.status, 400, name);
    t.equal(r.json?.kind, 'Status', `${name}: a Status`);
    t.equal(r.json?.reason, 'BadRequest', `${name}: BadRequest`);
    if (typeof message === 'string') t.equal(r.json?.message, message, `${name}: message`);
    else t.match(r.json?.message, message, `${name}: message`);
  }

  // Billion laughs as a YAML body: refused at once.
  let laughs = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\nx:\n';
  laughs += '  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n';
  for (let i = 1; i < 9; i++) laughs += `  a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]\n`;
  const lol = await send(s, 'POST', CM, 'application/yaml', laughs);
  t.equal(lol.status, 400);
  t.equal(lol.json?.message, 'the body of the request could not be decoded as YAML: yaml: document contains excessive aliasing');

  // !!binary decodes to the string of its bytes, as the reference's YAML decoder does.
  const bin = await send(s, 'POST', CM, 'application/yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bin\ndata:\n  a: !!binary aGVsbG8=\n');
  t.equal(bin.status, 201);
  t.same(bin.json?.data, { a: 'hello' });

  t.same({ cm: (await s.get(`${CM}/x`)).text, dep: (await s.get(`${DEP}/web`)).text }, before, 'nothing was written');
  for (const n of ['d1', 'd2', 'd3', 'd4', 'lol']) t.equal((await s.get(`${CM}/${n}`)).status, 404, `${n} was not created`);
  t.equal((await s.get('/readyz')).status, 200);
  t.notOk(s.logs.some((l) => l.includes('internal error') || l.includes('Maximum call stack')), 'no internal error logged');
});
