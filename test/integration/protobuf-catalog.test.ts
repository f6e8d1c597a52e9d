// Protobuf for every served type, generated from discovery: each resource and sub-resource whose
// kind the reference's Protobuf catalog has (it speaks Protobuf there) must read and write it here,
// so that no type or sub-resource can be left out again. Then the CertificateSigningRequest flow a
// node agent's TLS bootstrap and kubectl 1.32+ use: create and approve in Protobuf.
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';
import { ProtobufCodec, unwrap, wrap, type ProtoCatalog } from '../../kernel/api/repr/protobuf.js';
import { PROTOBUF_CATALOG } from '../../plugins/lib/protobuf-catalog.js';
import { rawRequest } from '../lib/protobuf.js';
import { kubectl, kubectlRelease, noKubectl } from '../lib/kubectl.js';
import { makeRequest } from '../lib/csr.js';

const PB = 'application/vnd.kubernetes.protobuf';
const catalog = PROTOBUF_CATALOG as ProtoCatalog;
const codec = new ProtobufCodec([catalog]);

interface Resource { path: string; gv: string; group: string; version: string; name: string; kind: string; namespaced: boolean; verbs: string[] }

/** Every resource and sub-resource of every served group-version, as discovery lists them. */
async function discover(s: TestServer): Promise<Resource[]> {
  const out: Resource[] = [];
  const gvs: [string, string][] = [['/api/v1', 'v1']];
  for (const g of (await s.get('/apis')).json.groups) for (const v of g.versions) gvs.push([`/apis/${v.groupVersion}`, v.groupVersion]);
  for (const [base, gv] of gvs) {
    for (const r of (await s.get(base)).json.resources) {
      const [group, version] = gv.includes('/') ? gv.split('/') : ['', gv];
      out.push({ path: base, gv, group: r.group ?? group, version: r.version ?? version, name: r.name, kind: r.kind, namespaced: r.namespaced, verbs: r.verbs });
    }
  }
  return out;
}

/** The catalog's message for a group/version/kind, when the reference speaks Protobuf for it. */
const messageOf = (group: string, version: string, kind: string): string | undefined => catalog.kinds[`${group ? `${group}/` : ''}${version}/${kind}`];

t.test('every resource and sub-resource with a Protobuf message answers and takes Protobuf', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  t.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'pb' } } })).status, 201);
  const resources = await discover(s);
  let checked = 0;
  for (const r of resources) {
    const message = messageOf(r.group, r.version, r.kind);
    // Connect sub-resources (proxy, exec, attach, port-forward, log) take no object body.
    if (!message || r.kind.endsWith('Options')) continue;
    const [parent, sub] = r.name.split('/');
    const collection = `${r.path}${r.namespaced ? '/namespaces/pb' : ''}/${parent}`;
    const what = `${r.gv} ${r.name}`;
    if (!sub && r.verbs.includes('list')) {
      const list = await rawRequest(s, 'GET', collection, { accept: PB });
      t.equal(list.status, 200, `${what}: list`);
      t.equal(list.headers['content-type'], PB, `${what}: list answered in Protobuf`);
      checked++;
    }
    // A body in Protobuf is decoded (whatever validation then says of this minimal object), and the
    // answer, success or Status, comes back in Protobuf. Never 415 (unsupported) nor 406.
    const apiVersion = r.group ? `${r.group}/${r.version}` : r.version;
    const body = wrap(apiVersion, r.kind, codec.encode(message, { metadata: { name: 'probe', ...(r.namespaced ? { namespace: 'pb' } : {}) } }));
    const headers = { 'content-type': PB, accept: PB };
    let answer: Awaited<ReturnType<typeof rawRequest>> | undefined;
    if (!sub && r.verbs.includes('create')) answer = await rawRequest(s, 'POST', collection, headers, body);
    else if (sub && r.verbs.includes('update')) answer = await rawRequest(s, 'PUT', `${collection}/probe/${sub}`, headers, body);
    else if (sub && r.verbs.includes('create')) answer = await rawRequest(s, 'POST', `${collection}/probe/${sub}`, headers, body);
    if (!answer) continue;
    t.notOk([406, 415].includes(answer.status) || answer.status >= 500, `${what}: a Protobuf body is taken (${answer.status})`);
    t.equal(answer.headers['content-type'], PB, `${what}: answered in Protobuf (${answer.status})`);
    t.doesNotThrow(() => unwrap(answer!.body), `${what}: the answer is a Protobuf envelope`);
    checked++;
  }
  t.ok(checked > 80, `${checked} resources and sub-resources checked`);
  t.ok(resources.some((r) => r.name === 'certificatesigningrequests/approval'), 'the approval sub-resource is among them');
});

t.test('CertificateSigningRequest in Protobuf both ways: create, read, approve', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
  const { pem } = await makeRequest('CN=pb-user');
  const spec = { request: Buffer.from(pem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] };
  const headers = { 'content-type': PB, accept: PB };
  const msg = 'certificates.v1.CertificateSigningRequest';
  const created = await rawRequest(s, 'POST', CSRS, headers, wrap('certificates.k8s.io/v1', 'CertificateSigningRequest', codec.encode(msg, { metadata: { name: 'pb-csr' }, spec })));
  t.equal(created.status, 201, created.body.toString('latin1').slice(0, 300));
  const env = unwrap(created.body);
  t.same([env.apiVersion, env.kind], ['certificates.k8s.io/v1', 'CertificateSigningRequest']);
  const obj = codec.decode(msg, env.raw) as any;
  t.equal(obj.spec.username, 'admin', 'the requester recorded');
  const got = await rawRequest(s, 'GET', `${CSRS}/pb-csr`, { accept: PB });
  t.equal(got.status, 200);
  t.equal(got.headers['content-type'], PB);
  obj.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'PB', message: 'approved in Protobuf' }] };
  const approved = await rawRequest(s, 'PUT', `${CSRS}/pb-csr/approval`, headers, wrap('certificates.k8s.io/v1', 'CertificateSigningRequest', codec.encode(msg, obj)));
  t.equal(approved.status, 200, approved.body.toString('latin1').slice(0, 300));
  const after = (await s.get(`${CSRS}/pb-csr`)).json;
  t.equal(after.status.conditions?.[0]?.type, 'Approved', 'approved');
});

t.test('kubectl certificate approve and deny (1.32 and 1.33 send Protobuf)', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  for (const release of ['1.27', '1.32', '1.33']) {
    const bin = kubectlRelease(release);
    if (!bin) { t.comment(`kubectl ${release} is not installed`); continue; }
    for (const verb of ['approve', 'deny']) {
      const name = `k-${release.replace('.', '-')}-${verb}`;
      const { pem } = await makeRequest(`CN=${name}`);
      const c = await s.request('POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', { body: { metadata: { name }, spec: { request: Buffer.from(pem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] } } });
      t.equal(c.status, 201, c.text);
      const r = await kubectl(s, ['certificate', verb, name], { bin });
      t.equal(r.code, 0, `kubectl ${release} certificate ${verb}: ${r.stderr}`);
      t.match(r.stdout, new RegExp(`certificatesigningrequest.certificates.k8s.io/${name} ${verb === 'approve' ? 'approved' : 'denied'}`));
    }
  }
});
