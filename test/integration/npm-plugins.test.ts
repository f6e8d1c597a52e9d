// Third-party plugins of three kinds published as npm packages: the example authenticator,
// authorizer and admission plugin under test/fixtures/ are packed with `npm pack`, installed into a
// scratch project with `npm install`, named by package name in a config file in that project, and
// exercised over HTTPS against the real server started with `--config <that file>`.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { webcrypto, X509Certificate } from 'node:crypto';
import { generateCA, x509, type CertAndKey } from '../../kernel/ops/pki.js';
import { withServer, type TestServer } from '../lib/server.js';

let signerCA: CertAndKey;

const run = promisify(execFile);
// the fixtures stay in the source tree; this file runs from dist/test/integration/
const fixtures = fileURLToPath(new URL('../../../test/fixtures/', import.meta.url));
const packages = [
  { dir: 'example-authenticator', name: 'example-header-key-authenticator' },
  { dir: 'example-authorizer', name: 'example-readonly-group-authorizer' },
  { dir: 'example-plugin', name: 'example-admission-plugin' },
  { dir: 'example-signer', name: 'example-openssl-signer' },
];

const LABEL = 'example.io/admitted';
const KEYS = { reader: 'key-reader-0123456789', writer: 'key-writer-0123456789' };

/** Like the configuration in docs/plugins.md (publishing section), with keys of its own and a uid. */
const config = `# written by test/integration/npm-plugins.test.ts
authentication:
  - plugin: token-file                          # the admin token of <dataDir>/pki/tokens.csv
  - plugin: example-header-key-authenticator
    options:
      keys:
        ${KEYS.reader}: { username: rita, groups: [auditors] }
        ${KEYS.writer}: { username: walt, uid: walt-1, groups: [builders] }
authorization:
  - plugin: example-readonly-group-authorizer
    options:
      readonlyGroup: auditors
  - plugin: always-allow
enableAdmissionPlugins:
  - plugin: example-admission-plugin
    options:
      label: ${LABEL}
signers:
  - plugin: example-openssl-signer
    options:
      signerName: example.com/openssl
      caCertFile: ./signer-ca.crt
      caKeyFile: ./signer-ca.key
      days: 7
`;

/** Packs every fixture, installs the tarballs into a new project and writes the config file there; returns its path. */
async function installProject(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const work = await mkdtemp(path.join(tmpdir(), 'npm-plugins-'));
  t.teardown(() => rm(work, { recursive: true, force: true }));
  const env = { ...process.env, npm_config_update_notifier: 'false', npm_config_loglevel: 'error' };
  const tarballs: string[] = [];
  for (const p of packages) {
    const packed = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: path.join(fixtures, p.dir), env });
    const info = (JSON.parse(packed.stdout) as { name: string; filename: string }[])[0];
    if (info.name !== p.name) throw new Error(`fixture ${p.dir} packs as ${info.name}, expected ${p.name}`);
    tarballs.push(path.join(work, info.filename));
  }
  const project = path.join(work, 'project');
  await mkdir(project);
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'cluster-config', version: '1.0.0', private: true }, null, 2));
  // the packages have no dependencies, so npm needs no registry
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs], { cwd: project, env });
  const file = path.join(project, 'config.yaml');
  // the signer's CA files, by absolute path (plugin options are passed on as written)
  await writeFile(file, config.replaceAll('./signer-ca.', `${path.join(project, 'signer-ca')}.`));
  signerCA = await generateCA({ CN: 'example signer CA', days: 30 });
  await writeFile(path.join(project, 'signer-ca.crt'), signerCA.certPem);
  await writeFile(path.join(project, 'signer-ca.key'), signerCA.keyPem, { mode: 0o600 });
  return file;
}

const cm = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const CMS = '/api/v1/namespaces/default/configmaps';

t.test('an authenticator, an authorizer and an admission plugin installed from npm tarballs', async (t) => {
  const configFile = await installProject(t);
  const s: TestServer = await withServer(t, { args: ['--config', configFile] });
  const withKey = (key: string) => ({ token: null, headers: { 'x-api-key': key } });

  t.test('the header-key authenticator', async (t) => {
    const admin = await s.get('/api/v1/namespaces'); // token-file, first in the list, still works
    t.equal(admin.status, 200, 'the admin bearer token');

    const who = await s.request('POST', `/apis/authentication.cluster.io/v1/selfsubjectreviews`, {
      ...withKey(KEYS.writer), body: { apiVersion: 'authentication.cluster.io/v1', kind: 'SelfSubjectReview' },
    });
    t.equal(who.status, 201, who.text);
    t.same(who.json.status.userInfo, { username: 'walt', uid: 'walt-1', groups: ['builders', 'system:authenticated'] }, 'the mapped user, plus system:authenticated');

    const unknown = await s.request('GET', CMS, withKey('not-a-key'));
    t.equal(unknown.status, 401, 'an unknown key');
    t.equal(unknown.json?.reason, 'Unauthorized');

    const none = await s.request('GET', CMS, { token: null });
    t.equal(none.status, 401, 'no credential at all (no anonymous authenticator configured)');

    const metrics = await s.get('/metrics');
    t.equal(metrics.status, 200);
    t.match(metrics.text, /^# TYPE example_api_key_authentications_total counter$/m, 'the plugin registered its counter');
    t.match(metrics.text, /^example_api_key_authentications_total\{result="success"\} 1$/m);
    t.match(metrics.text, /^example_api_key_authentications_total\{result="rejected"\} 1$/m);
  });

  t.test('the read-only group authorizer', async (t) => {
    const list = await s.request('GET', CMS, withKey(KEYS.reader));
    t.equal(list.status, 200, list.text);
    t.equal(list.json.kind, 'ConfigMapList');
    const nsList = await s.request('GET', '/api/v1/namespaces', withKey(KEYS.reader));
    t.equal(nsList.status, 200, 'list at the cluster scope');
    const version = await s.request('GET', '/version', withKey(KEYS.reader));
    t.equal(version.status, 200, 'GET of a non-resource path is a read too');

    const create = await s.request('POST', CMS, { ...withKey(KEYS.reader), body: cm('from-rita', { a: 'b' }) });
    t.equal(create.status, 403, create.text);
    t.equal(create.json.reason, 'Forbidden');
    t.equal(create.json.message,
      'configmaps is forbidden: User "rita" cannot create resource "configmaps" in API group "" in the namespace "default": ' +
      'members of group "auditors" may only get, list and watch');

    const del = await s.request('DELETE', `${CMS}/anything`, withKey(KEYS.reader));
    t.equal(del.status, 403, 'delete is a write as well');
    t.match(del.json.message, /may only get, list and watch$/);

    // not in the group: no opinion, so always-allow decides
    const other = await s.request('POST', CMS, { ...withKey(KEYS.writer), body: cm('from-walt', { a: 'b' }) });
    t.equal(other.status, 201, other.text);
  });

  t.test('the admission plugin labels and validates', async (t) => {
    const created = await s.request('POST', CMS, { ...withKey(KEYS.writer), body: cm('settings', { mode: 'fast' }) });
    t.equal(created.status, 201, created.text);
    t.equal(created.json.metadata.labels?.[LABEL], 'true', 'the mutating phase added the label');
    const read = await s.request('GET', `${CMS}/settings`, withKey(KEYS.reader));
    t.equal(read.json.metadata.labels?.[LABEL], 'true', 'the label was stored');

    const ns = await s.get('/api/v1/namespaces/default');
    t.equal(ns.json.metadata.labels?.[LABEL], 'true', 'the system namespaces are created through the admission chain at start-up');

    const refused = await s.request('POST', CMS, { ...withKey(KEYS.writer), body: cm('secrets', { user: 'u', password: 'hunter2' }) });
    t.equal(refused.status, 422, refused.text);
    t.equal(refused.json.reason, 'Invalid');
    t.equal(refused.json.message, 'ConfigMap "secrets" is invalid: data.password: keep passwords in a Secret, not in a ConfigMap');
    t.same(refused.json.details.causes, [{ reason: 'FieldValueForbidden', field: 'data.password', message: 'keep passwords in a Secret, not in a ConfigMap' }]);
    t.equal((await s.get(`${CMS}/secrets`)).status, 404, 'nothing was stored');

    // an update is checked too
    const current = read.json;
    const update = await s.request('PUT', `${CMS}/settings`, {
      ...withKey(KEYS.writer), body: { ...current, data: { ...current.data, password: 'hunter2' } },
    });
    t.equal(update.status, 422, update.text);
    t.match(update.json.message, /^ConfigMap "settings" is invalid: data\.password: /);

    // other kinds may have such a key
    const secret = await s.request('POST', '/api/v1/namespaces/default/secrets', {
      ...withKey(KEYS.writer), body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' }, stringData: { password: 'hunter2' } },
    });
    t.equal(secret.status, 201, secret.text);
    t.equal(secret.json.metadata.labels?.[LABEL], 'true');
  });

  t.test('the openssl signer issues approved requests for its signer name', async (t) => {
    const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const keys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']) as CryptoKeyPair;
    const pem = (await x509.Pkcs10CertificateRequestGenerator.create({ name: 'CN=olga, O=ops', keys, signingAlgorithm: EC })).toString('pem');
    const CSRS = '/apis/certificates.cluster.io/v1/certificatesigningrequests';
    const body = (name: string, usages: string[]) => ({ apiVersion: 'certificates.cluster.io/v1', kind: 'CertificateSigningRequest', metadata: { name }, spec: { request: Buffer.from(pem).toString('base64'), signerName: 'example.com/openssl', usages } });
    for (const [name, usages] of [['olga', ['digital signature', 'client auth']], ['olga-server', ['server auth']]] as const) {
      const c = await s.request('POST', CSRS, { body: body(name, [...usages]) });
      t.equal(c.status, 201, c.text);
      const a = await s.request('PUT', `${CSRS}/${name}/approval`, { body: { ...c.json, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test' }] } } });
      t.equal(a.status, 200, a.text);
    }
    const until = Date.now() + 10_000;
    let olga: any;
    let refused: any;
    while (Date.now() < until && (!olga?.status?.certificate || !refused?.status?.conditions?.some((c: any) => c.type === 'Failed'))) {
      await new Promise((r) => setTimeout(r, 100));
      olga = (await s.get(`${CSRS}/olga`)).json;
      refused = (await s.get(`${CSRS}/olga-server`)).json;
    }
    const cert = new X509Certificate(Buffer.from(olga.status.certificate, 'base64').toString());
    t.ok(cert.verify(new X509Certificate(signerCA.certPem).publicKey), 'issued with the signer\'s own CA');
    t.match(cert.subject, /CN=olga/);
    const days = (Date.parse(cert.validTo) - Date.now()) / 86400_000;
    t.ok(days > 6.9 && days < 7.1, `its configured lifetime (${days.toFixed(2)} days)`);
    const failed = refused.status.conditions.find((c: any) => c.type === 'Failed');
    t.match(failed, { reason: 'SignerValidationFailure', message: 'this signer only issues client certificates' });
    t.notOk(refused.status.certificate, 'a refused request gets no certificate');
  });
});
