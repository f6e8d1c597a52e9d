// @bufbuild/cel is loaded when the first rule is compiled, not with the apiextensions plugin
// (plugins/types/apiextensions/cel-lib.ts): most servers never compile one, and the library held
// 4 MiB of heap from start-up. Checked in a fresh process, which records every module it loads.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';

const plugin = new URL('../../plugins/types/apiextensions/index.js', import.meta.url).href;
const cel = new URL('../../plugins/types/apiextensions/cel.js', import.meta.url).href;

t.test('the CEL library loads with the first rule compiled, not before', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cel-lazy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = path.join(dir, 'loaded.txt');
  // module hooks see every ES module loaded; require() is read from its cache
  writeFileSync(path.join(dir, 'hooks.mjs'), `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) { appendFileSync(${JSON.stringify(log)}, url + '\\n'); return next(url, context); }`);
  writeFileSync(path.join(dir, 'register.mjs'), `import { register } from 'node:module'; register(${JSON.stringify(new URL(`file://${path.join(dir, 'hooks.mjs')}`).href)});`);
  const script = `
    import { createRequire } from 'node:module';
    import { appendFileSync } from 'node:fs';
    const loaded = () => Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('@bufbuild/cel')).length;
    await import(${JSON.stringify(plugin)});
    const { compileRules } = await import(${JSON.stringify(cel)});
    appendFileSync(${JSON.stringify(log)}, 'required before: ' + loaded() + '\\n');
    const errors = [];
    const node = compileRules({ type: 'object', properties: { n: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.n > 0' }] }, '', errors);
    appendFileSync(${JSON.stringify(log)}, 'compiled: ' + (node !== undefined && errors.length === 0) + '\\nrequired after: ' + (loaded() > 0) + '\\n');`;
  execFileSync(process.execPath, ['--import', path.join(dir, 'register.mjs'), '--input-type=module', '-e', script], { encoding: 'utf8' });
  const lines = readFileSync(log, 'utf8').split('\n');
  t.ok(lines.some((l) => l.includes('/apiextensions/index.js')), 'the plugin was loaded');
  t.same(lines.filter((l) => l.includes('@bufbuild/cel')), [], 'no module of the CEL library loaded with the plugin');
  t.ok(lines.includes('required before: 0'), 'nor required');
  t.ok(lines.includes('compiled: true'), 'a rule compiles');
  t.ok(lines.includes('required after: true'), 'with the library, loaded then');
});
