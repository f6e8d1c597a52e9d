// Micro-benchmark of the TLS front's per-request work (kernel/http/framer.ts): typical request heads
// pushed through a RequestFramer in a loop, nanoseconds per request. No server, no sockets.
//   node dist/bench/framer.js [path of another framer module, e.g. an older build, to compare with]
// With a second module both run in the same process, round after round in turn (a fairer comparison
// on a busy machine).
import { pathToFileURL } from 'node:url';

const mods: [string, any][] = [['this build', await import('../kernel/http/framer.js')]];
if (process.argv[2]) mods.push([process.argv[2], await import(pathToFileURL(process.argv[2]).href)]);
const token = 'eyJhbGciOiJSUzI1NiIsImtpZCI6IkFCQyJ9.' + 'x'.repeat(700) + '.' + 'y'.repeat(340);
const heads: Record<string, Buffer> = {
  'GET (kubectl, bearer token)': Buffer.from(`GET /api/v1/namespaces/default/configmaps/cm-1 HTTP/1.1\r\nHost: 127.0.0.1:6443\r\nUser-Agent: kubectl/v1.28.0 (linux/amd64) kubernetes/abcdef0\r\nAccept: application/json, */*\r\nAuthorization: Bearer ${token}\r\nAccept-Encoding: gzip\r\n\r\n`),
  'GET (bench client, short token)': Buffer.from('GET /api/v1/namespaces/bench/configmaps/cm-1 HTTP/1.1\r\nHost: 127.0.0.1:6443\r\nAuthorization: Bearer 0123456789abcdef0123456789abcdef\r\nAccept: application/json\r\n\r\n'),
  'POST with a 300-byte body': Buffer.concat([Buffer.from(`POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1:6443\r\nUser-Agent: kubectl/v1.28.0\r\nContent-Type: application/json\r\nAccept: application/json\r\nAuthorization: Bearer ${token}\r\nContent-Length: 300\r\n\r\n`), Buffer.alloc(300, 0x20)]),
};
const sink = { forward: () => true, refuse: () => { throw new Error('refused'); }, stash: () => 'x' };
const N = Number(process.env.N ?? 400_000);
for (const [name, head] of Object.entries(heads)) {
  const runs = mods.map(([label, mod]) => ({ label, f: new mod.RequestFramer(sink.forward, sink.refuse, sink.stash), times: [] as number[] }));
  for (const r of runs) for (let i = 0; i < 20_000; i++) r.f.push(head); // warm-up
  for (let round = 0; round < 7; round++) {
    for (const r of runs) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < N; i++) r.f.push(head);
      r.times.push(Number(process.hrtime.bigint() - t0) / N);
    }
  }
  for (const r of runs) {
    r.times.sort((a, b) => a - b);
    console.log(`${name.padEnd(34)} ${String(head.length).padStart(5)} B  ${r.times[0].toFixed(0).padStart(5)} ns/request best, ${r.times[3].toFixed(0).padStart(5)} median of 7  (${r.label})`);
  }
}
