// kubectl debug against a server without ephemeral containers: every 404 carries `details`, so stock
// kubectl (1.27 to 1.33) reports the missing sub-resource instead of panicking on a nil pointer.
import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { withServer } from '../lib/server.js';

const DIR = '/usr/lib/google-cloud-sdk/bin';
const versions = ['1.27', '1.28', '1.30', '1.32', '1.33'].filter((v) => existsSync(path.join(DIR, `kubectl.${v}`)));

t.test('kubectl debug: a clear error, no panic', { skip: versions.length ? false : `no kubectl.<version> in ${DIR}; .ci/run installs them` }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const made = await s.request('POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name: 'dbg' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } });
  t.equal(made.status, 201, made.text);
  for (const v of versions) {
    const r = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(path.join(DIR, `kubectl.${v}`), ['--kubeconfig', path.join(s.dataDir, 'admin.kubeconfig'), 'debug', 'dbg', '--image=busybox'], { timeout: 60_000, env: { ...process.env, HOME: s.dataDir } }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` });
      });
    });
    t.not(r.code, 0, `kubectl ${v}: refused`);
    t.notMatch(r.out, /panic|nil pointer/, `kubectl ${v}: no panic`);
    t.match(r.out, /ephemeral containers are disabled/, `kubectl ${v}: names the cause: ${r.out.trim()}`);
  }
});
