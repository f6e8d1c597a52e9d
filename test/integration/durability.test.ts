// Durability: every create the server acknowledged (201) survives a SIGKILL in the middle of a
// concurrent write load, with the same resourceVersion and uid, and revisions never go backwards
// after the restart. Run with group commit (the default) and, when the flag exists, without it.
import { rmSync } from 'node:fs';
import t from 'tap';
import { FLAGS } from '../../kernel/ops/flags.js';
import { sleep, startServer, type TestServer } from '../lib/server.js';

const WORKERS = 32;
const LOAD_MS = 1500;
const CM_PATH = '/api/v1/namespaces/default/configmaps';

interface Ack { name: string; rv: number; uid: string }

const variants: { name: string; args: string[] }[] = [{ name: 'group commit (default)', args: [] }];
if ('storage-group-commit' in FLAGS) variants.push({ name: 'one sync per write (--storage-group-commit=false)', args: ['--storage-group-commit=false'] });

for (const v of variants) {
  t.test(`acknowledged writes survive SIGKILL: ${v.name}`, async (t) => {
    const started: TestServer[] = [];
    let dataDir: string | undefined;
    t.teardown(async () => {
      for (const s of started) {
        if (s.proc.exitCode === null && s.proc.signalCode === null) await s.stop('SIGKILL');
      }
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    const s = await startServer({ keepDataDir: true, args: v.args });
    started.push(s);
    dataDir = s.dataDir;

    // ---- load: 32 workers, each creating cm-<worker>-<i> one after another until the server dies
    const acks: Ack[] = [];
    let outstanding = 0;
    let failures = 0;
    let unexpected: string | undefined;
    let stop = false;
    const worker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const name = `cm-${w}-${i}`;
        outstanding++;
        try {
          const r = await s.request('POST', CM_PATH, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { worker: String(w), i: String(i) } } });
          if (r.status === 201) acks.push({ name, rv: Number(r.json.metadata.resourceVersion), uid: r.json.metadata.uid });
          else unexpected ??= `${name}: ${r.status} ${r.text}`;
        } catch {
          failures++; // the connection died with the server
          return;
        } finally {
          outstanding--;
        }
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    await sleep(LOAD_MS);
    // on a loaded machine the first acknowledgements can take longer: kill only once there are some
    for (let waited = 0; acks.length <= WORKERS && waited < 30_000; waited += 100) await sleep(100);
    const exited = new Promise<void>((r) => s.proc.once('exit', () => r()));
    const inFlightAtKill = outstanding;
    s.proc.kill('SIGKILL');
    await exited;
    stop = true;
    await load;

    t.equal(s.proc.signalCode, 'SIGKILL', 'the server died by SIGKILL');
    t.equal(unexpected, undefined, 'every answered create was a 201');
    t.ok(acks.length > WORKERS, `creates acknowledged before the kill: ${acks.length}`);
    t.ok(inFlightAtKill > 0, `requests in flight at the kill: ${inFlightAtKill} (${failures} failed with the connection)`);
    const maxAck = Math.max(...acks.map((a) => a.rv));
    t.equal(new Set(acks.map((a) => a.rv)).size, acks.length, 'acknowledged resourceVersions are distinct');

    // ---- restart on the same data dir
    const s2 = await startServer({ dataDir: s.dataDir, keepDataDir: true, args: v.args });
    started.push(s2);
    const list = await s2.get(CM_PATH);
    t.equal(list.status, 200, 'list after the restart');
    if (list.status !== 200) t.comment(list.text.slice(0, 500));
    const byName = new Map<string, any>(list.json.items.map((o: any) => [o.metadata.name, o]));
    const missing: string[] = [];
    const changed: string[] = [];
    for (const a of acks) {
      const o = byName.get(a.name);
      if (!o) missing.push(a.name);
      else if (Number(o.metadata.resourceVersion) !== a.rv || o.metadata.uid !== a.uid) changed.push(`${a.name}: rv ${a.rv}→${o.metadata.resourceVersion} uid ${a.uid}→${o.metadata.uid}`);
    }
    t.same(missing, [], `every acknowledged object is present (${acks.length} checked, ${list.json.items.length} listed)`);
    t.same(changed, [], 'with the same resourceVersion and uid');
    const listed = list.json.items.map((o: any) => Number(o.metadata.resourceVersion));
    t.equal(new Set(listed).size, listed.length, 'listed resourceVersions are distinct');
    const listRv = Number(list.json.metadata.resourceVersion);
    t.ok(listRv >= maxAck, `list resourceVersion ${listRv} >= max acknowledged ${maxAck}`);

    const c = await s2.request('POST', CM_PATH, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-restart' }, data: { a: '1' } } });
    t.equal(c.status, 201, 'a create after the restart');
    if (c.status !== 201) t.comment(c.text.slice(0, 500));
    const newRv = Number(c.json?.metadata?.resourceVersion);
    t.ok(newRv > maxAck, `a new create's resourceVersion ${newRv} > every acknowledged one (${maxAck})`);
    t.ok(newRv > listRv && newRv > Math.max(...listed), 'and above everything stored: no revision goes backwards');
    const g = await s2.get(`${CM_PATH}/after-restart`);
    t.equal(g.json?.metadata?.resourceVersion, c.json?.metadata?.resourceVersion, 'the new object reads back');

    t.equal(await s2.stop(), 0, 'the restarted server stops cleanly');
  });
}
