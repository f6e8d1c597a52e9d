// The configuration file's admission keys on a started server: a plugin of one's own added with
// enableAdmissionPlugins runs alongside the default plugins (NamespaceLifecycle, ServiceAccount,
// NodeRestriction...), disableAdmissionPlugins takes one out, and the old `admission` list still
// replaces the defaults, with a warning at start that names what it left out.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withServer, type TestServer } from '../lib/server.js';

// the fixtures stay in the source tree; this file runs from dist/test/integration/
const PLUGIN = fileURLToPath(new URL('../../../test/fixtures/example-plugin/index.js', import.meta.url));
const LABEL = 'example.io/admitted';

function configFile(t: { teardown(fn: () => unknown): void }, text: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'admission-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'config.yaml'), text);
  return path.join(dir, 'config.yaml');
}

const cm = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const pod = (name: string, serviceAccountName: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { serviceAccountName, containers: [{ name: 'c', image: 'busybox' }] } });
const warned = (s: TestServer) => s.logs.filter((l) => l.includes("configuration file's admission list"));

t.test('enableAdmissionPlugins adds a plugin of one\'s own to the defaults', async (t) => {
  const file = configFile(t, [
    'enableAdmissionPlugins:',
    `  - plugin: ${PLUGIN}`,
    `    options: { label: ${LABEL} }`,
    'disableAdmissionPlugins: [ResourceQuota]',
    '',
  ].join('\n'));
  const s = await withServer(t, { brand: 'kubernetes', args: ['--config', file] });
  t.same(warned(s), [], 'nothing to warn about');

  const created = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('settings', { mode: 'fast' }) });
  t.equal(created.status, 201, created.text);
  t.equal(created.json.metadata.labels?.[LABEL], 'true', 'the plugin\'s mutating phase ran');
  const leaky = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('leaky', { password: 'hunter2' }) });
  t.equal(leaky.status, 422, 'the plugin\'s validating phase ran');
  t.equal(leaky.json.message, 'ConfigMap "leaky" is invalid: data.password: keep passwords in a Secret, not in a ConfigMap');

  const nowhere = await s.request('POST', '/api/v1/namespaces/nowhere/configmaps', { body: cm('lost', { a: 'b' }) });
  t.equal(nowhere.status, 404, 'NamespaceLifecycle (a default) ran');
  t.equal(nowhere.json.message, 'namespaces "nowhere" not found');
  const ghost = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('ghostly', 'ghost') });
  t.equal(ghost.status, 403, 'ServiceAccount (a default) ran');
  t.equal(ghost.json.message, 'pods "ghostly" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found');

  // ResourceQuota is off: a quota of no ConfigMaps is not enforced.
  t.equal((await s.request('POST', '/api/v1/namespaces/default/resourcequotas', { body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'none' }, spec: { hard: { configmaps: '0' } } } })).status, 201);
  const past = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('past-quota', { a: 'b' }) });
  t.equal(past.status, 201, 'disableAdmissionPlugins took ResourceQuota out');
});

t.test('the old admission list still replaces the defaults, and start-up says so loudly', async (t) => {
  const file = configFile(t, ['admission:', '  - plugin: NamespaceLifecycle', `  - plugin: ${PLUGIN}`, ''].join('\n'));
  const s = await withServer(t, { brand: 'kubernetes', args: ['--config', file] });
  const lines = warned(s);
  t.equal(lines.length, 1, 'one warning');
  t.match(lines[0], /REPLACES the default admission plugins and leaves out/);
  t.match(lines[0], /ServiceAccount/);
  t.match(lines[0], /NodeRestriction/);
  t.match(lines[0], /enableAdmissionPlugins/);

  const created = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('settings', { mode: 'fast' }) });
  t.equal(created.json.metadata.labels?.[LABEL], 'true', 'the listed plugin runs');
  const ghost = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('ghostly', 'ghost') });
  t.equal(ghost.status, 201, 'ServiceAccount, left out of the list, does not run (what the file always meant)');
});
