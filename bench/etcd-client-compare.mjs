// One-off measurement behind the etcd client choice (docs/etcd.md, docs/benchmarks.md): the `etcd3`
// npm package against this project's own client (plugins/storage/etcd3/client.ts), on the same etcd.
//   npm install --no-save etcd3 && npm run -s build && node bench/etcd-client-compare.mjs http://127.0.0.1:2379
// Prints creates/s (transactions with a create_revision compare, 64 in flight) and the ms to read
// 10,000 keys of 400 bytes, per round: [package, own client].
import { Etcd3 } from 'etcd3';
import { EtcdClient } from '../dist/plugins/storage/etcd3/client.js';
import { rpc, CompareResult, CompareTarget } from '../dist/plugins/storage/etcd3/proto.js';
const url = process.argv[2];
const N = 2000, C = 64, val = Buffer.alloc(400, 'x');
async function pool(n, f) { let i = 0; await Promise.all(Array.from({ length: C }, async () => { while (i < n) await f(i++); })); }
async function time(label, f) { const t = performance.now(); await f(); const ms = performance.now() - t; return ms; }
const res = {};
for (let round = 0; round < 3; round++) {
  const pkg = new Etcd3({ hosts: url, grpcOptions: { 'grpc.max_receive_message_length': -1 } });
  const raw = new EtcdClient({ servers: [url], timeoutMs: 10000 });
  const p = `/cmp${round}`;
  // txn create (compare create_revision = 0, then put), as the backend writes
  const a = await time('pkg', () => pool(N, (i) => pkg.if(`${p}/pkg/${i}`, 'Create', '==', 0).then(pkg.put(`${p}/pkg/${i}`).value(val)).commit()));
  const b = await time('raw', () => pool(N, (i) => { const key = Buffer.from(`${p}/raw/${i}`); return raw.call(rpc.txn, { compare: [{ result: CompareResult.EQUAL, target: CompareTarget.CREATE, key, create_revision: 0 }], success: [{ request_put: { key, value: val } }], failure: [] }, false); }));
  // fill 10,000 keys for the range
  await pool(10000 - N, (i) => raw.call(rpc.txn, { compare: [], success: [{ request_put: { key: Buffer.from(`${p}/raw/x${i}`), value: val } }], failure: [] }, false));
  const c = await time('pkg range', () => pkg.getAll().prefix(`${p}/raw/`).buffers());
  const d = await time('raw range', () => raw.call(rpc.range, { key: Buffer.from(`${p}/raw/`), range_end: Buffer.from(`${p}/raw0`) }, true));
  (res.txn ??= []).push([Math.round(N / a * 1000), Math.round(N / b * 1000)]);
  (res.range ??= []).push([Math.round(c), Math.round(d)]);
  pkg.close(); raw.close();
}
console.log(JSON.stringify(res));
