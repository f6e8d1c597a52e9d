// The Kubernetes CEL url and quantity libraries in x-kubernetes-validations rules, through real
// writes: valid objects are stored, invalid ones refused with the rule's message.
import t from 'tap';
import { withServer } from '../lib/server.js';
import { establish } from '../lib/crd.js';

const PODS = '/apis/example.com/v1/namespaces/default/sizings';

function crd() {
  const rule = (r: string, message: string) => ({ rule: r, message });
  return {
    apiVersion: 'apiextensions.cluster.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'sizings.example.com' },
    spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'sizings', singular: 'sizing', kind: 'Sizing' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: {
        type: 'object',
        'x-kubernetes-validations': [
          rule("!has(self.request) || !has(self.limit) || quantity(self.request).compareTo(quantity(self.limit)) <= 0", 'request must not exceed limit'),
          rule("!has(self.limit) || quantity(self.limit).add(quantity('512Mi')).isLessThan(quantity('4Gi'))", 'limit plus 512Mi of headroom must stay under 4Gi'),
          rule("quantity('1000m') == quantity('1') && quantity('1Ki').asInteger() == 1024 && quantity('1.5').sign() == 1 && !quantity('1.5').isInteger() && quantity('2k').sub(1000).asInteger() == 1000", 'library arithmetic'),
        ],
        properties: {
          endpoint: { type: 'string', 'x-kubernetes-validations': [
            rule('isURL(self)', 'must be a URL'),
            rule("!isURL(self) || url(self).getScheme() == 'https'", 'must use https'),
            rule("!isURL(self) || url(self).getHostname() != 'localhost'", 'must not be localhost'),
            rule("!isURL(self) || url(self).getPort() == '' || int(url(self).getPort()) <= 65535", 'port out of range'),
            rule("!isURL(self) || !('debug' in url(self).getQuery()) || url(self).getQuery()['debug'][0] == 'false'", 'debug must be false'),
          ] },
          request: { type: 'string', 'x-kubernetes-validations': [rule('isQuantity(self)', 'must be a quantity')] },
          limit: { type: 'string', 'x-kubernetes-validations': [rule('isQuantity(self) && quantity(self).sign() >= 0', 'must be a non-negative quantity')] },
          hostInfo: { type: 'string', 'x-kubernetes-validations': [rule("url(self).getHost() == '[::1]:8443' && url(self).getHostname() == '::1' && url(self).getEscapedPath() == '/a%20b'", 'host parts')] },
        },
      } } } } }] },
  };
}

t.test('CEL url and quantity libraries', async (t) => {
  const s = await withServer(t);
  await establish(s, crd());
  let n = 0;
  const put = (spec: unknown) => s.request('POST', PODS, { body: { apiVersion: 'example.com/v1', kind: 'Sizing', metadata: { name: `s${n++}` }, spec } });
  const ok = await put({ endpoint: 'https://api.example.com:8443/v1?debug=false&x=1', request: '500Mi', limit: '1.5Gi', hostInfo: 'https://[::1]:8443/a%20b' });
  t.equal(ok.status, 201, ok.text);
  // concurrent writes: the compiled programs are shared and stateless
  const many = await Promise.all(Array.from({ length: 10 }, (_, i) => put({ request: `${i + 1}00Mi`, limit: '1Gi' })));
  t.same(many.map((r) => r.status), Array(10).fill(201));

  const refused = async (spec: unknown, message: string) => {
    const r = await put(spec);
    t.equal(r.status, 422, `${JSON.stringify(spec)}: ${r.text}`);
    t.ok(r.json?.details?.causes?.some((c: any) => c.message.includes(message)), `${message}: ${r.json?.message}`);
  };
  await refused({ endpoint: 'not a url' }, 'must be a URL');
  await refused({ endpoint: 'http://api.example.com/' }, 'must use https');
  await refused({ endpoint: 'https://localhost:443/' }, 'must not be localhost');
  await refused({ endpoint: 'https://api.example.com:70000/' }, 'port out of range');
  await refused({ endpoint: 'https://api.example.com/?debug=true' }, 'debug must be false');
  await refused({ request: '2Gi', limit: '1Gi' }, 'request must not exceed limit');
  await refused({ request: '1,5Gi' }, 'must be a quantity');
  await refused({ limit: '-1' }, 'must be a non-negative quantity');
  await refused({ limit: '3.6Gi' }, 'limit plus 512Mi of headroom must stay under 4Gi');
  t.equal((await put({ request: '1000m', limit: '1' })).status, 201, 'equal quantities in different units');
  t.equal((await put({ request: '1e3', limit: '1k' })).status, 201, 'decimal exponent');
  t.equal((await put({ request: '1025', limit: '1Ki' })).status, 422, '1025 > 1Ki');
});
