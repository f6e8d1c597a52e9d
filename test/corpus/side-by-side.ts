// Sends every seed's create, as a dry run, to the reference and to a server of this tree, and
// prints whether the two answers are the same JSON text once what differs by nature is set aside
// (uids, times, resource versions, managed fields' times, allocated IPs and ports):
//   node dist/test/corpus/side-by-side.js --url https://127.0.0.1:26443 --token-file T --ca CA [--only SEED,...] [--show] [--no-managed-fields]
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { startServer } from '../lib/server.js';
import { seedObject } from './generate.js';
import { PROBE_NAMESPACE } from './run.js';
import { SEEDS } from './seeds.js';

interface Target { url: string; token: string; ca: Buffer | string }

function post(t: Target, path: string, body: unknown): Promise<{ status: number; text: string }> {
  const u = new URL(t.url + path);
  return new Promise((resolve, reject) => {
    const req = https.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'POST', ca: t.ca,
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', accept: 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString('utf8'); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** The answer's text with what differs between any two servers replaced by a placeholder. */
function comparable(text: string): string {
  return text
    .replace(/"(uid|resourceVersion|creationTimestamp|time)":"[^"]*"/g, '"$1":"-"')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'UID')
    .replace(/"(clusterIP|nodePort|healthCheckNodePort)":("[^"]*"|\d+)/g, '"$1":-')
    .replace(/"clusterIPs":\[[^\]]*\]/g, '"clusterIPs":-')
    .replace(/"-u?-?[a-z0-9]{6}"/g, '"-"')
    .replace(/kube-api-access-[a-z0-9]{5}/g, 'kube-api-access-*');
}

async function main(): Promise<void> {
  const args = new Map<string, string>();
  for (let i = 2; i < process.argv.length; i++) {
    const k = process.argv[i]!.replace(/^--/, '');
    args.set(k, k === 'show' || k === 'no-managed-fields' ? '' : process.argv[++i] ?? '');
  }
  const only = args.get('only')?.split(',');
  const reference: Target = { url: args.get('url') ?? 'https://127.0.0.1:26443', token: readFileSync(args.get('token-file')!, 'utf8').trim(), ca: readFileSync(args.get('ca')!) };
  const s = await startServer({ brand: 'kubernetes' });
  const ours: Target = { url: `https://127.0.0.1:${s.port}`, token: s.token, ca: s.ca };
  let same = 0, total = 0;
  try {
    for (const t of [reference, ours]) await post(t, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: PROBE_NAMESPACE } });
    for (const seed of SEEDS.filter((x) => !only || only.includes(x.name))) {
      const path = `${seed.path.replace('{ns}', PROBE_NAMESPACE)}?dryRun=All`;
      const body = seedObject(seed, 'create');
      const [a, b] = [await post(reference, path, body), await post(ours, path, body)];
      const norm = (text: string) => { const c = comparable(text.replace(/\n\s*/g, '')); return args.has('no-managed-fields') ? c.replace(/,"managedFields":\[.*?\}\}\]/, '') : c; };
      const ok = a.status === b.status && norm(a.text) === norm(b.text);
      total++;
      if (ok) same++;
      process.stdout.write(`${ok ? 'same' : 'DIFF'} ${seed.name} (${a.status}/${b.status})\n`);
      if (!ok && args.has('show')) process.stdout.write(`  reference: ${norm(a.text).slice(0, 20000)}\n  ours:      ${norm(b.text).slice(0, 20000)}\n`);
    }
  } finally {
    await s.stop();
  }
  process.stdout.write(`${same} of ${total} the same\n`);
}

main().catch((e) => { process.stderr.write(`${(e as Error).stack}\n`); process.exit(1); });
