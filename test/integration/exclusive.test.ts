// One server per data directory (a lock naming the holder's pid) and per port (no SO_REUSEPORT sharing).
import { rmSync } from 'node:fs';
import t from 'tap';
import { startServer, withServer } from '../lib/server.js';
import { run, tmpDir } from '../lib/datadir.js';

t.test('a second server on the same data directory is refused, naming the process that holds it', async (t) => {
  const s = await startServer({ keepDataDir: true });
  t.teardown(() => rmSync(s.dataDir, { recursive: true, force: true }));
  const r = run(['--data-dir', s.dataDir, '--secure-port', '0']);
  t.not(r.status, 0, 'refused');
  t.match(r.stderr, new RegExp(`data directory .* is in use by process ${s.proc.pid}\\b`), 'names the pid');
  t.equal((await s.get('/readyz')).status, 200, 'the first server is unaffected');
  // after a SIGKILL the lock is stale and a new server takes over
  await s.stop('SIGKILL');
  const s2 = await startServer({ dataDir: s.dataDir, keepDataDir: true });
  t.teardown(() => s2.stop());
  t.equal((await s2.get('/readyz')).status, 200, 'a stale lock (dead process) is taken over');
});

t.test('a port in use fails start-up with an error naming the port', async (t) => {
  const s = await withServer(t);
  const other = tmpDir(t);
  const r = run(['--data-dir', other, '--secure-port', String(s.port)]);
  t.not(r.status, 0, 'the second server does not start');
  t.match(r.stderr, new RegExp(`port ${s.port} is already in use`), 'names the port');
  // uWebSockets.js serving the port itself (no client certificates) must not share it through SO_REUSEPORT
  const u = await withServer(t, { args: ['--secure-port-client-certs=false'] });
  for (const args of [['--secure-port-client-certs=false'], []]) {
    const r2 = run(['--data-dir', tmpDir(t), '--secure-port', String(u.port), ...args]);
    t.not(r2.status, 0, `a second server on a uWS-served port does not start (${args.join(' ') || 'node:tls front'})`);
    t.match(r2.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${u.port}: port ${u.port} is already in use`), 'names the port');
  }
  t.equal((await u.get('/readyz')).status, 200, 'the first server keeps serving');
});

