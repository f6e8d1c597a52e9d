// One process of the start scenario (bench/start.ts): imports the library, starts a server on the
// memory store, then a second one in the same process, and reports on stdout, as JSON, the time
// each took from the call until it served and until /readyz answered ok; then stops both.
import https from 'node:https';

const t0 = performance.now();
const { startServer } = await import('../kernel/embed.js');
type Started = Awaited<ReturnType<typeof startServer>>;
const imported = performance.now() - t0;

/** Milliseconds from `since` until /readyz answers 200, polled every 5 ms. */
async function readyAfter(s: Started, since: number): Promise<number> {
  for (;;) {
    const status = await new Promise<number>((resolve) => {
      https.get(`${s.url}/readyz`, { ca: s.ca, headers: { authorization: `Bearer ${s.token}` } }, (res) => { res.resume(); resolve(res.statusCode!); }).on('error', () => resolve(0));
    });
    if (status === 200) return performance.now() - since;
    await new Promise((r) => setTimeout(r, 5));
  }
}

const servers: Started[] = [];
const timings: { serving: number; ready: number }[] = [];
for (let i = 0; i < 2; i++) {
  const t = performance.now();
  const s = await startServer({ memory: true });
  const serving = performance.now() - t;
  servers.push(s);
  timings.push({ serving, ready: await readyAfter(s, t) });
}
for (const s of servers) await s.stop();
process.stdout.write(JSON.stringify({ imported, first: timings[0], second: timings[1] }) + '\n');
