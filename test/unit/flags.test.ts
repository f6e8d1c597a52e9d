import t from 'tap';
import { defaultConfig } from '../../kernel/ops/config.js';
import {
  applyFlags, parseFlags, parseDuration, usage, FLAGS, REFERENCE_ADMISSION_ORDER, DEFAULT_ADMISSION_PLUGINS,
  defaultAdmission, missingDefaultAdmission, orderAdmission,
} from '../../kernel/ops/flags.js';

const apply = (...argv: string[]) => applyFlags(defaultConfig(), parseFlags(argv));
const names = (refs: { plugin: string }[]) => refs.map((r) => r.plugin);

t.test('scalar flags, both value forms', async (t) => {
  const c = apply(
    '--data-dir=/d', '--bind-address', '0.0.0.0', '--secure-port=0', '--brand', 'kubernetes',
    '--tls-cert-file=/c.crt', '--tls-private-key-file', '/c.key', '--max-request-bytes=1024',
    '--admission-control-config-file=/adm.yaml',
  );
  t.equal(c.dataDir, '/d');
  t.equal(c.bindAddress, '0.0.0.0');
  t.equal(c.securePort, 0);
  t.equal(c.brand, 'kubernetes');
  t.same(c.tls, { certFile: '/c.crt', keyFile: '/c.key' });
  t.equal(c.maxRequestBodyBytes, 1024);
  t.equal(c.admissionConfigFile, '/adm.yaml');
  t.equal(parseFlags(['--config', 'x.yaml']).config, 'x.yaml');
  t.equal(parseFlags(['--help']).help, true);
  t.equal(parseFlags(['-h']).help, true);
});

t.test('bad values', async (t) => {
  t.throws(() => parseFlags(['--foo']), { message: 'unknown flag: --foo' });
  t.throws(() => parseFlags(['--foo=1']), { message: 'unknown flag: --foo' });
  t.throws(() => parseFlags(['--secure-port=99999']), /--secure-port: must be an integer from 0 to 65535/);
  t.throws(() => parseFlags(['--secure-port=12ab']), /invalid value "12ab"/);
  t.throws(() => parseFlags(['--max-request-bytes=0']), /--max-request-bytes/);
  t.throws(() => parseFlags(['--brand=acme']), /invalid value "acme" for --brand \(known: cluster, kubernetes\)/);
  t.throws(() => parseFlags(['--data-dir']), { message: 'flag needs an argument: --data-dir' });
  t.throws(() => parseFlags(['stray']), /unexpected argument: stray/);
  t.throws(() => parseFlags(['--anonymous-auth=maybe']), /must be true or false/);
});

t.test('authorization modes', async (t) => {
  t.same(apply('--authorization-mode=Node,RBAC').authorization, [{ plugin: 'node' }, { plugin: 'rbac' }]);
  t.same(names(apply('--authorization-mode', 'RBAC,Node,Webhook,ABAC,AlwaysDeny,AlwaysAllow').authorization),
    ['rbac', 'node', 'webhook', 'abac', 'always-deny', 'always-allow']);
  t.throws(() => parseFlags(['--authorization-mode=RBAC,Magic']),
    { message: 'unknown authorization mode "Magic" (known: AlwaysAllow, AlwaysDeny, ABAC, Webhook, RBAC, Node)' });
  t.throws(() => parseFlags(['--authorization-mode=rbac']), /unknown authorization mode "rbac"/);
  t.throws(() => parseFlags(['--authorization-mode=RBAC,RBAC']), /more than once/);
  t.throws(() => parseFlags(['--authorization-mode=']), /at least one mode/);
  // options of an entry already configured for that plugin are kept
  const base = { ...defaultConfig(), authorization: [{ plugin: 'webhook', options: { url: 'https://x' } }] };
  t.same(applyFlags(base, parseFlags(['--authorization-mode=RBAC,Webhook'])).authorization,
    [{ plugin: 'rbac' }, { plugin: 'webhook', options: { url: 'https://x' } }]);
});

t.test('authentication flags', async (t) => {
  t.same(apply('--token-auth-file=/t.csv').authentication.find((r) => r.plugin === 'token-file'), { plugin: 'token-file', options: { file: '/t.csv' } });
  t.same(names(apply('--anonymous-auth=false').authentication), ['x509', 'token-file', 'service-account', 'bootstrap-token']);
  t.same(names(apply('--anonymous-auth=false', '--anonymous-auth').authentication), ['x509', 'token-file', 'service-account', 'bootstrap-token', 'anonymous'], 'last wins');
  const noToken = { ...defaultConfig(), authentication: [{ plugin: 'anonymous' }] };
  t.same(applyFlags(noToken, parseFlags(['--token-auth-file', '/t.csv'])).authentication,
    [{ plugin: 'token-file', options: { file: '/t.csv' } }, { plugin: 'anonymous' }], 'added before anonymous');
  const none = { ...defaultConfig(), authentication: [] };
  t.same(names(applyFlags(none, parseFlags(['--anonymous-auth=true'])).authentication), ['anonymous']);
});

t.test('runtime config and feature gates', async (t) => {
  const c = apply('--runtime-config=batch/v1=false,api/all', '--runtime-config', 'apps/v1=TRUE', '--feature-gates=A=true,B=false');
  t.same(c.runtimeConfig, { 'batch/v1': false, 'api/all': true, 'apps/v1': true });
  t.same(c.featureGates, { A: true, B: false });
  t.throws(() => parseFlags(['--feature-gates=A']), /expected A=true\|false/);
  t.throws(() => parseFlags(['--feature-gates=A=maybe']), /must be true or false/);
  t.throws(() => parseFlags(['--runtime-config==true']), /empty key/);
});

t.test('durations', async (t) => {
  t.equal(parseDuration('10s'), 10);
  t.equal(parseDuration('1m30s'), 90);
  t.equal(parseDuration('500ms'), 0.5);
  t.equal(parseDuration('1h'), 3600);
  t.equal(parseDuration('1.5h'), 5400);
  t.equal(parseDuration('250us'), 0.00025);
  t.equal(parseDuration('0'), 0);
  t.equal(parseDuration('2h45m0.5s'), 9900.5);
  for (const bad of ['', '10', 's', '1x', '-1s', '1m 2s', 'abc']) t.throws(() => parseDuration(bad), /invalid duration/, bad);
  const c = apply('--shutdown-delay-duration=10s', '--livez-grace-period', '1m30s', '--storage-retention=500ms', '--storage-group-commit=false');
  t.equal(c.shutdownDelaySeconds, 10);
  t.equal(c.livezGracePeriodSeconds, 90);
  t.same(c.storage.options, { retentionSeconds: 0.5, groupCommit: false });
  t.same(apply('--storage-group-commit').storage.options, { retentionSeconds: 300, groupCommit: true });
  t.throws(() => parseFlags(['--livez-grace-period=5']), /invalid value for --livez-grace-period: invalid duration "5"/);
  // the request timeout, and APF's queue wait at a quarter of it
  t.equal(apply().requestTimeoutSeconds, 60);
  const rt = apply('--request-timeout=2s');
  t.equal(rt.requestTimeoutSeconds, 2);
  t.equal(rt.flowControl.options?.queueWaitSeconds, 0.5);
  // --event-ttl sets the event-ttl controller's options, adding the controller when a file left it out
  t.same(apply('--event-ttl=2m').controllers.find((r) => r.plugin === 'event-ttl'), { plugin: 'event-ttl', options: { ttlSeconds: 120 } });
  const without = defaultConfig();
  without.controllers = without.controllers.filter((r) => r.plugin !== 'event-ttl');
  t.same(applyFlags(without, parseFlags(['--event-ttl=1h'])).controllers.at(-1), { plugin: 'event-ttl', options: { ttlSeconds: 3600 } });
});

t.test('admission plugins', async (t) => {
  const a = apply('--enable-admission-plugins=ResourceQuota,AlwaysPullImages,NamespaceLifecycle,NodeRestriction');
  const b = apply('--enable-admission-plugins', 'NodeRestriction,NamespaceLifecycle', '--enable-admission-plugins=AlwaysPullImages,ResourceQuota');
  t.same(a.admission, b.admission, 'flag order is irrelevant');
  const order = names(a.admission);
  const idx = (n: string) => order.indexOf(n);
  for (const n of ['ResourceQuota', 'AlwaysPullImages', 'NamespaceLifecycle', 'NodeRestriction']) t.ok(idx(n) >= 0, `${n} enabled`);
  t.ok(idx('NamespaceLifecycle') < idx('NodeRestriction'));
  t.ok(idx('NodeRestriction') < idx('AlwaysPullImages'));
  t.equal(order[order.length - 1], 'ResourceQuota', 'quota runs last');
  t.same(order, orderAdmission([...order].reverse()), 'ordered by REFERENCE_ADMISSION_ORDER');

  const d = apply('--enable-admission-plugins=AlwaysPullImages', '--disable-admission-plugins=NamespaceLifecycle,ResourceQuota');
  t.notOk(names(d.admission).includes('NamespaceLifecycle'));
  t.notOk(names(d.admission).includes('ResourceQuota'));
  t.ok(names(d.admission).includes('AlwaysPullImages'));

  t.throws(() => parseFlags(['--enable-admission-plugins=Bogus']), /unknown admission plugin "Bogus" in --enable-admission-plugins/);
  t.throws(() => parseFlags(['--disable-admission-plugins=Bogus']), /unknown admission plugin "Bogus" in --disable-admission-plugins/);
  t.throws(() => parseFlags(['--enable-admission-plugins=Priority', '--disable-admission-plugins=Priority']), /both enabled and disabled/);

  // non-reference plugins from a config file keep their options and run before the webhooks
  const base = { ...defaultConfig(), admission: [{ plugin: 'my-npm-plugin', options: { x: 1 } }] };
  const c = applyFlags(base, parseFlags(['--enable-admission-plugins=ValidatingAdmissionWebhook,LimitRanger']));
  t.same(c.admission, [{ plugin: 'LimitRanger' }, { plugin: 'my-npm-plugin', options: { x: 1 } }, { plugin: 'ValidatingAdmissionWebhook' }]);
});

t.test('default admission set', async (t) => {
  const present = defaultAdmission();
  const missing = missingDefaultAdmission();
  t.same([...present, ...missing].sort(), [...DEFAULT_ADMISSION_PLUGINS].sort(), 'every default-on plugin is either loaded or reported missing');
  t.same(names(defaultConfig().admission), [...present.slice(0, present.indexOf('TaintNodesByCondition')), 'NodeRestriction', ...present.slice(present.indexOf('TaintNodesByCondition'))], 'and NodeRestriction, as every kubeadm cluster (the Node authorizer is on by default)');
  for (const n of DEFAULT_ADMISSION_PLUGINS) t.ok(REFERENCE_ADMISSION_ORDER.includes(n), `${n} has a place in the order`);
});

t.test('usage lists every flag', async (t) => {
  const u = usage();
  for (const name of Object.keys(FLAGS)) t.match(u, `--${name}`);
});

t.test('certificate signing and token controller flags', async (t) => {
  const c = apply('--cluster-signing-cert-file=/s.crt', '--cluster-signing-key-file=/s.key', '--cluster-signing-duration=2h', '--secure-port-client-certs=false',
    '--service-account-issuer=https://issuer.example', '--api-audiences=a,b');
  for (const s of c.signers) t.same(s.options, { certFile: '/s.crt', keyFile: '/s.key', durationSeconds: 7200 }, `${s.plugin} gets the signing options`);
  t.equal(c.securePortClientCerts, false);
  t.same(c.controllers.find((r) => r.plugin === 'serviceaccount-token')?.options, { issuer: 'https://issuer.example', audiences: ['a', 'b'] });
  t.equal(apply().securePortClientCerts, undefined, 'unset: decided by the configured authenticators');
});
