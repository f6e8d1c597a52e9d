// Plugins' watches of committed objects (kernel/api/endpoints/objects.ts): a listener that names the
// object it wants gets only that one's changes, an event no listener wants is never parsed, and a
// large object is parsed in slices with the changes after it kept behind it.
import t from 'tap';
import { ObjectWatchers } from '../../kernel/api/endpoints/objects.js';
import type { CacheEvent, ResourceCache } from '../../kernel/store/cache.js';
import type { TypeDef } from '../../kernel/contracts/index.js';
import { SLICED_PARSE_BYTES } from '../../workers/parse.js';

const type = { group: '', resource: 'configmaps' } as TypeDef;
const rc = { type } as ResourceCache;
/** An event whose bytes count their parses (a getter on toString). */
function event(namespace: string, name: string, pad = 0) {
  let parses = 0;
  const text = JSON.stringify({ metadata: { namespace, name }, ...(pad ? { data: { pad: 'p'.repeat(pad) } } : {}) });
  const bytes = { length: text.length, toString: () => { parses++; return text; } };
  return { ev: { type: 'MODIFIED', entry: { namespace, name, bytes } } as unknown as CacheEvent, parses: () => parses };
}

t.test('a listener that names its object', async (t) => {
  const w = new ObjectWatchers();
  const seen: string[] = [];
  const off = w.add(type, (_t, o) => seen.push(`${o.metadata!.namespace}/${o.metadata!.name}`), { name: 'kube-root-ca.crt' });
  w.add(type, (_t, o) => seen.push(`ns:${o.metadata!.name}`), { namespace: 'kube-public', name: 'cluster-info' });
  const big = event('default', 'large');
  w.notify(big.ev, rc);
  t.equal(big.parses(), 0, 'an object no listener names is not parsed');
  const root = event('a', 'kube-root-ca.crt');
  w.notify(root.ev, rc);
  w.notify(event('kube-public', 'cluster-info').ev, rc);
  w.notify(event('default', 'cluster-info').ev, rc);
  t.same(seen, ['a/kube-root-ca.crt', 'ns:cluster-info'], 'each listener gets its own object, in any namespace when it names none');
  t.equal(root.parses(), 1, 'parsed once');
  off();
  w.notify(event('b', 'kube-root-ca.crt').ev, rc);
  t.equal(seen.length, 2, 'none after unsubscribing');
  const all: string[] = [];
  w.add(type, (_t, o) => all.push(o.metadata!.name!));
  const any = event('default', 'x');
  w.notify(any.ev, rc);
  w.notify(event('b', 'kube-root-ca.crt').ev, rc);
  t.same(all, ['x', 'kube-root-ca.crt'], 'a listener naming nothing gets every change');
  t.equal(any.parses(), 1, 'parsed once for all listeners');
});

t.test('a large object is parsed in slices, and the changes after it wait for it', async (t) => {
  const w = new ObjectWatchers();
  const seen: string[] = [];
  w.add(type, (_t, o) => seen.push(o.metadata!.name!));
  w.notify(event('default', 'small-1').ev, rc);
  t.same(seen, ['small-1'], 'a small one at once');
  w.notify(event('default', 'large', SLICED_PARSE_BYTES).ev, rc);
  w.notify(event('default', 'small-2').ev, rc);
  t.same(seen, ['small-1'], 'a large one, and what follows it, later');
  await new Promise((r) => setTimeout(r, 50));
  t.same(seen, ['small-1', 'large', 'small-2'], 'in commit order');
  w.notify(event('default', 'small-3').ev, rc);
  t.same(seen, ['small-1', 'large', 'small-2', 'small-3'], 'and at once again after');
});
