// Patches and server-side apply through real HTTPS against a started server: the four PATCH content
// types and their edge cases, the server-side apply rules 1-14 of Part A (each test names its rule),
// managedFields, merge-strategy markers of built-in types, field validation, dry-run, and a large
// apply served by the worker pool while other requests keep being answered.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { brands, withServer, type Reply, type TestServer } from '../lib/server.js';

const APPLY = 'application/apply-patch+yaml';
const MERGE = 'application/merge-patch+json';
const JSONP = 'application/json-patch+json';
const SMP = 'application/strategic-merge-patch+json';

const CM = '/api/v1/namespaces/default/configmaps';
const DEP = '/apis/apps/v1/namespaces/default/deployments';

type Obj = Record<string, any>;

const configMap = (name: string, data: Record<string, string> = {}, metadata: Obj = {}): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...metadata }, data });

const deployment = (name: string, podSpec: Obj, extra: Obj = {}): Obj => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: podSpec }, ...extra },
});

/** A partial Deployment carrying only some pod-spec fields (what a second applier sends). */
const podPart = (name: string, podSpec: Obj): Obj => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { template: { spec: podSpec } } });

function qs(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** PATCH with a content type; a string body goes as it is, anything else as JSON. */
function patch(s: TestServer, p: string, type: string, body: unknown, query: Record<string, string | undefined> = {}, headers: Record<string, string> = {}): Promise<Reply> {
  return s.request('PATCH', p + qs(query), { raw: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': type, ...headers } });
}

/** Server-side apply as `manager` (omit it with manager = undefined). */
function apply(s: TestServer, p: string, body: unknown, manager: string | undefined, query: Record<string, string | undefined> = {}): Promise<Reply> {
  return patch(s, p, APPLY, body, { fieldManager: manager, ...query });
}

const entries = (o: Obj): Obj[] => o?.metadata?.managedFields ?? [];
const entry = (o: Obj, manager: string, subresource?: string): Obj | undefined =>
  entries(o).find((e) => e.manager === manager && (subresource === undefined || e.subresource === subresource));
const managers = (o: Obj): string[] => entries(o).map((e) => e.manager).sort();

/** Whether a FieldsV1 tree holds the path (a list of keys such as 'f:data', 'k:{"name":"a"}'). */
function owns(e: Obj | undefined, ...keys: string[]): boolean {
  let cur = e?.fieldsV1;
  for (const k of keys) {
    if (!cur || typeof cur !== 'object' || !(k in cur)) return false;
    cur = cur[k];
  }
  return true;
}

/** The warnings of a response, one per `299 - "..."` value, whatever the header folding. */
function warnings(r: Reply): string[] {
  const h = r.headers['warning'];
  const all = Array.isArray(h) ? h.join(', ') : h ?? '';
  const out: string[] = [];
  const re = /299 - "((?:[^"\\]|\\.)*)"/g;
  for (let m = re.exec(all); m; m = re.exec(all)) out.push(JSON.parse(`"${m[1]}"`));
  return out;
}

/** Every key of a FieldsV1 tree is ".", "f:<name>", "k:<json>", "v:<json>" or "i:<n>", and every value an object. */
function fieldsV1Problems(node: unknown, at = ''): string[] {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return [`${at || '<root>'} is not an object`];
  const out: string[] = [];
  for (const [k, v] of Object.entries(node as Obj)) {
    if (k === '.') {
      if (!v || typeof v !== 'object' || Object.keys(v).length) out.push(`${at}/. is not {}`);
      continue;
    }
    const m = /^([fkvi]):(.*)$/s.exec(k);
    if (!m) { out.push(`${at}/${k}: bad key`); continue; }
    if (m[1] === 'k' || m[1] === 'v') {
      try { JSON.parse(m[2]); } catch { out.push(`${at}/${k}: not JSON`); }
    }
    out.push(...fieldsV1Problems(v, `${at}/${k}`));
  }
  return out;
}

/**
 * A Strict refusal: 422 Invalid is what this server answers (and what the brief asks for); the
 * reference documents 400 BadRequest for it. Either is accepted; a success is not.
 */
const strictStatus = (code: number) => code === 422 || code === 400;

const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

for (const brand of brands) {
  const cli = brand === 'kubernetes' ? 'kubectl' : 'clusterctl';
  const lastApplied = brand === 'kubernetes' ? 'kubectl.kubernetes.io/last-applied-configuration' : 'clusterctl.cluster.io/last-applied-configuration';
  const domain = brand === 'kubernetes' ? 'k8s.io' : 'cluster.io';

  t.test(`patch and server-side apply over HTTP (${brand} brand)`, async (t) => {
    const s = await withServer(t, { brand });
    const get = async (p: string) => (await s.get(p)).json as Obj;
    const create = async (p: string, body: Obj, manager?: string) => {
      const r = await s.request('POST', p + qs({ fieldManager: manager }), { body });
      if (r.status !== 201) throw new Error(`create ${p}: ${r.status} ${r.text}`);
      return r.json as Obj;
    };

    // ---------------------------------------------------------------- JSON patch

    await t.test('JSON patch: add, remove, replace, move, copy and test in one patch', async (t) => {
      await create(CM, configMap('jp-ops', { a: '1', b: '2', c: '3' }, { finalizers: ['example.com/one'] }));
      const r = await patch(s, `${CM}/jp-ops`, JSONP, [
        { op: 'test', path: '/data/a', value: '1' },
        { op: 'add', path: '/data/d', value: '4' },
        { op: 'remove', path: '/data/b' },
        { op: 'replace', path: '/data/c', value: '33' },
        { op: 'move', from: '/data/a', path: '/data/moved' },
        { op: 'copy', from: '/data/d', path: '/data/copied' },
        { op: 'add', path: '/metadata/finalizers/-', value: 'example.com/two' },
        { op: 'add', path: '/metadata/finalizers/0', value: 'example.com/zero' },
        { op: 'add', path: '/metadata/labels', value: { 'example.com/tier': 'web' } },
        { op: 'test', path: '/metadata/labels/example.com~1tier', value: 'web' },
      ]);
      t.equal(r.status, 200, r.text);
      t.same(r.json.data, { c: '33', d: '4', moved: '1', copied: '4' });
      t.same(r.json.metadata.finalizers, ['example.com/zero', 'example.com/one', 'example.com/two']);
      t.same(r.json.metadata.labels, { 'example.com/tier': 'web' }, 'a ~1 escape in a path');
      t.same((await get(`${CM}/jp-ops`)).data, r.json.data, 'stored');
      await patch(s, `${CM}/jp-ops`, JSONP, [{ op: 'replace', path: '/metadata/finalizers', value: [] }]);
    });

    await t.test('JSON patch: a failed test is 422 and nothing of the patch is applied', async (t) => {
      const before = await create(CM, configMap('jp-test', { a: '1' }));
      const r = await patch(s, `${CM}/jp-test`, JSONP, [{ op: 'add', path: '/data/b', value: '2' }, { op: 'test', path: '/data/a', value: 'nope' }]);
      t.equal(r.status, 422, r.text);
      t.equal(r.json.kind, 'Status');
      t.equal(r.json.reason, 'Invalid');
      t.match(r.text, /\/data\/a/, 'names the tested path');
      const after = await get(`${CM}/jp-test`);
      t.same(after.data, { a: '1' }, 'the earlier add was not kept');
      t.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'no write');
    });

    await t.test('JSON patch: a path that does not exist is 422 naming the path', async (t) => {
      await create(CM, configMap('jp-path', { a: '1' }));
      for (const [op, p] of [
        [{ op: 'replace', path: '/data/missing', value: 'x' }, '/data/missing'],
        [{ op: 'remove', path: '/spec/nothing' }, '/spec/nothing'],
        [{ op: 'add', path: '/nowhere/deeper/key', value: 'x' }, '/nowhere/deeper/key'],
        // The reference names only the last token for a missing move source.
        [{ op: 'move', from: '/data/ghost', path: '/data/b' }, 'ghost'],
        [{ op: 'add', path: '/metadata/finalizers/7', value: 'x' }, '/metadata/finalizers/7'],
      ] as const) {
        const r = await patch(s, `${CM}/jp-path`, JSONP, [op]);
        t.equal(r.status, 422, `${op.op} ${p}: ${r.text}`);
        t.ok(r.text.includes(p), `${op.op}: the error names ${p}`);
      }
      const bad = await patch(s, `${CM}/jp-path`, JSONP, { op: 'add' });
      t.equal(bad.status, 400, 'a patch that is not a list is a bad request');
      const garbage = await patch(s, `${CM}/jp-path`, JSONP, '[{"op": ');
      t.equal(garbage.status, 400, 'malformed JSON is a bad request');
    });

    await t.test('JSON patch: more than 10000 operations is refused (413)', async (t) => {
      await create(CM, configMap('jp-many', { a: '1' }));
      const ops = Array.from({ length: 10001 }, () => ({ op: 'test', path: '/data/a', value: '1' }));
      const r = await patch(s, `${CM}/jp-many`, JSONP, ops);
      t.ok(r.status === 413 || r.status === 422, `413 (the reference's answer) or 422: ${r.status}`);
      t.match(r.json?.message ?? '', /10000/);
      const ok = await patch(s, `${CM}/jp-many`, JSONP, ops.slice(0, 10000));
      t.equal(ok.status, 200, 'exactly 10000 operations are accepted');
    });

    await t.test('JSON patch: a copy bomb is capped, nothing is stored', async (t) => {
      const big = 'x'.repeat(100 * 1024);
      const before = await create(CM, configMap('jp-bomb', { seed: big }));
      // 32 copies of 100 KiB grow the document by 3.2 MB, past the 3 MiB the copies may add.
      const ops = Array.from({ length: 32 }, (_, i) => ({ op: 'copy', from: '/data/seed', path: `/data/c${i}` }));
      const r = await patch(s, `${CM}/jp-bomb`, JSONP, ops);
      t.equal(r.status, 422, r.text.slice(0, 300));
      t.match(r.text, /copy/i, 'the refusal is about the copies');
      t.notMatch(r.text, /must have at most/, 'refused by the copy cap, not by object validation');
      t.equal((await get(`${CM}/jp-bomb`)).metadata.resourceVersion, before.metadata.resourceVersion);
    });

    // ---------------------------------------------------------------- merge patch

    await t.test('merge patch: null deletes keys and maps, objects merge, lists are replaced', async (t) => {
      await create(CM, configMap('mp', { a: '1', b: '2' }, { labels: { l1: 'x', l2: 'y' }, finalizers: ['example.com/a', 'example.com/b'] }));
      const r = await patch(s, `${CM}/mp`, MERGE, { data: { a: null, c: '3' }, metadata: { labels: { l1: null }, finalizers: ['example.com/c'] } });
      t.equal(r.status, 200, r.text);
      t.same(r.json.data, { b: '2', c: '3' });
      t.same(r.json.metadata.labels, { l2: 'y' });
      t.same(r.json.metadata.finalizers, ['example.com/c'], 'lists are replaced whole');
      const r2 = await patch(s, `${CM}/mp`, MERGE, { metadata: { labels: null, finalizers: null }, data: null });
      t.equal(r2.status, 200, r2.text);
      t.notOk(r2.json.metadata.labels, 'labels gone');
      t.notOk(r2.json.metadata.finalizers, 'finalizers gone');
      t.notOk(r2.json.data, 'data gone');
      const stale = await patch(s, `${CM}/mp`, MERGE, { metadata: { resourceVersion: '1' }, data: { z: '1' } });
      t.equal(stale.status, 409, 'a resourceVersion in the patch is a precondition');
      const notObject = await patch(s, `${CM}/mp`, MERGE, '"text"');
      t.ok(notObject.status === 400 || notObject.status === 422, `a patch that is not an object is refused: ${notObject.status}`);
    });

    // ---------------------------------------------------------------- strategic merge patch

    await t.test('strategic merge: containers merged by name, env merged by name', async (t) => {
      await create(DEP, deployment('smp-merge', { containers: [{ name: 'a', image: 'a:1', env: [{ name: 'E1', value: '1' }, { name: 'E2', value: '2' }] }, { name: 'b', image: 'b:1' }] }));
      const r = await patch(s, `${DEP}/smp-merge`, SMP, { spec: { template: { spec: { containers: [{ name: 'a', env: [{ name: 'E2', value: 'two' }, { name: 'E3', value: '3' }] }, { name: 'c', image: 'c:1' }] } } } });
      t.equal(r.status, 200, r.text);
      const cs = r.json.spec.template.spec.containers;
      t.same(cs.map((c: Obj) => c.name).sort(), ['a', 'b', 'c'], 'b kept, c added');
      const a = cs.find((c: Obj) => c.name === 'a');
      t.equal(a.image, 'a:1', 'unmentioned fields of a merged item stay');
      t.same(a.env.map((e: Obj) => `${e.name}=${e.value}`).sort(), ['E1=1', 'E2=two', 'E3=3']);
      const fieldNull = await patch(s, `${DEP}/smp-merge`, SMP, { spec: { template: { spec: { containers: [{ name: 'a', env: null }] } } } });
      t.equal(fieldNull.status, 200, fieldNull.text);
      t.notOk(fieldNull.json.spec.template.spec.containers.find((c: Obj) => c.name === 'a').env, 'null deletes a field of a merged item');
    });

    await t.test('strategic merge: $patch delete, $patch replace (list and map)', async (t) => {
      await create(DEP, deployment('smp-dir', { containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }, { name: 'c', image: 'c:1' }] }));
      const del = await patch(s, `${DEP}/smp-dir`, SMP, { spec: { template: { spec: { containers: [{ name: 'b', $patch: 'delete' }] } } } });
      t.equal(del.status, 200, del.text);
      t.same(del.json.spec.template.spec.containers.map((c: Obj) => c.name), ['a', 'c']);
      const rep = await patch(s, `${DEP}/smp-dir`, SMP, { spec: { template: { spec: { containers: [{ name: 'z', image: 'z:1' }, { $patch: 'replace' }] } } } });
      t.equal(rep.status, 200, rep.text);
      t.same(rep.json.spec.template.spec.containers.map((c: Obj) => c.name), ['z'], 'the list is replaced by the patch items');
      await patch(s, `${DEP}/smp-dir`, MERGE, { metadata: { labels: { one: '1', two: '2' } } });
      const mapRep = await patch(s, `${DEP}/smp-dir`, SMP, { metadata: { labels: { $patch: 'replace', three: '3' } } });
      t.equal(mapRep.status, 200, mapRep.text);
      t.same(mapRep.json.metadata.labels, { three: '3' }, 'the map is replaced');
      const mapDel = await patch(s, `${DEP}/smp-dir`, SMP, { metadata: { labels: { $patch: 'delete' } } });
      t.equal(mapDel.status, 200, mapDel.text);
      t.notOk(Object.keys(mapDel.json.metadata.labels ?? {}).length, 'the map is emptied');
      t.notMatch(JSON.stringify(mapDel.json), /\$patch/, 'no directive is ever stored');
    });

    await t.test('strategic merge: $retainKeys on a retainKeys field (deployment strategy, volumes)', async (t) => {
      await create(DEP, deployment('smp-retain', { containers: [{ name: 'a', image: 'a:1' }], volumes: [{ name: 'v', emptyDir: {} }] }));
      const before = await get(`${DEP}/smp-retain`);
      t.ok(before.spec.strategy.rollingUpdate, 'defaulted rollingUpdate');
      const r = await patch(s, `${DEP}/smp-retain`, SMP, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } });
      t.equal(r.status, 200, r.text);
      t.same(r.json.spec.strategy, { type: 'Recreate' }, 'keys not retained are cleared');
      const v = await patch(s, `${DEP}/smp-retain`, SMP, { spec: { template: { spec: { volumes: [{ name: 'v', hostPath: { path: '/x' }, $retainKeys: ['name', 'hostPath'] }] } } } });
      t.equal(v.status, 200, v.text);
      const vol = v.json.spec.template.spec.volumes[0];
      t.equal(vol.hostPath.path, '/x');
      t.notOk(vol.emptyDir, 'the other volume source is cleared');
      const mismatch = await patch(s, `${DEP}/smp-retain`, SMP, { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: { maxSurge: 1 } } } });
      t.equal(mismatch.status, 422, `a key outside $retainKeys is refused: ${mismatch.text}`);
    });

    await t.test('strategic merge: $deleteFromPrimitiveList/finalizers and $setElementOrder/containers', async (t) => {
      await create(DEP, deployment('smp-order', { containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }, { name: 'c', image: 'c:1' }] }));
      const fin = await patch(s, `${DEP}/smp-order`, SMP, { metadata: { finalizers: ['example.com/x', 'example.com/y', 'example.com/z'] } });
      t.same(fin.json.metadata.finalizers, ['example.com/x', 'example.com/y', 'example.com/z']);
      const merged = await patch(s, `${DEP}/smp-order`, SMP, { metadata: { finalizers: ['example.com/x', 'example.com/w'] } });
      t.same([...merged.json.metadata.finalizers].sort(), ['example.com/w', 'example.com/x', 'example.com/y', 'example.com/z'], 'finalizers merge as a set');
      const del = await patch(s, `${DEP}/smp-order`, SMP, { metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/y', 'example.com/w'] } });
      t.equal(del.status, 200, del.text);
      t.same(del.json.metadata.finalizers, ['example.com/x', 'example.com/z']);
      const order = await patch(s, `${DEP}/smp-order`, SMP, { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'c' }, { name: 'a' }, { name: 'b' }], containers: [{ name: 'a', image: 'a:2' }] } } } });
      t.equal(order.status, 200, order.text);
      const cs = order.json.spec.template.spec.containers;
      t.same(cs.map((c: Obj) => c.name), ['c', 'a', 'b'], 'containers in the given order');
      t.equal(cs[1].image, 'a:2');
      t.notMatch(JSON.stringify(order.json), /\$setElementOrder|\$deleteFromPrimitiveList/, 'no directive stored');
      await patch(s, `${DEP}/smp-order`, MERGE, { metadata: { finalizers: null } });
    });

    await t.test('unknown PATCH content type is 415 listing the accepted ones', async (t) => {
      await create(CM, configMap('ct', { a: '1' }));
      for (const ct of ['application/json', 'text/plain', 'application/x-patch']) {
        const r = await patch(s, `${CM}/ct`, ct, { data: { a: '2' } });
        t.equal(r.status, 415, `${ct}: ${r.text}`);
        t.equal(r.json.reason, 'UnsupportedMediaType');
        for (const known of [JSONP, MERGE, SMP, APPLY]) t.ok(r.json.message.includes(known), `${ct}: lists ${known}`);
      }
      t.equal((await get(`${CM}/ct`)).data.a, '1');
    });

    // ---------------------------------------------------------------- server-side apply, rule by rule

    await t.test('rule 1: apply creates what does not exist (201), then merges with the applied value winning', async (t) => {
      const c = await apply(s, `${CM}/r1`, configMap('r1', { a: '1' }), 'mgr');
      t.equal(c.status, 201, c.text);
      t.same(c.json.data, { a: '1' });
      t.ok(c.json.metadata.uid, 'a real object');
      // Someone else adds a key; the applier changes its own.
      const other = await patch(s, `${CM}/r1`, MERGE, { data: { b: '2' } }, { fieldManager: 'other' });
      t.equal(other.status, 200);
      const u = await apply(s, `${CM}/r1`, configMap('r1', { a: '10' }), 'mgr');
      t.equal(u.status, 200, u.text);
      t.same(u.json.data, { a: '10', b: '2' }, 'merged: applied value wins, the other key stays');
      const yaml = await apply(s, `${CM}/r1`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r1\ndata:\n  a: "11"\n', 'mgr');
      t.equal(yaml.status, 200, `a YAML body: ${yaml.text}`);
      t.equal(yaml.json.data.a, '11');
      const wrongKind = await apply(s, `${CM}/r1`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'r1' } }, 'mgr');
      t.equal(wrongKind.status, 400, 'the applied kind must match the resource');
    });

    await t.test('rule 1: the applied name must be the name in the URL', async (t) => {
      const create = await apply(s, `${CM}/r1-name`, configMap('r1-other', { a: '1' }), 'mgr');
      t.ok(create.status === 400 || create.status === 422, `a create under another name is refused: ${create.status} ${create.text}`);
      t.equal((await s.get(`${CM}/r1-name`)).status, 404, 'nothing created under the URL name');
      t.equal((await s.get(`${CM}/r1-other`)).status, 404, 'nor under the body name');
      await apply(s, `${CM}/r1-name`, configMap('r1-name', { a: '1' }), 'mgr');
      const update = await apply(s, `${CM}/r1-name`, configMap('r1-other', { a: '2' }), 'mgr');
      t.ok(update.status === 400 || update.status === 422, `an update under another name is refused: ${update.status} ${update.text}`);
      t.equal((await get(`${CM}/r1-name`)).data.a, '1');
      const mp = await patch(s, `${CM}/r1-name`, MERGE, { metadata: { name: 'r1-other' } });
      t.ok(mp.status === 400 || mp.status === 422, `a merge patch may not rename: ${mp.status}`);
    });

    await t.test('rule 8: a resourceVersion in the applied config is a precondition', async (t) => {
      const c = await apply(s, `${CM}/r8-rv`, configMap('r8-rv', { a: '1' }), 'mgr');
      const rv = c.json.metadata.resourceVersion;
      await patch(s, `${CM}/r8-rv`, MERGE, { data: { b: '2' } }, { fieldManager: 'other' });
      const stale = await apply(s, `${CM}/r8-rv`, configMap('r8-rv', { a: '2' }, { resourceVersion: rv }), 'mgr');
      t.equal(stale.status, 409, `a stale resourceVersion conflicts: ${stale.text}`);
      t.equal((await get(`${CM}/r8-rv`)).data.a, '1', 'not applied');
      const live = (await get(`${CM}/r8-rv`)).metadata.resourceVersion;
      const fresh = await apply(s, `${CM}/r8-rv`, configMap('r8-rv', { a: '3' }, { resourceVersion: live }), 'mgr');
      t.equal(fresh.status, 200, `the current resourceVersion passes: ${fresh.text}`);
      t.equal(fresh.json.data.a, '3');
    });

    await t.test('rule 2: any write that changes a field moves its ownership to the writer', async (t) => {
      await apply(s, `${CM}/r2`, configMap('r2', { a: '1', b: '1' }), 'applier');
      const g = await get(`${CM}/r2`);
      const put = await s.request('PUT', `${CM}/r2?fieldManager=updater`, { body: { ...g, data: { a: '5', b: '1' } } });
      t.equal(put.status, 200, put.text);
      t.ok(owns(entry(put.json, 'updater'), 'f:data', 'f:a'), 'the updater owns a');
      t.notOk(owns(entry(put.json, 'applier'), 'f:data', 'f:a'), 'the applier lost a');
      t.ok(owns(entry(put.json, 'applier'), 'f:data', 'f:b'), 'the applier keeps b (unchanged)');
      const jp = await patch(s, `${CM}/r2`, JSONP, [{ op: 'replace', path: '/data/b', value: '7' }], { fieldManager: 'jsonpatcher' });
      t.equal(jp.status, 200, jp.text);
      t.ok(owns(entry(jp.json, 'jsonpatcher'), 'f:data', 'f:b'));
      t.notOk(entry(jp.json, 'applier'), 'an applier left with nothing has no entry');
      const same = await patch(s, `${CM}/r2`, MERGE, { data: { b: '7' } }, { fieldManager: 'noop' });
      t.notOk(entry(same.json, 'noop'), 'writing the same value takes nothing');
    });

    await t.test('rule 3: appliers of the same value share ownership; a later change by one conflicts', async (t) => {
      await apply(s, `${CM}/r3`, configMap('r3', { a: '1' }), 'one');
      const two = await apply(s, `${CM}/r3`, configMap('r3', { a: '1' }), 'two');
      t.equal(two.status, 200, two.text);
      t.ok(owns(entry(two.json, 'one'), 'f:data', 'f:a') && owns(entry(two.json, 'two'), 'f:data', 'f:a'), 'both own a');
      const change = await apply(s, `${CM}/r3`, configMap('r3', { a: '2' }), 'one');
      t.equal(change.status, 409, change.text);
      t.match(change.json.message, /"two"/);
    });

    await t.test('rule 4: a conflicting apply is 409 Conflict with one cause per field; non-apply writes never conflict', async (t) => {
      await apply(s, `${CM}/r4`, configMap('r4', { x: '1', y: '1', z: '1' }), 'first');
      const before = await get(`${CM}/r4`);
      const r = await apply(s, `${CM}/r4`, configMap('r4', { x: '2', y: '2', z: '1' }), 'second');
      t.equal(r.status, 409, r.text);
      t.equal(r.json.kind, 'Status');
      t.equal(r.json.status, 'Failure');
      t.equal(r.json.reason, 'Conflict');
      t.equal(r.json.code, 409);
      t.match(r.json.message, /Apply failed with 2 conflicts/);
      t.match(r.json.message, /"first"/, 'the message names the other manager');
      const causes = r.json.details?.causes ?? [];
      t.equal(causes.length, 2, 'one cause per conflicting field (z has the same value)');
      t.same(causes.map((c: Obj) => c.field).sort(), ['.data.x', '.data.y']);
      for (const c of causes) {
        t.equal(c.reason, 'FieldManagerConflict');
        t.match(c.message, /conflict with "first"/);
      }
      t.equal((await get(`${CM}/r4`)).metadata.resourceVersion, before.metadata.resourceVersion, 'nothing written');
      const mp = await patch(s, `${CM}/r4`, MERGE, { data: { x: '3' } }, { fieldManager: 'mergepatcher' });
      t.equal(mp.status, 200, 'a merge patch takes the field without conflict');
      t.ok(owns(entry(mp.json, 'mergepatcher'), 'f:data', 'f:x'));
      const upd = await s.request('PUT', `${CM}/r4?fieldManager=putter`, { body: { ...mp.json, metadata: { ...mp.json.metadata, managedFields: undefined }, data: { ...mp.json.data, y: '4' } } });
      t.equal(upd.status, 200, 'an update takes the field without conflict');
      t.ok(owns(entry(upd.json, 'putter'), 'f:data', 'f:y'));
      const updCause = await apply(s, `${CM}/r4`, configMap('r4', { x: '9' }), 'first');
      t.equal(updCause.status, 409);
      t.match(updCause.json.details.causes[0].message, /conflict with "mergepatcher" using v1/, 'an Update owner is named with its version');
    });

    await t.test('rule 5a: force=true takes the field and strips it from the other managers', async (t) => {
      await apply(s, `${CM}/r5a`, configMap('r5a', { x: '1', keep: 'k' }), 'first');
      const r = await apply(s, `${CM}/r5a`, configMap('r5a', { x: '2' }), 'second', { force: 'true' });
      t.equal(r.status, 200, r.text);
      t.equal(r.json.data.x, '2');
      t.ok(owns(entry(r.json, 'second'), 'f:data', 'f:x'), 'the forcing applier owns x');
      t.notOk(owns(entry(r.json, 'first'), 'f:data', 'f:x'), 'removed from the first applier');
      t.ok(owns(entry(r.json, 'first'), 'f:data', 'f:keep'), 'the first applier keeps the rest');
      const bad = await patch(s, `${CM}/r5a`, MERGE, { data: { x: '3' } }, { force: 'true' });
      t.equal(bad.status, 422, 'force is only for apply');
    });

    await t.test('rule 5b: dropping the conflicting field from the config keeps the value and drops the claim', async (t) => {
      await apply(s, `${CM}/r5b`, configMap('r5b', { x: '1' }), 'first');
      t.equal((await apply(s, `${CM}/r5b`, configMap('r5b', { x: '2', y: '1' }), 'second')).status, 409);
      const r = await apply(s, `${CM}/r5b`, configMap('r5b', { y: '1' }), 'second');
      t.equal(r.status, 200, r.text);
      t.same(r.json.data, { x: '1', y: '1' }, 'x keeps its value');
      t.notOk(owns(entry(r.json, 'second'), 'f:data', 'f:x'));
      t.ok(owns(entry(r.json, 'first'), 'f:data', 'f:x'));
    });

    await t.test('rule 5c: applying the live value shares ownership', async (t) => {
      await apply(s, `${CM}/r5c`, configMap('r5c', { x: '1' }), 'first');
      t.equal((await apply(s, `${CM}/r5c`, configMap('r5c', { x: '2' }), 'second')).status, 409);
      const r = await apply(s, `${CM}/r5c`, configMap('r5c', { x: '1' }), 'second');
      t.equal(r.status, 200, r.text);
      t.ok(owns(entry(r.json, 'first'), 'f:data', 'f:x') && owns(entry(r.json, 'second'), 'f:data', 'f:x'), 'shared');
    });

    await t.test('rule 6: a field dropped from the config is removed unless another manager owns it', async (t) => {
      await apply(s, `${CM}/r6`, configMap('r6', { a: '1', b: '1', shared: 's' }), 'mine');
      await apply(s, `${CM}/r6`, configMap('r6', { shared: 's' }), 'theirs');
      await patch(s, `${CM}/r6`, MERGE, { data: { unowned: 'u' } }, { fieldManager: 'writer' });
      const r = await apply(s, `${CM}/r6`, configMap('r6', { a: '1' }), 'mine');
      t.equal(r.status, 200, r.text);
      t.same(r.json.data, { a: '1', shared: 's', unowned: 'u' }, 'b removed; the shared one and the other writer\'s stay');
      t.notOk(owns(entry(r.json, 'mine'), 'f:data', 'f:shared'), 'the dropped claim is gone');
      t.ok(owns(entry(r.json, 'theirs'), 'f:data', 'f:shared'));
      const empty = await apply(s, `${CM}/r6`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'r6' } }, 'mine');
      t.equal(empty.status, 200, empty.text);
      t.same(empty.json.data, { shared: 's', unowned: 'u' });
      t.notOk(entry(empty.json, 'mine'), 'an applier that owns nothing leaves no entry');
    });

    await t.test('rule 7: fieldManager is required for apply; an applied managedFields is refused', async (t) => {
      const none = await apply(s, `${CM}/r7`, configMap('r7', { a: '1' }), undefined);
      // 400 as asked of this server; the reference answers 422 Invalid with the same message.
      t.ok(none.status === 400 || none.status === 422, `400: ${none.status} ${none.text}`);
      t.match(none.json.message, /fieldManager: Required value/);
      const empty = await apply(s, `${CM}/r7`, configMap('r7', { a: '1' }), '');
      t.ok(empty.status === 400 || empty.status === 422, `an empty fieldManager is none: ${empty.status}`);
      const withMf = await apply(s, `${CM}/r7`, configMap('r7', { a: '1' }, { managedFields: [{ manager: 'x', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} }] }), 'mgr');
      t.ok(withMf.status === 400 || withMf.status === 422, `400/422: ${withMf.status} ${withMf.text}`);
      t.match(withMf.json.message, /managedFields/);
      t.equal((await s.get(`${CM}/r7`)).status, 404, 'nothing created');
      await apply(s, `${CM}/r7`, configMap('r7', { a: '1' }), 'mgr');
      const upd = await apply(s, `${CM}/r7`, configMap('r7', { a: '2' }, { managedFields: [] }), 'mgr');
      t.ok(upd.status === 400 || upd.status === 422, `also on an existing object: ${upd.status}`);
    });

    await t.test('rule 8: a controller forces without reading or a resourceVersion; fields it never applied stay', async (t) => {
      await apply(s, `${CM}/r8`, configMap('r8', { replicas: '1', user: 'u' }), 'user');
      await patch(s, `${CM}/r8`, MERGE, { data: { other: 'o' } }, { fieldManager: 'someone' });
      const c = await apply(s, `${CM}/r8`, configMap('r8', { replicas: '5' }), 'controller', { force: 'true' });
      t.equal(c.status, 200, c.text);
      t.same(c.json.data, { replicas: '5', user: 'u', other: 'o' });
      const c2 = await apply(s, `${CM}/r8`, configMap('r8', { status: 'ok' }), 'controller', { force: 'true' });
      t.same(c2.json.data, { user: 'u', other: 'o', status: 'ok' }, 'its own dropped field goes; the others stay');
    });

    await t.test('rule 9: ownership handover through a temporary manager, whose empty entry vanishes', async (t) => {
      await apply(s, `${DEP}/r9`, deployment('r9', { containers: [{ name: 'c', image: 'i' }] }, { replicas: 3 }), 'main');
      const h = await apply(s, `${DEP}/r9`, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'r9' }, spec: { replicas: 3 } }, 'handover');
      t.equal(h.status, 200, h.text);
      t.ok(owns(entry(h.json, 'handover'), 'f:spec', 'f:replicas'));
      const m = await apply(s, `${DEP}/r9`, deployment('r9', { containers: [{ name: 'c', image: 'i' }] }), 'main');
      t.equal(m.status, 200, m.text);
      t.equal(m.json.spec.replicas, 3, 'the value stays: the temporary manager still owns it');
      t.notOk(owns(entry(m.json, 'main'), 'f:spec', 'f:replicas'));
      const scaler = await patch(s, `${DEP}/r9`, MERGE, { spec: { replicas: 7 } }, { fieldManager: 'autoscaler' });
      t.equal(scaler.status, 200, scaler.text);
      t.ok(owns(entry(scaler.json, 'autoscaler'), 'f:spec', 'f:replicas'));
      t.notOk(entry(scaler.json, 'handover'), 'the temporary manager owns nothing and is gone');
      const again = await apply(s, `${DEP}/r9`, deployment('r9', { containers: [{ name: 'c', image: 'j' }] }), 'main');
      t.equal(again.status, 200, 'the main config no longer fights over replicas');
      t.equal(again.json.spec.replicas, 7);
    });

    await t.test('rule 10: [{}] resets managedFields (merge patch, JSON patch, update); [] does not', async (t) => {
      await apply(s, `${CM}/r10`, configMap('r10', { a: '1' }), 'ap');
      const keep = await patch(s, `${CM}/r10`, MERGE, { metadata: { managedFields: [] } });
      t.equal(keep.status, 200, keep.text);
      t.same(managers(keep.json), ['ap'], 'an empty list changes nothing');
      const reset = await patch(s, `${CM}/r10`, MERGE, { metadata: { managedFields: [{}] } });
      t.equal(reset.status, 200, reset.text);
      t.same(entries(reset.json), [], 'one empty entry strips every entry');
      t.same(entries(await get(`${CM}/r10`)), [], 'stored so');

      await apply(s, `${CM}/r10`, configMap('r10', { a: '1' }), 'ap');
      const combined = await patch(s, `${CM}/r10`, MERGE, { metadata: { managedFields: [{}] }, data: { b: '2' } }, { fieldManager: 'resetter' });
      t.equal(combined.status, 200, combined.text);
      t.same(managers(combined.json), ['resetter'], 'the reset happens first, then the change is owned');
      t.ok(owns(entry(combined.json, 'resetter'), 'f:data', 'f:b'));

      await apply(s, `${CM}/r10`, configMap('r10', { a: '1', b: '2' }), 'ap');
      const jp = await patch(s, `${CM}/r10`, JSONP, [{ op: 'replace', path: '/metadata/managedFields', value: [{}] }]);
      t.equal(jp.status, 200, jp.text);
      t.same(entries(jp.json), [], 'by JSON patch');

      await apply(s, `${CM}/r10`, configMap('r10', { a: '1', b: '2' }), 'ap');
      const g = await get(`${CM}/r10`);
      const put = await s.request('PUT', `${CM}/r10`, { body: { ...g, metadata: { ...g.metadata, managedFields: [{}] } } });
      t.equal(put.status, 200, put.text);
      t.same(entries(put.json), [], 'by update');
      const putEmpty = await apply(s, `${CM}/r10`, configMap('r10', { a: '1', b: '2' }), 'ap');
      const g2 = putEmpty.json;
      const put2 = await s.request('PUT', `${CM}/r10`, { body: { ...g2, metadata: { ...g2.metadata, managedFields: [] } } });
      t.same(managers(put2.json), ['ap'], 'an update with [] keeps the entries');
    });

    await t.test('rule 14: moving from client-side apply to server-side apply does not conflict', async (t) => {
      const cfg = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'r14', namespace: 'default', annotations: {} }, data });
      const csa = configMap('r14', { a: '1', b: '2' }, { annotations: { [lastApplied]: JSON.stringify(cfg({ a: '1', b: '2' })) + '\n' } });
      const c = await s.request('POST', `${CM}?fieldManager=${cli}-client-side-apply`, { body: csa });
      t.equal(c.status, 201, c.text);
      t.ok(owns(entry(c.json, `${cli}-client-side-apply`), 'f:data', 'f:a'));
      // Someone else changes a field the client-side config does not have.
      await patch(s, `${CM}/r14`, MERGE, { data: { c: 'theirs' } }, { fieldManager: 'intruder' });

      const optOut = await apply(s, `${CM}/r14`, configMap('r14', { a: '1', b: '3' }), `my-${cli}`);
      t.equal(optOut.status, 409, `a non-default manager name opts out of the migration: ${optOut.text}`);

      const same = await apply(s, `${CM}/r14`, configMap('r14', { a: '1', b: '2' }), cli);
      t.equal(same.status, 200, `the same values: ${same.text}`);
      const changed = await apply(s, `${CM}/r14`, configMap('r14', { a: '1', b: '3' }), cli);
      t.equal(changed.status, 200, `a field of the last-applied configuration changes without conflict: ${changed.text}`);
      t.equal(changed.json.data.b, '3');
      t.ok(owns(entry(changed.json, cli), 'f:data', 'f:b'), `${cli} owns b`);
      t.notOk(owns(entry(changed.json, `${cli}-client-side-apply`), 'f:data', 'f:b'), 'taken from the client-side manager');
      const annotation = changed.json.metadata.annotations?.[lastApplied];
      t.ok(annotation, 'the last-applied annotation is kept');
      t.equal(JSON.parse(annotation).data.b, '3', 'and kept current (downgrade works)');

      const foreign = await apply(s, `${CM}/r14`, configMap('r14', { a: '1', b: '3', c: 'mine' }), cli);
      t.equal(foreign.status, 409, 'a field outside the client-side annotation still conflicts');
      t.match(foreign.json.message, /"intruder"/);
    });

    // ---------------------------------------------------------------- rule 12: the status sub-resource

    await t.test('rule 12: status writes record subresource status and never take main-resource fields', async (t) => {
      await apply(s, `${DEP}/r12`, deployment('r12', { containers: [{ name: 'c', image: 'i' }] }, { replicas: 2 }), 'main');
      const mp = await patch(s, `${DEP}/r12/status`, MERGE, { spec: { replicas: 7 }, status: { availableReplicas: 1 } }, { fieldManager: 'st-merge' });
      t.equal(mp.status, 200, mp.text);
      t.equal(mp.json.spec.replicas, 2, 'spec untouched through /status');
      const e = entry(mp.json, 'st-merge');
      t.equal(e?.subresource, 'status', 'entry marked subresource: status');
      t.ok(owns(e, 'f:status', 'f:availableReplicas'));
      t.notOk(owns(e, 'f:spec'), 'no main-resource field owned');

      const ap = await apply(s, `${DEP}/r12/status`, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'r12' }, status: { replicas: 3, readyReplicas: 1 } }, 'st-apply');
      t.equal(ap.status, 200, ap.text);
      t.same({ replicas: ap.json.status.replicas, readyReplicas: ap.json.status.readyReplicas }, { replicas: 3, readyReplicas: 1 });
      const ae = entry(ap.json, 'st-apply');
      t.ok(ae, 'the status applier has a managedFields entry');
      t.equal(ae?.subresource, 'status');
      t.equal(ae?.operation, 'Apply');
      t.ok(owns(ae, 'f:status', 'f:replicas'), 'owns what it applied');
      t.ok(entry(await get(`${DEP}/r12`), 'st-apply', 'status'), 'stored so');

      const withSpec = await apply(s, `${DEP}/r12/status`, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'r12' }, spec: { replicas: 9, paused: true }, status: { replicas: 3, readyReplicas: 1 } }, 'st-apply');
      t.equal(withSpec.status, 200, `spec in a status apply is ignored, not a conflict with the spec owner: ${withSpec.text}`);
      const after = await get(`${DEP}/r12`);
      t.equal(after.spec.replicas, 2);
      t.notOk(after.spec.paused);
      t.notOk(owns(entry(after, 'st-apply'), 'f:spec'), 'no spec ownership from /status');

      const put = await s.request('PUT', `${DEP}/r12/status?fieldManager=st-put`, { body: { ...after, metadata: { ...after.metadata, managedFields: undefined }, spec: { ...after.spec, replicas: 11 }, status: { ...after.status, updatedReplicas: 1 } } });
      t.equal(put.status, 200, put.text);
      t.equal(put.json.spec.replicas, 2);
      const pe = entry(put.json, 'st-put');
      t.equal(pe?.subresource, 'status');
      t.ok(owns(pe, 'f:status', 'f:updatedReplicas'));
      t.notOk(owns(pe, 'f:spec'));
    });

    await t.test('rule 12: an apply to the main resource does not own status fields it cannot write', async (t) => {
      const r = await apply(s, `${DEP}/r12main`, { ...deployment('r12main', { containers: [{ name: 'c', image: 'i' }] }), status: { replicas: 5 } }, 'main');
      t.equal(r.status, 201, r.text);
      t.notOk(r.json.status?.replicas, 'status is not written through the main resource');
      t.notOk(owns(entry(r.json, 'main'), 'f:status'), 'and not owned by the applier');
      const st = await apply(s, `${DEP}/r12main/status`, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'r12main' }, status: { replicas: 1 } }, 'controller');
      t.equal(st.status, 200, `no conflict with a status field the main applier never wrote: ${st.text}`);
    });

    // ---------------------------------------------------------------- managedFields format and manager names

    await t.test('managedFields entries: manager, operation, apiVersion, time, fieldsType FieldsV1, fieldsV1 tree', async (t) => {
      const c = await s.request('POST', `${CM}?fieldManager=creator`, { body: configMap('mf', { a: '1' }, { labels: { l: 'v' } }) });
      const e = entry(c.json, 'creator')!;
      t.ok(e, 'create records the creator');
      t.equal(e.operation, 'Update');
      t.equal(e.apiVersion, 'v1');
      t.match(e.time, TIME, 'RFC 3339 at second precision');
      t.equal(e.fieldsType, 'FieldsV1');
      t.notOk('subresource' in e, 'no subresource on main-resource writes');
      t.same(e.fieldsV1, { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:l': {} } } });
      const a = await apply(s, `${CM}/mf`, configMap('mf', { b: '2' }), 'applier');
      const ae = entry(a.json, 'applier')!;
      t.equal(ae.operation, 'Apply');
      t.equal(ae.apiVersion, 'v1');
      t.match(ae.time, TIME);
      t.same(ae.fieldsV1, { 'f:data': { 'f:b': {} } });
      t.same(entries(a.json).map((x) => x.operation), ['Apply', 'Update'], 'Apply entries first');
      await apply(s, `${DEP}/mf`, deployment('mf', { containers: [{ name: 'a', image: 'a', ports: [{ containerPort: 80 }] }] }), 'applier');
      const d = await get(`${DEP}/mf`);
      const de = entry(d, 'applier')!;
      t.equal(de.apiVersion, 'apps/v1');
      t.same(fieldsV1Problems(de.fieldsV1), [], 'well-formed FieldsV1');
      t.ok(owns(de, 'f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"a"}', 'f:ports', 'k:{"containerPort":80,"protocol":"TCP"}', 'f:containerPort'), 'keyed list items as k:{...}');
      t.ok(owns(de, 'f:spec', 'f:selector'), 'the atomic selector as one field');
      t.notOk(owns(de, 'f:spec', 'f:selector', 'f:matchLabels'), 'nothing below an atomic struct');
    });

    await t.test('the manager of a write without fieldManager comes from the User-Agent', async (t) => {
      const c = await s.request('POST', CM, { body: configMap('ua', { a: '1' }), headers: { 'user-agent': 'deploy-tool/1.4.2 (linux/amd64) cluster/abcdef' } });
      t.equal(c.status, 201, c.text);
      t.same(managers(c.json), ['deploy-tool']);
      const p = await patch(s, `${CM}/ua`, MERGE, { data: { b: '2' } }, {}, { 'user-agent': 'other-tool/2.0' });
      t.ok(entry(p.json, 'other-tool'), 'patch too');
      const named = await patch(s, `${CM}/ua`, MERGE, { data: { c: '3' } }, { fieldManager: 'named' }, { 'user-agent': 'other-tool/2.0' });
      t.ok(entry(named.json, 'named'), 'fieldManager wins over the User-Agent');
      const long = await patch(s, `${CM}/ua`, MERGE, { data: { d: '4' } }, { fieldManager: 'x'.repeat(129) });
      t.equal(long.status, 422, 'a fieldManager over 128 characters is invalid');
    });

    // ---------------------------------------------------------------- merge-strategy markers of built-in types

    await t.test('markers: containers are a map-list keyed by name (per-item ownership)', async (t) => {
      await apply(s, `${DEP}/mk-c`, deployment('mk-c', { containers: [{ name: 'a', image: 'a:1' }] }), 'one');
      const r = await apply(s, `${DEP}/mk-c`, podPart('mk-c', { containers: [{ name: 'b', image: 'b:1' }] }), 'two');
      t.equal(r.status, 200, r.text);
      t.same(r.json.spec.template.spec.containers.map((c: Obj) => c.name).sort(), ['a', 'b']);
      t.ok(owns(entry(r.json, 'one'), 'f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"a"}'));
      t.ok(owns(entry(r.json, 'two'), 'f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"b"}'));
      const clash = await apply(s, `${DEP}/mk-c`, podPart('mk-c', { containers: [{ name: 'a', image: 'a:2' }] }), 'two');
      t.equal(clash.status, 409);
      t.same(clash.json.details.causes.map((c: Obj) => c.field), ['.spec.template.spec.containers[name="a"].image']);
    });

    await t.test('markers: container ports are keyed by containerPort and protocol', async (t) => {
      await apply(s, `${DEP}/mk-p`, deployment('mk-p', { containers: [{ name: 'a', image: 'a:1', ports: [{ containerPort: 53 }] }] }), 'one');
      const r = await apply(s, `${DEP}/mk-p`, podPart('mk-p', { containers: [{ name: 'a', ports: [{ containerPort: 53, protocol: 'UDP' }] }] }), 'two');
      t.equal(r.status, 200, r.text);
      const ports = r.json.spec.template.spec.containers[0].ports;
      t.same(ports.map((p: Obj) => `${p.containerPort}/${p.protocol}`).sort(), ['53/TCP', '53/UDP'], 'same port, other protocol: another item');
      t.ok(owns(entry(r.json, 'two'), 'f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"a"}', 'f:ports', 'k:{"containerPort":53,"protocol":"UDP"}'));
      t.ok(owns(entry(r.json, 'one'), 'f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"a"}', 'f:ports', 'k:{"containerPort":53,"protocol":"TCP"}'), 'an omitted protocol keys as TCP');
    });

    await t.test('markers: tolerations are an atomic list (one owner, whole-list conflict)', async (t) => {
      await apply(s, `${DEP}/mk-t`, deployment('mk-t', { containers: [{ name: 'a', image: 'a' }], tolerations: [{ key: 'k1', operator: 'Exists' }] }), 'one');
      const r = await apply(s, `${DEP}/mk-t`, podPart('mk-t', { tolerations: [{ key: 'k2', operator: 'Exists' }] }), 'two');
      t.equal(r.status, 409, r.text);
      t.same(r.json.details.causes.map((c: Obj) => c.field), ['.spec.template.spec.tolerations']);
      const g = await get(`${DEP}/mk-t`);
      t.ok(owns(entry(g, 'one'), 'f:spec', 'f:template', 'f:spec', 'f:tolerations'));
      t.notOk(owns(entry(g, 'one'), 'f:spec', 'f:template', 'f:spec', 'f:tolerations', 'k:{"key":"k1"}'), 'no per-item ownership');
      const forced = await apply(s, `${DEP}/mk-t`, podPart('mk-t', { tolerations: [{ key: 'k2', operator: 'Exists' }] }), 'two', { force: 'true' });
      t.same(forced.json.spec.template.spec.tolerations, [{ key: 'k2', operator: 'Exists' }], 'replaced whole, not merged');
    });

    await t.test('markers: nodeSelector is an atomic map, labels a granular map', async (t) => {
      await apply(s, `${DEP}/mk-m`, { ...deployment('mk-m', { containers: [{ name: 'a', image: 'a' }], nodeSelector: { disk: 'ssd' } }), metadata: { name: 'mk-m', labels: { team: 'a' } } }, 'one');
      const labels = await apply(s, `${DEP}/mk-m`, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'mk-m', labels: { tier: 'web' } } }, 'two');
      t.equal(labels.status, 200, labels.text);
      t.same(labels.json.metadata.labels, { team: 'a', tier: 'web' }, 'labels: each manager its own keys');
      t.ok(owns(entry(labels.json, 'two'), 'f:metadata', 'f:labels', 'f:tier'));
      const ns = await apply(s, `${DEP}/mk-m`, podPart('mk-m', { nodeSelector: { zone: 'z1' } }), 'two');
      t.equal(ns.status, 409, ns.text);
      t.same(ns.json.details.causes.map((c: Obj) => c.field), ['.spec.template.spec.nodeSelector']);
      const g = await get(`${DEP}/mk-m`);
      t.ok(owns(entry(g, 'one'), 'f:spec', 'f:template', 'f:spec', 'f:nodeSelector'));
      t.notOk(owns(entry(g, 'one'), 'f:spec', 'f:template', 'f:spec', 'f:nodeSelector', 'f:disk'), 'no per-key ownership');
    });

    await t.test('markers: finalizers are a set (per-value ownership)', async (t) => {
      // (the same data from both: an empty map is not stored, as the reference's omitempty drops it, so a
      // second manager applying {} again would change it and conflict, there as here)
      await apply(s, `${CM}/mk-f`, configMap('mk-f', { k: 'v' }, { finalizers: ['example.com/a'] }), 'one');
      const r = await apply(s, `${CM}/mk-f`, configMap('mk-f', { k: 'v' }, { finalizers: ['example.com/b'] }), 'two');
      t.equal(r.status, 200, r.text);
      t.same([...r.json.metadata.finalizers].sort(), ['example.com/a', 'example.com/b']);
      t.ok(owns(entry(r.json, 'one'), 'f:metadata', 'f:finalizers', 'v:"example.com/a"'));
      t.ok(owns(entry(r.json, 'two'), 'f:metadata', 'f:finalizers', 'v:"example.com/b"'));
      const drop = await apply(s, `${CM}/mk-f`, configMap('mk-f'), 'one');
      t.same(drop.json.metadata.finalizers, ['example.com/b'], 'dropping its value removes only that one');
      await apply(s, `${CM}/mk-f`, configMap('mk-f'), 'two');
    });

    // ---------------------------------------------------------------- field validation

    await t.test('fieldValidation=Strict: refused (422) naming every unknown and duplicate field (create, update, patch, apply)', async (t) => {
      const body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fv","name":"fv"},"data":{"a":"1"},"bogus":1,"other":{"x":1}}';
      const c = await s.request('POST', `${CM}?fieldValidation=Strict`, { raw: body, headers: { 'content-type': 'application/json' } });
      t.ok(strictStatus(c.status), `create: ${c.status} ${c.text}`);
      t.match(c.json.message, /strict decoding error/);
      // The reference answers a strict create with a 400 BadRequest naming every field in its message
      // and no details (an earlier issue asked for a 422 with causes; the reference wins).
      t.equal(c.status, 400);
      t.equal(c.json.reason, 'BadRequest');
      t.equal(c.json.details, undefined);
      for (const f of ['unknown field "bogus"', 'unknown field "other"', 'duplicate field "metadata.name"']) t.ok(c.json.message.includes(f), f);
      t.equal((await s.get(`${CM}/fv`)).status, 404, 'nothing created');

      const made = await create(CM, configMap('fv', { a: '1' }));
      const u = await s.request('PUT', `${CM}/fv?fieldValidation=Strict`, { body: { ...made, bogus: 1 } });
      t.ok(strictStatus(u.status), `update: ${u.status} ${u.text}`);
      t.match(u.json.message, /unknown field "bogus"/);

      // An applied configuration with a field the schema does not declare: the reference's typed-patch 500, whatever the mode.
      const ap = await apply(s, `${CM}/fv`, { ...configMap('fv', { a: '1' }), bogus: 1 }, 'mgr', { fieldValidation: 'Strict' });
      t.equal(ap.status, 500, `apply: ${ap.text}`);
      t.equal(ap.json.message, 'failed to create typed patch object (/fv; /v1, Kind=ConfigMap): .bogus: field not declared in schema');

      for (const [type, p] of [[MERGE, { bogus: 1, data: { a: '2' } }], [SMP, { bogus: 1, data: { a: '2' } }], [JSONP, [{ op: 'add', path: '/bogus', value: 1 }]]] as const) {
        const r = await patch(s, `${CM}/fv`, type, p, { fieldValidation: 'Strict' });
        t.ok(strictStatus(r.status), `${type}: ${r.status} ${r.text}`);
        t.match(r.text, /unknown field \\?"bogus\\?"/, `${type}: names the field`);
      }
      const dup = await patch(s, `${CM}/fv`, MERGE, '{"data":{"a":"2","a":"3"}}', { fieldValidation: 'Strict' });
      t.ok(strictStatus(dup.status), `merge patch with a duplicate field: ${dup.status} ${dup.text}`);
      t.match(dup.text, /duplicate field/);
      const stored = await get(`${CM}/fv`);
      t.same(stored.data, { a: '1' }, 'no refused patch was stored');
      t.notOk('bogus' in stored, 'no unknown field stored');
    });

    await t.test('fieldValidation=Warn (the default): one Warning per field, unknown fields dropped', async (t) => {
      const body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fw","name":"fw"},"data":{"a":"1"},"bogus":1,"other":{"x":1}}';
      const c = await s.request('POST', CM, { raw: body, headers: { 'content-type': 'application/json' } });
      t.equal(c.status, 201, c.text);
      const w = warnings(c);
      t.equal(w.length, 3, `one warning per field: ${JSON.stringify(w)}`);
      t.ok(w.includes('unknown field "bogus"') && w.includes('unknown field "other"') && w.includes('duplicate field "metadata.name"'));
      t.notOk('bogus' in c.json || 'other' in c.json, 'unknown fields are not stored');
      // Duplicates alone: the warnings follow where each field first appears, not where it repeats.
      const d = await s.request('POST', CM, { raw: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fw-dups"},"data":{"a":"1","b":"1","b":"2","a":"2"}}', headers: { 'content-type': 'application/json' } });
      t.equal(d.status, 201, d.text);
      t.same(warnings(d), ['duplicate field "data.a"', 'duplicate field "data.b"']);
      const g = await get(`${CM}/fw`);
      t.notOk('bogus' in g || 'other' in g, 'nor returned later');

      const u = await s.request('PUT', `${CM}/fw?fieldValidation=Warn`, { body: { ...configMap('fw', { a: '1' }, { resourceVersion: g.metadata.resourceVersion }), bogus: 2 } });
      t.equal(u.status, 200, u.text);
      t.same(warnings(u), ['unknown field "bogus"'], 'update');
      const mp = await patch(s, `${CM}/fw`, MERGE, { bogus: 3, data: { a: '2' } });
      t.equal(mp.status, 200, mp.text);
      t.same(warnings(mp), ['unknown field "bogus"'], 'merge patch');
      t.equal(mp.json.data.a, '2');
      // apply is refused for an undeclared field in every mode, as the reference's typed patch is
      const ap = await apply(s, `${CM}/fw2`, { ...configMap('fw2', { a: '1' }), bogus: 1 }, 'mgr');
      t.equal(ap.status, 500, ap.text);
      t.match(ap.json.message, /^failed to create typed patch object \(\/fw2; \/v1, Kind=ConfigMap\): \.bogus: field not declared in schema$/, 'apply');
      t.equal((await s.get(`${CM}/fw2`)).status, 404, 'nothing created');
      t.notOk('bogus' in (await get(`${CM}/fw`)), 'still nothing unknown stored');
    });

    await t.test('duplicate keys in an apply body follow fieldValidation (YAML and JSON bodies)', async (t) => {
      const yamlBody = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n  a: "2"\n`;
      const jsonBody = (name: string) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{"a":"1","a":"2"}}`;
      for (const [form, body] of [['YAML', yamlBody], ['JSON', jsonBody]] as const) {
        const name = `dup-${form.toLowerCase()}`;
        const strict = await apply(s, `${CM}/${name}`, body(name), 'mgr', { fieldValidation: 'Strict' });
        t.ok(strictStatus(strict.status), `${form}, Strict: refused: ${strict.status} ${strict.text}`);
        t.match(strict.text, /duplicate|already set|must be unique/, `${form}, Strict: says what is duplicated`);
        const warn = await apply(s, `${CM}/${name}`, body(name), 'mgr');
        t.equal(warn.status, 201, `${form}, Warn (default): accepted: ${warn.text}`);
        t.equal(warnings(warn).length, 1, `${form}, Warn: one warning`);
        t.equal(warn.json?.data?.a, '2', `${form}: the last value wins`);
        const ignore = await apply(s, `${CM}/${name}`, body(name), 'mgr', { fieldValidation: 'Ignore' });
        t.equal(ignore.status, 200, `${form}, Ignore: accepted: ${ignore.text}`);
        t.same(warnings(ignore), [], `${form}, Ignore: no warning`);
      }
    });

    await t.test('fieldValidation=Ignore: no warning, no error', async (t) => {
      const body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fi","name":"fi"},"data":{"a":"1"},"bogus":1}';
      const c = await s.request('POST', `${CM}?fieldValidation=Ignore`, { raw: body, headers: { 'content-type': 'application/json' } });
      t.equal(c.status, 201, c.text);
      t.same(warnings(c), []);
      t.notOk('bogus' in c.json, 'the unknown field is dropped');
      const u = await s.request('PUT', `${CM}/fi?fieldValidation=Ignore`, { body: { ...c.json, other: 1 } });
      t.equal(u.status, 200);
      t.same(warnings(u), []);
      const p = await patch(s, `${CM}/fi`, MERGE, { bogus: 1 }, { fieldValidation: 'Ignore' });
      t.equal(p.status, 200);
      t.same(warnings(p), []);
      const bad = await s.request('POST', `${CM}?fieldValidation=Sometimes`, { body: configMap('fbad') });
      // The reference validates the mode with the write options: 422 on CreateOptions.
      t.equal(bad.status, 422, 'an unknown mode is refused');
      t.equal(bad.json.message, `CreateOptions.meta.${domain} "" is invalid: fieldValidation: Unsupported value: "Sometimes": supported values: "", "Ignore", "Strict", "Warn"`);
    });

    // ---------------------------------------------------------------- dry-run

    await t.test('dryRun=All with every patch type and apply: the result is returned, nothing is stored', async (t) => {
      const made = await create(CM, configMap('dry', { a: '1' }), 'creator');
      const rv = made.metadata.resourceVersion;
      for (const [type, body] of [
        [JSONP, [{ op: 'replace', path: '/data/a', value: 'jp' }]],
        [MERGE, { data: { a: 'mp' } }],
        [SMP, { data: { a: 'smp' } }],
      ] as const) {
        const r = await patch(s, `${CM}/dry`, type, body, { dryRun: 'All', fieldManager: 'dry-patcher' });
        t.equal(r.status, 200, `${type}: ${r.text}`);
        t.not(r.json.data.a, '1', `${type}: the would-be object`);
        t.ok(owns(entry(r.json, 'dry-patcher'), 'f:data', 'f:a'), `${type}: the would-be managedFields`);
      }
      const ap = await apply(s, `${CM}/dry`, configMap('dry', { a: 'ap' }), 'dry-applier', { dryRun: 'All', force: 'true' });
      t.equal(ap.status, 200, ap.text);
      t.equal(ap.json.data.a, 'ap');
      t.equal(entry(ap.json, 'dry-applier')?.operation, 'Apply', 'would-be Apply entry');
      const g = await get(`${CM}/dry`);
      t.equal(g.metadata.resourceVersion, rv, 'nothing stored');
      t.same(g.data, { a: '1' });
      t.same(managers(g), ['creator']);

      const fresh = await apply(s, `${CM}/dry-new`, configMap('dry-new', { a: '1' }), 'dry-applier', { dryRun: 'All' });
      t.equal(fresh.status, 201, fresh.text);
      t.equal(entry(fresh.json, 'dry-applier')?.operation, 'Apply');
      t.equal((await s.get(`${CM}/dry-new`)).status, 404, 'not created');
      const conflict = await apply(s, `${CM}/dry`, configMap('dry', { a: 'x' }), 'dry-applier', { dryRun: 'All' });
      t.equal(conflict.status, 409, 'conflicts are reported by a dry run too');
      const badDry = await patch(s, `${CM}/dry`, MERGE, { data: { a: 'x' } }, { dryRun: 'Some' });
      // The reference validates dryRun with the write options: 422 on PatchOptions.
      t.equal(badDry.status, 422);
      t.equal(badDry.json.message, `PatchOptions.meta.${domain} "" is invalid: dryRun: Unsupported value: []string{"Some"}: supported values: "All"`);
    });
  });
}

// ---------------------------------------------------------------- rule 13: the feature gate

t.test('rule 13: with --feature-gates ServerSideApply=false apply is refused with 415', async (t) => {
  const s = await withServer(t, { brand: 'cluster', args: ['--feature-gates', 'ServerSideApply=false'] });
  const r = await apply(s, `${CM}/off`, configMap('off', { a: '1' }), 'mgr');
  t.equal(r.status, 415, r.text);
  t.equal(r.json.reason, 'UnsupportedMediaType');
  t.notOk(r.json.message.includes(APPLY), 'apply is not among the accepted types');
  t.equal((await s.get(`${CM}/off`)).status, 404);
  const c = await s.request('POST', `${CM}?fieldManager=m`, { body: configMap('off', { a: '1' }) });
  t.equal(c.status, 201, 'other writes work');
  const m = await patch(s, `${CM}/off`, MERGE, { data: { b: '2' } });
  t.equal(m.status, 200, 'merge patch works');
  t.notOk(m.json.metadata.managedFields, 'no managedFields are tracked with the feature off');
});

// ---------------------------------------------------------------- a plugin type: no schema, and rule 11

/** A types plugin serving `widgets` (no schema) and `gadgets` (a schema whose markers come from the options). */
const TYPES_PLUGIN = `
const meta = { type: 'any' };
export default {
  kind: 'types', contract: 1, name: 'test-widgets',
  create: (options) => ({
    types: () => [
      { group: 'example.com', version: 'v1', kind: 'Widget', resource: 'widgets', singular: 'widget', namespaced: true, hasSpec: true },
      {
        group: 'example.com', version: 'v1', kind: 'Gadget', resource: 'gadgets', singular: 'gadget', namespaced: true, hasSpec: true,
        schema: {
          type: 'object',
          fields: {
            apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: meta,
            spec: {
              type: 'object',
              fields: {
                items: { type: 'array', items: { type: 'string' }, listType: options.listType },
                tags: { type: 'object', additional: { type: 'string' }, mapType: options.mapType },
              },
            },
          },
        },
      },
    ],
  }),
};
`;

t.test('a type without a schema, and rule 11 (marker topology changes across restarts)', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-types-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'types.mjs'), TYPES_PLUGIN);
  const config = path.join(dir, 'config.yaml');
  const writeConfig = (listType: string, mapType: string) => writeFileSync(config, [
    'types:', '  - plugin: builtin', '  - plugin: access', `  - plugin: ${path.join(dir, 'types.mjs')}`, `    options: { listType: ${listType}, mapType: ${mapType} }`, '',
  ].join('\n'));
  writeConfig('set', 'granular');
  const s = await withServer(t, { brand: 'cluster', args: ['--config', config] });
  const W = '/apis/example.com/v1/namespaces/default/widgets';
  const G = '/apis/example.com/v1/namespaces/default/gadgets';
  const widget = (spec: Obj) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec });
  const gadget = (name: string, spec: Obj) => ({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name }, spec });

  await t.test('strategic merge patch on a type without a schema is 415', async (t) => {
    const c = await s.request('POST', W, { body: widget({ list: ['a'], map: { k: 'v' } }) });
    t.equal(c.status, 201, c.text);
    const r = await patch(s, `${W}/w`, SMP, { spec: { list: ['b'] } });
    t.equal(r.status, 415, r.text);
    t.equal(r.json.reason, 'UnsupportedMediaType');
    t.notOk(r.json.message.includes(SMP), 'strategic merge is not offered');
    t.ok(r.json.message.includes(MERGE) && r.json.message.includes(JSONP), 'the others are');
    const m = await patch(s, `${W}/w`, MERGE, { spec: { list: ['b'] } });
    t.equal(m.status, 200, 'merge patch works');
    t.same(m.json.spec.list, ['b']);
  });

  await t.test('without a schema every list is atomic and every key a field', async (t) => {
    await apply(s, `${W}/w`, widget({ list: ['b'], map: { k: 'v' } }), 'one', { force: 'true' });
    const r = await apply(s, `${W}/w`, widget({ list: ['c'] }), 'two');
    t.equal(r.status, 409, r.text);
    const causes = r.json.details.causes;
    t.ok(causes.length && causes.every((c: Obj) => c.field === '.spec.list'), 'the whole list is the conflicting field');
    t.ok(causes.some((c: Obj) => c.message === 'conflict with "one"'), 'owned by the first applier');
    const keys = await apply(s, `${W}/w`, widget({ map: { other: 'x' } }), 'two');
    t.equal(keys.status, 200, `map keys are owned one by one: ${keys.text}`);
    t.same(keys.json.spec.map, { k: 'v', other: 'x' });
  });

  await apply(s, `${G}/g1`, gadget('g1', { items: ['a'], tags: { a: '1' } }), 'one');
  await apply(s, `${G}/g1`, gadget('g1', { items: ['b'], tags: { b: '1' } }), 'two');
  await apply(s, `${G}/g2`, gadget('g2', { items: ['a'] }), 'one');

  await t.test('rule 11 (before): a set list and a granular map are owned per element', async (t) => {
    const g = (await s.get(`${G}/g1`)).json;
    t.same([...g.spec.items].sort(), ['a', 'b']);
    t.same(g.spec.tags, { a: '1', b: '1' });
    t.ok(owns(entry(g, 'one'), 'f:spec', 'f:items', 'v:"a"'));
    t.ok(owns(entry(g, 'two'), 'f:spec', 'f:tags', 'f:b'));
  });

  writeConfig('atomic', 'atomic');
  await s.restart();

  await t.test('rule 11: granular → atomic gives the whole structure to everyone who owned an element', async (t) => {
    const r = await apply(s, `${G}/g1`, gadget('g1', { items: ['a', 'c'], tags: { a: '1', b: '1' } }), 'one');
    t.equal(r.status, 409, r.text);
    const fields = (r.json.details?.causes ?? []).map((c: Obj) => `${c.field} ${c.message}`);
    t.ok(fields.some((f: string) => f.startsWith('.spec.items ') && f.includes('"two"')), `the list conflicts with two: ${fields}`);
    const tags = await apply(s, `${G}/g1`, gadget('g1', { tags: { a: '2' } }), 'two');
    t.equal(tags.status, 409, `the map conflicts with one: ${tags.text}`);
    t.match(tags.json.message, /"one"/);
  });

  await t.test('rule 11: atomic → granular derives no new ownership (no conflicts)', async (t) => {
    await apply(s, `${G}/g3`, gadget('g3', { items: ['a'] }), 'one');
    writeConfig('set', 'granular');
    await s.restart();
    const r = await apply(s, `${G}/g3`, gadget('g3', { items: ['b'] }), 'two');
    t.equal(r.status, 200, r.text);
    t.same([...r.json.spec.items].sort(), ['a', 'b']);
  });
});

// ---------------------------------------------------------------- a large apply on the worker pool

t.test('a 1 MiB apply goes through the worker path while GETs keep being answered quickly', async (t) => {
  const s = await withServer(t, { brand: 'cluster' });
  const small = await s.request('POST', CM, { body: configMap('probe', { a: '1' }) });
  t.equal(small.status, 201);
  const data: Record<string, string> = {};
  for (let i = 0; i < 1000; i++) data[`key-${String(i).padStart(4, '0')}`] = `${i}:`.padEnd(1000, 'v');
  const body = configMap('huge', data);
  const size = Buffer.byteLength(JSON.stringify(body));
  t.ok(size > 1_000_000 && size <= 1024 * 1024 + 20_000, `about 1 MiB (${size} bytes)`);

  let stop = false;
  let max = 0;
  let count = 0;
  const getter = async () => {
    while (!stop) {
      const t0 = performance.now();
      const r = await s.get(`${CM}/probe`);
      max = Math.max(max, performance.now() - t0);
      if (r.status !== 200) throw new Error(`GET ${r.status}`);
      count++;
    }
  };
  const loops = [getter(), getter()];
  // Let the GET loops settle (connections made) before the measured window.
  await new Promise((r) => setTimeout(r, 300));
  max = 0;
  const created = await apply(s, `${CM}/huge`, body, 'big');
  const middle = await apply(s, `${CM}/huge`, configMap('huge', { ...data, 'key-0001': 'middle' }), 'big');
  const changed = { ...data, 'key-0000': 'changed' };
  const updated = await apply(s, `${CM}/huge`, configMap('huge', changed), 'big');
  stop = true;
  await Promise.all(loops);

  t.equal(created.status, 201, created.text.slice(0, 300));
  t.equal(Object.keys(created.json.data).length, 1000, 'every key stored');
  t.equal(middle.status, 200, middle.text.slice(0, 300));
  t.equal(updated.status, 200, updated.text.slice(0, 300));
  t.equal(updated.json.data['key-0000'], 'changed');
  t.equal(updated.json.data['key-0001'], data['key-0001'], 'the value of the previous apply is replaced again');
  t.equal(Object.keys(entry(updated.json, 'big')?.fieldsV1?.['f:data'] ?? {}).length, 1000, 'the applier owns every key');
  const g = (await s.get(`${CM}/huge`)).json;
  t.same(g.data, changed, 'stored as applied');
  t.ok(count > 0, `GETs answered meanwhile (${count})`);
  // How long the applies held the event loop is a figure, not a verdict (bench/apply.ts measures it).
  t.comment(`the longest GET during the applies took ${max.toFixed(1)} ms`);
});
