// Type confusion: every creatable kind the server serves (from discovery, so none is left out), each
// field its published schema names (down to a few levels) set to a JSON value of the wrong type,
// sent as a create, an update, a merge patch and a server-side apply. The reference answers such a
// body with 400 (a decoding error) or 422 (validation): never 500 — but for the one 500 it gives
// itself, an apply whose typed patch cannot be built ("failed to create typed patch object"). Updates
// and merge patches go to an object of the kind created first, where a minimal one can be. A seeded
// sample keeps the run short (CAPI_CONFUSION_SEED, CAPI_CONFUSION_COUNT).
import https from 'node:https';
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';
import { rng } from '../lib/rng.js';

const SEED = Number(process.env.CAPI_CONFUSION_SEED ?? 7);
const COUNT = Number(process.env.CAPI_CONFUSION_COUNT ?? 2400);
const CONCURRENCY = 12;
const WRONG: Record<string, unknown[]> = {
  string: [7, true, [], {}], integer: ['x', true, 1.5, [], {}], number: ['x', true, [], {}], boolean: ['x', 7, [], {}],
  array: ['x', 7, true, {}], object: ['x', 7, true, []], any: [],
};

type Json = Record<string, any>;
interface Kind { collection: string; apiVersion: string; kind: string; namespaced: boolean; schema: Json; schemas: Json }

function request(s: TestServer, method: string, path: string, body: string, ct: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: s.port, method, path, headers: { authorization: `Bearer ${s.token}`, 'content-type': ct, accept: 'application/json', 'content-length': Buffer.byteLength(body) }, ca: s.ca }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Field paths of a schema with their JSON type, following $refs, `depth` levels down. */
function fieldPaths(schema: Json, schemas: Json, depth: number, prefix: string[] = [], out: [string[], string][] = []): [string[], string][] {
  const resolve = (s: Json): Json => {
    if (s?.$ref) return resolve(schemas[s.$ref.split('/').pop()]);
    if (s?.allOf?.length === 1) return resolve(s.allOf[0]);
    return s ?? {};
  };
  const s = resolve(schema);
  for (const [name, sub] of Object.entries<Json>(s.properties ?? {})) {
    if (['apiVersion', 'kind'].includes(name) && !prefix.length) continue;
    const r = resolve(sub);
    const type = r['x-kubernetes-int-or-string'] || r.oneOf ? 'any' : (r.type ?? 'any');
    out.push([[...prefix, name], type]);
    if (depth > 1 && type === 'object') fieldPaths(r, schemas, depth - 1, [...prefix, name], out);
    if (depth > 1 && type === 'array' && resolve(r.items).type === 'object') fieldPaths(resolve(r.items), schemas, depth - 1, [...prefix, name, '0'], out);
  }
  return out;
}

function set(obj: Json, path: string[], value: unknown): Json {
  const root = JSON.parse(JSON.stringify(obj));
  let cur: any = root;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i];
    const nextIsIndex = /^\d+$/.test(path[i + 1]);
    if (cur[k] === undefined || cur[k] === null || typeof cur[k] !== 'object') cur[k] = nextIsIndex ? [] : {};
    cur = cur[k];
  }
  cur[path[path.length - 1]] = value;
  return root;
}

t.test('wrong JSON types in every field of every kind: 400 or 422, never 500', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  t.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'tc' } } })).status, 201);
  const kinds: Kind[] = [];
  const paths = (await s.get('/openapi/v3')).json.paths as Record<string, { serverRelativeURL: string }>;
  const gvs: [string, string][] = [['/api/v1', 'api/v1']];
  for (const g of (await s.get('/apis')).json.groups) for (const v of g.versions) gvs.push([`/apis/${v.groupVersion}`, `apis/${v.groupVersion}`]);
  for (const [base, key] of gvs) {
    if (!paths[key]) continue;
    const doc = (await s.get(paths[key].serverRelativeURL)).json;
    const schemas = doc.components?.schemas ?? {};
    for (const r of (await s.get(base)).json.resources) {
      if (r.name.includes('/') || !r.verbs.includes('create')) continue;
      const def = Object.entries<Json>(schemas).find(([, d]) => (d['x-kubernetes-group-version-kind'] ?? []).some((g: Json) => g.kind === r.kind && `${g.group ? `${g.group}/` : ''}${g.version}` === base.replace(/^\/apis?\//, '')));
      if (!def) continue;
      kinds.push({ collection: `${base}${r.namespaced ? '/namespaces/tc' : ''}/${r.name}`, apiVersion: base.replace(/^\/apis?\//, ''), kind: r.kind, namespaced: r.namespaced, schema: def[1], schemas });
    }
  }
  t.ok(kinds.length > 40, `${kinds.length} creatable kinds with a schema`);

  // A minimal object of each kind, where one is valid: the target of updates and merge patches.
  const existing = new Set<Kind>();
  for (const k of kinds) {
    const made = await request(s, 'POST', k.collection, JSON.stringify({ apiVersion: k.apiVersion, kind: k.kind, metadata: { name: 'tc-base' } }), 'application/json');
    if (made.status === 201) existing.add(k);
  }
  t.ok(existing.size > 10, `${existing.size} kinds have an object to update and patch`);
  const r = rng(SEED);
  const cases: { k: Kind; path: string[]; value: unknown; op: string }[] = [];
  const all = kinds.flatMap((k) => fieldPaths(k.schema, k.schemas, 3).flatMap(([path, type]) => (WRONG[type] ?? []).map((value) => ({ k, path, value }))));
  for (let i = 0; i < COUNT && all.length; i++) {
    const c = all[r.int(all.length)];
    cases.push({ ...c, op: r.pick(existing.has(c.k) ? ['create', 'update', 'merge', 'apply'] : ['create', 'apply']) });
  }
  // The names of every kind are checked too (metadata.name set to a number, as a wrong type).
  for (const k of kinds) cases.push({ k, path: ['metadata', 'name'], value: 7, op: 'create' });

  const failures: string[] = [];
  let i = 0;
  let n = 0;
  const worker = async () => {
    while (i < cases.length) {
      const c = cases[i++];
      const name = c.op === 'update' || c.op === 'merge' ? 'tc-base' : `tc-${n++}`;
      const base = { apiVersion: c.k.apiVersion, kind: c.k.kind, metadata: { name } };
      const obj = set(base, c.path, c.value);
      const body = JSON.stringify(obj);
      const res = c.op === 'create' ? await request(s, 'POST', c.k.collection, body, 'application/json')
        : c.op === 'update' ? await request(s, 'PUT', `${c.k.collection}/${name}`, body, 'application/json')
        : c.op === 'merge' ? await request(s, 'PATCH', `${c.k.collection}/${name}`, body, 'application/merge-patch+json')
        : await request(s, 'PATCH', `${c.k.collection}/${name}?fieldManager=tc`, body, 'application/apply-patch+yaml');
      const sanctioned = c.op === 'apply' && res.status === 500 && res.text.includes('failed to create typed patch object');
      if (res.status >= 500 && !sanctioned) failures.push(`${c.op} ${c.k.kind} ${c.path.join('.')}=${JSON.stringify(c.value)}: ${res.status} ${res.text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  t.same(failures, [], `${cases.length} requests, none answered 500`);
  t.equal((await s.get('/readyz')).status, 200, 'still ready');
});
