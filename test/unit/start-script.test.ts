// npm start (scripts/start.mjs) says what it does before a build that can take tens of seconds, and
// starts without building when nothing changed. Run on a scratch copy of the script with a stand-in
// tree (a build script that only writes the entry point), so the real dist/ is never touched.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../lib/server.js';

t.test('npm start announces a build, then starts; an unchanged tree starts at once', async (t) => {
  const dir = t.testdir({
    'package.json': JSON.stringify({ type: 'module', scripts: { build: 'node -e "require(\'fs\').mkdirSync(\'dist/kernel\',{recursive:true});require(\'fs\').writeFileSync(\'dist/kernel/main.js\',\'console.log(\\"started\\")\')"' } }),
    'tsconfig.json': '{}',
    kernel: { 'main.ts': '// a source' },
    plugins: {}, workers: {}, test: {}, bench: {},
  });
  mkdirSync(path.join(dir, 'scripts'));
  copyFileSync(path.join(repoRoot, 'scripts/start.mjs'), path.join(dir, 'scripts/start.mjs'));
  const first = spawnSync(process.execPath, [path.join(dir, 'scripts/start.mjs')], { cwd: dir, encoding: 'utf8' });
  t.equal(first.status, 0, first.stderr);
  t.match(first.stderr, /^cluster-apiserver: compiling TypeScript into dist\/ \(first start\); this can take a minute\.\.\.\n/, 'says it compiles, before compiling');
  t.match(first.stderr, /cluster-apiserver: compiled in \d+\.\d s; starting\n/);
  t.equal(first.stdout, 'started\n');
  // Sources older than the build: no compile, no message.
  const past = new Date(Date.now() - 60_000);
  utimesSync(path.join(dir, 'kernel/main.ts'), past, past);
  for (const f of ['package.json', 'tsconfig.json']) utimesSync(path.join(dir, f), past, past);
  const again = spawnSync(process.execPath, [path.join(dir, 'scripts/start.mjs')], { cwd: dir, encoding: 'utf8' });
  t.equal(again.stderr, '', 'nothing to say');
  t.equal(again.stdout, 'started\n');
  // A changed source: built again, saying why.
  writeFileSync(path.join(dir, 'kernel/main.ts'), '// changed');
  const changed = spawnSync(process.execPath, [path.join(dir, 'scripts/start.mjs')], { cwd: dir, encoding: 'utf8' });
  t.match(changed.stderr, /compiling TypeScript into dist\/ \(sources changed since the last build\)/);
});
