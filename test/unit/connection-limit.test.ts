// The connections a node:tls listener takes (kernel/ops/connections.ts): --max-connections, and no
// more than the open-file limit leaves once its reserve (a quarter, at most 1,500) is kept.
import t from 'tap';
import { connectionLimit, openFileLimit } from '../../kernel/ops/connections.js';

t.equal(connectionLimit(10_000, 3, 400), 100, '400 descriptors: 100 kept, 300 left, 3 a connection');
t.equal(connectionLimit(10_000, 1, 20_000), 10_000, '20,000 descriptors, 1 a connection: --max-connections bounds');
t.equal(connectionLimit(10_000, 3, 20_000), 6_166, '20,000 descriptors, 3 a connection: (20,000 - 1,500) / 3');
t.equal(connectionLimit(50, 1, 1_048_576), 50, 'a smaller --max-connections wins');
t.equal(connectionLimit(10_000, 3, Infinity), 10_000, 'no limit known: --max-connections alone');
t.equal(connectionLimit(10_000, 3, 4), 1, 'never below one');
t.equal(connectionLimit(undefined, 1, 1_048_576), 10_000, 'default 10,000');
const own = openFileLimit();
t.ok(own > 0, `this process's limit is read from /proc (${own})`);
