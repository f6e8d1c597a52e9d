// Secrets encrypted at rest (--encryption-provider-config): the store's raw bytes hold no plaintext,
// clients see plain objects, keys rotate (first provider writes, all read), bad configs are refused.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ClassicLevel } from 'classic-level';
import t from 'tap';
import { mainJs, startServer } from '../lib/server.js';

const SECRETS = '/api/v1/namespaces/default/secrets';
const CMS = '/api/v1/namespaces/default/configmaps';
const SECRET_MARK = 'secret-plaintext-marker-7f3a';
const CM_MARK = 'configmap-plaintext-marker-91c2';
const b64 = (s: string) => Buffer.from(s).toString('base64');

const key = (fill: number, n = 32) => Buffer.alloc(n, fill).toString('base64');
function encConfig(providers: string): string {
  return `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
${providers}`;
}
const p = {
  aescbc1: `      - aescbc:\n          keys:\n            - name: key1\n              secret: ${key(1)}\n`,
  aesgcm2: `      - aesgcm:\n          keys:\n            - name: key2\n              secret: ${key(2)}\n`,
  secretbox3: `      - secretbox:\n          keys:\n            - name: key3\n              secret: ${key(3)}\n`,
  identity: '      - identity: {}\n',
};

/** Every byte LevelDB has on disk for the store (log, tables, manifest). */
function rawStore(dataDir: string): Buffer {
  const dir = path.join(dataDir, 'store');
  return Buffer.concat(readdirSync(dir).map((n) => readFileSync(path.join(dir, n))));
}

/** The stored (encrypted or plain) value bytes of every record whose key contains `part`. */
async function storedRecords(dataDir: string, part: string): Promise<Buffer[]> {
  const db = new ClassicLevel<string, Uint8Array>(path.join(dataDir, 'store'), { keyEncoding: 'utf8', valueEncoding: 'view' });
  await db.open();
  const out: Buffer[] = [];
  try {
    for await (const [k, v] of db.iterator()) {
      const b = Buffer.from(v);
      if (k.includes(part) || (k.startsWith('h:') && b.includes(part))) out.push(b);
    }
  } finally {
    await db.close();
  }
  return out;
}

t.test('secrets are encrypted on disk, plain to clients; keys rotate', async (t) => {
  const dir = t.testdir({ 'enc1.yaml': encConfig(p.aescbc1 + p.identity), 'enc2.yaml': encConfig(p.aesgcm2 + p.aescbc1), 'enc3.yaml': encConfig(p.secretbox3 + p.aesgcm2), 'enc4.yaml': encConfig(p.secretbox3) });
  const s = await startServer({ keepDataDir: true, args: ['--encryption-provider-config', path.join(dir, 'enc1.yaml')] });
  t.teardown(() => rmSync(s.dataDir, { recursive: true, force: true }));
  const secret = (name: string, v = SECRET_MARK) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { password: v } });
  t.equal((await s.request('POST', SECRETS, { body: secret('s1') })).status, 201);
  t.equal((await s.request('POST', SECRETS, { body: secret('gone') })).status, 201);
  t.equal((await s.request('DELETE', `${SECRETS}/gone`)).status, 200, 'a deletion (its event keeps the last value)');
  t.equal((await s.request('POST', CMS, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' }, data: { v: CM_MARK } } })).status, 201);
  const got = await s.get(`${SECRETS}/s1`);
  t.equal(got.json.data.password, b64(SECRET_MARK), 'clients read the plain value');
  await s.stop();

  const raw = rawStore(s.dataDir);
  t.ok(raw.includes(CM_MARK), 'the raw bytes show unencrypted resources (configmaps are not in the config): the check can see plaintext');
  t.notOk(raw.includes(SECRET_MARK) || raw.includes(b64(SECRET_MARK)), 'no secret value in any store file, raw or base64');
  t.notOk(raw.includes('"kind":"Secret"'), 'no secret object in clear at all');
  const records = await storedRecords(s.dataDir, '/secrets/default/s1');
  t.ok(records.length >= 2, 'the current record and its history event');
  t.ok(records.every((r) => r.includes('k8s:enc:aescbc:v1:key1:')), 'each carries the reference prefix of provider and key');

  // Rotation: a new first provider writes; the old key still reads.
  const s2 = await startServer({ dataDir: s.dataDir, keepDataDir: true, args: ['--encryption-provider-config', path.join(dir, 'enc2.yaml')] });
  t.equal((await s2.get(`${SECRETS}/s1`)).json.data.password, b64(SECRET_MARK), 'a secret written with key1 is read after rotation');
  t.equal((await s2.request('POST', SECRETS, { body: secret('s2') })).status, 201);
  const s1 = (await s2.get(`${SECRETS}/s1`)).json;
  t.equal((await s2.request('PUT', `${SECRETS}/s1`, { body: { ...s1, stringData: { password: SECRET_MARK + '-2' } } })).status, 200, 'an update rewrites with the new key');
  await s2.stop();
  t.ok((await storedRecords(s.dataDir, '/secrets/default/s2')).some((r) => r.includes('k8s:enc:aesgcm:v1:key2:')), 'new writes: aesgcm key2');
  const cur = await storedRecords(s.dataDir, 'c:/core/secrets/default/s1');
  t.ok(cur.length === 1 && cur[0].includes('k8s:enc:aesgcm:v1:key2:'), 'the updated secret is stored with key2');

  // A config without a key still in use (key2 encrypts s1 and s2) cannot start.
  const r = spawnSync(process.execPath, [mainJs, '--data-dir', s.dataDir, '--secure-port', '0', '--encryption-provider-config', path.join(dir, 'enc4.yaml')], { encoding: 'utf8', timeout: 30_000 });
  t.not(r.status, 0, 'a config that lacks a key still in use is refused at start');
  t.match(r.stderr, /cannot decrypt \/core\/secrets\/default\/\S+: no configured provider and key match its prefix "k8s:enc:(aesgcm|aescbc):v1:key[12]:"/, 'naming the object and the prefix');

  // secretbox (XSalsa20-Poly1305) writes; aesgcm key2 still reads. key1 is gone: the history it
  // encrypted is compacted (a watch from before relists), the current values all use key2.
  const s3 = await startServer({ dataDir: s.dataDir, keepDataDir: true, args: ['--encryption-provider-config', path.join(dir, 'enc3.yaml')] });
  t.equal((await s3.request('POST', SECRETS, { body: secret('s3') })).status, 201);
  t.equal((await s3.get(`${SECRETS}/s3`)).json.data.password, b64(SECRET_MARK));
  t.equal((await s3.get(`${SECRETS}/s2`)).json.data.password, b64(SECRET_MARK), 'key2 (second provider) still reads');
  t.ok(s3.logs.some((l) => /history up to revision \d+ was written with an encryption key no longer configured/.test(l)), 'the dropped history is logged');
  const w: any[] = [];
  const watch = s3.stream(`${SECRETS}?watch=1&resourceVersion=${got.json.metadata.resourceVersion}`, (e) => w.push(e));
  for (let i = 0; i < 40 && !w.length; i++) await new Promise((r) => setTimeout(r, 50));
  watch.close();
  t.equal(w[0]?.object?.code, 410, 'a watch resumed into the dropped history gets 410');
  await s3.stop();
  t.ok((await storedRecords(s.dataDir, 'c:/core/secrets/default/s3')).every((rec) => rec.includes('k8s:enc:secretbox:v1:key3:')), 'secretbox key3 writes');
  t.notOk(rawStore(s.dataDir).includes(SECRET_MARK), 'still no plaintext on disk');
});

t.test('bad encryption configs stop the server with the file and field named', async (t) => {
  const dir = t.testdir({});
  const run = (text: string) => {
    const f = path.join(dir, 'enc.yaml');
    writeFileSync(f, text);
    return spawnSync(process.execPath, [mainJs, '--data-dir', path.join(dir, 'data'), '--secure-port', '0', '--encryption-provider-config', f], { encoding: 'utf8', timeout: 30_000 });
  };
  const short = run(encConfig(`      - aesgcm:\n          keys:\n            - name: k\n              secret: ${key(1, 20)}\n`));
  t.not(short.status, 0);
  t.match(short.stderr, /enc\.yaml: resources\[0\]\.providers\[0\]\.aesgcm\.keys\[0\]\.secret: a aesgcm key is 16, 24, 32 bytes, not 20/);
  const kms = run(encConfig('      - kms:\n          name: vault\n'));
  t.match(kms.stderr, /the kms provider is not supported/);
});
