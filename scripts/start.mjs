#!/usr/bin/env node
// npm start: compile only when a TypeScript source (or the compiler configuration) is newer than the
// last build, then run the server in this process. A built, unchanged tree starts without tsc.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = path.join(root, 'dist/kernel/main.js');

/** Newest modification time of the compiler's inputs. */
function newestSource() {
  let newest = Math.max(statSync(path.join(root, 'tsconfig.json')).mtimeMs, statSync(path.join(root, 'package.json')).mtimeMs);
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === 'node_modules') continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  for (const d of ['kernel', 'plugins', 'workers', 'test', 'bench']) walk(path.join(root, d));
  return newest;
}

let builtAt = 0;
try { builtAt = statSync(built).mtimeMs; } catch { /* never built */ }
if (newestSource() > builtAt) {
  // Said first: on a slow machine the compiler runs for tens of seconds without a word of its own.
  const started = Date.now();
  process.stderr.write(`cluster-apiserver: compiling TypeScript into dist/ (${builtAt ? 'sources changed since the last build' : 'first start'}); this can take a minute...\n`);
  const r = spawnSync('npm', ['run', '-s', 'build'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
  process.stderr.write(`cluster-apiserver: compiled in ${((Date.now() - started) / 1000).toFixed(1)} s; starting\n`);
}
await import(pathToFileURL(built).href);
