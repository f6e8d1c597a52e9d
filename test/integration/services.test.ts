// Services over HTTP: cluster IP and node port allocation (ranges, requests, refusals, release,
// concurrency, durability), dual-stack family defaulting, the server's own Service with its
// Endpoints and EndpointSlice, the serving certificate's names; kubectl expose / create service.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { x509 } from '../../kernel/ops/pki.js';
import { withServer, type TestServer } from '../lib/server.js';
import { kubectl, kubectlRelease, noKubectl } from '../lib/kubectl.js';

const svc = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Service', metadata: { name },
  spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec },
});

function inRange(ip: string, base: string, bits: number): boolean {
  const n = (s: string) => s.split('.').reduce((a, p) => a * 256 + Number(p), 0);
  const size = 2 ** (32 - bits);
  return Math.floor(n(ip) / size) === Math.floor(n(base) / size);
}

async function create(s: TestServer, body: unknown, ns = 'default') {
  return s.request('POST', `/api/v1/namespaces/${ns}/services`, { body });
}

t.test('cluster IPs and node ports', async (t) => {
  const s = await withServer(t, { args: ['--service-node-port-range', '30000-30099'] });

  const a = await create(s, svc('a'));
  t.equal(a.status, 201, a.text);
  const ip = a.json.spec.clusterIP;
  t.ok(inRange(ip, '10.96.0.0', 12), `${ip} is in 10.96.0.0/12`);
  t.same(a.json.spec.clusterIPs, [ip]);
  t.same(a.json.spec.ipFamilies, ['IPv4']);
  t.equal(a.json.spec.ipFamilyPolicy, 'SingleStack');

  const dup = await create(s, svc('b', { clusterIP: ip }));
  t.equal(dup.status, 422);
  t.equal(dup.json.message, `Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"${ip}"}: failed to allocate IP ${ip}: provided IP is already allocated`);
  t.equal(dup.json.details.causes[0].field, 'spec.clusterIPs');

  const out = await create(s, svc('c', { clusterIP: '192.168.1.1' }));
  t.equal(out.status, 422);
  t.match(out.json.message, 'the provided IP (192.168.1.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12');

  const bad = await create(s, svc('c', { clusterIP: 'not-an-ip' }));
  t.equal(bad.status, 422);
  t.match(bad.json.message, 'spec.clusterIPs[0]: Invalid value: "not-an-ip": must be a valid IP address');

  const mine = await create(s, svc('d', { clusterIP: '10.96.0.50' }));
  t.equal(mine.status, 201);
  t.equal(mine.json.spec.clusterIP, '10.96.0.50');

  // Headless: no address taken; without a selector it asks for every family.
  const hl = await create(s, svc('hl', { clusterIP: 'None' }));
  t.equal(hl.json.spec.clusterIP, 'None');
  t.same(hl.json.spec.clusterIPs, ['None']);
  const hl2 = await create(s, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'hl2' }, spec: { clusterIP: 'None' } });
  t.equal(hl2.status, 201, hl2.text);
  t.equal(hl2.json.spec.ipFamilyPolicy, 'RequireDualStack');
  t.same(hl2.json.spec.ipFamilies, ['IPv4', 'IPv6']);

  const dual = await create(s, svc('dual', { ipFamilyPolicy: 'RequireDualStack' }));
  t.equal(dual.status, 422);
  t.match(dual.json.message, 'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services');

  // Node ports.
  const np = await create(s, svc('np', { type: 'NodePort', ports: [{ name: 'a', port: 80 }, { name: 'b', port: 80, protocol: 'UDP' }, { name: 'c', port: 81 }] }));
  t.equal(np.status, 201, np.text);
  const ports = np.json.spec.ports.map((p: { nodePort: number }) => p.nodePort);
  for (const p of ports) t.ok(p >= 30000 && p <= 30099, `node port ${p} in range`);
  t.equal(ports[0], ports[1], 'one service port, one node port across protocols');
  t.not(ports[0], ports[2]);
  const taken = await create(s, svc('np2', { type: 'NodePort', ports: [{ port: 80, nodePort: ports[2] }] }));
  t.equal(taken.status, 422);
  t.equal(taken.json.message, `Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: ${ports[2]}: provided port is already allocated`);
  const outp = await create(s, svc('np3', { type: 'NodePort', ports: [{ port: 80, nodePort: 31000 }] }));
  t.equal(outp.status, 422);
  t.equal(outp.json.message, 'Service "np3" is invalid: spec.ports[0].nodePort: Invalid value: 31000: provided port is not in the valid range. The range of valid ports is 30000-30099');
  // A failed create gives back what it had taken: np4's IP request fails after nothing was kept.
  const failing = await create(s, svc('np4', { type: 'NodePort', clusterIP: ip, ports: [{ port: 80, nodePort: 30098 }] }));
  t.equal(failing.status, 422);
  t.equal((await create(s, svc('np5', { type: 'NodePort', ports: [{ port: 80, nodePort: 30098 }] }))).status, 201, 'port of the failed create is free');

  // PUT without the allocated values keeps them.
  const cur = (await s.get('/api/v1/namespaces/default/services/np')).json;
  const put = JSON.parse(JSON.stringify(cur));
  delete put.spec.clusterIP; delete put.spec.clusterIPs;
  for (const p of put.spec.ports) delete p.nodePort;
  const r = await s.request('PUT', '/api/v1/namespaces/default/services/np', { body: put });
  t.equal(r.status, 200, r.text);
  t.equal(r.json.spec.clusterIP, cur.spec.clusterIP);
  t.same(r.json.spec.ports.map((p: { nodePort: number }) => p.nodePort), ports);
  // The cluster IP cannot change.
  const moved = await s.request('PATCH', '/api/v1/namespaces/default/services/np', { body: { spec: { clusterIP: '10.96.0.77', clusterIPs: ['10.96.0.77'] } }, headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal(moved.status, 422);
  t.match(moved.json.message, 'may not change once set');

  // Type change to ClusterIP releases the node ports; ExternalName releases the IP.
  const toCIP = await s.request('PATCH', '/api/v1/namespaces/default/services/np', { body: { spec: { type: 'ClusterIP' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal(toCIP.status, 200, toCIP.text);
  t.notOk(toCIP.json.spec.ports.some((p: { nodePort?: number }) => p.nodePort), 'node ports dropped');
  t.equal((await create(s, svc('np6', { type: 'NodePort', ports: [{ port: 80, nodePort: ports[2] }] }))).status, 201, 'released node port reused');
  const toExt = await s.request('PATCH', '/api/v1/namespaces/default/services/d', { body: { spec: { type: 'ExternalName', externalName: 'example.com' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal(toExt.status, 200, toExt.text);
  t.equal(toExt.json.spec.clusterIP, undefined);
  t.equal((await create(s, svc('d2', { clusterIP: '10.96.0.50' }))).status, 201, 'released IP reused');

  // Delete releases.
  t.equal((await s.request('DELETE', '/api/v1/namespaces/default/services/a')).status, 200);
  t.equal((await create(s, svc('a2', { clusterIP: ip }))).status, 201, 'deleted service IP reused');

  // Dry run takes nothing.
  const dry = await s.request('POST', '/api/v1/namespaces/default/services?dryRun=All', { body: svc('dry', { clusterIP: '10.96.0.60' }) });
  t.equal(dry.status, 201);
  t.equal((await create(s, svc('wet', { clusterIP: '10.96.0.60' }))).status, 201);

  // Allocations survive a restart: taken values stay taken, free ones stay free.
  await s.restart();
  t.equal((await create(s, svc('again', { clusterIP: ip }))).status, 422, 'still allocated after restart');
  t.equal((await create(s, svc('np7', { type: 'NodePort', ports: [{ port: 80, nodePort: 30098 }] }))).status, 422);
  t.equal((await s.request('DELETE', '/api/v1/namespaces/default/services/np5')).status, 200);
  t.equal((await create(s, svc('np8', { type: 'NodePort', ports: [{ port: 80, nodePort: 30098 }] }))).status, 201);
});

t.test('200 concurrent creates get 200 distinct IPs; concurrent explicit requests: one wins', async (t) => {
  const s = await withServer(t, { args: ['--service-cluster-ip-range', '10.0.0.0/24'] });
  const rs = await Promise.all(Array.from({ length: 200 }, (_, i) => create(s, svc(`s${i}`))));
  t.same(rs.filter((r) => r.status !== 201).map((r) => r.text), []);
  const ips = rs.map((r) => r.json.spec.clusterIP);
  t.equal(new Set(ips).size, 200);
  for (const ip of ips) t.ok(inRange(ip, '10.0.0.0', 24) && ip !== '10.0.0.0' && ip !== '10.0.0.255', ip);
  // The same address asked for by 10 writers at once: exactly one gets it.
  const free = Array.from({ length: 254 }, (_, i) => `10.0.0.${i + 1}`).find((a) => !ips.includes(a) && a !== '10.0.0.1')!;
  const race = await Promise.all(Array.from({ length: 10 }, (_, i) => create(s, svc(`race${i}`, { clusterIP: free }))));
  t.equal(race.filter((r) => r.status === 201).length, 1);
  t.equal(race.filter((r) => r.status === 422).length, 9);
  // Concurrent updates of one service (type flips) keep its node ports consistent with the table.
  await create(s, svc('flip', { type: 'NodePort' }));
  await Promise.all(Array.from({ length: 10 }, (_, i) => s.request('PATCH', '/api/v1/namespaces/default/services/flip', { body: { spec: { type: i % 2 ? 'ClusterIP' : 'NodePort' } }, headers: { 'content-type': 'application/merge-patch+json' } })));
  // 254 usable addresses: 1 for the server's own service, 200 + 1 + 1 taken; the rest fill up, then the range is full.
  const more = await Promise.all(Array.from({ length: 60 }, (_, i) => create(s, svc(`m${i}`))));
  t.equal(more.filter((r) => r.status === 201).length, 254 - 1 - 200 - 1 - 1);
  const full = more.find((r) => r.status !== 201)!;
  t.equal(full.status, 500);
  t.match(full.json.message, 'failed to allocate a serviceIP: range is full');
});

t.test('dual-stack ranges', async (t) => {
  const s = await withServer(t, { args: ['--service-cluster-ip-range', '10.1.0.0/24,fd00:10::/120'] });
  const pref = await create(s, svc('pref', { ipFamilyPolicy: 'PreferDualStack' }));
  t.equal(pref.status, 201, pref.text);
  t.same(pref.json.spec.ipFamilies, ['IPv4', 'IPv6']);
  t.equal(pref.json.spec.clusterIPs.length, 2);
  t.match(pref.json.spec.clusterIPs[1], /^fd00:10::[0-9a-f]+$/);
  const v6 = await create(s, svc('v6', { ipFamilies: ['IPv6'] }));
  t.equal(v6.status, 201, v6.text);
  t.match(v6.json.spec.clusterIP, /^fd00:10::/);
  t.same(v6.json.spec.ipFamilies, ['IPv6']);
  const single = await create(s, svc('single'));
  t.same(single.json.spec.ipFamilies, ['IPv4']);
  // Upgrade to dual-stack allocates the secondary; downgrading needs SingleStack and releases it.
  const up = await s.request('PATCH', '/api/v1/namespaces/default/services/single', { body: { spec: { ipFamilyPolicy: 'RequireDualStack' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal(up.status, 200, up.text);
  t.equal(up.json.spec.clusterIPs.length, 2);
  const second = up.json.spec.clusterIPs[1];
  const down = await s.request('PATCH', '/api/v1/namespaces/default/services/single', { body: { spec: { ipFamilyPolicy: 'SingleStack' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  t.equal(down.status, 200, down.text);
  t.same(down.json.spec.ipFamilies, ['IPv4']);
  t.equal(down.json.spec.clusterIPs.length, 1);
  t.equal((await create(s, svc('reuse', { ipFamilies: ['IPv6'], clusterIP: second }))).status, 201, 'released secondary reused');
});

t.test('the server\'s own Service, Endpoints and EndpointSlice; certificate names', async (t) => {
  // Loopback: endpoints on it are allowed here, unlike the reference (a single-host control plane; docs/validation.md).
  const s = await withServer(t, { brand: 'kubernetes', args: ['--advertise-address', '127.0.0.1'] });
  const own = await s.get('/api/v1/namespaces/default/services/kubernetes');
  t.equal(own.status, 200);
  t.equal(own.json.spec.clusterIP, '10.96.0.1');
  t.same(own.json.spec.ports, [{ name: 'https', protocol: 'TCP', port: 443, targetPort: s.port }]);
  t.equal(own.json.metadata.labels.component, 'apiserver');
  const ep = await s.get('/api/v1/namespaces/default/endpoints/kubernetes');
  t.same(ep.json.subsets, [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: s.port, protocol: 'TCP' }] }]);
  const sl = await s.get('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes');
  t.equal(sl.status, 200);
  t.equal(sl.json.metadata.labels['kubernetes.io/service-name'], 'kubernetes');
  t.equal(sl.json.addressType, 'IPv4');
  t.same(sl.json.endpoints.map((e: { addresses: string[] }) => e.addresses), [['127.0.0.1']]);
  // Kept current: a damaged Endpoints is put back.
  await s.request('PUT', '/api/v1/namespaces/default/endpoints/kubernetes', { body: { ...ep.json, subsets: [] } });
  let back;
  for (let i = 0; i < 50; i++) {
    back = (await s.get('/api/v1/namespaces/default/endpoints/kubernetes')).json;
    if (back.subsets?.length) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.same(back.subsets?.[0]?.addresses, [{ ip: '127.0.0.1' }], 'endpoints restored');
  await s.request('DELETE', '/api/v1/namespaces/default/services/kubernetes');
  let svcBack;
  for (let i = 0; i < 50; i++) {
    svcBack = await s.get('/api/v1/namespaces/default/services/kubernetes');
    if (svcBack.status === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(svcBack!.json.spec.clusterIP, '10.96.0.1', 'service recreated with the first IP');

  const cert = new x509.X509Certificate(readFileSync(path.join(s.dataDir, 'pki/apiserver.crt')));
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension)!;
  const names = san.names.items.map((n) => n.value);
  for (const n of ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local', '10.96.0.1']) t.ok(names.includes(n), `SAN ${n}`);
});

t.test('kubectl expose and create service nodeport, with every release', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const releases = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33'].map((v) => [v, kubectlRelease(v)] as const).filter(([, b]) => b);
  for (const [v, bin] of releases.length ? releases : [['default', undefined] as const]) {
    const n = v.replace('.', '-');
    t.equal((await kubectl(s, ['create', 'deployment', `web-${n}`, '--image=nginx'], { bin })).code, 0);
    const ex = await kubectl(s, ['expose', 'deployment', `web-${n}`, '--port=80', '--type=NodePort'], { bin });
    t.equal(ex.code, 0, `${v} expose: ${ex.stderr}`);
    const np = await kubectl(s, ['create', 'service', 'nodeport', `np-${n}`, '--tcp=8080:80'], { bin });
    t.equal(np.code, 0, `${v} create service nodeport: ${np.stderr}`);
    const get = await kubectl(s, ['get', 'svc', `web-${n}`, `np-${n}`, '--no-headers'], { bin });
    t.equal(get.code, 0, get.stderr);
    const lines = get.stdout.trim().split('\n');
    t.equal(lines.length, 2);
    for (const l of lines) t.match(l, /^\S+\s+NodePort\s+10\.\d+\.\d+\.\d+\s+<none>\s+\d+:3\d{4}\/TCP/, `${v}: ${l}`);
    const dup = await kubectl(s, ['create', 'service', 'clusterip', `dup-${n}`, '--tcp=80', '--clusterip=10.96.0.1'], { bin });
    t.not(dup.code, 0);
    t.match(dup.stderr, 'failed to allocate IP 10.96.0.1: provided IP is already allocated', `${v}: taken IP refused`);
  }
});

