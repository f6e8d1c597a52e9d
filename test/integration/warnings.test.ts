// Warning headers as the reference writes them: one header line per warning, in order, each text
// once, and past 4,096 characters in all every warning cut to 256 and the rest dropped once the cut
// ones fill 4,096 (its warning recorder). Read from the raw header lines: Node's client would join them.
import https from 'node:https';
import t from 'tap';
import { withServer, type TestServer } from '../lib/server.js';

function warningLines(s: TestServer, method: string, path: string, body: unknown): Promise<{ status: number; warnings: string[] }> {
  return new Promise((resolve, reject) => {
    const req = https.request(`${s.url}${path}`, { method, ca: s.ca, headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' } }, (res) => {
      const warnings: string[] = [];
      for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i].toLowerCase() === 'warning') warnings.push(res.rawHeaders[i + 1]);
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, warnings }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

t.test('one Warning header per warning, in order', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const r = await warningLines(s, 'POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Warn', {
    apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w', bogus: 1 }, data: { a: 'b' }, extra: 1, another: 2,
  });
  t.equal(r.status, 201);
  // the reference's order (kube-apiserver 1.28.7, the same request)
  t.same(r.warnings, ['299 - "unknown field \\"metadata.bogus\\""', '299 - "unknown field \\"extra\\""', '299 - "unknown field \\"another\\""']);
});

t.test('past 4,096 characters warnings are cut to 256 and the rest dropped', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'long' } };
  // 30 unknown fields of 300 characters: the 13th passes 4,096, all are cut, 16 fit
  for (let i = 10; i < 40; i++) body[`f${i}`.padEnd(300, 'x')] = 1;
  const r = await warningLines(s, 'POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Warn', body);
  t.equal(r.status, 201);
  t.equal(r.warnings.length, 16, '16 cut warnings fill 4,096 characters');
  for (const w of r.warnings) t.equal((JSON.parse(w.slice('299 - '.length)) as string).length, 256, 'each cut to 256 characters');
  t.match(r.warnings[0], /^299 - "unknown field \\"f10x+"$/, 'cut inside the field name (as the reference: 16 headers of 256 characters)');
});
