// Builds the kernel's one native helper, kernel/ops/native/malloc-trim.c, into dist/ (npm run build
// runs it after tsc). It needs a C compiler and glibc (malloc_trim, mallinfo2: glibc 2.33 or later);
// without them the server runs as before and says at start that freed memory stays in the process.
// CC picks the compiler (default cc).
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'kernel/ops/native/malloc-trim.c');
const out = path.join(root, 'dist/kernel/ops/native/malloc-trim.node');
mkdirSync(path.dirname(out), { recursive: true });
rmSync(out, { force: true });
const cc = process.env.CC || 'cc';
// -shared without -z defs: the Node-API functions resolve against the node binary when it loads the module
const r = spawnSync(cc, ['-O2', '-Wall', '-shared', '-fPIC', '-o', out, src, '-lpthread'], { encoding: 'utf8' });
if (r.error || r.status !== 0) {
  const why = r.error ? r.error.message : r.stderr.trim().split('\n').slice(0, 3).join(' ');
  console.log(`build-native: ${path.relative(root, src)} not built (${why}): the server will not return freed C memory to the system`);
}
