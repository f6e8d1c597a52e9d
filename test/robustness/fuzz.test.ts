// A bounded fuzz and abuse run: over 10,000 hostile requests from a seeded generator (reproducible:
// CAPI_FUZZ_SEED, CAPI_FUZZ_COUNT) — bodies nested far too deep, broken JSON and YAML, YAML alias
// bombs and !!binary, garbage strategic-merge directives, random JSON patches, bad query parameters,
// odd names and paths, stale preconditions — against one server, many at a time. Every answer must
// be a well-formed Status (code matching the HTTP status) and never a 500 (but the reference's for an unparsable resourceVersion); the server stays ready;
// canary objects that only ever receive invalid writes are byte-for-byte unchanged (nothing
// half-written); every listed object reads back as the same bytes.
import https from 'node:https';
import { writeFileSync } from 'node:fs';
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';
import { rng } from '../lib/rng.js';

const SEED = Number(process.env.CAPI_FUZZ_SEED ?? 9);
const COUNT = Number(process.env.CAPI_FUZZ_COUNT ?? 10_500);
const CONCURRENCY = 16;
const NS = '/api/v1/namespaces/default';
const CM = `${NS}/configmaps`;
const DEP = '/apis/apps/v1/namespaces/default/deployments';
const CANARIES = [`${CM}/canary-0`, `${CM}/canary-1`, `${DEP}/canary-dep`];


interface Req { method: string; path: string; ct?: string; body?: string | Buffer; accept?: string; canary?: boolean }

const MERGE = 'application/merge-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const JSONP = 'application/json-patch+json';
const APPLY = 'application/apply-patch+yaml';

function generator(seed: number) {
  const r = rng(seed);
  const deepObj = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
  const deepArr = (n: number) => '['.repeat(n) + ']'.repeat(n);
  // Past the 1,000-level limit; one in ten past the reference decoder's own 10,000.
  const deep = () => (r.next() < 0.5 ? deepObj : deepArr)(r.next() < 0.1 ? 10_001 + r.int(5000) : 1001 + r.int(2000));
  const junkChars = ['{', '}', '[', ']', '"', ':', ',', '\\', '\u0000', '\uffff', 'ä', '$patch', 'null', '-', ' ', '\n', '&a', '*a', '!!binary', '%', '\ud800'];
  const junk = (n: number) => Array.from({ length: n }, () => r.pick(junkChars)).join('');
  const scalar = () => r.pick<unknown>([null, true, 0, -1, 1e308, 'x', '', [], {}, [1, 'a'], { a: null }, 'bogus', 1.5]);
  const directive = () => r.pick(['$patch', '$retainKeys', '$setElementOrder/containers', '$setElementOrder/finalizers', '$deleteFromPrimitiveList/finalizers', '$deleteFromPrimitiveList/containers', '$setElementOrder/env']);
  const directivePatch = () => {
    const d: Record<string, unknown> = { [directive()]: r.pick<unknown>(['bogus', 'replace-ish', 7, null, {}, [1, 2], [{ x: 1 }], 'delete!', ['name']]) };
    const where = r.int(4);
    const spec = { template: { spec: where === 0 ? d : { containers: [{ name: 'c', ...d }] } } };
    return JSON.stringify(where === 3 ? d : where === 2 ? { metadata: d } : { spec });
  };
  const laughs = () => {
    let y = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n';
    y += '  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n';
    for (let i = 1; i < 6 + r.int(4); i++) y += `  a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]\n`;
    return y;
  };
  const yamlBad = () => r.pick([
    () => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: !!binary ${r.pick(['aGVsbG8=', '%%%', '', 'a'])}\ndata: {a: !!binary "${junk(4)}"}\n`,
    laughs,
    () => `metadata: {name: y}\ndata: ${deepArr(1001 + r.int(5000))}\n`,
    () => `${junk(30 + r.int(200))}\n`,
    () => `metadata:\n  name: y\n---\nmetadata:\n  name: z\n`,
    () => `metadata: &m\n  name: y\n  labels: *m\n`,
    () => `data:\n  a: !!set {x, y}\n  b: !!timestamp 2001-12-14\n  c: !!omap [a: 1]\n  d: !!js/function "f()"\n`,
  ])();
  const badName = () => r.pick(['UPPER', 'a'.repeat(300), 'with space', '..', 'a/b', '-lead', 'trail-', 'ü', '%00', '%2F', 'a.b..c', '']);
  const badQuery = () => r.pick([
    'resourceVersion=abc', 'resourceVersion=-1', 'resourceVersion=99999999999999999999', 'resourceVersionMatch=Exact', 'resourceVersionMatch=bogus&resourceVersion=1',
    'limit=-5', 'limit=abc', 'limit=1e9', 'continue=%%%', 'continue=eyJ2IjoxfQ', 'labelSelector=a%20in%20(', 'labelSelector=!!', 'labelSelector=a=%00',
    'fieldSelector=spec.bogus=1', 'fieldSelector=metadata.name==', 'watch=maybe&timeoutSeconds=1', 'timeoutSeconds=-1', 'timeoutSeconds=x', 'dryRun=Some', 'fieldValidation=Loose',
    'fieldManager=' + 'm'.repeat(200), 'force=true', 'propagationPolicy=Sideways', 'gracePeriodSeconds=abc', 'sendInitialEvents=true', 'allowWatchBookmarks=true&sendInitialEvents=false',
  ]);
  const canary = () => r.pick(CANARIES);
  const cmCanary = () => r.pick(CANARIES.slice(0, 2));

  /** Requests that must fail: aimed at canaries, which must come out unchanged. */
  const invalid: (() => Req)[] = [
    () => ({ method: 'PATCH', path: canary(), ct: r.pick([MERGE, SMP, JSONP]), body: r.pick([`{"x":${deep()}}`, `[{"op":"add","path":"/x","value":${deep()}}]`]) }),
    () => ({ method: 'PATCH', path: canary(), ct: APPLY, body: r.next() < 0.5 ? `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"canary-0"},"data":${deep()}}` : yamlBad() }),
    () => ({ method: 'PUT', path: canary(), ct: 'application/json', body: `{"metadata":{"name":"x"},"z":${deep()}}` }),
    () => ({ method: 'PUT', path: cmCanary(), ct: 'application/yaml', body: yamlBad() }),
    () => ({ method: 'PATCH', path: canary(), ct: r.pick([MERGE, SMP, JSONP, APPLY, 'application/json', 'text/plain', '']), body: junk(1 + r.int(300)) }),
    () => ({ method: 'PATCH', path: `${DEP}/canary-dep`, ct: SMP, body: JSON.stringify(r.pick([{ $patch: 'bogus' }, { spec: { template: { spec: { containers: [{ name: 'c', $patch: r.pick(['bogus', 7, null]) }] } } } }, { spec: { template: { spec: { '$setElementOrder/containers': r.pick(['x', 7, { a: 1 }]) } } } }, { spec: { strategy: { $retainKeys: r.pick(['x', 7]) } } }])) }),
    () => ({ method: 'PATCH', path: canary(), ct: JSONP, body: JSON.stringify([{ op: r.pick(['add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus', '']), path: r.pick(['/metadata/uid', '/nope/deeper', '', 'no-slash', '/metadata/name/x', '/data/~2']), from: r.pick(['/zz', undefined, '/metadata']), value: scalar() }, { op: 'test', path: '/metadata/uid', value: 'not-the-uid' }]) }),
    () => ({ method: 'PATCH', path: canary(), ct: MERGE, body: JSON.stringify({ metadata: { resourceVersion: '1', labels: { a: 'b' } } }) }),
    () => ({ method: 'PUT', path: canary(), ct: 'application/json', body: JSON.stringify({ metadata: { name: r.pick(['other', 'canary-0']), resourceVersion: '1' }, data: { a: 'b' } }) }),
    () => ({ method: 'DELETE', path: canary(), ct: 'application/json', body: r.pick([`{"preconditions":{"uid":"nope"}}`, `{"preconditions":{"resourceVersion":"1"}}`, `{"x":${deep()}}`, junk(40), '{"propagationPolicy":"Sideways"}', '{"dryRun":["Some"]}']) }),
    // (DELETE takes its options from the query only when it has no body, as the reference does.)
    () => ({ method: 'PATCH', path: `${canary()}?${r.pick(['dryRun=Some', 'fieldValidation=Loose', `fieldManager=${'m'.repeat(200)}`, 'force=true'])}`, ct: MERGE, body: '{"data":{"q":"1"}}' }),
    () => ({ method: 'DELETE', path: `${canary()}?${r.pick(['dryRun=Some', 'propagationPolicy=Sideways', 'gracePeriodSeconds=abc', 'propagationPolicy=Orphan&orphanDependents=true'])}` }),
    () => ({ method: 'PATCH', path: `${cmCanary()}?fieldValidation=Strict`, ct: MERGE, body: '{"bogus":1,"data":{"a":"b","a":"c"}}' }),
    () => ({ method: 'PATCH', path: cmCanary(), ct: MERGE, body: JSON.stringify({ data: { k: scalar() === null ? 5 : [1] } }) }),
  ];
  /** Anything goes: aimed at scratch objects and collections; success is allowed. */
  const any: (() => Req)[] = [
    () => ({ method: 'POST', path: CM, ct: r.pick(['application/json', 'application/yaml']), body: r.next() < 0.5 ? JSON.stringify({ metadata: { name: r.next() < 0.5 ? badName() : `s-${r.int(50)}` }, data: { [junk(3)]: 'x' } }) : yamlBad() }),
    () => ({ method: 'POST', path: `${NS}/${r.pick(['configmaps', 'secrets', 'pods', 'services', 'nosuch'])}`, ct: 'application/json', body: `{"metadata":{"name":"d"},"spec":${deep()}}` }),
    () => ({ method: 'GET', path: `${r.pick([CM, DEP, `${NS}/pods`, '/api/v1/namespaces'])}?${badQuery()}`, accept: r.pick(['application/json', 'application/yaml', 'application/json;as=Table;v=v1;g=meta.k8s.io', 'application/vnd.kubernetes.protobuf', 'text/html', '*/*;q=0']) }),
    () => ({ method: 'GET', path: r.pick([`${CM}/${badName()}`, `/api/v1/namespaces/${badName()}/configmaps`, '/apis/%zz', '/api/v1/namespaces/default/configmaps/a%2Fb', `/apis/${junk(5)}/v1/x`, '/openapi/v3/apis/' + junk(3), '/api/v1/' + 'x/'.repeat(50)]) }),
    () => ({ method: r.pick(['PATCH', 'PUT', 'DELETE']), path: `${CM}/s-${r.int(50)}?${badQuery()}`, ct: MERGE, body: '{"data":{"q":"1"}}' }),
    () => ({ method: 'PATCH', path: `${DEP}/scratch-dep`, ct: SMP, body: directivePatch() }),
    () => ({ method: 'PATCH', path: `${CM}/s-${r.int(50)}`, ct: r.pick([MERGE, SMP, JSONP]), body: r.pick([JSON.stringify({ data: { [`k${r.int(9)}`]: String(r.int(9)) } }), JSON.stringify([{ op: 'add', path: `/data/k${r.int(9)}`, value: 'v' }]), directivePatch(), junk(20)]) }),
    () => ({ method: 'PATCH', path: `${CM}/s-${r.int(50)}?fieldManager=f${r.int(3)}`, ct: APPLY, body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ignored' }, data: { a: String(r.int(3)) } }) }),
    () => ({ method: 'DELETE', path: `${CM}/s-${r.int(50)}?${r.next() < 0.5 ? badQuery() : 'propagationPolicy=Foreground'}` }),
    () => ({ method: r.pick(['PUT', 'POST', 'PATCH', 'DELETE', 'GET']), path: r.pick(['/healthz', '/version', '/apis', '/api', '/metrics', '/livez/ping', '/readyz?verbose=' + junk(3)]), ct: 'application/json', body: junk(10) }),
    () => ({ method: 'POST', path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', ct: r.pick(['application/json', 'application/yaml']), body: r.next() < 0.3 ? laughs() : r.next() < 0.5 ? `{"spec":${deep()}}` : JSON.stringify({ spec: { resourceAttributes: { verb: scalar(), resource: junk(4) } } }) }),
  ];
  return (): Req => (r.next() < 0.6 ? { ...r.pick(invalid)(), canary: true } : r.pick(any)());
}

t.test(`fuzz: ${COUNT} hostile requests (seed ${SEED})`, async (t) => {
  const s: TestServer = await withServer(t, { brand: 'kubernetes' });
  t.teardown(() => { if (process.env.CAPI_FUZZ_LOG) writeFileSync(process.env.CAPI_FUZZ_LOG, s.logs.join('\n')); });
  const agent = new https.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  t.teardown(() => agent.destroy());
  for (const [p, body] of [
    [CM, { metadata: { name: 'canary-0', labels: { a: 'b' }, finalizers: ['example.com/keep'] }, data: { a: 'b' } }],
    [CM, { metadata: { name: 'canary-1' }, data: { x: 'y' } }],
    [DEP, { metadata: { name: 'scratch-dep' }, spec: { selector: { matchLabels: { app: 's' } }, template: { metadata: { labels: { app: 's' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } }],
    [DEP, { metadata: { name: 'canary-dep' }, spec: { selector: { matchLabels: { app: 'c' } }, template: { metadata: { labels: { app: 'c' } }, spec: { containers: [{ name: 'c', image: 'nginx', env: [{ name: 'A', value: '1' }] }] } } } }],
  ] as const) t.equal((await s.request('POST', p, { body })).status, 201);
  const before = await Promise.all(CANARIES.map(async (p) => (await s.get(p)).text));

  const send = (q: Req) => new Promise<{ status: number; text: string; ct: string }>((resolve) => {
    const headers: Record<string, string> = { authorization: `Bearer ${s.token}`, accept: q.accept ?? 'application/json' };
    if (q.ct !== undefined) headers['content-type'] = q.ct;
    if (q.body !== undefined) headers['content-length'] = String(Buffer.byteLength(q.body));
    // Node refuses unescaped characters in a path: send what a client would, percent-encoded bytes.
    const path = q.path.replace(/[^\x21-\x7e]/g, (c) => [...Buffer.from(c)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''));
    const req = https.request({ host: '127.0.0.1', port: s.port, method: q.method, path, headers, ca: s.ca, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8'), ct: String(res.headers['content-type'] ?? '') }));
      res.on('error', (e) => resolve({ status: -1, text: String(e), ct: '' }));
    });
    req.on('error', (e) => resolve({ status: -1, text: String(e), ct: '' }));
    if (q.body !== undefined) req.write(q.body);
    req.end();
  });

  const next = generator(SEED);
  const codes: Record<number, number> = {};
  const bad: string[] = [];
  let sent = 0;
  const inflight = new Set<Req>();
  let reported = false;
  const started = Date.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (sent < COUNT) {
      sent++;
      const q = next();
      inflight.add(q);
      const r = await send(q);
      inflight.delete(q);
      if (r.status === -1 && !reported) { reported = true; console.error('IN FLIGHT', [...inflight, q].map((x) => `${x.method} ${x.path} [${x.ct}] ${String(x.body ?? '').slice(0, 150)}`).join('\n')); }
      codes[r.status] = (codes[r.status] ?? 0) + 1;
      const where = `${q.method} ${q.path.slice(0, 120)} [${q.ct ?? ''}] ${String(q.body ?? '').slice(0, 80)}`;
      const fail = (why: string) => { if (bad.length < 20) bad.push(`${why}: ${where} -> ${r.status} ${r.text.slice(0, 200)}`); };
      // 504 is the reference's answer to a resourceVersion the server has not reached (reason Timeout).
      const timeout = r.status === 504 && /Timeout/.test(r.text);
      // 500 is the reference's answer to a resourceVersion its storage cannot parse (the watch cache's InvalidError).
      const unparsedRv = r.status === 500 && /resourceVersion: Invalid value: .*strconv\.ParseUint/s.test(r.text);
      if (r.status < 200 || (r.status >= 500 && !timeout && !unparsedRv)) fail('no answer or a server error');
      else if (r.status === 404 && r.text === '404 page not found\n') {
        // A path nothing serves is answered as the reference's mux answers it, in plain text.
      } else if (r.status === 400 && r.text === '400 Bad Request' && /%(?![0-9a-fA-F]{2})|[\x00-\x20\x7f]/.test(q.path.split('?')[0])) {
        // A request target Go's server cannot parse (an invalid % escape, a control byte) is refused
        // by the reference's HTTP stack before any handler, in plain text (docs/operations.md, "Transport").
        if (!/^text\/plain/.test(r.ct)) fail('not Go\'s plain-text 400');
      } else if (r.status >= 300 && r.status !== 304 && /protobuf/.test(r.ct)) {
        // A client that asked for Protobuf gets its Status in the Protobuf envelope, as from the reference.
        if (!r.text.startsWith('k8s\u0000') || !r.text.includes('Status') || !r.text.includes('Failure')) fail('not a well-formed Protobuf Status');
      } else if (r.status >= 300 && r.status !== 304) {
        let st: any;
        try { st = JSON.parse(r.text); } catch { /* below */ }
        // A client that prefers Protobuf gets its Status in Protobuf (the envelope around a meta.v1 Status).
        const pbStatus = r.text.startsWith('k8s\0') && r.text.includes('\u0006Status') && r.text.includes('Failure');
        if (pbStatus) { /* well-formed: decoded in test/integration/protobuf.test.ts */ } else if (!st || st.kind !== 'Status' || st.code !== r.status || typeof st.message !== 'string' || st.status !== 'Failure') fail('not a well-formed Status');
      } else if (q.canary && q.method !== 'GET' && !/dryRun=All/.test(q.path)) fail('an invalid write to a canary succeeded');
    }
  }));
  const secs = (Date.now() - started) / 1000;
  t.comment(`${COUNT} requests in ${secs.toFixed(1)} s; status codes ${JSON.stringify(codes)}`);
  t.same(bad, [], 'every answer a well-formed Status, no 5xx, no invalid write accepted');
  t.equal(s.proc.exitCode, null, 'the server is alive');
  t.equal((await s.get('/readyz')).status, 200, 'and ready');
  t.same(await Promise.all(CANARIES.map(async (p) => (await s.get(p)).text)), before, 'canaries unchanged: nothing half-written');
  // Every listed object reads back as the same bytes (no entry differs between list and get).
  const list = (await s.get(CM)).json;
  for (const item of list.items) t.same((await s.get(`${CM}/${encodeURIComponent(item.metadata.name)}`)).json, item, `list and get agree on ${item.metadata.name}`);
  t.notOk(s.logs.some((l) => /internal error|Maximum call stack/.test(l)), 'no internal error logged');
});
