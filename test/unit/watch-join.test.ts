// The fan-out's flush joins a watcher's queued lines once per distinct batch: watchers that queued the
// same shared lines get the same buffer (no copy per watcher), and each gets exactly its own lines.
import t from 'tap';
import { WatchHub, type Watcher } from '../../kernel/watch/fanout.js';

const line = (s: string) => Buffer.from(s + '\n');

/** A watcher that queues what it is handed and records the buffer its flush joined. */
function watcher(hub: WatchHub, sent: Buffer[][]): Watcher & { queue(...b: Buffer[]): void; out?: Buffer } {
  let pending: Buffer[] = [];
  const w = {
    namespace: '', name: '', rep: 'json',
    encode: () => Buffer.alloc(0),
    deliver: () => {},
    queue(...b: Buffer[]) { pending.push(...b); hub.touched(w); },
    flush() { sent.push(pending); w.out = hub.join(pending); pending = []; },
    out: undefined as Buffer | undefined,
  };
  return w;
}

t.test('watchers with the same lines share one joined buffer; others get their own lines', async (t) => {
  const hub = new WatchHub();
  const sent: Buffer[][] = [];
  const [a, b, c] = [line('{"type":"ADDED"}'), line('{"type":"MODIFIED"}'), line('{"type":"DELETED"}')];
  const same1 = watcher(hub, sent);
  const same2 = watcher(hub, sent);
  const fewer = watcher(hub, sent);
  const other = watcher(hub, sent);
  const single = watcher(hub, sent);
  same1.queue(a, b, c);
  same2.queue(a, b, c);
  fewer.queue(a, b);
  other.queue(a, c, b);
  single.queue(b);
  hub.flush();
  t.equal(same1.out, same2.out, 'the same lines: the very same buffer');
  t.equal(same1.out!.toString(), 'AMD'.split('').map((k) => ({ A: a, M: b, D: c })[k]!.toString()).join(''));
  t.equal(fewer.out!.toString(), a.toString() + b.toString());
  t.equal(other.out!.toString(), a.toString() + c.toString() + b.toString());
  t.equal(single.out, b, 'one line is written as it is');
  // outside a flush (a replay's end) nothing is shared
  const x = hub.join([a, b]);
  const y = hub.join([a, b]);
  t.not(x, y);
  t.equal(x.toString(), y.toString());
});

t.test('a later flush does not reuse an earlier one\'s buffer', async (t) => {
  const hub = new WatchHub();
  const sent: Buffer[][] = [];
  const w = watcher(hub, sent);
  const [a, b] = [line('1'), line('2')];
  w.queue(a, b);
  hub.flush();
  const first = w.out;
  w.queue(a, b);
  hub.flush();
  t.not(w.out, first);
  t.equal(w.out!.toString(), '1\n2\n');
});
