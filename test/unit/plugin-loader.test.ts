import t from 'tap';
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getBrand } from '../../kernel/contracts/brand.js';
import type { AuthorizationAttributes, PluginHost } from '../../kernel/contracts/index.js';
import { HOST_VERSION, loadAll, loadPlugin, satisfies } from '../../kernel/ops/loader.js';

// just enough of a host for plugins that do not touch it
const host = {
  brand: getBrand('cluster'),
  dataDir: '/tmp',
  log: { info() {}, v() {}, warn() {}, error() {} },
  type: () => undefined,
  featureGates: {},
} as unknown as PluginHost;

const attrs = { user: { username: 'u', groups: [] }, verb: 'get' } as unknown as AuthorizationAttributes;

async function pluginDir(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'loader-test-'));
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), text);
  }
  return dir;
}

const authorizer = (extra = '', kind = 'authorizer', contract = '1') => `export default {
  kind: '${kind}', contract: ${contract}, name: 'test', ${extra}
  create: (options) => ({ authorize: () => ({ decision: options.decision ?? 'allow' }) }),
};\n`;

t.test('built-in plugin by name', async (t) => {
  const allow = await loadPlugin('authorizer', { plugin: 'always-allow' }, host, { configDir: '/' });
  t.same(await allow.authorize(attrs), { decision: 'allow' });
  const deny = await loadPlugin('authorizer', { plugin: 'always-deny' }, host, { configDir: '/' });
  t.equal((await deny.authorize(attrs)).decision, 'deny');
  const anon = await loadPlugin('authenticator', { plugin: 'anonymous' }, host, { configDir: '/' });
  t.type(anon.authenticate, 'function');
});

t.test('plugin by path, relative to the config directory, with options', async (t) => {
  const dir = await pluginDir({ 'p/auth.js': authorizer(), 'pkg/package.json': '{"main":"main.js"}', 'pkg/main.js': authorizer() });
  const p = await loadPlugin('authorizer', { plugin: './p/auth.js', options: { decision: 'deny' } }, host, { configDir: dir });
  t.same(await p.authorize(attrs), { decision: 'deny' });
  const abs = await loadPlugin('authorizer', { plugin: path.join(dir, 'p/auth.js') }, host, { configDir: '/' });
  t.same(await abs.authorize(attrs), { decision: 'allow' });
  const pkgDir = await loadPlugin('authorizer', { plugin: './pkg' }, host, { configDir: dir });
  t.type(pkgDir.authorize, 'function', 'a directory loads its main');
  const all = await loadAll('authorizer', [{ plugin: 'always-deny' }, { plugin: './p/auth.js' }, { plugin: 'always-allow' }], host, { configDir: dir });
  t.same(await Promise.all(all.map(async (a) => (await a.authorize(attrs)).decision)), ['deny', 'allow', 'allow'], 'loadAll keeps order');
});

t.test('errors name the plugin and kind', async (t) => {
  const dir = await pluginDir({
    'c2.js': authorizer('', 'authorizer', '2'),
    'nocontract.js': `export default { kind: 'authorizer', name: 'x', create() {} };\n`,
    'kind.js': authorizer('', 'admission'),
    'nocreate.js': `export const kind = 'authorizer'; export const contract = 1; export const name = 'x';\n`,
    'host.js': authorizer(`host: '>=99.0.0 <100.0.0',`),
    'badhost.js': authorizer(`host: 'latest',`),
    'hostok.js': authorizer(`host: '^${HOST_VERSION}',`),
    'broken.js': 'export default {\n',
    'throws.js': `export default { kind: 'authorizer', contract: 1, name: 'x', create() { throw new Error('no config'); } };\n`,
    'empty.js': `export default { kind: 'authorizer', contract: 1, name: 'x', create: () => ({}) };\n`,
  });
  const load = (plugin: string, kind: 'authorizer' | 'admission' = 'authorizer') =>
    loadPlugin(kind, { plugin }, host, { configDir: dir }).then(() => 'loaded', (e: Error) => e.message);

  t.equal(await load('./c2.js'), 'plugin "./c2.js" (authorizer): declares contract 2, this server implements contract 1');
  t.match(await load('./nocontract.js'), /^plugin "\.\/nocontract\.js" \(authorizer\): declares no contract version/);
  t.equal(await load('./kind.js'), 'plugin "./kind.js" (authorizer): declares kind "admission", expected "authorizer"');
  t.equal(await load('./nocreate.js'), 'plugin "./nocreate.js" (authorizer): has no create() function');
  t.equal(await load('./host.js'), `plugin "./host.js" (authorizer): requires cluster-apiserver ">=99.0.0 <100.0.0", this server is ${HOST_VERSION}`);
  t.equal(await load('./badhost.js'), 'plugin "./badhost.js" (authorizer): invalid version range "latest"');
  t.equal(await load('./hostok.js'), 'loaded');
  t.match(await load('./broken.js'), /^plugin "\.\/broken\.js" \(authorizer\): cannot import .*broken\.js/);
  t.equal(await load('./throws.js'), 'plugin "./throws.js" (authorizer): create() failed: no config');
  t.equal(await load('./empty.js'), 'plugin "./empty.js" (authorizer): create() returned an object without authorize()');
  t.equal(await load('./missing.js'), `plugin "./missing.js" (authorizer): not found: ${path.join(dir, 'missing.js')}`);
  t.equal(await load('foo', 'admission'),
    `plugin "foo" (admission): not found (looked for built-in plugins/admission/foo, and npm package "foo" from ${dir})`);
  // a built-in of another kind is not found under this kind
  t.match(await load('anonymous'), /^plugin "anonymous" \(authorizer\): not found \(looked for built-in plugins\/authorizers\/anonymous/);
});

t.test('npm package next to the config file, ESM-only exports', async (t) => {
  const dir = await pluginDir({
    'node_modules/esm-only-auth/package.json': JSON.stringify({ name: 'esm-only-auth', type: 'module', exports: { '.': { import: './lib/index.js' } } }),
    'node_modules/esm-only-auth/lib/index.js': authorizer(),
    'node_modules/@acme/auth/package.json': JSON.stringify({ name: '@acme/auth', main: 'index.mjs' }),
    'node_modules/@acme/auth/index.mjs': authorizer(),
  });
  const a = await loadPlugin('authorizer', { plugin: 'esm-only-auth' }, host, { configDir: dir });
  t.type(a.authorize, 'function');
  const b = await loadPlugin('authorizer', { plugin: '@acme/auth' }, host, { configDir: path.join(dir, 'sub', 'dir') });
  t.type(b.authorize, 'function', 'found from a subdirectory, scoped name');
});

t.test('version ranges', async (t) => {
  const yes: [string, string][] = [
    ['0.1.0', '*'], ['0.1.0', '0.1.0'], ['0.1.5', '0.1'], ['0.1.0', '>=0.1.0 <1.0.0'], ['0.1.0', '>=0.1 <1'],
    ['0.1.9', '^0.1'], ['0.1.2', '^0.1.2'], ['1.4.0', '^1.2'], ['1.2.9', '~1.2'], ['1.2.3', '~1.2.3'],
    ['1.0.0', '>0.9.9'], ['1.0.0', '<=1.0.0'], ['2.0.0', '1.x || 2.x'], ['1.5.0', '>= 1.0.0'], ['0.0.3', '^0.0.3'],
    ['1.3.0', '>1.2'], ['1.2.9', '<=1.2'], ['3.0.0', '>=1'],
  ];
  const no: [string, string][] = [
    ['0.2.0', '^0.1'], ['2.0.0', '^1.2'], ['1.3.0', '~1.2'], ['1.0.0', '>=0.1.0 <1.0.0'], ['0.1.0', '0.1.1'],
    ['1.2.5', '>1.2'], ['1.3.0', '<=1.2'], ['0.0.4', '^0.0.3'], ['0.1.0', '>=99'], ['3.0.0', '1.x || 2.x'],
  ];
  for (const [v, r] of yes) t.ok(satisfies(v, r), `${v} satisfies ${r}`);
  for (const [v, r] of no) t.notOk(satisfies(v, r), `${v} does not satisfy ${r}`);
  t.throws(() => satisfies('0.1.0', 'latest'), /invalid version range/);
  t.ok(satisfies(HOST_VERSION, '>=0.0.0'), `host version ${HOST_VERSION} parses`);
});
