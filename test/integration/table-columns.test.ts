// Every built-in type's Table columns against the reference's printers, column by column, generated
// from discovery: both servers are asked for a Table of each listable resource the reference serves,
// and the column definitions (name, type, format, priority) must be the same. Runs where a reference
// server is reachable: CAPI_REFERENCE_URL and CAPI_REFERENCE_TOKEN (kube-apiserver 1.28; skips otherwise).
import t from 'tap';
import https from 'node:https';
import { withServer } from '../lib/server.js';

const refUrl = process.env.CAPI_REFERENCE_URL;
const refToken = process.env.CAPI_REFERENCE_TOKEN ?? '';
const skip = refUrl ? false : 'no reference server: set CAPI_REFERENCE_URL and CAPI_REFERENCE_TOKEN to a kube-apiserver 1.28';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

function refGet(p: string, accept = 'application/json'): Promise<{ status: number; json: any }> {
  const u = new URL(p, refUrl);
  return new Promise((resolve, reject) => {
    https.get({ host: u.hostname, port: u.port, path: u.pathname + u.search, headers: { authorization: `Bearer ${refToken}`, accept }, rejectUnauthorized: false }, (res) => {
      let d = '';
      res.on('data', (c) => (d += c));
      res.on('end', () => { let json; try { json = JSON.parse(d); } catch { json = undefined; } resolve({ status: res.statusCode!, json }); });
    }).on('error', reject);
  });
}

t.test('Table columns of every listable built-in resource equal the reference printers', { skip }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const gvs = ['/api/v1', ...(await s.get('/apis')).json.groups.flatMap((g: any) => g.versions.map((v: any) => `/apis/${v.groupVersion}`))];
  let compared = 0;
  for (const base of gvs) {
    const ref = await refGet(base);
    if (ref.status !== 200) continue;
    const refNames = new Set(ref.json.resources.map((r: any) => r.name));
    for (const r of (await s.get(base)).json.resources) {
      if (r.name.includes('/') || !r.verbs.includes('list') || !refNames.has(r.name)) continue;
      const p = `${base}/${r.name}?limit=1`;
      const cols = (x: any) => (x?.columnDefinitions ?? []).map((c: any) => `${c.name}|${c.type}|${c.format}|${c.priority}`);
      const ours = await s.get(p, { accept: TABLE });
      const theirs = await refGet(p, TABLE);
      if (theirs.status !== 200) continue;
      t.same(cols(ours.json), cols(theirs.json), `${base} ${r.name}`);
      compared++;
    }
  }
  t.ok(compared > 40, `${compared} resources compared`);
});
