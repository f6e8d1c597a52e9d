// Operable from the first start: a welcome for a person on standard output, request lines at -v=3,
// text or JSON logs by --logging-format.
import t from 'tap';
import { sleep, withServer } from '../lib/server.js';

t.test('the first start tells a person where it serves and how to use it', async (t) => {
  const s = await withServer(t);
  // standard output is read apart from the log on standard error: wait for it
  for (let i = 0; i < 60 && !s.logs.some((l) => l.includes('kubectl --kubeconfig')); i++) await sleep(50);
  const out = s.logs.join('\n');
  t.match(out, new RegExp(`cluster-apiserver is serving https://127\\.0\\.0\\.1:${s.port}`), 'the address');
  t.match(out, new RegExp(`kubeconfig: ${s.dataDir}/admin\\.kubeconfig`), 'the kubeconfig path');
  t.match(out, new RegExp(`kubectl --kubeconfig ${s.dataDir}/admin\\.kubeconfig get namespaces`), 'a kubectl command to try');
  t.match(out, /--brand kubernetes/, 'with the default brand, how to serve stock kubectl');
  t.match(out, /I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+\] "serving" address="https:/, 'logs are klog-style text by default');
  t.notOk(s.logs.some((l) => l.includes('"HTTP"')), 'no request lines at the default verbosity');
});

t.test('-v=3 logs every request (method, path, user, status, latency); --logging-format=json', async (t) => {
  const s = await withServer(t, { args: ['-v=3', '--logging-format=json'] });
  t.equal((await s.get('/api/v1/namespaces/default/configmaps?limit=1')).status, 200);
  t.equal((await s.request('GET', '/api/v1/namespaces/default/secrets/none%0Aforged', {})).status, 404);
  t.equal((await s.request('GET', '/api/v1/namespaces', { token: null })).status, 403);
  await sleep(100);
  const lines = s.logs.flatMap((l) => l.split('\n')).filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  const http = lines.filter((l) => l.msg === 'HTTP');
  const list = http.find((l) => l.URI === '/api/v1/namespaces/default/configmaps?limit=1');
  t.ok(list, 'the request is logged with its query');
  t.match(list, { level: 'info', v: 3, verb: 'GET', user: 'admin', resp: 200, latency: /^\d+\.\d{3}ms$/, srcIP: /\d/ }, 'method, user, status and latency');
  t.ok(http.some((l) => l.resp === 404 && l.URI.includes('none\nforged')), 'a path with a newline stays one JSON line');
  t.ok(http.some((l) => l.resp === 403 && l.user === 'system:anonymous'), 'an anonymous refusal names the anonymous user');
  t.notOk(s.logs.some((l) => /^forged/m.test(l)), 'client text cannot start a log line');
});
