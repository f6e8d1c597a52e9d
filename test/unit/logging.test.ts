import t from 'tap';
import { makeLogger } from '../../kernel/ops/logging.js';

t.test('text lines are klog-style and escape values; json lines carry the level', async (t) => {
  const out: string[] = [];
  const text = makeLogger('text', 2, (s) => out.push(s));
  text.warn('disk "slow"', { path: '/a\nb', n: 3, ok: true, obj: { a: 1 } });
  text.v(2, 'shown');
  text.v(3, 'hidden');
  t.equal(out.length, 2, 'v above the verbosity is dropped');
  t.match(out[0], /^W\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+\] "disk \\"slow\\"" path="\/a\\nb" n=3 ok=true obj="\{\\"a\\":1\}"\n$/);
  t.equal(out[0].split('\n').length, 2, 'one line');
  const json: string[] = [];
  makeLogger('json', 3, (s) => json.push(s)).v(3, 'HTTP', { verb: 'GET' });
  t.match(JSON.parse(json[0]), { level: 'info', v: 3, msg: 'HTTP', verb: 'GET' });
});
