// resourceVersion values the reference's storage cannot parse (strconv.ParseUint, 64 bits) are
// answered at once, as the reference answers them: the watch cache's InvalidError reaches the client
// as a 500 without a reason; a list the watch cache hands to etcd (Exact, paged) as etcd's 400. A
// revision past 2^53 that does parse keeps every digit in what the server says about it.
import t from 'tap';
import { withServer } from '../lib/server.js';

const TOO_BIG = '99999999999999999999';
const invalid = (rv: string, why: string) => `resourceVersion: Invalid value: "${rv}": strconv.ParseUint: parsing "${rv}": ${why}`;
const cms = '/api/v1/namespaces/default/configmaps';

t.test('out of range and malformed resourceVersions get the reference\'s answers', async (t) => {
  const s = await withServer(t);
  await s.request('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } } });
  const status500 = (message: string) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 });
  for (const [what, p] of [['get', `${cms}/a`], ['list', cms], ['watch', `${cms}?watch=1`]] as const) {
    const sep = p.includes('?') ? '&' : '?';
    let r = await s.get(`${p}${sep}resourceVersion=${TOO_BIG}`);
    t.equal(r.status, 500, `${what}, out of range: 500`);
    t.same(r.json, status500(invalid(TOO_BIG, 'value out of range')), 'the storage\'s message, no reason');
    r = await s.get(`${p}${sep}resourceVersion=12a`);
    t.same([r.status, r.json], [500, status500(invalid('12a', 'invalid syntax'))], `${what}, not a number: 500 invalid syntax`);
  }
  for (const q of ['limit=5', 'resourceVersionMatch=Exact']) {
    const r = await s.get(`${cms}?${q}&resourceVersion=${TOO_BIG}`);
    t.equal(r.status, 400, `list with ${q} (etcd's path): 400`);
    t.match(r.json, { reason: 'BadRequest', code: 400, message: `invalid resource version: ${invalid(TOO_BIG, 'value out of range')}` });
  }
});

t.test('a revision past 2^53 that parses is waited for, and named with every digit', async (t) => {
  const s = await withServer(t);
  const max = '18446744073709551615';
  const r = await s.get(`${cms}/x?resourceVersion=${max}`);
  t.equal(r.status, 504, 'not reached: 504, as the reference');
  t.match(r.json?.message, `Too large resource version: ${max}, current: `, 'the revision as sent');
});
