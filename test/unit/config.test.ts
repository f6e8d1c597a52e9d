import t from 'tap';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultConfig, fillServiceOptions, loadConfig, configSchema } from '../../kernel/ops/config.js';
import { DEFAULT_ADMISSION_PLUGINS, SECURE_DEFAULT_ADMISSION, orderAdmission } from '../../kernel/ops/flags.js';

const noEnv = {};

async function tmpFile(name: string, text: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'config-test-'));
  const file = path.join(dir, name);
  await writeFile(file, text);
  return file;
}

t.test('defaults', async (t) => {
  const c = await loadConfig([], noEnv);
  const d = defaultConfig();
  fillServiceOptions(d); // the service ranges reach the plugins that use them
  t.same(c, d);
  t.equal(c.brand, 'cluster');
  t.equal(c.dataDir, './data');
  t.equal(c.bindAddress, '127.0.0.1');
  t.equal(c.securePort, 6443);
  t.equal(c.maxRequestBodyBytes, 3145728);
  t.same(c.storage, { plugin: 'embedded', options: { retentionSeconds: 300, groupCommit: true } });
  t.same(c.types, [{ plugin: 'builtin', options: { serviceClusterIPRange: '10.96.0.0/12', serviceNodePortRange: '30000-32767' } }, { plugin: 'access' }, { plugin: 'apiextensions' }, { plugin: 'apiregistration' }, { plugin: 'certificates' }]);
  t.same(c.authentication, [
    { plugin: 'x509', options: { clientCAFile: path.join('data', 'pki', 'ca.crt') } },
    { plugin: 'token-file', options: { file: path.join('data', 'pki', 'tokens.csv') } },
    { plugin: 'service-account' },
    { plugin: 'bootstrap-token' },
    { plugin: 'anonymous' },
  ], 'a careful default: certificates, tokens, service accounts, bootstrap tokens; anonymous last');
  t.same(c.authorization, [{ plugin: 'node' }, { plugin: 'rbac' }], 'Node,RBAC; never always-allow');
  t.same(c.controllers.map((r) => r.plugin), ['system-namespaces', 'namespace', 'garbage-collector', 'storage-protection', 'crd', 'apiservice', 'apiserver-service', 'disruption', 'flowcontrol-config', 'root-ca-publisher', 'cluster-authentication-trust', 'csrsigning', 'csrapproving', 'csrcleaner', 'serviceaccount', 'serviceaccount-token', 'tokencleaner', 'bootstrapsigner', 'event-ttl']);
  t.same(c.signers.map((r) => r.plugin), ['apiserver-client', 'apiserver-client-nodeagent', 'nodeagent-serving', 'legacy-unknown']);
  t.same(c.emulatedVersion, { major: '1', minor: '28', gitVersion: 'v1.28.7' });
  t.equal(c.configFile, undefined);
  // only default-on plugins that exist in this build, and NodeRestriction (with the Node authorizer)
  for (const r of c.admission) t.ok(DEFAULT_ADMISSION_PLUGINS.includes(r.plugin) || SECURE_DEFAULT_ADMISSION.includes(r.plugin), r.plugin);
  t.ok(c.admission.some((r) => r.plugin === 'NodeRestriction'), 'NodeRestriction is on');
  t.same(configSchema.type, 'object');
});

t.test('YAML file over defaults', async (t) => {
  const file = await tmpFile('server.yaml', [
    '# a comment',
    'securePort: 7443',
    'dataDir: state',
    'storage:',
    '  plugin: embedded',
    '  options: { retentionSeconds: 60 }',
    'authentication:',
    '  - plugin: token-file',
    '  - plugin: ./my-auth.js',
    '    options: { realm: x }',
    'featureGates: { Foo: true }',
    'runtimeConfig: { batch/v1: false }',
    'emulatedVersion: { major: "1", minor: "29" }',
    'tls: { certFile: certs/tls.crt, keyFile: /abs/tls.key }',
    '',
  ].join('\n'));
  const dir = path.dirname(file);
  const c = await loadConfig(['--config', file], noEnv);
  t.equal(c.securePort, 7443);
  t.equal(c.dataDir, path.join(dir, 'state'), 'relative paths follow the file');
  t.same(c.storage, { plugin: 'embedded', options: { retentionSeconds: 60, groupCommit: true } }, 'same storage plugin: options merge');
  t.same(c.authentication, [
    { plugin: 'token-file', options: { file: path.join(dir, 'state', 'pki', 'tokens.csv') } },
    { plugin: './my-auth.js', options: { realm: 'x' } },
  ]);
  t.same(c.featureGates, { Foo: true });
  t.same(c.runtimeConfig, { 'batch/v1': false });
  t.same(c.emulatedVersion, { major: '1', minor: '29', gitVersion: 'v1.29.0' });
  t.same(c.tls, { certFile: path.join(dir, 'certs/tls.crt'), keyFile: '/abs/tls.key' });
  t.equal(c.configFile, file);
  t.same(c.authorization, [{ plugin: 'node' }, { plugin: 'rbac' }], 'untouched keys keep defaults');
});

t.test('JSON file; other storage plugin replaces options', async (t) => {
  const file = await tmpFile('server.json', JSON.stringify({ brand: 'kubernetes', storage: { plugin: 'etcd', options: { endpoints: ['x'] } }, admission: [] }));
  const c = await loadConfig([`--config=${file}`], noEnv);
  t.equal(c.brand, 'kubernetes');
  t.same(c.storage, { plugin: 'etcd', options: { endpoints: ['x'] } });
  t.same(c.admission, []);
});

t.test('controllers: enable and disable over the default list (or the file\'s own)', async (t) => {
  const load = async (text: string) => loadConfig(['--config', await tmpFile('server.yaml', text)], noEnv);
  const names = (c: { controllers: { plugin: string }[] }) => c.controllers.map((r) => r.plugin);
  const defaults = names(defaultConfig());
  const c = await load(['enableControllers:', '  - plugin: scheduler', '  - plugin: event-ttl', '    options: { ttlSeconds: 60 }', 'disableControllers: [disruption]', ''].join('\n'));
  t.same(names(c), [...defaults.filter((n) => n !== 'disruption'), 'scheduler'], 'defaults kept in order, one added at the end, one taken out');
  t.same(c.controllers.find((r) => r.plugin === 'event-ttl')!.options, { ttlSeconds: 60 }, 'a default named again takes options');
  const own = await load(['controllers: [{ plugin: namespace }]', 'enableControllers: [{ plugin: scheduler }]', ''].join('\n'));
  t.same(names(own), ['namespace', 'scheduler'], 'over the file\'s own list');
});

t.test('admission: enable and disable over the defaults; replace on purpose; the old key kept and warned about', async (t) => {
  const load = async (text: string) => loadConfig(['--config', await tmpFile('server.yaml', text)], noEnv);
  const names = (c: { admission: { plugin: string }[] }) => c.admission.map((r) => r.plugin);
  const defaults = names(defaultConfig());

  const enabled = await load(['enableAdmissionPlugins:', '  - plugin: ./my-admission.js', '    options: { label: x }', '  - plugin: DefaultTolerationSeconds', '    options: { defaultNotReadyTolerationSeconds: 60 }', ''].join('\n'));
  t.same(names(enabled).filter((n) => n !== './my-admission.js'), defaults, 'every default stays, in its order');
  const mine = names(enabled).indexOf('./my-admission.js');
  t.equal(names(enabled)[mine + 1], 'MutatingAdmissionWebhook', 'a plugin of its own runs after the in-tree ones, before the webhooks');
  t.same(enabled.admission[mine].options, { label: 'x' });
  t.same(enabled.admission.find((r) => r.plugin === 'DefaultTolerationSeconds')!.options, { defaultNotReadyTolerationSeconds: 60 }, 'a default named again takes options');
  t.equal(enabled.warnings, undefined, 'no warning');

  const disabled = await load('disableAdmissionPlugins: [NodeRestriction, ResourceQuota]\nenableAdmissionPlugins: [{ plugin: AlwaysPullImages }]\n');
  t.same(names(disabled), orderAdmission([...defaults.filter((n) => n !== 'NodeRestriction' && n !== 'ResourceQuota'), 'AlwaysPullImages']), 'two out, one in');
  t.ok(names(disabled).indexOf('AlwaysPullImages') < names(disabled).indexOf('PodSecurity'), 'in the reference order');

  const replaced = await load('replaceAdmissionPlugins: [{ plugin: NamespaceLifecycle }, { plugin: ./mine.js }]\n');
  t.same(names(replaced), ['NamespaceLifecycle', './mine.js'], 'replace: the list as written');
  t.equal(replaced.warnings, undefined, 'replacing on purpose is not warned about');

  const old = await load('admission: [{ plugin: NamespaceLifecycle }, { plugin: ./mine.js }]\n');
  t.same(names(old), ['NamespaceLifecycle', './mine.js'], 'the old key still replaces, as it did');
  t.equal(old.warnings?.length, 1);
  t.match(old.warnings![0], /REPLACES the default admission plugins and leaves out \d+ of them.*ServiceAccount.*NodeRestriction.*enableAdmissionPlugins.*replaceAdmissionPlugins/);
  const oldFull = await load(`admission: [${defaults.map((n) => `{ plugin: ${n} }`).join(', ')}]\n`);
  t.match(oldFull.warnings, [/names them all/], 'an old list that keeps every default still says which key to use');

  const bad = async (text: string, re: RegExp) => t.rejects(load(text), re, text);
  await bad('admission: []\nreplaceAdmissionPlugins: []\n', /"admission" is the old spelling of "replaceAdmissionPlugins"/);
  await bad('replaceAdmissionPlugins: []\nenableAdmissionPlugins: [{ plugin: x }]\n', /replaces the whole admission list, so "enableAdmissionPlugins" has nothing to change/);
  await bad('admission: []\ndisableAdmissionPlugins: [NodeRestriction]\n', /"admission" replaces the whole admission list/);
  await bad('disableAdmissionPlugins: [NoSuchPlugin]\n', /unknown admission plugin "NoSuchPlugin" in disableAdmissionPlugins/);
  await bad('disableAdmissionPlugins: [Priority]\nenableAdmissionPlugins: [{ plugin: Priority }]\n', /"Priority" is both enabled and disabled/);
  await bad('enableAdmissionPlugins: [NamespaceLifecycle]\n', /enableAdmissionPlugins\/0: must be object/);

  const flagsOver = await loadConfig(['--config', await tmpFile('s.yaml', 'enableAdmissionPlugins: [{ plugin: ./mine.js }]\n'), '--disable-admission-plugins=NodeRestriction'], noEnv);
  t.ok(names(flagsOver).includes('./mine.js') && !names(flagsOver).includes('NodeRestriction'), 'the flags apply over the file');
});

t.test('empty file is an empty configuration; env names the file', async (t) => {
  const file = await tmpFile('empty.yaml', '');
  const c = await loadConfig([], { CLUSTER_APISERVER_CONFIG: file });
  t.equal(c.configFile, file);
  t.equal(c.securePort, 6443);
});

t.test('errors name the file and the key path', async (t) => {
  const bad = async (text: string, name = 'bad.yaml') => {
    const file = await tmpFile(name, text);
    const err = await loadConfig(['--config', file], noEnv).then(() => undefined, (e: Error) => e);
    return { file, msg: err?.message ?? '(no error)' };
  };
  let r = await bad('storag: {}\n');
  t.equal(r.msg, `config file ${r.file}: unknown key "storag" at /`);
  r = await bad('authentication:\n  - options: {}\n');
  t.equal(r.msg, `config file ${r.file}: /authentication/0: must have required property 'plugin'`);
  r = await bad('tls: { cert: x }\n');
  t.equal(r.msg, `config file ${r.file}: unknown key "cert" at /tls`);
  r = await bad('securePort: high\n');
  t.equal(r.msg, `config file ${r.file}: /securePort: must be integer`);
  r = await bad('brand: acme\n');
  t.match(r.msg, /\/brand: must be equal to one of the allowed values \(cluster, kubernetes\)/);
  r = await bad('featureGates: { A: yes }\n');
  t.equal(r.msg, `config file ${r.file}: /featureGates/A: must be boolean`);
  r = await bad('- 1\n');
  t.equal(r.msg, `config file ${r.file}: /: must be object`);
  r = await bad('a: [\n');
  t.match(r.msg, new RegExp(`^config file ${r.file.replace(/[.\\/]/g, '\\$&')}: cannot parse`));
  r = await bad('{"dataDir": 1,}', 'bad.json');
  t.match(r.msg, /cannot parse/);
  const missing = await loadConfig(['--config', '/nonexistent/x.yaml'], noEnv).catch((e: Error) => e.message);
  t.match(missing, /^config file \/nonexistent\/x\.yaml: ENOENT/);
});

t.test('flags over file over defaults', async (t) => {
  const file = await tmpFile('f.yaml', 'securePort: 7000\nbindAddress: 0.0.0.0\nauthorization: [{ plugin: rbac }]\nfeatureGates: { A: true, B: true }\n');
  const c = await loadConfig(['--config', file, '--secure-port=8000', '--authorization-mode=AlwaysDeny', '--feature-gates=B=false'], noEnv);
  t.equal(c.securePort, 8000);
  t.equal(c.bindAddress, '0.0.0.0');
  t.same(c.authorization, [{ plugin: 'always-deny' }]);
  t.same(c.featureGates, { A: true, B: false });
});

t.test('--data-dir moves the default token file', async (t) => {
  const c = await loadConfig(['--data-dir=/srv/api'], noEnv);
  t.equal(c.dataDir, '/srv/api');
  t.same(c.authentication.find((r) => r.plugin === 'token-file'), { plugin: 'token-file', options: { file: '/srv/api/pki/tokens.csv' } });
  t.same(c.authentication[0], { plugin: 'x509', options: { clientCAFile: '/srv/api/pki/ca.crt' } });
});

t.test('flag errors surface from loadConfig', async (t) => {
  await t.rejects(loadConfig(['--foo'], noEnv), { message: 'unknown flag: --foo' });
});

t.test('the example simulated-nodes configuration: the default controllers plus the scheduler and simulated nodes, its node agents at the emulated version', async (t) => {
  const example = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../examples/simulated-nodes.yaml');
  const c = await loadConfig(['--config', example], noEnv);
  const names = c.controllers.map((r) => r.plugin);
  const defaults = defaultConfig().controllers.map((r) => r.plugin);
  t.same(names.slice(0, defaults.length), defaults, 'every default controller kept');
  t.ok(names.includes('scheduler'), 'the built-in scheduler');
  t.equal(names[names.length - 1], 'simulated-nodes');
  t.equal(c.controllers[names.length - 1].options?.kubeletVersion, 'v1.28.7', 'kubeletVersion from the emulated version');
  const other = await loadConfig(['--config', await tmpFile('v.yaml', 'emulatedVersion: { major: "1", minor: "27" }\ncontrollers: [{ plugin: simulated-nodes }]\n')], noEnv);
  t.equal(other.controllers[0].options?.kubeletVersion, 'v1.27.0');
  const own = await loadConfig(['--config', await tmpFile('o.yaml', 'controllers: [{ plugin: simulated-nodes, options: { kubeletVersion: v1.28.1 } }]\n')], noEnv);
  t.equal(own.controllers[0].options?.kubeletVersion, 'v1.28.1', 'unless the options say');
});
