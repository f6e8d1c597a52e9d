// An admission plugin published as an npm package: pack the fixture, install the tarball into a
// scratch project, and load it by package name the way a config file would name it.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { getBrand } from '../../kernel/contracts/brand.js';
import type { AdmissionAttributes, KObject, PluginHost } from '../../kernel/contracts/index.js';
import { loadPlugin } from '../../kernel/ops/loader.js';

const run = promisify(execFile);
// the fixture stays in the source tree; this file runs from dist/test/integration/
const fixture = fileURLToPath(new URL('../../../test/fixtures/example-plugin', import.meta.url));

const host = { brand: getBrand('cluster'), dataDir: '/tmp', log: { info() {}, v() {}, warn() {}, error() {} }, featureGates: {} } as unknown as PluginHost;

t.test('load an admission plugin installed from an npm tarball', async (t) => {
  const work = await mkdtemp(path.join(tmpdir(), 'npm-plugin-'));
  const npmEnv = { ...process.env, npm_config_update_notifier: 'false' };
  const packed = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: fixture, env: npmEnv });
  const tarball = path.join(work, (JSON.parse(packed.stdout) as { filename: string }[])[0].filename);

  const project = path.join(work, 'project');
  await run('mkdir', ['-p', project]);
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'scratch', version: '1.0.0', private: true }));
  await run('npm', ['install', '--no-audit', '--no-fund', '--offline', tarball], { cwd: project, env: npmEnv });

  const plugin = await loadPlugin('admission', { plugin: 'example-admission-plugin', options: { label: 'example.io/seen' } }, host, { configDir: project });
  const obj: KObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default', labels: { app: 'x' } } };
  const attrs = { operation: 'CREATE', object: obj, namespace: 'default', name: 'cm' } as unknown as AdmissionAttributes;
  t.ok(plugin.handles('CREATE', attrs));
  t.notOk(plugin.handles('DELETE', attrs));
  await plugin.admit?.(attrs);
  t.same(obj.metadata?.labels, { app: 'x', 'example.io/seen': 'true' });

  // not installed anywhere: a clear error naming where it looked
  await t.rejects(loadPlugin('admission', { plugin: 'not-installed-plugin' }, host, { configDir: project }),
    { message: `plugin "not-installed-plugin" (admission): not found (looked for built-in plugins/admission/not-installed-plugin, and npm package "not-installed-plugin" from ${project})` });
});
