// The reference's warning recorder: order kept, each text once, truncation past 4,096 characters.
import t from 'tap';
import { finalWarnings, joinWarnings, warningValue } from '../../kernel/ops/warnings.js';

const texts = (v: string) => v.split('\n').map((l) => JSON.parse(l.slice('299 - '.length)) as string);

t.test('dedupe and order', async (t) => {
  const v = joinWarnings(warningValue('b'), undefined, [warningValue('a'), warningValue('b'), warningValue('c')].join('\n'))!;
  t.same(texts(finalWarnings(v)), ['b', 'a', 'c']);
  t.equal(joinWarnings(undefined, ''), undefined);
});

t.test('truncation as the reference adds them one by one', async (t) => {
  // 4,000 characters fit whole; the next (200) passes 4,096: all so far cut to 256, then more cut ones until 4,096
  const v = [warningValue('a'.repeat(4000)), warningValue('b'.repeat(200)), ...Array.from({ length: 30 }, (_, i) => warningValue(`${i}`.padEnd(300, 'c')))].join('\n');
  const out = texts(finalWarnings(v));
  t.equal(out[0], 'a'.repeat(256));
  t.equal(out[1], 'b'.repeat(200));
  // 456 written at the switch; 256 more each until 4,096: 15 of the 300-character ones
  t.equal(out.length, 2 + 15);
  t.ok(out.slice(2).every((x) => x.length === 256));
  const short = [warningValue('x'), warningValue('y')].join('\n');
  t.equal(finalWarnings(short), short, 'under the limit nothing changes');
});
