// Libraries for custom resource features most servers never see load with their first use, not with
// the apiextensions plugin: @bufbuild/cel with the first rule compiled (cel-lib.ts; it held 4 MiB of
// heap from start-up), re2js with the first `pattern` (schema.ts; 0.6 MiB). Checked in a fresh
// process, which records every module it loads.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';

const plugin = new URL('../../plugins/types/apiextensions/index.js', import.meta.url).href;
const cel = new URL('../../plugins/types/apiextensions/cel.js', import.meta.url).href;
const schema = new URL('../../plugins/types/apiextensions/schema.js', import.meta.url).href;

t.test('the CEL and RE2 libraries load with their first use, not before', async (t) => {
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
    const required = (lib) => Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes(lib)).length;
    const loaded = () => required('@bufbuild/cel');
    await import(${JSON.stringify(plugin)});
    const { compileRules } = await import(${JSON.stringify(cel)});
    const { re2 } = await import(${JSON.stringify(schema)});
    appendFileSync(${JSON.stringify(log)}, 'required before: ' + loaded() + '\\nre2js before: ' + required('re2js') + '\\n');
    const re = re2('^a+$');
    appendFileSync(${JSON.stringify(log)}, 're2js after: ' + (required('re2js') > 0) + '\\nmatches: ' + (re.matches('aaa') && !re.matches('b')) + '\\n');
    const errors = [];
    const node = compileRules({ type: 'object', properties: { n: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.n > 0' }] }, '', errors);
    appendFileSync(${JSON.stringify(log)}, 'compiled: ' + (node !== undefined && errors.length === 0) + '\\nrequired after: ' + (loaded() > 0) + '\\n');`;
  execFileSync(process.execPath, ['--import', path.join(dir, 'register.mjs'), '--input-type=module', '-e', script], { encoding: 'utf8' });
  const lines = readFileSync(log, 'utf8').split('\n');
  t.ok(lines.some((l) => l.includes('/apiextensions/index.js')), 'the plugin was loaded');
  t.same(lines.filter((l) => l.includes('@bufbuild/cel') || l.includes('/re2js/')), [], 'no module of either library loaded with the plugin');
  t.ok(lines.includes('re2js before: 0'), 're2js not required before a pattern');
  t.ok(lines.includes('re2js after: true') && lines.includes('matches: true'), 'a pattern compiles and matches, with re2js loaded then');
  t.ok(lines.includes('required before: 0'), 'nor required');
  t.ok(lines.includes('compiled: true'), 'a rule compiles');
  t.ok(lines.includes('required after: true'), 'with the library, loaded then');
});
