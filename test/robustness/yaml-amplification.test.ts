// YAML alias amplification: a body within the byte limit whose aliases expand it many times over.
// The yaml package's own guard counts aliases (at most 100 here), not what they expand to, so 99
// aliases of one anchored 3 MB list decoded to ~297 MB. What a body may become is bounded: the
// reference decoder's rule on the share of nodes that come from aliases (400 "excessive aliasing")
// and a bound on the JSON it decodes to (413). Ordinary YAML, anchors included, is served as before.
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';

const yamlCreate = (s: TestServer, body: string) =>
  s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: Buffer.from(body), headers: { 'content-type': 'application/yaml' } });

/** A ConfigMap whose `list` is anchored (items of `itemBytes` characters) and aliased `aliases` times. */
function amplified(name: string, items: number, itemBytes: number, aliases: number): string {
  const item = `  - ${'x'.repeat(itemBytes)}\n`;
  const refs = Array.from({ length: aliases }, (_, i) => `  r${i}: *list\n`).join('');
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\nlist: &list\n${item.repeat(items)}copies:\n${refs}`;
}

t.test('a body whose aliases expand it past the bounds is refused, and nothing is stored', async (t) => {
  const s = await withServer(t);
  const big = amplified('bomb', 90_000, 29, 99);
  t.ok(big.length > 2.8 * 1024 * 1024 && big.length < 3 * 1024 * 1024, `a ${(big.length / 1048576).toFixed(2)} MiB body, within the byte limit`);
  let r = await yamlCreate(s, big);
  t.equal(r.status, 413, '99 aliases of a 3 MB list: 413');
  t.match(r.json, { kind: 'Status', reason: 'RequestEntityTooLarge', code: 413, message: /^Request entity too large: the YAML body decodes to more than 12582912 bytes$/ });

  r = await yamlCreate(s, amplified('ratio', 5000, 8, 99));
  t.equal(r.status, 400, 'nodes mostly from aliases: 400');
  t.equal(r.json?.message, 'the body of the request could not be decoded as YAML: yaml: document contains excessive aliasing');

  r = await s.request('PATCH', '/api/v1/namespaces/default/configmaps/x?fieldManager=t', { raw: Buffer.from(amplified('x', 5000, 8, 99)), headers: { 'content-type': 'application/apply-patch+yaml' } });
  t.equal(r.status, 400, 'an apply body too');
  t.equal(r.json?.message, 'error decoding patch: yaml: document contains excessive aliasing');

  for (const name of ['bomb', 'ratio', 'x']) t.equal((await s.get(`/api/v1/namespaces/default/configmaps/${name}`)).status, 404, `${name}: nothing stored`);
  t.equal((await s.get('/readyz')).status, 200, 'the server serves on');
});

t.test('ordinary YAML is served: anchors reused a few times, and large bodies without aliases', async (t) => {
  const s = await withServer(t);
  let r = await yamlCreate(s, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: anchored\n  labels: &l {app: web, tier: front}\n  annotations: *l\ndata: *l\n');
  t.equal(r.status, 201, 'anchors and aliases in moderation');
  t.same(r.json?.data, { app: 'web', tier: 'front' });
  const lines = Array.from({ length: 9000 }, (_, i) => `  k${i}: ${'v'.repeat(100)}\n`).join('');
  r = await yamlCreate(s, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: large\ndata:\n${lines}`);
  t.equal(r.status, 201, 'a 0.9 MiB body without aliases (a ConfigMap holds at most 1 MiB)');
  t.equal(Object.keys(r.json?.data ?? {}).length, 9000);
});
