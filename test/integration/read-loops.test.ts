// Read loops (--read-loops 2; kernel/replicas/): the TLS front gives each new connection to the next of
// the writer loop's app and the two loops' apps in turn, so three connections opened one after
// another reach all three. Every request here opens its own connection: whatever loop serves it,
// the API must be the one API — a write through one is read at once through the others, every
// watcher sees every change once and in order, certificates authenticate on each, and optimistic
// concurrency holds across them.
import t from 'tap';
import https from 'node:https';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot, startServer, withServer, type TestServer } from '../lib/server.js';
import { establish, widgetCRD } from '../lib/crd.js';
import { eventually } from '../lib/poll.js';


interface Reply { status: number; json: any }
/** One request on a connection of its own (no keep-alive), by token or by the admin's client certificate. */
function fresh(s: TestServer, method: string, p: string, body?: unknown, cert = false): Promise<Reply> {
  const pki = (f: string) => readFileSync(path.join(s.dataDir, 'pki', f));
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1', port: s.port, method, path: p, ca: s.ca, agent: false,
      headers: { accept: 'application/json', 'content-type': 'application/json', connection: 'close', ...(cert ? {} : { authorization: `Bearer ${s.token}` }) },
      ...(cert ? { cert: pki('admin-client.crt'), key: pki('admin-client.key') } : {}),
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try { json = JSON.parse(text); } catch { json = text; }
        resolve({ status: res.statusCode!, json });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(JSON.stringify(body));
    req.end();
  });
}

/** A watch on a connection of its own; events as (type, name, resourceVersion). */
function watch(s: TestServer, p: string): { events: string[]; close(): void } {
  const events: string[] = [];
  const req = https.request({ host: '127.0.0.1', port: s.port, path: p, ca: s.ca, agent: false, headers: { authorization: `Bearer ${s.token}`, accept: 'application/json' } }, (res) => {
    let buf = '';
    res.on('data', (c: Buffer) => {
      buf += c.toString('utf8');
      for (let i; (i = buf.indexOf('\n')) >= 0; buf = buf.slice(i + 1)) {
        if (!buf.slice(0, i).trim()) continue;
        const ev = JSON.parse(buf.slice(0, i));
        if (ev.type !== 'BOOKMARK') events.push(`${ev.type} ${ev.object.metadata.name} ${ev.object.metadata.resourceVersion}`);
      }
    });
  });
  req.on('error', () => {});
  req.end();
  return { events, close: () => req.destroy() };
}

const cms = '/api/v1/namespaces/default/configmaps';

t.test('every loop\'s audit events go to the one log, which rotates as one', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-loops-audit-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const policy = path.join(dir, 'policy.yaml');
  writeFileSync(policy, 'apiVersion: audit.cluster.io/v1\nkind: Policy\nomitStages: ["RequestReceived"]\nrules:\n  - level: RequestResponse\n    resources: [{ group: "", resources: ["configmaps"] }]\n  - level: None\n');
  const log = path.join(dir, 'audit.log');
  const a = await withServer(t, { args: ['--read-loops', '2', '--audit-log-path', log, '--audit-policy-file', policy, '--audit-log-maxsize', '1', '--audit-log-maxbackup', '20'] });
  const big = 'x'.repeat(150 * 1024);
  for (let i = 0; i < 12; i++) t.equal((await fresh(a, 'POST', cms, { metadata: { name: `big-${i}` }, data: { big } })).status, 201);
  const files = () => readdirSync(dir).filter((f) => f.startsWith('audit'));
  const events = () => files().flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)));
  t.ok(await eventually(() => events().filter((e) => e.verb === 'create').length === 12), 'every create is audited');
  const creates = events().filter((e) => e.verb === 'create').map((e) => e.objectRef.name).sort();
  t.same(creates, Array.from({ length: 12 }, (_, i) => `big-${i}`).sort(), 'each create once, whatever loop served it');
  t.ok(files().length > 1, 'the log rotated');
  for (const f of files()) t.ok(statSync(path.join(dir, f)).size <= 1024 * 1024, `${f} within --audit-log-maxsize`);
});

t.test('an error nothing caught on a read loop stops the server, as on its one loop', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-loops-exit-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'config.yaml');
  writeFileSync(config, `admission:\n  - plugin: NamespaceLifecycle\n  - plugin: ${JSON.stringify(path.join(repoRoot, 'test/fixtures/loop-exit-admission/index.js'))}\n`);
  const a = await withServer(t, { args: ['--read-loops', '1', '--config', config] });
  let gone = false;
  const exited = new Promise<number | null>((resolve) => a.proc.once('exit', (code) => { gone = true; resolve(code); }));
  // connections in turn until one reaches the read loop, where the fixture's error is thrown: the
  // second one behind the TLS front; where the loops share the port (Node 22/24), as the kernel spreads them
  for (let i = 0; i < 30 && !gone; i++) await fresh(a, 'POST', cms, { metadata: { name: 'end-this-loop' } }).catch(() => undefined);
  t.equal(await exited, 1, 'the server exits with 1 (not aborted by a thread ending with connections open)');
  t.ok(a.logs.some((l) => l.includes('read loop failed: stopping the server') && l.includes('a defect in a plugin')), 'and says why');
});

/**
 * Behind the TLS front (the default: client certificates on the secure port), and on a port the
 * loops' apps share (--secure-port-client-certs=false: uWS terminates TLS on every loop, and the
 * kernel spreads the connections).
 */
for (const mode of ['front', 'shared port'] as const) t.test(`read loops, ${mode}`, async (t) => {
  const s = await withServer(t, { args: ['--read-loops', '2', '-v=2', ...(mode === 'front' ? [] : ['--secure-port-client-certs=false'])] });
  t.test(`${mode}: ` + 'both loops started and serve', async (t) => {
    await eventually(() => s.logs.filter((l) => l.includes('"read loop serving"')).length === 2);
    t.equal(s.logs.filter((l) => l.includes('"read loop serving"')).length, 2, 'two read loops report serving');
    t.ok(s.logs.some((l) => l.includes('"serving"') && l.includes('readLoops=2')), 'the writer reports its loops');
  });

  t.test(`${mode}: ` + 'a client certificate authenticates on every loop', async (t) => {
    if (mode === 'shared port') return t.pass('no client certificates on this port');
    for (let i = 0; i < 6; i++) {
      const r = await fresh(s, 'GET', '/api/v1/namespaces/default', undefined, true);
      t.equal(r.status, 200, `connection ${i}: the admin's certificate is the admin (${r.json?.message ?? 'ok'})`);
    }
  });

  t.test(`${mode}: ` + 'a write through one loop is read at once through every other', async (t) => {
    for (let i = 0; i < 6; i++) {
      const c = await fresh(s, 'POST', cms, { metadata: { name: `ryw-${i}` }, data: { i: String(i) } });
      t.equal(c.status, 201, `create ryw-${i}`);
      for (let k = 0; k < 3; k++) {
        const g = await fresh(s, 'GET', `${cms}/ryw-${i}`);
        t.equal(g.status, 200, `ryw-${i} read on connection ${k}`);
        t.equal(g.json?.metadata?.resourceVersion, c.json.metadata.resourceVersion, 'at the revision the write returned');
      }
      const l = await fresh(s, 'GET', `${cms}?labelSelector=`);
      t.ok(l.json.items.some((o: any) => o.metadata.name === `ryw-${i}`), 'and in a consistent list');
      t.ok(Number(l.json.metadata.resourceVersion) >= Number(c.json.metadata.resourceVersion), 'whose revision is at least the write\'s');
    }
  });

  t.test(`${mode}: ` + 'every watcher, on every loop, sees every change once and in order', async (t) => {
    const start = (await fresh(s, 'GET', cms)).json.metadata.resourceVersion;
    const watchers = [0, 1, 2].map(() => watch(s, `${cms}?watch=true&resourceVersion=${start}&allowWatchBookmarks=true`));
    t.teardown(() => { for (const w of watchers) w.close(); });
    const expected: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await fresh(s, 'POST', cms, { metadata: { name: `w-${i}` } });
      expected.push(`ADDED w-${i} ${r.json.metadata.resourceVersion}`);
    }
    const u = await fresh(s, 'PUT', `${cms}/w-3`, { metadata: { name: 'w-3', resourceVersion: expected[3].split(' ')[2] }, data: { x: 'y' } });
    expected.push(`MODIFIED w-3 ${u.json.metadata.resourceVersion}`);
    const d = await fresh(s, 'DELETE', `${cms}/w-5`);
    t.equal(d.status, 200);
    await eventually(() => watchers.every((w) => w.events.length >= expected.length + 1));
    for (const [k, w] of watchers.entries()) {
      t.same(w.events.slice(0, expected.length), expected, `watcher ${k}: every write, in order, once`);
      t.match(w.events[expected.length], /^DELETED w-5 \d+$/, `watcher ${k}: then the delete`);
      t.equal(w.events.length, expected.length + 1, `watcher ${k}: nothing else`);
    }
  });

  t.test(`${mode}: ` + 'optimistic concurrency holds across loops', async (t) => {
    const c = await fresh(s, 'POST', cms, { metadata: { name: 'occ' } });
    const rv = c.json.metadata.resourceVersion;
    const results = await Promise.all([0, 1, 2].map((i) => fresh(s, 'PUT', `${cms}/occ`, { metadata: { name: 'occ', resourceVersion: rv }, data: { by: String(i) } })));
    t.same(results.map((r) => r.status).sort(), [200, 409, 409], 'one update from the same resourceVersion wins; the others conflict');
    const dup = await Promise.all([0, 1, 2].map(() => fresh(s, 'POST', cms, { metadata: { name: 'once' } })));
    t.same(dup.map((r) => r.status).sort(), [201, 409, 409], 'one create of a name wins');
  });

  t.test(`${mode}: ` + 'custom resources are served on every loop', async (t) => {
    await establish(s, widgetCRD());
    const widgets = '/apis/example.com/v1/namespaces/default/widgets';
    // each loop serves the definition from its own replica, moments after the writer does
    t.ok(await eventually(async () => (await Promise.all([0, 1, 2].map(() => fresh(s, 'GET', widgets)))).every((r) => r.status === 200)), 'listed on every loop');
    for (let i = 0; i < 3; i++) {
      const c = await fresh(s, 'POST', widgets, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: `wd-${i}` }, spec: { size: 'small' } });
      t.equal(c.status, 201, `create wd-${i}`);
      t.equal(c.json.spec.replicas, 1, 'defaulted from the schema');
    }
    for (let k = 0; k < 3; k++) t.equal((await fresh(s, 'GET', widgets)).json.items.length, 3, `every widget read on connection ${k}`);
  });

  t.test(`${mode}: a second server cannot join the port`, async (t) => {
    // SO_REUSEPORT would let another process of this user share the port and split clients between two stores
    await t.rejects(startServer({ args: ['--read-loops', '1', '--secure-port', String(s.port), ...(mode === 'front' ? [] : ['--secure-port-client-certs=false'])] }), /already in use/);
  });

  t.test(`${mode}: the server and its loops stop cleanly`, async (t) => {
    // connections kept alive on every loop when the stop comes: a thread may not end with them open
    const agents = [0, 1, 2, 3, 4, 5].map(() => new https.Agent({ keepAlive: true, maxSockets: 1 }));
    for (const agent of agents) {
      await new Promise<void>((resolve, reject) => https.get({ host: '127.0.0.1', port: s.port, path: '/api/v1/namespaces', ca: s.ca, agent, headers: { authorization: `Bearer ${s.token}` } }, (r) => { r.resume(); r.on('end', resolve); }).on('error', reject));
    }
    t.teardown(() => { for (const a of agents) a.destroy(); });
    t.equal(await s.stop(), 0, 'exit code 0 after SIGTERM');
    t.notOk(s.logs.some((l) => /read loop \d+ exited|uncaught|FATAL/i.test(l)), 'no loop died');
  });
});
