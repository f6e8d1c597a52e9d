// Stock kubectl's list/watch paths against the kubernetes brand: `get --watch`, chunked lists
// (`--chunk-size`), and `wait --for=delete`. Skipped when kubectl is not installed.
import t from 'tap';
import { sleep, withServer, type TestServer } from '../lib/server.js';
import { kubectl, noKubectl, startKubectl } from '../lib/kubectl.js';
import { eventually as until } from '../lib/poll.js';

/** These tests count every ConfigMap in their namespaces: without the root CA one the publisher adds. */
const NO_ROOT_CA = ['root-ca-publisher', 'cluster-authentication-trust'];

const cm = (name: string, ns: string, data: Record<string, string> = { a: '1' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data });

async function mkNs(s: TestServer, name: string) {
  const r = await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  if (r.status !== 201) throw new Error(`namespace ${name}: ${r.status} ${r.text}`);
}

async function mkCm(s: TestServer, ns: string, name: string) {
  const r = await s.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: cm(name, ns) });
  if (r.status !== 201) throw new Error(`configmap ${ns}/${name}: ${r.status} ${r.text}`);
  return r.json;
}

/** Whether `p` settles within `ms` (the timer does not keep the process alive afterwards). */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((r) => { timer = setTimeout(() => r(false), ms); });
  return Promise.race([p.then(() => true, () => true), timeout]).finally(() => clearTimeout(timer));
}

t.test('kubectl list and watch against the kubernetes brand', { skip: noKubectl }, async (t) => {
  // -v=3: a line per answered request, so a test can wait until kubectl has read what it waits on
  const s = await withServer(t, { withoutControllers: NO_ROOT_CA, brand: 'kubernetes', args: ['-v=3'] });

  await t.test('kubectl get cm --watch sees create, modify and delete', async (t) => {
    await mkNs(s, 'kw');
    await mkCm(s, 'kw', 'pre');
    const events = startKubectl(s, ['get', 'cm', '-n', 'kw', '--watch', '--output-watch-events']);
    const plain = startKubectl(s, ['get', 'cm', '-n', 'kw', '--watch']);
    t.teardown(() => { events.child.kill('SIGKILL'); plain.child.kill('SIGKILL'); });
    t.ok(await until(() => /^ADDED\s+pre\s/m.test(events.out.stdout) && /^pre\s/m.test(plain.out.stdout), 60_000), `the initial list is printed (${events.out.stdout}${events.out.stderr})`);
    t.match(events.out.stdout, /^EVENT\s+NAME\s+DATA\s+AGE/m, 'table header with the EVENT column');
    t.match(plain.out.stdout, /^NAME\s+DATA\s+AGE/m, 'table header');

    await mkCm(s, 'kw', 'live');
    t.ok(await until(() => /^ADDED\s+live\s+1\s/m.test(events.out.stdout), 60_000), 'ADDED live');
    const p = await s.request('PATCH', '/api/v1/namespaces/kw/configmaps/live', { body: { data: { a: '1', b: '2' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    t.equal(p.status, 200);
    t.ok(await until(() => /^MODIFIED\s+live\s+2\s/m.test(events.out.stdout), 60_000), 'MODIFIED live (2 data keys)');
    t.equal((await s.request('DELETE', '/api/v1/namespaces/kw/configmaps/live')).status, 200);
    t.ok(await until(() => /^DELETED\s+live\s/m.test(events.out.stdout), 60_000), 'DELETED live');
    t.ok(await until(() => (plain.out.stdout.match(/^live\s/gm) ?? []).length >= 3, 60_000), `plain --watch printed a row per change:\n${plain.out.stdout}`);
    const rows = events.out.stdout.split('\n').filter((l) => /^(ADDED|MODIFIED|DELETED)\s/.test(l)).map((l) => l.split(/\s+/).slice(0, 2).join(' '));
    t.same(rows, ['ADDED pre', 'ADDED live', 'MODIFIED live', 'DELETED live'], 'every event once, in order');
    t.notOk(events.out.exited, `still watching (${events.out.stderr})`);
    events.child.kill('SIGTERM');
    plain.child.kill('SIGTERM');
    await Promise.all([events.exit, plain.exit]);
    t.notMatch(events.out.stderr, /error|unable/i, 'no errors from kubectl');
  });

  await t.test('kubectl get cm --chunk-size=2 pages with limit=2 and lists everything', async (t) => {
    await mkNs(s, 'kc');
    const names = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7'];
    for (const n of names) await mkCm(s, 'kc', n);
    const r = await kubectl(s, ['get', 'cm', '-n', 'kc', '--chunk-size=2', '-v=6']);
    t.equal(r.code, 0, r.stderr.slice(-1000));
    const listed = r.stdout.split('\n').slice(1).filter(Boolean).map((l) => l.split(/\s+/)[0]);
    t.same(listed.filter((n) => n !== 'kube-root-ca.crt'), names, 'all seven configmaps, in order');
    const urls = r.stderr.match(/https:\/\/[^\s"]*\/api\/v1\/namespaces\/kc\/configmaps\?[^\s"]*/g) ?? [];
    const paged = urls.filter((u) => /[?&]limit=2(&|$)/.test(u));
    t.ok(paged.length >= 4, `several requests with limit=2 (${paged.length}):\n${urls.join('\n')}`);
    t.ok(paged.filter((u) => /[?&]continue=/.test(u)).length >= 3, 'the later ones carry a continue token');
    t.ok(urls.length > 0 && urls.every((u) => /[?&]limit=2(&|$)/.test(u)), 'every list request asked for chunks of 2');

    const json = await kubectl(s, ['get', 'cm', '-n', 'kc', '--chunk-size=3', '-o', 'json']);
    t.equal(json.code, 0, json.stderr);
    t.same(JSON.parse(json.stdout).items.map((i: any) => i.metadata.name).filter((n: string) => n !== 'kube-root-ca.crt'), names, '-o json with --chunk-size=3');
    const all = await kubectl(s, ['get', 'cm', '-A', '--chunk-size=1']);
    t.equal(all.code, 0, all.stderr);
    for (const n of names) t.match(all.stdout, new RegExp(`^kc\\s+${n}\\s`, 'm'), `-A lists kc/${n}`);
  });

  await t.test('kubectl wait --for=delete returns when another request deletes the object', async (t) => {
    await mkNs(s, 'kd');
    await mkCm(s, 'kd', 'x');
    const started = Date.now();
    const w = startKubectl(s, ['wait', '--for=delete', 'cm/x', '-n', 'kd', '--timeout=30s']);
    t.teardown(() => { w.child.kill('SIGKILL'); });
    // kubectl lists the object, then watches from the list's revision: the delete must come after the
    // list (before it, kubectl finds nothing and exits 0 without "condition met"; a busy machine got there)
    const listed = await until(() => s.logs.some((l) => l.includes('URI="/api/v1/namespaces/kd/configmaps?') && l.includes('kubectl')), 20_000);
    t.ok(listed, 'kubectl listed the object');
    await sleep(300);
    t.notOk(w.out.exited, `still waiting before the delete (${w.out.stderr})`);
    const d = await s.request('DELETE', '/api/v1/namespaces/kd/configmaps/x');
    t.equal(d.status, 200);
    const exited = await within(w.exit, 20_000);
    t.ok(exited, 'kubectl wait returned');
    t.equal(w.out.code, 0, `exit 0 (${w.out.stderr})`);
    t.match(w.out.stdout, /configmap\/x condition met/);
    t.ok(Date.now() - started < 15_000, `well before the 30 s timeout (${Date.now() - started} ms)`);

    // Already gone: returns at once.
    const gone = await kubectl(s, ['wait', '--for=delete', 'cm/x', '-n', 'kd', '--timeout=5s']);
    t.equal(gone.code, 0, `already deleted: exit 0 (${gone.stderr})`);
  });
});
